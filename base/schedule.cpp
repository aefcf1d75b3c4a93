#include "base/schedule.h"

#include <charconv>
#include <ctime>
#include <limits>
#include <sstream>
#include <vector>

#include "base/clock.h"

namespace cairn {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;

// One cron field into `allowed` (indexes min..max).
// `open_max` ends an open range ("*/2", "5/10"): below `max` for the day of the week, where 7
// only names Sunday again.
template <size_t N>
Status ParseField(const std::string& field, int min, int max, int open_max, std::bitset<N>& allowed,
                  const char* name) {
  const auto bad = [&] {
    return Status::InvalidArgument(std::string("the ") + name + " field '" + field +
                                   "' must be *, a number from " + std::to_string(min) + " to " +
                                   std::to_string(max) + ", a range a-b, a list, or with /step");
  };
  const auto number = [&](const std::string& text, int& out) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
  };
  std::stringstream items(field);
  std::string item;
  while (std::getline(items, item, ',')) {
    int step = 1;
    const size_t slash = item.find('/');
    if (slash != std::string::npos) {
      if (!number(item.substr(slash + 1), step) || step < 1) return bad();
      item = item.substr(0, slash);
    }
    int low = min, high = open_max;
    if (item != "*") {
      const size_t dash = item.find('-');
      if (dash == std::string::npos) {
        if (!number(item, low)) return bad();
        high = slash != std::string::npos ? open_max : low;
      } else if (!number(item.substr(0, dash), low) || !number(item.substr(dash + 1), high)) {
        return bad();
      }
    }
    if (low < min || high > max || low > high) return bad();
    for (int value = low; value <= high; value += step) allowed.set(static_cast<size_t>(value));
  }
  if (allowed.none()) return bad();
  return Status::Ok();
}

}  // namespace

Result<Schedule> ParseSchedule(const std::string& text) {
  Schedule schedule;
  schedule.text = text;
  std::vector<std::string> fields;
  std::stringstream words(text);
  for (std::string word; words >> word;) fields.push_back(word);
  if (fields.size() == 1) {
    auto every = ParseGoDuration(text);
    constexpr int64_t kMaxEveryMicros = int64_t{366} * 24 * 3600 * kMicrosPerSecond;
    if (!every.ok() || *every < kMicrosPerSecond || *every > kMaxEveryMicros) {
      return Status::InvalidArgument("schedule '" + text +
                                     "' must be a duration from 1s to a year (e.g. 24h, 1h30m) or "
                                     "a cron expression (e.g. \"0 0 * * *\")" +
                                     (every.ok() ? "" : ": " + every.status().message()));
    }
    schedule.every_micros = *every;
    return schedule;
  }
  if (fields.size() != 5) {
    return Status::InvalidArgument("schedule '" + text +
                                   "': a cron expression has five fields (minute hour day month "
                                   "weekday), e.g. \"0 0 * * *\"");
  }
  // Sunday may also be written 7.
  std::bitset<8> weekdays;
  CAIRN_RETURN_IF_ERROR(ParseField(fields[0], 0, 59, 59, schedule.minutes, "minute"));
  CAIRN_RETURN_IF_ERROR(ParseField(fields[1], 0, 23, 23, schedule.hours, "hour"));
  CAIRN_RETURN_IF_ERROR(ParseField(fields[2], 1, 31, 31, schedule.days, "day-of-month"));
  CAIRN_RETURN_IF_ERROR(ParseField(fields[3], 1, 12, 12, schedule.months, "month"));
  CAIRN_RETURN_IF_ERROR(ParseField(fields[4], 0, 7, 6, weekdays, "day-of-week"));
  for (size_t day = 0; day < 7; ++day) schedule.weekdays[day] = weekdays[day];
  if (weekdays[7]) schedule.weekdays.set(0);
  schedule.any_day = fields[2] == "*";
  schedule.any_weekday = fields[4] == "*";
  if (NextRun(schedule, 0) == std::numeric_limits<int64_t>::max()) {
    return Status::InvalidArgument("schedule '" + text + "' never runs (no such date)");
  }
  return schedule;
}

int64_t NextRun(const Schedule& schedule, int64_t after_unix_micros) {
  if (schedule.every_micros > 0) return after_unix_micros + schedule.every_micros;
  // The next whole minute after `after`, then minute by minute (hours and days skipped whole).
  int64_t minute = after_unix_micros / kMicrosPerMinute + 1;
  const int64_t last = minute + int64_t{4} * 366 * 24 * 60;
  while (minute < last) {
    const std::time_t seconds = static_cast<std::time_t>(minute * 60);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    const bool day_matches =
        schedule.any_day && schedule.any_weekday ? true
        : schedule.any_day     ? schedule.weekdays[static_cast<size_t>(utc.tm_wday)]
        : schedule.any_weekday ? schedule.days[static_cast<size_t>(utc.tm_mday)]
                               : schedule.days[static_cast<size_t>(utc.tm_mday)] ||
                                     schedule.weekdays[static_cast<size_t>(utc.tm_wday)];
    if (!schedule.months[static_cast<size_t>(utc.tm_mon + 1)] || !day_matches) {
      minute += (24 - utc.tm_hour) * 60 - utc.tm_min;  // to the next day's midnight
      continue;
    }
    if (!schedule.hours[static_cast<size_t>(utc.tm_hour)]) {
      minute += 60 - utc.tm_min;  // to the next hour
      continue;
    }
    if (schedule.minutes[static_cast<size_t>(utc.tm_min)]) return minute * kMicrosPerMinute;
    ++minute;
  }
  return std::numeric_limits<int64_t>::max();
}

}  // namespace cairn
