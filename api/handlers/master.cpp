#include "api/handlers/master.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>

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

net::Response MasterInfo(Call& call) {
  const Services& services = call.services();
  const MasterFacts& facts = services.facts;
  return Ok({{"version", kDeterminedApiVersion},
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
