// The master's configuration file (YAML). Errors name the file, the line and the field; a key
// Cairn does not know is an error, so a typo never silently falls back to a default.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "events.pb.h"
#include "events/event_log.h"
#include "net/http_server.h"

namespace cairn {

// The resource pools of a master whose configuration says nothing about them: one pool "default"
// (fair_share, best fit, 100 aux containers per agent) that is the default for compute and aux
// tasks, a 3600 s preemption grace period, source "defaults".
events::ResourcePoolsConfigured DefaultResourcePools();

struct MasterConfig {
  std::string listen_address = "127.0.0.1";
  uint16_t port = 8080;  // 0 picks a free port
  std::string data_dir;
  LogConfig log;  // log.data_dir is filled from data_dir
  std::string cluster_name = "cairn";
  double agent_timeout_seconds = 10;  // no heartbeat for this long -> AgentDisconnected
  // Determined's keys: a notebook or TensorBoard whose config sets no idle_timeout is ended
  // after this many idle seconds (master/idle_watch.h); 0 (a notebook's default) = never.
  int64_t notebook_timeout_seconds = 0;
  int64_t tensorboard_timeout_seconds = 300;
  // A model definition and its packages may total 96 MiB (base/document_limits.h), 128 MiB in
  // base64: the default leaves room for that and the rest of the request.
  size_t max_request_body_bytes = 136u << 20;
  // Connections one client address may hold (net/http_server.h): agents behind one NAT address
  // hold a few each, so a site with many needs more.
  size_t max_connections_per_address = net::Server::Options().max_connections_per_address;
  // `openpai:` OpenPAI jobs' PAI_DEFAULT_FS_URI (and so their default outputDir,
  // $PAI_DEFAULT_FS_URI/Output/$jobName). Empty: file://<data_dir>/pai-fs.
  std::string openpai_default_fs_uri;
  // `security:` (Determined's key names where it has them).
  struct Security {
    // The password of the built-in admin and determined users when the first start creates
    // them; empty keeps Determined's blank default (and the master warns at every start).
    // A secret: never logged.
    std::string initial_user_password;
    double session_lifetime_hours = 7 * 24;
    // `security.token`: access tokens' lifespan when `det token create` names none, and the
    // longest it may name (Determined's keys and defaults).
    struct Token {
      int default_lifespan_days = 30;
      int max_lifespan_days = 30;
    } token;
    // This many failed logins for one username within the window refuse further attempts
    // until the window passes; 0 turns throttling off.
    int max_failed_logins = 5;
    double failed_login_window_seconds = 300;
    // The token agents present (their --agent-token-file holds it). Empty: the master makes one
    // at its first start in <data_dir>/agent-token. A secret: never logged.
    std::string agent_token;
    // `security.tls`: serve HTTPS (TLS 1.2 or later) with this certificate and key, PEM files
    // (the certificate may be followed by intermediates). Both or neither; neither serves
    // plain HTTP. The master refuses to start when it cannot use them.
    struct Tls {
      std::string cert;
      std::string key;
    } tls;
    // `security.authz.type`: basic (Determined's open-source default: no roles; any user creates
    // work anywhere, owners and admins change it) or rbac (roles per workspace). UNSPECIFIED
    // when master.yaml does not say: EffectiveAuthz decides.
    events::AuthzType authz = events::AUTHZ_TYPE_UNSPECIFIED;
  } security;
  // `snapshots:` of the projections (projections/snapshots.h), in <data_dir>/snapshots: one each
  // time the applied offset passes a multiple of every_events (0 = none), the newest `keep` kept.
  // And of the write side (master/decision_snapshots.h), in <data_dir>/decision-snapshots: one
  // each write_side_every_events (0 = none), the newest two kept. A restart decodes the newest
  // and folds the log after it: the interval bounds that tail.
  struct Snapshots {
    // 50,000: a past state folds at most that many events after its snapshot (at 100,000 the
    // fold alone made time travel miss its target; docs/benchmarks.md, "Projections: snapshots
    // and compactions"), and 32 of them reach back as far as 16 did.
    uint64_t every_events = 50'000;
    // A restart decodes the newest write-side snapshot and folds at most this many events after
    // it: the interval, not the log's length, bounds the worst restart (docs/benchmarks.md,
    // "Restart"); a snapshot after the first is a delta of what changed, so a short interval
    // costs the writer little.
    uint64_t write_side_every_events = 25'000;
    // ...and on Kafka, unless master.yaml says otherwise: there a fold reads the log over the
    // network, several times slower an event, so the same bound on a restart needs a shorter
    // interval.
    static constexpr uint64_t kKafkaWriteSideEveryEvents = 5'000;
    // `write_side_copy`: how a write-side snapshot sees the state without stopping the writer.
    // "fold" (false, the default): a thread decodes the newest snapshot and folds the log on
    // into a second state; its price a second state's memory while it folds, and the fold's CPU.
    // "fork" (true): a forked child's copy-on-write view of the writer's own state; its memory
    // is the pages the master changes meanwhile, its price the fork's pause and page faults in
    // every thread of the master (master/decision_snapshots.h; docs/benchmarks.md).
    bool write_side_forks = false;
    int keep = 32;
    // `catch_up_bulk_mib`: the memory the projections may hold while catching up in bulk, far
    // behind the log (a first start, a new view layout, an old snapshot; projections/README.md).
    // 0 = a batch at a time, several times slower (docs/benchmarks.md, "Projections: memtables
    // and bulk loads"). 32 is EngineOptions' default.
    uint64_t catch_up_bulk_mib = 32;
  } snapshots;
  // `web:`: the web UI the master serves at "/". An empty root is web/ where it is installed
  // (<prefix>/share/cairn/web beside <prefix>/bin) or else the source tree's; chart_js is the
  // Chart.js file the UI plots with (Debian's libjs-chart.js), served at /ui/vendor/chart.js.
  struct Web {
    std::string root;
    std::string chart_js = "/usr/share/javascript/chart.js/chart.min.js";
  } web;
  // `checkpoint_storage:` (Determined's keys, experiments::NormalizedCheckpointStorage): the
  // storage of experiments whose config and workspace name none; null: shared_fs in
  // <data_dir>/checkpoints. Its credentials are secrets: never logged, masked when shown.
  nlohmann::json checkpoint_storage;
  // `retention_policy:` (Determined's keys): how many days an ended task's logs are kept when its
  // experiment's config sets none (-1: forever), and when the sweep runs (a duration like 24h or
  // a cron expression; empty: only `det master cleanup-logs`). master/log_retention.h.
  // Bounds on the logs' size (0: none): each task's log is trimmed to log_max_task_bytes of text,
  // oldest lines first, behind a marker line (events/task_log_store.h); and each sweep removes the
  // logs of the longest-ended tasks while all tasks' logs hold more than log_max_total_bytes.
  struct Retention {
    int log_retention_days = -1;
    std::string schedule;
    uint64_t log_max_task_bytes = uint64_t{1} << 30;
    uint64_t log_max_total_bytes = 0;
  } retention;
  // `webhooks:` (Determined's keys base_url and signing_key; master/webhook_shipper.h). An empty
  // signing_key: the master makes one at its first start in <data_dir>/webhook-signing-key
  // (kept, so signatures stay checkable across restarts). A secret: never logged.
  struct Webhooks {
    std::string base_url;
    std::string signing_key;
    int max_attempts = 5;
    double first_retry_seconds = 1;
    double max_retry_seconds = 60;
    double timeout_seconds = 10;
  } webhooks;
  // The effective pools: every pool's scheduler is fully resolved (type and fitting policy never
  // UNSPECIFIED), and both default pools name a configured pool.
  events::ResourcePoolsConfigured pools = DefaultResourcePools();
};

// The authorization model a master starts with: master.yaml's when it names one; otherwise the
// model the log holds (`in_log`, AuthorizationConfigured), so that only an explicit setting
// changes it; and for a log that holds none, basic (Determined's default) when the cluster is new
// (`log_has_users` false), rbac when the log was written before the setting existed, when roles
// were the only model: a silent switch would show every user everyone's work.
events::AuthzType EffectiveAuthz(events::AuthzType configured, events::AuthzType in_log,
                                 bool log_has_users);

// The effective configuration as JSON for `det master config` (GET /api/v1/master/config), in
// the YAML's key names, with Determined's MasterConfig keys its tools read (resource_manager,
// resource_pools as a list, checkpoint_storage, task_container_defaults, security.authz). Secrets
// (the initial password, the agent token, the TLS key's path) show as "********" when set.
std::string MasterConfigJson(const MasterConfig& config);

// Parses YAML text; `source_name` names it in errors and becomes pools.source.
//
// Pools come from either the current format (`resource_manager` + `resource_pools`) or the legacy
// one (top-level `scheduler`, read as one pool "default"), never both. A pool's own `scheduler:`
// block replaces the cluster-wide one all or nothing: unset fields take the scheduler defaults
// (fair_share, best, no preemption, default_priority 42), not the cluster-wide values. Features
// Cairn does not have (dynamic agents, heterogeneous fits, pod specs and networking among the
// task container defaults) are NotSupported errors naming the field; bad values are
// InvalidArgument.
Result<MasterConfig> ParseMasterConfig(const std::string& yaml_text,
                                       const std::string& source_name);
Result<MasterConfig> LoadMasterConfig(const std::string& path);

}  // namespace cairn
