#include "api/handlers/trials.h"

#include "api/handlers/checkpoints.h"
#include "api/handlers/experiment_common.h"
#include "api/log_stream.h"
#include "api/render/experiment_json.h"
#include "base/clock.h"
#include "commands/experiments/experiment_state.h"

namespace cairn::api {

using nlohmann::json;

net::Response GetTrial(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  return Ok({{"trial", TrialJson(*trial)}});
}

namespace {

// Determined's MetricsReport (GET /api/v1/trials/metrics/...): one report of a group.
json MetricsReportJson(const views::WorkloadView& workload, const std::string& group) {
  json report = {{"id", std::to_string(workload.offset())},
                 {"trialId", workload.trial_id()},
                 {"totalBatches", workload.total_batches()},
                 {"group", group},
                 {"archived", false},
                 {"trialRunId", 0},
                 {"metrics", {{"avg_metrics", JsonObjectOf(workload.metrics_json())}}}};
  if (workload.end_time_unix_micros() != 0) {
    report["endTime"] = FormatRfc3339(workload.end_time_unix_micros());
  }
  return report;
}

std::string GroupOf(const views::WorkloadView& workload) {
  if (!workload.group().empty()) return workload.group();
  if (workload.kind() == events::WORKLOAD_KIND_TRAIN) return "training";
  if (workload.kind() == events::WORKLOAD_KIND_VALIDATE) return "validation";
  return "";
}

// The reports of `group` of every trial ?trialIds= names that the caller may see, as Determined's
// stream of them (one line here: what the trials have reported so far).
net::Response MetricsOfGroup(Call& call, const std::string& group) {
  if (group.empty()) return Error(Status::InvalidArgument("group is required"));
  std::vector<std::string> ids = call.request().QueryParams("trialIds");
  if (ids.empty()) return Error(Status::InvalidArgument("trialIds is required"));
  json reports = json::array();
  for (const auto& id : ids) {
    auto trial = LoadTrial(call, id);
    if (!trial.ok()) return Error(trial.status());
    auto workloads = call.services().projections->ListWorkloads(trial->trial_id());
    if (!workloads.ok()) return Error(workloads.status());
    for (const auto& workload : *workloads) {
      if (GroupOf(workload) == group) reports.push_back(MetricsReportJson(workload, group));
    }
  }
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.body = json{{"result", {{"metrics", reports}}}}.dump() + "\n";
  return response;
}

}  // namespace

net::Response TrialMetrics(Call& call) {
  return MetricsOfGroup(call, call.request().QueryParam("group"));
}
net::Response TrialTrainingMetrics(Call& call) { return MetricsOfGroup(call, "training"); }
net::Response TrialValidationMetrics(Call& call) { return MetricsOfGroup(call, "validation"); }

net::Response TrialWorkloads(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto workloads = call.services().projections->ListWorkloads(trial->trial_id());
  if (!workloads.ok()) return Error(workloads.status());
  auto [page, pagination] = Page(std::move(*workloads), *paging);
  json list = json::array();
  for (const auto& workload : page) {
    // A group of the user's own is no workload of Determined's; it is read by its group.
    if (workload.kind() != events::WORKLOAD_KIND_UNSPECIFIED)
      list.push_back(WorkloadJson(workload));
  }
  return Ok({{"workloads", list}, {"pagination", pagination}});
}

net::Response TrialLogs(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  Projections* projections = call.services().projections;
  const int64_t trial_id = trial->trial_id();
  const int64_t experiment_id = trial->experiment_id();
  auto window = ParseLogWindow(call.request());
  if (!window.ok()) return Error(window.status());
  return StreamTaskLogs(call.services(), follow, *window, [projections, trial_id, experiment_id] {
    LogSources sources;
    sources.trial_id = trial_id;
    auto current = projections->GetTrial(trial_id);
    if (!current.ok() || !*current) {
      sources.ended = true;
      return sources;
    }
    for (int run = 1; run <= (*current)->runs(); ++run) {
      sources.task_ids.push_back(commands::TrialRunTaskId(experiment_id, trial_id, run));
      sources.task_ids.push_back(commands::LegacyTrialRunTaskId(trial_id, run));
    }
    sources.ended = (*current)->ended();
    return sources;
  });
}

net::Response KillTrialRoute(Call& call) {
  auto trial = LoadTrial(call, call.Param("id"));
  if (!trial.ok()) return Error(trial.status());
  auto outcome = call.ExecuteAndShow(commands::KillTrial{trial->trial_id()});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response TrialCheckpoints(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  return ListCheckpointsOf(call, std::to_string(trial->experiment_id()), trial->trial_id());
}

}  // namespace cairn::api
