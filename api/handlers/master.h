// The master's identity: Determined's /info and /api/v1/master.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response Info(Call& call);        // GET /info
net::Response MasterInfo(Call& call);  // GET /api/v1/master
// Admins only: what the master runs with, and what it has been saying.
net::Response MasterConfigRoute(Call& call);  // GET /api/v1/master/config
net::Response MasterLogs(Call& call);         // GET /api/v1/master/logs[?offset=&limit=&follow=]
// PATCH /api/v1/master/config {config: {log: {level: LOG_LEVEL_*}}, fieldMask: {paths} | "a,b"}:
// the master's log level until it restarts (log.color is accepted and changes nothing: Cairn's
// lines have no colour). Cluster admins; recorded as MasterLogLevelChanged.
net::Response PatchMasterConfig(Call& call);

// POST /api/v1/cleanup_logs (det task cleanup-logs), admins -> {removedCount}: one sweep of log
// retention now (master/log_retention.h), recorded as the admin's.
net::Response CleanupLogsRoute(Call& call);

// The cluster message (det master cluster-message set|get|clear), cluster admins only; the
// active one is in GET /api/v1/master for everyone.
// PUT {message, startTime, endTime? | duration?: Go duration} -> {}
net::Response SetClusterMessageRoute(Call& call);
// GET -> {clusterMessage: {message, startTime, endTime, createdTime} | null}: the latest unless
// it has ended (one still to start included)
net::Response GetClusterMessageRoute(Call& call);
// DELETE -> {}: ends the current one now
net::Response ClearClusterMessageRoute(Call& call);
// GET /metrics: Prometheus's text format (any signed-in user: counts and latencies only, no
// names but pools' and projections').
net::Response Metrics(Call& call);

// The Determined CLI compares this with its own version; we speak its 0.38 API.
inline constexpr const char* kDeterminedApiVersion = "0.38.1";
inline constexpr const char* kCairnVersion = "0.1.0";

}  // namespace cairn::api
