#include "projections/projector.h"

#include <algorithm>

#include "events/epoch_fence.h"
#include "projections/agent_projector.h"
#include "projections/allocation_projector.h"
#include "projections/experiment_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/metric_series_projector.h"
#include "projections/pai_projector.h"
#include "projections/pool_projector.h"
#include "projections/registry_projector.h"
#include "projections/task_order_projector.h"
#include "projections/task_projector.h"
#include "projections/template_projector.h"
#include "projections/tenancy_projector.h"
#include "projections/user_projector.h"
#include "projections/utilization_projector.h"
#include "projections/webhook_projector.h"
#include "projections/writer_projector.h"

namespace cairn::projections {

const std::vector<std::string>& ProjectorNames() {
  static const std::vector<std::string> kNames = {
      kTasksProjector,       kAgentsProjector,    kJobQueueProjector,    kExperimentsProjector,
      kPoolsProjector,       kTemplatesProjector, kWritersProjector,     kUsersProjector,
      kTenancyProjector,     kTaskOrderProjector, kRegistryProjector,    kPaiProjector,
      kAllocationsProjector, kWebhooksProjector,  kUtilizationProjector, kMetricSeriesProjector};
  return kNames;
}

Result<std::unique_ptr<Projector>> MakeProjector(const std::string& name) {
  if (name == kTasksProjector) return std::unique_ptr<Projector>(new TaskProjector());
  if (name == kAgentsProjector) return std::unique_ptr<Projector>(new AgentProjector());
  if (name == kJobQueueProjector) return std::unique_ptr<Projector>(new JobQueueProjector());
  if (name == kExperimentsProjector) return std::unique_ptr<Projector>(new ExperimentProjector());
  if (name == kPoolsProjector) return std::unique_ptr<Projector>(new PoolProjector());
  if (name == kTemplatesProjector) return std::unique_ptr<Projector>(new TemplateProjector());
  if (name == kWritersProjector) return std::unique_ptr<Projector>(new WriterProjector());
  if (name == kUsersProjector) return std::unique_ptr<Projector>(new UserProjector());
  if (name == kTenancyProjector) return std::unique_ptr<Projector>(new TenancyProjector());
  if (name == kTaskOrderProjector) return std::unique_ptr<Projector>(new TaskOrderProjector());
  if (name == kRegistryProjector) return std::unique_ptr<Projector>(new RegistryProjector());
  if (name == kPaiProjector) return std::unique_ptr<Projector>(new PaiProjector());
  if (name == kWebhooksProjector) return std::unique_ptr<Projector>(new WebhookProjector());
  if (name == kMetricSeriesProjector) {
    return std::unique_ptr<Projector>(new MetricSeriesProjector());
  }
  if (name == kUtilizationProjector) {
    return std::unique_ptr<Projector>(new UtilizationProjector());
  }
  if (name == kAllocationsProjector) {
    return std::unique_ptr<Projector>(new AllocationProjector());
  }
  std::string known;
  for (const auto& projector : ProjectorNames()) known += (known.empty() ? "" : ", ") + projector;
  return Status::InvalidArgument("unknown projection '" + name + "' (known: " + known + ")");
}

Status ApplyEvent(const Projector& projector, const Envelope& event, ViewStore& store,
                  views::ProjectorCheckpoint& checkpoint) {
  if (event.offset() != checkpoint.next_offset()) {
    return Status::Internal(projector.name() + ": expected the event at offset " +
                            std::to_string(checkpoint.next_offset()) + ", got " +
                            std::to_string(event.offset()));
  }
  checkpoint.set_next_offset(event.offset() + 1);
  checkpoint.set_max_event_time_unix_micros(
      std::max(checkpoint.max_event_time_unix_micros(), event.time_unix_micros()));
  EpochFence fence(checkpoint.newest_epoch());
  switch (fence.Admit(event)) {
    case EpochFence::Verdict::kFenced:
      return Status::Ok();
    case EpochFence::Verdict::kClaim:
      checkpoint.set_newest_epoch(fence.newest_epoch());
      return projector.OnEpochClaimed(event, store);
    case EpochFence::Verdict::kFact:
      break;
  }
  return projector.Apply(event, store);
}

Result<views::ProjectorCheckpoint> ReadCheckpoint(ViewReader& reader) {
  views::ProjectorCheckpoint checkpoint;
  CAIRN_RETURN_IF_ERROR(GetMessage(reader, kCheckpointKey, &checkpoint).status());
  return checkpoint;
}

}  // namespace cairn::projections
