// Task logs: the high-volume stdout/stderr lines agents ship. They are kept apart from the
// control-plane log (architecture rule 6) in their own RocksDB under <data_dir>/tasklogs.
// A line is stored once per (task, allocation, seq), so an agent's retried batch is harmless.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace rocksdb {
class DB;
}

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
  static Result<std::unique_ptr<TaskLogStore>> Open(const std::string& dir);
  ~TaskLogStore();

  Status Append(const std::vector<TaskLogLine>& lines);

  // Up to `limit` lines of `task_id` after `*cursor` ("" = from the start), in allocation and
  // seq order; advances `*cursor` past them.
  Result<std::vector<TaskLogLine>> Read(const std::string& task_id, std::string* cursor,
                                        size_t limit);

  // A counter bumped by every Append; WaitForAppend blocks until it passes `seen` or timeout.
  uint64_t version() const;
  void WaitForAppend(uint64_t seen, std::chrono::milliseconds timeout) const;

 private:
  TaskLogStore() = default;
  std::unique_ptr<rocksdb::DB> db_;
  mutable std::mutex mutex_;
  mutable std::condition_variable appended_;
  uint64_t version_ = 0;
};

}  // namespace cairn
