// Durable append throughput of the embedded event log on this machine: one appender with batches
// of 1, 10, 100 and 1000 events, then 8 concurrent appenders (group commit) with batches of 1 and
// 10. Events are ~200-byte TaskSubmitted envelopes; every acknowledged append is fdatasync'd.
//
//   cairn-bench-log-append [--seconds-per-case S]   (default 2.5; the whole run stays under 30 s)
//
// The log lives in a fresh directory under $TMPDIR (or /tmp), removed at the end.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "events/embedded/embedded_log.h"

namespace {

constexpr double kTargetEventsPerSecond = 100'000;

using Clock = std::chrono::steady_clock;

// A realistic TaskSubmitted envelope of about 200 bytes.
cairn::Envelope MakeTaskSubmitted(uint64_t n) {
  std::string number = std::to_string(n);
  cairn::Envelope event;
  event.set_event_id("0f8c5a4e-7d2b-4c1e-9a6f-" +
                     std::string(12 - std::min<size_t>(12, number.size()), '0') + number);
  event.set_time_unix_micros(1'732'000'000'000'000 + static_cast<int64_t>(n));
  event.set_actor("user:alice");
  event.set_correlation_id("req-" + number);
  event.set_idempotency_key("submit-" + number);
  event.set_writer_epoch(3);
  event.set_schema_version(1);
  auto* task = event.mutable_task_submitted();
  task->set_task_id("cmd-" + number);
  task->set_job_id("job-" + number);
  auto* spec = task->mutable_spec();
  spec->set_task_type(cairn::events::TASK_TYPE_COMMAND);
  for (const char* arg : {"python3", "train.py", "--epochs", "10"}) spec->add_entrypoint(arg);
  spec->set_user("alice");
  auto* resources = task->mutable_resources();
  resources->set_slots(2);
  resources->set_resource_pool("default");
  resources->set_priority(42);
  resources->set_weight(1.0);
  return event;
}

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/cairn-bench-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return buffer.data();
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Median latency of a 4 KiB write + fdatasync on this disk, for context.
double MedianFdatasyncMillis(const std::string& dir) {
  std::string path = dir + "/fsync-probe";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  std::vector<char> block(4096, 'x');
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) {
    auto start = Clock::now();
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size()) ||
        ::fdatasync(fd) != 0) {
      break;
    }
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  ::close(fd);
  std::filesystem::remove(path);
  if (samples.empty()) return -1;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

struct CaseResult {
  uint64_t events = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  bool failed = false;
};

// Opening scans and verifies every record; reading decodes every envelope. Both are measured on
// the log a case left behind.
void MeasureReopenAndRead(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") bytes += entry.file_size();
  }
  auto start = Clock::now();
  auto opened = cairn::OpenEmbeddedLog(dir, true);
  double open_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!opened.ok()) {
    std::fprintf(stderr, "reopen: %s\n", opened.status().ToString().c_str());
    return;
  }
  auto end = (*opened)->EndOffset();
  auto reader = (*opened)->OpenReader(0);
  if (!end.ok() || !reader.ok()) return;
  start = Clock::now();
  uint64_t read = 0;
  while (read < *end) {
    auto events = (*reader)->Next(1000, std::chrono::milliseconds(0));
    if (!events.ok() || events->empty()) {
      std::fprintf(stderr, "read stopped at %llu\n", static_cast<unsigned long long>(read));
      return;
    }
    read += events->size();
  }
  double read_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "  reopen of that log (%.1f MB, %llu events): open+verify %.3f s (%.0f MB/s), "
      "read all %.3f s (%.0f events/s)\n",
      bytes / 1e6, static_cast<unsigned long long>(*end), open_seconds, bytes / 1e6 / open_seconds,
      read_seconds, read / read_seconds);
}

CaseResult RunCase(const std::string& dir, int appenders, size_t batch_size, double seconds) {
  auto opened = cairn::OpenEmbeddedLog(dir, false);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    std::exit(1);
  }
  std::unique_ptr<cairn::EventLog> log = std::move(opened).value();
  std::vector<std::vector<cairn::Envelope>> batches(static_cast<size_t>(appenders));
  for (int t = 0; t < appenders; ++t) {
    for (size_t i = 0; i < batch_size; ++i) {
      batches[static_cast<size_t>(t)].push_back(MakeTaskSubmitted(t * batch_size + i));
    }
  }
  std::atomic<uint64_t> events{0};
  std::atomic<bool> failed{false};
  const double cpu_start = CpuSeconds();
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < appenders; ++t) {
    threads.emplace_back([&, t] {
      const auto& batch = batches[static_cast<size_t>(t)];
      while (Clock::now() < deadline) {
        auto range = log->Append(batch);
        if (!range.ok()) {
          std::fprintf(stderr, "append: %s\n", range.status().ToString().c_str());
          failed = true;
          return;
        }
        events += batch.size();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CaseResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = CpuSeconds() - cpu_start;
  result.events = events.load();
  result.failed = failed.load();
  auto end = log->EndOffset();
  if (!end.ok() || *end != result.events) {
    std::fprintf(stderr, "log end %llu != acknowledged events %llu\n",
                 static_cast<unsigned long long>(end.ok() ? *end : 0),
                 static_cast<unsigned long long>(result.events));
    result.failed = true;
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds_per_case = 2.5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds-per-case") == 0 && i + 1 < argc) {
      seconds_per_case = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds-per-case S]\n", argv[0]);
      return 2;
    }
  }
  std::string root = MakeTempDir();
  std::printf("cairn-bench-log-append: embedded log, durable (fdatasync per commit group)\n");
  std::printf("machine: nproc=%u, log dir %s, event size %zu bytes serialized (+32 header)\n",
              std::thread::hardware_concurrency(), root.c_str(),
              MakeTaskSubmitted(123456).ByteSizeLong());
  std::printf("median 4 KiB write+fdatasync before the run: %.3f ms\n\n",
              MedianFdatasyncMillis(root));
  std::printf("%-28s %10s %8s %14s %10s %9s\n", "case", "events", "secs", "events/s", "vs 100k/s",
              "cpu secs");

  struct Case {
    int appenders;
    size_t batch_size;
  };
  const Case cases[] = {{1, 1}, {1, 10}, {1, 100}, {1, 1000}, {8, 1}, {8, 10}};
  bool any_failed = false;
  for (const Case& c : cases) {
    std::string dir =
        root + "/log-" + std::to_string(c.appenders) + "x" + std::to_string(c.batch_size);
    CaseResult result = RunCase(dir, c.appenders, c.batch_size, seconds_per_case);
    double rate = result.events / result.seconds;
    char name[64];
    std::snprintf(name, sizeof name, "%d appender%s x batch %zu", c.appenders,
                  c.appenders == 1 ? "" : "s", c.batch_size);
    std::printf("%-28s %10llu %8.2f %14.0f %9.2fx %9.2f%s\n", name,
                static_cast<unsigned long long>(result.events), result.seconds, rate,
                rate / kTargetEventsPerSecond, result.cpu_seconds, result.failed ? "  FAILED" : "");
    if (c.appenders == 1 && c.batch_size == 1000) MeasureReopenAndRead(dir);
    std::filesystem::remove_all(dir);
    std::fflush(stdout);
    any_failed |= result.failed;
  }
  std::printf(
      "\nmedian 4 KiB write+fdatasync after the run: %.3f ms (figures swing with the "
      "disk's fsync latency and with CPU steal; compare runs on a quiet machine)\n",
      MedianFdatasyncMillis(root));
  std::filesystem::remove_all(root);
  return any_failed ? 1 : 0;
}
