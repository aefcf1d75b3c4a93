// When a periodic job runs, as Determined's master.yaml writes it: a duration ("24h", "1h30m",
// "90s", Go's units ns..h) or a standard five-field cron expression in UTC ("0 0 * * *": minute,
// hour, day of month, month, day of week 0-6 with 0 Sunday; each field *, a number, a range a-b,
// a list, and /step). When both day fields are restricted, either may match (cron's rule). Pure.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace cairn {

struct Schedule {
  int64_t every_micros = 0;  // a duration; 0 for a cron expression
  // The cron's allowed values: minutes 0-59, hours 0-23, days 1-31, months 1-12, weekdays 0-6.
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;
  std::bitset<13> months;
  std::bitset<7> weekdays;
  bool any_day = true;      // the day-of-month field is *
  bool any_weekday = true;  // the day-of-week field is *
  std::string text;         // as given
};

// InvalidArgument saying what is wrong, for a text that is neither a duration from a second to a
// year nor a cron expression that runs at some time (not "0 0 31 2 *"). Names (@daily, JAN, MON)
// are not taken.
Result<Schedule> ParseSchedule(const std::string& text);

// The first time strictly after `after_unix_micros` the schedule runs: `after` plus the duration,
// or the next matching minute (at second 0) of the cron, within four years (else never: INT64_MAX).
int64_t NextRun(const Schedule& schedule, int64_t after_unix_micros);

}  // namespace cairn
