#include "master/master.h"

#include <filesystem>
#include <future>

#include "api/rest_api.h"
#include "base/clock.h"
#include "base/files.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/memory.h"
#include "base/password.h"
#include "events/context_store.h"
#include "events/envelope_util.h"
#include "events/kafka/placement_topic.h"
#include "events/task_log_store.h"
#include "master/agent_heartbeats.h"
#include "master/checkpoint_collector.h"
#include "master/data_dir.h"
#include "master/decision_loop.h"
#include "master/decision_snapshots.h"
#include "master/idle_watch.h"
#include "master/log_retention.h"
#include "master/metrics.h"
#include "master/webhook_shipper.h"
#include "net/http_server.h"
#include "projections/projection_engine.h"
#include "projections/projections.h"

namespace cairn {

struct Master::Parts {
  MasterConfig config;
  std::string master_id = NewUuid();
  std::atomic<bool> stopping{false};
  std::unique_ptr<EventLog> log;
  std::unique_ptr<TaskLogStore> task_logs;
  std::unique_ptr<DecisionSnapshotStore> decision_snapshots;
  std::unique_ptr<DecisionSnapshotter> decision_snapshotter;
  std::unique_ptr<DecisionLoop> loop;
  std::unique_ptr<Projections> projections;
  std::unique_ptr<PlacementRelay> relay;
  std::unique_ptr<AgentHeartbeats> heartbeats;
  std::unique_ptr<ContextStore> contexts;
  std::unique_ptr<CheckpointCollector> checkpoint_collector;
  std::unique_ptr<IdleWatch> idle_watch;
  std::unique_ptr<WebhookShipper> webhook_shipper;
  std::unique_ptr<LogRetention> log_retention;
  std::unique_ptr<api::RestApi> api;
  std::atomic<api::RestApi*> ready_api{nullptr};  // set once startup is done
  std::unique_ptr<net::Server> server;
  std::string agent_token;  // a secret: never logged
  SecretSealer sealer;      // keyed by the agent token: credentials in the log (events/sealing.h)
  // The blank-password check of the built-in users made before this start: an argon2id
  // verification each, off the startup's path.
  std::future<void> blank_password_check;
  bool stopped = false;
};

Master::Master(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Master::~Master() { Stop(); }

namespace {

// 1. Bind first: a master that cannot serve must fail before it claims a writer epoch, which
// would fence off a healthy master on the same log. Until startup is done, every request gets
// 503.
Status BindServer(Master::Parts& parts);

// 2. Startup is replay: the single writer folds the log into its decision state (from the newest
// decision snapshot that checks out, master/decision_snapshots.h), then claims a new writer epoch
// (from now on, events of older masters are fenced off). Snapshots of the write side are taken
// in the background at the projections' interval.
Status ReplayAndClaimTheLog(Master::Parts& parts) {
  CAIRN_ASSIGN_OR_RETURN(parts.log, OpenEventLog(parts.config.log));
  DecisionLoop::Options options;
  options.master_id = parts.master_id;
  options.sealer = parts.sealer;
  options.login_throttle.max_failures = parts.config.security.max_failed_logins;
  options.login_throttle.window_micros =
      static_cast<int64_t>(parts.config.security.failed_login_window_seconds * 1e6);
  const uint64_t every_events = parts.config.snapshots.write_side_every_events;
  if (every_events > 0) {
    CAIRN_ASSIGN_OR_RETURN(parts.decision_snapshots,
                           DecisionSnapshotStore::Open(DecisionSnapshotDir(parts.config.data_dir),
                                                       kDecisionSnapshotsKept));
    parts.decision_snapshotter = std::make_unique<DecisionSnapshotter>(
        parts.log.get(), parts.decision_snapshots.get(), every_events,
        parts.config.snapshots.write_side_forks ? DecisionSnapshotter::Copy::kFork
                                                : DecisionSnapshotter::Copy::kFold);
    options.snapshots = parts.decision_snapshots.get();
    options.on_appended = [snapshotter = parts.decision_snapshotter.get()](
                              commands::DecisionState& state, const std::string& last_event_id) {
      snapshotter->StateAdvanced(state, last_event_id);
    };
  }
  parts.loop = std::make_unique<DecisionLoop>(parts.log.get(), options);
  CAIRN_RETURN_IF_ERROR(parts.loop->Start());
  if (parts.decision_snapshotter) {
    // A start that folded more than two intervals (a first start on an old log, or snapshots
    // turned on or lost) leaves its state as a snapshot at once (the writer waits for the
    // encoding, once, before the API serves), so the next start need not fold it again and the
    // background thread need not either. A shorter tail is left to the background thread.
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, parts.log->EndOffset());
    if (end - parts.decision_snapshots->NewestOffset() > 2 * every_events) {
      Status written;
      parts.loop->Read([&](const commands::DecisionState& state) {
        written = parts.decision_snapshots->Write(state, *parts.log);
      });
      if (!written.ok()) log::Warn("master", "no decision snapshot at startup: {}", written);
    }
    // The fold's batches were transient: their pages go back (before the first fork, which
    // would otherwise share them).
    ReturnFreedMemory();
    parts.decision_snapshotter->Start();
  }
  return Status::Ok();
}

// 3. The pools and the authorization model this master runs with become facts in the log (only
// when they changed), so replay and explain judge every later decision by the rules it was taken
// under.
Status RecordThePools(Master::Parts& parts) {
  commands::CommandMeta meta{"system:master", parts.master_id, "", NowUnixMicros()};
  CAIRN_RETURN_IF_ERROR(
      parts.loop->Execute(commands::ConfigurePools{parts.config.pools}, meta).status());
  events::AuthzType in_log = events::AUTHZ_TYPE_UNSPECIFIED;
  bool log_has_users = false;
  parts.loop->Read([&](const commands::DecisionState& state) {
    in_log = state.tenancy.authz;
    log_has_users = !state.identity.users.empty();
  });
  const events::AuthzType configured = parts.config.security.authz;
  parts.config.security.authz = EffectiveAuthz(configured, in_log, log_has_users);
  if (configured == events::AUTHZ_TYPE_UNSPECIFIED && in_log == events::AUTHZ_TYPE_UNSPECIFIED &&
      log_has_users) {
    log::Warn("master",
              "this log was written when roles were Cairn's only authorization model, so they "
              "stay on; set security.authz.type (basic or rbac) in master.yaml to choose");
  }
  return parts.loop->Execute(commands::ConfigureAuthz{parts.config.security.authz}, meta).status();
}

// 3b. Determined's built-in users exist from the first start: admin and determined, with the
// password master.yaml gives (security.initial_user_password) or a blank one. While either
// password is blank, every start says so.
void WarnOfBlankPassword(const std::string& username) {
  log::Warn("master",
            "user '{}' has a blank password: anyone who reaches this master can act as it; set "
            "one with `det user change-password {}`",
            username, username);
}

Status RecordTheBuiltInUsers(Master::Parts& parts) {
  commands::CommandMeta meta{"system:master", parts.master_id, "", NowUnixMicros()};
  const std::string& initial = parts.config.security.initial_user_password;
  const std::string blank = CliPasswordHash("");
  std::vector<std::pair<std::string, std::string>> made_before;  // username, password hash
  for (const auto& [username, admin] : {std::pair{"admin", true}, std::pair{"determined", false}}) {
    std::optional<commands::UserRecord> user = parts.loop->FindUser(username);
    // Made now, its password is the configured one; made before, only the hash can tell (in
    // the background: each verification costs tens of milliseconds, by design).
    if (user) {
      if (user->active) made_before.emplace_back(username, user->password_hash);
    } else {
      CAIRN_ASSIGN_OR_RETURN(std::string hash, HashPassword(CliPasswordHash(initial)));
      commands::CreateUser create{username, "", admin, true, std::move(hash)};
      auto created = parts.loop->Execute(std::move(create), meta);
      // Another master may have created it meanwhile; the user exists either way.
      if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
        return created.status();
      }
    }
    if (!user && initial.empty()) WarnOfBlankPassword(username);
  }
  parts.blank_password_check =
      std::async(std::launch::async, [blank, made_before = std::move(made_before)] {
        for (const auto& [username, hash] : made_before) {
          if (VerifyPassword(hash, blank)) WarnOfBlankPassword(username);
        }
      });
  return Status::Ok();
}

// 1b. Agents authenticate with one token: security.agent_token, or else the one in
// <data_dir>/agent-token, made at the first start (random, readable by this user only) for
// agents on this machine to point --agent-token-file at. It is also the cluster secret that
// seals credentials in the log (events/sealing.h), so it is known before the writer starts.
Status EstablishTheAgentToken(Master::Parts& parts) {
  if (!parts.config.security.agent_token.empty()) {
    parts.agent_token = parts.config.security.agent_token;
    parts.sealer = SecretSealer(parts.agent_token);
    return Status::Ok();
  }
  const std::string path = AgentTokenPath(parts.config.data_dir);
  if (!std::filesystem::exists(path)) {
    CAIRN_RETURN_IF_ERROR(WriteFileAtomically(path, NewSessionToken() + "\n", 0600));
    log::Info("master", "made the agent token; agents read it with --agent-token-file {}", path);
  }
  CAIRN_ASSIGN_OR_RETURN(parts.agent_token, ReadTokenFile(path));
  parts.sealer = SecretSealer(parts.agent_token);
  return Status::Ok();
}

// 3d. Webhooks are signed with webhooks.signing_key, or else the one in
// <data_dir>/webhook-signing-key, made at the first start (random, readable by this user only)
// and kept, so that a receiver checks signatures across restarts (Determined makes a new one at
// every start).
Result<std::string> WebhookSigningKey(const MasterConfig& config) {
  if (!config.webhooks.signing_key.empty()) return config.webhooks.signing_key;
  const std::string path = WebhookSigningKeyPath(config.data_dir);
  if (!std::filesystem::exists(path)) {
    CAIRN_RETURN_IF_ERROR(WriteFileAtomically(path, NewSessionToken() + "\n", 0600));
    log::Info("master", "made the webhook signing key in {}", path);
  }
  return ReadTokenFile(path);
}

Status StartTheWebhookShipper(Master::Parts& parts) {
  const auto& config = parts.config.webhooks;
  WebhookShipper::Options options;
  CAIRN_ASSIGN_OR_RETURN(options.signing_key, WebhookSigningKey(parts.config));
  options.base_url = config.base_url;
  options.max_attempts = config.max_attempts;
  const auto millis = [](double seconds) {
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  };
  options.first_retry = millis(config.first_retry_seconds);
  options.max_retry = millis(config.max_retry_seconds);
  options.timeout = millis(config.timeout_seconds);
  options.sealer = parts.sealer;
  parts.webhook_shipper =
      std::make_unique<WebhookShipper>(parts.log.get(), parts.loop.get(), std::move(options));
  parts.webhook_shipper->Start();
  return Status::Ok();
}

// 4. The read side follows the log from where each projection stopped (its own offset), in the
// background, first in bulk when far behind (snapshots.catch_up_bulk_mib); reads wait for the
// offset they need.
// A projection DB that is missing or does not open is restored from the newest snapshot that
// checks out (projections/snapshots.h); snapshots are taken in the background as configured.
Status FollowWithTheProjections(Master::Parts& parts) {
  const auto& snapshots = parts.config.snapshots;
  // Compactions at low priority: when a snapshot's flush sets them off while submissions come
  // in, they would otherwise take the cores the submissions wait for and raise their p99
  // (docs/benchmarks.md, "Projections: snapshots and compactions").
  projections::LowerCompactionPriority();
  projections::EngineOptions options;
  options.bulk_load_bytes = static_cast<size_t>(snapshots.catch_up_bulk_mib) << 20;
  CAIRN_ASSIGN_OR_RETURN(
      parts.projections,
      Projections::Open(parts.config.data_dir + "/projections", parts.log.get(),
                        parts.config.data_dir + "/snapshots",
                        {snapshots.every_events, static_cast<size_t>(snapshots.keep)}, options));
  return Status::Ok();
}

// 5. The master's services: the Kafka placement relay (agents read their orders from a topic),
// heartbeats that turn silence into disconnects, the stores of task logs (on Kafka, a cache of
// their topic) and model definitions, checkpoint garbage collection.
Status StartServices(Master::Parts& parts) {
  const MasterConfig& config = parts.config;
  // On Kafka the task-log topic is the record of every line and <data_dir>/tasklogs a cache of
  // it, caught up here (before heartbeats are watched: agents get 503s until it is done), so a
  // master whose directory was lost serves every line again.
  const std::string task_log_dir = config.data_dir + "/tasklogs";
  if (config.log.backend == "kafka") {
    CAIRN_ASSIGN_OR_RETURN(
        parts.task_logs,
        TaskLogStore::OpenMirrored(task_log_dir, config.log.brokers, config.log.topic_prefix));
    CAIRN_ASSIGN_OR_RETURN(
        parts.relay,
        PlacementRelay::Start(parts.log.get(), config.log.brokers, config.log.topic_prefix,
                              config.data_dir + "/placement-relay.offset"));
  } else {
    CAIRN_ASSIGN_OR_RETURN(parts.task_logs, TaskLogStore::Open(task_log_dir));
  }
  parts.heartbeats = std::make_unique<AgentHeartbeats>(
      parts.loop.get(),
      std::chrono::milliseconds(static_cast<int64_t>(config.agent_timeout_seconds * 1000)));
  parts.heartbeats->Start();
  parts.contexts = std::make_unique<ContextStore>(config.data_dir + "/contexts");
  parts.checkpoint_collector =
      std::make_unique<CheckpointCollector>(parts.loop.get(), parts.sealer);
  parts.checkpoint_collector->Start();
  IdleWatch::Options idle;
  idle.notebook_timeout_seconds = config.notebook_timeout_seconds;
  idle.tensorboard_timeout_seconds = config.tensorboard_timeout_seconds;
  idle.agent_token = parts.agent_token;
  parts.idle_watch = std::make_unique<IdleWatch>(parts.loop.get(), parts.projections.get(), idle);
  parts.idle_watch->Start();
  CAIRN_RETURN_IF_ERROR(StartTheWebhookShipper(parts));
  LogRetention::Options retention;
  retention.default_days = config.retention.log_retention_days;
  retention.max_total_bytes = config.retention.log_max_total_bytes;
  parts.task_logs->SetTaskByteLimit(config.retention.log_max_task_bytes);
  if (!config.retention.schedule.empty()) {
    CAIRN_ASSIGN_OR_RETURN(retention.schedule, ParseSchedule(config.retention.schedule));
  }
  parts.log_retention =
      std::make_unique<LogRetention>(parts.log.get(), parts.loop.get(), parts.projections.get(),
                                     parts.task_logs.get(), std::move(retention));
  parts.log_retention->Start();
  return Status::Ok();
}

// The web UI's folder: master.yaml's web.root, else share/cairn/web of the installation this
// binary belongs to, else the source tree's web/ (a build that was not installed).
std::string WebRoot(const MasterConfig& config) {
  if (!config.web.root.empty()) return config.web.root;
  std::error_code error;
  const auto binary = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = binary.parent_path().parent_path() / "share" / "cairn" / "web";
    if (std::filesystem::is_regular_file(installed / "index.html", error)) return installed;
  }
  return CAIRN_SOURCE_WEB_ROOT;
}

