#include "events/task_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <map>
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
constexpr char kUsageFamily[] = "task_usage";
constexpr size_t kLineBlockBytes = 32 * 1024;
// The usage family takes a few bytes a batch and would flush almost never, and a write-ahead log
// file goes only once every family in it flushed: past this much log, RocksDB flushes the
// families that hold the oldest file, so the log on disk stays bounded.
constexpr uint64_t kMaxWriteAheadLogBytes = uint64_t{64} << 20;
// In the usage family: present once every task's usage is counted (a store written before
// usage was kept is counted once, when opened).
const std::string kUsageCountedKey = std::string(1, '\0') + "counted";
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

// The key of a task's marker line: allocation "" and seq 0 sort before every line of the task.
std::string MarkerKey(const std::string& task_id) {
  return Prefix(task_id) + std::string(1, '\0') + std::string(8, '\0');
}

// Just past every key of the task: "<task>\0..." < "<task>\1".
std::string EndOfTask(const std::string& task_id) {
  std::string end = Prefix(task_id);
  end.back() = '\1';
  return end;
}

void AppendU64(std::string* out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

uint64_t ReadU64(std::string_view bytes, size_t at) {
  uint64_t value = 0;
  for (size_t i = at; i < at + 8 && i < bytes.size(); ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

// "1234567" -> "1,234,567", for the marker a person reads.
std::string Grouped(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

// A line's value: a format byte, then its time (8 bytes, big-endian), stdtype and agent id (each
// a byte of length, then the bytes), and the text as the rest, so that a search reads the text in
// place. Stores written before hold JSON objects ({"agentId", "timestamp", "stdtype", "log"}),
// which start with '{' and are still read.
constexpr char kBinaryFormat = '\x01';
constexpr size_t kMaxShortField = 255;

std::string ValueOf(const TaskLogLine& line) {
  const std::string_view stdtype = std::string_view(line.stdtype).substr(0, kMaxShortField);
  const std::string_view agent = std::string_view(line.agent_id).substr(0, kMaxShortField);
  std::string value;
  value.reserve(11 + stdtype.size() + agent.size() + line.text.size());
  value.push_back(kBinaryFormat);
  for (int shift = 56; shift >= 0; shift -= 8) {
    value.push_back(static_cast<char>(static_cast<uint64_t>(line.timestamp_unix_micros) >> shift));
  }
  value.push_back(static_cast<char>(stdtype.size()));
  value.append(stdtype);
  value.push_back(static_cast<char>(agent.size()));
  value.append(agent);
  value.append(line.text);
  return value;
}

// The fields of a stored value, pointing into it; false when it is neither format.
struct StoredLine {
  int64_t timestamp_unix_micros = 0;
  std::string_view stdtype, agent_id, text;
  std::string owned_text, owned_stdtype, owned_agent;  // a JSON value's, decoded
};

bool DecodeValue(std::string_view value, StoredLine* out) {
  if (!value.empty() && value[0] == kBinaryFormat) {
    if (value.size() < 11) return false;
    uint64_t time = 0;
    for (size_t i = 1; i < 9; ++i) time = (time << 8) | static_cast<unsigned char>(value[i]);
    out->timestamp_unix_micros = static_cast<int64_t>(time);
    size_t at = 9;
    const size_t stdtype_size = static_cast<unsigned char>(value[at++]);
    if (at + stdtype_size >= value.size()) return false;
    out->stdtype = value.substr(at, stdtype_size);
    at += stdtype_size;
    const size_t agent_size = static_cast<unsigned char>(value[at++]);
    if (at + agent_size > value.size()) return false;
    out->agent_id = value.substr(at, agent_size);
    out->text = value.substr(at + agent_size);
    return true;
  }
  auto json = nlohmann::json::parse(value, nullptr, false);
  if (!json.is_object()) return false;
  out->timestamp_unix_micros = json.value("timestamp", int64_t{0});
  out->owned_stdtype = json.value("stdtype", "");
  out->owned_agent = json.value("agentId", "");
  out->owned_text = json.value("log", "");
  out->stdtype = out->owned_stdtype;
  out->agent_id = out->owned_agent;
  out->text = out->owned_text;
  return true;
}

std::string_view ValueView(const rocksdb::Slice& slice) { return {slice.data(), slice.size()}; }

// The line stored at `key` (task \0 allocation \0 seq) of `task_id`.
TaskLogLine LineAt(const std::string& task_id, std::string_view key, const StoredLine& stored) {
  TaskLogLine line;
  line.task_id = task_id;
  const size_t prefix = task_id.size() + 1;
  const size_t allocation_end = key.find('\0', prefix);
  line.allocation_id = std::string(key.substr(prefix, allocation_end - prefix));
  uint64_t seq = 0;
  for (size_t i = allocation_end + 1; i < key.size(); ++i) {
    seq = (seq << 8) | static_cast<unsigned char>(key[i]);
  }
  line.seq = static_cast<int64_t>(seq);
  line.agent_id = stored.agent_id;
  line.timestamp_unix_micros = stored.timestamp_unix_micros;
  line.stdtype = stored.stdtype;
  line.text = stored.text;
  return line;
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
      Status stored = store_->Store(lines, keys, values, /*count_usage=*/true);
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
  options.max_total_wal_size = kMaxWriteAheadLogBytes;
  // Lines are read in long runs (a follower, a search): larger blocks mean fewer block reads and
  // better compression.
  rocksdb::ColumnFamilyOptions line_options(options);
  rocksdb::BlockBasedTableOptions table;
  table.block_size = kLineBlockBytes;
  line_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, line_options},
      {kPositionsFamily, rocksdb::ColumnFamilyOptions(options)},
      {kUsageFamily, rocksdb::ColumnFamilyOptions(options)}};
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
  store->usage_.reset(handles[2]);
  CAIRN_RETURN_IF_ERROR(store->CountExistingUsage());
  return store;
}

Status TaskLogStore::CountExistingUsage() {
  std::string counted;
  auto found = db_->Get(rocksdb::ReadOptions(), usage_.get(), kUsageCountedKey, &counted);
  if (!found.ok() && !found.IsNotFound()) {
    return Status::IOError("task log usage read failed: " + found.ToString());
  }
  rocksdb::WriteBatch batch;
  if (found.IsNotFound()) {
    std::map<std::string, uint64_t> bytes;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lines_.get()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key(it->key().data(), it->key().size());
      StoredLine stored;
      if (!DecodeValue(ValueView(it->value()), &stored)) continue;
      bytes[std::string(key.substr(0, key.find('\0')))] += stored.text.size();
    }
    if (!it->status().ok())
      return Status::IOError("task log read failed: " + it->status().ToString());
    for (const auto& [task_id, held] : bytes) {
      std::string usage;
      AppendU64(&usage, held);
      AppendU64(&usage, 0);
      AppendU64(&usage, 0);
      batch.Put(usage_.get(), task_id, usage);
    }
    batch.Put(usage_.get(), kUsageCountedKey, "");
  }
  if (batch.Count() > 0) {
    auto written = db_->Write(rocksdb::WriteOptions(), &batch);
    if (!written.ok()) return Status::IOError("task log usage write failed: " + written.ToString());
  }
  uint64_t total = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), usage_.get()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().starts_with(rocksdb::Slice(kUsageCountedKey))) continue;
    total += ReadU64(std::string_view(it->value().data(), it->value().size()), 0);
  }
  if (!it->status().ok())
    return Status::IOError("task log usage read failed: " + it->status().ToString());
  std::lock_guard lock(usage_mutex_);
  total_bytes_ = total;
  return Status::Ok();
}

