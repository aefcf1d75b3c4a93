// cairn-log-crash-writer: appends deterministic events (MakeTestEvent(offset)) to an embedded log
// in a loop and prints "acked <last offset>" after every acknowledged append, for tests that kill
// it at random points. With --fsize-limit it runs into EFBIG to exercise the I/O-error path.
//
//   cairn-log-crash-writer DIR [--segment-bytes N] [--max-batch N] [--fsize-limit N]
//
// Prints "start <end offset>" once open, "error <status>" when an append fails, then
// "after-error <status>" for one more attempt, and exits 3.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "events/embedded/embedded_log.h"
#include "tests/events_embedded/test_events.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: cairn-log-crash-writer DIR [--segment-bytes N] [--max-batch N] "
               "[--fsize-limit N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string dir = argv[1];
  cairn::EmbeddedLogOptions options;
  uint64_t max_batch = 100;
  uint64_t fsize_limit = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    uint64_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--segment-bytes") == 0) {
      options.segment_bytes = value;
    } else if (std::strcmp(argv[i], "--max-batch") == 0 && value > 0) {
      max_batch = value;
    } else if (std::strcmp(argv[i], "--fsize-limit") == 0) {
      fsize_limit = value;
    } else {
      return Usage();
    }
  }

  auto log = cairn::OpenEmbeddedLog(dir, options);
  if (!log.ok()) {
    std::printf("open-failed %s\n", log.status().ToString().c_str());
    return 1;
  }
  auto end = (*log)->EndOffset();
  if (!end.ok()) return 1;
  if (fsize_limit > 0) {
    // Writes past the limit then fail with EFBIG instead of killing the process.
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{fsize_limit, fsize_limit};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 1;
  }
  std::printf("start %llu\n", static_cast<unsigned long long>(*end));
  std::fflush(stdout);

  uint64_t next = *end;
  for (uint64_t iteration = 0;; ++iteration) {
    uint64_t batch_size = 1 + (iteration * 37) % max_batch;
    std::vector<cairn::Envelope> batch;
    batch.reserve(batch_size);
    for (uint64_t i = 0; i < batch_size; ++i)
      batch.push_back(cairn::testing::MakeTestEvent(next + i));
    auto range = (*log)->Append(batch);
    if (!range.ok()) {
      std::printf("error %s\n", range.status().ToString().c_str());
      auto again = (*log)->Append(batch);
      std::printf("after-error %s\n", again.ok() ? "OK" : again.status().ToString().c_str());
      std::fflush(stdout);
      return 3;
    }
    if (range->first != next || range->last != next + batch_size - 1) {
      std::printf("bad-range %llu %llu\n", static_cast<unsigned long long>(range->first),
                  static_cast<unsigned long long>(range->last));
      std::fflush(stdout);
      return 4;
    }
    next = range->last + 1;
    std::printf("acked %llu\n", static_cast<unsigned long long>(range->last));
    std::fflush(stdout);
  }
}
