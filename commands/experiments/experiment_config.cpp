#include "commands/experiments/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "commands/experiments/yaml_json.h"

namespace cairn::experiments {

namespace {

using nlohmann::json;

// Caps that keep a typo from turning into an unbounded allocation in the master.
constexpr int kMaxTrials = 100000;

// A field of the document: its value, its dotted path and the (1-based) line of its key.
struct Field {
  YAML::Node node;
  std::string path;
  int line = 1;
};

std::string Where(const Field& field) {
  return "line " + std::to_string(field.line) + ": " +
         (field.path.empty() ? std::string("(top level)") : field.path);
}

Status Invalid(const Field& field, const std::string& message) {
  return Status::InvalidArgument(Where(field) + ": " + message);
}

Status Unsupported(const Field& field, const std::string& hint = "") {
  return Status::NotSupported("line " + std::to_string(field.line) + ": " + field.path +
                              " is not supported yet" + (hint.empty() ? "" : "; " + hint));
}

std::string ChildPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

bool IsAbsentNode(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

// A Determined field Cairn refuses by name, with a hint for the user.
struct Refused {
  const char* key;
  const char* hint;
};

// The entries of a YAML map, each with its key's line, checked for duplicates.
class MapFields {
 public:
  static Result<MapFields> Read(const Field& field, const std::string& expected) {
    if (!field.node.IsMap()) return Invalid(field, "expected " + expected);
    MapFields fields;
    fields.self_ = field;
    for (const auto& entry : field.node) {
      const int line = entry.first.Mark().is_null() ? field.line : entry.first.Mark().line + 1;
      if (!entry.first.IsScalar()) {
        return Invalid({entry.second, ChildPath(field.path, "<key>"), line},
                       "a key must be a plain name");
      }
      Field child{entry.second, ChildPath(field.path, entry.first.Scalar()), line};
      const std::string key = entry.first.Scalar();
      if (fields.by_key_.count(key)) return Invalid(child, "duplicate key");
      fields.by_key_[key] = fields.entries_.size();
      fields.keys_.push_back(key);
      fields.entries_.push_back(std::move(child));
    }
    return fields;
  }

  // Refuses the keys in `refused` by name and any key not in `known` as unknown.
  Status Check(const std::set<std::string>& known, const std::vector<Refused>& refused = {},
               const std::string& unknown_message = "unknown field") const {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (known.count(keys_[i])) continue;
      for (const auto& r : refused) {
        if (keys_[i] == r.key) return Unsupported(entries_[i], r.hint);
      }
      return Invalid(entries_[i], unknown_message);
    }
    return Status::Ok();
  }

  // The field under `key`, or nullopt when it is absent or null (null means "use the default",
  // which is how the effective configuration writes unset optional fields).
  std::optional<Field> Get(const std::string& key) const {
    auto it = by_key_.find(key);
    if (it == by_key_.end() || IsAbsentNode(entries_[it->second].node)) return std::nullopt;
    return entries_[it->second];
  }

  bool Contains(const std::string& key) const { return by_key_.count(key) > 0; }

  Result<Field> Require(const std::string& key, const std::string& example) const {
    auto field = Get(key);
    if (!field) {
      return Status::InvalidArgument("line " + std::to_string(self_.line) + ": " +
                                     ChildPath(self_.path, key) + ": required" +
                                     (example.empty() ? "" : " (e.g. " + example + ")"));
    }
    return *field;
  }

  const std::vector<Field>& entries() const { return entries_; }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  Field self_;
  std::vector<std::string> keys_;
  std::vector<Field> entries_;
  std::map<std::string, size_t> by_key_;
};

Result<json> JsonOf(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json value, YamlNodeToJson(field.node, field.path));
  // Re-encode into the sorted json type that the rest of Cairn uses.
  return json::parse(value.dump());
}

Result<std::string> ReadString(const Field& field, const std::string& expected = "a string") {
  if (!field.node.IsScalar()) return Invalid(field, "expected " + expected);
  auto value = YamlScalarToJson(field.node);
  if (!value.is_string()) return Invalid(field, "expected " + expected + ", got " + value.dump());
  return value.get<std::string>();
}

Result<int64_t> ReadInt(const Field& field, int64_t min, int64_t max,
                        const std::string& expected = "an integer") {
  if (!field.node.IsScalar()) return Invalid(field, "expected " + expected);
  auto value = YamlScalarToJson(field.node);
  if (!value.is_number_integer()) {
    return Invalid(field, "expected " + expected + ", got " + value.dump());
  }
  const bool too_large =
      value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  if (too_large || value.get<int64_t>() < min || value.get<int64_t>() > max) {
    if (max >= std::numeric_limits<int>::max()) {  // no bound worth stating
      return Invalid(field, "must be at least " + std::to_string(min) + ", got " + value.dump());
    }
    return Invalid(field, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                              ", got " + value.dump());
  }
  return value.get<int64_t>();
}

Result<int> ReadSmallInt(const Field& field, int min, int max = std::numeric_limits<int>::max(),
                         const std::string& expected = "an integer") {
  CAIRN_ASSIGN_OR_RETURN(int64_t value, ReadInt(field, min, max, expected));
  return static_cast<int>(value);
}

Result<double> ReadNumber(const Field& field, const std::string& expected = "a number") {
  if (!field.node.IsScalar()) return Invalid(field, "expected " + expected);
  auto value = YamlScalarToJson(field.node);
  if (!value.is_number()) return Invalid(field, "expected " + expected + ", got " + value.dump());
  return value.get<double>();
}

Result<bool> ReadBool(const Field& field) {
  if (!field.node.IsScalar()) return Invalid(field, "expected true or false");
  auto value = YamlScalarToJson(field.node);
  if (!value.is_boolean()) return Invalid(field, "expected true or false, got " + value.dump());
  return value.get<bool>();
}

Result<Length> ReadLength(const Field& field, int64_t min_value) {
  const std::string expected = "a map like {batches: 1000}";
  if (!field.node.IsMap()) return Invalid(field, "expected " + expected);
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, expected));
  CAIRN_RETURN_IF_ERROR(fields.Check({"batches", "records", "epochs"}, {},
                                     "unknown unit; expected batches, records or epochs"));
  if (fields.entries().size() != 1) {
    return Invalid(field, "expected exactly one of batches, records or epochs");
  }
  const Field& unit_field = fields.entries()[0];
  const std::string& unit = fields.keys()[0];
  Length length;
  length.unit = unit == "batches"   ? LengthUnit::kBatches
                : unit == "records" ? LengthUnit::kRecords
                                    : LengthUnit::kEpochs;
  CAIRN_ASSIGN_OR_RETURN(length.value,
                         ReadInt(unit_field, min_value, std::numeric_limits<int64_t>::max(),
                                 "a whole number of " + unit));
  return length;
}

