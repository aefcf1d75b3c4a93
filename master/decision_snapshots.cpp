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
#include <tuple>

#include "base/encoding.h"
#include "base/files.h"
#include "base/log.h"
#include "base/thread_priority.h"

namespace cairn {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "decision-";
constexpr const char* kWholeSuffix = ".snap";
constexpr const char* kDeltaSuffix = ".delta";
// The first line: a whole snapshot's "cairn-decision-snapshot sha256=<hex>", a delta's
// "cairn-decision-delta sha256=<hex> base=<20 digits> parent=<20 digits>" (what its chain needs,
// readable without reading the file; the body holds the same offsets, and decoding checks them).
constexpr std::string_view kWholeHeader = "cairn-decision-snapshot sha256=";
constexpr std::string_view kDeltaHeader = "cairn-decision-delta sha256=";
constexpr std::string_view kDigestField = "sha256=";
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

std::string DecisionSnapshotStore::PathOf(uint64_t offset, bool delta) const {
  char name[64];
  std::snprintf(name, sizeof name, "%s%020" PRIu64 "%s", kPrefix, offset,
                delta ? kDeltaSuffix : kWholeSuffix);
  return dir_ + "/" + name;
}

std::vector<DecisionSnapshotStore::Entry> DecisionSnapshotStore::Entries() const {
  std::vector<Entry> entries;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(dir_, error)) {
    const std::string name = file.path().filename().string();
    const std::string extension = file.path().extension().string();
    const bool delta = extension == kDeltaSuffix;
    const size_t prefix = std::char_traits<char>::length(kPrefix);
    if (name.rfind(kPrefix, 0) != 0 || (!delta && extension != kWholeSuffix) ||
        name.size() != prefix + 20 + extension.size()) {
      continue;
    }
    const std::string number = name.substr(prefix, 20);
    if (number.find_first_not_of("0123456789") != std::string::npos) continue;
    Entry entry{std::stoull(number), delta, 0, 0, true};
    if (delta) {
      // base and parent from the first line; one that does not read is no link of any chain.
      char line[160] = {};
      const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      const ssize_t count = ::pread(fd, line, sizeof line - 1, 0);
      ::close(fd);
      // Links that do not read, or do not go back (a flipped digit could name the delta itself),
      // make the file no link of any chain; it is still listed, for retention to remove.
      unsigned long long base = 0, parent = 0;
      entry.readable = count > 0 && std::string_view(line).rfind(kDeltaHeader, 0) == 0 &&
                       std::sscanf(line + kDeltaHeader.size() + kDigestHexLength,
                                   " base=%20llu parent=%20llu", &base, &parent) == 2 &&
                       base > 0 && base <= parent && parent < entry.offset;
      entry.base = entry.readable ? base : 0;
      entry.parent = entry.readable ? parent : 0;
    }
    entries.push_back(entry);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.offset, a.delta) < std::tie(b.offset, b.delta);
  });
  return entries;
}

std::vector<uint64_t> DecisionSnapshotStore::Offsets() const {
  std::vector<uint64_t> offsets;
  for (const Entry& entry : Entries()) {
    if (entry.readable) offsets.push_back(entry.offset);
  }
  return offsets;
}

uint64_t DecisionSnapshotStore::NewestOffset() const {
  std::vector<uint64_t> offsets = Offsets();
  return offsets.empty() ? 0 : offsets.back();
}

Result<std::unique_ptr<AtomicFile>> DecisionSnapshotStore::Begin(uint64_t offset) const {
  return Create(offset, false,
                std::string(kWholeHeader) + std::string(kDigestHexLength, '0') + "\n");
}

Result<std::unique_ptr<AtomicFile>> DecisionSnapshotStore::BeginDelta(uint64_t offset,
                                                                      uint64_t base,
                                                                      uint64_t parent) const {
  if (base == 0 || parent < base || offset <= parent) {
    return Status::InvalidArgument("a delta at offset " + std::to_string(offset) +
                                   " cannot follow " + std::to_string(parent) + " on base " +
                                   std::to_string(base));
  }
  char links[64];
  std::snprintf(links, sizeof links, " base=%020" PRIu64 " parent=%020" PRIu64 "\n", base, parent);
  return Create(offset, true,
                std::string(kDeltaHeader) + std::string(kDigestHexLength, '0') + links);
}

