#include "projections/allocation_reports.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/clock.h"

namespace cairn::projections {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// Go's RFC3339Nano as Determined's CSV writes it: no trailing zeros in the fraction.
std::string TimeText(int64_t unix_micros) {
  std::string text = FormatRfc3339(unix_micros);  // "...:SS.ffffffZ"
  const size_t dot = text.rfind('.');
  if (dot == std::string::npos) return text;
  size_t last = text.size() - 1;  // the 'Z'
  while (last > dot + 1 && text[last - 1] == '0') --last;
  if (last == dot + 1) last = dot;
  return text.substr(0, last) + "Z";
}

std::string Decimal(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%f", value);
  return buffer;
}

// A CSV field, quoted only where RFC 4180 needs it (as Go's encoding/csv writes).
std::string CsvField(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos &&
      (value.empty() || value.front() != ' ')) {
    return value;
  }
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string CsvRow(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) row += ',';
    row += CsvField(fields[i]);
  }
  return row + "\n";
}

// TRIAL, COMMAND, ... as Determined names task types.
std::string TaskTypeName(events::TaskType type) {
  switch (type) {
    case events::TASK_TYPE_TRIAL:
      return "TRIAL";
    case events::TASK_TYPE_COMMAND:
      return "COMMAND";
    case events::TASK_TYPE_NOTEBOOK:
      return "NOTEBOOK";
    case events::TASK_TYPE_SHELL:
      return "SHELL";
    case events::TASK_TYPE_TENSORBOARD:
      return "TENSORBOARD";
    default:
      return "UNSPECIFIED";
  }
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The allocation's end as far as `now` knows: its own, or `now` while held.
int64_t EndOrNow(const views::AllocationView& allocation, int64_t now) {
  return allocation.end_unix_micros() != 0 ? allocation.end_unix_micros()
                                           : std::max(now, allocation.start_unix_micros());
}

int64_t Overlap(int64_t start, int64_t end, int64_t from, int64_t to) {
  return std::max<int64_t>(0, std::min(end, to) - std::max(start, from));
}

bool Overlaps(const views::AllocationView& allocation, int64_t after, int64_t before, int64_t now) {
  return allocation.start_unix_micros() < before && EndOrNow(allocation, now) >= after;
}

const views::AllocationJobView* JobOf(const AllocationLedgerRead& ledger,
                                      const views::AllocationView& allocation) {
  auto job = ledger.jobs.find(allocation.job_id());
  return job == ledger.jobs.end() ? nullptr : &job->second;
}

using Days = std::chrono::sys_days;

int64_t DayStartMicros(Days day) {
  return static_cast<int64_t>(day.time_since_epoch().count()) * kMicrosPerDay;
}

Days DayOf(int64_t unix_micros) {
  int64_t days = unix_micros / kMicrosPerDay;
  if (unix_micros < 0 && unix_micros % kMicrosPerDay != 0) --days;
  return Days(std::chrono::days(days));
}

std::string DayText(Days day) {
  const std::chrono::year_month_day date(day);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return buffer;
}

// "YYYY-MM-DD" (or "YYYY-MM" when `month_only`), strictly.
Result<std::chrono::year_month_day> ParseDate(const std::string& text, bool month_only) {
  const size_t length = month_only ? 7 : 10;
  bool shaped = text.size() == length;
  for (size_t i = 0; shaped && i < length; ++i) {
    shaped =
        (i == 4 || i == 7) ? text[i] == '-' : std::isdigit(static_cast<unsigned char>(text[i]));
  }
  if (!shaped)
    return Status::InvalidArgument(month_only ? "expected YYYY-MM" : "expected YYYY-MM-DD");
  const int year = std::stoi(text.substr(0, 4));
  const unsigned month = static_cast<unsigned>(std::stoi(text.substr(5, 2)));
  const unsigned day = month_only ? 1u : static_cast<unsigned>(std::stoi(text.substr(8, 2)));
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(month),
                                         std::chrono::day(day)};
  if (!date.ok()) return Status::InvalidArgument("not a date of the calendar");
  return date;
}

}  // namespace

double SlotSecondsWithin(const views::AllocationView& allocation, int64_t from, int64_t to,
                         int64_t now) {
  const int64_t start = allocation.start_unix_micros();
  int64_t slot_micros = 0;
  for (const views::AllocationPartView& part : allocation.parts()) {
    const int64_t end =
        part.end_unix_micros() != 0 ? part.end_unix_micros() : EndOrNow(allocation, now);
    slot_micros += part.slots() * Overlap(start, end, from, to);
  }
  return static_cast<double>(slot_micros) / kMicrosPerSecond;
}

