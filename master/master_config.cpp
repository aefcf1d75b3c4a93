// Parses master.yaml into MasterConfig; the rules are stated in master_config.h.
#include "master/master_config.h"

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "base/config_fields.h"
#include "base/fields.h"
#include "base/schedule.h"
#include "base/yaml_json.h"
#include "commands/agents/pools_config.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_config.h"
#include "commands/scheduler/scheduler.h"
#include "events/redaction.h"

namespace cairn {

namespace {

using commands::ParsePools;
using config_fields::CheckKeys;
using config_fields::IsSet;
using config_fields::Scalar;
using config_fields::Where;

// `security.tls`: Determined's keys, cert and key, both or neither.
Status ParseTls(const std::string& source, const YAML::Node& node,
                MasterConfig::Security::Tls& tls) {
  if (!node.IsMap())
    return Status::InvalidArgument(Where(source, node, "security.tls") + ": expected a map");
  CAIRN_RETURN_IF_ERROR(CheckKeys(source, node, "security.tls.", {"cert", "key"}));
  if (IsSet(node["cert"])) {
    CAIRN_ASSIGN_OR_RETURN(tls.cert, Scalar<std::string>(source, node["cert"], "security.tls.cert",
                                                         "a certificate file path"));
  }
  if (IsSet(node["key"])) {
    CAIRN_ASSIGN_OR_RETURN(tls.key, Scalar<std::string>(source, node["key"], "security.tls.key",
                                                        "a private key file path"));
  }
  if (tls.cert.empty() != tls.key.empty()) {
    return Status::InvalidArgument(Where(source, node, "security.tls") +
                                   ": cert and key go together: set both to serve HTTPS, or "
                                   "neither");
  }
  return Status::Ok();
}

// `security.authz`: Determined's key, type basic (its open-source default) or rbac.
Status ParseAuthz(const std::string& source, const YAML::Node& node, events::AuthzType& authz) {
  if (!node.IsMap())
    return Status::InvalidArgument(Where(source, node, "security.authz") + ": expected a map");
  CAIRN_RETURN_IF_ERROR(CheckKeys(source, node, "security.authz.", {"type"}));
  if (!IsSet(node["type"])) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(
      std::string type,
      Scalar<std::string>(source, node["type"], "security.authz.type", "basic or rbac"));
  if (type == "basic") {
    authz = events::AUTHZ_TYPE_BASIC;
  } else if (type == "rbac") {
    authz = events::AUTHZ_TYPE_RBAC;
  } else {
    return Status::InvalidArgument(Where(source, node["type"], "security.authz.type") +
                                   ": expected basic or rbac, got '" + type + "'");
  }
  return Status::Ok();
}

// `security:`: the built-in users' first password, session lifetime, login throttling, the
// agent token and TLS.
Status ParseSecurity(const std::string& source, const YAML::Node& root,
                     MasterConfig::Security& security) {
  const auto node = root["security"];
  if (!node) return Status::Ok();
  if (!node.IsMap())
    return Status::InvalidArgument(Where(source, node, "security") + ": expected a map");
  CAIRN_RETURN_IF_ERROR(
      CheckKeys(source, node, "security.",
                {"initial_user_password", "session_lifetime_hours", "max_failed_logins",
                 "failed_login_window_seconds", "agent_token", "tls", "authz", "token"}));
  if (IsSet(node["token"])) {
    const auto token = node["token"];
    if (!token.IsMap()) {
      return Status::InvalidArgument(Where(source, token, "security.token") + ": expected a map");
    }
    CAIRN_RETURN_IF_ERROR(CheckKeys(source, token, "security.token.",
                                    {"default_lifespan_days", "max_lifespan_days"}));
    for (const auto& [key, days] :
         {std::pair{"default_lifespan_days", &security.token.default_lifespan_days},
          std::pair{"max_lifespan_days", &security.token.max_lifespan_days}}) {
      if (!token[key]) continue;
      const std::string path = std::string("security.token.") + key;
      CAIRN_ASSIGN_OR_RETURN(*days, Scalar<int>(source, token[key], path, "a number of days"));
      if (*days < 1 || *days > 3660) {
        return Status::InvalidArgument(Where(source, token[key], path) +
                                       ": must be between 1 and 3660 days");
      }
    }
    if (security.token.default_lifespan_days > security.token.max_lifespan_days) {
      return Status::InvalidArgument(Where(source, token, "security.token") +
                                     ": default_lifespan_days must not be above max_lifespan_days");
    }
  }
  if (IsSet(node["tls"])) CAIRN_RETURN_IF_ERROR(ParseTls(source, node["tls"], security.tls));
  if (IsSet(node["authz"]))
    CAIRN_RETURN_IF_ERROR(ParseAuthz(source, node["authz"], security.authz));
  if (node["agent_token"]) {
    // A secret, like the password below: errors name the field, never echo it.
    CAIRN_ASSIGN_OR_RETURN(
        security.agent_token,
        Scalar<std::string>(source, node["agent_token"], "security.agent_token", "a string"));
    if (security.agent_token.size() < 16 || security.agent_token.size() > 256 ||
        security.agent_token.find_first_of(" \t\r\n") != std::string::npos) {
      return Status::InvalidArgument(Where(source, node["agent_token"], "security.agent_token") +
                                     ": must be 16 to 256 characters without spaces");
    }
  }
  if (node["initial_user_password"]) {
    // The value is a secret: errors name the field, never echo it.
    CAIRN_ASSIGN_OR_RETURN(security.initial_user_password,
                           Scalar<std::string>(source, node["initial_user_password"],
                                               "security.initial_user_password", "a string"));
  }
  if (node["session_lifetime_hours"]) {
    CAIRN_ASSIGN_OR_RETURN(security.session_lifetime_hours,
                           Scalar<double>(source, node["session_lifetime_hours"],
                                          "security.session_lifetime_hours", "a number of hours"));
    if (!std::isfinite(security.session_lifetime_hours) ||
        security.session_lifetime_hours < 1.0 / 60 || security.session_lifetime_hours > 24 * 366) {
      return Status::InvalidArgument(
          Where(source, node["session_lifetime_hours"], "security.session_lifetime_hours") +
          ": must be between one minute (0.0167) and 8784 hours");
    }
  }
  if (node["max_failed_logins"]) {
    CAIRN_ASSIGN_OR_RETURN(
        security.max_failed_logins,
        Scalar<int>(source, node["max_failed_logins"], "security.max_failed_logins", "an integer"));
    if (security.max_failed_logins < 0 || security.max_failed_logins > 1000) {
      return Status::InvalidArgument(
          Where(source, node["max_failed_logins"], "security.max_failed_logins") +
          ": must be between 0 (no throttling) and 1000");
    }
  }
  if (node["failed_login_window_seconds"]) {
    CAIRN_ASSIGN_OR_RETURN(
        security.failed_login_window_seconds,
        Scalar<double>(source, node["failed_login_window_seconds"],
                       "security.failed_login_window_seconds", "a number of seconds"));
    if (!std::isfinite(security.failed_login_window_seconds) ||
        security.failed_login_window_seconds < 1 || security.failed_login_window_seconds > 86400) {
      return Status::InvalidArgument(Where(source, node["failed_login_window_seconds"],
                                           "security.failed_login_window_seconds") +
                                     ": must be between 1 and 86400");
    }
  }
  return Status::Ok();
}

// `snapshots:`: how often the projections and the write side are snapshotted, and how many of the
// projections' are kept.
Status ParseSnapshots(const std::string& source, const YAML::Node& root,
                      MasterConfig::Snapshots& snapshots) {
  const auto node = root["snapshots"];
  if (!IsSet(node)) return Status::Ok();
  if (!node.IsMap()) {
    return Status::InvalidArgument(Where(source, node, "snapshots") + ": expected a map");
  }
  CAIRN_RETURN_IF_ERROR(CheckKeys(
      source, node, "snapshots.",
      {"every_events", "write_side_every_events", "write_side_copy", "keep", "catch_up_bulk_mib"}));
  for (auto [key, field] :
       {std::pair{"every_events", &snapshots.every_events},
        std::pair{"write_side_every_events", &snapshots.write_side_every_events}}) {
    if (!IsSet(node[key])) continue;
    const std::string name = std::string("snapshots.") + key;
    CAIRN_ASSIGN_OR_RETURN(int64_t every, Scalar<int64_t>(source, node[key], name, "an integer"));
    if (every != 0 && (every < 100 || every > 1'000'000'000)) {
      return Status::InvalidArgument(Where(source, node[key], name) +
                                     ": must be 0 (no snapshots) or between 100 and 1000000000");
    }
    *field = static_cast<uint64_t>(every);
  }
  if (IsSet(node["write_side_copy"])) {
    CAIRN_ASSIGN_OR_RETURN(std::string copy,
                           Scalar<std::string>(source, node["write_side_copy"],
                                               "snapshots.write_side_copy", "fork or fold"));
    if (copy != "fork" && copy != "fold") {
      return Status::InvalidArgument(
          Where(source, node["write_side_copy"], "snapshots.write_side_copy") +
          ": must be fork or fold");
    }
    snapshots.write_side_forks = copy == "fork";
  }
  if (IsSet(node["catch_up_bulk_mib"])) {
    CAIRN_ASSIGN_OR_RETURN(int64_t mib,
                           Scalar<int64_t>(source, node["catch_up_bulk_mib"],
                                           "snapshots.catch_up_bulk_mib", "an integer"));
    if (mib < 0 || mib > 65536) {
      return Status::InvalidArgument(
          Where(source, node["catch_up_bulk_mib"], "snapshots.catch_up_bulk_mib") +
          ": must be between 0 (a batch at a time) and 65536");
    }
    snapshots.catch_up_bulk_mib = static_cast<uint64_t>(mib);
  }
  if (IsSet(node["keep"])) {
    CAIRN_ASSIGN_OR_RETURN(snapshots.keep,
                           Scalar<int>(source, node["keep"], "snapshots.keep", "an integer"));
    if (snapshots.keep < 1 || snapshots.keep > 1000) {
      return Status::InvalidArgument(Where(source, node["keep"], "snapshots.keep") +
                                     ": must be between 1 and 1000");
    }
  }
  return Status::Ok();
}

// `web:`: where the web UI's files and Chart.js are.
Status ParseWeb(const std::string& source, const YAML::Node& root, MasterConfig::Web& web) {
  const auto node = root["web"];
  if (!IsSet(node)) return Status::Ok();
  if (!node.IsMap())
    return Status::InvalidArgument(Where(source, node, "web") + ": expected a map");
  CAIRN_RETURN_IF_ERROR(CheckKeys(source, node, "web.", {"root", "chart_js"}));
  if (IsSet(node["root"])) {
    CAIRN_ASSIGN_OR_RETURN(web.root,
                           Scalar<std::string>(source, node["root"], "web.root", "a directory"));
  }
  if (IsSet(node["chart_js"])) {
    CAIRN_ASSIGN_OR_RETURN(
        web.chart_js, Scalar<std::string>(source, node["chart_js"], "web.chart_js", "a file path"));
  }
  return Status::Ok();
}

Status ParseRetention(const std::string& source, const YAML::Node& node,
                      MasterConfig::Retention& retention) {
  if (!node.IsMap()) {
    return Status::InvalidArgument(Where(source, node, "retention_policy") +
                                   ": expected a map like {log_retention_days: 90, schedule: 24h}");
  }
  CAIRN_RETURN_IF_ERROR(
      CheckKeys(source, node, "retention_policy.",
                {"log_retention_days", "schedule", "log_max_task_bytes", "log_max_total_bytes"}));
  for (auto [key, field] : {std::pair{"log_max_task_bytes", &retention.log_max_task_bytes},
                            std::pair{"log_max_total_bytes", &retention.log_max_total_bytes}}) {
    if (!IsSet(node[key])) continue;
    const std::string name = std::string("retention_policy.") + key;
    CAIRN_ASSIGN_OR_RETURN(int64_t bytes, Scalar<int64_t>(source, node[key], name, "bytes"));
    if (bytes < 0) {
      return Status::InvalidArgument(Where(source, node[key], name) +
                                     ": must be a number of bytes (0: no bound)");
    }
    *field = static_cast<uint64_t>(bytes);
  }
  if (IsSet(node["log_retention_days"])) {
    CAIRN_ASSIGN_OR_RETURN(retention.log_retention_days,
                           Scalar<int>(source, node["log_retention_days"],
                                       "retention_policy.log_retention_days", "a number of days"));
    if (retention.log_retention_days < -1 || retention.log_retention_days > 32767) {
      return Status::InvalidArgument(
          Where(source, node["log_retention_days"], "retention_policy.log_retention_days") +
          ": must be between -1 (keep forever) and 32767");
    }
  }
  if (IsSet(node["schedule"])) {
    CAIRN_ASSIGN_OR_RETURN(retention.schedule,
                           Scalar<std::string>(source, node["schedule"],
                                               "retention_policy.schedule", "a duration or cron"));
    if (auto parsed = ParseSchedule(retention.schedule); !parsed.ok()) {
      return Status::InvalidArgument(Where(source, node["schedule"], "retention_policy.schedule") +
                                     ": " + parsed.status().message());
    }
  }
  return Status::Ok();
}

Status ParseWebhooks(const std::string& source, const YAML::Node& node,
                     MasterConfig::Webhooks& webhooks) {
  if (!node.IsMap()) {
    return Status::InvalidArgument(Where(source, node, "webhooks") +
                                   ": expected a map like {signing_key: ..., base_url: ...}");
  }
  CAIRN_RETURN_IF_ERROR(CheckKeys(source, node, "webhooks.",
                                  {"base_url", "signing_key", "max_attempts", "first_retry_seconds",
                                   "max_retry_seconds", "timeout_seconds"}));
  if (IsSet(node["base_url"])) {
    CAIRN_ASSIGN_OR_RETURN(webhooks.base_url, Scalar<std::string>(source, node["base_url"],
                                                                  "webhooks.base_url", "a URL"));
  }
  if (IsSet(node["signing_key"])) {
    CAIRN_ASSIGN_OR_RETURN(
        webhooks.signing_key,
        Scalar<std::string>(source, node["signing_key"], "webhooks.signing_key", "a string"));
    if (webhooks.signing_key.size() < 8) {
      return Status::InvalidArgument(Where(source, node["signing_key"], "webhooks.signing_key") +
                                     ": must have at least 8 characters");
    }
  }
  if (IsSet(node["max_attempts"])) {
    CAIRN_ASSIGN_OR_RETURN(
        webhooks.max_attempts,
        Scalar<int>(source, node["max_attempts"], "webhooks.max_attempts", "an integer"));
    if (webhooks.max_attempts < 1 || webhooks.max_attempts > 100) {
      return Status::InvalidArgument(Where(source, node["max_attempts"], "webhooks.max_attempts") +
                                     ": must be between 1 and 100");
    }
  }
  for (auto [key, seconds] : {std::pair{"first_retry_seconds", &webhooks.first_retry_seconds},
                              std::pair{"max_retry_seconds", &webhooks.max_retry_seconds},
                              std::pair{"timeout_seconds", &webhooks.timeout_seconds}}) {
    if (!IsSet(node[key])) continue;
    const std::string path = std::string("webhooks.") + key;
    CAIRN_ASSIGN_OR_RETURN(*seconds, Scalar<double>(source, node[key], path, "seconds"));
    if (!std::isfinite(*seconds) || *seconds < 0.01 || *seconds > 3600) {
      return Status::InvalidArgument(Where(source, node[key], path) +
                                     ": must be between 0.01 and 3600 seconds");
    }
  }
  return Status::Ok();
}

}  // namespace

// One definition of the defaults: the decision state starts from the same ones, so a master
// without a configuration records nothing new.
events::ResourcePoolsConfigured DefaultResourcePools() { return DefaultPoolsConfig(); }

namespace {
Result<MasterConfig> ParseMasterConfigUnguarded(const std::string& yaml_text,
                                                const std::string& source_name);
}  // namespace

Result<MasterConfig> ParseMasterConfig(const std::string& yaml_text,
                                       const std::string& source_name) {
  // yaml-cpp reports odd documents (aliases, tags, non-scalar keys) by throwing.
  try {
    return ParseMasterConfigUnguarded(yaml_text, source_name);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ": " +
                                   e.msg);
  }
}

namespace {
Result<MasterConfig> ParseMasterConfigUnguarded(const std::string& yaml_text,
                                                const std::string& source_name) {
  // Bounded: size, nesting and alias expansion (base/yaml_json.h).
  CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, source_name));
  MasterConfig config;
  if (root.IsNull())
    return Status::InvalidArgument(source_name + ": empty config; data_dir is required");
  if (!root.IsMap()) return Status::InvalidArgument(source_name + ": expected a map at the top");
  CAIRN_RETURN_IF_ERROR(CheckKeys(source_name, root, "",
                                  {"port",
                                   "listen_address",
                                   "data_dir",
                                   "log",
                                   "cluster_name",
                                   "agent_timeout_seconds",
                                   "notebook_timeout",
                                   "tensorboard_timeout",
                                   "max_request_body_bytes",
                                   "max_connections_per_address",
                                   "resource_manager",
                                   "resource_pools",
                                   "scheduler",
                                   "provisioner",
                                   "task_container_defaults",
                                   "checkpoint_storage",
                                   "security",
                                   "snapshots",
                                   "web",
                                   "openpai",
                                   "webhooks",
                                   "retention_policy"}));
  if (root["port"]) {
    CAIRN_ASSIGN_OR_RETURN(int port, Scalar<int>(source_name, root["port"], "port", "an integer"));
    if (port < 0 || port > 65535) {
      return Status::InvalidArgument(Where(source_name, root["port"], "port") +
                                     ": must be between 0 and 65535");
    }
    config.port = static_cast<uint16_t>(port);
  }
  if (root["listen_address"]) {
    CAIRN_ASSIGN_OR_RETURN(
        config.listen_address,
        Scalar<std::string>(source_name, root["listen_address"], "listen_address", "an address"));
  }
  if (!root["data_dir"]) return Status::InvalidArgument(source_name + ": data_dir is required");
  CAIRN_ASSIGN_OR_RETURN(config.data_dir, Scalar<std::string>(source_name, root["data_dir"],
                                                              "data_dir", "a directory path"));
  if (config.data_dir.empty()) return Status::InvalidArgument(source_name + ": data_dir is empty");
  if (root["cluster_name"]) {
    CAIRN_ASSIGN_OR_RETURN(
        config.cluster_name,
        Scalar<std::string>(source_name, root["cluster_name"], "cluster_name", "a name"));
  }
  if (root["agent_timeout_seconds"]) {
    CAIRN_ASSIGN_OR_RETURN(config.agent_timeout_seconds,
                           Scalar<double>(source_name, root["agent_timeout_seconds"],
                                          "agent_timeout_seconds", "a number of seconds"));
    if (!std::isfinite(config.agent_timeout_seconds) || config.agent_timeout_seconds < 0.5 ||
        config.agent_timeout_seconds > 86400) {
      return Status::InvalidArgument(
          Where(source_name, root["agent_timeout_seconds"], "agent_timeout_seconds") +
          ": must be between 0.5 and 86400 seconds");
    }
  }
  for (auto [key, seconds] :
       {std::pair{"notebook_timeout", &config.notebook_timeout_seconds},
        std::pair{"tensorboard_timeout", &config.tensorboard_timeout_seconds}}) {
    if (!root[key]) continue;
    CAIRN_ASSIGN_OR_RETURN(*seconds,
                           Scalar<int64_t>(source_name, root[key], key, "a number of seconds"));
    if (*seconds < 0 || *seconds > 366 * 86400) {
      return Status::InvalidArgument(Where(source_name, root[key], key) +
                                     ": must be between 0 (never) and a year, in seconds");
    }
  }
  if (const YAML::Node openpai = root["openpai"]) {
    if (!openpai.IsMap()) {
      return Status::InvalidArgument(Where(source_name, openpai, "openpai") +
                                     ": expected a map like {default_fs_uri: hdfs://nn:9000}");
    }
    CAIRN_RETURN_IF_ERROR(CheckKeys(source_name, openpai, "openpai.", {"default_fs_uri"}));
    if (openpai["default_fs_uri"]) {
      CAIRN_ASSIGN_OR_RETURN(config.openpai_default_fs_uri,
                             Scalar<std::string>(source_name, openpai["default_fs_uri"],
                                                 "openpai.default_fs_uri", "a URI"));
    }
  }
  if (const YAML::Node storage = root["checkpoint_storage"]; storage && !storage.IsNull()) {
    CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json as_json,
                           YamlNodeToJson(storage, "checkpoint_storage"));
    auto normalized = experiments::NormalizedCheckpointStorage(nlohmann::json(as_json));
    if (!normalized.ok()) {
      return Status(normalized.status().code(), Where(source_name, storage, "checkpoint_storage") +
                                                    ": " + normalized.status().message());
    }
    config.checkpoint_storage = std::move(*normalized);
  }
  if (const YAML::Node retention = root["retention_policy"]) {
    CAIRN_RETURN_IF_ERROR(ParseRetention(source_name, retention, config.retention));
  }
  if (const YAML::Node webhooks = root["webhooks"]) {
    CAIRN_RETURN_IF_ERROR(ParseWebhooks(source_name, webhooks, config.webhooks));
  }
  if (root["max_request_body_bytes"]) {
    CAIRN_ASSIGN_OR_RETURN(int64_t bytes,
                           Scalar<int64_t>(source_name, root["max_request_body_bytes"],
                                           "max_request_body_bytes", "bytes"));
    if (bytes < 1024) {
      return Status::InvalidArgument(
          Where(source_name, root["max_request_body_bytes"], "max_request_body_bytes") +
          ": must be at least 1024");
    }
    config.max_request_body_bytes = static_cast<size_t>(bytes);
  }
  if (root["max_connections_per_address"]) {
    CAIRN_ASSIGN_OR_RETURN(int64_t connections,
                           Scalar<int64_t>(source_name, root["max_connections_per_address"],
                                           "max_connections_per_address", "an integer"));
    if (connections < 1) {
      return Status::InvalidArgument(
          Where(source_name, root["max_connections_per_address"], "max_connections_per_address") +
          ": must be at least 1");
    }
    config.max_connections_per_address = static_cast<size_t>(connections);
  }
  config.log.data_dir = config.data_dir;
  CAIRN_RETURN_IF_ERROR(ParseSnapshots(source_name, root, config.snapshots));
  CAIRN_RETURN_IF_ERROR(ParseWeb(source_name, root, config.web));
  CAIRN_ASSIGN_OR_RETURN(config.pools, ParsePools(source_name, root));
  CAIRN_RETURN_IF_ERROR(ParseSecurity(source_name, root, config.security));
  if (const auto log = root["log"]) {
    if (!log.IsMap())
      return Status::InvalidArgument(Where(source_name, log, "log") + ": expected a map");
    CAIRN_RETURN_IF_ERROR(
        CheckKeys(source_name, log, "log.", {"backend", "brokers", "topic_prefix"}));
    if (log["backend"]) {
      CAIRN_ASSIGN_OR_RETURN(
          config.log.backend,
          Scalar<std::string>(source_name, log["backend"], "log.backend", "embedded or kafka"));
      if (config.log.backend != "embedded" && config.log.backend != "kafka") {
        return Status::InvalidArgument(Where(source_name, log["backend"], "log.backend") +
                                       ": must be 'embedded' or 'kafka', not '" +
                                       config.log.backend + "'");
      }
    }
    if (log["brokers"]) {
      CAIRN_ASSIGN_OR_RETURN(
          config.log.brokers,
          Scalar<std::string>(source_name, log["brokers"], "log.brokers", "host:port[,host:port]"));
    }
    if (log["topic_prefix"]) {
      CAIRN_ASSIGN_OR_RETURN(config.log.topic_prefix,
                             Scalar<std::string>(source_name, log["topic_prefix"],
                                                 "log.topic_prefix", "a topic prefix"));
    }
    if (config.log.backend == "kafka" && config.log.brokers.empty()) {
      return Status::InvalidArgument(Where(source_name, log, "log.brokers") +
                                     ": required when log.backend is kafka");
    }
  }
  const auto snapshots = root["snapshots"];
  if (config.log.backend == "kafka" &&
      !(IsSet(snapshots) && IsSet(snapshots["write_side_every_events"]))) {
    config.snapshots.write_side_every_events = MasterConfig::Snapshots::kKafkaWriteSideEveryEvents;
  }
  return config;
}

}  // namespace