void TaskLogStore::SetTaskByteLimit(uint64_t max_bytes) { max_task_bytes_ = max_bytes; }

TaskLogStore::Usage& TaskLogStore::UsageOf(const std::string& task_id) {
  auto [it, added] = usage_cache_.try_emplace(task_id);
  if (added) {
    std::string value;
    if (db_->Get(rocksdb::ReadOptions(), usage_.get(), task_id, &value).ok()) {
      it->second = Usage{ReadU64(value, 0), ReadU64(value, 8), ReadU64(value, 16)};
    }
  }
  return it->second;
}

uint64_t TaskLogStore::TaskBytes(const std::string& task_id) {
  std::lock_guard lock(usage_mutex_);
  return UsageOf(task_id).bytes;
}

uint64_t TaskLogStore::TotalBytes() {
  std::lock_guard lock(usage_mutex_);
  return total_bytes_;
}

// Removes the task's oldest lines until three quarters of the bound are left, counts what stays
// exactly (a batch an agent sent twice was counted twice), and puts the marker first.
Status TaskLogStore::TrimTask(const std::string& task_id, Usage& usage) {
  const uint64_t bound = max_task_bytes_.load();
  const std::string marker_key = MarkerKey(task_id);
  struct Held {
    std::string key;
    uint64_t bytes;
    int64_t timestamp;
  };
  std::vector<Held> held;
  uint64_t bytes = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lines_.get()));
  const std::string end = EndOfTask(task_id);
  for (it->Seek(marker_key); it->Valid() && it->key().compare(rocksdb::Slice(end)) < 0;
       it->Next()) {
    if (it->key() == rocksdb::Slice(marker_key)) continue;
    StoredLine stored;
    const bool decoded = DecodeValue(ValueView(it->value()), &stored);
    held.push_back({it->key().ToString(), decoded ? stored.text.size() : 0,
                    decoded ? stored.timestamp_unix_micros : 0});
    bytes += held.back().bytes;
  }
  if (!it->status().ok())
    return Status::IOError("task log read failed: " + it->status().ToString());
  it.reset();
  const uint64_t keep = bound - bound / 4;
  size_t cut = 0;
  uint64_t removed_bytes = 0;
  while (cut < held.size() && bytes - removed_bytes > keep) removed_bytes += held[cut++].bytes;
  rocksdb::WriteBatch batch;
  if (cut > 0) {
    const std::string& first = held.front().key;
    const std::string after = cut < held.size() ? held[cut].key : end;
    batch.DeleteRange(lines_.get(), first, after);
    usage.removed_lines += cut;
    usage.removed_bytes += removed_bytes;
    const std::string text =
        "[cairn] the " + Grouped(usage.removed_lines) + " oldest lines (" +
        Grouped(usage.removed_bytes) +
        " bytes) of this task's log were removed: the master keeps at most " + Grouped(bound) +
        " bytes of a task's log (retention_policy.log_max_task_bytes); later lines follow\n";
    TaskLogLine marker;
    marker.agent_id = "master";
    marker.timestamp_unix_micros = held[cut - 1].timestamp;
    marker.stdtype = "stderr";
    marker.text = text;
    batch.Put(lines_.get(), marker_key, ValueOf(marker));
  }
  total_bytes_ -= std::min(total_bytes_, usage.bytes);
  usage.bytes = bytes - removed_bytes;
  total_bytes_ += usage.bytes;
  std::string value;
  AppendU64(&value, usage.bytes);
  AppendU64(&value, usage.removed_lines);
  AppendU64(&value, usage.removed_bytes);
  batch.Put(usage_.get(), task_id, value);
  auto status = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!status.ok()) return Status::IOError("task log trim failed: " + status.ToString());
  return Status::Ok();
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
  // Mirrored, the lines come back from the topic and are counted then, once.
  return Store(lines, {}, {}, /*count_usage=*/!mirror_);
}

