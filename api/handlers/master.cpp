#include "api/handlers/master.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>

#include "api/rest_util.h"
#include "base/clock.h"
#include "base/log.h"

namespace cairn::api {

using nlohmann::json;

net::Response Metrics(Call& call) {
  if (!call.services().metrics) return Error(Status::NotSupported("this master has no metrics"));
  net::Response response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = call.services().metrics();
  return response;
}

net::Response Info(Call& call) {
  const MasterFacts& facts = call.services().facts;
  return Ok({{"version", kDeterminedApiVersion},
             {"master_id", facts.master_id},
             {"cluster_id", facts.cluster_name},
             {"cluster_name", facts.cluster_name},
             {"telemetry", {{"enabled", false}}},
             {"sso_providers", json::array()},
             {"rbac_enabled", call.tenancy().RolesApply()},
             {"cairn_version", kCairnVersion}});
}

namespace {

json ClusterMessageJson(const views::ClusterMessageView& message) {
  return {{"message", message.message()},
          {"startTime", FormatRfc3339(message.start_unix_micros())},
          {"endTime", message.end_unix_micros() ? json(FormatRfc3339(message.end_unix_micros()))
                                                : json(nullptr)},
          {"createdTime", FormatRfc3339(message.created_unix_micros())}};
}

// The cluster message showing at `now`: started and not ended.
json ActiveClusterMessage(Call& call, int64_t now) {
  auto message = call.services().projections->GetClusterMessage();
  if (!message.ok() || !*message) return nullptr;
  const views::ClusterMessageView& view = **message;
  const bool ended = view.end_unix_micros() != 0 && view.end_unix_micros() <= now;
  if (view.start_unix_micros() > now || ended) return nullptr;
  return ClusterMessageJson(view);
}

}  // namespace

net::Response MasterInfo(Call& call) {
  const Services& services = call.services();
  const MasterFacts& facts = services.facts;
  return Ok({{"version", kDeterminedApiVersion},
             {"clusterMessage", ActiveClusterMessage(call, NowUnixMicros())},
             {"masterId", facts.master_id},
             {"clusterId", facts.cluster_name},
             {"clusterName", facts.cluster_name},
             {"strictJobQueueControl", false},
             {"hasCustomLogo", false},
             {"telemetryEnabled", false},
             {"rbacEnabled", call.tenancy().RolesApply()},
             {"product", "PRODUCT_UNSPECIFIED"},
             {"cairn",
              {{"version", kCairnVersion},
               {"log", services.log->Describe()},
               {"writerEpoch", services.writer->writer_epoch()},
               {"appliedOffset", std::to_string(services.projections->AppliedOffset())}}}});
}

net::Response MasterConfigRoute(Call& call) {
  if (Status admin = call.RequireAdmin("read the master's configuration"); !admin.ok()) {
    return Error(admin);
  }
  return Ok({{"config", json::parse(call.services().facts.config_json, nullptr, false)}});
}

namespace {

const char* LogLevelJson(log::Level level) {
  switch (level) {
    case log::Level::kTrace:
      return "LOG_LEVEL_TRACE";
    case log::Level::kDebug:
      return "LOG_LEVEL_DEBUG";
    case log::Level::kWarn:
      return "LOG_LEVEL_WARNING";
    case log::Level::kError:
      return "LOG_LEVEL_ERROR";
    default:
      return "LOG_LEVEL_INFO";
  }
}

Result<int64_t> QueryInt(const net::Request& request, const char* name) {
  const std::string text = request.QueryParam(name);
  if (text.empty()) return 0;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(std::string(name) + ": an integer, not '" + text + "'");
  }
  return value;
}

}  // namespace

net::Response SetClusterMessageRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto message = GetString(*body, "message", "message", true);
  if (!message.ok()) return Error(message.status());
  const int64_t now = NowUnixMicros();
  commands::SetClusterMessage set;
  set.message = *message;
  set.start_unix_micros = now;
  auto time_of = [&](const char* key) -> Result<std::optional<int64_t>> {
    CAIRN_ASSIGN_OR_RETURN(auto text, OptionalString(*body, key));
    if (!text) return std::optional<int64_t>();
    auto micros = ParseTimeToUnixMicros(*text);
    if (!micros.ok()) {
      return Status::InvalidArgument(std::string(key) + ": " + micros.status().message());
    }
    return std::optional<int64_t>(*micros);
  };
  auto start = time_of("startTime");
  if (!start.ok()) return Error(start.status());
  if (*start) set.start_unix_micros = **start;
  auto end = time_of("endTime");
  if (!end.ok()) return Error(end.status());
  auto duration = OptionalString(*body, "duration");
  if (!duration.ok()) return Error(duration.status());
  if (*end && *duration) {
    return Error(Status::InvalidArgument("EndTime and Duration are mutually exclusive"));
  }
  if (*end) set.end_unix_micros = **end;
  if (*duration) {
    auto micros = ParseGoDuration(**duration);
    if (!micros.ok() || *micros < 0) {
      return Error(Status::InvalidArgument(
          "Duration must be a Go-formatted duration string with a positive value (such as 24h "
          "or 90m)"));
    }
    set.end_unix_micros = set.start_unix_micros + *micros;
  }
  auto outcome = call.ExecuteAndShow(std::move(set));
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response CleanupLogsRoute(Call& call) {
  if (Status may = call.RequireAdmin("clean up task logs"); !may.ok()) return Error(may);
  if (!call.services().cleanup_logs) {
    return Error(Status::NotSupported("this master keeps no task logs to clean up"));
  }
  auto removed = call.services().cleanup_logs(call.UserActor());
  if (!removed.ok()) return Error(removed.status());
  return Ok({{"removedCount", std::to_string(*removed)}});
}

