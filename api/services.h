// What the REST API works with, handed to it by the master's composition root (master/): the
// write side (commands in, outcomes out), the read side (projections and their queries), the
// log for event streams, task logs, stored contexts and identities. The API owns none of them.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "api/auth.h"
#include "base/sealed_secrets.h"
#include "commands/writer.h"
#include "events/context_store.h"
#include "events/event_log.h"
#include "events/task_log_store.h"
#include "projections/projections.h"

namespace cairn::api {

class RenderCache;

// Hears that an agent is alive (its heartbeats); the master turns silence into disconnects.
class AgentLiveness {
 public:
  virtual ~AgentLiveness() = default;
  virtual void Record(const std::string& agent_id) = 0;
};

// The master's identity and settings that answers show.
struct MasterFacts {
  std::string master_id;
  std::string cluster_name = "cairn";
  // Where checkpoints go when an experiment names no checkpoint_storage (shared_fs host_path).
  std::string default_checkpoint_dir;
  // master.yaml's checkpoint_storage (experiments::NormalizedCheckpointStorage); null = none.
  nlohmann::json default_checkpoint_storage;
  // How agents receive placements: "http" (the master's event stream) or "kafka".
  std::string placement_transport = "http";
  std::string kafka_brokers;
  std::string kafka_topic_prefix;
  // How long a login's session lasts (security.session_lifetime_hours).
  int64_t session_lifetime_micros = int64_t{7} * 24 * 3600 * 1'000'000;
  // Access tokens' lifespans (security.token.default_lifespan_days, max_lifespan_days).
  int64_t access_token_default_lifespan_micros = int64_t{30} * 24 * 3600 * 1'000'000;
  int64_t access_token_max_lifespan_micros = int64_t{30} * 24 * 3600 * 1'000'000;
  // The master's effective configuration, secrets masked (GET /api/v1/master/config).
  std::string config_json = "{}";
  // The web UI's folder (web/ of the source tree, or share/cairn/web where it is installed) and
  // the Chart.js file it plots with (Debian's libjs-chart.js), both from master.yaml's `web:`.
  std::string web_root;
  std::string chart_js_file;
  bool tls = false;  // served over HTTPS: cookies the master sets are Secure
  // OpenPAI jobs' PAI_DEFAULT_FS_URI (master.yaml openpai.default_fs_uri).
  std::string pai_default_fs_uri;
};

class BulkReadPool;

struct Services {
  MasterFacts facts;
  EventLog* log = nullptr;
  commands::Writer* writer = nullptr;
  Projections* projections = nullptr;  // every read of cluster state (queries.h)
  TaskLogStore* task_logs = nullptr;
  ContextStore* contexts = nullptr;  // experiments' model definitions
  AgentLiveness* liveness = nullptr;
  const std::atomic<bool>* stopping = nullptr;  // streams end when it turns true
  // GET /metrics's text (master/metrics.h); empty: the route answers "not supported".
  std::function<std::string()> metrics;
  // Where lists run (api/bulk_reads.h); null: on the connection's own thread.
  BulkReadPool* bulk_reads = nullptr;
  // Entities' rendered JSON, for lists assembled from pieces (api/render_cache.h); null: none.
  RenderCache* renders = nullptr;
  // What agents present (api/call.cpp checks it; allocations present tokens derived from it).
  // A secret: never logged or shown.
  std::string agent_token;
  // Opens the credentials the log keeps sealed (events/sealing.h), only where the master uses
  // them: object-store clients and a trial's description.
  SecretSealer sealer;
  // Hears the bytes the proxy moves for a notebook, shell or TensorBoard (and 0 when a request
  // starts): the master's idle watch measures idleness from it. May be empty.
  std::function<void(const std::string& task_id, size_t bytes)> on_proxy_traffic;
  // POST /api/v1/cleanup_logs: one log-retention sweep now, recorded by `actor`; the lines it
  // removed (master/log_retention.h). Empty: the route answers "not supported".
  std::function<Result<uint64_t>(const std::string& actor)> cleanup_logs;
  // POST /api/v1/webhooks/{id}/test: sends the webhook its test payload (master/webhook_shipper.h).
  // Empty: the route answers "not supported".
  std::function<Status(const events::WebhookCreated&)> test_webhook;
};

}  // namespace cairn::api
