// Internal to the experiments projection: its keys (listed in experiment_projector.h), shared by
// the fold and its queries.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "views.pb.h"

namespace cairn::projections::experiment_keys {

constexpr std::string_view kExperimentPrefix = "experiment/";
constexpr std::string_view kJobPrefix = "job/";
constexpr std::string_view kTrialPrefix = "trial/";
constexpr std::string_view kTaskPrefix = "task/";
constexpr std::string_view kWorkloadPrefix = "workload/";
constexpr std::string_view kCheckpointPrefix = "checkpoint/";
constexpr std::string_view kExperimentCheckpointPrefix = "experiment-checkpoint/";

// 20 digits hold any uint64, so byte order of padded ids is numeric order.
constexpr size_t kIdDigits = 20;

inline void AppendId(std::string* key, uint64_t id) {
  char digits[kIdDigits];
  auto [end, error] = std::to_chars(digits, digits + kIdDigits, id);
  (void)error;  // cannot overflow: kIdDigits holds every uint64
  key->append(kIdDigits - static_cast<size_t>(end - digits), '0');
  key->append(digits, end);
}

inline std::string IdKey(std::string_view prefix, uint64_t id) {
  std::string key(prefix);
  AppendId(&key, id);
  return key;
}

inline std::string NameKey(std::string_view prefix, const std::string& name) {
  std::string key(prefix);
  key += name;
  return key;
}

inline std::string ExperimentKey(int64_t experiment_id) {
  return IdKey(kExperimentPrefix, static_cast<uint64_t>(experiment_id));
}

inline std::string TrialKey(int64_t trial_id) {
  return IdKey(kTrialPrefix, static_cast<uint64_t>(trial_id));
}

inline std::string WorkloadPrefix(int64_t trial_id) {
  std::string key = IdKey(kWorkloadPrefix, static_cast<uint64_t>(trial_id));
  key.push_back('/');
  return key;
}

inline std::string WorkloadKey(int64_t trial_id, uint64_t offset) {
  std::string key = WorkloadPrefix(trial_id);
  AppendId(&key, offset);
  return key;
}

inline std::string ExperimentCheckpointPrefix(int64_t experiment_id) {
  std::string key = IdKey(kExperimentCheckpointPrefix, static_cast<uint64_t>(experiment_id));
  key.push_back('/');
  return key;
}

inline std::string ExperimentCheckpointKey(const views::CheckpointView& checkpoint) {
  std::string key = ExperimentCheckpointPrefix(checkpoint.experiment_id());
  AppendId(&key, static_cast<uint64_t>(checkpoint.trial_id()));
  key.push_back('/');
  AppendId(&key, checkpoint.saved_offset());
  return key;
}

}  // namespace cairn::projections::experiment_keys