Result<MasterConfig> LoadMasterConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseMasterConfig(text.str(), path);
}

}  // namespace cairn

namespace cairn {

events::AuthzType EffectiveAuthz(events::AuthzType configured, events::AuthzType in_log,
                                 bool log_has_users) {
  if (configured != events::AUTHZ_TYPE_UNSPECIFIED) return configured;
  if (in_log != events::AUTHZ_TYPE_UNSPECIFIED) return in_log;
  return log_has_users ? events::AUTHZ_TYPE_RBAC : events::AUTHZ_TYPE_BASIC;
}

namespace {

// A pool scheduler in Determined's shape (its union of fair_share, priority, round_robin).
nlohmann::json SchedulerJson(const events::SchedulerConfig& scheduler) {
  nlohmann::json out = {
      {"type", commands::SchedulerTypeName(scheduler.type())},
      {"fitting_policy",
       scheduler.fitting_policy() == events::FITTING_POLICY_WORST ? "worst" : "best"},
      {"allow_heterogeneous_fits", false}};
  if (scheduler.type() == events::SCHEDULER_TYPE_PRIORITY) {
    out["preemption"] = scheduler.preemption();
    out["default_priority"] = scheduler.default_priority();
  }
  return out;
}

}  // namespace

namespace {

// A storage as a person may see it: credentials masked (events/redaction.h).
nlohmann::json ShownStorage(const nlohmann::json& storage) {
  if (!storage.is_object()) return nullptr;
  nlohmann::json config = {{"checkpoint_storage", storage}};
  RedactConfig(config, Audience::kOwner);
  return config["checkpoint_storage"];
}

}  // namespace

// task_container_defaults as recorded (ResourcePoolsConfigured), as admins see them (the
// registry password masked); `grace` is its preemption_timeout (0: not given). Null when neither
// says anything.
nlohmann::json ShownTaskContainerDefaults(const std::string& recorded, double grace) {
  nlohmann::json shown =
      recorded.empty()
          ? nlohmann::json::object()
          : nlohmann::json::parse(RedactTaskContainerDefaultsJson(recorded, Audience::kOwner),
                                  nullptr, false);
  if (!shown.is_object()) shown = nlohmann::json::object();
  if (grace > 0) shown["preemption_timeout"] = static_cast<int64_t>(grace);
  return shown.empty() ? nlohmann::json() : shown;
}

std::string MasterConfigJson(const MasterConfig& config) {
  auto secret = [](const std::string& value) {
    return value.empty() ? nlohmann::json("") : nlohmann::json("********");
  };
  nlohmann::json log = {{"backend", config.log.backend}};
  if (config.log.backend == "kafka") {
    log["brokers"] = config.log.brokers;
    log["topic_prefix"] = config.log.topic_prefix;
  }
  // Determined's MasterConfig keys where Cairn has the setting (resource_manager, resource_pools
  // as a list, task_container_defaults, security), Cairn's own beside them.
  const events::ResourcePoolsConfigured& pools = config.pools;
  const events::ResourcePoolConfig* default_pool = nullptr;
  nlohmann::json pool_list = nlohmann::json::array();
  for (const auto& pool : pools.pools()) {
    if (pool.pool_name() == pools.default_compute_pool()) default_pool = &pool;
    nlohmann::json shown = {
        {"pool_name", pool.pool_name()},
        {"description", pool.description()},
        {"provider", nullptr},
        {"max_aux_containers_per_agent", pool.max_aux_containers_per_agent()},
        {"task_container_defaults", ShownTaskContainerDefaults(pool.task_container_defaults_json(),
                                                               pool.preemption_grace_seconds())},
        {"agent_reattach_enabled", true},
        {"agent_reconnect_wait",
         std::to_string(static_cast<int64_t>(config.agent_timeout_seconds)) + "s"}};
    if (pool.scheduler_from_pool()) shown["scheduler"] = SchedulerJson(pool.scheduler());
    pool_list.push_back(std::move(shown));
  }
  const char* authz = config.security.authz == events::AUTHZ_TYPE_RBAC ? "rbac" : "basic";
  nlohmann::json cluster_defaults = {{"cpu_pod_spec", nullptr},
                                     {"gpu_pod_spec", nullptr},
                                     {"bind_mounts", nlohmann::json::array()},
                                     {"startup_hook", ""}};
  if (auto shown = ShownTaskContainerDefaults(pools.task_container_defaults_json(),
                                              pools.preemption_grace_seconds());
      shown.is_object()) {
    cluster_defaults.update(shown);
  }
  return nlohmann::json{
      {"listen_address", config.listen_address},
      {"port", config.port},
      {"data_dir", config.data_dir},
      {"cluster_name", config.cluster_name},
      {"agent_timeout_seconds", config.agent_timeout_seconds},
      {"notebook_timeout", config.notebook_timeout_seconds},
      {"tensorboard_timeout", config.tensorboard_timeout_seconds},
      {"snapshots",
       {{"every_events", config.snapshots.every_events},
        {"write_side_every_events", config.snapshots.write_side_every_events},
        {"write_side_copy", config.snapshots.write_side_forks ? "fork" : "fold"},
        {"keep", config.snapshots.keep},
        {"catch_up_bulk_mib", config.snapshots.catch_up_bulk_mib}}},
      {"max_request_body_bytes", config.max_request_body_bytes},
      {"max_connections_per_address", config.max_connections_per_address},
      {"openpai", {{"default_fs_uri", config.openpai_default_fs_uri}}},
      {"retention_policy",
       {{"log_retention_days", config.retention.log_retention_days},
        {"log_max_task_bytes", config.retention.log_max_task_bytes},
        {"log_max_total_bytes", config.retention.log_max_total_bytes},
        {"schedule", config.retention.schedule.empty()
                         ? nlohmann::json()
                         : nlohmann::json(config.retention.schedule)}}},
      {"webhooks",
       {{"base_url", config.webhooks.base_url},
        {"signing_key", secret(config.webhooks.signing_key)},
        {"max_attempts", config.webhooks.max_attempts},
        {"first_retry_seconds", config.webhooks.first_retry_seconds},
        {"max_retry_seconds", config.webhooks.max_retry_seconds},
        {"timeout_seconds", config.webhooks.timeout_seconds}}},
      {"web", {{"root", config.web.root}, {"chart_js", config.web.chart_js}}},
      {"log", log},
      {"security",
       {{"initial_user_password", secret(config.security.initial_user_password)},
        {"session_lifetime_hours", config.security.session_lifetime_hours},
        {"max_failed_logins", config.security.max_failed_logins},
        {"failed_login_window_seconds", config.security.failed_login_window_seconds},
        {"agent_token", secret(config.security.agent_token)},
        {"tls", {{"cert", config.security.tls.cert}, {"key", secret(config.security.tls.key)}}},
        {"authz", {{"type", authz}}}}},
      {"resource_manager",
       {{"type", "agent"},
        {"name", "default"},
        {"cluster_name", config.cluster_name},
        {"scheduler", default_pool ? SchedulerJson(default_pool->scheduler()) : nullptr},
        {"default_compute_resource_pool", pools.default_compute_pool()},
        {"default_aux_resource_pool", pools.default_aux_pool()},
        {"no_default_resource_pools", false},
        {"require_authentication", true},
        {"client_ca", ""},
        {"metadata", nullptr}}},
      {"resource_pools", pool_list},
      {"checkpoint_storage", ShownStorage(config.checkpoint_storage)},
      {"task_container_defaults", cluster_defaults}}
      .dump();
}

}  // namespace cairn
