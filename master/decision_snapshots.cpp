#include "master/decision_snapshots.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "base/encoding.h"
#include "base/files.h"
#include "base/log.h"

namespace cairn {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "decision-";
constexpr const char* kSuffix = ".snap";
constexpr std::string_view kHeader = "cairn-decision-snapshot sha256=";

// The id of the event at `offset`.
Result<std::string> EventIdAt(EventLog& log, uint64_t offset) {
  CAIRN_ASSIGN_OR_RETURN(auto reader, log.OpenReader(offset));
  CAIRN_ASSIGN_OR_RETURN(auto events, reader->Next(1, std::chrono::seconds(10)));
  if (events.empty()) {
    return Status::Unavailable(log.Describe() + " returned nothing at offset " +
                               std::to_string(offset));
  }
  return events.front().event_id();
}

}  // namespace

Status FoldLogInto(commands::DecisionState& state, EventLog& log, uint64_t end,
                   const std::function<bool()>& stopping) {
  CAIRN_ASSIGN_OR_RETURN(auto reader, log.OpenReader(state.next_offset));
  while (reader->position() < end) {
    if (stopping && stopping()) return Status::Unavailable("stopping");
    CAIRN_ASSIGN_OR_RETURN(
        auto events,
        reader->Next(std::min<uint64_t>(4096, end - reader->position()), std::chrono::seconds(10)));
    if (events.empty()) {
      return Status::Unavailable(log.Describe() + " returned nothing at offset " +
                                 std::to_string(reader->position()) + ", below its end " +
                                 std::to_string(end));
    }
    for (const auto& event : events) commands::Apply(state, event);
  }
  return Status::Ok();
}

Result<std::unique_ptr<DecisionSnapshotStore>> DecisionSnapshotStore::Open(const std::string& dir,
                                                                           size_t keep) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::IOError("cannot create " + dir + ": " + error.message());
  std::vector<fs::path> temporaries;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".tmp") temporaries.push_back(entry.path());
  }
  for (const auto& path : temporaries) fs::remove(path, error);
  return std::unique_ptr<DecisionSnapshotStore>(
      new DecisionSnapshotStore(dir, std::max<size_t>(keep, 1)));
}

std::string DecisionSnapshotStore::PathOf(uint64_t offset) const {
  char name[64];
  std::snprintf(name, sizeof name, "%s%020" PRIu64 "%s", kPrefix, offset, kSuffix);
  return dir_ + "/" + name;
}

std::vector<uint64_t> DecisionSnapshotStore::Offsets() const {
  std::vector<uint64_t> offsets;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    const size_t digits = name.size() - std::char_traits<char>::length(kPrefix) -
                          std::char_traits<char>::length(kSuffix);
    if (name.rfind(kPrefix, 0) != 0 || entry.path().extension() != kSuffix || digits != 20) {
      continue;
    }
    const std::string number = name.substr(std::char_traits<char>::length(kPrefix), digits);
    if (number.find_first_not_of("0123456789") != std::string::npos) continue;
    offsets.push_back(std::stoull(number));
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

uint64_t DecisionSnapshotStore::NewestOffset() const {
  std::vector<uint64_t> offsets = Offsets();
  return offsets.empty() ? 0 : offsets.back();
}

Status DecisionSnapshotStore::Write(const commands::DecisionState& state, EventLog& log) const {
  if (state.next_offset == 0) return Status::InvalidArgument("an empty state needs no snapshot");
  commands::LogAnchor anchor;
  CAIRN_ASSIGN_OR_RETURN(anchor.first_event_id, EventIdAt(log, 0));
  CAIRN_ASSIGN_OR_RETURN(anchor.last_event_id, EventIdAt(log, state.next_offset - 1));
  const std::string body = commands::EncodeDecisionState(state, anchor);
  CAIRN_ASSIGN_OR_RETURN(std::string digest, Sha256Hex(body));
  std::string file;
  file.reserve(kHeader.size() + digest.size() + 1 + body.size());
  file.append(kHeader).append(digest).append("\n").append(body);
  CAIRN_RETURN_IF_ERROR(WriteFileAtomically(PathOf(state.next_offset), file, 0600));
  std::vector<uint64_t> offsets = Offsets();
  for (size_t i = 0; i + keep_ < offsets.size(); ++i) {
    std::error_code error;
    fs::remove(PathOf(offsets[i]), error);
  }
  return Status::Ok();
}

Result<std::unique_ptr<commands::DecodedDecisionState>> DecisionSnapshotStore::Read(
    uint64_t offset) const {
  CAIRN_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(PathOf(offset)));
  const size_t line_end = file.find('\n');
  if (file.rfind(kHeader, 0) != 0 || line_end == std::string::npos) {
    return Status::Corruption("it does not start with its checksum line");
  }
  const std::string_view body = std::string_view(file).substr(line_end + 1);
  CAIRN_ASSIGN_OR_RETURN(std::string digest, Sha256Hex(body));
  if (file.compare(kHeader.size(), line_end - kHeader.size(), digest) != 0) {
    return Status::Corruption("its checksum does not match its contents");
  }
  CAIRN_ASSIGN_OR_RETURN(auto decoded, commands::DecodeDecisionState(body));
  if (decoded->state.next_offset != offset) {
    return Status::Corruption("it holds offset " + std::to_string(decoded->state.next_offset));
  }
  return decoded;
}

