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

}  // namespace cairn::api
