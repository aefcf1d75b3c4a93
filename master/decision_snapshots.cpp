#include "master/decision_snapshots.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/encoding.h"
#include "base/files.h"
#include "base/log.h"
#include "base/thread_priority.h"

namespace cairn {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "decision-";
constexpr const char* kSuffix = ".snap";
constexpr std::string_view kHeader = "cairn-decision-snapshot sha256=";
constexpr size_t kDigestHexLength = 64;

Status WriteAt(int fd, std::string_view bytes, off_t at, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd, bytes.data(), bytes.size(), at);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(written));
    at += written;
  }
  return Status::Ok();
}

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

Result<std::unique_ptr<AtomicFile>> DecisionSnapshotStore::Begin(uint64_t offset) const {
  if (offset == 0) return Status::InvalidArgument("an empty state needs no snapshot");
  // Mode 0600: like the log, a snapshot holds password hashes and session-token digests.
  CAIRN_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(PathOf(offset), 0600));
  std::string line(kHeader);
  line.append(kDigestHexLength, '0').append("\n");
  CAIRN_RETURN_IF_ERROR(WriteAt(file->fd(), line, 0, file->temporary()));
  if (::lseek(file->fd(), static_cast<off_t>(line.size()), SEEK_SET) < 0) {
    return Status::IOError("cannot seek in " + file->temporary());
  }
  return file;
}

Status DecisionSnapshotStore::Seal(AtomicFile& file) const {
  // The body as it reached the file (not as an encoder meant it): read back a block at a time.
  const off_t body_start = static_cast<off_t>(kHeader.size() + kDigestHexLength + 1);
  Sha256 hash;
  std::string block(1 << 20, '\0');
  for (off_t at = body_start;;) {
    const ssize_t count = ::pread(file.fd(), block.data(), block.size(), at);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return Status::IOError("cannot read back " + file.temporary());
    if (count == 0) break;
    hash.Update(std::string_view(block.data(), static_cast<size_t>(count)));
    at += count;
  }
  CAIRN_ASSIGN_OR_RETURN(std::string digest, hash.FinishHex());
  CAIRN_RETURN_IF_ERROR(
      WriteAt(file.fd(), digest, static_cast<off_t>(kHeader.size()), file.temporary()));
  CAIRN_RETURN_IF_ERROR(file.Commit());
  std::vector<uint64_t> offsets = Offsets();
  for (size_t i = 0; i + keep_ < offsets.size(); ++i) {
    std::error_code error;
    fs::remove(PathOf(offsets[i]), error);
  }
  return Status::Ok();
}

Status DecisionSnapshotStore::Write(const commands::DecisionState& state, EventLog& log) const {
  CAIRN_ASSIGN_OR_RETURN(auto file, Begin(state.next_offset));  // refuses offset 0
  commands::LogAnchor anchor;
  CAIRN_ASSIGN_OR_RETURN(anchor.first_event_id, EventIdAt(log, 0));
  CAIRN_ASSIGN_OR_RETURN(anchor.last_event_id, EventIdAt(log, state.next_offset - 1));
  {
    google::protobuf::io::FileOutputStream out(file->fd());
    if (!commands::EncodeDecisionStateTo(state, anchor, out) || !out.Flush()) {
      return Status::IOError("cannot write " + file->temporary() + ": " +
                             std::strerror(out.GetErrno()));
    }
  }
  return Seal(*file);
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
                                         uint64_t every_events, Copy copy)
    : log_(log), store_(store), every_events_(std::max<uint64_t>(every_events, 1)), copy_(copy) {
  newest_ = store_->NewestOffset();
}

DecisionSnapshotter::~DecisionSnapshotter() { Stop(); }

