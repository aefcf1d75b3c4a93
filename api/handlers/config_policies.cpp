#include "api/handlers/config_policies.h"

#include "api/rest_util.h"
#include "commands/policies/config_policies.h"
#include "events/redaction.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// The route's scope: the workspace (kEveryWorkspace for /global) and the workload type.
struct PolicyScope {
  int32_t workspace_id = commands::kEveryWorkspace;
  std::string workload_type;
};

Result<PolicyScope> ScopeOf(Call& call) {
  PolicyScope scope;
  scope.workload_type = call.Param("workloadType");
  CAIRN_RETURN_IF_ERROR(commands::CheckWorkloadType(scope.workload_type));
  const std::string& workspace = call.Param("workspaceId");
  if (!workspace.empty()) {
    CAIRN_ASSIGN_OR_RETURN(scope.workspace_id, ParseInt32Id(workspace, "workspace"));
    if (!call.tenancy().FindWorkspace(scope.workspace_id) || !call.CanView(scope.workspace_id)) {
      return Status::NotFound("workspace " + workspace + " not found");
    }
  }
  return scope;
}

net::Response PoliciesAnswer(Call& call, const PolicyScope& scope, uint64_t offset) {
  auto stored =
      call.services().projections->GetConfigPolicies(scope.workspace_id, scope.workload_type);
  if (!stored.ok()) return Error(stored.status());
  json policies = json::object();
  if (*stored) {
    const events::ConfigPoliciesSet& set = **stored;
    // Credentials in it are the machines' (sealed in the log), variables the admins'.
    policies = commands::ConfigPoliciesJson(
        RedactConfigJson(set.invariant_config_json(), call.AudienceFor("")),
        set.has_priority_limit() ? std::optional<int32_t>(set.priority_limit()) : std::nullopt,
        set.has_max_slots() ? std::optional<int32_t>(set.max_slots()) : std::nullopt);
  }
  return Ok({{"configPolicies", policies}}, offset);
}

}  // namespace

net::Response GetConfigPoliciesRoute(Call& call) {
  auto scope = ScopeOf(call);
  if (!scope.ok()) return Error(scope.status());
  return PoliciesAnswer(call, *scope, 0);
}

net::Response PutConfigPoliciesRoute(Call& call) {
  auto scope = ScopeOf(call);
  if (!scope.ok()) return Error(scope.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto text = GetString(*body, "configPolicies", "configPolicies", true);
  if (!text.ok()) return Error(text.status());
  auto shown = call.ExecuteAndShow(
      commands::SetConfigPolicies{scope->workspace_id, scope->workload_type, *text});
  if (!shown.ok()) return Error(shown.status());
  return PoliciesAnswer(call, *scope, shown->offset);
}

net::Response DeleteConfigPoliciesRoute(Call& call) {
  auto scope = ScopeOf(call);
  if (!scope.ok()) return Error(scope.status());
  auto shown = call.ExecuteAndShow(
      commands::DeleteConfigPolicies{scope->workspace_id, scope->workload_type});
  if (!shown.ok()) return Error(shown.status());
  return Ok(json::object(), shown->offset);
}

}  // namespace cairn::api
