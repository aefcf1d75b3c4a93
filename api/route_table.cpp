#include "api/route_table.h"

#include "api/bulk_reads.h"
#include "api/handlers/agent_protocol.h"
#include "api/handlers/agents.h"
#include "api/handlers/audit.h"
#include "api/handlers/auth.h"
#include "api/handlers/checkpoints.h"
#include "api/handlers/commands.h"
#include "api/handlers/config_policies.h"
#include "api/handlers/determined_trials.h"
#include "api/handlers/events.h"
#include "api/handlers/experiments.h"
#include "api/handlers/generic_tasks.h"
#include "api/handlers/groups.h"
#include "api/handlers/harness.h"
#include "api/handlers/history.h"
#include "api/handlers/interactive.h"
#include "api/handlers/job_queue.h"
#include "api/handlers/master.h"
#include "api/handlers/models.h"
#include "api/handlers/not_supported.h"
#include "api/handlers/openpai.h"
#include "api/handlers/profiler.h"
#include "api/handlers/rbac.h"
#include "api/handlers/resource_pools.h"
#include "api/handlers/resources.h"
#include "api/handlers/tasks.h"
#include "api/handlers/templates.h"
#include "api/handlers/tokens.h"
#include "api/handlers/trials.h"
#include "api/handlers/users.h"
#include "api/handlers/web_ui.h"
#include "api/handlers/webhooks.h"
#include "api/handlers/workspaces.h"

