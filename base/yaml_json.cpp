#include "base/yaml_json.h"

#include <yaml-cpp/depthguard.h>

#include <charconv>
#include <cstdint>
#include <set>
#include <string_view>

namespace cairn {

namespace {

using nlohmann::ordered_json;

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?  (YAML 1.2 core float)
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  size_t frac_digits = 0;
  bool has_dot = false;
  if (i < s.size() && s[i] == '.') {
    has_dot = true;
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits == 0 && (!has_dot || frac_digits == 0)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

// The core-schema reading of a plain (unquoted) scalar.
ordered_json PlainScalar(std::string_view text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nullptr;
  }
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  std::string_view unsigned_part = text;
  bool negative = false;
  if (unsigned_part[0] == '-' || unsigned_part[0] == '+') {
    negative = unsigned_part[0] == '-';
    unsigned_part.remove_prefix(1);
  }
  if (IsDigits(unsigned_part)) {
    // from_chars takes no '+', so parse the digits and apply the sign ourselves.
    uint64_t magnitude = 0;
    auto [end, error] = std::from_chars(unsigned_part.data(),
                                        unsigned_part.data() + unsigned_part.size(), magnitude);
    if (error == std::errc() && end == unsigned_part.data() + unsigned_part.size()) {
      if (!negative) {
        if (magnitude <= static_cast<uint64_t>(INT64_MAX)) {
          return static_cast<int64_t>(magnitude);
        }
        return magnitude;
      }
      if (magnitude <= static_cast<uint64_t>(INT64_MAX)) return -static_cast<int64_t>(magnitude);
      if (magnitude == static_cast<uint64_t>(INT64_MAX) + 1) return INT64_MIN;
    }
    // Too large for 64 bits: fall through and read it as a float, as JSON would.
  }
  if (IsCoreFloat(text)) {
    double value = 0;
    auto [end, error] =
        std::from_chars(unsigned_part.data(), unsigned_part.data() + unsigned_part.size(), value);
    if (error == std::errc() && end == unsigned_part.data() + unsigned_part.size()) {
      return negative ? -value : value;
    }
  }
  return std::string(text);
}

std::string LineOf(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.is_null() ? 1 : mark.line + 1);
}

void Emit(YAML::Emitter& out, const ordered_json& value) {
  switch (value.type()) {
    case ordered_json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, child] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, child);
      }
      out << YAML::EndMap;
      return;
    case ordered_json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& child : value) Emit(out, child);
      out << YAML::EndSeq;
      return;
    case ordered_json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      // A string that would read back as a number, boolean or null must be quoted. So must one
      // with a carriage return: yaml-cpp leaves it in a plain scalar, where YAML reads it as a
      // line break (found by fuzzing: "a\r" came back "a").
      if (!PlainScalar(text).is_string() || text.find('\r') != std::string::npos) {
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      return;
    }
    case ordered_json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      return;
    case ordered_json::value_t::number_integer:
    case ordered_json::value_t::number_unsigned:
    case ordered_json::value_t::number_float:
      out << value.dump();
      return;
    default:
      out << YAML::Null;
      return;
  }
}

}  // namespace

ordered_json YamlScalarToJson(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return nullptr;
  const std::string& tag = node.Tag();
  // "!" marks a quoted or block scalar; an explicit !!str tag also forces a string.
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
  return PlainScalar(node.Scalar());
}

Result<ordered_json> YamlNodeToJson(const YAML::Node& node, const std::string& field_path) {
  if (!node.IsDefined() || node.IsNull()) return ordered_json(nullptr);
  if (node.IsScalar()) return YamlScalarToJson(node);
  if (node.IsSequence()) {
    ordered_json array = ordered_json::array();
    size_t index = 0;
    for (const auto& element : node) {
      CAIRN_ASSIGN_OR_RETURN(
          ordered_json child,
          YamlNodeToJson(element, field_path + "[" + std::to_string(index) + "]"));
      array.push_back(std::move(child));
      ++index;
    }
    return array;
  }
  ordered_json object = ordered_json::object();
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      return Status::InvalidArgument(LineOf(entry.first.Mark()) + ": " +
                                     ChildPath(field_path, "<key>") +
                                     ": a key must be a plain name");
    }
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      return Status::InvalidArgument(LineOf(entry.first.Mark()) + ": " +
                                     ChildPath(field_path, key) + ": duplicate key");
    }
    CAIRN_ASSIGN_OR_RETURN(ordered_json child,
                           YamlNodeToJson(entry.second, ChildPath(field_path, key)));
    object[key] = std::move(child);
  }
  return object;
}