// 6. The REST API over all of it; requests stop getting 503.
void ServeTheApi(Master::Parts& parts) {
  const MasterConfig& config = parts.config;
  api::Services services;
  services.facts.master_id = parts.master_id;
  services.facts.cluster_name = config.cluster_name;
  services.facts.config_json = MasterConfigJson(config);
  services.facts.web_root = WebRoot(config);
  services.facts.chart_js_file = config.web.chart_js;
  std::error_code error;
  if (!std::filesystem::is_regular_file(services.facts.web_root + "/index.html", error)) {
    log::Warn("master", "the web UI is not in {} (web.root): / answers 404",
              services.facts.web_root);
  }
  if (!std::filesystem::is_regular_file(config.web.chart_js, error)) {
    log::Warn("master", "Chart.js is not at {} (web.chart_js): the UI shows no charts",
              config.web.chart_js);
  }
  services.facts.session_lifetime_micros =
      static_cast<int64_t>(config.security.session_lifetime_hours * 3600 * 1e6);
  constexpr int64_t kMicrosPerDay = int64_t{24} * 3600 * 1'000'000;
  services.facts.access_token_default_lifespan_micros =
      config.security.token.default_lifespan_days * kMicrosPerDay;
  services.facts.access_token_max_lifespan_micros =
      config.security.token.max_lifespan_days * kMicrosPerDay;
  services.facts.pai_default_fs_uri =
      !config.openpai_default_fs_uri.empty()
          ? config.openpai_default_fs_uri
          : "file://" +
                std::filesystem::absolute(config.data_dir + "/pai-fs").lexically_normal().string();
  services.facts.default_checkpoint_dir =
      std::filesystem::absolute(config.data_dir + "/checkpoints").lexically_normal().string();
  services.facts.default_checkpoint_storage = config.checkpoint_storage;
  if (config.log.backend == "kafka") {
    services.facts.placement_transport = "kafka";
    services.facts.kafka_brokers = config.log.brokers;
    services.facts.kafka_topic_prefix = config.log.topic_prefix;
  }
  services.log = parts.log.get();
  services.writer = parts.loop.get();
  services.projections = parts.projections.get();
  services.metrics = [&parts] {
    return RenderMasterMetrics(*parts.loop, *parts.projections, *parts.log, NowUnixMicros());
  };
  services.task_logs = parts.task_logs.get();
  services.contexts = parts.contexts.get();
  services.liveness = parts.heartbeats.get();
  services.stopping = &parts.stopping;
  services.agent_token = parts.agent_token;
  services.sealer = parts.sealer;
  services.facts.tls = !config.security.tls.cert.empty();
  services.on_proxy_traffic = [watch = parts.idle_watch.get()](const std::string& task_id, size_t) {
    watch->RecordTraffic(task_id);
  };
  services.cleanup_logs = [retention = parts.log_retention.get()](const std::string& actor) {
    return retention->Sweep(NowUnixMicros(), actor);
  };
  services.test_webhook = [shipper =
                               parts.webhook_shipper.get()](const events::WebhookCreated& webhook) {
    return shipper->SendTest(webhook);
  };
  parts.api = std::make_unique<api::RestApi>(std::move(services));
  parts.ready_api = parts.api.get();
}

