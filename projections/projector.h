// The projector contract: a pure fold of events into views through a ViewStore, plus the
// read-side fencing every projector shares. Projectors do no I/O and read no clock.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "events.pb.h"
#include "projections/view_store.h"
#include "views.pb.h"

namespace cairn::projections {

using events::Envelope;

class Projector {
 public:
  virtual ~Projector() = default;
  // Stable name; also the RocksDB column family of the projector's views.
  virtual const std::string& name() const = 0;
  // Folds one event into the views. Events about unknown ids and payloads the projector does
  // not know are ignored. Errors come only from the store.
  virtual Status Apply(const Envelope& event, ViewStore& store) const = 0;
  // Folds a WriterEpochClaimed (bookkeeping that ApplyEvent keeps out of Apply); most projectors
  // have no use for it.
  virtual Status OnEpochClaimed(const Envelope& /*claim*/, ViewStore& /*store*/) const {
    return Status::Ok();
  }
};

// "tasks", "agents", "job_queue", "experiments", "pools", "templates", "writers", "users",
// "tenancy", "task_order", "registry", "openpai", "allocations", "webhooks", "utilization",
// "metric_series", in that order.
const std::vector<std::string>& ProjectorNames();

// The projector with this name, or InvalidArgument.
Result<std::unique_ptr<Projector>> MakeProjector(const std::string& name);

// Applies `event` unless it is fenced (events/epoch_fence.h),
// advancing `checkpoint` past it either way. The event must be the one at
// checkpoint.next_offset(); the caller persists the checkpoint with the view changes.
Status ApplyEvent(const Projector& projector, const Envelope& event, ViewStore& store,
                  views::ProjectorCheckpoint& checkpoint);

// The checkpoint stored in `reader`, or an empty one (offset 0, epoch 0) when there is none.
Result<views::ProjectorCheckpoint> ReadCheckpoint(ViewReader& reader);

}  // namespace cairn::projections
