// The searcher and hyperparameter sections of an experiment configuration.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "commands/experiments/experiment_config_parts.h"

namespace cairn::experiments::config_parts {

Result<SearcherName> ReadSearcherName(const Field& field);

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
  if (name == "pbt") return SearcherName::kPbt;
  for (const char* other :
       {"async_halving", "sync_halving", "adaptive", "adaptive_simple", "custom"}) {
    if (name == other) {
      return Status::NotSupported(fields::Where(field) + ": the " + name +
                                  " searcher is not supported yet; use single, grid, random, "
                                  "adaptive_asha or pbt");
    }
  }
  return Invalid(field, "unknown searcher '" + name +
                            "'; expected single, grid, random, adaptive_asha or pbt");
}

// pbt's own fields, every one required as in Determined's schema.
Status ParsePbt(const MapFields& fields, SearcherConfig& s) {
  CAIRN_ASSIGN_OR_RETURN(Field population, fields.Require("population_size", "population_size: 8"));
  CAIRN_ASSIGN_OR_RETURN(s.population_size, ReadSmallInt(population, 1, kMaxTrials));
  CAIRN_ASSIGN_OR_RETURN(Field rounds, fields.Require("num_rounds", "num_rounds: 4"));
  CAIRN_ASSIGN_OR_RETURN(s.num_rounds, ReadSmallInt(rounds, 1, kMaxTrials));
  CAIRN_ASSIGN_OR_RETURN(Field length,
                         fields.Require("length_per_round", "length_per_round: {batches: 200}"));
  CAIRN_ASSIGN_OR_RETURN(s.length_per_round, ReadLength(length, 1));
  if (s.length_per_round.value > (kOpenEndedBatches - 1) / s.num_rounds) {
    return Invalid(length, "length_per_round times num_rounds is too long");
  }
  CAIRN_ASSIGN_OR_RETURN(
      Field replace,
      fields.Require("replace_function", "replace_function: {truncate_fraction: 0.5}"));
  CAIRN_ASSIGN_OR_RETURN(MapFields replace_fields,
                         MapFields::Read(replace, "a map like {truncate_fraction: 0.5}"));
  CAIRN_RETURN_IF_ERROR(
      replace_fields.Check({"truncate_fraction"}, {}, "not a field of replace_function"));
  CAIRN_ASSIGN_OR_RETURN(Field truncate,
                         replace_fields.Require("truncate_fraction", "truncate_fraction: 0.5"));
  // At most half: the clones of the best n replace the worst n, which must be other trials.
  CAIRN_ASSIGN_OR_RETURN(s.truncate_fraction, fields::ReadNumberIn(truncate, 0, 0.5));
  CAIRN_ASSIGN_OR_RETURN(
      Field explore,
      fields.Require("explore_function",
                     "explore_function: {resample_probability: 0.2, perturb_factor: 0.2}"));
  CAIRN_ASSIGN_OR_RETURN(
      MapFields explore_fields,
      MapFields::Read(explore, "a map like {resample_probability: 0.2, perturb_factor: 0.2}"));
  CAIRN_RETURN_IF_ERROR(explore_fields.Check({"resample_probability", "perturb_factor"}, {},
                                             "not a field of explore_function"));
  CAIRN_ASSIGN_OR_RETURN(
      Field resample, explore_fields.Require("resample_probability", "resample_probability: 0.2"));
  CAIRN_ASSIGN_OR_RETURN(s.resample_probability, fields::ReadNumberIn(resample, 0, 1));
  CAIRN_ASSIGN_OR_RETURN(Field perturb,
                         explore_fields.Require("perturb_factor", "perturb_factor: 0.2"));
  CAIRN_ASSIGN_OR_RETURN(s.perturb_factor, fields::ReadNumberIn(perturb, 0, 1));
  // Every trial the search will make: the population, then as many clones as it replaces each
  // round but the last.
  const int64_t replaced = PbtReplaced(s, s.population_size);
  if (s.population_size + replaced * (s.num_rounds - 1) > kMaxTrials) {
    return Invalid(rounds, "population_size " + std::to_string(s.population_size) + " with " +
                               std::to_string(replaced) + " replaced in each of " +
                               std::to_string(s.num_rounds) + " rounds makes more than " +
                               std::to_string(kMaxTrials) + " trials");
  }
  // The whole search's length, for what reads max_length (progress, Determined's package).
  s.max_length = Length{s.length_per_round.unit, s.length_per_round.value * s.num_rounds};
  s.max_trials = s.population_size;
  s.max_concurrent_trials = 0;
  return Status::Ok();
}