// What every request gets while the master replays its log.
net::Response StartingResponse() {
  net::Response starting;
  starting.status = 503;
  starting.body =
      R"({"code":14,"message":"the master is starting: replaying its log","details":[]})";
  return starting;
}

Status BindServer(Master::Parts& parts) {
  net::Server::Options options;
  options.address = parts.config.listen_address;
  options.port = parts.config.port;
  options.max_body_bytes = parts.config.max_request_body_bytes;
  options.max_connections_per_address = parts.config.max_connections_per_address;
  // Every route takes JSON (api/rest_util.h's ParseBody checks the same limits again): a body
  // that breaks them is refused while it is read, before it costs its full size.
  options.json_body_limits = kRequestBodyLimits;
  // ...but the proxy's bodies are the notebook's or TensorBoard's (forms, uploads).
  options.json_body_exempt_prefix = "/proxy/";
  options.tls_cert_file = parts.config.security.tls.cert;
  options.tls_key_file = parts.config.security.tls.key;
  std::atomic<api::RestApi*>* ready_api = &parts.ready_api;
  options.admit_head = [ready_api](const net::Request& head) {
    api::RestApi* api = ready_api->load();
    if (api != nullptr) return api->AdmitBody(head);
    return net::BodyAdmission{StartingResponse(), 0};  // no body is worth reading yet
  };
  parts.server = std::make_unique<net::Server>(options, [ready_api](const net::Request& request) {
    api::RestApi* api = ready_api->load();
    return api != nullptr ? api->Handle(request) : StartingResponse();
  });
  return parts.server->Start();
}

}  // namespace

