#include "base/yaml_json.h"

#include <yaml-cpp/depthguard.h>

#include <charconv>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_set>

#include "base/encoding.h"

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

// YAML reads an implicit key ("key: value", and every key of a flow map such as JSON's) only up
// to 1024 characters, from its first one (a quote, if quoted) to the colon; yaml-cpp holds to
// that, counting bytes.
constexpr size_t kMaxImplicitKeyLength = 1024;

// The length of `key` as nlohmann::json::dump writes it: quoted, with '"', '\\' and control
// characters escaped, the rest (UTF-8 included) as it is.
size_t JsonKeyLength(std::string_view key) {
  size_t length = 2;
  for (char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      length += 2;
    } else if (byte < 0x20) {
      length += 6;  // \u00XX
    } else {
      ++length;
    }
  }
  return length;
}

// Refuses a key that JSON text cannot hold for a YAML reader: Cairn keeps configurations as JSON
// (an experiment's effective configuration, dump()ed into its event) and reads them back with
// LoadYaml, so a key that took more than kMaxImplicitKeyLength characters as JSON was accepted
// once and refused when read back (a 371-byte key of control characters, 1137 as JSON; found by
// fuzzing). Keys are names: none needs to come near it.
Status CheckKeyLength(std::string_view key, const std::string& where) {
  // Each byte takes at most 6 characters as JSON, and at least 1: most keys need no count.
  if (key.size() * 6 + 2 <= kMaxImplicitKeyLength) return Status::Ok();
  if (JsonKeyLength(key) > kMaxImplicitKeyLength) {
    return Status::InvalidArgument(where + "a key longer than " +
                                   std::to_string(kMaxImplicitKeyLength) +
                                   " characters as JSON (escapes counted)");
  }
  return Status::Ok();
}

std::string LineOf(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.is_null() ? 1 : mark.line + 1);
}

// A string (a value or a key) written so that LoadYaml reads it back as the same string. Quoted
// when, plain, it would read as a number, boolean or null; when it holds a carriage return,
// which yaml-cpp leaves in a plain scalar, where YAML reads a line break ("a\r" came back "a");
// when it holds a bracket or a brace, which CheckYamlFlowDepth counts outside quotes (a string
// with 65 '[' was refused as nested too deep); and when it holds a double quote, which
// CheckYamlFlowDepth takes for the start of a quoted string wherever it is (after a plain
// 'a"b', the quotes of a later "{{{...}" were taken the other way round, and its 65 braces
// counted); and when it starts as a document marker does, which yaml-cpp writes plain, though at
// the start of a line "---" or "--- a" begins a new document and "..." ends one (a document of
// the string "---" read back as an empty one). All found by fuzzing.
void EmitString(YAML::Emitter& out, const std::string& text) {
  const std::string_view start = std::string_view(text).substr(0, 3);
  if (!PlainScalar(text).is_string() || text.find_first_of("\r[{\"") != std::string::npos ||
      start == "---" || start == "...") {
    out << YAML::DoubleQuoted;
  }
  out << text;
}

// A key, written explicitly ("? key") when it could be longer than kMaxImplicitKeyLength as
// written: yaml-cpp decides by the length before escapes, but a double-quoted key can be up to
// four times longer ("\x05" for one byte), and its escapes are not JSON's: 400 U+0085 are 802
// characters as JSON, within LoadYaml's limit, and were written as an implicit key of 1602 that
// no YAML reader takes.
void EmitKey(YAML::Emitter& out, const std::string& key) {
  if (key.size() * 4 + 2 > kMaxImplicitKeyLength) out << YAML::LongKey;
  EmitString(out, key);
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
        out << YAML::Key;
        EmitKey(out, key);
        out << YAML::Value;
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
    case ordered_json::value_t::string:
      EmitString(out, value.get_ref<const std::string&>());
      return;
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

// What CheckShape has counted and checked so far.
struct ShapeWalk {
  size_t nodes = 0;
  // Where each scalar already checked starts in the text: an alias repeats its anchor's scalar,
  // with its mark, and that is checked once however often it expands. Keys apart, as they are
  // checked for more (and an alias can make a key of a value).
  std::unordered_set<int> checked_scalars;
  std::unordered_set<int> checked_keys;
};

// Whether `node` (a scalar) is seen for the first time in `checked`.
bool FirstSeen(const YAML::Node& node, std::unordered_set<int>& checked) {
  return node.Mark().pos < 0 || checked.insert(node.Mark().pos).second;
}

// Walks the tree an alias-expanding reader would see, giving up past the limits, and refuses a
// scalar that is not UTF-8: yaml-cpp can make one of valid text (a NUL in a plain scalar came out
// as the byte A0; found by fuzzing), and it would then fail every JSON dump and protobuf field.
// Refuses a key too long for JSON text as well (CheckKeyLength).
Status CheckShape(const YAML::Node& node, int depth, ShapeWalk& walk, const DocumentLimits& limits,
                  const std::string& prefix, bool is_key = false) {
  if (node.IsScalar() && FirstSeen(node, walk.checked_scalars) && !IsValidUtf8(node.Scalar())) {
    return Status::InvalidArgument(prefix + LineOf(node.Mark()) + ": not valid UTF-8 text");
  }
  if (is_key && node.IsScalar() && FirstSeen(node, walk.checked_keys)) {
    CAIRN_RETURN_IF_ERROR(CheckKeyLength(node.Scalar(), prefix + LineOf(node.Mark()) + ": "));
  }
  if (++walk.nodes > limits.max_nodes) {
    return Status::InvalidArgument(prefix + "more than " + std::to_string(limits.max_nodes) +
                                   " values (are aliases expanding without end?)");
  }
  if (depth > limits.max_depth) {
    return Status::InvalidArgument(prefix + LineOf(node.Mark()) + ": nested deeper than " +
                                   std::to_string(limits.max_depth) + " levels");
  }
  if (node.IsMap()) {
    for (const auto& entry : node) {
      CAIRN_RETURN_IF_ERROR(CheckShape(entry.first, depth + 1, walk, limits, prefix, true));
      CAIRN_RETURN_IF_ERROR(CheckShape(entry.second, depth + 1, walk, limits, prefix));
    }
  } else if (node.IsSequence()) {
    for (const auto& element : node) {
      CAIRN_RETURN_IF_ERROR(CheckShape(element, depth + 1, walk, limits, prefix));
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
  ShapeWalk walk;
  CAIRN_RETURN_IF_ERROR(CheckShape(root, 0, walk, limits, prefix));
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
        CAIRN_RETURN_IF_ERROR(CheckKeyLength(key, ErrorPrefix(what)));
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
  // The root is level 0, as CheckShape counts it (from 1 a document of 64 nested containers that
  // YAML text may hold was refused as JSON; found by the yaml_json fuzz target).
  return JsonToYamlNodeAt(value, what, 0, budget);
}

std::string JsonToYamlText(const ordered_json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace cairn
