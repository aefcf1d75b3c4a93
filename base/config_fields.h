// How master.yaml is read (master/master_config.cpp, commands/agents/pools_config.cpp) with the one
// field-reading toolkit, base/fields.h, walking the YAML nodes with the file's name at hand.
// Only for master.yaml and what reads it (replay/whatif_config.cpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>

#include "base/fields.h"
#include "base/status.h"

namespace cairn::config_fields {

// master.yaml is read with base/fields.h, the toolkit every configuration uses; these adapt
// it to this parser's style of walking the YAML nodes with the file's name at hand.
inline fields::Field At(const std::string& source, const YAML::Node& node,
                        const std::string& path) {
  return fields::Field{node, path, node.Mark().is_null() ? 1 : node.Mark().line + 1, source};
}

inline std::string Where(const std::string& source, const YAML::Node& node,
                         const std::string& field) {
  return fields::Where(At(source, node, field));
}

// Every key of `map` must be in `known`; a key in `unsupported` names a feature Cairn does not
// have and is NotSupported with the reason given there.
inline Status CheckKeys(const std::string& source, const YAML::Node& map, const std::string& prefix,
                        const std::set<std::string>& known,
                        const std::map<std::string, std::string>& unsupported = {}) {
  std::string path = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
  CAIRN_ASSIGN_OR_RETURN(fields::MapFields entries,
                         fields::MapFields::Read(At(source, map, path), "a map"));
  for (size_t i = 0; i < entries.keys().size(); ++i) {
    const std::string& key = entries.keys()[i];
    if (known.count(key)) continue;
    if (auto reason = unsupported.find(key); reason != unsupported.end()) {
      return Status::NotSupported(fields::Where(entries.entries()[i]) + ": " + reason->second);
    }
    return fields::Invalid(entries.entries()[i], "unknown field");
  }
  return Status::Ok();
}

// A scalar of type T (YAML 1.2 core schema, as every Cairn configuration is read).
template <typename T>
Result<T> Scalar(const std::string& source, const YAML::Node& node, const std::string& field,
                 const char* expected) {
  const fields::Field at = At(source, node, field);
  if constexpr (std::is_same_v<T, std::string>) {
    return fields::ReadString(at, expected);
  } else if constexpr (std::is_same_v<T, bool>) {
    return fields::ReadBool(at);
  } else if constexpr (std::is_same_v<T, double>) {
    return fields::ReadNumber(at, expected);
  } else {
    CAIRN_ASSIGN_OR_RETURN(int64_t value, fields::ReadInt(at, std::numeric_limits<T>::min(),
                                                          std::numeric_limits<T>::max(), expected));
    return static_cast<T>(value);
  }
}

// A key written with no value (`type:`) counts as not set, as in Determined's configs.
inline bool IsSet(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

// The node of `key` itself, for errors about a key whose value may start on a later line.
inline YAML::Node KeyNode(const YAML::Node& map, const std::string& key) {
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.first;
  }
  return map;
}

// A string that may be absent or blank; both read as "".
inline Result<std::string> OptionalString(const std::string& source, const YAML::Node& node,
                                          const std::string& field, const char* expected) {
  if (!IsSet(node)) return std::string();
  return Scalar<std::string>(source, node, field, expected);
}

}  // namespace cairn::config_fields
