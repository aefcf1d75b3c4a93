// What cairn-agent processes send the master (agent/PROTOCOL.md): registration, heartbeats, the
// start and exit of their allocations, and their tasks' output.
#pragma once

#include "api/call.h"

namespace cairn::api {

// The files the allocation's task was submitted with, for its agent.
http::Response AllocationFiles(
    Call& call);  // GET /api/v1/agents/{id}/allocations/{allocationId}/files
http::Response RegisterAgent(Call& call);      // POST /api/v1/agents/{id}/register
http::Response AgentHeartbeat(Call& call);     // POST /api/v1/agents/{id}/heartbeat
http::Response AllocationStarted(Call& call);  // POST /api/v1/allocations/{id}/started
http::Response AllocationExited(Call& call);
// POST /api/v1/allocations/{id}/ready {taskId, agentId, serviceHost, servicePort, serviceUser}:
// an interactive task's service answers.
http::Response AllocationReady(Call& call);  // POST /api/v1/allocations/{id}/exited
http::Response PostTaskLogs(Call& call);     // POST /api/v1/task/logs

}  // namespace cairn::api