Result<std::vector<std::string>> ReadStringList(const Field& field, const std::string& expected) {
  if (!field.node.IsSequence()) return Invalid(field, "expected " + expected);
  std::vector<std::string> out;
  size_t index = 0;
  for (const auto& element : field.node) {
    Field item{element, field.path + "[" + std::to_string(index) + "]",
               element.Mark().is_null() ? field.line : element.Mark().line + 1};
    CAIRN_ASSIGN_OR_RETURN(std::string text, ReadString(item, "a string"));
    out.push_back(std::move(text));
    ++index;
  }
  return out;
}

// ---- hyperparameters ----

Result<Hyperparameter> ParseHyperparameter(const Field& field, const std::string& name, bool grid);

Result<HyperparameterSpace> ParseSpace(const Field& field, bool grid) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields,
                         MapFields::Read(field, "a map of hyperparameter names to values"));
  HyperparameterSpace space;
  for (size_t i = 0; i < fields.entries().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(Hyperparameter member,
                           ParseHyperparameter(fields.entries()[i], fields.keys()[i], grid));
    space.push_back(std::move(member));
  }
  std::sort(space.begin(), space.end(),
            [](const Hyperparameter& a, const Hyperparameter& b) { return a.name < b.name; });
  return space;
}

Result<Hyperparameter> ParseHyperparameter(const Field& field, const std::string& name, bool grid) {
  Hyperparameter h;
  h.name = name;
  if (!field.node.IsMap()) {
    // A bare value (scalar, list or null) is shorthand for const.
    h.type = HyperparameterType::kConst;
    CAIRN_ASSIGN_OR_RETURN(h.val, JsonOf(field));
    return h;
  }
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, "a hyperparameter"));
  if (!fields.Contains("type")) {
    h.type = HyperparameterType::kNested;
    CAIRN_ASSIGN_OR_RETURN(h.members, ParseSpace(field, grid));
    return h;
  }
  CAIRN_ASSIGN_OR_RETURN(Field type_field, fields.Require("type", "type: int"));
  CAIRN_ASSIGN_OR_RETURN(std::string type,
                         ReadString(type_field, "one of const, int, double, log, categorical"));
  auto check = [&](std::set<std::string> known) {
    known.insert("type");
    return fields.Check(known, {}, "not a field of " + type + " hyperparameters");
  };
  if (type == "const") {
    CAIRN_RETURN_IF_ERROR(check({"val"}));
    h.type = HyperparameterType::kConst;
    if (!fields.Contains("val")) return fields.Require("val", "val: 0.01").status();
    for (size_t i = 0; i < fields.keys().size(); ++i) {
      if (fields.keys()[i] == "val") {
        CAIRN_ASSIGN_OR_RETURN(h.val, JsonOf(fields.entries()[i]));
      }
    }
    return h;
  }
  if (type == "categorical") {
    CAIRN_RETURN_IF_ERROR(check({"vals"}));
    h.type = HyperparameterType::kCategorical;
    CAIRN_ASSIGN_OR_RETURN(Field vals, fields.Require("vals", "vals: [32, 64]"));
    CAIRN_ASSIGN_OR_RETURN(json values, JsonOf(vals));
    if (!values.is_array() || values.empty()) return Invalid(vals, "expected a non-empty list");
    for (auto& value : values) h.vals.push_back(std::move(value));
    return h;
  }
  if (type != "int" && type != "double" && type != "log") {
    return Invalid(type_field, "unknown hyperparameter type '" + type +
                                   "'; expected const, int, double, log or categorical");
  }
  h.type = type == "int"      ? HyperparameterType::kInt
           : type == "double" ? HyperparameterType::kDouble
                              : HyperparameterType::kLog;
  CAIRN_RETURN_IF_ERROR(type == "log" ? check({"minval", "maxval", "base", "count"})
                                      : check({"minval", "maxval", "count"}));
  CAIRN_ASSIGN_OR_RETURN(Field min_field, fields.Require("minval", "minval: 1"));
  CAIRN_ASSIGN_OR_RETURN(Field max_field, fields.Require("maxval", "maxval: 8"));
  if (h.type == HyperparameterType::kInt) {
    // Bounds well inside what a double holds exactly, since grid points are computed in double.
    constexpr int64_t kBound = int64_t{1} << 52;
    CAIRN_ASSIGN_OR_RETURN(int64_t min, ReadInt(min_field, -kBound, kBound));
    CAIRN_ASSIGN_OR_RETURN(int64_t max, ReadInt(max_field, -kBound, kBound));
    h.minval = static_cast<double>(min);
    h.maxval = static_cast<double>(max);
  } else {
    CAIRN_ASSIGN_OR_RETURN(h.minval, ReadNumber(min_field));
    CAIRN_ASSIGN_OR_RETURN(h.maxval, ReadNumber(max_field));
  }
  if (!(h.minval < h.maxval)) return Invalid(max_field, "must be greater than minval");
  if (auto base = fields.Get("base")) {
    CAIRN_ASSIGN_OR_RETURN(h.base, ReadNumber(*base));
    if (!(h.base > 0)) return Invalid(*base, "must be greater than 0");
  }
  if (auto count = fields.Get("count")) {
    CAIRN_ASSIGN_OR_RETURN(h.count, ReadSmallInt(*count, 1, kMaxTrials));
  } else if (grid) {
    return Invalid(field, "grid search is in use but count was not provided");
  }
  return h;
}

