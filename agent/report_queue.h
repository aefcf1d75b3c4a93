// The order in which an agent's reports reach the master (PROTOCOL.md §4): task log lines in
// batches, and started/exited reports that never overtake the lines queued before them, so an
// exit is reported only after the task's last lines were shipped. Items are split by allocation
// id into lanes that may be sent in parallel; each lane is a FIFO. Pure logic with time passed
// in; not thread-safe (the Reporter guards it).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cairn::agent {

struct TaskLogLine {
  std::string task_id;
  std::string allocation_id;
  uint64_t seq = 0;
  std::string stdtype;  // "stdout" | "stderr"
  std::string text;
  int64_t unix_micros = 0;
};

struct StartedReport {
  std::string allocation_id;
  std::string task_id;
  int pid = 0;
};

// A notebook's, shell's or TensorBoard's service answers (the agent probed it).
struct ReadyReport {
  std::string allocation_id;
  std::string task_id;
  std::string service_host;
  int service_port = 0;
  std::string service_user;
};

struct ExitedReport {
  std::string allocation_id;
  std::string task_id;
  std::optional<int> exit_code;  // exactly one of exit_code and signal is set
  std::optional<int> signal;
  std::string reason;  // "" when the task simply ended
};

using LogBatch = std::vector<TaskLogLine>;
using ReportItem = std::variant<LogBatch, StartedReport, ReadyReport, ExitedReport>;

class ReportQueue {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    size_t max_batch_lines = 1000;
    std::chrono::milliseconds max_line_delay{100};
    // Beyond this many lines waiting in all lanes (the master is unreachable), new lines are
    // dropped.
    size_t max_queued_lines = 100000;
    // From this many lines waiting on, tasks' output is left unread (Reporter::MayReadLines):
    // the tasks are throttled instead, well before lines would be dropped.
    size_t throttle_lines = 25000;
    // How many lanes the items are split into (0 counts as 1).
    size_t lanes = 8;
  };

  explicit ReportQueue(Options options);

  size_t lanes() const { return lanes_.size(); }
  // The lane of every line and report of `allocation_id`: a fixed hash of the id, so all of one
  // allocation's items share one FIFO and keep the order they were added in.
  size_t LaneOf(std::string_view allocation_id) const;

  // False when the line was dropped because the queue is full.
  bool AddLine(TaskLogLine line, Clock::time_point now);
  void AddStarted(StartedReport report);
  void AddReady(ReadyReport report);
  void AddExited(ExitedReport report);

  // The next item of `lane` to send, or nullopt when nothing is due at `now`. Lines leave in
  // batches of at most max_batch_lines, once that many wait, the oldest has waited
  // max_line_delay, a report is queued behind them, or `flush` is set.
  std::optional<ReportItem> TakeDue(size_t lane, Clock::time_point now, bool flush);
  // When TakeDue(lane) will have something if nothing more is added (Clock::time_point::min()
  // when it has something now); nullopt when the lane is empty.
  std::optional<Clock::time_point> NextDue(size_t lane) const;

  bool empty() const;
  bool empty(size_t lane) const { return lanes_[lane].empty(); }
  size_t queued_lines() const { return queued_lines_; }
  // Whether fewer than throttle_lines wait.
  bool below_throttle() const { return queued_lines_ < options_.throttle_lines; }

 private:
  struct QueuedLine {
    TaskLogLine line;
    Clock::time_point queued_at;
  };
  using Entry = std::variant<QueuedLine, StartedReport, ReadyReport, ExitedReport>;
  using Lane = std::deque<Entry>;
  // How many lines lead `lane`, counting at most max_batch_lines.
  size_t LeadingLines(const Lane& lane) const;

  const Options options_;
  std::vector<Lane> lanes_;
  size_t queued_lines_ = 0;  // over all lanes
};

}  // namespace cairn::agent
