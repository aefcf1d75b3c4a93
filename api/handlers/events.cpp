#include "api/handlers/events.h"

#include <memory>
#include <set>

#include "api/event_visibility.h"
#include "events/envelope_util.h"
#include "replay/event_stream.h"

namespace cairn::api {

using nlohmann::json;

net::Response EventStream(Call& call) {
  const net::Request& request = call.request();
  replay::EventStreamOptions options;
  std::string from_text = request.QueryParam("from");
  if (!from_text.empty()) {
    if (from_text.size() > 19 || from_text.find_first_not_of("0123456789") != std::string::npos) {
      return Error(Status::InvalidArgument("from must be a non-negative integer offset"));
    }
    options.from = std::stoull(from_text);
  }
  const bool follow = request.QueryParam("follow") == "true";
  options.agent = request.QueryParam("agent");
  for (const auto& list : request.QueryParams("type")) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) options.types.insert(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  auto end = call.services().log->EndOffset();
  if (!end.ok()) return Error(end.status());
  if (!options.agent.empty() && options.from > 0 && options.from <= *end) {
    // Placement orders from a master that a newer one fenced off are not orders: seed the fence
    // with the newest epoch claimed before `from` (the writers projection must have seen it).
    if (Status shown = call.WaitFor(options.from - 1); !shown.ok()) return Error(shown);
    auto fence = call.services().projections->NewestEpochBefore(options.from);
    if (!fence.ok()) return Error(fence.status());
    options.fence_epoch = *fence;
  }
  auto opened = replay::EventStream::Open(call.services().log, std::move(options));
  if (!opened.ok()) return Error(opened.status());
  std::shared_ptr<replay::EventStream> stream = std::move(*opened);
  const std::atomic<bool>* stopping = call.services().stopping;
  const uint64_t stop_at = *end;
  net::Response response;
  response.content_type = "application/x-ndjson";
  // Who sees which secrets, per event: the stream outlives the call, so keep only that.
  // People other than admins see only what their workspaces allow (api/event_visibility.h).
  std::shared_ptr<EventVisibility> visibility;
  if (!call.agent_caller() && !call.user().admin) {
    auto* projections = call.services().projections;
    EventVisibility::Lookups lookups;
    lookups.task_workspace = [projections](const std::string& task_id) -> std::optional<int32_t> {
      auto task = projections->GetTask(task_id);
      if (!task.ok() || !task->has_value()) return std::nullopt;
      return (*task)->workspace_id();
    };
    lookups.experiment_workspace = [projections](int64_t experiment_id) -> std::optional<int32_t> {
      auto experiment = projections->GetExperiment(experiment_id);
      if (!experiment.ok() || !experiment->has_value()) return std::nullopt;
      return (*experiment)->workspace_id();
    };
    visibility = std::make_shared<EventVisibility>(call.tenancy(), call.user_record(), *end,
                                                   std::move(lookups));
  }
  auto audience_for = [agent = call.agent_caller(), admin = call.user().admin,
                       caller = call.user().username](const events::Envelope& event) {
    return AudienceOf(agent, admin, caller, OwnerOf(event));
  };
  response.stream = [stream, stopping, follow, stop_at, audience_for,
                     visibility](const net::ChunkWriter& write) {
    auto last_write = std::chrono::steady_clock::now();
    while (!stopping->load()) {
      if (!follow && stream->position() >= stop_at) return;
      auto events = stream->Next(1000, std::chrono::milliseconds(250));
      if (!events.ok()) {
        write(json{{"error", {{"message", events.status().message()}}}}.dump() + "\n");
        return;
      }
      std::string chunk;
      for (const auto& event : *events) {
        if (visibility != nullptr && !visibility->Visible(event)) continue;
        chunk += EnvelopeToJson(event, audience_for(event)) + "\n";
      }
      auto now = std::chrono::steady_clock::now();
      // An idle follow stream gets a blank keep-alive line every 15 s, so that readers can
      // tell a quiet log from a dead connection.
      if (chunk.empty() && follow && now - last_write > std::chrono::seconds(15)) chunk = "\n";
      if (!chunk.empty()) last_write = now;
      if (!write(chunk)) return;
    }
  };
  return response;
}

}  // namespace cairn::api