// ---- sections ----

Result<SearcherName> ReadSearcherName(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(std::string name,
                         ReadString(field, "one of single, grid, random, adaptive_asha"));
  if (name == "single") return SearcherName::kSingle;
  if (name == "grid") return SearcherName::kGrid;
  if (name == "random") return SearcherName::kRandom;
  if (name == "adaptive_asha") return SearcherName::kAdaptiveAsha;
  for (const char* other :
       {"async_halving", "sync_halving", "adaptive", "adaptive_simple", "pbt", "custom"}) {
    if (name == other) {
      return Status::NotSupported(Where(field) + ": the " + name +
                                  " searcher is not supported yet; use single, grid, random or "
                                  "adaptive_asha");
    }
  }
  return Invalid(field,
                 "unknown searcher '" + name + "'; expected single, grid, random or adaptive_asha");
}

Result<SearcherConfig> ParseSearcher(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields,
                         MapFields::Read(field, "a map like {name: single, metric: ...}"));
  SearcherConfig s;
  CAIRN_ASSIGN_OR_RETURN(Field name_field, fields.Require("name", "name: single"));
  CAIRN_ASSIGN_OR_RETURN(s.name, ReadSearcherName(name_field));
  std::set<std::string> known = {"name", "metric", "smaller_is_better", "max_length"};
  switch (s.name) {
    case SearcherName::kSingle:
      break;
    case SearcherName::kGrid:
      known.insert("max_concurrent_trials");
      break;
    case SearcherName::kRandom:
      known.insert({"max_trials", "max_concurrent_trials"});
      break;
    case SearcherName::kAdaptiveAsha:
      known.insert({"max_trials", "max_concurrent_trials", "divisor", "max_rungs", "mode",
                    "bracket_rungs", "stop_once"});
      break;
  }
  const std::vector<Refused> refused = {
      {"source_trial_id", "warm starts come later"},
      {"source_checkpoint_uuid", "warm starts come later"},
      {"max_time", "give the length as max_length"},
      {"time_metric", "give the length as max_length"},
      {"stop_once", "adaptive_asha promotes trials (stop_once: false)"},
  };
  // A field of another searcher is a mistake in this one, not an unsupported feature.
  const std::string unknown =
      std::string("not a field of the ") + SearcherNameText(s.name) + " searcher";
  CAIRN_RETURN_IF_ERROR(fields.Check(known, refused, unknown));

  CAIRN_ASSIGN_OR_RETURN(Field metric, fields.Require("metric", "metric: validation_loss"));
  CAIRN_ASSIGN_OR_RETURN(s.metric, ReadString(metric, "a metric name"));
  if (s.metric.empty()) return Invalid(metric, "must not be empty");
  if (auto f = fields.Get("smaller_is_better")) {
    CAIRN_ASSIGN_OR_RETURN(s.smaller_is_better, ReadBool(*f));
  }
  CAIRN_ASSIGN_OR_RETURN(Field max_length, fields.Require("max_length",
                                                          "max_length: {batches: "
                                                          "1000}"));
  CAIRN_ASSIGN_OR_RETURN(s.max_length, ReadLength(max_length, 1));

  if (s.name == SearcherName::kSingle) {
    s.max_trials = 1;
    s.max_concurrent_trials = 1;
    return s;
  }
  if (s.name != SearcherName::kGrid) {
    CAIRN_ASSIGN_OR_RETURN(Field max_trials, fields.Require("max_trials", "max_trials: 16"));
    CAIRN_ASSIGN_OR_RETURN(s.max_trials, ReadSmallInt(max_trials, 1, kMaxTrials));
  }
  if (auto f = fields.Get("max_concurrent_trials")) {
    CAIRN_ASSIGN_OR_RETURN(s.max_concurrent_trials, ReadSmallInt(*f, 0, kMaxTrials));
  }
  if (s.name != SearcherName::kAdaptiveAsha) return s;
  if (auto f = fields.Get("stop_once")) {
    CAIRN_ASSIGN_OR_RETURN(bool stop_once, ReadBool(*f));
    if (stop_once) return Unsupported(*f, "adaptive_asha promotes trials (stop_once: false)");
  }
  if (auto f = fields.Get("divisor")) {
    CAIRN_ASSIGN_OR_RETURN(s.divisor, ReadNumber(*f));
    if (!(s.divisor > 1) || !std::isfinite(s.divisor)) {
      return Invalid(*f, "must be greater than 1");
    }
  }
  if (auto f = fields.Get("max_rungs")) {
    CAIRN_ASSIGN_OR_RETURN(s.max_rungs, ReadSmallInt(*f, 1, 64));
  }
  if (auto f = fields.Get("mode")) {
    CAIRN_ASSIGN_OR_RETURN(std::string mode,
                           ReadString(*f, "one of aggressive, standard, conservative"));
    if (mode == "aggressive") {
      s.mode = AshaMode::kAggressive;
    } else if (mode == "standard") {
      s.mode = AshaMode::kStandard;
    } else if (mode == "conservative") {
      s.mode = AshaMode::kConservative;
    } else {
      return Invalid(*f, "unknown mode '" + mode +
                             "'; expected aggressive, standard or "
                             "conservative");
    }
  }
  if (auto f = fields.Get("bracket_rungs")) {
    if (!f->node.IsSequence()) return Invalid(*f, "expected a list of rung counts like [3, 2]");
    size_t index = 0;
    for (const auto& element : f->node) {
      Field item{element, f->path + "[" + std::to_string(index++) + "]", f->line};
      CAIRN_ASSIGN_OR_RETURN(int rungs, ReadSmallInt(item, 1, 64));
      s.bracket_rungs.push_back(rungs);
    }
  }
  return s;
}