namespace {

// Walks the tree an alias-expanding reader would see, giving up past the limits.
Status CheckShape(const YAML::Node& node, int depth, size_t& nodes, const DocumentLimits& limits,
                  const std::string& prefix) {
  if (++nodes > limits.max_nodes) {
    return Status::InvalidArgument(prefix + "more than " + std::to_string(limits.max_nodes) +
                                   " values (are aliases expanding without end?)");
  }
  if (depth > limits.max_depth) {
    return Status::InvalidArgument(prefix + LineOf(node.Mark()) + ": nested deeper than " +
                                   std::to_string(limits.max_depth) + " levels");
  }
  if (node.IsMap()) {
    for (const auto& entry : node) {
      CAIRN_RETURN_IF_ERROR(CheckShape(entry.first, depth + 1, nodes, limits, prefix));
      CAIRN_RETURN_IF_ERROR(CheckShape(entry.second, depth + 1, nodes, limits, prefix));
    }
  } else if (node.IsSequence()) {
    for (const auto& element : node) {
      CAIRN_RETURN_IF_ERROR(CheckShape(element, depth + 1, nodes, limits, prefix));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<YAML::Node> LoadYaml(const std::string& text, const std::string& what,
                            const DocumentLimits& limits) {
  const std::string prefix = ErrorPrefix(what);
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(prefix + "larger than " + std::to_string(limits.max_bytes) +
                                   " bytes");
  }
  CAIRN_RETURN_IF_ERROR(CheckYamlFlowDepth(text, limits, what));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard (it recurses per level) stops far past ours; name our limit.
    return Status::InvalidArgument(prefix + LineOf(e.mark) + ": nested deeper than " +
                                   std::to_string(limits.max_depth) + " levels");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(prefix + LineOf(e.mark) + ": not valid YAML: " + e.msg);
  }
  size_t nodes = 0;
  CAIRN_RETURN_IF_ERROR(CheckShape(root, 0, nodes, limits, prefix));
  return root;
}

Result<ordered_json> YamlTextToJson(const std::string& yaml_text, const std::string& what) {
  const std::string prefix = what.empty() ? "" : what + ": ";
  CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, what));
  if (!root.IsDefined() || root.IsNull()) return ordered_json::object();
  auto converted = YamlNodeToJson(root, "");
  if (!converted.ok()) return Status::InvalidArgument(prefix + converted.status().message());
  return converted;
}

std::string ChildPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

namespace {

// What converting one JSON value may still spend: DocumentLimits counted down.
struct ConversionBudget {
  const DocumentLimits limits;
  size_t nodes = 0;
  size_t string_bytes = 0;
};

Result<YAML::Node> JsonToYamlNodeAt(const nlohmann::json& value, const std::string& what, int depth,
                                    ConversionBudget& budget) {
  const DocumentLimits& limits = budget.limits;
  if (depth > limits.max_depth) {
    return Status::InvalidArgument(what + ": nested deeper than " +
                                   std::to_string(limits.max_depth) + " levels");
  }
  if (++budget.nodes > limits.max_nodes) {
    return Status::InvalidArgument(what + ": more than " + std::to_string(limits.max_nodes) +
                                   " values");
  }
  YAML::Node node;
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      node = YAML::Node(YAML::NodeType::Map);
      for (const auto& [key, child] : value.items()) {
        budget.string_bytes += key.size();
        CAIRN_ASSIGN_OR_RETURN(node[key], JsonToYamlNodeAt(child, what, depth + 1, budget));
      }
      return node;
    case nlohmann::json::value_t::array:
      node = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& child : value) {
        CAIRN_ASSIGN_OR_RETURN(YAML::Node element,
                               JsonToYamlNodeAt(child, what, depth + 1, budget));
        node.push_back(element);
      }
      return node;
    case nlohmann::json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      budget.string_bytes += text.size();
      if (budget.string_bytes > limits.max_bytes) {
        return Status::InvalidArgument(what + ": larger than " + std::to_string(limits.max_bytes) +
                                       " bytes");
      }
      node = YAML::Node(text);
      node.SetTag("!");  // as a quoted scalar: a string, whatever it holds
      return node;
    }
    case nlohmann::json::value_t::null:
      return YAML::Node(YAML::NodeType::Null);
    default:  // numbers and booleans: their JSON text is their plain YAML scalar
      return YAML::Node(value.dump());
  }
}

}  // namespace

Result<YAML::Node> JsonToYamlNode(const nlohmann::json& value, const std::string& what) {
  ConversionBudget budget{DocumentLimits{}};
  return JsonToYamlNodeAt(value, what, 1, budget);
}

std::string JsonToYamlText(const ordered_json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace cairn
