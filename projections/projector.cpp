#include "projections/projector.h"

#include <algorithm>

#include "projections/agent_projector.h"
#include "projections/experiment_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/task_projector.h"

namespace cairn::projections {

const std::vector<std::string>& ProjectorNames() {
  static const std::vector<std::string> kNames = {kTasksProjector, kAgentsProjector,
                                                  kJobQueueProjector, kExperimentsProjector};
  return kNames;
}

Result<std::unique_ptr<Projector>> MakeProjector(const std::string& name) {
  if (name == kTasksProjector) return std::unique_ptr<Projector>(new TaskProjector());
  if (name == kAgentsProjector) return std::unique_ptr<Projector>(new AgentProjector());
  if (name == kJobQueueProjector) return std::unique_ptr<Projector>(new JobQueueProjector());
  if (name == kExperimentsProjector) return std::unique_ptr<Projector>(new ExperimentProjector());
  return Status::InvalidArgument("unknown projection '" + name +
                                 "' (known: tasks, agents, job_queue, experiments)");
}

Status ApplyEvent(const Projector& projector, const Envelope& event, ViewStore& store,
                  views::ProjectorCheckpoint& checkpoint) {
  if (event.offset() != checkpoint.next_offset()) {
    return Status::Internal(projector.name() + ": expected the event at offset " +
                            std::to_string(checkpoint.next_offset()) + ", got " +
                            std::to_string(event.offset()));
  }
  checkpoint.set_next_offset(event.offset() + 1);
  // A writer fenced off by a newer master may still have appended; its events never happened.
  if (event.writer_epoch() < checkpoint.newest_epoch()) return Status::Ok();
  if (event.has_writer_epoch_claimed()) {
    checkpoint.set_newest_epoch(
        std::max(checkpoint.newest_epoch(), event.writer_epoch_claimed().epoch()));
    return Status::Ok();
  }
  return projector.Apply(event, store);
}

Result<views::ProjectorCheckpoint> ReadCheckpoint(ViewReader& reader) {
  views::ProjectorCheckpoint checkpoint;
  CAIRN_RETURN_IF_ERROR(GetMessage(reader, kCheckpointKey, &checkpoint).status());
  return checkpoint;
}

}  // namespace cairn::projections
