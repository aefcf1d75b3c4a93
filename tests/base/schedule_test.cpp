// Schedules as master.yaml writes them: Go durations and standard cron expressions, and the next
// run each gives, in UTC.
#include "base/schedule.h"

#include <gtest/gtest.h>

#include <limits>

#include "base/clock.h"

namespace cairn {
namespace {

int64_t At(const std::string& rfc3339) {
  auto parsed = ParseTimeToUnixMicros(rfc3339);
  EXPECT_TRUE(parsed.ok()) << rfc3339;
  return parsed.ok() ? *parsed : 0;
}

// The next run after `after`, as RFC 3339 without fractions ("never" for none).
std::string NextAfter(const std::string& text, const std::string& after) {
  auto schedule = ParseSchedule(text);
  EXPECT_TRUE(schedule.ok()) << text << ": " << schedule.status().ToString();
  if (!schedule.ok()) return "";
  const int64_t next = NextRun(*schedule, At(after));
  if (next == std::numeric_limits<int64_t>::max()) return "never";
  return FormatRfc3339(next).substr(0, 19) + "Z";
}

TEST(ScheduleTest, DurationsAreGosAndAtLeastASecond) {
  const int64_t start = At("2026-12-03T11:31:00Z");
  for (const auto& [text, micros] :
       std::vector<std::pair<std::string, int64_t>>{{"24h", int64_t{86400} * 1'000'000},
                                                    {"1h30m", int64_t{5400} * 1'000'000},
                                                    {"90s", int64_t{90} * 1'000'000},
                                                    {"1.5h", int64_t{5400} * 1'000'000}}) {
    auto schedule = ParseSchedule(text);
    ASSERT_TRUE(schedule.ok()) << text << ": " << schedule.status().ToString();
    EXPECT_EQ(NextRun(*schedule, start), start + micros) << text;
  }
  for (const char* bad : {"", "500ms", "5x", "h", "-1h", "10000h"}) {
    EXPECT_FALSE(ParseSchedule(bad).ok()) << bad;
  }
}

TEST(ScheduleTest, CronExpressionsRunAtTheNextMatchingMinute) {
  EXPECT_EQ(NextAfter("0 0 * * *", "2026-12-03T11:31:00Z"), "2026-12-04T00:00:00Z");
  EXPECT_EQ(NextAfter("0 0 * * *", "2026-12-04T00:00:00Z"), "2026-12-05T00:00:00Z")
      << "strictly after";
  EXPECT_EQ(NextAfter("*/15 * * * *", "2026-12-03T10:07:30Z"), "2026-12-03T10:15:00Z");
  // Friday 10:00 to Monday 09:00.
  EXPECT_EQ(NextAfter("0 9 * * 1-5", "2026-12-04T10:00:00Z"), "2026-12-07T09:00:00Z");
  EXPECT_EQ(NextAfter("30 2 1 * *", "2026-12-03T00:00:00Z"), "2027-01-01T02:30:00Z");
  // Both day fields restricted: either matches (the 1st, or a Sunday: 2026-12-06).
  EXPECT_EQ(NextAfter("0 0 1 * 0", "2026-12-03T00:00:00Z"), "2026-12-06T00:00:00Z");
  EXPECT_EQ(NextAfter("0 0 * * 7", "2026-12-03T00:00:00Z"), "2026-12-06T00:00:00Z")
      << "7 is Sunday too";
  EXPECT_EQ(NextAfter("5,10 1-2 * 2 *", "2026-12-03T00:00:00Z"), "2027-02-01T01:05:00Z");
  // An open step runs to the field's end; for weekdays that is Saturday (7 is Sunday again).
  EXPECT_EQ(NextAfter("0 0 * * 1/2", "2026-12-05T12:00:00Z"), "2026-12-07T00:00:00Z")
      << "Saturday noon: Monday next, not Sunday";
  EXPECT_EQ(NextAfter("5/20 * * * *", "2026-12-03T10:06:00Z"), "2026-12-03T10:25:00Z");
  EXPECT_EQ(NextAfter("0 0 29 2 *", "2026-12-03T00:00:00Z"), "2028-02-29T00:00:00Z");
  for (const char* bad :
       {"0 0 31 2 *", "0 0 30 2 *", "@daily", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
        "* * * * 8", "* * *", "a b c d e", "*/0 * * * *", "5-1 * * * *"}) {
    EXPECT_FALSE(ParseSchedule(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace cairn