Status TaskLogStore::Store(const std::vector<TaskLogLine>& lines,
                           const std::vector<std::string>& position_keys,
                           const std::vector<std::string>& position_values, bool count_usage) {
  std::lock_guard usage_lock(usage_mutex_);
  rocksdb::WriteBatch batch;
  std::map<std::string, uint64_t> added;  // per task
  for (const auto& line : lines) {
    batch.Put(lines_.get(), KeyOf(line), ValueOf(line));
    if (count_usage) added[line.task_id] += line.text.size();
  }
  for (size_t i = 0; i < position_keys.size(); ++i) {
    batch.Put(positions_.get(), position_keys[i], position_values[i]);
  }
  std::vector<std::pair<const std::string*, Usage*>> over;
  const uint64_t bound = max_task_bytes_.load();
  for (const auto& [task_id, bytes] : added) {
    Usage& usage = UsageOf(task_id);
    usage.bytes += bytes;
    total_bytes_ += bytes;
    std::string value;
    AppendU64(&value, usage.bytes);
    AppendU64(&value, usage.removed_lines);
    AppendU64(&value, usage.removed_bytes);
    batch.Put(usage_.get(), task_id, value);
    if (bound > 0 && usage.bytes > bound) over.emplace_back(&task_id, &usage);
  }
  auto status = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!status.ok()) {
    // Nothing was written: the counts go back to what the DB holds.
    for (const auto& [task_id, bytes] : added) {
      usage_cache_.erase(task_id);
      total_bytes_ -= std::min(total_bytes_, bytes);
    }
    return Status::IOError("task log write failed: " + status.ToString());
  }
  for (auto& [task_id, usage] : over) CAIRN_RETURN_IF_ERROR(TrimTask(*task_id, *usage));
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
    StoredLine stored;
    if (!DecodeValue(ValueView(it->value()), &stored)) {
      return Status::Corruption("bad task log record for " + task_id);
    }
    lines.push_back(LineAt(task_id, key, stored));
    *cursor = std::move(key);
  }
  if (!it->status().ok())
    return Status::IOError("task log read failed: " + it->status().ToString());
  return lines;
}

Result<uint64_t> TaskLogStore::Delete(const std::string& task_id) {
  const std::string prefix = Prefix(task_id);
  const std::string end = EndOfTask(task_id);
  uint64_t lines = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lines_.get()));
  for (it->Seek(prefix); it->Valid() && it->key().compare(rocksdb::Slice(end)) < 0; it->Next()) {
    ++lines;
  }
  if (!it->status().ok()) {
    return Status::IOError("task log read failed: " + it->status().ToString());
  }
  std::lock_guard usage_lock(usage_mutex_);
  Usage& usage = UsageOf(task_id);
  if (lines == 0 && usage.bytes == 0) return lines;
  rocksdb::WriteBatch batch;
  batch.DeleteRange(lines_.get(), prefix, end);
  batch.Delete(usage_.get(), task_id);
  auto status = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!status.ok()) return Status::IOError("task log delete failed: " + status.ToString());
  total_bytes_ -= std::min(total_bytes_, usage.bytes);
  usage_cache_.erase(task_id);
  return lines;
}

