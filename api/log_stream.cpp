#include "api/log_stream.h"

#include <map>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

net::Response StreamTaskLogs(const Services& services, bool follow,
                             std::function<LogSources()> sources) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [task_logs = services.task_logs, stopping = services.stopping, follow,
                     sources = std::move(sources)](const net::ChunkWriter& write) {
    std::map<std::string, std::string> cursors;  // task id -> where its reading stopped
    int64_t line_number = 0;
    while (!stopping->load()) {
      uint64_t seen = task_logs->version();
      // Agents ship a task's last lines before they report its exit, so once the end is
      // visible, one more read returns everything there will ever be.
      LogSources now = sources();
      for (const auto& task_id : now.task_ids) {
        std::string& cursor = cursors[task_id];
        while (true) {
          auto lines = task_logs->Read(task_id, &cursor, 1000);
          if (!lines.ok()) {
            write(json{{"error", {{"message", lines.status().message()}}}}.dump() + "\n");
            return;
          }
          if (lines->empty()) break;
          std::string chunk;
          for (const auto& line : *lines) {
            json result = {
                {"id", std::to_string(line_number++)},
                {"taskId", task_id},
                {"allocationId", line.allocation_id},
                {"agentId", line.agent_id},
                {"timestamp", FormatRfc3339(line.timestamp_unix_micros)},
                {"level", line.stdtype == "stderr" ? "LOG_LEVEL_ERROR" : "LOG_LEVEL_INFO"},
                {"stdtype", line.stdtype},
                {"source", "task"},
                {"message", line.text},
                {"log", line.text}};
            if (now.trial_id != 0) result["trialId"] = now.trial_id;
            chunk += json{{"result", result}}.dump() + "\n";
          }
          if (!write(chunk)) return;
        }
      }
      if (!follow || now.ended) return;
      task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
      if (!write("")) return;
    }
  };
  return response;
}

}  // namespace cairn::api
