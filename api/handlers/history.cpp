#include "api/handlers/history.h"

#include "api/responses.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "replay/state_format.h"

namespace cairn::api {

namespace {
// A page of the queue (as det job list reads it) and of the experiments: the whole past queue
// can be 100,000 jobs.
constexpr size_t kDefaultPageRows = 100;

constexpr int64_t kDefaultUtilizationWindowMicros = int64_t{3600} * 1'000'000;
constexpr size_t kDefaultUtilizationSteps = 60;
constexpr size_t kMaxUtilizationSteps = 1000;

nlohmann::json CountsJson(const views::UtilizationSample& counts) {
  return {{"slotsTotal", counts.slots_total()},
          {"slotsUsed", counts.slots_used()},
          {"tasksWaiting", counts.tasks_waiting()}};
}
}  // namespace

net::Response GetHistoryState(Call& call) {
  if (Status admin = call.RequireAdmin("read the cluster's past"); !admin.ok()) return Error(admin);
  const net::Request& request = call.request();
  const std::string at = request.QueryParam("at");
  auto time = OptionalTimeParam(request, "time");
  if (!time.ok()) return Error(time.status());
  if (at.empty() == !time->has_value()) {
    return Error(Status::InvalidArgument("give exactly one of at=OFFSET or time=RFC3339"));
  }
  // 0 = the whole queue. Checked before the past is opened, which costs a snapshot's copy.
  auto limit = CountParam(request, "limit", kDefaultPageRows, 0, 100000);
  if (!limit.ok()) return Error(limit.status());
  // A page of the experiments not ended, 100 by default like the queue's: an overloaded past has
  // thousands, megabytes of JSON whose rendering would be most of the read.
  auto experiment_limit = CountParam(request, "experimentLimit", kDefaultPageRows, 0, 100000);
  if (!experiment_limit.ok()) return Error(experiment_limit.status());
  EventLog& log = *call.services().log;
  auto end = log.EndOffset();
  if (!end.ok()) return Error(end.status());
  if (*end == 0) return Error(Status::NotFound("the log is empty: there is no past yet"));
  uint64_t last_offset = *end - 1;
  if (!at.empty()) {
    auto offset = ParseId(at, "at");
    if (!offset.ok()) return Error(offset.status());
    if (static_cast<uint64_t>(*offset) >= *end) {
      return Error(Status::InvalidArgument("at: offset " + at + " is past the log's last offset " +
                                           std::to_string(*end - 1)));
    }
    last_offset = static_cast<uint64_t>(*offset);
  }
  auto past = projections::PastProjections::Open(call.services().projections->snapshots(), &log,
                                                 last_offset, *time, replay::StateProjections());
  if (!past.ok()) return Error(past.status());
  auto state = replay::StateJson(**past, (*past)->next_offset(),
                                 {.live_tasks_only = true,
                                  .experiments = true,
                                  .queue_limit = *limit,
                                  .experiment_limit = *experiment_limit});
  if (!state.ok()) return Error(state.status());
  nlohmann::json& document = *state;
  const auto& base = (*past)->base();
  document["snapshot"] = base ? nlohmann::json{{"nextOffset", std::to_string(base->next_offset)}}
                              : nlohmann::json(nullptr);
  nlohmann::json as_of = {{"nextOffset", std::to_string((*past)->next_offset())}};
  if (*time) as_of["time"] = FormatRfc3339(**time);
  document["asOf"] = std::move(as_of);
  return Ok(std::move(document));
}

net::Response GetHistoryUtilization(Call& call) {
  const net::Request& request = call.request();
  auto from = OptionalTimeParam(request, "from");
  if (!from.ok()) return Error(from.status());
  auto to = OptionalTimeParam(request, "to");
  if (!to.ok()) return Error(to.status());
  auto steps = CountParam(request, "steps", kDefaultUtilizationSteps, 1, kMaxUtilizationSteps);
  if (!steps.ok()) return Error(steps.status());
  const int64_t window_end = to->value_or(NowUnixMicros());
  const int64_t window_start = from->value_or(window_end - kDefaultUtilizationWindowMicros);
  if (window_start >= window_end) {
    return Error(Status::InvalidArgument("from must be before to"));
  }
  if (window_end - window_start < static_cast<int64_t>(*steps) * 1'000'000) {
    return Error(Status::InvalidArgument(
        "the window must be at least a second per step (steps=" + std::to_string(*steps) + ")"));
  }
  auto read =
      call.services().projections->Utilization(window_start, window_end, static_cast<int>(*steps));
  if (!read.ok()) return Error(read.status());
  nlohmann::json points = nlohmann::json::array();
  for (const projections::UtilizationPoint& point : read->points) {
    nlohmann::json row = CountsJson(point.at_end);
    row["time"] = FormatRfc3339(point.end_unix_micros);
    row["peakSlotsUsed"] = point.peak_slots_used;
    row["peakTasksWaiting"] = point.peak_tasks_waiting;
    row["offset"] = std::to_string(point.at_end.offset());
    points.push_back(std::move(row));
  }
  return Ok({{"from", FormatRfc3339(window_start)},
             {"to", FormatRfc3339(window_end)},
             {"stepSeconds", static_cast<double>(window_end - window_start) / 1e6 / *steps},
             {"atStart", CountsJson(read->at_start)},
             {"points", std::move(points)}});
}

}  // namespace cairn::api
