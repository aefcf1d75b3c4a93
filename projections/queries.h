// The read side's one query interface: typed reads over the views of every projection, written
// once and used over the live RocksDB projections of a master (projections.h: Projections) and
// over the in-memory fold of a prefix of the log (ProjectionState: `cairn replay state`, time
// travel). A subclass provides one thing, ReadViews: a consistent snapshot of one projector's
// views. Every query is a point read or an ordered prefix scan.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"
#include "projections/allocation_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/metric_series_projector.h"
#include "projections/utilization_projector.h"
#include "projections/view_store.h"
#include "views.pb.h"

namespace cairn {

using views::AgentView;
using views::CheckpointView;
using views::ExperimentView;
using views::JobView;
using views::PoolView;
using views::TaskView;
using views::TrialView;
using views::WorkloadView;

class Queries {
 public:
  virtual ~Queries() = default;

  Result<std::optional<TaskView>> GetTask(const std::string& task_id);
  // The tasks of `task_ids` the projection shows, in that order, read at one point of the log.
  Result<std::vector<TaskView>> GetTasks(const std::vector<std::string>& task_ids);
  // Every task, in submission order.
  Result<std::vector<TaskView>> ListTasks();
  // The ids of the tasks of `type` in submission order, to `visit` until it returns false: a page
  // of a list costs the tasks it reads, not every task (read them with GetTask; one the tasks
  // projection does not show yet is not there yet).
  Status VisitTaskIds(events::TaskType type,
                      const std::function<bool(const std::string& task_id)>& visit);

  // The version of the list of `type`'s tasks of `users` (everyone's when empty): equal versions
  // mean the same views (task_order_projector.h: ReadTaskListVersion).
  Result<uint64_t> TaskListVersion(events::TaskType type, const std::vector<std::string>& users);

  Result<std::optional<AgentView>> GetAgent(const std::string& agent_id);
  // Every agent, by agent id.
  Result<std::vector<AgentView>> ListAgents();

  // The queue of `pool` ("" = every pool, one after the other in pool-name order): jobs with
  // live tasks, each pool in its queue order ((priority, queue position) under the priority
  // scheduler, queue position otherwise) with jobs_ahead = the job's index in its pool.
  Result<std::vector<JobView>> JobQueue(const std::string& pool);
  // One page of it (job_queue_projector.h's ReadJobQueuePage).
  Result<projections::JobQueuePage> JobQueuePage(const std::string& pool, size_t offset,
                                                 size_t limit, bool descending);
  // How many jobs each pool's queue holds, without reading them (ReadJobQueueLengths).
  Result<std::vector<std::pair<std::string, size_t>>> JobQueueLengths();

  // Experiments (nullopt / empty for unknown ids).
  Result<std::optional<ExperimentView>> GetExperiment(int64_t experiment_id);
  // Every experiment, by id.
  Result<std::vector<ExperimentView>> ListExperiments();
  // The experiment's trials, by trial id.
  Result<std::vector<TrialView>> ListTrials(int64_t experiment_id);
  Result<std::optional<TrialView>> GetTrial(int64_t trial_id);
  // The trial's completed training, validation and checkpoint workloads, in report order.
  Result<std::vector<WorkloadView>> ListWorkloads(int64_t trial_id);
  // The experiment's checkpoints (trial_id 0) or one trial's, by trial id and then in save
  // order; deleted ones included.
  Result<std::vector<CheckpointView>> ListCheckpoints(int64_t experiment_id, int64_t trial_id);
  Result<std::optional<CheckpointView>> GetCheckpoint(const std::string& uuid);

  // OpenPAI jobs (nullopt / empty for unknown ones).
  Result<std::optional<views::PaiJobView>> GetPaiJob(const std::string& job_id);
  Result<std::optional<views::PaiJobView>> GetPaiJobByName(const std::string& username,
                                                           const std::string& job_name);
  // Every OpenPAI job, by job id.
  Result<std::vector<views::PaiJobView>> ListPaiJobs();

  // The allocation ledger over [after, before) (allocation_projector.h).
  Result<projections::AllocationLedgerRead> AllocationLedger(int64_t after, int64_t before);

