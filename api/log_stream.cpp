#include "api/log_stream.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "api/responses.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "base/encoding.h"
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

namespace {

// A gang part's lines carry its rank above the sequence number (agent/PROTOCOL.md).
int64_t RankOf(const TaskLogLine& line) { return line.seq >> 40; }

const char* LevelOf(const TaskLogLine* line, const MasterLine* master) {
  const bool error = line ? line->stdtype == "stderr" : master->error;
  return error ? "LOG_LEVEL_ERROR" : "LOG_LEVEL_INFO";
}

bool Holds(const std::set<std::string>& wanted, const std::string& value) {
  return wanted.empty() || wanted.count(value) > 0;
}

// Whether the line (a task's, or with `line` null the master's) passes the filter.
bool Passes(const LogFilter& filter, const TaskLogLine* line, const MasterLine* master) {
  if (filter.empty()) return true;
  const std::string& text = line ? line->text : master->text;
  const int64_t at = line ? line->timestamp_unix_micros : master->timestamp_unix_micros;
  const bool master_line = line == nullptr;
  // A master's line has no allocation, agent, container or rank: a filter on them drops it.
  if (!filter.allocation_ids.empty() &&
      (master_line || !Holds(filter.allocation_ids, line->allocation_id))) {
    return false;
  }
  if (!filter.agent_ids.empty() && (master_line || !Holds(filter.agent_ids, line->agent_id))) {
    return false;
  }
  if (!filter.container_ids.empty()) return false;  // Cairn's lines name no container
  if (!filter.rank_ids.empty() && (master_line || !filter.rank_ids.count(RankOf(*line)))) {
    return false;
  }
  if (!Holds(filter.levels, LevelOf(line, master)) ||
      !Holds(filter.stdtypes, line ? line->stdtype : "stdout") ||
      !Holds(filter.sources, master_line ? "master" : "task")) {
    return false;
  }
  if (filter.before_unix_micros && !(at < *filter.before_unix_micros)) return false;
  if (filter.after_unix_micros && !(at > *filter.after_unix_micros)) return false;
  if (filter.pattern) return re2::RE2::PartialMatch(text, *filter.pattern);
  if (!filter.search_text.empty()) {
    return AsciiLower(text).find(filter.search_text) != std::string::npos;
  }
  return true;
}

// A line's id (LogResume): its task's index, the master lines of the task sent, and the task
// line it is or follows, if any.
std::string LineId(size_t task_index, size_t master_lines_sent, const TaskLogLine* after) {
  std::string id = std::to_string(task_index) + "." + std::to_string(master_lines_sent);
  if (after != nullptr) id += "." + std::to_string(after->seq) + "." + after->allocation_id;
  return id;
}

Result<LogResume> ParseLineId(const std::string& id) {
  const Status bad = Status::InvalidArgument("afterId: '" + id.substr(0, 100) +
                                             "' is not the id of a line of a log stream");
  LogResume resume;
  size_t at = 0;
  auto number = [&](uint64_t* out) {
    const size_t dot = id.find('.', at);
    const std::string part = id.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (part.empty() || part.size() > 18 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *out = std::stoull(part);
    at = dot == std::string::npos ? id.size() : dot + 1;
    return dot != std::string::npos || at == id.size();
  };
  uint64_t index = 0, sent = 0, seq = 0;
  if (!number(&index) || !number(&sent)) return bad;
  resume.task_index = index;
  resume.master_lines_sent = sent;
  if (at < id.size()) {
    if (!number(&seq) || at > id.size()) return bad;
    resume.after_line = std::make_pair(static_cast<int64_t>(seq), id.substr(at));
  }
  return resume;
}

// One line as Determined streams it; allocation and agent are null for the master's own.
std::string LineRecord(const std::string& id, const std::string& task_id, const TaskLogLine* line,
                       const MasterLine* master, int64_t trial_id) {
  const std::string& text = line ? line->text : master->text;
  json result = {{"id", id},
                 {"taskId", task_id},
                 {"allocationId", line ? json(line->allocation_id) : json(nullptr)},
                 {"agentId", line ? json(line->agent_id) : json(nullptr)},
                 {"timestamp", FormatRfc3339(line ? line->timestamp_unix_micros
                                                  : master->timestamp_unix_micros)},
                 {"level", LevelOf(line, master)},
                 {"stdtype", line ? line->stdtype : "stdout"},
                 {"source", line ? "task" : "master"},
                 {"message", text},
                 {"log", text}};
  if (trial_id != 0) result["trialId"] = trial_id;
  if (line != nullptr) result["rankId"] = RankOf(*line);
  return json{{"result", result}}.dump() + "\n";
}

// Hands the task's lines after `*cursor` to `each`, a batch at a time, until none are left or
// `each` says stop (then false). A store error writes Determined's error line and is false too.
bool ForEachNewBatch(TaskLogStore& task_logs, const std::string& task_id, std::string* cursor,
                     const net::ChunkWriter& write,
                     const std::function<bool(const std::vector<TaskLogLine>&)>& each) {
  while (true) {
    auto lines = task_logs.Read(task_id, cursor, 1000);
    if (!lines.ok()) {
      write(json{{"error", {{"message", lines.status().message()}}}}.dump() + "\n");
      return false;
    }
    if (lines->empty()) return true;
    if (!each(*lines)) return false;
  }
}

}  // namespace

bool LogFilter::empty() const {
  return allocation_ids.empty() && agent_ids.empty() && container_ids.empty() && levels.empty() &&
         stdtypes.empty() && sources.empty() && rank_ids.empty() && !before_unix_micros &&
         !after_unix_micros && search_text.empty() && !pattern;
}

namespace {

// A repeated query parameter, as grpc-gateway reads them: `agentIds=a&agentIds=b`.
std::set<std::string> Values(const net::Request& request, const std::string& name) {
  std::set<std::string> values;
  for (auto& value : request.QueryParams(name)) {
    if (!value.empty()) values.insert(std::move(value));
  }
  return values;
}

Result<LogFilter> ParseLogFilter(const net::Request& request) {
  LogFilter filter;
  filter.allocation_ids = Values(request, "allocationIds");
  filter.agent_ids = Values(request, "agentIds");
  filter.container_ids = Values(request, "containerIds");
  filter.stdtypes = Values(request, "stdtypes");
  filter.sources = Values(request, "sources");
  static const std::set<std::string> kLevels = {
      "LOG_LEVEL_UNSPECIFIED", "LOG_LEVEL_TRACE", "LOG_LEVEL_DEBUG",   "LOG_LEVEL_INFO",
      "LOG_LEVEL_WARNING",     "LOG_LEVEL_ERROR", "LOG_LEVEL_CRITICAL"};
  for (const auto& level : Values(request, "levels")) {
    if (!kLevels.count(level)) {
      return Status::InvalidArgument(
          "levels: expected LOG_LEVEL_TRACE, _DEBUG, _INFO, _WARNING, "
          "_ERROR or _CRITICAL, got '" +
          level + "'");
    }
    filter.levels.insert(level);
  }
  for (const auto& rank : Values(request, "rankIds")) {
    if (rank.size() > 9 || rank.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("rankIds: expected whole numbers, got '" + rank + "'");
    }
    filter.rank_ids.insert(std::stoll(rank));
  }
  CAIRN_ASSIGN_OR_RETURN(filter.before_unix_micros, OptionalTimeParam(request, "timestampBefore"));
  CAIRN_ASSIGN_OR_RETURN(filter.after_unix_micros, OptionalTimeParam(request, "timestampAfter"));
  const std::string search = request.QueryParam("searchText");
  if (request.QueryParam("enableRegex") == "true" && !search.empty()) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    auto pattern = std::make_shared<const re2::RE2>(search, options);
    if (!pattern->ok()) {
      return Status::InvalidArgument("searchText: not a regular expression: " + pattern->error());
    }
    filter.pattern = std::move(pattern);
  } else {
    filter.search_text = AsciiLower(search);
  }
  return filter;
}

}  // namespace

