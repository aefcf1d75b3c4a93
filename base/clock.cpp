#include "base/clock.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace cairn {

std::string FormatRfc3339(int64_t unix_micros) {
  time_t seconds = static_cast<time_t>(unix_micros / 1000000);
  int64_t micros = unix_micros % 1000000;
  if (micros < 0) {
    micros += 1000000;
    seconds -= 1;
  }
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buffer;
}

Result<int64_t> ParseTimeToUnixMicros(const std::string& text) {
  if (text.empty()) return Status::InvalidArgument("empty time");
  bool all_digits = text.find_first_not_of("0123456789") == std::string::npos;
  if (all_digits) {
    if (text.size() > 12) return Status::InvalidArgument("time out of range: " + text);
    int64_t seconds = 0;
    for (char c : text) seconds = seconds * 10 + (c - '0');
    return seconds * 1000000;
  }
  std::tm tm{};
  int year, month, day, hour, minute, second;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return Status::InvalidArgument("time is not RFC 3339 (2025-03-20T12:00:00Z): " + text);
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  int64_t micros = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100000;
    while (pos < text.size() && isdigit(static_cast<unsigned char>(text[pos]))) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int64_t offset_seconds = 0;
  std::string zone = text.substr(pos);
  if (zone == "Z" || zone == "z" || zone.empty()) {
  } else if ((zone[0] == '+' || zone[0] == '-') && zone.size() == 6 && zone[3] == ':' &&
             isdigit(static_cast<unsigned char>(zone[1])) &&
             isdigit(static_cast<unsigned char>(zone[2])) &&
             isdigit(static_cast<unsigned char>(zone[4])) &&
             isdigit(static_cast<unsigned char>(zone[5]))) {
    int zh = (zone[1] - '0') * 10 + (zone[2] - '0'), zm = (zone[4] - '0') * 10 + (zone[5] - '0');
    offset_seconds = (zh * 3600 + zm * 60) * (zone[0] == '+' ? 1 : -1);
  } else {
    return Status::InvalidArgument("bad time zone in: " + text);
  }
  time_t seconds = timegm(&tm);
  return (static_cast<int64_t>(seconds) - offset_seconds) * 1000000 + micros;
}

int64_t NowUnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<int64_t> ParseGoDuration(const std::string& text) {
  const Status bad = Status::InvalidArgument("'" + text.substr(0, 40) +
                                             "' is not a duration such as 48h, 1h30m or 90s");
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (text.substr(i) == "0") return 0;
  if (i == text.size()) return bad;
  long double nanos = 0;
  while (i < text.size()) {
    const size_t number_start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    const std::string number = text.substr(number_start, i - number_start);
    if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) {
      return bad;
    }
    const size_t unit_start = i;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) &&
           text[i] != '.') {
      ++i;
    }
    const std::string unit = text.substr(unit_start, i - unit_start);
    long double scale = 0;
    if (unit == "ns") scale = 1;
    if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") scale = 1e3;
    if (unit == "ms") scale = 1e6;
    if (unit == "s") scale = 1e9;
    if (unit == "m") scale = 60e9;
    if (unit == "h") scale = 3600e9;
    if (scale == 0) return bad;
    nanos += std::stold(number) * scale;
    if (nanos > 9.2e18L) return bad;
  }
  const int64_t micros = static_cast<int64_t>(nanos / 1000);
  return negative ? -micros : micros;
}

std::string NowUtcFormatted(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const size_t length = std::strftime(text, sizeof(text), format, &utc);
  return std::string(text, length);
}

}  // namespace cairn
