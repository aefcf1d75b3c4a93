// The experiments projection's queries (experiment_projector.h), over the keys of
// experiment_keys.h.
#include <algorithm>

#include "projections/experiment_keys.h"
#include "projections/experiment_projector.h"
#include "projections/view_reads.h"

namespace cairn::projections {

using namespace experiment_keys;

Result<std::optional<views::ExperimentView>> ReadExperiment(ViewReader& reader,
                                                            int64_t experiment_id) {
  if (experiment_id <= 0) return std::optional<views::ExperimentView>();
  return ReadView<views::ExperimentView>(reader, ExperimentKey(experiment_id));
}

Result<std::vector<views::ExperimentView>> ReadExperiments(ViewReader& reader) {
  return ScanViews<views::ExperimentView>(reader, kExperimentPrefix);
}

Result<std::optional<views::TrialView>> ReadTrial(ViewReader& reader, int64_t trial_id) {
  if (trial_id <= 0) return std::optional<views::TrialView>();
  return ReadView<views::TrialView>(reader, TrialKey(trial_id));
}

Result<std::vector<views::TrialView>> ReadTrials(ViewReader& reader, int64_t experiment_id) {
  CAIRN_ASSIGN_OR_RETURN(auto experiment, ReadExperiment(reader, experiment_id));
  std::vector<views::TrialView> trials;
  if (!experiment) return trials;
  std::vector<int64_t> ids(experiment->trial_ids().begin(), experiment->trial_ids().end());
  std::sort(ids.begin(), ids.end());
  for (int64_t trial_id : ids) {
    CAIRN_ASSIGN_OR_RETURN(bool exists,
                           GetMessage(reader, TrialKey(trial_id), &trials.emplace_back()));
    if (!exists) {
      return Status::Corruption("experiments: experiment " + std::to_string(experiment_id) +
                                " lists missing trial " + std::to_string(trial_id));
    }
  }
  return trials;
}

Result<std::vector<views::WorkloadView>> ReadWorkloads(ViewReader& reader, int64_t trial_id) {
  if (trial_id <= 0) return std::vector<views::WorkloadView>();
  return ScanViews<views::WorkloadView>(reader, WorkloadPrefix(trial_id));
}

Result<std::optional<views::CheckpointView>> ReadCheckpointView(ViewReader& reader,
                                                                const std::string& uuid) {
  if (uuid.empty()) return std::optional<views::CheckpointView>();
  return ReadView<views::CheckpointView>(reader, NameKey(kCheckpointPrefix, uuid));
}

Result<std::vector<views::CheckpointView>> ReadCheckpointViews(ViewReader& reader,
                                                               int64_t experiment_id,
                                                               int64_t trial_id) {
  std::vector<views::CheckpointView> checkpoints;
  if (experiment_id <= 0 || trial_id < 0) return checkpoints;
  std::string prefix = ExperimentCheckpointPrefix(experiment_id);
  if (trial_id > 0) {
    AppendId(&prefix, static_cast<uint64_t>(trial_id));
    prefix.push_back('/');
  }
  std::vector<std::string> uuids;
  CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view, std::string_view value) {
    uuids.emplace_back(value);
    return true;
  }));
  for (const auto& uuid : uuids) {
    const std::string key = NameKey(kCheckpointPrefix, uuid);
    CAIRN_ASSIGN_OR_RETURN(bool exists, GetMessage(reader, key, &checkpoints.emplace_back()));
    if (!exists) {
      return Status::Corruption("experiments: checkpoint index names missing checkpoint " + uuid);
    }
  }
  return checkpoints;
}

}  // namespace cairn::projections