namespace {

char AsciiLowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Finds a text in lines with ASCII letters folded (Horspool's skip table, indexed by the raw byte
// with both cases of each letter of the text set).
class FoldedFinder {
 public:
  explicit FoldedFinder(const std::string& needle) : needle_(needle) {
    for (char& c : needle_) c = AsciiLowerChar(c);
    const size_t n = needle_.size();
    skip_.fill(std::max<size_t>(n, 1));
    for (size_t i = 0; i + 1 < n; ++i) {
      const unsigned char lower = static_cast<unsigned char>(needle_[i]);
      skip_[lower] = n - 1 - i;
      if (lower >= 'a' && lower <= 'z') skip_[lower - 32] = n - 1 - i;
    }
  }

  bool In(std::string_view text) const {
    const size_t n = needle_.size();
    if (n == 0) return true;
    for (size_t at = 0; at + n <= text.size();) {
      const char last = text[at + n - 1];
      if (AsciiLowerChar(last) == needle_.back()) {
        size_t i = 0;
        while (i + 1 < n && AsciiLowerChar(text[at + i]) == needle_[i]) ++i;
        if (i + 1 >= n) return true;
      }
      at += skip_[static_cast<unsigned char>(last)];
    }
    return false;
  }

 private:
  std::string needle_;
  std::array<size_t, 256> skip_;
};

}  // namespace

Result<std::vector<TaskLogLine>> TaskLogStore::Search(const std::vector<std::string>& task_ids,
                                                      const std::string& needle, size_t limit,
                                                      int threads) {
  // Each line's text is searched where it is, ASCII letters folded as they are compared.
  const FoldedFinder finder(needle);
  std::vector<std::vector<TaskLogLine>> found(task_ids.size());
  std::vector<Status> failed(task_ids.size());
  // Tasks are handed out in order, so that a limit reached early stops the later ones.
  std::atomic<size_t> next_task{0};
  std::atomic<size_t> enough_before{task_ids.size()};  // tasks from here on are not needed
  auto work = [&] {
    for (size_t index = next_task++; index < task_ids.size(); index = next_task++) {
      if (index >= enough_before.load()) break;
      const std::string& task_id = task_ids[index];
      const std::string prefix = Prefix(task_id);
      const std::string end = EndOfTask(task_id);
      const rocksdb::Slice upper_bound(end);
      rocksdb::ReadOptions options;
      options.fill_cache = false;  // one pass over what may be most of the store
      options.iterate_upper_bound = &upper_bound;
      options.readahead_size = size_t{2} << 20;  // sequential: large reads
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options, lines_.get()));
      auto& lines = found[index];
      for (it->Seek(prefix); it->Valid(); it->Next()) {
        StoredLine stored;
        if (!DecodeValue(ValueView(it->value()), &stored)) {
          failed[index] = Status::Corruption("bad task log record for " + task_id);
          break;
        }
        if (!finder.In(stored.text)) continue;
        lines.push_back(LineAt(task_id, ValueView(it->key()), stored));
        if (limit != 0 && lines.size() >= limit) break;
      }
      if (failed[index].ok() && !it->status().ok()) {
        failed[index] = Status::IOError("task log read failed: " + it->status().ToString());
      }
      // This task alone fills the limit: no later task's lines can be among the first.
      if (limit != 0 && lines.size() >= limit) {
        size_t current = enough_before.load();
        while (index + 1 < current && !enough_before.compare_exchange_weak(current, index + 1)) {
        }
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::max(1, threads); ++t) helpers.emplace_back(work);
  work();
  for (auto& helper : helpers) helper.join();
  std::vector<TaskLogLine> lines;
  for (size_t index = 0; index < task_ids.size(); ++index) {
    CAIRN_RETURN_IF_ERROR(failed[index]);
    for (auto& line : found[index]) {
      if (limit != 0 && lines.size() >= limit) return lines;
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

std::string TaskLogStore::CursorAfter(const std::string& task_id, const std::string& allocation_id,
                                      int64_t seq) {
  TaskLogLine line;
  line.task_id = task_id;
  line.allocation_id = allocation_id;
  line.seq = seq;
  return KeyOf(line);
}

std::string TaskLogStore::CursorPastTask(const std::string& task_id) { return EndOfTask(task_id); }

uint64_t TaskLogStore::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void TaskLogStore::WaitForAppend(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  appended_.wait_for(lock, timeout, [&] { return version_ > seen; });
}

}  // namespace cairn
