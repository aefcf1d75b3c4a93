#include "events/task_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <charconv>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/log.h"
#include "events/kafka/task_log_topic.h"

namespace cairn {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The column family of the mirror's topic positions: "<topic>/<partition>" -> next offset.
constexpr char kPositionsFamily[] = "topic_positions";
constexpr size_t kMirrorBatch = 1000;
constexpr milliseconds kMirrorPollWait{200};
constexpr milliseconds kMirrorRetryDelay{500};

std::string Prefix(const std::string& task_id) { return task_id + std::string(1, '\0'); }

std::string KeyOf(const TaskLogLine& line) {
  std::string key = Prefix(line.task_id) + line.allocation_id + std::string(1, '\0');
  uint64_t seq = static_cast<uint64_t>(line.seq);
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(seq >> shift));
  return key;
}

std::string ValueOf(const TaskLogLine& line) {
  return nlohmann::json{{"agentId", line.agent_id},
                        {"timestamp", line.timestamp_unix_micros},
                        {"stdtype", line.stdtype},
                        {"log", line.text}}
      .dump();
}

events::TaskLogRecord RecordOf(const TaskLogLine& line) {
  events::TaskLogRecord record;
  record.set_task_id(line.task_id);
  record.set_allocation_id(line.allocation_id);
  record.set_agent_id(line.agent_id);
  record.set_seq(line.seq);
  record.set_timestamp_unix_micros(line.timestamp_unix_micros);
  record.set_stdtype(line.stdtype);
  record.set_log(line.text);
  return record;
}

TaskLogLine LineOf(const events::TaskLogRecord& record) {
  return TaskLogLine{record.task_id(), record.allocation_id(),         record.agent_id(),
                     record.seq(),     record.timestamp_unix_micros(), record.stdtype(),
                     record.log()};
}

std::string PositionKey(const std::string& topic, int32_t partition) {
  return topic + "/" + std::to_string(partition);
}

}  // namespace

// Keeps the store a copy of the topic: publishes what the master accepts, and reads the topic
// into the store on a thread of its own, each batch with the positions it reached.
class TaskLogStore::Mirror {
 public:
  Mirror(TaskLogStore* store, std::unique_ptr<TaskLogPublisher> publisher, std::string brokers,
         std::string topic_prefix, TopicPositions positions)
      : store_(store),
        publisher_(std::move(publisher)),
        brokers_(std::move(brokers)),
        topic_prefix_(std::move(topic_prefix)),
        topic_(TaskLogTopicName(topic_prefix_)),
        positions_(std::move(positions)) {}
  ~Mirror() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Starts following the topic and waits until the store holds what the topic held now.
  Status Start(milliseconds stall) {
    const steady_clock::time_point started = steady_clock::now();
    thread_ = std::thread([this] { Run(); });
    std::unique_lock lock(mutex_);
    steady_clock::time_point last_progress = steady_clock::now();
    uint64_t seen_batches = stored_batches_;
    while (!caught_up_) {
      changed_.wait_for(lock, kMirrorPollWait);
      if (stored_batches_ != seen_batches) {
        seen_batches = stored_batches_;
        last_progress = steady_clock::now();
      } else if (steady_clock::now() - last_progress > stall) {
        return Status::Unavailable(
            "task logs: the cache in the data directory could not catch up with " + topic_ +
            " (nothing read for " + std::to_string(stall.count()) + " ms" +
            (status_.ok() ? std::string() : "; last error: " + status_.message()) + ")");
      }
    }
    log::Info("task_logs", "caught up with {}: {} lines read in {} ms", topic_, lines_read_,
              std::chrono::duration_cast<milliseconds>(steady_clock::now() - started).count());
    return Status::Ok();
  }

  Status Publish(const std::vector<TaskLogLine>& lines) {
    std::vector<events::TaskLogRecord> records;
    records.reserve(lines.size());
    for (const TaskLogLine& line : lines) records.push_back(RecordOf(line));
    return publisher_->Publish(records);
  }

 private:
  bool stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }
  void Fail(Status status) {
    std::unique_lock lock(mutex_);
    if (status_.ok()) log::Warn("task_logs", "reading {}: {}", topic_, status);
    status_ = std::move(status);
    changed_.wait_for(lock, kMirrorRetryDelay, [&] { return stopping_; });
  }
  void MarkCaughtUp() {
    {
      std::lock_guard lock(mutex_);
      caught_up_ = true;
    }
    changed_.notify_all();
  }
  void Run();

  TaskLogStore* const store_;
  const std::unique_ptr<TaskLogPublisher> publisher_;
  const std::string brokers_;
  const std::string topic_prefix_;
  const std::string topic_;
  TopicPositions positions_;  // what the store holds: the thread's own
  std::thread thread_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  bool caught_up_ = false;
  uint64_t stored_batches_ = 0;
  uint64_t lines_read_ = 0;
  Status status_;  // the last failure to read or store, until the next success
};

