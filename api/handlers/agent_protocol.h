// What cairn-agent processes send the master (agent/PROTOCOL.md): registration, heartbeats, the
// start and exit of their allocations, and their tasks' output.
#pragma once

#include "api/call.h"

namespace cairn::api {

// The files the allocation's task was submitted with, for its agent.
net::Response AllocationFiles(
    Call& call);  // GET /api/v1/agents/{id}/allocations/{allocationId}/files
net::Response RegisterAgent(Call& call);      // POST /api/v1/agents/{id}/register
net::Response AgentHeartbeat(Call& call);     // POST /api/v1/agents/{id}/heartbeat
net::Response AllocationStarted(Call& call);  // POST /api/v1/allocations/{id}/started
net::Response AllocationExited(Call& call);
// POST /api/v1/allocations/{id}/ready {taskId, agentId, serviceHost, servicePort, serviceUser}:
// an interactive task's service answers.
net::Response AllocationReady(Call& call);  // POST /api/v1/allocations/{id}/exited
net::Response PostTaskLogs(Call& call);     // POST /api/v1/task/logs

}  // namespace cairn::api