std::string AllocationsCsv(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                           int64_t now) {
  std::string csv =
      CsvRow({"allocation_id", "task_type", "username", "workspace_name", "experiment_id", "slots",
              "start_time", "end_time", "imagepulling_time", "slot_hours", "resource_pool"});
  for (const views::AllocationView& allocation : ledger.allocations) {
    if (!Overlaps(allocation, after, before, now)) continue;
    const views::AllocationJobView* job = JobOf(ledger, allocation);
    std::string workspace;
    if (job) {
      auto name = ledger.workspace_names.find(job->workspace_id());
      if (name != ledger.workspace_names.end()) workspace = name->second;
    }
    const int64_t experiment_id = job ? job->experiment_id() : 0;
    csv += CsvRow({allocation.allocation_id(), TaskTypeName(allocation.task_type()),
                   allocation.username(), workspace,
                   experiment_id ? std::to_string(experiment_id) : "",
                   std::to_string(allocation.slots()), TimeText(allocation.start_unix_micros()),
                   allocation.end_unix_micros() ? TimeText(allocation.end_unix_micros()) : "",
                   "0.0", Decimal(SlotSecondsWithin(allocation, after, before, now) / 3600.0),
                   allocation.resource_pool()});
  }
  return csv;
}

namespace {

// One row of the raw report, shared by its JSON and its CSV.
struct RawEntry {
  const views::AllocationView* allocation;
  int64_t experiment_id;
  std::vector<std::string> labels;
  double seconds;  // wall time inside the window
};

std::vector<RawEntry> RawEntries(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                                 int64_t now) {
  std::vector<RawEntry> entries;
  for (const views::AllocationView& allocation : ledger.allocations) {
    if (!Overlaps(allocation, after, before, now)) continue;
    const views::AllocationJobView* job = JobOf(ledger, allocation);
    entries.push_back({&allocation, job ? job->experiment_id() : 0,
                       job ? std::vector<std::string>(job->labels().begin(), job->labels().end())
                           : std::vector<std::string>(),
                       static_cast<double>(Overlap(allocation.start_unix_micros(),
                                                   EndOrNow(allocation, now), after, before)) /
                           kMicrosPerSecond});
  }
  return entries;
}

}  // namespace

nlohmann::json RawAllocationsJson(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                                  int64_t now, const std::map<std::string, int32_t>& user_ids) {
  nlohmann::json entries = nlohmann::json::array();
  for (const RawEntry& raw : RawEntries(ledger, after, before, now)) {
    const views::AllocationView& allocation = *raw.allocation;
    nlohmann::json entry = {
        {"experimentId", raw.experiment_id},
        {"kind", Lower(TaskTypeName(allocation.task_type()))},
        {"username", allocation.username()},
        {"slots", allocation.slots()},
        {"labels", raw.labels},
        {"startTime", FormatRfc3339(allocation.start_unix_micros())},
        {"endTime", allocation.end_unix_micros()
                        ? nlohmann::json(FormatRfc3339(allocation.end_unix_micros()))
                        : nlohmann::json(nullptr)},
        {"seconds", raw.seconds},
    };
    auto user = user_ids.find(allocation.username());
    if (user != user_ids.end()) entry["userId"] = user->second;
    entries.push_back(std::move(entry));
  }
  return {{"resourceEntries", std::move(entries)}};
}

std::string RawAllocationsCsv(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                              int64_t now) {
  std::string csv = CsvRow({"experiment_id", "kind", "username", "labels", "slots", "start_time",
                            "end_time", "seconds"});
  for (const RawEntry& raw : RawEntries(ledger, after, before, now)) {
    const views::AllocationView& allocation = *raw.allocation;
    // Labels joined by ',' with '\' and ',' escaped, as Determined's CSV writes them.
    std::string labels;
    for (const std::string& label : raw.labels) {
      if (!labels.empty()) labels += ',';
      for (char c : label) {
        if (c == '\\' || c == ',') labels += '\\';
        labels += c;
      }
    }
    csv += CsvRow({std::to_string(raw.experiment_id), Lower(TaskTypeName(allocation.task_type())),
                   allocation.username(), labels, std::to_string(allocation.slots()),
                   TimeText(allocation.start_unix_micros()),
                   allocation.end_unix_micros() ? TimeText(allocation.end_unix_micros()) : "",
                   Decimal(raw.seconds)});
  }
  return csv;
}

Result<AggregationPeriod> ParseAggregationPeriod(const std::string& text) {
  if (text == "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY" || text == "daily") {
    return AggregationPeriod::kDaily;
  }
  if (text == "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY" || text == "monthly") {
    return AggregationPeriod::kMonthly;
  }
  return Status::InvalidArgument(
      "period: no aggregation period specified (RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY or "
      "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY)");
}

