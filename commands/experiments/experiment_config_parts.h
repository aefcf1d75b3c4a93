// Internal to the experiment configuration's parser (experiment_config.cpp): the searcher and
// hyperparameter sections, parsed in experiment_config_searcher.cpp.
#pragma once

#include "base/fields.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::experiments::config_parts {

// What both halves of the parser read with (base/fields.h).
using fields::Field;
using fields::Invalid;
using fields::JsonOf;
using fields::MapFields;
using fields::ReadBool;
using fields::ReadInt;
using fields::ReadNumber;
using fields::ReadSmallInt;
using fields::ReadString;
using fields::ReadStringList;
using fields::Refused;
using fields::Unsupported;
using nlohmann::json;

// Caps that keep a typo from turning into an unbounded allocation in the master.
inline constexpr int kMaxTrials = 100000;

// A length: exactly one of {batches: N}, {records: N}, {epochs: N}, each at least `min_value`.
Result<Length> ReadLength(const fields::Field& field, int64_t min_value);
// `hyperparameters:`: names to const/int/double/log/categorical values or nested spaces.
Result<HyperparameterSpace> ParseSpace(const fields::Field& field, bool grid);
// `searcher:`: single, grid, random or adaptive_asha with their settings.
Result<SearcherConfig> ParseSearcher(const fields::Field& field);

}  // namespace cairn::experiments::config_parts
