// Task logs: the high-volume stdout/stderr lines agents ship. They are kept apart from the
// control-plane log, so that they never slow its decisions, in their own RocksDB under
// <data_dir>/tasklogs. A line is stored once per (task, allocation, seq), so an agent's retried
// batch is harmless. On the Kafka backend the topic "<prefix>.tasklogs"
// (events/kafka/task_log_topic.h) is the record and the RocksDB a cache of it: a line is stored
// only after the topic acknowledged it, and a lost directory is rebuilt from the topic when the
// master starts. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace cairn {

struct TaskLogLine {
  std::string task_id;
  std::string allocation_id;
  std::string agent_id;
  int64_t seq = 0;
  int64_t timestamp_unix_micros = 0;
  std::string stdtype;  // "stdout" | "stderr"
  std::string text;     // the line, with its trailing newline
};

class TaskLogStore {
 public:
  // The embedded backend: the store in `dir` is the only record of the lines.
  static Result<std::unique_ptr<TaskLogStore>> Open(const std::string& dir);
  // The Kafka backend: the store in `dir` caches the task-log topic of `topic_prefix`. Returns
  // once the cache holds every line the topic held when it was called (all of them for an empty
  // `dir`); from then on a thread keeps reading the topic into it. Unavailable when the brokers
  // give nothing for `catch_up_stall` while lines are still missing.
  static Result<std::unique_ptr<TaskLogStore>> OpenMirrored(
      const std::string& dir, const std::string& brokers, const std::string& topic_prefix,
      std::chrono::milliseconds catch_up_stall = std::chrono::seconds(60));
  ~TaskLogStore();

  // Bounds each task's lines to `max_bytes` of text (0: no bound). Past it, Append removes the
  // task's oldest lines until it holds three quarters of the bound, and puts a marker line
  // first that says how many lines and bytes went and why (its allocation id is "", so it sorts
  // before every line). Mirrored, only the cache is bounded: the topic keeps its own retention.
  void SetTaskByteLimit(uint64_t max_bytes);

  // Stores the lines; mirrored, only once the topic has acknowledged them all (a failure there
  // stores nothing, and the agent sends them again). Then trims tasks over their bound.
  Status Append(const std::vector<TaskLogLine>& lines);

  // Bytes of text the store holds for `task_id` (the marker not counted), and for all tasks.
  uint64_t TaskBytes(const std::string& task_id);
  uint64_t TotalBytes();

  // Up to `limit` lines of `task_id` after `*cursor` ("" = from the start), in allocation and
  // seq order; advances `*cursor` past them.
  Result<std::vector<TaskLogLine>> Read(const std::string& task_id, std::string* cursor,
                                        size_t limit);

  // The lines of `task_ids` whose text holds `needle` (ASCII letters in either case), in the
  // tasks' order and each task's allocation and seq order, at most `limit` (0: all). The tasks are
  // scanned `threads` at a time, each line's text searched where it is stored.
  Result<std::vector<TaskLogLine>> Search(const std::vector<std::string>& task_ids,
                                          const std::string& needle, size_t limit, int threads = 2);

  // Cursors for Read: just past the line of `task_id` at (allocation_id, seq), and past every line
  // of the task.
  static std::string CursorAfter(const std::string& task_id, const std::string& allocation_id,
                                 int64_t seq);
  static std::string CursorPastTask(const std::string& task_id);

  // Removes every line of `task_id` (log retention; the events about the task stay) and returns
  // how many there were. Mirrored, only the cache forgets them: the topic keeps them for its own
  // retention, and a cache rebuilt from it has them again until the next sweep removes them.
  Result<uint64_t> Delete(const std::string& task_id);

  // A counter bumped by every Append; WaitForAppend blocks until it passes `seen` or timeout.
  uint64_t version() const;
  void WaitForAppend(uint64_t seen, std::chrono::milliseconds timeout) const;

 private:
  class Mirror;
  TaskLogStore() = default;
  // Writes `lines` (and, from the mirror, the topic positions they bring the cache to) at once,
  // counting them in their tasks' usage when `count_usage`, then trims tasks over the bound.
  Status Store(const std::vector<TaskLogLine>& lines, const std::vector<std::string>& position_keys,
               const std::vector<std::string>& position_values, bool count_usage);
  // What the store holds of one task; under usage_mutex_.
  struct Usage {
    uint64_t bytes = 0;          // text of the lines held
    uint64_t removed_lines = 0;  // trimmed by the bound so far
    uint64_t removed_bytes = 0;
  };
  Usage& UsageOf(const std::string& task_id);  // loaded from the DB on first use
  Status TrimTask(const std::string& task_id, Usage& usage);
  // Counts the lines of a store written before usage was kept.
  Status CountExistingUsage();

  std::unique_ptr<rocksdb::DB> db_;
  // The mirror's topic positions, in a column family of their own.
  std::unique_ptr<rocksdb::ColumnFamilyHandle> positions_;
  std::unique_ptr<rocksdb::ColumnFamilyHandle> lines_;
  // Each task's Usage, in a column family of its own: "<task id>" -> bytes, removed lines and
  // removed bytes (8 bytes each, big-endian), written with the lines they count.
  std::unique_ptr<rocksdb::ColumnFamilyHandle> usage_;
  std::unique_ptr<Mirror> mirror_;  // Kafka backend only
  // Held across an Append (its write and its trims) so that a task's usage is changed by one
  // writer at a time.
  std::mutex usage_mutex_;
  std::unordered_map<std::string, Usage> usage_cache_;
  uint64_t total_bytes_ = 0;
  std::atomic<uint64_t> max_task_bytes_{0};
  mutable std::mutex mutex_;
  mutable std::condition_variable appended_;
  uint64_t version_ = 0;
};

}  // namespace cairn