Result<DateWindow> ParseDateWindow(const std::string& start_date, const std::string& end_date,
                                   AggregationPeriod period) {
  const bool monthly = period == AggregationPeriod::kMonthly;
  auto start = ParseDate(start_date, monthly);
  if (!start.ok()) {
    return Status::InvalidArgument("invalid start date '" + start_date +
                                   "': " + start.status().message());
  }
  auto end = ParseDate(end_date, monthly);
  if (!end.ok()) {
    return Status::InvalidArgument("invalid end date '" + end_date +
                                   "': " + end.status().message());
  }
  if (Days(*start) > Days(*end)) {
    return Status::InvalidArgument("start date cannot be after end date");
  }
  Days last = Days(*end);
  if (monthly) last = Days(end->year() / end->month() / std::chrono::last);
  return DateWindow{DayStartMicros(Days(*start)), DayStartMicros(last + std::chrono::days(1))};
}

std::vector<AggregatedUsage> AggregateUsage(const AllocationLedgerRead& ledger,
                                            const DateWindow& window, AggregationPeriod period,
                                            int64_t now) {
  std::vector<AggregatedUsage> usage;
  if (ledger.first_start_unix_micros == 0) return usage;
  const Days first =
      std::max(DayOf(window.start_unix_micros), DayOf(ledger.first_start_unix_micros));
  const Days last = std::min(DayOf(window.end_unix_micros - 1), DayOf(now));
  if (first > last) return usage;
  // One entry per day first, each allocation charged to the days it spans.
  std::vector<AggregatedUsage> days(static_cast<size_t>((last - first).count() + 1));
  for (const views::AllocationView& allocation : ledger.allocations) {
    const views::AllocationJobView* job = JobOf(ledger, allocation);
    const Days from = std::max(first, DayOf(allocation.start_unix_micros()));
    const Days to = std::min(last, DayOf(EndOrNow(allocation, now)));
    for (Days day = from; day <= to; day += std::chrono::days(1)) {
      const double seconds = SlotSecondsWithin(allocation, DayStartMicros(day),
                                               DayStartMicros(day) + kMicrosPerDay, now);
      if (seconds <= 0) continue;
      AggregatedUsage& entry = days[static_cast<size_t>((day - first).count())];
      entry.seconds += seconds;
      entry.by_username[allocation.username()] += seconds;
      entry.by_resource_pool[allocation.resource_pool()] += seconds;
      if (job) {
        for (const std::string& label : job->labels()) entry.by_experiment_label[label] += seconds;
      }
    }
  }
  // Then the days fold into their months.
  for (Days day = first; day <= last; day += std::chrono::days(1)) {
    AggregatedUsage& entry = days[static_cast<size_t>((day - first).count())];
    std::string period_start = DayText(day);
    if (period == AggregationPeriod::kMonthly) period_start.resize(7);
    if (usage.empty() || usage.back().period_start != period_start) {
      entry.period_start = std::move(period_start);
      usage.push_back(std::move(entry));
      continue;
    }
    AggregatedUsage& month = usage.back();
    month.seconds += entry.seconds;
    for (const auto& [key, seconds] : entry.by_username) month.by_username[key] += seconds;
    for (const auto& [key, seconds] : entry.by_resource_pool)
      month.by_resource_pool[key] += seconds;
    for (const auto& [key, seconds] : entry.by_experiment_label) {
      month.by_experiment_label[key] += seconds;
    }
  }
  return usage;
}

nlohmann::json AggregatedUsageJson(const std::vector<AggregatedUsage>& usage,
                                   AggregationPeriod period) {
  const char* period_name = period == AggregationPeriod::kDaily
                                ? "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY"
                                : "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY";
  nlohmann::json entries = nlohmann::json::array();
  for (const AggregatedUsage& entry : usage) {
    entries.push_back({{"periodStart", entry.period_start},
                       {"period", period_name},
                       {"seconds", entry.seconds},
                       {"byUsername", nlohmann::json(entry.by_username)},
                       {"byExperimentLabel", nlohmann::json(entry.by_experiment_label)},
                       {"byResourcePool", nlohmann::json(entry.by_resource_pool)}});
    // Empty maps are objects, never null: Determined's CLI calls .items() on them.
    for (const char* key : {"byUsername", "byExperimentLabel", "byResourcePool"}) {
      if (entries.back()[key].is_null()) entries.back()[key] = nlohmann::json::object();
    }
  }
  return {{"resourceEntries", std::move(entries)}};
}

std::string AggregatedUsageCsv(const std::vector<AggregatedUsage>& usage) {
  std::string csv = CsvRow({"aggregation_type", "aggregation_key", "date", "seconds"});
  for (const AggregatedUsage& entry : usage) {
    auto rows = [&](const char* type, const std::map<std::string, double>& by) {
      for (const auto& [key, seconds] : by) {
        csv += CsvRow({type, key, entry.period_start, Decimal(seconds)});
      }
    };
    rows("experiment_label", entry.by_experiment_label);
    rows("username", entry.by_username);
    rows("resource_pool", entry.by_resource_pool);
    csv += CsvRow({"total", "total", entry.period_start, Decimal(entry.seconds)});
  }
  return csv;
}

}  // namespace cairn::projections