Result<std::unique_ptr<Master>> Master::Start(const MasterConfig& config) {
  auto parts = std::make_unique<Parts>();
  parts->config = config;
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) return Status::IOError("cannot create data_dir " + config.data_dir + ": " + ec.message());
  // The log, contexts and logs are the cluster's users' work: no other local user reads them.
  std::filesystem::permissions(config.data_dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  if (ec)
    return Status::IOError("cannot restrict data_dir " + config.data_dir + ": " + ec.message());
  // No transparent huge pages in a master, from its start on (base/memory.h): its heap is
  // long-lived small objects, and zeroing each huge page on first touch made restarts slower
  // without making the fold faster (docs/benchmarks.md, "Memory allocator and huge pages").
  if (!EndHugePages()) log::Warn("master", "transparent huge pages stay on: prctl refused");
  CAIRN_RETURN_IF_ERROR(BindServer(*parts));
  CAIRN_RETURN_IF_ERROR(EstablishTheAgentToken(*parts));
  CAIRN_RETURN_IF_ERROR(ReplayAndClaimTheLog(*parts));
  CAIRN_RETURN_IF_ERROR(RecordThePools(*parts));
  CAIRN_RETURN_IF_ERROR(RecordTheBuiltInUsers(*parts));
  CAIRN_RETURN_IF_ERROR(FollowWithTheProjections(*parts));
  CAIRN_RETURN_IF_ERROR(StartServices(*parts));
  ServeTheApi(*parts);
  return std::unique_ptr<Master>(new Master(std::move(parts)));
}