namespace cairn::api {

// Lists that render many entities are Bulk<>: they run on the bulk read pool, at a lower CPU
// priority than everything else (api/bulk_reads.h). Never a stream: it would hold a worker.
// BulkVersioned<> lists also keep their answer while the version of what they show holds.
std::vector<Route> RouteTable() {
  using enum Access;
  // clang-format off
  std::vector<Route> table = {
      // The master and who is calling.
      {"GET",    "/info",                                   kPublic,     Info},
      {"GET",    "/api/v1/master",                          kPublic,     MasterInfo},
      {"GET",    "/api/v1/master/config",                   kUser,       MasterConfigRoute},  // admins
      {"PATCH",  "/api/v1/master/config",                   kUser,       PatchMasterConfig},  // admins
      {"GET",    "/api/v1/master/logs",                     kUser,       MasterLogs},         // admins
      {"POST",   "/api/v1/cleanup_logs",                    kUser,       CleanupLogsRoute},   // admins
      {"GET",    "/api/v1/master/cluster_message",          kUser,       GetClusterMessageRoute},   // admins
      {"PUT",    "/api/v1/master/cluster_message",          kUser,       SetClusterMessageRoute},   // admins
      {"DELETE", "/api/v1/master/cluster_message",          kUser,       ClearClusterMessageRoute}, // admins
      {"POST",   "/api/v1/auth/login",                      kPublic,     Login},
      // The web UI's page and files; every view reads its data through the routes below.
      {"GET",    "/",                                       kPublic,     WebUiPage},
      {"GET",    "/ui/{rest...}",                           kPublic,     WebUiFile},
      {"GET",    "/ui/vendor/chart.js",                     kPublic,     WebUiChart},
      {"POST",   "/api/v1/auth/logout",                     kUser,       Logout},
      {"GET",    "/api/v1/me",                              kUser,       Me},
      // Users (admins manage them; everyone reads them and changes their own password).
      {"GET",    "/api/v1/users",                           kUser,       ListUsers},
      {"POST",   "/api/v1/users",                           kUser,       CreateUser},
      {"GET",    "/api/v1/users/{userId}",                  kUser,       GetUser},
      {"PATCH",  "/api/v1/users/{userId}",                  kUser,       PatchUser},
      {"POST",   "/api/v1/users/{userId}/password",         kUser,       SetUserPassword},
      {"GET",    "/api/v1/users/{username}/by-username",    kUser,       GetUserByName},
      // Access tokens (a user's own; admins anyone's).
      {"POST",   "/api/v1/tokens",                          kUser,       CreateAccessTokenRoute},
      {"GET",    "/api/v1/tokens",                          kUser,       ListAccessTokensRoute},
      {"PATCH",  "/api/v1/tokens/{tokenId}",                kUser,       PatchAccessTokenRoute},
      {"GET",    "/api/v1/resource-pools",                  kUser,       ListResourcePools},

      // Who used how much (admins): allocation reports from the allocation ledger.
      {"GET",    "/resources/allocation/allocations-csv",   kUser,       Bulk<AllocationsCsvRoute>},
      {"GET",    "/resources/allocation/raw",               kUser,       Bulk<RawAllocationsCsvRoute>},
      {"GET",    "/api/v1/resources/allocation/raw",        kUser,       Bulk<RawAllocationsRoute>},
      {"GET",    "/resources/allocation/aggregated",        kUser,       Bulk<AggregatedAllocationsCsvRoute>},
      {"GET",    "/api/v1/resources/allocation/aggregated", kUser,       Bulk<AggregatedAllocationsRoute>},

      // Workspaces and projects (the decider checks each change against the caller's roles).
      {"GET",    "/api/v1/workspaces",                      kUser,       ListWorkspaces},
      {"POST",   "/api/v1/workspaces",                      kUser,       CreateWorkspaceRoute},
      {"GET",    "/api/v1/workspaces/{id}",                 kUser,       GetWorkspace},
      {"PATCH",  "/api/v1/workspaces/{id}",                 kUser,       PatchWorkspace},
      {"DELETE", "/api/v1/workspaces/{id}",                 kUser,       DeleteWorkspaceRoute},
      {"POST",   "/api/v1/workspaces/{id}/archive",         kUser,       ArchiveWorkspace},
      {"POST",   "/api/v1/workspaces/{id}/unarchive",       kUser,       UnarchiveWorkspace},
      {"POST",   "/api/v1/workspaces/{id}/pin",             kUser,       PinWorkspaceRoute},
      {"POST",   "/api/v1/workspaces/{id}/unpin",           kUser,       UnpinWorkspace},
      {"GET",    "/api/v1/workspaces/{id}/projects",        kUser,       ListWorkspaceProjects},
      {"POST",   "/api/v1/workspaces/{id}/projects",        kUser,       CreateProjectRoute},
      {"GET",    "/api/v1/workspaces/{id}/available-resource-pools", kUser, WorkspacePools},
      {"GET",    "/api/v1/config-policies/global/{workloadType}", kUser,  GetConfigPoliciesRoute},
      {"PUT",    "/api/v1/config-policies/global/{workloadType}", kUser,  PutConfigPoliciesRoute},
      {"DELETE", "/api/v1/config-policies/global/{workloadType}", kUser,  DeleteConfigPoliciesRoute},
      {"GET",    "/api/v1/config-policies/workspaces/{workspaceId}/{workloadType}", kUser,
                                                                      GetConfigPoliciesRoute},
      {"PUT",    "/api/v1/config-policies/workspaces/{workspaceId}/{workloadType}", kUser,
                                                                      PutConfigPoliciesRoute},
      {"DELETE", "/api/v1/config-policies/workspaces/{workspaceId}/{workloadType}", kUser,
                                                                      DeleteConfigPoliciesRoute},
      {"*",      "/api/v1/workspaces/{id}/{rest...}",       kUser,       WorkspacesNotSupported},
      {"GET",    "/api/v1/projects/{id}",                   kUser,       GetProject},
      {"PATCH",  "/api/v1/projects/{id}",                   kUser,       PatchProject},
      {"DELETE", "/api/v1/projects/{id}",                   kUser,       DeleteProjectRoute},
      {"POST",   "/api/v1/projects/{id}/archive",           kUser,       ArchiveProject},
      {"POST",   "/api/v1/projects/{id}/unarchive",         kUser,       UnarchiveProject},
      {"*",      "/api/v1/projects/{id}/{rest...}",         kUser,       WorkspacesNotSupported},
      {"GET",    "/api/v1/resource-pools/{name}/workspace-bindings", kUser, ListPoolBindings},
      {"POST",   "/api/v1/resource-pools/{name}/workspace-bindings", kUser, AddPoolBindings},
      {"DELETE", "/api/v1/resource-pools/{name}/workspace-bindings", kUser, RemovePoolBindings},
      {"PUT",    "/api/v1/resource-pools/{name}/workspace-bindings", kUser, ReplacePoolBindings},

      // Roles (det rbac) and user groups (det user-group).
      {"POST",   "/api/v1/roles/search",                    kUser,       SearchRoles},
      {"POST",   "/api/v1/roles/search/by-assignability",   kUser,       SearchAssignableRoles},
      {"POST",   "/api/v1/roles/search/by-ids",             kUser,       RolesByIds},
      {"GET",    "/api/v1/roles/search/by-user/{userId}",   kUser,       RolesOfUser},
      {"GET",    "/api/v1/roles/workspace/{id}",            kUser,       WorkspaceMembers},
      {"POST",   "/api/v1/roles/add-assignments",           kUser,       AddRoleAssignments},
      {"POST",   "/api/v1/roles/remove-assignments",        kUser,       RemoveRoleAssignments},
      {"GET",    "/api/v1/permissions/summary",             kUser,       PermissionsSummary},
      {"GET",    "/api/v1/roles/search/by-group/{groupId}", kUser,       RolesOfGroup},
      {"POST",   "/api/v1/groups/search",                   kUser,       SearchGroups},
      {"POST",   "/api/v1/groups",                          kUser,       CreateGroupRoute},
      {"GET",    "/api/v1/groups/{groupId}",                kUser,       GetGroupRoute},
      {"PUT",    "/api/v1/groups/{groupId}",                kUser,       UpdateGroupRoute},
      {"DELETE", "/api/v1/groups/{groupId}",                kUser,       DeleteGroupRoute},

      // Commands and tasks.
      {"POST",   "/api/v1/commands",                        kUser,       LaunchCommand},
      {"GET",    "/api/v1/commands",                        kUser,       BulkVersioned<ListCommands, TaskListVersionOf<events::TASK_TYPE_COMMAND>>},
      {"GET",    "/api/v1/commands/{id}",                   kUser,       GetCommand},
      {"POST",   "/api/v1/commands/{id}/kill",              kUser,       KillCommand},
      {"POST",   "/api/v1/commands/{id}/set_priority",      kUser,       SetCommandPriority},
      {"POST",   "/api/v1/notebooks/{id}/set_priority",     kUser,       SetNotebookPriority},
      {"POST",   "/api/v1/shells/{id}/set_priority",        kUser,       SetShellPriority},
      {"POST",   "/api/v1/tensorboards/{id}/set_priority",  kUser,       SetTensorboardPriority},

      // Notebooks, shells and TensorBoards, and the proxy that is the only way to them (the
      // task's owner, its workspace's admins and cluster admins get through).
      {"POST",   "/api/v1/notebooks",                       kUser,       LaunchNotebook},
      {"GET",    "/api/v1/notebooks",                       kUser,       BulkVersioned<ListNotebooks, TaskListVersionOf<events::TASK_TYPE_NOTEBOOK>>},
      {"GET",    "/api/v1/notebooks/{id}",                  kUser,       GetNotebook},
      {"POST",   "/api/v1/notebooks/{id}/kill",             kUser,       KillNotebook},
      {"POST",   "/api/v1/shells",                          kUser,       LaunchShell},
      {"GET",    "/api/v1/shells",                          kUser,       BulkVersioned<ListShells, TaskListVersionOf<events::TASK_TYPE_SHELL>>},
      {"GET",    "/api/v1/shells/{id}",                     kUser,       GetShell},
      {"POST",   "/api/v1/shells/{id}/kill",                kUser,       KillShell},
      {"POST",   "/api/v1/tensorboards",                    kUser,       LaunchTensorboard},
      {"GET",    "/api/v1/tensorboards",                    kUser,       BulkVersioned<ListTensorboards, TaskListVersionOf<events::TASK_TYPE_TENSORBOARD>>},
      {"GET",    "/api/v1/tensorboards/{id}",               kUser,       GetTensorboard},
      {"POST",   "/api/v1/tensorboards/{id}/kill",          kUser,       KillTensorboard},
      {"*",      "/api/v1/notebooks/{rest...}",             kUser,       NotebooksNotSupported},
      {"*",      "/api/v1/shells/{rest...}",                kUser,       ShellsNotSupported},
      {"*",      "/api/v1/tensorboards/{rest...}",          kUser,       TensorboardsNotSupported},
      {"POST",   "/api/v1/tasks/{id}/proxy-cookie",         kUser,       SetProxyCookie},
      {"*",      "/proxy/{id}",                             kProxyUserOrSshTunnel, ProxyToTask},
      {"*",      "/proxy/{id}/{rest...}",                   kProxyUserOrSshTunnel, ProxyToTask},
      {"GET",    "/det/interactive/{rest...}",              kPublic,     InteractivePage},
      {"GET",    "/api/v1/tasks",                           kUser,       Bulk<ListTasks>},
      {"GET",    "/api/v1/tasks/{id}",                      kUser,       GetTask},
      {"GET",    "/api/v1/tasks/{id}/logs",                 kUser,       TaskLogs},
      {"GET",    "/api/v1/tasks/{id}/logs/fields",          kUser,       TaskLogFields},
      {"POST",   "/api/v1/tasks/{id}/kill",                 kUser,       KillTaskRoute},
      {"POST",   "/api/v1/generic-tasks",                   kUser,       CreateGenericTask},
      {"GET",    "/api/v1/tasks/{id}/config",               kUser,       GetTaskConfig},
      {"POST",   "/api/v1/tasks/{id}/pause",                kUser,       PauseTask},
      {"POST",   "/api/v1/tasks/{id}/unpause",              kUser,       UnpauseTask},

      // Agents, as users see them.
      {"GET",    "/api/v1/agents",                          kUser,       ListAgents},
      {"GET",    "/api/v1/agents/{id}",                     kUser,       GetAgent},
      {"POST",   "/api/v1/agents/{id}/enable",              kUser,       EnableAgent},
      {"POST",   "/api/v1/agents/{id}/disable",             kUser,       DisableAgent},
      {"POST",   "/api/v1/agents/{id}/slots/{slotId}/enable",  kUser,    EnableSlot},
      {"POST",   "/api/v1/agents/{id}/slots/{slotId}/disable", kUser,    DisableSlot},

      // The job queue.
      {"GET",    "/api/v1/job-queues-v2",                   kUser,       BulkUnlessSmallPage<JobQueueV2>},
      {"GET",    "/api/v1/job-queues",                      kUser,       BulkUnlessSmallPage<JobQueue>},
      {"POST",   "/api/v1/job-queues",                      kUser,       UpdateJobQueue},
      {"GET",    "/api/v1/job-queues/stats",                kUser,       JobQueueStats},

      // Experiments, trials and templates.
      {"POST",   "/api/v1/experiments",                     kUser,       CreateExperiment},
      {"GET",    "/api/v1/experiments",                     kUser,       Bulk<ListExperiments>},
      {"GET",    "/api/v1/experiments/{id}",                kUser,       GetExperiment},
      {"PATCH",  "/api/v1/experiments/{id}",                kUser,       PatchExperiment},
      {"DELETE", "/api/v1/experiments/{id}",                kUser,       DeleteExperiment},
      {"POST",   "/api/v1/experiments/continue",            kUser,       ContinueExperimentRoute},
      {"GET",    "/experiments/{id}/preview_gc",            kUser,       PreviewGcRoute},
      {"DELETE", "/api/v1/experiments/{id}/tensorboard-files", kUser,    DeleteTensorboardFilesRoute},
      {"POST",   "/api/v1/preview-hp-search",               kUser,       PreviewSearchRoute},
      {"GET",    "/api/v1/experiments/{id}/trials",         kUser,       Bulk<ExperimentTrials>},
      {"GET",    "/api/v1/experiments/{id}/checkpoints",    kUser,       ExperimentCheckpoints},
      {"GET",    "/api/v1/experiments/{id}/logs",           kUser,       Bulk<SearchExperimentLogs>},
      {"POST",   "/api/v1/experiments/{id}/activate",       kUser,       ActivateExperiment},
      {"POST",   "/api/v1/experiments/{id}/pause",          kUser,       PauseExperiment},
      {"POST",   "/api/v1/experiments/{id}/cancel",         kUser,       CancelExperiment},
      {"POST",   "/api/v1/experiments/{id}/kill",           kUser,       KillExperiment},
      {"POST",   "/api/v1/experiments/{id}/move",           kUser,       MoveExperimentRoute},
      {"POST",   "/api/v1/experiments/{id}/archive",        kUser,       ArchiveExperiment},
      {"POST",   "/api/v1/experiments/{id}/unarchive",      kUser,       UnarchiveExperiment},
      {"GET",    "/api/v1/experiments/{id}/model_def",      kUser,       ExperimentModelDef},
      {"GET",    "/api/v1/experiments/{id}/searcher/best_searcher_validation_metric", kUserOrTask,
                                                                      BestSearcherValidationMetric},
      {"*",      "/api/v1/experiments/{id}/{what}",         kUser,       ExperimentActionNotSupported},
      {"*",      "/api/v1/experiments/{id}/{what}/{rest...}", kUser,     ExperimentPathNotSupported},
      {"GET",    "/api/v1/trials/metrics/trial_metrics",    kUser,       Bulk<TrialMetrics>},
      {"GET",    "/api/v1/trials/metrics/training_metrics", kUser,       Bulk<TrialTrainingMetrics>},
      {"GET",    "/api/v1/trials/metrics/validation_metrics", kUser,     Bulk<TrialValidationMetrics>},
      {"GET",    "/api/v1/trials/{id}",                     kUserOrTask, GetTrialForUserOrTask},
      {"GET",    "/api/v1/trials/time-series",              kUser,       Bulk<CompareTrials>},
      {"GET",    "/api/v1/experiments/metrics-stream/metric-names", kUser, Bulk<ExperimentMetricNames>},
      {"GET",    "/api/v1/trials/{id}/workloads",           kUser,       Bulk<TrialWorkloads>},
      {"GET",    "/api/v1/trials/{id}/logs",                kUser,       TrialLogs},
      {"GET",    "/api/v1/trials/{id}/checkpoints",         kUser,       TrialCheckpoints},
      {"POST",   "/api/v1/trials/{id}/kill",                kUser,       KillTrialRoute},
      {"GET",    "/api/v1/trials/{id}/profiler/available_series", kUser, TrialProfilerAvailableSeries},
      {"GET",    "/api/v1/trials/{id}/profiler/metrics",    kUser,       TrialProfilerMetrics},
      // Determined's trial-side API: its package's calls from a trial (determined_trials.h).
      {"POST",   "/api/v1/trials/{id}/metrics",             kTask,       ReportTrialMetrics},
      {"POST",   "/api/v1/trials/{id}/progress",            kTask,       ReportTrialProgress},
      {"POST",   "/api/v1/trials/{id}/early_exit",          kTask,       ReportTrialEarlyExit},
      {"POST",   "/api/v1/trials/{id}/runner/metadata",     kTask,       TrialRunnerMetadata},
      {"POST",   "/api/v1/checkpoints",                     kTask,       ReportCheckpoint},
      {"POST",   "/api/v1/runs/start",                      kTask,       StartRun},
      {"*",      "/api/v1/runs/{rest...}",                  kUserOrTask, ExperimentPathNotSupported},
      {"GET",    "/api/v1/allocations/{id}/signals/preemption", kTask,   PreemptionSignal},
      {"POST",   "/api/v1/allocations/{id}/signals/ack_preemption", kTask, AcknowledgePreemption},
      {"*",      "/api/v1/trials/{rest...}",                kUser,       ExperimentPathNotSupported},
      {"GET",    "/api/v1/templates",                       kUser,       ListTemplates},
      {"GET",    "/api/v1/templates/{name}",                kUser,       GetTemplate},
      {"POST",   "/api/v1/templates/{name}",                kUser,       CreateTemplate},
      {"PATCH",  "/api/v1/templates/{name}",                kUser,       UpdateTemplate},
      {"DELETE", "/api/v1/templates/{name}",                kUser,       DeleteTemplate},
      {"*",      "/api/v1/templates/{name}/{rest...}",      kUser,       ExperimentPathNotSupported},

      // Webhooks (api/handlers/webhooks.h says who may; master/webhook_shipper.h sends them).
      {"GET",    "/api/v1/webhooks",                        kUser,       ListWebhooks},
      {"POST",   "/api/v1/webhooks",                        kUser,       CreateWebhookRoute},
      {"POST",   "/api/v1/webhooks/custom",                 kUserOrTask, PostWebhookAlert},
      {"PATCH",  "/api/v1/webhooks/{id}",                   kUser,       PatchWebhook},
      {"DELETE", "/api/v1/webhooks/{id}",                   kUser,       DeleteWebhookRoute},
      {"POST",   "/api/v1/webhooks/{id}/test",              kUser,       TestWebhook},

      // Checkpoints (the download is outside /api/v1, where Determined's CLI asks for it).
      {"GET",    "/api/v1/checkpoints/{uuid}",              kUser,       GetCheckpointRoute},
      {"DELETE", "/api/v1/checkpoints",                     kUser,       DeleteCheckpointsRoute},
      {"GET",    "/checkpoints/{uuid}",                     kUser,       DownloadCheckpoint},
      {"*",      "/api/v1/checkpoints/{rest...}",           kUser,       ExperimentPathNotSupported},

      // The model registry (the decider checks each change against the caller's roles).
      {"POST",   "/api/v1/models",                          kUser,       CreateModel},
      {"GET",    "/api/v1/models",                          kUser,       Bulk<ListModels>},
      {"GET",    "/api/v1/models/{modelName}",              kUser,       GetModel},
      {"PATCH",  "/api/v1/models/{modelName}",              kUser,       PatchModel},
      {"DELETE", "/api/v1/models/{modelName}",              kUser,       DeleteModelRoute},
      {"POST",   "/api/v1/models/{modelName}/archive",      kUser,       ArchiveModel},
      {"POST",   "/api/v1/models/{modelName}/unarchive",    kUser,       UnarchiveModel},
      {"GET",    "/api/v1/models/{modelName}/versions",     kUser,       Bulk<ListModelVersions>},
      {"POST",   "/api/v1/models/{modelName}/versions",     kUser,       RegisterModelVersion},
      {"GET",    "/api/v1/models/{modelName}/versions/{modelVersionNum}", kUser, GetModelVersion},
      {"PATCH",  "/api/v1/models/{modelName}/versions/{modelVersionNum}", kUser, PatchModelVersion},
      {"DELETE", "/api/v1/models/{modelName}/versions/{modelVersionNum}", kUser,
                                                                      DeleteModelVersionRoute},
      {"GET",    "/api/v1/model/labels",                    kUser,       ModelLabels},
      {"*",      "/api/v1/models/{modelName}/{rest...}",    kUser,       ModelPathNotSupported},

      // Features Cairn does not have answer 501 saying so.
      {"*",      "/api/v1/resource-pools/{name}/{rest...}", kUser,       PoolBindingsNotSupported},

      // Who did what, when (admins only), from the log.
      {"GET",    "/api/v1/audit",                           kUser,       Bulk<ListAudit>},
      {"GET",    "/api/v1/history/state",                   kUser,       Bulk<GetHistoryState>},
      {"GET",    "/api/v1/history/utilization",             kUser,       Bulk<GetHistoryUtilization>},
      {"GET",    "/metrics",                                kUser,       Bulk<Metrics>},

      // Cairn's event stream (analytics consumers; agents in embedded mode).
      {"GET",    "/api/v1/events",                          kUserOrAgent, EventStream},

      // The agent protocol (agent/PROTOCOL.md).
      {"POST",   "/api/v1/agents/{id}/register",            kAgent,      RegisterAgent},
      {"POST",   "/api/v1/agents/{id}/heartbeat",           kAgent,      AgentHeartbeat},
      {"POST",   "/api/v1/allocations/{id}/started",        kAgent,      AllocationStarted},
      {"POST",   "/api/v1/allocations/{id}/exited",         kAgent,      AllocationExited},
      {"POST",   "/api/v1/allocations/{id}/ready",          kAgent,      AllocationReady},
      {"POST",   "/api/v1/task/logs",                       kAgent,      PostTaskLogs},
      {"GET",    "/api/v1/agents/{id}/allocations/{allocationId}/files", kAgent, AllocationFiles},

      // The trial harness's protocol (agent/harness/PROTOCOL.md).
      {"GET",    "/api/v1/allocations/{id}/trial",          kAllocation, TrialDescription},
      {"GET",    "/api/v1/allocations/{id}/context",        kAllocation, TrialContext},
      {"POST",   "/api/v1/allocations/{id}/workloads",      kAllocation, ReportWorkload},
  };
  // clang-format on
  // OpenPAI's REST API (v1), with its error shape, at its own paths and under /pai (where a path
  // of Determined's would take precedence).
  const Route openpai[] = {
      {"POST", "/api/v1/token", kPublic, PaiToken},
      {"PUT", "/api/v1/user", kUser, PaiChangeUser},
      {"GET", "/api/v1/jobs", kUser, Bulk<PaiListJobs>},
      {"GET", "/api/v1/user/{username}/jobs", kUser, Bulk<PaiListUserJobs>},
      {"POST", "/api/v1/user/{username}/jobs", kUser, PaiSubmitJob},
      {"GET", "/api/v1/user/{username}/jobs/{jobName}", kUser, PaiJobStatus},
      {"GET", "/api/v1/user/{username}/jobs/{jobName}/config", kUser, PaiJobConfig},
      {"GET", "/api/v1/user/{username}/jobs/{jobName}/ssh", kUser, PaiJobSsh},
      {"PUT", "/api/v1/user/{username}/jobs/{jobName}/executionType", kUser, PaiExecutionType},
      {"GET", "/api/v1/virtual-clusters", kUser, PaiVirtualClusters},
      {"GET", "/api/v1/virtual-clusters/{vc}", kUser, PaiVirtualCluster},
      {"PUT", "/api/v1/virtual-clusters/{vc}", kUser, PaiChangeVirtualCluster},
      {"DELETE", "/api/v1/virtual-clusters/{vc}", kUser, PaiChangeVirtualCluster},
  };
  // The /pai copies' patterns must outlive the table (Route holds a const char*).
  static const std::vector<std::string> prefixed = [&] {
    std::vector<std::string> patterns;
    for (const Route& route : openpai) patterns.push_back(std::string("/pai") + route.pattern);
    return patterns;
  }();
  // The routes whose bodies carry files (a model definition, a command's context), the proxy's
  // uploads and agents' log batches: every other body is a small JSON document (BodySize).
  for (Route& route : table) {
    for (RouteHandler large : {LaunchCommand, LaunchNotebook, LaunchShell, LaunchTensorboard,
                               CreateExperiment, ProxyToTask, PostTaskLogs}) {
      if (route.handler == large) route.body = BodySize::kLarge;
    }
  }
  std::vector<Route> routes = std::move(table);
  size_t i = 0;
  for (Route route : openpai) {
    route.errors = ErrorShape::kOpenPai;
    routes.push_back(route);
    route.pattern = prefixed[i++].c_str();
    routes.push_back(route);
  }
  return routes;
}

}  // namespace cairn::api