DecisionSnapshotStore::Restored DecisionSnapshotStore::RestoreNewest(EventLog& log,
                                                                     uint64_t end) const {
  std::vector<uint64_t> offsets = Offsets();
  std::optional<Result<std::string>> first;  // the log's first event id, read once if needed
  for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
    const uint64_t offset = *it;
    if (offset > end || offset == 0) continue;
    auto decoded = Read(offset);
    Status usable = decoded.status();
    if (usable.ok()) {
      // Another log's snapshot (a data directory pointed at a new log) must not be continued.
      if (!first) first = EventIdAt(log, 0);
      auto last = EventIdAt(log, offset - 1);
      if (!first->ok() || !last.ok()) {
        usable = !first->ok() ? first->status() : last.status();
      } else if (**first != (*decoded)->anchor.first_event_id ||
                 *last != (*decoded)->anchor.last_event_id) {
        usable = Status::FailedPrecondition("it was taken from another log");
      }
    }
    if (!usable.ok()) {
      log::Warn("decision_snapshots", "passing over {}: {}", PathOf(offset), usable);
      continue;
    }
    return {std::make_unique<commands::DecisionState>(std::move((*decoded)->state)),
            std::move((*decoded)->anchor)};
  }
  return {};
}

DecisionSnapshotter::DecisionSnapshotter(EventLog* log, const DecisionSnapshotStore* store,
                                         uint64_t every_events)
    : log_(log), store_(store), every_events_(std::max<uint64_t>(every_events, 1)) {
  newest_ = store_->NewestOffset();
}

DecisionSnapshotter::~DecisionSnapshotter() { Stop(); }

void DecisionSnapshotter::Start() {
  {
    std::lock_guard lock(mutex_);
    newest_ = std::max(newest_, store_->NewestOffset());  // one written since construction
  }
  thread_ = std::thread(&DecisionSnapshotter::Run, this);
}

void DecisionSnapshotter::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DecisionSnapshotter::LogAdvanced(uint64_t end_offset) {
  bool due = false;
  {
    std::lock_guard lock(mutex_);
    log_end_ = std::max(log_end_, end_offset);
    const uint64_t target = log_end_ / every_events_ * every_events_;
    due = target > newest_ && target > failed_at_;
  }
  if (due) changed_.notify_all();
}

bool DecisionSnapshotter::WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return stopping_ || newest_ >= offset; }) &&
         newest_ >= offset;
}

void DecisionSnapshotter::Run() {
  // Below the writer and the request threads: a snapshot waits, they do not.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] {
      const uint64_t target = log_end_ / every_events_ * every_events_;
      return stopping_ || (target > newest_ && target > failed_at_);
    });
    if (stopping_) return;
    const uint64_t target = log_end_ / every_events_ * every_events_;
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    Status taken = Take(target);
    lock.lock();
    if (taken.ok()) {
      newest_ = target;
      log::Info("decision_snapshots", "took the write side's snapshot at offset {} in {:.2f} s",
                target,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } else {
      failed_at_ = target;
      log::Warn("decision_snapshots", "no snapshot at offset {}: {}", target, taken);
    }
    changed_.notify_all();
  }
}

Status DecisionSnapshotter::Take(uint64_t offset) {
  DecisionSnapshotStore::Restored restored = store_->RestoreNewest(*log_, offset);
  if (restored.state == nullptr) restored.state = std::make_unique<commands::DecisionState>();
  CAIRN_RETURN_IF_ERROR(FoldLogInto(*restored.state, *log_, offset, [this] {
    std::lock_guard lock(mutex_);
    return stopping_;
  }));
  return store_->Write(*restored.state, *log_);
}

}  // namespace cairn