  // The cluster's slots and queue over (from, to] in `steps` steps (utilization_projector.h).
  Result<projections::UtilizationRead> Utilization(int64_t from, int64_t to, int steps);

  // A trial's metric series, and one of them downsampled for a chart
  // (metric_series_projector.h).
  Result<std::vector<projections::MetricSeriesName>> ListMetricSeries(int64_t trial_id,
                                                                      const std::string& group);
  Result<projections::MetricSeriesRead> ReadMetricSeries(
      int64_t trial_id, const projections::MetricSeriesName& series, int64_t start_batches,
      int64_t end_batches, size_t max_points);

  // Configuration templates.
  Result<std::optional<events::TemplateSaved>> GetTemplate(const std::string& name);
  // Every template, by name.
  Result<std::vector<events::TemplateSaved>> ListTemplates();
  // Webhooks (projections/webhook_projector.h).
  Result<std::optional<views::WebhookView>> GetWebhook(int64_t webhook_id);
  Result<std::vector<views::WebhookView>> ListWebhooks();

  // The model registry (nullopt / empty for unknown models).
  Result<std::optional<views::ModelView>> GetModel(int32_t model_id);
  Result<std::optional<views::ModelView>> GetModelByName(const std::string& name);
  // Every model, by id.
  Result<std::vector<views::ModelView>> ListModels();
  // The model's versions, by version number.
  Result<std::vector<views::ModelVersionView>> ListModelVersions(int32_t model_id);
  Result<std::optional<views::ModelVersionView>> GetModelVersion(int32_t model_id, int32_t version);

  // Users (no password hashes: those stay on the write side).
  Result<std::optional<views::UserView>> GetUser(int32_t user_id);
  Result<std::optional<views::UserView>> GetUserByName(const std::string& username);
  // Every user, by id.
  Result<std::vector<views::UserView>> ListUsers();
  // Every access token, by id (user_projector.h).
  Result<std::vector<views::AccessTokenView>> ListAccessTokens();
  Result<std::optional<views::AccessTokenView>> GetAccessToken(int32_t token_id);

  // Workspaces, projects, roles and pool bindings (the built-in Uncategorized workspace and
  // project, id 1, always exist).
  Result<std::optional<views::WorkspaceView>> GetWorkspace(int32_t workspace_id);
  // Every workspace, by id.
  Result<std::vector<views::WorkspaceView>> ListWorkspaces();
  Result<std::optional<views::ProjectView>> GetProject(int32_t project_id);
  // Every project, by id.
  Result<std::vector<views::ProjectView>> ListProjects();
  // Every role assignment: users' (cluster-wide ones first, then by workspace and user), then
  // groups' (group_id set) in the same order.
  Result<std::vector<views::RoleAssignmentView>> ListRoleAssignments();
  // Every user group, by id.
  Result<std::vector<views::GroupView>> ListGroups();
  // Every bound pool, by name (a pool bound to no workspace is shared and not listed).
  Result<std::vector<views::PoolBindingView>> ListPoolBindings();
  // The latest cluster message, ended or not (tenancy_projector.h).
  Result<std::optional<views::ClusterMessageView>> GetClusterMessage();
  Result<std::optional<events::ConfigPoliciesSet>> GetConfigPolicies(
      int32_t workspace_id, const std::string& workload_type);

  // The configured resource pools, in configuration order, with their connected agents' usage.
  Result<std::vector<PoolView>> ListPools();

  // The newest writer epoch claimed below `offset` (0 when none was): the fence a reader that
  // starts at `offset` must apply.
  Result<uint64_t> NewestEpochBefore(uint64_t offset);

 protected:
  // Runs `read` over one consistent snapshot of the named projector's views.
  virtual Status ReadViews(const std::string& projector,
                           const std::function<Status(projections::ViewReader&)>& read) = 0;

 private:
  // Reads `projector` through `read` into a value of type T.
  template <typename T, typename Read>
  Result<T> ReadFrom(const std::string& projector, Read read);
};

}  // namespace cairn