Result<ResourcesConfig> ParseResources(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, "a map"));
  if (auto slots = fields.Get("slots")) {
    return Invalid(*slots, "not allowed for experiments; use resources.slots_per_trial");
  }
  CAIRN_RETURN_IF_ERROR(
      fields.Check({"slots_per_trial", "max_slots", "weight", "priority", "resource_pool"},
                   {{"shm_size", ""},
                    {"is_single_node", ""},
                    {"devices", ""},
                    {"native_parallel", ""},
                    {"agent_label", "use resource_pool"}}));
  ResourcesConfig r;
  if (auto f = fields.Get("slots_per_trial")) {
    CAIRN_ASSIGN_OR_RETURN(r.slots_per_trial, ReadSmallInt(*f, 0, 1 << 20));
  }
  if (auto f = fields.Get("max_slots")) {
    CAIRN_ASSIGN_OR_RETURN(r.max_slots, ReadSmallInt(*f, 0, 1 << 20));
  }
  if (auto f = fields.Get("weight")) {
    CAIRN_ASSIGN_OR_RETURN(r.weight, ReadNumber(*f));
    if (!(r.weight > 0) || !std::isfinite(r.weight)) return Invalid(*f, "must be greater than 0");
  }
  if (auto f = fields.Get("priority")) {
    CAIRN_ASSIGN_OR_RETURN(r.priority, ReadSmallInt(*f, 1, 99));
  }
  if (auto f = fields.Get("resource_pool")) {
    CAIRN_ASSIGN_OR_RETURN(r.resource_pool, ReadString(*f, "a resource pool name"));
  }
  return r;
}

Status CheckEnvironmentVariables(const Field& field, const std::vector<std::string>& entries) {
  for (const auto& entry : entries) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Invalid(field, "expected entries like NAME=value, got '" + entry + "'");
    }
  }
  return Status::Ok();
}

