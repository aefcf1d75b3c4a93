// Fuzz target: a segment file of the embedded log as the master finds it on disk after a crash
// or a disk fault (events/embedded/LOG_FORMAT.md), opened read-only and read to its end as
// `cairn replay` does. Damage must be refused (Corruption) or, in the tail, ignored: never a
// crash, never an event that is not in the file. Checksums guard every record, so the seeds
// are whole records from a real log and the fuzzer works from there.
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/log.h"
#include "events/embedded/embedded_log.h"
#include "events/envelope_util.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// The log's directory, one for the whole run, in memory when /dev/shm is there.
const std::string& LogDirectory() {
  static const std::string* directory = [] {
    // A torn tail is logged as a warning on every open.
    cairn::log::Init("fuzz", cairn::log::Level::kOff);
    std::string path = std::filesystem::is_directory("/dev/shm") ? "/dev/shm/cairn-fuzz-XXXXXX"
                                                                 : "/tmp/cairn-fuzz-XXXXXX";
    FUZZ_CHECK(::mkdtemp(path.data()) != nullptr);
    std::atexit([] { std::filesystem::remove_all(LogDirectory()); });
    return new std::string(path);
  }();
  return *directory;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream segment(LogDirectory() + "/00000000000000000000.log",
                          std::ios::binary | std::ios::trunc);
    segment.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    FUZZ_CHECK(segment.good());
  }
  auto log = cairn::OpenEmbeddedLog(LogDirectory(), /*read_only=*/true);
  if (!log.ok()) return 0;
  auto end = (*log)->EndOffset();
  FUZZ_CHECK(end.ok());
  auto reader = (*log)->OpenReader(0);
  FUZZ_CHECK(reader.ok());
  uint64_t expected_offset = 0;
  while (true) {
    auto events = (*reader)->Next(256, std::chrono::milliseconds(0));
    if (!events.ok() || events->empty()) break;
    for (const cairn::events::Envelope& event : *events) {
      FUZZ_CHECK(event.offset() == expected_offset);
      ++expected_offset;
      (void)cairn::PayloadTypeName(event);
      (void)cairn::EntityIdOf(event);
    }
  }
  // Every event read was durable, and a record holds at least its 32-byte header.
  FUZZ_CHECK(expected_offset <= *end);
  FUZZ_CHECK(expected_offset * 32 <= size);
  return 0;
}
