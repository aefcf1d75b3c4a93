#include "api/master_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace cairn {

namespace {

std::string Where(const std::string& source, const YAML::Node& node, const std::string& field) {
  return source + ":" + std::to_string(node.Mark().line + 1) + ": " + field;
}

Status CheckKeys(const std::string& source, const YAML::Node& map, const std::string& prefix,
                 const std::set<std::string>& known) {
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) {
      return Status::InvalidArgument(source + ":" + std::to_string(entry.first.Mark().line + 1) +
                                     ": " + prefix + "<key>: a key must be a plain name");
    }
    std::string key = entry.first.Scalar();
    if (known.count(key)) continue;
    if (prefix.empty() && (key == "resource_manager" || key == "resource_pools" ||
                           key == "scheduler" || key == "provisioner")) {
      return Status::NotSupported(Where(source, entry.first, key) +
                                  ": resource pools and scheduler settings are not supported "
                                  "yet; every agent joins the pool it names");
    }
    return Status::InvalidArgument(Where(source, entry.first, prefix + key) + ": unknown field");
  }
  return Status::Ok();
}

template <typename T>
Result<T> Scalar(const std::string& source, const YAML::Node& node, const std::string& field,
                 const char* expected) {
  if (!node.IsScalar()) {
    return Status::InvalidArgument(Where(source, node, field) + ": expected " + expected);
  }
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return Status::InvalidArgument(Where(source, node, field) + ": expected " + expected +
                                   ", got '" + node.Scalar() + "'");
  }
}

}  // namespace

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
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) +
                                   ": not valid YAML: " + e.msg);
  }
  MasterConfig config;
  if (root.IsNull())
    return Status::InvalidArgument(source_name + ": empty config; data_dir is required");
  if (!root.IsMap()) return Status::InvalidArgument(source_name + ": expected a map at the top");
  CAIRN_RETURN_IF_ERROR(CheckKeys(source_name, root, "",
                                  {"port", "listen_address", "data_dir", "log", "cluster_name",
                                   "agent_timeout_seconds", "max_request_body_bytes"}));
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
  config.log.data_dir = config.data_dir;
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
