#include "api/handlers/trials.h"

#include "api/handlers/checkpoints.h"
#include "api/handlers/experiment_common.h"
#include "api/log_stream.h"
#include "api/render/experiment_json.h"
#include "commands/experiments/experiment_state.h"

namespace cairn::api {

using nlohmann::json;

net::Response GetTrial(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  return Ok({{"trial", TrialJson(*trial)}});
}

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
  for (const auto& workload : page) list.push_back(WorkloadJson(workload));
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
  return StreamTaskLogs(call.services(), follow, [projections, trial_id, experiment_id] {
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
