// Renders the cluster state folded by `cairn replay state`: one JSON document or text tables.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "projections/projections.h"

namespace cairn::replay {

struct StateJsonOptions {
  // Only the live tasks (those of the queue's jobs) and the experiments not ended: the history's
  // tasks are many, and reading them all would cost the whole history.
  bool live_tasks_only = false;
  bool experiments = false;  // "experiments": [...]
  // At most this many of the queue's jobs from its head (0 = all), with "jobQueueTotal".
  size_t queue_limit = 0;
  // At most this many experiments, in id order (0 = all), with "experimentsTotal": only these are
  // rendered, which is most of a past read's cost when thousands have not ended.
  size_t experiment_limit = 0;
};

// The projections StateJson and PrintStateTable read (for PastProjections::Open).
const std::vector<std::string>& StateProjections();

// {"nextOffset": N, "tasks": [...], "agents": [...], "jobQueue": [...], "models": [...]} (each
// model with its "modelVersions"), views in the REST layer's JSON style (camelCase, enums by
// name). `next_offset`: every event below it is in `state`.
Result<nlohmann::json> StateJson(Queries& state, uint64_t next_offset,
                                 const StateJsonOptions& options);
Status PrintStateJson(Queries& state, uint64_t next_offset, std::ostream& out);

// Four aligned tables: tasks, agents, job queue, models (with their versions' checkpoints).
Status PrintStateTable(Queries& state, uint64_t next_offset, std::ostream& out);

}  // namespace cairn::replay