Result<EnvironmentConfig> ParseEnvironment(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, "a map"));
  CAIRN_RETURN_IF_ERROR(fields.Check({"image", "environment_variables"}, {{"ports", ""},
                                                                          {"proxy_ports", ""},
                                                                          {"registry_auth", ""},
                                                                          {"force_pull_image", ""},
                                                                          {"add_capabilities", ""},
                                                                          {"drop_capabilities", ""},
                                                                          {"pod_spec", ""}}));
  EnvironmentConfig e;
  e.image = nullptr;
  if (auto f = fields.Get("image")) {
    if (f->node.IsMap()) {
      CAIRN_ASSIGN_OR_RETURN(MapFields images, MapFields::Read(*f, "a map"));
      CAIRN_RETURN_IF_ERROR(images.Check({"cpu", "cuda", "rocm", "gpu"}));
      for (const auto& image : images.entries()) {
        if (!IsAbsentNode(image.node))
          CAIRN_RETURN_IF_ERROR(ReadString(image, "an image").status());
      }
    } else {
      CAIRN_RETURN_IF_ERROR(ReadString(*f, "an image name or {cpu: ..., cuda: ...}").status());
    }
    CAIRN_ASSIGN_OR_RETURN(e.image, JsonOf(*f));
  }
  if (auto f = fields.Get("environment_variables")) {
    const std::string expected = "a list like [NAME=value] or a map {cpu: [...], cuda: [...]}";
    if (f->node.IsSequence()) {
      CAIRN_ASSIGN_OR_RETURN(e.environment_variables_cpu, ReadStringList(*f, expected));
      CAIRN_RETURN_IF_ERROR(CheckEnvironmentVariables(*f, e.environment_variables_cpu));
      e.environment_variables_cuda = e.environment_variables_cpu;
      e.environment_variables_rocm = e.environment_variables_cpu;
    } else {
      CAIRN_ASSIGN_OR_RETURN(MapFields per_device, MapFields::Read(*f, expected));
      CAIRN_RETURN_IF_ERROR(per_device.Check({"cpu", "cuda", "rocm", "gpu"}));
      for (size_t i = 0; i < per_device.keys().size(); ++i) {
        const Field& list = per_device.entries()[i];
        if (IsAbsentNode(list.node)) continue;
        CAIRN_ASSIGN_OR_RETURN(auto entries, ReadStringList(list, "a list like [NAME=value]"));
        CAIRN_RETURN_IF_ERROR(CheckEnvironmentVariables(list, entries));
        const std::string& device = per_device.keys()[i];
        (device == "cpu"    ? e.environment_variables_cpu
         : device == "rocm" ? e.environment_variables_rocm
                            : e.environment_variables_cuda) = std::move(entries);
      }
    }
  }
  return e;
}

bool HasDotDotSegment(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return true;
    start = end + 1;
  }
  return false;
}

Result<CheckpointStorageConfig> ParseCheckpointStorage(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields,
                         MapFields::Read(field, "a map like {type: shared_fs, host_path: /mnt}"));
  CAIRN_ASSIGN_OR_RETURN(Field type_field, fields.Require("type", "type: shared_fs"));
  CAIRN_ASSIGN_OR_RETURN(std::string type, ReadString(type_field, "a storage type"));
  if (type == "s3" || type == "gcs" || type == "azure" || type == "directory") {
    return Status::NotSupported(Where(type_field) + ": checkpoint storage of type " + type +
                                " is not supported yet; use shared_fs");
  }
  if (type != "shared_fs") return Invalid(type_field, "unknown storage type '" + type + "'");
  CAIRN_RETURN_IF_ERROR(fields.Check({"type", "host_path", "storage_path", "save_experiment_best",
                                      "save_trial_best", "save_trial_latest"},
                                     {{"container_path", ""},
                                      {"checkpoint_path", "use storage_path"},
                                      {"tensorboard_path", ""},
                                      {"propagation", ""}}));
  CheckpointStorageConfig c;
  CAIRN_ASSIGN_OR_RETURN(Field host_path, fields.Require("host_path", "host_path: /mnt/ckpt"));
  CAIRN_ASSIGN_OR_RETURN(c.host_path, ReadString(host_path, "an absolute path"));
  if (c.host_path.empty() || c.host_path[0] != '/' || HasDotDotSegment(c.host_path)) {
    return Invalid(host_path, "must be an absolute path without '..'");
  }
  if (auto f = fields.Get("storage_path")) {
    CAIRN_ASSIGN_OR_RETURN(std::string storage_path, ReadString(*f, "a path"));
    const bool absolute = !storage_path.empty() && storage_path[0] == '/';
    const std::string inside = c.host_path.back() == '/' ? c.host_path : c.host_path + "/";
    if (HasDotDotSegment(storage_path) ||
        (absolute && storage_path != c.host_path && storage_path.rfind(inside, 0) != 0)) {
      return Invalid(*f, "must be a path inside host_path");
    }
    c.storage_path = std::move(storage_path);
  }
  if (auto f = fields.Get("save_experiment_best")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_experiment_best, ReadSmallInt(*f, 0));
  }
  if (auto f = fields.Get("save_trial_best")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_trial_best, ReadSmallInt(*f, 0));
  }
  if (auto f = fields.Get("save_trial_latest")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_trial_latest, ReadSmallInt(*f, 0));
  }
  return c;
}

