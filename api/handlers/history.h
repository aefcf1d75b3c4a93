// Time travel over REST (admins only: the past holds every workspace's work): the cluster as it
// was after a given offset, or at a given time, from the newest snapshot before that moment plus
// the log's tail (projections/snapshots.h).
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/history/state?at=OFFSET | ?time=RFC3339 [&limit=N: the queue's first N jobs, 100 by
// default, 0 = all; "jobQueueTotal" counts them all] [&experimentLimit=N: the first N experiments
// not ended, 0 (the default) = all; "experimentsTotal" counts them all]
// -> {"asOf": {"nextOffset", "lastEventTime"}, "snapshot": {"nextOffset"} | null,
//     "jobQueue": [...], "tasks": [the queue's jobs' live tasks], "experiments": [not ended],
//     "agents": [...], "models": [...], "nextOffset"}
net::Response GetHistoryState(Call& call);

}  // namespace cairn::api
