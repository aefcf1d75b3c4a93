#include "api/handlers/resources.h"

#include "base/clock.h"
#include "projections/allocation_reports.h"

namespace cairn::api {

namespace {

using projections::AggregationPeriod;

// As in Determined: every user under basic authorization, cluster admins where roles apply.
Status MayReadUsage(const Call& call) {
  if (!call.tenancy().RolesApply()) return Status::Ok();
  return call.RequireAdmin("read the cluster's allocation reports");
}

// A query parameter by its proto (snake_case) or JSON (camelCase) name.
std::string QueryEither(const Call& call, const char* snake, const char* camel) {
  std::string value = call.request().QueryParam(snake);
  return value.empty() ? call.request().QueryParam(camel) : value;
}

struct TimeWindow {
  int64_t after = 0;
  int64_t before = 0;
};

// timestamp_after and timestamp_before, both required; `strict`: exactly YYYY-MM-DDTHH:MM:SSZ,
// as Determined's CSV routes take them.
Result<TimeWindow> TimeWindowOf(const Call& call, bool strict) {
  TimeWindow window;
  const std::pair<const char*, int64_t*> bounds[] = {{"start", &window.after},
                                                     {"end", &window.before}};
  const std::string texts[] = {QueryEither(call, "timestamp_after", "timestampAfter"),
                               QueryEither(call, "timestamp_before", "timestampBefore")};
  for (int i = 0; i < 2; ++i) {
    const std::string& text = texts[i];
    const std::string name = bounds[i].first;
    if (text.empty()) return Status::InvalidArgument("no " + name + " time provided");
    const bool shaped =
        !strict || (text.size() == 20 && text[4] == '-' && text[7] == '-' && text[10] == 'T' &&
                    text[13] == ':' && text[16] == ':' && text[19] == 'Z');
    auto parsed = ParseTimeToUnixMicros(text);
    if (!shaped || !parsed.ok()) {
      return Status::InvalidArgument("invalid " + name + " time '" + text +
                                     "': expected YYYY-MM-DDTHH:MM:SSZ");
    }
    *bounds[i].second = *parsed;
  }
  if (window.after > window.before) {
    return Status::InvalidArgument("start time cannot be after end time");
  }
  return window;
}

net::Response Csv(std::string body) {
  net::Response response;
  response.content_type = "text/csv";
  response.body = std::move(body);
  return response;
}

// The report's read: admins only, the window parsed, the ledger read over it.
template <typename Render>
net::Response WindowReport(Call& call, bool strict, Render render) {
  if (Status may = MayReadUsage(call); !may.ok()) return Error(may);
  auto window = TimeWindowOf(call, strict);
  if (!window.ok()) return Error(window.status());
  auto ledger = call.services().projections->AllocationLedger(window->after, window->before);
  if (!ledger.ok()) return Error(ledger.status());
  return render(*ledger, *window, NowUnixMicros());
}

struct Aggregated {
  std::vector<projections::AggregatedUsage> usage;
  AggregationPeriod period;
};

Result<Aggregated> AggregatedOf(Call& call) {
  CAIRN_RETURN_IF_ERROR(MayReadUsage(call));
  CAIRN_ASSIGN_OR_RETURN(AggregationPeriod period,
                         projections::ParseAggregationPeriod(call.request().QueryParam("period")));
  CAIRN_ASSIGN_OR_RETURN(
      projections::DateWindow window,
      projections::ParseDateWindow(QueryEither(call, "start_date", "startDate"),
                                   QueryEither(call, "end_date", "endDate"), period));
  CAIRN_ASSIGN_OR_RETURN(auto ledger, call.services().projections->AllocationLedger(
                                          window.start_unix_micros, window.end_unix_micros));
  return Aggregated{projections::AggregateUsage(ledger, window, period, NowUnixMicros()), period};
}

}  // namespace

net::Response AllocationsCsvRoute(Call& call) {
  return WindowReport(call, true, [](const auto& ledger, const TimeWindow& window, int64_t now) {
    return Csv(projections::AllocationsCsv(ledger, window.after, window.before, now));
  });
}

net::Response RawAllocationsCsvRoute(Call& call) {
  return WindowReport(call, true, [](const auto& ledger, const TimeWindow& window, int64_t now) {
    return Csv(projections::RawAllocationsCsv(ledger, window.after, window.before, now));
  });
}

net::Response RawAllocationsRoute(Call& call) {
  return WindowReport(call, false, [&](const auto& ledger, const TimeWindow& window, int64_t now) {
    std::map<std::string, int32_t> user_ids;
    for (const auto& allocation : ledger.allocations) {
      if (user_ids.count(allocation.username())) continue;
      auto user = call.services().projections->GetUserByName(allocation.username());
      if (user.ok() && *user) user_ids[allocation.username()] = (*user)->id();
    }
    return Ok(projections::RawAllocationsJson(ledger, window.after, window.before, now, user_ids));
  });
}

net::Response AggregatedAllocationsCsvRoute(Call& call) {
  auto aggregated = AggregatedOf(call);
  if (!aggregated.ok()) return Error(aggregated.status());
  return Csv(projections::AggregatedUsageCsv(aggregated->usage));
}

net::Response AggregatedAllocationsRoute(Call& call) {
  auto aggregated = AggregatedOf(call);
  if (!aggregated.ok()) return Error(aggregated.status());
  return Ok(projections::AggregatedUsageJson(aggregated->usage, aggregated->period));
}

}  // namespace cairn::api
