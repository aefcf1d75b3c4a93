// Jobs of the queue in Determined's REST shape (v1Job), with Cairn's queue facts under "cairn".
// Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "views.pb.h"

namespace cairn::api {

// Determined's job types: a trial's job is its experiment ("TYPE_EXPERIMENT").
std::string JobTypeName(events::TaskType type);
// "STATE_QUEUED", "STATE_SCHEDULED", "STATE_SCHEDULED_BACKFILLED".
std::string JobStateName(views::JobState state);

// `user_id`: the id of the job's user.
nlohmann::json JobJson(const views::JobView& job, int user_id);

}  // namespace cairn::api