Result<std::unique_ptr<AtomicFile>> DecisionSnapshotStore::Create(uint64_t offset, bool delta,
                                                                  const std::string& line) const {
  if (offset == 0) return Status::InvalidArgument("an empty state needs no snapshot");
  // Mode 0600: like the log, a snapshot holds password hashes and session-token digests.
  CAIRN_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(PathOf(offset, delta), 0600));
  CAIRN_RETURN_IF_ERROR(WriteAt(file->fd(), line, 0, file->temporary()));
  if (::lseek(file->fd(), static_cast<off_t>(line.size()), SEEK_SET) < 0) {
    return Status::IOError("cannot seek in " + file->temporary());
  }
  return file;
}

Status DecisionSnapshotStore::Seal(AtomicFile& file) const {
  // The first line, as Begin or BeginDelta wrote it: where the digest goes and the body starts.
  char line[160] = {};
  const ssize_t count = ::pread(file.fd(), line, sizeof line - 1, 0);
  const char* newline = count > 0 ? std::strchr(line, '\n') : nullptr;
  const char* digest_at = count > 0 ? std::strstr(line, kDigestField.data()) : nullptr;
  if (newline == nullptr || digest_at == nullptr) {
    return Status::IOError("cannot read back the first line of " + file.temporary());
  }
  // The body as it reached the file (not as an encoder meant it): read back a block at a time.
  const off_t body_start = static_cast<off_t>(newline - line + 1);
  Sha256 hash;
  std::string block(1 << 20, '\0');
  for (off_t at = body_start;;) {
    const ssize_t read = ::pread(file.fd(), block.data(), block.size(), at);
    if (read < 0 && errno == EINTR) continue;
    if (read < 0) return Status::IOError("cannot read back " + file.temporary());
    if (read == 0) break;
    hash.Update(std::string_view(block.data(), static_cast<size_t>(read)));
    at += read;
  }
  CAIRN_ASSIGN_OR_RETURN(std::string digest, hash.FinishHex());
  CAIRN_RETURN_IF_ERROR(WriteAt(file.fd(), digest,
                                static_cast<off_t>(digest_at - line + kDigestField.size()),
                                file.temporary()));
  CAIRN_RETURN_IF_ERROR(file.Commit());
  // Kept: the newest `keep` whole snapshots and every delta after the oldest of them. A delta
  // before it belongs to a chain whose base is gone.
  std::vector<Entry> entries = Entries();
  std::vector<uint64_t> wholes;
  for (const Entry& entry : entries) {
    if (!entry.delta) wholes.push_back(entry.offset);
  }
  if (wholes.size() > keep_) {
    const uint64_t oldest_kept = wholes[wholes.size() - keep_];
    for (const Entry& entry : entries) {
      std::error_code error;
      if (entry.offset < oldest_kept) fs::remove(PathOf(entry.offset, entry.delta), error);
    }
  }
  return Status::Ok();
}

Status DecisionSnapshotStore::Write(const commands::DecisionState& state, EventLog& log) const {
  return WriteEncoded(state, log, nullptr);
}

Status DecisionSnapshotStore::WriteDelta(commands::DecisionState& state, EventLog& log,
                                         uint64_t base, uint64_t parent) const {
  const commands::DecisionDelta delta = commands::TakeDelta(state, base, parent);
  return WriteEncoded(state, log, &delta);
}

Status DecisionSnapshotStore::WriteEncoded(const commands::DecisionState& state, EventLog& log,
                                           const commands::DecisionDelta* delta) const {
  // Begin refuses offset 0, BeginDelta a delta that follows nothing.
  CAIRN_ASSIGN_OR_RETURN(
      auto file, delta != nullptr
                     ? BeginDelta(state.next_offset, delta->base_offset, delta->parent_offset)
                     : Begin(state.next_offset));
  commands::LogAnchor anchor;
  CAIRN_ASSIGN_OR_RETURN(anchor.first_event_id, EventIdAt(log, 0));
  CAIRN_ASSIGN_OR_RETURN(anchor.last_event_id, EventIdAt(log, state.next_offset - 1));
  {
    google::protobuf::io::FileOutputStream out(file->fd());
    const bool encoded = delta != nullptr
                             ? commands::EncodeDecisionDeltaTo(state, anchor, *delta, out)
                             : commands::EncodeDecisionStateTo(state, anchor, out);
    if (!encoded || !out.Flush()) {
      return Status::IOError("cannot write " + file->temporary() + ": " +
                             std::strerror(out.GetErrno()));
    }
  }
  return Seal(*file);
}