bool IsIdentifier(const std::string& text, bool allow_dots) {
  if (text.empty()) return false;
  bool at_start = true;
  for (char ch : text) {
    const bool letter = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
    const bool digit = ch >= '0' && ch <= '9';
    if (allow_dots && ch == '.') {
      if (at_start) return false;
      at_start = true;
      continue;
    }
    if (!letter && !(digit && !at_start)) return false;
    at_start = false;
  }
  return !at_start;
}

Result<std::string> ParseEntrypoint(const Field& field) {
  const std::string hint = "give the trial class as module:Class, e.g. model_def:MNistTrial";
  if (field.node.IsSequence()) {
    return Unsupported({field.node, field.path + " as a command list", field.line}, hint);
  }
  CAIRN_ASSIGN_OR_RETURN(std::string entrypoint, ReadString(field, "module:Class"));
  const auto colon = entrypoint.find(':');
  if (colon == std::string::npos || entrypoint.find_first_of(" \t") != std::string::npos) {
    return Unsupported({field.node, field.path + " as a command", field.line}, hint);
  }
  if (!IsIdentifier(entrypoint.substr(0, colon), true) ||
      !IsIdentifier(entrypoint.substr(colon + 1), false)) {
    return Invalid(field,
                   "expected module:Class, e.g. model_def:MNistTrial, got '" + entrypoint + "'");
  }
  return entrypoint;
}

json LengthToJson(const Length& length) { return {{LengthUnitName(length.unit), length.value}}; }

json BuildEffective(const ExperimentConfig& c) {
  json searcher = {{"name", SearcherNameText(c.searcher.name)},
                   {"metric", c.searcher.metric},
                   {"smaller_is_better", c.searcher.smaller_is_better},
                   {"max_length", LengthToJson(c.searcher.max_length)}};
  if (c.searcher.name == SearcherName::kRandom || c.searcher.name == SearcherName::kAdaptiveAsha) {
    searcher["max_trials"] = c.searcher.max_trials;
  }
  if (c.searcher.name != SearcherName::kSingle) {
    searcher["max_concurrent_trials"] = c.searcher.max_concurrent_trials;
  }
  if (c.searcher.name == SearcherName::kAdaptiveAsha) {
    searcher["divisor"] = c.searcher.divisor;
    searcher["max_rungs"] = c.searcher.max_rungs;
    searcher["mode"] = AshaModeText(c.searcher.mode);
    searcher["bracket_rungs"] = c.searcher.bracket_rungs;
  }
  auto optional_int = [](const std::optional<int>& value) {
    return value ? json(*value) : json(nullptr);
  };
  json checkpoint_storage = nullptr;
  if (c.checkpoint_storage) {
    const auto& s = *c.checkpoint_storage;
    checkpoint_storage = {{"type", s.type},
                          {"host_path", s.host_path},
                          {"storage_path", s.storage_path ? json(*s.storage_path) : json()},
                          {"save_experiment_best", s.save_experiment_best},
                          {"save_trial_best", s.save_trial_best},
                          {"save_trial_latest", s.save_trial_latest}};
  }
  return {
      {"name", c.name},
      {"description", c.description ? json(*c.description) : json()},
      {"labels", c.labels},
      {"data", c.data},
      {"hyperparameters", SpaceToJson(c.hyperparameters)},
      {"searcher", searcher},
      {"resources",
       {{"slots_per_trial", c.resources.slots_per_trial},
        {"max_slots", optional_int(c.resources.max_slots)},
        {"weight", c.resources.weight},
        {"priority", optional_int(c.resources.priority)},
        {"resource_pool", c.resources.resource_pool}}},
      {"environment",
       {{"image", c.environment.image},
        {"environment_variables",
         {{"cpu", c.environment.environment_variables_cpu},
          {"cuda", c.environment.environment_variables_cuda},
          {"rocm", c.environment.environment_variables_rocm}}}}},
      {"checkpoint_storage", checkpoint_storage},
      {"max_restarts", c.max_restarts},
      {"entrypoint", c.entrypoint},
      {"min_validation_period", LengthToJson(c.min_validation_period)},
      {"min_checkpoint_period", LengthToJson(c.min_checkpoint_period)},
      {"records_per_epoch", c.records_per_epoch},
      {"scheduling_unit", c.scheduling_unit},
      {"reproducibility",
       {{"experiment_seed", c.experiment_seed ? json(*c.experiment_seed) : json()}}},
  };
}

