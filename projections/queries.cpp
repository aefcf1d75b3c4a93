#include "projections/queries.h"

#include "projections/agent_projector.h"
#include "projections/experiment_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/pai_projector.h"
#include "projections/pool_projector.h"
#include "projections/registry_projector.h"
#include "projections/task_order_projector.h"
#include "projections/task_projector.h"
#include "projections/template_projector.h"
#include "projections/tenancy_projector.h"
#include "projections/user_projector.h"
#include "projections/webhook_projector.h"
#include "projections/writer_projector.h"

namespace cairn {

using projections::ViewReader;

template <typename T, typename Read>
Result<T> Queries::ReadFrom(const std::string& projector, Read read) {
  std::optional<T> value;
  CAIRN_RETURN_IF_ERROR(ReadViews(projector, [&](ViewReader& reader) {
    CAIRN_ASSIGN_OR_RETURN(value, read(reader));
    return Status::Ok();
  }));
  return std::move(*value);
}

Result<std::optional<TaskView>> Queries::GetTask(const std::string& task_id) {
  return ReadFrom<std::optional<TaskView>>(projections::kTasksProjector, [&](ViewReader& reader) {
    return projections::ReadTask(reader, task_id);
  });
}

Result<std::vector<TaskView>> Queries::GetTasks(const std::vector<std::string>& task_ids) {
  return ReadFrom<std::vector<TaskView>>(
      projections::kTasksProjector, [&](ViewReader& reader) -> Result<std::vector<TaskView>> {
        std::vector<std::string> keys;
        keys.reserve(task_ids.size());
        for (const auto& task_id : task_ids) keys.push_back(projections::TaskKey(task_id));
        std::vector<TaskView> read;
        std::vector<bool> found;
        CAIRN_RETURN_IF_ERROR(projections::GetMessages(reader, keys, &read, &found));
        std::vector<TaskView> tasks;
        tasks.reserve(read.size());
        for (size_t i = 0; i < read.size(); ++i) {
          if (found[i]) tasks.push_back(std::move(read[i]));
        }
        return tasks;
      });
}

Result<std::vector<TaskView>> Queries::ListTasks() {
  return ReadFrom<std::vector<TaskView>>(projections::kTasksProjector, projections::ReadTasks);
}

Status Queries::VisitTaskIds(events::TaskType type,
                             const std::function<bool(const std::string& task_id)>& visit) {
  return ReadViews(projections::kTaskOrderProjector, [&](ViewReader& reader) {
    return projections::VisitTaskIdsInOrder(reader, type, visit);
  });
}

Result<uint64_t> Queries::TaskListVersion(events::TaskType type,
                                          const std::vector<std::string>& users) {
  return ReadFrom<uint64_t>(projections::kTaskOrderProjector, [&](ViewReader& reader) {
    return projections::ReadTaskListVersion(reader, type, users);
  });
}

Result<std::optional<AgentView>> Queries::GetAgent(const std::string& agent_id) {
  return ReadFrom<std::optional<AgentView>>(projections::kAgentsProjector, [&](ViewReader& reader) {
    return projections::ReadAgent(reader, agent_id);
  });
}

Result<std::vector<AgentView>> Queries::ListAgents() {
  return ReadFrom<std::vector<AgentView>>(projections::kAgentsProjector, projections::ReadAgents);
}

Result<std::vector<JobView>> Queries::JobQueue(const std::string& pool) {
  return ReadFrom<std::vector<JobView>>(projections::kJobQueueProjector, [&](ViewReader& reader) {
    return projections::ReadJobQueue(reader, pool);
  });
}

Result<std::vector<std::pair<std::string, size_t>>> Queries::JobQueueLengths() {
  return ReadFrom<std::vector<std::pair<std::string, size_t>>>(
      projections::kJobQueueProjector,
      [](ViewReader& reader) { return projections::ReadJobQueueLengths(reader, ""); });
}

Result<projections::JobQueuePage> Queries::JobQueuePage(const std::string& pool, size_t offset,
                                                        size_t limit, bool descending) {
  return ReadFrom<projections::JobQueuePage>(
      projections::kJobQueueProjector, [&](ViewReader& reader) {
        return projections::ReadJobQueuePage(reader, pool, offset, limit, descending);
      });
}

Result<std::optional<ExperimentView>> Queries::GetExperiment(int64_t experiment_id) {
  return ReadFrom<std::optional<ExperimentView>>(
      projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadExperiment(reader, experiment_id); });
}

Result<std::vector<ExperimentView>> Queries::ListExperiments() {
  return ReadFrom<std::vector<ExperimentView>>(projections::kExperimentsProjector,
                                               projections::ReadExperiments);
}

Result<std::vector<TrialView>> Queries::ListTrials(int64_t experiment_id) {
  return ReadFrom<std::vector<TrialView>>(
      projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadTrials(reader, experiment_id); });
}

