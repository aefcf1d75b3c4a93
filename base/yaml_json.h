// YAML <-> JSON for every configuration Cairn reads (base/fields.h reads fields from the parsed
// nodes) and for templates. Determined reads its YAML files with
// the YAML 1.2 core schema and validates them as JSON, so Cairn does the same: a plain scalar is
// null, a boolean, an integer, a float or a string by its spelling; a quoted scalar is always a
// string. Pure functions, safe to call from any thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/document_limits.h"
#include "base/status.h"

namespace cairn {

// Parses YAML (or JSON) text within `limits` (base/document_limits.h): its size before parsing,
// its nesting while parsing, and the values its aliases expand to before anything walks them.
// Refuses scalars that are not UTF-8, and keys longer than 1024 characters as JSON writes them
// (escapes counted): YAML reads no longer key in JSON's flow style, so a document with one could
// not be read back from its JSON dump. `what` names the document in errors ("config",
// "master.yaml"); errors give the line. Empty text is a null node.
Result<YAML::Node> LoadYaml(const std::string& text, const std::string& what,
                            const DocumentLimits& limits = {});

// The JSON value of a YAML scalar or null node under the core schema ("1" -> 1, "1.5e-3" -> 0.0015,
// "true" -> true, "~" or empty -> null, '1' -> "1").
nlohmann::ordered_json YamlScalarToJson(const YAML::Node& node);

// The JSON value of any YAML node, keeping the document's key order. Fails (InvalidArgument naming
// `field_path` and the line) on a duplicate key or a key that is not a scalar.
Result<nlohmann::ordered_json> YamlNodeToJson(const YAML::Node& node,
                                              const std::string& field_path);

// Parses YAML (or JSON) text into JSON. `what` names the document in errors ("config",
// "template"). Empty text is an empty map.
Result<nlohmann::ordered_json> YamlTextToJson(const std::string& yaml_text,
                                              const std::string& what);

// "a.b" from "a" and "b"; "b" alone under the root.
std::string ChildPath(const std::string& path, const std::string& key);

// The YAML node tree of a JSON value, built directly (no text in between): strings are quoted
// scalars (read as strings whatever they hold), numbers, booleans and null plain ones, so
// base/fields.h reads a JSON body as it reads the same document written in YAML.
// InvalidArgument, naming `what`, past DocumentLimits' depth, values or bytes (the total of its
// strings), or for a key LoadYaml would refuse as too long, so a JSON body cannot smuggle in what
// LoadYaml would refuse as text.
Result<YAML::Node> JsonToYamlNode(const nlohmann::json& value, const std::string& what);

// Block-style YAML text for a JSON value. Strings that would read back as another type ("true",
// "1", "") are quoted, so YamlTextToJson(JsonToYamlText(v)) == v for any finite JSON value whose
// keys LoadYaml takes, but for Unicode's 66 noncharacters (U+FDD0 to U+FDEF, U+xFFFE, U+xFFFF)
// in a string written quoted (one with a control character, say): yaml-cpp's emitter writes each
// there as U+FFFD, with no way to ask for an escape instead.
std::string JsonToYamlText(const nlohmann::ordered_json& value);

}  // namespace cairn