Result<SearcherConfig> ParseSearcher(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields,
                         MapFields::Read(field, "a map like {name: single, metric: ...}"));
  SearcherConfig s;
  CAIRN_ASSIGN_OR_RETURN(Field name_field, fields.Require("name", "name: single"));
  CAIRN_ASSIGN_OR_RETURN(s.name, ReadSearcherName(name_field));
  std::set<std::string> known = {"name",       "metric",      "smaller_is_better",
                                 "max_length", "time_metric", "max_time"};
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
    case SearcherName::kPbt:
      // Its rounds are its length: no max_length, max_time or time_metric.
      known = {"name",       "metric",           "smaller_is_better", "population_size",
               "num_rounds", "length_per_round", "replace_function",  "explore_function"};
      break;
  }
  known.insert({"source_trial_id", "source_checkpoint_uuid"});
  const std::vector<Refused> refused = {
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
  if (auto f = fields.Get("source_trial_id"); f && !f->node.IsNull()) {
    CAIRN_ASSIGN_OR_RETURN(int64_t trial_id, ReadInt(*f, 1, std::numeric_limits<int64_t>::max()));
    s.source_trial_id = trial_id;
  }
  if (auto f = fields.Get("source_checkpoint_uuid"); f && !f->node.IsNull()) {
    CAIRN_ASSIGN_OR_RETURN(std::string uuid, ReadString(*f, "a checkpoint's uuid"));
    if (uuid.empty()) return Invalid(*f, "must not be empty");
    s.source_checkpoint_uuid = uuid;
  }
  if (s.name == SearcherName::kPbt) {
    CAIRN_RETURN_IF_ERROR(ParsePbt(fields, s));
    return s;
  }
  if (auto f = fields.Get("max_length")) {
    CAIRN_ASSIGN_OR_RETURN(s.max_length, ReadLength(*f, 1));
    s.max_length_given = true;
  }
  auto time_metric = fields.Get("time_metric");
  auto max_time = fields.Get("max_time");
  if (time_metric.has_value() != max_time.has_value()) {
    return Invalid(time_metric ? *time_metric : *max_time,
                   "max_time and time_metric go together: the searcher compares max_time with "
                   "the time_metric value of each validation");
  }
  if (time_metric) {
    CAIRN_ASSIGN_OR_RETURN(s.time_metric, ReadString(*time_metric, "a metric name"));
    if (s.time_metric.empty()) return Invalid(*time_metric, "must not be empty");
    CAIRN_ASSIGN_OR_RETURN(int64_t units, ReadInt(*max_time, 1, kOpenEndedBatches - 1));
    s.max_time = units;
    // The searcher counts in the time metric's units from here on.
    s.max_length = Length{LengthUnit::kBatches, units};
  } else if (!s.max_length_given) {
    if (s.name == SearcherName::kAdaptiveAsha) {
      return Invalid(field,
                     "adaptive_asha needs a length: max_time and time_metric (e.g. max_time: 100, "
                     "time_metric: batches), or max_length: {batches: N}");
    }
    s.open_ended = true;
    s.max_length = Length{LengthUnit::kBatches, kOpenEndedBatches};
  }

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
      Field item = fields::Element(*f, element, index++);
      CAIRN_ASSIGN_OR_RETURN(int rungs, ReadSmallInt(item, 1, 64));
      s.bracket_rungs.push_back(rungs);
    }
  }
  return s;
}

}  // namespace cairn::experiments::config_parts
