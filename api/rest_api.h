// Cairn's REST API: Determined's /api/v1 shapes (see shared/reference/determined-rest.md) so the
// `det` CLI works unchanged, plus Cairn's own endpoints (event tail, agent protocol in
// agent/PROTOCOL.md). Reads come from projections, except what must be the scheduler's own
// view: the resource pools (the recorded configuration and the agents' capacity) and a live
// task's explanation (commands/scheduler/explain.h), read from the decision state. Writes become
// commands for the single writer and answer once their events are durable, with the offset in
// the `Cairn-Offset` header. Any read waits until the projections reached `?minOffset=N` (or
// header `Cairn-Min-Offset`).
#pragma once

#include <atomic>
#include <string>

#include "api/auth.h"
#include "api/context_store.h"
#include "api/task_log_store.h"
#include "events/event_log.h"
#include "master/agent_heartbeats.h"
#include "master/decision_loop.h"
#include "master/master_config.h"
#include "net/http_types.h"
#include "projections/projections.h"

namespace cairn {

struct RestApiDeps {
  const MasterConfig* config = nullptr;
  EventLog* log = nullptr;
  commands::DecisionLoop* loop = nullptr;
  Projections* projections = nullptr;
  TaskLogStore* task_logs = nullptr;
  const Authenticator* auth = nullptr;
  AgentHeartbeats* heartbeats = nullptr;
  ContextStore* contexts = nullptr;  // experiments' model definitions
  // Where checkpoints go when an experiment names no checkpoint_storage (shared_fs host_path).
  std::string default_checkpoint_dir;
  std::string master_id;
  const std::atomic<bool>* stopping = nullptr;  // streams end when it turns true
};

// Thread-safe: every method may run on many connection threads at once.
class RestApi {
 public:
  explicit RestApi(RestApiDeps deps) : deps_(std::move(deps)) {}
  http::Response Handle(const http::Request& request);

 private:
  RestApiDeps deps_;
};

// The Determined CLI compares this with its own version; we speak its 0.38 API.
inline constexpr const char* kDeterminedApiVersion = "0.38.1";
inline constexpr const char* kCairnVersion = "0.1.0";

}  // namespace cairn
