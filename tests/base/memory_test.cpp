// base/memory.h: what the process measures of its own memory, and ending huge pages.
#include "base/memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>

namespace cairn {
namespace {

// The value of a "Name:\tvalue" line of /proc/self/status, "" when the kernel has none.
std::string StatusLine(const std::string& name) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(name + ":", 0) == 0) {
      const size_t value = line.find_first_not_of(" \t", name.size() + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  }
  return "";
}

TEST(ProcessMemoryTest, ResidentBytesCountPagesTheProcessTouches) {
  const uint64_t before = MeasureProcessMemory().resident_bytes;
  ASSERT_GT(before, 0u);
  constexpr size_t kBytes = size_t{64} << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);  // touched, so resident
  const ProcessMemory after = MeasureProcessMemory();
  EXPECT_GE(after.resident_bytes, before + kBytes / 2);
  EXPECT_EQ(block[kBytes - 1], 1);
  // This test runs on glibc's malloc: jemalloc's counts are absent, not made up.
  EXPECT_EQ(after.heap_allocated_bytes, 0u);
  EXPECT_EQ(after.heap_resident_bytes, 0u);
}

TEST(ProcessMemoryTest, ScopedHugePagesOffRestoresWhatWasThere) {
  if (StatusLine("THP_enabled").empty()) GTEST_SKIP() << "this kernel does not report THP_enabled";
  const std::string before = StatusLine("THP_enabled");
  {
    ScopedHugePagesOff off;
    EXPECT_EQ(StatusLine("THP_enabled"), "0");
    {
      ScopedHugePagesOff nested;  // already off: leaves them so when it ends
    }
    EXPECT_EQ(StatusLine("THP_enabled"), "0");
  }
  EXPECT_EQ(StatusLine("THP_enabled"), before);
}

TEST(ProcessMemoryTest, EndHugePagesTurnsThemOffForTheProcess) {
  if (StatusLine("THP_enabled").empty()) GTEST_SKIP() << "this kernel does not report THP_enabled";
  ASSERT_TRUE(EndHugePages());
  EXPECT_EQ(StatusLine("THP_enabled"), "0");
}

}  // namespace
}  // namespace cairn
