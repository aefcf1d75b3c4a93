#include "api/event_visibility.h"

#include <utility>

#include "commands/webhooks/webhook_decider.h"
#include "events/workspace_defaults.h"

namespace cairn::api {

EventVisibility::EventVisibility(commands::TenancyState tenancy, commands::UserRecord caller,
                                 uint64_t live_from, Lookups lookups)
    : tenancy_(std::move(tenancy)),
      caller_(std::move(caller)),
      live_from_(live_from),
      lookups_(std::move(lookups)) {}

bool EventVisibility::CanView(int32_t workspace_id) const {
  return tenancy_.Allows(caller_, commands::Permission::kViewWorkspace,
                         WorkspaceOrUncategorized(workspace_id));
}

bool EventVisibility::CanViewModels(int32_t workspace_id) const {
  return tenancy_.Allows(caller_, commands::Permission::kViewModelRegistry,
                         WorkspaceOrUncategorized(workspace_id));
}

bool EventVisibility::CanViewWebhooks(int32_t workspace_id) const {
  return commands::MayViewWebhooks(tenancy_, caller_, workspace_id);
}

namespace {

// The workspace learnt for `id`, asked of `lookup` when not learnt yet. Not remembered when
// unknown: the projections may not have caught up with the stream yet.
template <typename Id, typename Lookup>
std::optional<int32_t> Learnt(std::unordered_map<Id, int32_t>& learnt, const Id& id,
                              const Lookup& lookup) {
  auto known = learnt.find(id);
  if (known != learnt.end()) return known->second;
  std::optional<int32_t> looked_up = lookup(id);
  if (looked_up) learnt.emplace(id, *looked_up);
  return looked_up;
}

}  // namespace

bool EventVisibility::CanViewTask(const std::string& task_id) {
  auto workspace = Learnt(task_workspace_, task_id, lookups_.task_workspace);
  return workspace && CanView(*workspace);
}

bool EventVisibility::CanViewJob(const std::string& job_id) {
  auto known = job_workspace_.find(job_id);
  if (known != job_workspace_.end()) return CanView(known->second);
  // A command's job has its task's id; an experiment's job was learnt from ExperimentCreated.
  return CanViewTask(job_id);
}

bool EventVisibility::CanViewExperiment(int64_t experiment_id) {
  auto workspace = Learnt(experiment_workspace_, experiment_id, lookups_.experiment_workspace);
  return workspace && CanView(*workspace);
}

bool EventVisibility::CanViewProject(int32_t project_id) const {
  const commands::ProjectRecord* project = tenancy_.FindProject(project_id);
  return project != nullptr && CanView(project->workspace_id);
}

bool EventVisibility::Visible(const events::Envelope& event) {
  using Case = events::Envelope::PayloadCase;
  const Case payload = event.payload_case();
  // A project that is deleted or renamed is found before the change is folded.
  const bool project_visible_before =
      (payload == Case::kProjectUpdated && CanViewProject(event.project_updated().project_id())) ||
      (payload == Case::kProjectDeleted && CanViewProject(event.project_deleted().project_id()));
  if (event.offset() >= live_from_) commands::ApplyTenancy(tenancy_, event);
  if (project_visible_before) return true;
  return Decide(event);
}

bool EventVisibility::Decide(const events::Envelope& event) {
  using Case = events::Envelope::PayloadCase;
  switch (event.payload_case()) {
    case Case::kTaskSubmitted: {
      const auto& submitted = event.task_submitted();
      const int32_t workspace = WorkspaceOrUncategorized(submitted.workspace_id());
      task_workspace_[submitted.task_id()] = workspace;
      job_workspace_.try_emplace(
          submitted.job_id().empty() ? submitted.task_id() : submitted.job_id(), workspace);
      return CanView(workspace);
    }
    case Case::kAllocationAssigned:
      return CanViewTask(event.allocation_assigned().task_id());
    case Case::kTaskStarted:
      return CanViewTask(event.task_started().task_id());
    case Case::kTaskReady:
      return CanViewTask(event.task_ready().task_id());
    case Case::kTaskHeld:
      return CanViewTask(event.task_held().task_id());
    case Case::kTaskExited:
      return CanViewTask(event.task_exited().task_id());
    case Case::kKillRequested:
      return CanViewTask(event.kill_requested().task_id());
    case Case::kPreemptionRequested:
      return CanViewTask(event.preemption_requested().task_id());
    case Case::kAllocationReleased:
      return CanViewTask(event.allocation_released().task_id());
    case Case::kAllocationPartExited:
      return CanViewTask(event.allocation_part_exited().task_id());
    case Case::kJobQueueChanged:
      return CanViewJob(event.job_queue_changed().job_id());
    case Case::kPaiJobSubmitted: {
      const auto& submitted = event.pai_job_submitted();
      const int32_t workspace = WorkspaceOrUncategorized(submitted.workspace_id());
      job_workspace_.try_emplace(submitted.job_id(), workspace);
      return CanView(workspace);
    }
    case Case::kPaiJobAttemptStarted:
      return CanViewJob(event.pai_job_attempt_started().job_id());
    case Case::kPaiJobStopRequested:
      return CanViewJob(event.pai_job_stop_requested().job_id());
    case Case::kPaiJobAttemptEnded:
      return CanViewJob(event.pai_job_attempt_ended().job_id());
    case Case::kExperimentCreated: {
      const auto& created = event.experiment_created();
      const int32_t workspace = WorkspaceOrUncategorized(created.workspace_id());
      experiment_workspace_[created.experiment_id()] = workspace;
      job_workspace_[created.job_id()] = workspace;
      return CanView(workspace);
    }
    case Case::kExperimentMoved: {
      const auto& moved = event.experiment_moved();
      const int32_t workspace = WorkspaceOrUncategorized(moved.workspace_id());
      experiment_workspace_[moved.experiment_id()] = workspace;
      // Both sides see the move: the experiment leaves one and joins the other.
      return CanView(workspace) || CanView(moved.from_workspace_id());
    }
    case Case::kExperimentStateChanged:
      return CanViewExperiment(event.experiment_state_changed().experiment_id());
    case Case::kTrialCreated:
      return CanViewExperiment(event.trial_created().experiment_id());
    case Case::kTrialTrainTo:
      return CanViewExperiment(event.trial_train_to().experiment_id());
    case Case::kTrialClosed:
      return CanViewExperiment(event.trial_closed().experiment_id());
    case Case::kTrialRestarted:
      return CanViewExperiment(event.trial_restarted().experiment_id());
    case Case::kTrialEnded:
      return CanViewExperiment(event.trial_ended().experiment_id());
    case Case::kTrialWorkloadReported:
      return CanViewExperiment(event.trial_workload_reported().experiment_id());
    case Case::kTrialWorkloadAssigned:
      return CanViewExperiment(event.trial_workload_assigned().experiment_id());
    case Case::kCheckpointSaved:
      return CanViewExperiment(event.checkpoint_saved().experiment_id());
    case Case::kCheckpointsDeleted:
      return CanViewExperiment(event.checkpoints_deleted().experiment_id());
    case Case::kTensorboardFilesDeleted:
      return CanViewExperiment(event.tensorboard_files_deleted().experiment_id());
    case Case::kExperimentUpdated:
      return CanViewExperiment(event.experiment_updated().experiment_id());
    case Case::kExperimentArchived:
      return CanViewExperiment(event.experiment_archived().experiment_id());
    case Case::kExperimentDeleted:
      return CanViewExperiment(event.experiment_deleted().experiment_id());
    case Case::kTrialKillRequested:
      return CanViewExperiment(event.trial_kill_requested().experiment_id());
    case Case::kExperimentContinued:
      return CanViewExperiment(event.experiment_continued().experiment_id());
    case Case::kTrialMetricsReported:
      return CanViewExperiment(event.trial_metrics_reported().experiment_id());
    case Case::kTrialProgressReported:
      return CanViewExperiment(event.trial_progress_reported().experiment_id());
    case Case::kTrialPreemptionAcknowledged:
      return CanViewExperiment(event.trial_preemption_acknowledged().experiment_id());
    case Case::kTrialEarlyExitReported:
      return CanViewExperiment(event.trial_early_exit_reported().experiment_id());
    case Case::kTrialLogPolicyMatched:
      return CanViewExperiment(event.trial_log_policy_matched().experiment_id());
    case Case::kTemplateSaved:
      return CanView(event.template_saved().workspace_id());
    case Case::kModelCreated:
      return CanViewModels(event.model_created().workspace_id());
    case Case::kModelUpdated: {
      // Both sides see a move: the model leaves one workspace and joins the other.
      const auto& updated = event.model_updated();
      return CanViewModels(updated.workspace_id()) ||
             (updated.has_from_workspace_id() && CanViewModels(updated.from_workspace_id()));
    }
    case Case::kModelDeleted:
      return CanViewModels(event.model_deleted().workspace_id());
    case Case::kModelVersionRegistered:
      return CanViewModels(event.model_version_registered().workspace_id());
    case Case::kModelVersionUpdated:
      return CanViewModels(event.model_version_updated().workspace_id());
    case Case::kModelVersionDeleted:
      return CanViewModels(event.model_version_deleted().workspace_id());
    // Webhooks: whoever may view the workspace's webhooks (global ones: everyone); their URLs are
    // redacted on the stream for everyone (events/redaction.h).
    case Case::kWebhookCreated:
      return CanViewWebhooks(event.webhook_created().workspace_id());
    case Case::kWebhookUpdated:
      return CanViewWebhooks(event.webhook_updated().workspace_id());
    case Case::kWebhookDeleted:
      return CanViewWebhooks(event.webhook_deleted().workspace_id());
    case Case::kTaskLogsExpired:
      for (const auto& task_id : event.task_logs_expired().task_ids()) {
        if (CanViewTask(task_id)) return true;
      }
      return false;
    case Case::kWebhookAlertRaised:
      return CanViewExperiment(event.webhook_alert_raised().experiment_id());
    case Case::kWebhookDeliveriesRecorded:
      for (const auto& delivery : event.webhook_deliveries_recorded().deliveries()) {
        if (CanViewWebhooks(delivery.workspace_id())) return true;
      }
      return false;
    case Case::kConfigPoliciesSet:
      return event.config_policies_set().workspace_id() == commands::kEveryWorkspace ||
             CanView(event.config_policies_set().workspace_id());
    case Case::kConfigPoliciesDeleted:
      return event.config_policies_deleted().workspace_id() == commands::kEveryWorkspace ||
             CanView(event.config_policies_deleted().workspace_id());
    case Case::kWorkspaceCreated:
      return CanView(event.workspace_created().workspace_id()) ||
             Own(event.workspace_created().owner_user_id());
    case Case::kWorkspaceUpdated:
      return CanView(event.workspace_updated().workspace_id());
    case Case::kWorkspaceDeleted:
      return CanView(event.workspace_deleted().workspace_id());
    case Case::kWorkspacePinned:
      return Own(event.workspace_pinned().user_id());
    case Case::kProjectCreated:
      return CanView(event.project_created().workspace_id());
    case Case::kProjectUpdated:
      return CanViewProject(event.project_updated().project_id());
    case Case::kProjectDeleted:
      return false;  // seen before the deletion or not at all (Visible)
    case Case::kRoleAssigned:
      return Own(event.role_assigned().user_id()) ||
             (event.role_assigned().workspace_id() != 0 &&
              CanView(event.role_assigned().workspace_id()));
    case Case::kRoleRemoved:
      return Own(event.role_removed().user_id()) || (event.role_removed().workspace_id() != 0 &&
                                                     CanView(event.role_removed().workspace_id()));
    case Case::kSessionStarted:
      return Own(event.session_started().user_id());
    case Case::kSessionEnded:
      return Own(event.session_ended().user_id());
    case Case::kAccessTokenCreated:
      return Own(event.access_token_created().user_id());
    case Case::kAccessTokenUpdated:
      return Own(event.access_token_updated().user_id());
    case Case::kLoginFailed:
      return event.login_failed().username() == caller_.username;
    case Case::kAccessDenied:
      return event.actor() == "user:" + caller_.username;
    case Case::kWriterEpochClaimed:
    case Case::kAgentRegistered:
    case Case::kAgentDisconnected:
    case Case::kAgentEnabled:
    case Case::kAgentDisabled:
    case Case::kAgentSlotEnabled:
    case Case::kAgentSlotDisabled:
    case Case::kResourcePoolsConfigured:
    case Case::kPoolBindingsChanged:
    case Case::kMasterLogLevelChanged:
    case Case::kClusterMessageSet:
    case Case::kClusterMessageCleared:
    case Case::kAuthorizationConfigured:
    case Case::kUserCreated:
    case Case::kUserUpdated:
    case Case::kUserPasswordChanged:  // its hash never leaves the master (events/redaction.h)
    case Case::kGroupCreated:         // names and members, as GET /api/v1/groups shows them
    case Case::kGroupUpdated:
    case Case::kGroupDeleted:
    case Case::kTemplateDeleted:  // a name only
      return true;                // the cluster, as GET agents, pools and users show it
    default:
      // A payload this build does not know, or one added without a rule here: hidden until
      // someone decides who may read it.
      return false;
  }
}

}  // namespace cairn::api
