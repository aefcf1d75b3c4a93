// The utilization projection: the cluster's slots (total and used) and its queue (tasks waiting
// for slots) over time, a sample per event that changed them, for the web UI's chart and GET
// /api/v1/history/utilization. Keys:
//   "now"                               -> UtilizationSample, the counts after the latest change
//   "sample/<time:8><offset:8>"          -> UtilizationSample after the event at that offset, in
//                                          time order (envelope times, sign bit flipped)
//   "agent/<agent_id>"                  -> UtilizationAgent: its slots, while known
//   "task/<task_id>"                    -> UtilizationTask, while the task is live
// The counts, as docs/events.md ("Utilization") defines them for anyone folding the log:
//   slots_total   Σ slot_count of connected agents (AgentRegistered adds, AgentDisconnected of that
//                 incarnation removes);
//   slots_used    Σ slots of live allocations (AllocationAssigned adds each part's slot ids; a
//                 gang's AllocationPartExited, AllocationReleased and TaskExited take them off);
//   tasks_waiting live tasks, not held, holding no allocation (TaskSubmitted and AllocationReleased
//                 add one, AllocationAssigned and TaskExited take it off; TaskHeld moves a task
//                 holding nothing out of or back into the queue).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kUtilizationProjector = "utilization";

class UtilizationProjector : public Projector {
 public:
  const std::string& name() const override { return kUtilizationProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// One point of a window cut into equal steps: the counts at the step's end (every event at or
// before it folded) and the highest counts within the step (start, end].
struct UtilizationPoint {
  int64_t end_unix_micros = 0;
  views::UtilizationSample at_end;
  int32_t peak_slots_used = 0;
  int32_t peak_tasks_waiting = 0;
};

struct UtilizationRead {
  std::vector<UtilizationPoint> points;
  // The counts at the window's start (the latest sample at or before it; zeros before any).
  // Steps after the latest change carry the counts as they stand.
  views::UtilizationSample at_start;
};

// (from, to] in `steps` equal steps (to - from must be at least `steps` microseconds). Reads the
// one sample before the window and the samples inside it, nothing else.
Result<UtilizationRead> ReadUtilization(ViewReader& reader, int64_t from_unix_micros,
                                        int64_t to_unix_micros, int steps);

}  // namespace cairn::projections