Result<LogWindow> ParseLogWindow(const net::Request& request) {
  LogWindow window;
  const std::string limit = request.QueryParam("limit");
  if (!limit.empty()) {
    if (limit.size() > 9 || limit.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("limit: expected a whole number of lines, got '" + limit +
                                     "'");
    }
    window.limit = std::stoul(limit);
  }
  CAIRN_ASSIGN_OR_RETURN(window.filter, ParseLogFilter(request));
  const std::string order = request.QueryParam("orderBy");
  if (order == "ORDER_BY_DESC" || order == "2") {
    window.newest_first = true;
  } else if (!order.empty() && order != "ORDER_BY_ASC" && order != "1" &&
             order != "ORDER_BY_UNSPECIFIED" && order != "0") {
    return Status::InvalidArgument("orderBy: expected ORDER_BY_ASC or ORDER_BY_DESC, got '" +
                                   order + "'");
  }
  if (const std::string after = request.QueryParam("afterId"); !after.empty()) {
    if (window.newest_first) {
      return Status::InvalidArgument("afterId resumes a stream in order; not with ORDER_BY_DESC");
    }
    CAIRN_ASSIGN_OR_RETURN(window.resume, ParseLineId(after));
  }
  return window;
}

net::Response StreamTaskLogs(const Services& services, bool follow, LogWindow window,
                             std::function<LogSources()> sources) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [task_logs = services.task_logs, stopping = services.stopping, follow, window,
                     sources = std::move(sources)](const net::ChunkWriter& write) {
    std::map<std::string, std::string> cursors;          // task id -> where its reading stopped
    std::set<std::pair<std::string, std::string>> sent;  // master lines out: task id, key
    std::map<std::string, size_t> master_sent;           // task id -> how many of its master lines
    std::map<std::string, TaskLogLine> last_read;        // task id -> its latest line read
    bool resumed = !window.resume;
    // Newest first: every record is kept, the last `limit` go out at the end, newest first.
    std::vector<std::string> newest;
    size_t written = 0;
    // False once the window is full (the stream ends) or the client is gone.
    auto emit = [&](std::string record) {
      if (window.newest_first) {
        newest.push_back(std::move(record));
        return true;
      }
      ++written;
      return write(record) && (window.limit == 0 || written < window.limit);
    };
    auto finish = [&] {
      if (!window.newest_first) return;
      const size_t keep = window.limit == 0 ? newest.size() : std::min(window.limit, newest.size());
      std::string chunk;
      for (size_t i = 0; i < keep; ++i) chunk += newest[newest.size() - 1 - i];
      write(chunk);
    };
    while (!stopping->load()) {
      uint64_t seen = task_logs->version();
      // Agents ship a task's last lines before they report its exit, so once the end is
      // visible, one more read returns everything there will ever be.
      LogSources now = sources();
      // A resumed stream starts where the line it names left the tasks before and at it.
      if (!resumed) {
        const LogResume& resume = *window.resume;
        for (size_t i = 0; i < now.task_ids.size() && i <= resume.task_index; ++i) {
          const std::string& task_id = now.task_ids[i];
          const auto& lines = now.master_lines[task_id];
          const size_t done = i < resume.task_index
                                  ? lines.size()
                                  : std::min(lines.size(), resume.master_lines_sent);
          for (size_t k = 0; k < done; ++k) sent.emplace(task_id, lines[k].key);
          master_sent[task_id] = done;
          if (i < resume.task_index) {
            cursors[task_id] = TaskLogStore::CursorPastTask(task_id);
          } else if (resume.after_line) {
            cursors[task_id] = TaskLogStore::CursorAfter(task_id, resume.after_line->second,
                                                         resume.after_line->first);
            TaskLogLine& last = last_read[task_id];
            last.seq = resume.after_line->first;
            last.allocation_id = resume.after_line->second;
          }
        }
        resumed = now.task_ids.size() > resume.task_index;
        if (!resumed) {  // its task is not among the sources yet
          if (!follow || now.ended) return finish();
          task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
          if (!write("")) return;
          continue;
        }
      }
      for (size_t index = 0; index < now.task_ids.size(); ++index) {
        const std::string& task_id = now.task_ids[index];
        auto line_id = [&](const TaskLogLine* after) {
          return LineId(index, master_sent[task_id], after);
        };
        const bool read = ForEachNewBatch(
            *task_logs, task_id, &cursors[task_id], write,
            [&](const std::vector<TaskLogLine>& lines) {
              if (!lines.empty()) last_read[task_id] = lines.back();
              if (window.limit == 0 && !window.newest_first) {  // all of it: a write a batch
                std::string chunk;
                for (const auto& line : lines) {
                  if (!Passes(window.filter, &line, nullptr)) continue;
                  chunk += LineRecord(line_id(&line), task_id, &line, nullptr, now.trial_id);
                }
                return chunk.empty() || write(chunk);
              }
              for (const auto& line : lines) {
                if (!Passes(window.filter, &line, nullptr)) continue;
                if (!emit(LineRecord(line_id(&line), task_id, &line, nullptr, now.trial_id))) {
                  return false;
                }
              }
              return true;
            });
        if (!read) return;
        auto master_lines = now.master_lines.find(task_id);
        if (master_lines == now.master_lines.end()) continue;
        for (const auto& line : master_lines->second) {
          if (!sent.emplace(task_id, line.key).second) continue;
          ++master_sent[task_id];
          if (!Passes(window.filter, nullptr, &line)) continue;
          auto last = last_read.find(task_id);
          const std::string id = line_id(last == last_read.end() ? nullptr : &last->second);
          if (!emit(LineRecord(id, task_id, nullptr, &line, now.trial_id))) return;
        }
      }
      if (!follow || now.ended) return finish();
      task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
      if (!write("")) return;
    }
  };
  return response;
}