Result<std::string> DecisionSnapshotStore::ReadBody(const Entry& entry) const {
  CAIRN_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(PathOf(entry.offset, entry.delta)));
  const size_t line_end = file.find('\n');
  const std::string_view header = entry.delta ? kDeltaHeader : kWholeHeader;
  if (file.rfind(header, 0) != 0 || line_end == std::string::npos ||
      line_end < header.size() + kDigestHexLength) {
    return Status::Corruption("it does not start with its checksum line");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string digest,
                         Sha256Hex(std::string_view(file).substr(line_end + 1)));
  if (file.compare(header.size(), kDigestHexLength, digest) != 0) {
    return Status::Corruption("its checksum does not match its contents");
  }
  file.erase(0, line_end + 1);
  return file;
}

DecisionSnapshotStore::Restored DecisionSnapshotStore::RestoreNewest(EventLog& log,
                                                                     uint64_t end) const {
  const std::vector<Entry> entries = Entries();
  std::vector<const Entry*> unusable;  // files found unusable: no chain goes through them
  auto usable = [&](const Entry* entry) {
    return entry->readable && std::find(unusable.begin(), unusable.end(), entry) == unusable.end();
  };
  // A link's parent: the whole snapshot at its base, or the delta on the same chain before it.
  auto parent_of = [&](const Entry& link) -> const Entry* {
    const bool whole = link.parent == link.base;
    for (const Entry& entry : entries) {
      if (entry.offset == link.parent && entry.delta == !whole &&
          (whole || entry.base == link.base)) {
        return &entry;
      }
    }
    return nullptr;
  };
  std::optional<Result<std::string>> first;  // the log's first event id, read once if needed
  for (auto candidate = entries.rbegin(); candidate != entries.rend(); ++candidate) {
    if (candidate->offset > end || candidate->offset == 0 || !usable(&*candidate)) continue;
    // The chain back to its whole snapshot, oldest first (each parent's offset is below its
    // link's: Entries refuses a delta whose links do not go back).
    std::vector<const Entry*> chain{&*candidate};
    while (chain.front()->delta) {
      const Entry* parent = parent_of(*chain.front());
      if (parent == nullptr || !usable(parent)) break;
      chain.insert(chain.begin(), parent);
    }
    const std::string path = PathOf(candidate->offset, candidate->delta);
    if (chain.front()->delta) {
      log::Warn("decision_snapshots",
                "passing over {}: the snapshots before it on its chain are gone or unusable", path);
      unusable.push_back(&*candidate);
      continue;
    }
    std::vector<std::string> bodies;
    Status status = Status::Ok();
    for (const Entry* link : chain) {
      auto body = ReadBody(*link);
      if (!body.ok()) {
        status = body.status();
        log::Warn("decision_snapshots", "passing over {}: {}", PathOf(link->offset, link->delta),
                  status);
        unusable.push_back(link);
        break;
      }
      bodies.push_back(std::move(body).value());
    }
    if (!status.ok()) continue;
    std::vector<std::string_view> views(bodies.begin(), bodies.end());
    size_t failed_link = chain.size() - 1;
    auto decoded = commands::DecodeDecisionChain(views, &failed_link);
    bodies = {};  // the bytes, as large as the state, go before the state is used
    status = decoded.status();
    if (!status.ok()) {
      // The link the decoding failed in is passed over, and every chain through it: none is
      // decoded again.
      const Entry* failed = chain[std::min(failed_link, chain.size() - 1)];
      log::Warn("decision_snapshots", "passing over {}: {}", PathOf(failed->offset, failed->delta),
                status);
      unusable.push_back(failed);
      continue;
    }
    if (status.ok() && (*decoded)->state.next_offset != candidate->offset) {
      status =
          Status::Corruption("it holds offset " + std::to_string((*decoded)->state.next_offset));
    }
    if (status.ok()) {
      // Another log's snapshot (a data directory pointed at a new log) must not be continued.
      if (!first) first = EventIdAt(log, 0);
      auto last = EventIdAt(log, candidate->offset - 1);
      if (!first->ok() || !last.ok()) {
        status = !first->ok() ? first->status() : last.status();
      } else if (**first != (*decoded)->anchor.first_event_id ||
                 *last != (*decoded)->anchor.last_event_id) {
        status = Status::FailedPrecondition("it was taken from another log");
      }
    }
    if (!status.ok()) {
      log::Warn("decision_snapshots", "passing over {} ({} on its chain): {}", path, chain.size(),
                status);
      unusable.push_back(&*candidate);
      continue;
    }
    Restored restored{std::make_unique<commands::DecisionState>(std::move((*decoded)->state)),
                      std::move((*decoded)->anchor),
                      {}};
    for (const Entry* link : chain) restored.chain.push_back(link->offset);
    return restored;
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
                                const commands::LogAnchor& anchor,
                                const commands::DecisionDelta* delta, int fd, int report_fd,
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
  // the writer changes meanwhile is copied: more copies for no less CPU (docs/benchmarks.md,
  // "Write-side snapshots").
  bool written = false;
  try {
    google::protobuf::io::FileOutputStream out(fd);
    written = (delta != nullptr ? commands::EncodeDecisionDeltaTo(state, anchor, *delta, out)
                                : commands::EncodeDecisionStateTo(state, anchor, out)) &&
              out.Flush();
  } catch (...) {  // std::bad_alloc: the parent hears of it from the exit status
  }
  const uint64_t kib = PrivateKibOfThisProcess();
  (void)!::write(report_fd, &kib, sizeof kib);
  ::_exit(written ? 0 : 1);
}

}  // namespace