void TaskLogStore::Mirror::Run() {
  std::unique_ptr<TaskLogTopicReader> reader;
  while (!stopping()) {
    if (!reader) {
      auto opened = TaskLogTopicReader::Open(brokers_, topic_prefix_, positions_);
      if (!opened.ok()) {
        Fail(opened.status());
        continue;
      }
      reader = std::move(opened).value();
      for (const auto& [partition, count] : reader->skipped()) {
        log::Warn("task_logs",
                  "{} lines of {} partition {} were deleted by the topic's retention before this "
                  "master read them: they are lost",
                  count, topic_, partition);
      }
      if (reader->ReachedEndsAtOpen()) MarkCaughtUp();
    }
    auto records = reader->Next(kMirrorBatch, kMirrorPollWait);
    if (!records.ok()) {
      reader.reset();
      Fail(records.status());
      continue;
    }
    std::vector<TaskLogLine> lines;
    lines.reserve(records->size());
    for (const events::TaskLogRecord& record : *records) lines.push_back(LineOf(record));
    std::vector<std::string> keys;
    std::vector<std::string> values;
    for (const auto& [partition, position] : reader->positions()) {
      auto known = positions_.find(partition);
      if (known != positions_.end() && known->second == position) continue;
      keys.push_back(PositionKey(topic_, partition));
      values.push_back(std::to_string(position));
    }
    if (!keys.empty()) {
      Status stored = store_->Store(lines, keys, values);
      if (!stored.ok()) {
        // Read again from what the store holds.
        reader.reset();
        Fail(stored);
        continue;
      }
      positions_ = reader->positions();
    }
    {
      std::lock_guard lock(mutex_);
      status_ = Status::Ok();
      if (!keys.empty()) ++stored_batches_;
      lines_read_ += lines.size();
    }
    if (reader->ReachedEndsAtOpen()) MarkCaughtUp();
    changed_.notify_all();
  }
}

Result<std::unique_ptr<TaskLogStore>> TaskLogStore::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.IncreaseParallelism(2);
  options.max_file_opening_threads = 1;  // as the projections' (projections/projection_engine)
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options)},
      {kPositionsFamily, rocksdb::ColumnFamilyOptions(options)}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(rocksdb::DBOptions(options), dir, families, &handles, &raw);
  if (!status.ok()) {
    return Status::IOError("cannot open task logs in " + dir + ": " + status.ToString());
  }
  std::unique_ptr<TaskLogStore> store(new TaskLogStore());
  store->db_.reset(raw);
  store->lines_.reset(handles[0]);
  store->positions_.reset(handles[1]);
  return store;
}

Result<std::unique_ptr<TaskLogStore>> TaskLogStore::OpenMirrored(const std::string& dir,
                                                                 const std::string& brokers,
                                                                 const std::string& topic_prefix,
                                                                 milliseconds catch_up_stall) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<TaskLogStore> store, Open(dir));
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<TaskLogPublisher> publisher,
                         TaskLogPublisher::Open(brokers, topic_prefix));
  const std::string topic = TaskLogTopicName(topic_prefix);
  TopicPositions positions;
  std::unique_ptr<rocksdb::Iterator> it(
      store->db_->NewIterator(rocksdb::ReadOptions(), store->positions_.get()));
  const std::string prefix = topic + "/";
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string key = it->key().ToString();
    const std::string value = it->value().ToString();
    int32_t partition = 0;
    int64_t position = 0;
    auto [partition_end, partition_error] =
        std::from_chars(key.data() + prefix.size(), key.data() + key.size(), partition);
    auto [value_end, value_error] =
        std::from_chars(value.data(), value.data() + value.size(), position);
    if (partition_error != std::errc() || partition_end != key.data() + key.size() ||
        value_error != std::errc() || value_end != value.data() + value.size()) {
      return Status::Corruption("task logs in " + dir + ": a bad topic position '" + key + "' = '" +
                                value.substr(0, 40) + "'");
    }
    positions[partition] = position;
  }
  if (!it->status().ok()) {
    return Status::IOError("task logs in " + dir + ": " + it->status().ToString());
  }
  it.reset();
  store->mirror_ = std::make_unique<Mirror>(store.get(), std::move(publisher), brokers,
                                            topic_prefix, std::move(positions));
  log::Info("task_logs", "catching up with {} in {}", topic, dir);
  CAIRN_RETURN_IF_ERROR(store->mirror_->Start(catch_up_stall));
  return store;
}

TaskLogStore::~TaskLogStore() {
  // Its thread writes here: stopped before anything else goes.
  mirror_.reset();
}

Status TaskLogStore::Append(const std::vector<TaskLogLine>& lines) {
  if (mirror_) CAIRN_RETURN_IF_ERROR(mirror_->Publish(lines));
  return Store(lines, {}, {});
}

Status TaskLogStore::Store(const std::vector<TaskLogLine>& lines,
                           const std::vector<std::string>& position_keys,
                           const std::vector<std::string>& position_values) {
  rocksdb::WriteBatch batch;
  for (const auto& line : lines) batch.Put(lines_.get(), KeyOf(line), ValueOf(line));
  for (size_t i = 0; i < position_keys.size(); ++i) {
    batch.Put(positions_.get(), position_keys[i], position_values[i]);
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
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lines_.get()));
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

Result<uint64_t> TaskLogStore::Delete(const std::string& task_id) {
  const std::string prefix = Prefix(task_id);
  std::string end = prefix;
  end.back() = '\1';  // just past every key of the task: "<task>\0..." < "<task>\1"
  uint64_t lines = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lines_.get()));
  for (it->Seek(prefix); it->Valid() && it->key().compare(rocksdb::Slice(end)) < 0; it->Next()) {
    ++lines;
  }
  if (!it->status().ok()) {
    return Status::IOError("task log read failed: " + it->status().ToString());
  }
  if (lines == 0) return lines;
  auto status = db_->DeleteRange(rocksdb::WriteOptions(), lines_.get(), prefix, end);
  if (!status.ok()) return Status::IOError("task log delete failed: " + status.ToString());
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