void DecisionSnapshotter::Start() {
  {
    std::lock_guard lock(mutex_);
    newest_ = std::max(newest_, store_->NewestOffset());  // one written since construction
    started_ = true;
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

namespace {

// The child's private memory in KiB (pages it wrote, and pages the parent wrote since the fork,
// which the child then holds alone): what the snapshot cost beyond the state itself. Reads
// /proc with read(2) into the stack: nothing that could wait on another thread's lock.
uint64_t PrivateKibOfThisProcess() {
  char text[4096];
  const int fd = ::open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t count = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (count <= 0) return 0;
  text[count] = '\0';
  uint64_t kib = 0;
  for (const char* name : {"Private_Clean:", "Private_Dirty:"}) {
    if (const char* at = std::strstr(text, name))
      kib += std::strtoull(at + std::strlen(name), nullptr, 10);
  }
  return kib;
}

// The forked child: encodes the state it was forked with into `fd`, reports its private memory
// on `report_fd` and exits. Never returns.
[[noreturn]] void EncodeInChild(const commands::DecisionState& state,
                                const commands::LogAnchor& anchor, int fd, int report_fd,
                                pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);  // the parent died before the line above
  ::signal(SIGINT, SIG_DFL);  // not the master's handlers: they write to its descriptors
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  const int low = std::min(fd, report_fd), high = std::max(fd, report_fd);
  if (low > 3) ::close_range(3, static_cast<unsigned>(low - 1), 0);
  if (high > low + 1)
    ::close_range(static_cast<unsigned>(low + 1), static_cast<unsigned>(high - 1), 0);
  ::close_range(static_cast<unsigned>(high + 1), ~0U, 0);
  // At the writer's priority, not below: a niced child lives longer under load, and every page
  // the writer changes meanwhile is copied (at 100k queued, nice 10 took 2.7-3.0 s and 66-78
  // MiB of copies; nice 0 takes 1.0-1.4 s and 26-40 MiB, for the same CPU).
  bool written = false;
  try {
    google::protobuf::io::FileOutputStream out(fd);
    written = commands::EncodeDecisionStateTo(state, anchor, out) && out.Flush();
  } catch (...) {  // std::bad_alloc: the parent hears of it from the exit status
  }
  const uint64_t kib = PrivateKibOfThisProcess();
  (void)!::write(report_fd, &kib, sizeof kib);
  ::_exit(written ? 0 : 1);
}

}  // namespace

void DecisionSnapshotter::StateAdvanced(const commands::DecisionState& state,
                                        const std::string& last_event_id) {
  const uint64_t offset = state.next_offset;
  if (copy_ == Copy::kFold) {
    bool due = false;
    {
      std::lock_guard lock(mutex_);
      log_end_ = std::max(log_end_, offset);
      due = FoldDue();
    }
    if (due) changed_.notify_all();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (!started_ || stopping_ || child_ || offset / every_events_ <= newest_ / every_events_ ||
        offset / every_events_ <= failed_at_ / every_events_) {
      return;
    }
  }
  auto fail = [&](const Status& status) {
    log::Warn("decision_snapshots", "no snapshot at offset {}: {}", offset, status);
    std::lock_guard lock(mutex_);
    failed_at_ = offset;
  };
  if (first_event_id_.empty()) {
    auto first = EventIdAt(*log_, 0);
    if (!first.ok()) return fail(first.status());
    first_event_id_ = *first;
  }
  auto file = store_->Begin(offset);
  if (!file.ok()) return fail(file.status());
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fail(Status::IOError("cannot create a pipe"));
  const commands::LogAnchor anchor{first_event_id_, last_event_id};
  const pid_t parent = ::getpid();
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) EncodeInChild(state, anchor, (*file)->fd(), report[1], parent);
  const double fork_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return fail(Status::Unavailable(std::string("cannot fork: ") + std::strerror(errno)));
  }
  {
    std::lock_guard lock(mutex_);
    child_ = Child{pid, offset, std::move(*file), report[0], started, fork_ms};
  }
  changed_.notify_all();
}

bool DecisionSnapshotter::WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [&] { return stopping_ || newest_ >= offset || failed_at_ >= offset; });
  return newest_ >= offset;
}

Status DecisionSnapshotter::Finish(Child& child, uint64_t& private_kib) {
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::Internal(std::string("waitpid: ") + std::strerror(errno));
  }
  private_kib = 0;
  (void)!::read(child.report_fd, &private_kib, sizeof private_kib);
  ::close(child.report_fd);
  if (WIFSIGNALED(status)) {
    return Status::Unavailable("its process was killed by signal " +
                               std::to_string(WTERMSIG(status)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::IOError("its process could not encode or write it (exit status " +
                           std::to_string(WEXITSTATUS(status)) + ")");
  }
  return store_->Seal(*child.file);
}

bool DecisionSnapshotter::FoldDue() const {
  const uint64_t target = log_end_ / every_events_ * every_events_;
  return copy_ == Copy::kFold && !stopping_ && target > newest_ && target > failed_at_;
}

Status DecisionSnapshotter::Fold(uint64_t offset) {
  DecisionSnapshotStore::Restored restored = store_->RestoreNewest(*log_, offset);
  if (restored.state == nullptr) restored.state = std::make_unique<commands::DecisionState>();
  CAIRN_RETURN_IF_ERROR(FoldLogInto(*restored.state, *log_, offset, [this] {
    std::lock_guard lock(mutex_);
    return stopping_;
  }));
  return store_->Write(*restored.state, *log_);
}

void DecisionSnapshotter::Run() {
  // Below the writer and the request threads: checksumming a child's file, or a fold, waits.
  SetThisThreadNice(10);
  NameThisThread(kWriteSideSnapshotThreadName);
  std::unique_lock lock(mutex_);
  while (true) {
    // Stopping waits for a child being waited for: a snapshot being taken is finished first.
    changed_.wait(lock, [&] { return stopping_ || child_ || FoldDue(); });
    // child_ stays set while the child is finished: the writer forks no other meanwhile.
    std::optional<Child> child;
    if (child_) child.emplace(std::move(*child_));
    if (!child && stopping_) return;
    const uint64_t offset = child ? child->offset : log_end_ / every_events_ * every_events_;
    lock.unlock();
    uint64_t private_kib = 0;
    const auto started = child ? child->started : std::chrono::steady_clock::now();
    Status taken = child ? Finish(*child, private_kib) : Fold(offset);
    if (child) child->file.reset();  // removes the temporary unless it was published
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    child_.reset();
    if (taken.ok()) {
      newest_ = std::max(newest_, offset);
      if (child) {
        log::Info("decision_snapshots",
                  "took the write side's snapshot at offset {} in {:.2f} s (the writer paused "
                  "{:.1f} ms to fork; the copy held {:.1f} MiB of its own)",
                  offset, seconds, child->fork_ms, static_cast<double>(private_kib) / 1024);
      } else {
        log::Info("decision_snapshots",
                  "took the write side's snapshot at offset {} in {:.2f} s (folded on a second "
                  "state)",
                  offset, seconds);
      }
    } else {
      failed_at_ = offset;
      log::Warn("decision_snapshots", "no snapshot at offset {}: {}", offset, taken);
    }
    changed_.notify_all();
  }
}

}  // namespace cairn
