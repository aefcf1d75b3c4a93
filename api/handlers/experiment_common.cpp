#include "api/handlers/experiment_common.h"

#include <algorithm>

#include "api/render/experiment_json.h"
#include "api/rest_util.h"

namespace cairn::api {

using nlohmann::json;

Result<views::ExperimentView> LoadExperiment(Call& call, const std::string& id_text) {
  CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(id_text, "experiment"));
  CAIRN_ASSIGN_OR_RETURN(auto experiment, call.services().projections->GetExperiment(id));
  // An experiment in a workspace the caller may not see does not exist for them.
  if (!experiment || experiment->deleted() || !call.CanView(experiment->workspace_id())) {
    return Status::NotFound("experiment " + std::to_string(id) + " not found");
  }
  return *experiment;
}

Result<views::TrialView> LoadTrial(Call& call, const std::string& id_text) {
  CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(id_text, "trial"));
  CAIRN_ASSIGN_OR_RETURN(auto trial, call.services().projections->GetTrial(id));
  if (!trial) return Status::NotFound("trial " + std::to_string(id) + " not found");
  // A trial is seen by whoever may see its experiment.
  if (!LoadExperiment(call, std::to_string(trial->experiment_id())).ok()) {
    return Status::NotFound("trial " + std::to_string(id) + " not found");
  }
  return *trial;
}

Result<json> ExperimentWithTrials(Call& call, const views::ExperimentView& experiment) {
  json rendered =
      ExperimentJson(experiment, experiment.trial_ids_size(), call.AudienceFor(experiment.owner()));
  // Where it is, by name (det experiment list --show_project).
  const commands::TenancyState& tenancy = call.tenancy();
  if (const auto* project = tenancy.FindProject(ProjectOrUncategorized(experiment.project_id()))) {
    rendered["projectName"] = project->name;
    // The built-in Uncategorized project has no creator: Determined gives it to admin (id 1).
    if (project->owner_user_id > 0) rendered["projectOwnerId"] = project->owner_user_id;
  }
  if (const auto* workspace =
          tenancy.FindWorkspace(WorkspaceOrUncategorized(experiment.workspace_id()))) {
    rendered["workspaceName"] = workspace->name;
  }
  return rendered;
}

}  // namespace cairn::api
