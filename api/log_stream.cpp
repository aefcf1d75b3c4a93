#include "api/log_stream.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/clock.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

std::vector<MasterLine> TaskMasterLines(const views::TaskView& task) {
  std::vector<MasterLine> lines;
  const std::string name = task.description().empty() ? task.task_id() : task.description();
  if (task.ready_time_unix_micros() != 0) {
    const int64_t at = task.ready_time_unix_micros();
    if (task.task_type() == events::TASK_TYPE_NOTEBOOK) {
      lines.push_back(
          {"jupyter",
           "Jupyter Server (" + name + ") is running at: /proxy/" + task.task_id() + "/\n", false,
           at});
    }
    lines.push_back({"ready", "Service of " + name + " is available\n", false, at});
  }
  if (task.state() != views::TASK_STATE_TERMINATED) return lines;
  const int64_t at = task.end_time_unix_micros();
  if (task.start_time_unix_micros() == 0) {
    // It never ran: nothing exited.
    lines.push_back({"terminated",
                     name + " was terminated: " +
                         (task.exit_reason().empty() ? "it never started" : task.exit_reason()) +
                         "\n",
                     !task.kill_requested(), at});
    return lines;
  }
  const bool success = task.has_exit_code() && task.exit_code() == 0;
  std::string stopped;
  if (success) {
    stopped = "resources exited successfully with a zero exit code";
  } else {
    const int code = task.has_exit_code() ? task.exit_code()
                     : task.has_signal()  ? 128 + task.signal()
                                          : -1;
    stopped = "resources failed with non-zero exit code: " +
              (task.exit_reason().empty() ? std::string("the task failed") : task.exit_reason()) +
              " (exit code " + std::to_string(code) + ")";
  }
  if (task.kill_requested()) {
    lines.push_back({"exited", "killed: " + stopped + "\n", false, at});
  } else if (success) {
    lines.push_back({"exited", stopped + "\n", false, at});
  } else {
    lines.push_back({"exited", "crashed: " + stopped + "\n", true, at});
  }
  lines.push_back({"terminated",
                   name + " was terminated: " +
                       (success ? "allocation stopped early after all resources exited: " : "") +
                       stopped + "\n",
                   !success && !task.kill_requested(), at});
  return lines;
}

net::Response StreamTaskLogs(const Services& services, bool follow,
                             std::function<LogSources()> sources) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [task_logs = services.task_logs, stopping = services.stopping, follow,
                     sources = std::move(sources)](const net::ChunkWriter& write) {
    std::map<std::string, std::string> cursors;          // task id -> where its reading stopped
    std::set<std::pair<std::string, std::string>> sent;  // master lines out: task id, key
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
        auto master_lines = now.master_lines.find(task_id);
        if (master_lines == now.master_lines.end()) continue;
        std::string chunk;
        for (const auto& line : master_lines->second) {
          if (!sent.emplace(task_id, line.key).second) continue;
          json result = {{"id", std::to_string(line_number++)},
                         {"taskId", task_id},
                         {"allocationId", nullptr},
                         {"agentId", nullptr},
                         {"timestamp", FormatRfc3339(line.timestamp_unix_micros)},
                         {"level", line.error ? "LOG_LEVEL_ERROR" : "LOG_LEVEL_INFO"},
                         {"stdtype", "stdout"},
                         {"source", "master"},
                         {"message", line.text},
                         {"log", line.text}};
          if (now.trial_id != 0) result["trialId"] = now.trial_id;
          chunk += json{{"result", result}}.dump() + "\n";
        }
        if (!chunk.empty() && !write(chunk)) return;
      }
      if (!follow || now.ended) return;
      task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
      if (!write("")) return;
    }
  };
  return response;
}

net::Response StreamTaskLogFields(const Services& services, bool follow, std::string task_id,
                                  std::function<bool()> ended) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [task_logs = services.task_logs, stopping = services.stopping, follow,
                     task_id = std::move(task_id),
                     ended = std::move(ended)](const net::ChunkWriter& write) {
    std::string cursor;
    std::set<std::string> allocations, agents, stdtypes, sources = {"task"};
    std::set<int64_t> ranks;
    std::string last_sent;
    while (!stopping->load()) {
      const uint64_t seen = task_logs->version();
      const bool over = ended();  // before reading: every line is in by then
      while (true) {
        auto lines = task_logs->Read(task_id, &cursor, 1000);
        if (!lines.ok()) {
          write(json{{"error", {{"message", lines.status().message()}}}}.dump() + "\n");
          return;
        }
        if (lines->empty()) break;
        for (const auto& line : *lines) {
          allocations.insert(line.allocation_id);
          agents.insert(line.agent_id);
          stdtypes.insert(line.stdtype);
          ranks.insert(line.seq >> 40);  // a gang part's lines carry its rank (agent/PROTOCOL.md)
        }
      }
      if (over) sources.insert("master");  // the closing lines (TaskClosingLines)
      const std::string message = json{{"result",
                                        {{"allocationIds", allocations},
                                         {"agentIds", agents},
                                         {"containerIds", json::array()},
                                         {"rankIds", ranks},
                                         {"stdtypes", stdtypes},
                                         {"sources", sources}}}}
                                      .dump() +
                                  "\n";
      if (message != last_sent) {
        if (!write(message)) return;
        last_sent = message;
      }
      if (!follow || over) return;
      task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
      if (!write("")) return;
    }
  };
  return response;
}

}  // namespace cairn::api
