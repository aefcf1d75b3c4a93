// Renders the cluster state folded by `cairn replay state`: one JSON document or text tables.
#pragma once

#include <ostream>

#include "projections/projections.h"

namespace cairn::replay {

// {"nextOffset": N, "tasks": [...], "agents": [...], "jobQueue": [...], "models": [...]} (each
// model with its "modelVersions"), views in the REST layer's JSON style (camelCase, enums by
// name).
Status PrintStateJson(ProjectionState& state, std::ostream& out);

// Four aligned tables: tasks, agents, job queue, models (with their versions' checkpoints).
Status PrintStateTable(ProjectionState& state, std::ostream& out);

}  // namespace cairn::replay
