// The experiments projection: experiments, their trials, each trial's completed workloads and
// the checkpoints, folded from the experiment events and the task events of trials' runs. Ids
// in keys are 20-digit zero-padded decimals, so that byte order is numeric order:
//   "experiment/<experiment_id>"          -> ExperimentView
//   "job/<job_id>"                        -> experiment id (JobQueueChanged names a job)
//   "trial/<trial_id>"                    -> TrialView (an experiment lists its trial ids)
//   "task/<task_id>"                      -> trial id of a trial's run (task events name tasks)
//   "workload/<trial_id>/<offset>"        -> WorkloadView
//   "checkpoint/<uuid>"                   -> CheckpointView
//   "experiment-checkpoint/<experiment_id>/<trial_id>/<offset>"    -> checkpoint uuid
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kExperimentsProjector = "experiments";

class ExperimentProjector : public Projector {
 public:
  const std::string& name() const override { return kExperimentsProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::ExperimentView>> ReadExperiment(ViewReader& reader,
                                                            int64_t experiment_id);
// Every experiment, by id.
Result<std::vector<views::ExperimentView>> ReadExperiments(ViewReader& reader);
Result<std::optional<views::TrialView>> ReadTrial(ViewReader& reader, int64_t trial_id);
// The experiment's trials, by id.
Result<std::vector<views::TrialView>> ReadTrials(ViewReader& reader, int64_t experiment_id);
// The trial's completed workloads, in report order.
Result<std::vector<views::WorkloadView>> ReadWorkloads(ViewReader& reader, int64_t trial_id);
Result<std::optional<views::CheckpointView>> ReadCheckpointView(ViewReader& reader,
                                                                const std::string& uuid);
// The experiment's checkpoints (trial_id 0) or one trial's, by trial id and then in save order;
// deleted ones included (state DELETED).
Result<std::vector<views::CheckpointView>> ReadCheckpointViews(ViewReader& reader,
                                                               int64_t experiment_id,
                                                               int64_t trial_id);

}  // namespace cairn::projections
