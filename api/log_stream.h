// Task logs as Determined streams them (NDJSON lines {"result": {...}}), for one task or for the
// runs of a trial one after another. Shared by the task and trial log endpoints.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/services.h"
#include "net/http_types.h"
#include "views.pb.h"

namespace cairn::api {

// A line the master itself writes into a task's log (Determined's source "master").
struct MasterLine {
  std::string key;   // streamed once per key
  std::string text;  // with its trailing newline
  bool error = false;
  int64_t timestamp_unix_micros = 0;
};

// The master's lines of a task so far, which Determined's users' scripts and tools wait for:
// once a notebook, shell or TensorBoard is ready, "Service of <name> is available" (and for a
// notebook the readiness line Determined's images print, "Jupyter Server ... is running at: ...");
// once it ended, how its resources exited ("resources exited successfully with a zero exit
// code", "crashed: resources failed with non-zero exit code: ... (exit code N)", "killed: ..."),
// then "<name> was terminated: ...".
std::vector<MasterLine> TaskMasterLines(const views::TaskView& task);

struct LogSources {
  std::vector<std::string> task_ids;  // in order; a later call may add to the end
  bool ended = false;                 // no more lines will come once these are read
  int64_t trial_id = 0;               // set for a trial's logs: each line names it (Determined's
                                      // CLI reads `trialId` of every trial log line)
  // The master's lines of each task (TaskMasterLines), each streamed once after the task's own
  // lines that were there when it was seen.
  std::map<std::string, std::vector<MasterLine>> master_lines;
};

// Which lines a log request wants, as Determined's CLI asks (`det task logs --head N` sends
// limit=N; `--tail N` limit=N&orderBy=ORDER_BY_DESC and reverses what it gets): the first
// `limit` lines (0 = all), or with `newest_first` the last `limit`, newest first.
// And which lines at all, by Determined's filters (GetTaskLogs/GetTrialLogs): each list keeps the
// lines whose field is one of its values (a line without the field, such as a master's line
// without an allocation, agent, container or rank, is not); lists combine with AND.
// timestampBefore/After keep lines strictly before/after; searchText keeps lines holding it
// (case-insensitive), or matching it as an RE2 pattern with enableRegex=true.
struct LogFilter {
  std::set<std::string> allocation_ids, agent_ids, container_ids, levels, stdtypes, sources;
  std::set<int64_t> rank_ids;
  std::optional<int64_t> before_unix_micros, after_unix_micros;
  std::string search_text;                  // lower-cased unless `pattern` is set
  std::shared_ptr<const re2::RE2> pattern;  // searchText with enableRegex
  bool empty() const;
};
// Where a stream resumes (`afterId`, Cairn's own): after the line whose `id` it is. A line's id
// names its place: "<task's index among the sources>.<master lines of that task sent>" then, for
// a task line or when the task had lines before a master line, ".<seq>.<allocation id>". A
// follower whose connection broke (a master restart) asks again with its last line's id and
// gets every later line once, in order.
struct LogResume {
  size_t task_index = 0;
  size_t master_lines_sent = 0;
  std::optional<std::pair<int64_t, std::string>> after_line;  // (seq, allocation id)
};
struct LogWindow {
  size_t limit = 0;
  bool newest_first = false;
  LogFilter filter;
  std::optional<LogResume> resume;
};
// InvalidArgument naming the parameter for a limit that is not a whole number, an orderBy
// that is not ORDER_BY_ASC, ORDER_BY_DESC or ORDER_BY_UNSPECIFIED, a rank that is not a whole
// number, a level that is not one of Determined's (LOG_LEVEL_*), a timestamp that is not RFC
// 3339, a searchText that is not a regular expression when enableRegex=true, or an afterId that
// is no line's id (afterId with orderBy=ORDER_BY_DESC too).
Result<LogWindow> ParseLogWindow(const net::Request& request);

// Streams every line of the sources' tasks in order (within `window`). With `follow`, keeps
// going (calling `sources` again to see new tasks and the end) until the sources have ended and
// every line is out, or the master stops; without, returns what is there now.
net::Response StreamTaskLogs(const Services& services, bool follow, LogWindow window,
                             std::function<LogSources()> sources);

// The lines of `tasks` (each a task id and the trial it is a run of) whose text holds
// `search_text` (ASCII letters in either case), at most `limit` (0: all), as NDJSON log lines
// ({"result": {...}} with trialId) in the tasks' order. TaskLogStore::Search scans them.
net::Response SearchTaskLogs(const Services& services,
                             const std::vector<std::pair<std::string, int64_t>>& tasks,
                             const std::string& search_text, size_t limit);

// The values of a task's log lines that `det task logs` filters by (Determined's
// TaskLogsFieldsResponse: allocationIds, agentIds, containerIds, rankIds, stdtypes, sources) as
// one NDJSON message; with `follow`, again each time they change, until `sources` (the same as
// the task's log stream's) says the task has ended and its lines are read.
net::Response StreamTaskLogFields(const Services& services, bool follow, std::string task_id,
                                  std::function<LogSources()> sources);

}  // namespace cairn::api