Result<std::optional<TrialView>> Queries::GetTrial(int64_t trial_id) {
  return ReadFrom<std::optional<TrialView>>(
      projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadTrial(reader, trial_id); });
}

Result<std::vector<WorkloadView>> Queries::ListWorkloads(int64_t trial_id) {
  return ReadFrom<std::vector<WorkloadView>>(
      projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadWorkloads(reader, trial_id); });
}

Result<std::vector<CheckpointView>> Queries::ListCheckpoints(int64_t experiment_id,
                                                             int64_t trial_id) {
  return ReadFrom<std::vector<CheckpointView>>(
      projections::kExperimentsProjector, [&](ViewReader& reader) {
        return projections::ReadCheckpointViews(reader, experiment_id, trial_id);
      });
}

Result<std::optional<CheckpointView>> Queries::GetCheckpoint(const std::string& uuid) {
  return ReadFrom<std::optional<CheckpointView>>(
      projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadCheckpointView(reader, uuid); });
}

Result<std::optional<views::ModelView>> Queries::GetModel(int32_t model_id) {
  return ReadFrom<std::optional<views::ModelView>>(
      projections::kRegistryProjector,
      [&](ViewReader& reader) { return projections::ReadModel(reader, model_id); });
}

Result<std::optional<views::ModelView>> Queries::GetModelByName(const std::string& name) {
  return ReadFrom<std::optional<views::ModelView>>(
      projections::kRegistryProjector,
      [&](ViewReader& reader) { return projections::ReadModelByName(reader, name); });
}

Result<std::vector<views::ModelView>> Queries::ListModels() {
  return ReadFrom<std::vector<views::ModelView>>(projections::kRegistryProjector,
                                                 projections::ReadModels);
}

Result<std::vector<views::ModelVersionView>> Queries::ListModelVersions(int32_t model_id) {
  return ReadFrom<std::vector<views::ModelVersionView>>(
      projections::kRegistryProjector,
      [&](ViewReader& reader) { return projections::ReadModelVersions(reader, model_id); });
}

Result<std::optional<views::ModelVersionView>> Queries::GetModelVersion(int32_t model_id,
                                                                        int32_t version) {
  return ReadFrom<std::optional<views::ModelVersionView>>(
      projections::kRegistryProjector,
      [&](ViewReader& reader) { return projections::ReadModelVersion(reader, model_id, version); });
}

Result<std::optional<views::PaiJobView>> Queries::GetPaiJob(const std::string& job_id) {
  return ReadFrom<std::optional<views::PaiJobView>>(
      projections::kPaiProjector,
      [&](ViewReader& reader) { return projections::ReadPaiJob(reader, job_id); });
}

Result<std::optional<views::PaiJobView>> Queries::GetPaiJobByName(const std::string& username,
                                                                  const std::string& job_name) {
  return ReadFrom<std::optional<views::PaiJobView>>(
      projections::kPaiProjector, [&](ViewReader& reader) {
        return projections::ReadPaiJobByName(reader, username, job_name);
      });
}

Result<std::vector<views::PaiJobView>> Queries::ListPaiJobs() {
  return ReadFrom<std::vector<views::PaiJobView>>(projections::kPaiProjector,
                                                  projections::ReadPaiJobs);
}

Result<projections::AllocationLedgerRead> Queries::AllocationLedger(int64_t after, int64_t before) {
  return ReadFrom<projections::AllocationLedgerRead>(
      projections::kAllocationsProjector,
      [&](ViewReader& reader) { return projections::ReadAllocationLedger(reader, after, before); });
}

Result<projections::UtilizationRead> Queries::Utilization(int64_t from, int64_t to, int steps) {
  return ReadFrom<projections::UtilizationRead>(
      projections::kUtilizationProjector,
      [&](ViewReader& reader) { return projections::ReadUtilization(reader, from, to, steps); });
}

Result<std::vector<projections::MetricSeriesName>> Queries::ListMetricSeries(
    int64_t trial_id, const std::string& group) {
  return ReadFrom<std::vector<projections::MetricSeriesName>>(
      projections::kMetricSeriesProjector,
      [&](ViewReader& reader) { return projections::ListMetricSeries(reader, trial_id, group); });
}

Result<projections::MetricSeriesRead> Queries::ReadMetricSeries(
    int64_t trial_id, const projections::MetricSeriesName& series, int64_t start_batches,
    int64_t end_batches, size_t max_points) {
  return ReadFrom<projections::MetricSeriesRead>(
      projections::kMetricSeriesProjector, [&](ViewReader& reader) {
        return projections::ReadMetricSeries(reader, trial_id, series, start_batches, end_batches,
                                             max_points);
      });
}

Result<std::optional<events::TemplateSaved>> Queries::GetTemplate(const std::string& name) {
  return ReadFrom<std::optional<events::TemplateSaved>>(
      projections::kTemplatesProjector,
      [&](ViewReader& reader) { return projections::ReadTemplate(reader, name); });
}

