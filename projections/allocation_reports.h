// Determined's allocation reports (`det resources allocations|raw|aggregated`), computed from the
// allocation ledger (allocation_projector.h) for any window. Pure: the ledger's read and `now` in,
// text or JSON out. `now` ends what is still held: the wall clock at the edge, the last folded
// event's time for a past moment (`cairn replay allocations`).
//
// Usage is slot-seconds: each part of an allocation counts its slots times the part of its
// [start, end) inside the window. Unlike Determined, whose nightly job aggregates only complete
// days, the aggregated report includes today up to `now`: it is folded from the log on demand.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "projections/allocation_projector.h"

namespace cairn::projections {

// Slot-seconds `allocation` used in [from, to), a part still held counted up to `now`.
double SlotSecondsWithin(const views::AllocationView& allocation, int64_t from, int64_t to,
                         int64_t now);

// GET /resources/allocation/allocations-csv: one row per allocation overlapping [after, before),
// in start order, with slot_hours inside the window.
std::string AllocationsCsv(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                           int64_t now);

// The raw report's entries: one per allocation overlapping [after, before); kind is its task's
// type in lower case ("trial", "command", ...), seconds its wall time inside the window.
// `user_ids` maps usernames to ids (absent: no userId).
nlohmann::json RawAllocationsJson(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                                  int64_t now, const std::map<std::string, int32_t>& user_ids);
std::string RawAllocationsCsv(const AllocationLedgerRead& ledger, int64_t after, int64_t before,
                              int64_t now);

enum class AggregationPeriod { kDaily, kMonthly };

// "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY" / "..._MONTHLY" (or "daily" / "monthly").
Result<AggregationPeriod> ParseAggregationPeriod(const std::string& text);

// A day or month of usage, in slot-seconds.
struct AggregatedUsage {
  std::string period_start;  // "YYYY-MM-DD", or "YYYY-MM" for a month
  double seconds = 0;
  std::map<std::string, double> by_username;
  std::map<std::string, double> by_experiment_label;  // an experiment's usage counts to each label
  std::map<std::string, double> by_resource_pool;
};

// The UTC window [start, end) of the days `start_date` to `end_date` inclusive ("YYYY-MM-DD", or
// "YYYY-MM" when monthly: from the first day of the first month to the last of the last).
// InvalidArgument naming the bad date, or when start is after end.
struct DateWindow {
  int64_t start_unix_micros = 0;
  int64_t end_unix_micros = 0;
};
Result<DateWindow> ParseDateWindow(const std::string& start_date, const std::string& end_date,
                                   AggregationPeriod period);

// One entry per day (month) of `window` from the ledger's first allocation's day up to `now`'s,
// days without usage included as 0 as Determined's are. `ledger` must be read over the window.
std::vector<AggregatedUsage> AggregateUsage(const AllocationLedgerRead& ledger,
                                            const DateWindow& window, AggregationPeriod period,
                                            int64_t now);
nlohmann::json AggregatedUsageJson(const std::vector<AggregatedUsage>& usage,
                                   AggregationPeriod period);
std::string AggregatedUsageCsv(const std::vector<AggregatedUsage>& usage);

}  // namespace cairn::projections
