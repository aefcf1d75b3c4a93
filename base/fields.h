// The one way Cairn reads fields out of a configuration or a request body, whatever the
// document (master.yaml, an agent's config, an experiment, a command, a template): typed reads
// with the field's dotted path and line in every error, unknown keys refused, the fields Cairn
// does not have refused by name as NotSupported with a hint. Documents are parsed with
// LoadYaml (base/yaml_json.h), which bounds their size and shape; JSON bodies are YAML too.
// Scalars follow the YAML 1.2 core schema, as Determined reads its configs: `1` is an integer,
// `'1'` a string, `true` a boolean, `~` or nothing null. Pure functions.
//
//   CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, "master.yaml"));
//   fields::Field top = fields::Root(root, "master.yaml");
//   CAIRN_ASSIGN_OR_RETURN(fields::MapFields map, fields::MapFields::Read(top, "a map"));
//   CAIRN_RETURN_IF_ERROR(map.Check({"port", "data_dir"}, {{"db", "Cairn keeps no database"}}));
//   if (auto port = map.Get("port")) CAIRN_ASSIGN_OR_RETURN(config.port, ReadInt(*port, 0, 65535));
//
// An error reads "master.yaml:12: resources.slots: must be between 0 and 4096, got 5000" (or
// "line 12: ..." when the document has no name, or the path alone when it has no lines).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/yaml_json.h"  // ChildPath

namespace cairn::fields {

// A field of a document: its node, its dotted path ("resources.slots", "hosts[2]"), the
// (1-based) line of its key (0: no lines, e.g. a JSON body), and the document's name.
struct Field {
  YAML::Node node;
  std::string path;
  int line = 1;
  std::string source;
};

// The whole document. `with_lines` false for bodies whose lines mean nothing to the sender.
Field Root(const YAML::Node& node, const std::string& source = "", bool with_lines = true);
// The element `index` of a sequence field.
Field Element(const Field& sequence, const YAML::Node& element, size_t index);

// "master.yaml:12: resources.slots", "line 12: resources.slots", or "resources.slots".
std::string Where(const Field& field);
Status Invalid(const Field& field, const std::string& message);
// "<where> is not supported yet; <hint>".
Status Unsupported(const Field& field, const std::string& hint = "");
// Absent, or written with no value (`type:`): "use the default".
bool IsAbsent(const YAML::Node& node);

// A field Determined has and Cairn refuses by name, with a hint for the user.
struct Refused {
  const char* key;
  const char* hint;
};

// The entries of a map field, each with its key's line; a duplicate key is an error.
class MapFields {
 public:
  static Result<MapFields> Read(const Field& field, const std::string& expected);

  // Refuses the keys in `refused` by name (NotSupported) and any key not in `known`.
  Status Check(const std::set<std::string>& known, const std::vector<Refused>& refused = {},
               const std::string& unknown_message = "unknown field") const;
  // The field under `key`; nullopt when absent or null.
  std::optional<Field> Get(const std::string& key) const;
  bool Contains(const std::string& key) const { return by_key_.count(key) > 0; }
  // The field under `key`, or InvalidArgument "<path>: required (e.g. <example>)".
  Result<Field> Require(const std::string& key, const std::string& example = "") const;

  const std::vector<Field>& entries() const { return entries_; }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  Field self_;
  std::vector<std::string> keys_;
  std::vector<Field> entries_;
  std::map<std::string, size_t> by_key_;
};

// Typed reads; `expected` says what was wanted in the error ("expected a port, got [1]").
Result<std::string> ReadString(const Field& field, const std::string& expected = "a string");
Result<int64_t> ReadInt(const Field& field, int64_t min = std::numeric_limits<int64_t>::min(),
                        int64_t max = std::numeric_limits<int64_t>::max(),
                        const std::string& expected = "an integer");
Result<int> ReadSmallInt(const Field& field, int min, int max = std::numeric_limits<int>::max(),
                         const std::string& expected = "an integer");
Result<double> ReadNumber(const Field& field, const std::string& expected = "a number");
// A finite number within [min, max].
Result<double> ReadNumberIn(const Field& field, double min, double max,
                            const std::string& expected = "a number");
Result<bool> ReadBool(const Field& field);
Result<std::vector<std::string>> ReadStringList(const Field& field,
                                                const std::string& expected = "a list of strings");
// One of `choices`, spelled exactly.
Result<std::string> ReadChoice(const Field& field, const std::vector<std::string>& choices);
// The field's value as JSON, whatever its shape (core schema scalars, key order kept).
Result<nlohmann::json> JsonOf(const Field& field);

// --- Request bodies -----------------------------------------------------------------------
// A JSON body is already an object in memory; these read its fields with the same rules and
// error format (paths, no lines), plus what grpc-gateway clients send: int64 as strings.

// There and not null.
bool Present(const nlohmann::json& object, const char* key);
Result<std::string> GetString(const nlohmann::json& object, const char* key,
                              const std::string& path, bool required);
Result<std::optional<int64_t>> GetInt(const nlohmann::json& object, const char* key,
                                      const std::string& path);
// An integer that must fit the int32 fields of Cairn's events.
Result<std::optional<int32_t>> GetInt32(const nlohmann::json& object, const char* key,
                                        const std::string& path);
// Unknown keys are InvalidArgument; keys Determined has and Cairn does not are NotSupported.
Status CheckKnownKeys(const nlohmann::json& object, const std::string& path,
                      const std::set<std::string>& known,
                      const std::set<std::string>& not_supported = {});

}  // namespace cairn::fields