net::Response GetClusterMessageRoute(Call& call) {
  if (Status may = call.RequireAdmin("read the cluster message's settings"); !may.ok()) {
    return Error(may);
  }
  auto message = call.services().projections->GetClusterMessage();
  if (!message.ok()) return Error(message.status());
  const bool ended = *message && (*message)->end_unix_micros() != 0 &&
                     (*message)->end_unix_micros() <= NowUnixMicros();
  if (!*message || ended) return Ok({{"clusterMessage", nullptr}});
  return Ok({{"clusterMessage", ClusterMessageJson(**message)}});
}

net::Response ClearClusterMessageRoute(Call& call) {
  commands::SetClusterMessage clear;
  clear.clear = true;
  auto outcome = call.ExecuteAndShow(std::move(clear));
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response PatchMasterConfig(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  // The field mask as an object {paths: [...]} (Determined's CLI) or grpc-gateway's "a,b".
  std::vector<std::string> paths;
  const json mask = body->value("fieldMask", json());
  if (mask.is_object() && mask.value("paths", json()).is_array()) {
    for (const json& path : mask["paths"]) {
      if (path.is_string()) paths.push_back(path.get<std::string>());
    }
  } else if (mask.is_string()) {
    std::string text = mask.get<std::string>();
    for (size_t start = 0; start <= text.size();) {
      const size_t comma = std::min(text.find(',', start), text.size());
      if (comma > start) paths.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (paths.empty()) {
    return Error(Status::InvalidArgument("fieldMask: name log.level or log.color"));
  }
  std::optional<log::Level> level;
  for (const std::string& path : paths) {
    if (path == "log.color") continue;
    if (path != "log.level") {
      return Error(Status::NotSupported("master config field " + path.substr(0, 60) +
                                        " is not supported; log.level and log.color are"));
    }
    const std::string name = body->value("config", json::object())
                                 .value("log", json::object())
                                 .value("level", std::string());
    static const std::pair<const char*, log::Level> kLevels[] = {
        {"LOG_LEVEL_TRACE", log::Level::kTrace}, {"LOG_LEVEL_DEBUG", log::Level::kDebug},
        {"LOG_LEVEL_INFO", log::Level::kInfo},   {"LOG_LEVEL_WARNING", log::Level::kWarn},
        {"LOG_LEVEL_ERROR", log::Level::kError}, {"LOG_LEVEL_CRITICAL", log::Level::kError}};
    for (const auto& [known, value] : kLevels) {
      if (name == known) level = value;
    }
    if (!level) {
      return Error(Status::InvalidArgument("config.log.level: '" + name.substr(0, 40) +
                                           "' is not one of LOG_LEVEL_TRACE, DEBUG, INFO, "
                                           "WARNING, ERROR, CRITICAL"));
    }
  }
  if (!level) return Ok(json::object());
  commands::ChangeMasterLogLevel change;
  change.master_id = call.services().facts.master_id;
  change.level = log::LevelNames()[static_cast<size_t>(*level)];
  auto outcome = call.Execute(std::move(change));
  if (!outcome.ok()) return Error(outcome.status());
  log::SetLevel(*level);
  log::Warn("master", "log level set to {} by {} until the master restarts",
            log::LevelNames()[static_cast<size_t>(*level)], call.user().username);
  return Ok(json::object(), outcome->offset);
}

net::Response MasterLogs(Call& call) {
  if (Status admin = call.RequireAdmin("read the master's logs"); !admin.ok()) return Error(admin);
  auto offset = QueryInt(call.request(), "offset");
  auto limit = QueryInt(call.request(), "limit");
  if (!offset.ok()) return Error(offset.status());
  if (!limit.ok()) return Error(limit.status());
  if (*limit < 0) return Error(Status::InvalidArgument("limit: must not be negative"));
  const bool follow = call.request().QueryParam("follow") == "true";
  // Determined's offset skips that many lines from the start, or keeps that many from the end
  // when negative (det master logs --tail N).
  const int64_t newest = log::LastLineId();
  const int64_t after = *offset >= 0 ? *offset : std::max<int64_t>(0, newest + *offset);
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [after, remaining = *limit == 0 ? INT64_MAX : *limit, follow,
                     stopping = call.services().stopping](const net::ChunkWriter& write) mutable {
    int64_t last = after;
    while (remaining > 0) {
      auto lines = log::RecentLines(last, static_cast<size_t>(std::min<int64_t>(remaining, 500)));
      for (const auto& line : lines) {
        json entry = {{"logEntry",
                       {{"id", line.id},
                        {"timestamp", FormatRfc3339(line.time_unix_micros)},
                        {"level", LogLevelJson(line.level)},
                        {"message", line.text}}}};
        if (!write(json{{"result", entry}}.dump() + "\n")) return;
        last = line.id;
        --remaining;
      }
      if (!lines.empty()) continue;
      if (!follow || (stopping != nullptr && stopping->load())) return;
      // Wakes for a new line, and at least every second to notice a client that went away.
      if (!log::WaitForLineAfter(last, std::chrono::seconds(1)) && !write("")) return;
    }
  };
  return response;
}

}  // namespace cairn::api