const std::vector<Refused>& RefusedTopLevel() {
  static const std::vector<Refused> refused = {
      {"bind_mounts", ""},
      {"checkpoint_policy", ""},
      {"perform_initial_validation", ""},
      {"preemption_timeout", ""},
      {"workspace", ""},
      {"project", ""},
      {"log_policies", ""},
      {"retention_policy", ""},
      {"profiling", ""},
      {"optimizations", ""},
      {"integrations", ""},
      {"debug", ""},
      {"slurm", ""},
      {"pbs", ""},
      {"security", ""},
      {"tensorboard_storage", ""},
      {"data_layer", ""},
      {"internal", ""},
  };
  return refused;
}

Result<ExperimentConfig> ParseRoot(const YAML::Node& root) {
  const Field top{root, "", 1};
  if (IsAbsentNode(root)) {
    return Invalid(top, "the configuration is empty; entrypoint and searcher are required");
  }
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(top, "a map of experiment settings"));
  if (auto t = fields.Get("template")) {
    return Invalid(*t, "the template must be applied before the configuration is parsed");
  }
  CAIRN_RETURN_IF_ERROR(fields.Check(
      {"name", "description", "labels", "data", "hyperparameters", "searcher", "resources",
       "environment", "checkpoint_storage", "max_restarts", "entrypoint", "min_validation_period",
       "min_checkpoint_period", "records_per_epoch", "scheduling_unit", "reproducibility"},
      RefusedTopLevel()));

  ExperimentConfig c;
  if (auto f = fields.Get("name")) {
    CAIRN_ASSIGN_OR_RETURN(c.name, ReadString(*f));
  }
  if (auto f = fields.Get("description")) {
    CAIRN_ASSIGN_OR_RETURN(c.description, ReadString(*f));
  }
  if (auto f = fields.Get("labels")) {
    CAIRN_ASSIGN_OR_RETURN(c.labels, ReadStringList(*f, "a list of strings"));
  }
  if (auto f = fields.Get("data")) {
    if (!f->node.IsMap()) return Invalid(*f, "expected a map");
    CAIRN_ASSIGN_OR_RETURN(c.data, JsonOf(*f));
  }
  CAIRN_ASSIGN_OR_RETURN(Field searcher, fields.Require("searcher",
                                                        "searcher: {name: single, metric: loss, "
                                                        "max_length: {batches: 1000}}"));
  CAIRN_ASSIGN_OR_RETURN(c.searcher, ParseSearcher(searcher));
  std::map<std::string, Field> hyperparameter_fields;
  if (auto f = fields.Get("hyperparameters")) {
    CAIRN_ASSIGN_OR_RETURN(c.hyperparameters,
                           ParseSpace(*f, c.searcher.name == SearcherName::kGrid));
    CAIRN_ASSIGN_OR_RETURN(MapFields members, MapFields::Read(*f, "a map"));
    for (size_t i = 0; i < members.keys().size(); ++i) {
      hyperparameter_fields[members.keys()[i]] = members.entries()[i];
    }
  }
  if (auto f = fields.Get("resources")) {
    CAIRN_ASSIGN_OR_RETURN(c.resources, ParseResources(*f));
  }
  if (auto f = fields.Get("environment")) {
    CAIRN_ASSIGN_OR_RETURN(c.environment, ParseEnvironment(*f));
  }
  if (auto f = fields.Get("checkpoint_storage")) {
    CAIRN_ASSIGN_OR_RETURN(c.checkpoint_storage, ParseCheckpointStorage(*f));
  }
  if (auto f = fields.Get("max_restarts")) {
    CAIRN_ASSIGN_OR_RETURN(c.max_restarts, ReadSmallInt(*f, 0));
  }
  CAIRN_ASSIGN_OR_RETURN(Field entrypoint,
                         fields.Require("entrypoint", "entrypoint: model_def:MyTrial"));
  CAIRN_ASSIGN_OR_RETURN(c.entrypoint, ParseEntrypoint(entrypoint));
  std::vector<std::pair<Field, Length>> lengths;
  {
    CAIRN_ASSIGN_OR_RETURN(MapFields searcher_fields, MapFields::Read(searcher, "a map"));
    lengths.emplace_back(*searcher_fields.Get("max_length"), c.searcher.max_length);
  }
  for (const char* key : {"min_validation_period", "min_checkpoint_period"}) {
    if (auto f = fields.Get(key)) {
      CAIRN_ASSIGN_OR_RETURN(Length length, ReadLength(*f, 0));
      (std::string(key) == "min_validation_period" ? c.min_validation_period
                                                   : c.min_checkpoint_period) = length;
      lengths.emplace_back(*f, length);
    }
  }
  if (auto f = fields.Get("records_per_epoch")) {
    CAIRN_ASSIGN_OR_RETURN(c.records_per_epoch,
                           ReadInt(*f, 0, std::numeric_limits<int64_t>::max()));
  }
  if (auto f = fields.Get("scheduling_unit")) {
    CAIRN_ASSIGN_OR_RETURN(c.scheduling_unit, ReadSmallInt(*f, 1));
  }
  if (auto f = fields.Get("reproducibility")) {
    CAIRN_ASSIGN_OR_RETURN(MapFields reproducibility, MapFields::Read(*f, "a map"));
    CAIRN_RETURN_IF_ERROR(reproducibility.Check({"experiment_seed"}));
    if (auto seed = reproducibility.Get("experiment_seed")) {
      CAIRN_ASSIGN_OR_RETURN(int64_t value, ReadInt(*seed, 0, UINT32_MAX));
      c.experiment_seed = static_cast<uint32_t>(value);
    }
  }

  // Lengths in records or epochs become batches through global_batch_size (and records_per_epoch
  // for epochs), so those must be fixed numbers for the whole experiment.
  const Hyperparameter* batch_size = nullptr;
  for (const auto& h : c.hyperparameters) {
    if (h.name == "global_batch_size") batch_size = &h;
  }
  if (batch_size && batch_size->type == HyperparameterType::kConst &&
      batch_size->val.is_number_integer() && batch_size->val.get<int64_t>() > 0) {
    c.global_batch_size = batch_size->val.get<int64_t>();
  }
  for (const auto& [field, length] : lengths) {
    if (length.unit == LengthUnit::kBatches) continue;
    const std::string unit = LengthUnitName(length.unit);
    if (!c.global_batch_size && batch_size) {
      return Invalid(hyperparameter_fields.at(batch_size->name),
                     "must be a positive integer constant when a length is given in " + unit +
                         " (" + field.path + ")");
    }
    if (!c.global_batch_size) {
      return Invalid(field, "a length in " + unit + " needs hyperparameters.global_batch_size");
    }
    if (length.unit == LengthUnit::kEpochs && c.records_per_epoch <= 0) {
      return Invalid(field, "a length in epochs needs records_per_epoch");
    }
    auto batches = LengthInBatches(c, length);
    if (!batches.ok()) return Invalid(field, batches.status().message());
  }
  c.effective = BuildEffective(c);
  return c;
}

}  // namespace