Result<std::vector<events::TemplateSaved>> Queries::ListTemplates() {
  return ReadFrom<std::vector<events::TemplateSaved>>(projections::kTemplatesProjector,
                                                      projections::ReadTemplates);
}

Result<std::optional<views::WebhookView>> Queries::GetWebhook(int64_t webhook_id) {
  return ReadFrom<std::optional<views::WebhookView>>(
      projections::kWebhooksProjector,
      [&](ViewReader& reader) { return projections::ReadWebhook(reader, webhook_id); });
}

Result<std::vector<views::WebhookView>> Queries::ListWebhooks() {
  return ReadFrom<std::vector<views::WebhookView>>(projections::kWebhooksProjector,
                                                   projections::ReadWebhooks);
}

Result<std::optional<views::UserView>> Queries::GetUser(int32_t user_id) {
  return ReadFrom<std::optional<views::UserView>>(
      projections::kUsersProjector,
      [&](ViewReader& reader) { return projections::ReadUser(reader, user_id); });
}

Result<std::optional<views::UserView>> Queries::GetUserByName(const std::string& username) {
  return ReadFrom<std::optional<views::UserView>>(
      projections::kUsersProjector,
      [&](ViewReader& reader) { return projections::ReadUserByName(reader, username); });
}

Result<std::vector<views::UserView>> Queries::ListUsers() {
  return ReadFrom<std::vector<views::UserView>>(projections::kUsersProjector,
                                                projections::ReadUsers);
}

Result<std::optional<views::AccessTokenView>> Queries::GetAccessToken(int32_t token_id) {
  return ReadFrom<std::optional<views::AccessTokenView>>(
      projections::kUsersProjector,
      [&](ViewReader& reader) { return projections::ReadAccessToken(reader, token_id); });
}

Result<std::vector<views::AccessTokenView>> Queries::ListAccessTokens() {
  return ReadFrom<std::vector<views::AccessTokenView>>(projections::kUsersProjector,
                                                       projections::ReadAccessTokens);
}

Result<std::optional<views::WorkspaceView>> Queries::GetWorkspace(int32_t workspace_id) {
  return ReadFrom<std::optional<views::WorkspaceView>>(
      projections::kTenancyProjector,
      [&](ViewReader& reader) { return projections::ReadWorkspace(reader, workspace_id); });
}

Result<std::vector<views::WorkspaceView>> Queries::ListWorkspaces() {
  return ReadFrom<std::vector<views::WorkspaceView>>(projections::kTenancyProjector,
                                                     projections::ReadWorkspaces);
}

Result<std::optional<views::ProjectView>> Queries::GetProject(int32_t project_id) {
  return ReadFrom<std::optional<views::ProjectView>>(
      projections::kTenancyProjector,
      [&](ViewReader& reader) { return projections::ReadProject(reader, project_id); });
}

Result<std::vector<views::ProjectView>> Queries::ListProjects() {
  return ReadFrom<std::vector<views::ProjectView>>(projections::kTenancyProjector,
                                                   projections::ReadProjects);
}

Result<std::vector<views::RoleAssignmentView>> Queries::ListRoleAssignments() {
  return ReadFrom<std::vector<views::RoleAssignmentView>>(projections::kTenancyProjector,
                                                          projections::ReadRoleAssignments);
}

Result<std::vector<views::GroupView>> Queries::ListGroups() {
  return ReadFrom<std::vector<views::GroupView>>(projections::kTenancyProjector,
                                                 projections::ReadGroups);
}

Result<std::optional<events::ConfigPoliciesSet>> Queries::GetConfigPolicies(
    int32_t workspace_id, const std::string& workload_type) {
  return ReadFrom<std::optional<events::ConfigPoliciesSet>>(
      projections::kTenancyProjector, [&](ViewReader& reader) {
        return projections::ReadConfigPolicies(reader, workspace_id, workload_type);
      });
}

Result<std::optional<views::ClusterMessageView>> Queries::GetClusterMessage() {
  return ReadFrom<std::optional<views::ClusterMessageView>>(projections::kTenancyProjector,
                                                            projections::ReadClusterMessage);
}

Result<std::vector<views::PoolBindingView>> Queries::ListPoolBindings() {
  return ReadFrom<std::vector<views::PoolBindingView>>(projections::kTenancyProjector,
                                                       projections::ReadPoolBindings);
}

Result<std::vector<PoolView>> Queries::ListPools() {
  return ReadFrom<std::vector<PoolView>>(projections::kPoolsProjector, projections::ReadPools);
}

Result<uint64_t> Queries::NewestEpochBefore(uint64_t offset) {
  return ReadFrom<uint64_t>(projections::kWritersProjector, [&](ViewReader& reader) {
    return projections::ReadNewestEpochBefore(reader, offset);
  });
}

}  // namespace cairn
