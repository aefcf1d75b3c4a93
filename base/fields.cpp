#include "base/fields.h"

#include <charconv>
#include <climits>
#include <cmath>

#include "base/yaml_json.h"

namespace cairn::fields {

namespace {

int LineOf(const Field& parent, const YAML::Node& node) {
  if (parent.line == 0) return 0;
  return node.Mark().is_null() ? parent.line : node.Mark().line + 1;
}

// The scalar's core-schema value, or why it is not one.
Result<nlohmann::ordered_json> ScalarOf(const Field& field, const std::string& expected) {
  if (!field.node.IsScalar()) return Invalid(field, "expected " + expected);
  return YamlScalarToJson(field.node);
}

// 10 rather than 10.0, 0.5 as 0.5.
std::string NumberText(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return nlohmann::json(value).dump();
}

}  // namespace

Field Root(const YAML::Node& node, const std::string& source, bool with_lines) {
  return Field{node, "", with_lines ? (node.Mark().is_null() ? 1 : node.Mark().line + 1) : 0,
               source};
}

Field Element(const Field& sequence, const YAML::Node& element, size_t index) {
  return Field{element, sequence.path + "[" + std::to_string(index) + "]",
               LineOf(sequence, element), sequence.source};
}

std::string Where(const Field& field) {
  const std::string path = field.path.empty() ? std::string("(top level)") : field.path;
  if (field.line == 0) return path;
  const std::string line = std::to_string(field.line);
  return (field.source.empty() ? "line " + line : field.source + ":" + line) + ": " + path;
}

Status Invalid(const Field& field, const std::string& message) {
  return Status::InvalidArgument(Where(field) + ": " + message);
}

Status Unsupported(const Field& field, const std::string& hint) {
  return Status::NotSupported(Where(field) + " is not supported yet" +
                              (hint.empty() ? "" : "; " + hint));
}

bool IsAbsent(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

Result<MapFields> MapFields::Read(const Field& field, const std::string& expected) {
  if (!field.node.IsMap()) return Invalid(field, "expected " + expected);
  MapFields fields;
  fields.self_ = field;
  for (const auto& entry : field.node) {
    const int line = LineOf(field, entry.first);
    if (!entry.first.IsScalar()) {
      return Invalid({entry.second, ChildPath(field.path, "<key>"), line, field.source},
                     "a key must be a plain name");
    }
    const std::string key = entry.first.Scalar();
    Field child{entry.second, ChildPath(field.path, key), line, field.source};
    if (fields.by_key_.count(key)) return Invalid(child, "duplicate key");
    fields.by_key_[key] = fields.entries_.size();
    fields.keys_.push_back(key);
    fields.entries_.push_back(std::move(child));
  }
  return fields;
}

Status MapFields::Check(const std::set<std::string>& known, const std::vector<Refused>& refused,
                        const std::string& unknown_message) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (known.count(keys_[i])) continue;
    for (const auto& r : refused) {
      if (keys_[i] == r.key) return Unsupported(entries_[i], r.hint);
    }
    return Invalid(entries_[i], unknown_message);
  }
  return Status::Ok();
}

std::optional<Field> MapFields::Get(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end() || IsAbsent(entries_[it->second].node)) return std::nullopt;
  return entries_[it->second];
}

Result<Field> MapFields::Require(const std::string& key, const std::string& example) const {
  auto field = Get(key);
  if (!field) {
    Field missing{YAML::Node(), ChildPath(self_.path, key), self_.line, self_.source};
    return Invalid(missing, "required" + (example.empty() ? "" : " (e.g. " + example + ")"));
  }
  return *field;
}

Result<std::string> ReadString(const Field& field, const std::string& expected) {
  CAIRN_ASSIGN_OR_RETURN(auto value, ScalarOf(field, expected));
  if (!value.is_string()) return Invalid(field, "expected " + expected + ", got " + value.dump());
  return value.get<std::string>();
}

Result<int64_t> ReadInt(const Field& field, int64_t min, int64_t max, const std::string& expected) {
  CAIRN_ASSIGN_OR_RETURN(auto value, ScalarOf(field, expected));
  if (!value.is_number_integer()) {
    return Invalid(field, "expected " + expected + ", got " + value.dump());
  }
  const bool too_large =
      value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  if (too_large || value.get<int64_t>() < min || value.get<int64_t>() > max) {
    if (max >= std::numeric_limits<int>::max()) {  // no upper bound worth stating
      return Invalid(field, "must be at least " + std::to_string(min) + ", got " + value.dump());
    }
    return Invalid(field, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                              ", got " + value.dump());
  }
  return value.get<int64_t>();
}