const char* LengthUnitName(LengthUnit unit) {
  switch (unit) {
    case LengthUnit::kBatches:
      return "batches";
    case LengthUnit::kRecords:
      return "records";
    case LengthUnit::kEpochs:
      return "epochs";
  }
  return "batches";
}

const char* SearcherNameText(SearcherName name) {
  switch (name) {
    case SearcherName::kSingle:
      return "single";
    case SearcherName::kGrid:
      return "grid";
    case SearcherName::kRandom:
      return "random";
    case SearcherName::kAdaptiveAsha:
      return "adaptive_asha";
  }
  return "single";
}

const char* AshaModeText(AshaMode mode) {
  switch (mode) {
    case AshaMode::kAggressive:
      return "aggressive";
    case AshaMode::kStandard:
      return "standard";
    case AshaMode::kConservative:
      return "conservative";
  }
  return "standard";
}

Result<int64_t> LengthToBatches(const Length& length, int64_t global_batch_size,
                                int64_t records_per_epoch) {
  if (length.value < 0) return Status::InvalidArgument("a length cannot be negative");
  if (length.unit == LengthUnit::kBatches) return length.value;
  if (global_batch_size <= 0) {
    return Status::InvalidArgument(std::string("a length in ") + LengthUnitName(length.unit) +
                                   " needs a positive global_batch_size");
  }
  int64_t records = length.value;
  if (length.unit == LengthUnit::kEpochs) {
    if (records_per_epoch <= 0) {
      return Status::InvalidArgument("a length in epochs needs a positive records_per_epoch");
    }
    if (records > std::numeric_limits<int64_t>::max() / records_per_epoch) {
      return Status::InvalidArgument("a length of " + std::to_string(length.value) +
                                     " epochs is too long");
    }
    records *= records_per_epoch;
  }
  return records / global_batch_size + (records % global_batch_size != 0 ? 1 : 0);
}

Result<int64_t> LengthInBatches(const ExperimentConfig& config, const Length& length) {
  return LengthToBatches(length, config.global_batch_size.value_or(0), config.records_per_epoch);
}

void SetExperimentSeed(ExperimentConfig& config, uint32_t seed) {
  config.experiment_seed = seed;
  config.effective["reproducibility"]["experiment_seed"] = seed;
}

Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text) {
  // yaml-cpp reports malformed documents (and odd ones: bad aliases, deep nesting) by throwing.
  try {
    return ParseRoot(YAML::Load(yaml_text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("line " +
                                   std::to_string(e.mark.is_null() ? 1 : e.mark.line + 1) +
                                   ": not valid YAML: " + e.msg);
  }
}

std::string CheckpointDirectory(const ExperimentConfig& config) {
  if (!config.checkpoint_storage) return "";
  const auto& storage = *config.checkpoint_storage;
  if (!storage.storage_path || storage.storage_path->empty()) return storage.host_path;
  if ((*storage.storage_path)[0] == '/') return *storage.storage_path;
  return storage.host_path + "/" + *storage.storage_path;
}

}  // namespace cairn::experiments