uint16_t Master::port() const { return parts_->server->port(); }

std::string Master::url() const {
  std::string host =
      parts_->config.listen_address == "0.0.0.0" ? "127.0.0.1" : parts_->config.listen_address;
  const char* scheme = parts_->config.security.tls.cert.empty() ? "http://" : "https://";
  return scheme + host + ":" + std::to_string(port());
}

// Stopping runs the start backwards: no new requests (open streams end), no more timers, the
// writer finishes what is queued (every answered write is durable), then the projections stop
// following the log.
void Master::Stop() {
  if (!parts_ || parts_->stopped) return;
  parts_->stopped = true;
  parts_->stopping = true;
  if (parts_->server) parts_->server->Stop();
  if (parts_->heartbeats) parts_->heartbeats->Stop();
  if (parts_->relay) parts_->relay->Stop();
  if (parts_->checkpoint_collector) parts_->checkpoint_collector->Stop();
  if (parts_->idle_watch) parts_->idle_watch->Stop();
  if (parts_->webhook_shipper) parts_->webhook_shipper->Stop();
  if (parts_->log_retention) parts_->log_retention->Stop();
  // A snapshot being taken finishes first: its process dies with the writer thread.
  if (parts_->decision_snapshotter) parts_->decision_snapshotter->Stop();
  if (parts_->loop) parts_->loop->Stop();
  if (parts_->projections) parts_->projections->Stop();
}

}  // namespace cairn
