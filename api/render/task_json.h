// Tasks in Determined's REST shapes (grpc-gateway JSON), with Cairn's own facts under "cairn":
// commands (v1Command), tasks (v1Task), and the allocation parts they run on. Pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "events/redaction.h"
#include "views.pb.h"

namespace cairn::api {

// Determined's task state names ("STATE_QUEUED", ...), shared by commands, shells, notebooks and
// allocations.
std::string NtscState(const views::TaskView& task);
// Whether `name` is one NtscState gives (STATE_UNSPECIFIED is not a state to filter by).
bool IsNtscStateName(const std::string& name);

// The task's configuration as recorded, with the resources the decider resolved (pool,
// priority) and job queue updates changed.
nlohmann::json ConfigOf(const views::TaskView& task, Audience audience);

// The v1Command shape.
// `user_id`: the id of the task's user (views name users, Determined shows ids too).
nlohmann::json CommandJson(const views::TaskView& task, int user_id);

// The agents and slots of the task's current allocation: one entry per agent (several for a
// gang), parts that already ended left out.
std::vector<std::pair<std::string, std::vector<int32_t>>> AllocationAgents(
    const views::TaskView& task);

// The v1Task shape used by `det shell/notebook start` polling and `det task`, with Cairn's
// account of why the task is where it is.
nlohmann::json TaskJson(const views::TaskView& task);

}  // namespace cairn::api