Result<int> ReadSmallInt(const Field& field, int min, int max, const std::string& expected) {
  CAIRN_ASSIGN_OR_RETURN(int64_t value, ReadInt(field, min, max, expected));
  return static_cast<int>(value);
}

Result<double> ReadNumber(const Field& field, const std::string& expected) {
  CAIRN_ASSIGN_OR_RETURN(auto value, ScalarOf(field, expected));
  if (!value.is_number()) return Invalid(field, "expected " + expected + ", got " + value.dump());
  return value.get<double>();
}

Result<double> ReadNumberIn(const Field& field, double min, double max,
                            const std::string& expected) {
  CAIRN_ASSIGN_OR_RETURN(double value, ReadNumber(field, expected));
  if (!std::isfinite(value) || value < min || value > max) {
    return Invalid(field, "must be between " + NumberText(min) + " and " + NumberText(max) +
                              ", got " + NumberText(value));
  }
  return value;
}

Result<bool> ReadBool(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(auto value, ScalarOf(field, "true or false"));
  if (!value.is_boolean()) return Invalid(field, "expected true or false, got " + value.dump());
  return value.get<bool>();
}

Result<std::vector<std::string>> ReadStringList(const Field& field, const std::string& expected) {
  if (!field.node.IsSequence()) return Invalid(field, "expected " + expected);
  std::vector<std::string> out;
  size_t index = 0;
  for (const auto& element : field.node) {
    CAIRN_ASSIGN_OR_RETURN(std::string text, ReadString(Element(field, element, index++)));
    out.push_back(std::move(text));
  }
  return out;
}

Result<std::string> ReadChoice(const Field& field, const std::vector<std::string>& choices) {
  std::string listed;
  for (const auto& choice : choices) listed += (listed.empty() ? "" : ", ") + choice;
  CAIRN_ASSIGN_OR_RETURN(std::string value, ReadString(field, "one of " + listed));
  for (const auto& choice : choices) {
    if (value == choice) return value;
  }
  return Invalid(field, "expected one of " + listed + ", got '" + value + "'");
}

Result<nlohmann::json> JsonOf(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json value, YamlNodeToJson(field.node, field.path));
  return nlohmann::json(value);  // the sorted json type the rest of Cairn uses
}

bool Present(const nlohmann::json& object, const char* key) {
  return object.contains(key) && !object.at(key).is_null();
}

Result<std::string> GetString(const nlohmann::json& object, const char* key,
                              const std::string& path, bool required) {
  if (!Present(object, key)) {
    if (required) return Status::InvalidArgument(path + ": required");
    return std::string();
  }
  const nlohmann::json& value = object.at(key);
  if (!value.is_string()) {
    return Status::InvalidArgument(path + ": expected a string, got " + value.dump());
  }
  return value.get<std::string>();
}

Result<std::optional<int64_t>> GetInt(const nlohmann::json& object, const char* key,
                                      const std::string& path) {
  if (!Present(object, key)) return std::optional<int64_t>();
  const nlohmann::json& value = object.at(key);
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) {
      return Status::InvalidArgument(path + ": out of range, got " + value.dump());
    }
    return std::optional<int64_t>(value.get<int64_t>());
  }
  if (value.is_number_float()) {
    double number = value.get<double>();
    if (number >= -9.2e18 && number <= 9.2e18 &&
        number == static_cast<double>(static_cast<int64_t>(number))) {
      return std::optional<int64_t>(static_cast<int64_t>(number));
    }
  }
  if (value.is_string()) {  // grpc-gateway sends int64 as strings
    const std::string& text = value.get_ref<const std::string&>();
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) {
      return std::optional<int64_t>(parsed);
    }
  }
  return Status::InvalidArgument(path + ": expected an integer, got " + value.dump());
}

Result<std::optional<int32_t>> GetInt32(const nlohmann::json& object, const char* key,
                                        const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> value, GetInt(object, key, path));
  if (!value) return std::optional<int32_t>();
  if (*value < INT32_MIN || *value > INT32_MAX) {
    return Status::InvalidArgument(path + ": out of range, got " + std::to_string(*value));
  }
  return std::optional<int32_t>(static_cast<int32_t>(*value));
}

Status CheckKnownKeys(const nlohmann::json& object, const std::string& path,
                      const std::set<std::string>& known,
                      const std::set<std::string>& not_supported) {
  for (const auto& [key, value] : object.items()) {
    if (known.count(key)) continue;
    const std::string full = ChildPath(path, key);
    if (not_supported.count(key)) return Status::NotSupported(full + " is not supported yet");
    return Status::InvalidArgument(full + ": unknown field");
  }
  return Status::Ok();
}

}  // namespace cairn::fields