void DecisionSnapshotter::StateAdvanced(commands::DecisionState& state,
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
  uint64_t base = 0, parent = 0;  // the chain this snapshot continues; base 0: a whole one
  {
    std::lock_guard lock(mutex_);
    if (!started_ || stopping_ || child_ || offset / every_events_ <= newest_ / every_events_ ||
        offset / every_events_ <= failed_at_ / every_events_) {
      return;
    }
    // A delta, unless the chain would hold more records than the state (a restore decodes the
    // whole snapshot and every delta on its chain: at most about twice the state) or as many
    // deltas as a chain may, or the state did not count its changes since the last snapshot
    // (the writer replaced it by a fresh fold after a failed append).
    const std::optional<size_t> changed = commands::CountedChanges(state);
    if (chain_base_ != 0 && chain_deltas_ < kMaxDeltasPerChain && changed &&
        chain_records_ + *changed <= state.tasks.size() + state.jobs.size()) {
      base = chain_base_;
      parent = chain_parent_;
    }
  }
  auto fail = [&](const Status& status) {
    log::Warn("decision_snapshots", "no snapshot at offset {}: {}", offset, status);
    std::lock_guard lock(mutex_);
    failed_at_ = offset;
    chain_base_ = 0;  // the changes taken for it are nowhere: the next one is whole
  };
  if (first_event_id_.empty()) {
    auto first = EventIdAt(*log_, 0);
    if (!first.ok()) return fail(first.status());
    first_event_id_ = *first;
  }
  // What changed since the last snapshot; counting starts anew (the first call starts it).
  commands::DecisionDelta delta = commands::TakeDelta(state, base, parent);
  auto file = base != 0 ? store_->BeginDelta(offset, base, parent) : store_->Begin(offset);
  if (!file.ok()) return fail(file.status());
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fail(Status::IOError("cannot create a pipe"));
  const commands::LogAnchor anchor{first_event_id_, last_event_id};
  const pid_t parent_pid = ::getpid();
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    EncodeInChild(state, anchor, base != 0 ? &delta : nullptr, (*file)->fd(), report[1],
                  parent_pid);
  }
  const double fork_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return fail(Status::Unavailable(std::string("cannot fork: ") + std::strerror(errno)));
  }
  const size_t records = delta.tasks.size() + delta.jobs.size();
  {
    std::lock_guard lock(mutex_);
    child_ = Child{pid, offset, std::move(*file), report[0], started, fork_ms, base, records};
    // The chain goes on from this one (a failure ends it: Run sets chain_base_ to 0).
    if (base != 0) {
      chain_deltas_++;
      chain_records_ += records;
    } else {
      chain_base_ = offset;
      chain_deltas_ = 0;
      chain_records_ = 0;
    }
    chain_parent_ = offset;
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
        const std::string what =
            child->base != 0 ? fmt::format("a delta of {} tasks and jobs on the snapshot at {}",
                                           child->records, child->base)
                             : std::string("whole");
        log::Info("decision_snapshots",
                  "took the write side's snapshot at offset {} in {:.2f} s ({}; the writer "
                  "paused {:.1f} ms to fork; the copy held {:.1f} MiB of its own)",
                  offset, seconds, what, child->fork_ms, static_cast<double>(private_kib) / 1024);
      } else {
        log::Info("decision_snapshots",
                  "took the write side's snapshot at offset {} in {:.2f} s (folded on a second "
                  "state)",
                  offset, seconds);
      }
    } else {
      failed_at_ = offset;
      chain_base_ = 0;  // nothing may follow a snapshot that is not there: the next is whole
      log::Warn("decision_snapshots", "no snapshot at offset {}: {}", offset, taken);
    }
    changed_.notify_all();
  }
}

}  // namespace cairn