net::Response SearchTaskLogs(const Services& services,
                             const std::vector<std::pair<std::string, int64_t>>& tasks,
                             const std::string& search_text, size_t limit) {
  std::vector<std::string> task_ids;
  std::map<std::string, int64_t> trial_of;
  for (const auto& [task_id, trial_id] : tasks) {
    task_ids.push_back(task_id);
    trial_of[task_id] = trial_id;
  }
  auto found = services.task_logs->Search(task_ids, search_text, limit);
  if (!found.ok()) return Error(found.status());
  net::Response response;
  response.content_type = "application/x-ndjson";
  for (const TaskLogLine& line : *found) {
    // A found line's id resumes nothing: it is its task's and place's.
    response.body +=
        LineRecord(line.task_id + "/" + line.allocation_id + "/" + std::to_string(line.seq),
                   line.task_id, &line, nullptr, trial_of[line.task_id]);
  }
  return response;
}

net::Response StreamTaskLogFields(const Services& services, bool follow, std::string task_id,
                                  std::function<LogSources()> sources) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [task_logs = services.task_logs, stopping = services.stopping, follow,
                     task_id = std::move(task_id),
                     sources = std::move(sources)](const net::ChunkWriter& write) {
    std::string cursor;
    std::set<std::string> allocations, agents, stdtypes, origins = {"task"};
    std::set<int64_t> ranks;
    std::string last_sent;
    while (!stopping->load()) {
      const uint64_t seen = task_logs->version();
      const LogSources now = sources();  // before reading: once ended, every line is in
      const bool read = ForEachNewBatch(*task_logs, task_id, &cursor, write,
                                        [&](const std::vector<TaskLogLine>& lines) {
                                          for (const auto& line : lines) {
                                            allocations.insert(line.allocation_id);
                                            agents.insert(line.agent_id);
                                            stdtypes.insert(line.stdtype);
                                            // A gang part's lines carry its rank
                                            // (agent/PROTOCOL.md).
                                            ranks.insert(RankOf(line));
                                          }
                                          return true;
                                        });
      if (!read) return;
      // The master's lines (TaskMasterLines), streamed with the task's.
      if (auto master = now.master_lines.find(task_id);
          master != now.master_lines.end() && !master->second.empty()) {
        origins.insert("master");
      }
      const std::string message = json{{"result",
                                        {{"allocationIds", allocations},
                                         {"agentIds", agents},
                                         {"containerIds", json::array()},
                                         {"rankIds", ranks},
                                         {"stdtypes", stdtypes},
                                         {"sources", origins}}}}
                                      .dump() +
                                  "\n";
      if (message != last_sent) {
        if (!write(message)) return;
        last_sent = message;
      }
      if (!follow || now.ended) return;
      task_logs->WaitForAppend(seen, std::chrono::milliseconds(250));
      if (!write("")) return;
    }
  };
  return response;
}

}  // namespace cairn::api
