#include "api/task_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <nlohmann/json.hpp>

namespace cairn {

namespace {

std::string Prefix(const std::string& task_id) { return task_id + std::string(1, '\0'); }

std::string KeyOf(const TaskLogLine& line) {
  std::string key = Prefix(line.task_id) + line.allocation_id + std::string(1, '\0');
  uint64_t seq = static_cast<uint64_t>(line.seq);
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(seq >> shift));
  return key;
}

}  // namespace

Result<std::unique_ptr<TaskLogStore>> TaskLogStore::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, dir, &raw);
  if (!status.ok())
    return Status::IOError("cannot open task logs in " + dir + ": " + status.ToString());
  std::unique_ptr<TaskLogStore> store(new TaskLogStore());
  store->db_.reset(raw);
  return store;
}

TaskLogStore::~TaskLogStore() = default;

Status TaskLogStore::Append(const std::vector<TaskLogLine>& lines) {
  rocksdb::WriteBatch batch;
  for (const auto& line : lines) {
    nlohmann::json value = {{"agentId", line.agent_id},
                            {"timestamp", line.timestamp_unix_micros},
                            {"stdtype", line.stdtype},
                            {"log", line.text}};
    batch.Put(KeyOf(line), value.dump());
  }
  auto status = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!status.ok()) return Status::IOError("task log write failed: " + status.ToString());
  {
    std::lock_guard lock(mutex_);
    ++version_;
  }
  appended_.notify_all();
  return Status::Ok();
}

Result<std::vector<TaskLogLine>> TaskLogStore::Read(const std::string& task_id, std::string* cursor,
                                                    size_t limit) {
  std::vector<TaskLogLine> lines;
  const std::string prefix = Prefix(task_id);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  if (cursor->empty()) {
    it->Seek(prefix);
  } else {
    it->Seek(*cursor);
    if (it->Valid() && it->key() == rocksdb::Slice(*cursor)) it->Next();
  }
  for (; it->Valid() && lines.size() < limit; it->Next()) {
    std::string key = it->key().ToString();
    if (key.compare(0, prefix.size(), prefix) != 0) break;
    auto value = nlohmann::json::parse(it->value().ToString(), nullptr, false);
    if (value.is_discarded()) return Status::Corruption("bad task log record for " + task_id);
    TaskLogLine line;
    line.task_id = task_id;
    size_t allocation_end = key.find('\0', prefix.size());
    line.allocation_id = key.substr(prefix.size(), allocation_end - prefix.size());
    uint64_t seq = 0;
    for (size_t i = allocation_end + 1; i < key.size(); ++i) {
      seq = (seq << 8) | static_cast<unsigned char>(key[i]);
    }
    line.seq = static_cast<int64_t>(seq);
    line.agent_id = value.value("agentId", "");
    line.timestamp_unix_micros = value.value("timestamp", int64_t{0});
    line.stdtype = value.value("stdtype", "");
    line.text = value.value("log", "");
    lines.push_back(std::move(line));
    *cursor = std::move(key);
  }
  if (!it->status().ok())
    return Status::IOError("task log read failed: " + it->status().ToString());
  return lines;
}

uint64_t TaskLogStore::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void TaskLogStore::WaitForAppend(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  appended_.wait_for(lock, timeout, [&] { return version_ > seen; });
}

}  // namespace cairn
