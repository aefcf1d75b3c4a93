#include "events/envelope_util.h"

#include <google/protobuf/util/json_util.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace cairn {

std::string PayloadTypeName(const events::Envelope& event) {
  // The payload's message name, from the schema itself, so a new event needs no case here.
  static const auto* const payload = events::Envelope::descriptor()->FindOneofByName("payload");
  const auto* field = event.GetReflection()->GetOneofFieldDescriptor(event, payload);
  return field == nullptr ? "Unknown" : field->message_type()->name();
}

std::string TaskTypeName(events::TaskType type) {
  std::string name = events::TaskType_Name(type);
  const std::string prefix = "TASK_TYPE_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name.empty() ? "UNSPECIFIED" : name;
}

bool IsInteractiveTask(events::TaskType type) {
  return type == events::TASK_TYPE_NOTEBOOK || type == events::TASK_TYPE_SHELL ||
         type == events::TASK_TYPE_TENSORBOARD;
}

std::string ServicePath(const std::string& task_id) { return "/proxy/" + task_id + "/"; }

const std::string& TaskIdOf(const events::Envelope& event) {
  static const std::string kNone;
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kTaskSubmitted:
      return event.task_submitted().task_id();
    case E::kAllocationAssigned:
      return event.allocation_assigned().task_id();
    case E::kTaskStarted:
      return event.task_started().task_id();
    case E::kTaskReady:
      return event.task_ready().task_id();
    case E::kTaskHeld:
      return event.task_held().task_id();
    case E::kTaskExited:
      return event.task_exited().task_id();
    case E::kKillRequested:
      return event.kill_requested().task_id();
    case E::kPreemptionRequested:
      return event.preemption_requested().task_id();
    case E::kAllocationReleased:
      return event.allocation_released().task_id();
    case E::kAllocationPartExited:
      return event.allocation_part_exited().task_id();
    default:
      return kNone;
  }
}

std::string EntityIdOf(const events::Envelope& event) {
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kAgentRegistered:
      return event.agent_registered().agent_id();
    case E::kAgentDisconnected:
      return event.agent_disconnected().agent_id();
    case E::kAgentEnabled:
      return event.agent_enabled().agent_id();
    case E::kAgentDisabled:
      return event.agent_disabled().agent_id();
    case E::kAgentSlotEnabled:
      return event.agent_slot_enabled().agent_id();
    case E::kAgentSlotDisabled:
      return event.agent_slot_disabled().agent_id();
    case E::kJobQueueChanged:
      return event.job_queue_changed().job_id();
    case E::kPaiJobSubmitted:
      return event.pai_job_submitted().job_id();
    case E::kPaiJobAttemptStarted:
      return event.pai_job_attempt_started().job_id();
    case E::kPaiJobStopRequested:
      return event.pai_job_stop_requested().job_id();
    case E::kPaiJobAttemptEnded:
      return event.pai_job_attempt_ended().job_id();
    case E::kExperimentCreated:
      return std::to_string(event.experiment_created().experiment_id());
    case E::kExperimentStateChanged:
      return std::to_string(event.experiment_state_changed().experiment_id());
    case E::kTrialCreated:
      return std::to_string(event.trial_created().experiment_id());
    case E::kTrialWorkloadReported:
      return std::to_string(event.trial_workload_reported().trial_id());
    case E::kCheckpointSaved:
      return std::to_string(event.checkpoint_saved().trial_id());
    case E::kTrialMetricsReported:
      return std::to_string(event.trial_metrics_reported().trial_id());
    case E::kTrialProgressReported:
      return std::to_string(event.trial_progress_reported().trial_id());
    case E::kTemplateSaved:
      return event.template_saved().name();
    case E::kTemplateDeleted:
      return event.template_deleted().name();
    case E::kUserCreated:
      return "user/" + std::to_string(event.user_created().user_id());
    case E::kUserUpdated:
      return "user/" + std::to_string(event.user_updated().user_id());
    case E::kUserPasswordChanged:
      return "user/" + std::to_string(event.user_password_changed().user_id());
    case E::kSessionStarted:
      return "user/" + std::to_string(event.session_started().user_id());
    case E::kSessionEnded:
      return "user/" + std::to_string(event.session_ended().user_id());
    case E::kAccessTokenCreated:
      return "user/" + std::to_string(event.access_token_created().user_id());
    case E::kAccessTokenUpdated:
      return "user/" + std::to_string(event.access_token_updated().user_id());
    case E::kLoginFailed:
      return "username/" + event.login_failed().username();
    case E::kAccessDenied:
      return event.access_denied().path();
    case E::kWorkspaceCreated:
      return "workspace/" + std::to_string(event.workspace_created().workspace_id());
    case E::kWorkspaceUpdated:
      return "workspace/" + std::to_string(event.workspace_updated().workspace_id());
    case E::kWorkspaceDeleted:
      return "workspace/" + std::to_string(event.workspace_deleted().workspace_id());
    case E::kWorkspacePinned:
      return "workspace/" + std::to_string(event.workspace_pinned().workspace_id());
    case E::kProjectCreated:
      return "project/" + std::to_string(event.project_created().project_id());
    case E::kProjectUpdated:
      return "project/" + std::to_string(event.project_updated().project_id());
    case E::kProjectDeleted:
      return "project/" + std::to_string(event.project_deleted().project_id());
    case E::kExperimentMoved:
      return std::to_string(event.experiment_moved().experiment_id());
    case E::kExperimentUpdated:
      return std::to_string(event.experiment_updated().experiment_id());
    case E::kTensorboardFilesDeleted:
      return std::to_string(event.tensorboard_files_deleted().experiment_id());
    case E::kExperimentArchived:
      return std::to_string(event.experiment_archived().experiment_id());
    case E::kExperimentDeleted:
      return std::to_string(event.experiment_deleted().experiment_id());
    case E::kExperimentContinued:
      return std::to_string(event.experiment_continued().experiment_id());
    case E::kTrialKillRequested:
      return std::to_string(event.trial_kill_requested().trial_id());
    case E::kRoleAssigned:
      return event.role_assigned().group_id() != 0
                 ? "group/" + std::to_string(event.role_assigned().group_id())
                 : "user/" + std::to_string(event.role_assigned().user_id());
    case E::kRoleRemoved:
      return event.role_removed().group_id() != 0
                 ? "group/" + std::to_string(event.role_removed().group_id())
                 : "user/" + std::to_string(event.role_removed().user_id());
    case E::kGroupCreated:
      return "group/" + std::to_string(event.group_created().group_id());
    case E::kGroupUpdated:
      return "group/" + std::to_string(event.group_updated().group_id());
    case E::kGroupDeleted:
      return "group/" + std::to_string(event.group_deleted().group_id());
    case E::kPoolBindingsChanged:
      return "pool/" + event.pool_bindings_changed().pool_name();
    case E::kConfigPoliciesSet:
      return "config-policies/" + std::to_string(event.config_policies_set().workspace_id()) + "/" +
             event.config_policies_set().workload_type();
    case E::kConfigPoliciesDeleted:
      return "config-policies/" + std::to_string(event.config_policies_deleted().workspace_id()) +
             "/" + event.config_policies_deleted().workload_type();
    case E::kClusterMessageSet:
    case E::kClusterMessageCleared:
      return "cluster-message";
    case E::kMasterLogLevelChanged:
      return "master/" + event.master_log_level_changed().master_id();
    case E::kAuthorizationConfigured:
      return "cluster/authz";
    case E::kModelCreated:
      return "model/" + std::to_string(event.model_created().model_id());
    case E::kModelUpdated:
      return "model/" + std::to_string(event.model_updated().model_id());
    case E::kModelDeleted:
      return "model/" + std::to_string(event.model_deleted().model_id());
    case E::kModelVersionRegistered:
      return "model/" + std::to_string(event.model_version_registered().model_id());
    case E::kModelVersionUpdated:
      return "model/" + std::to_string(event.model_version_updated().model_id());
    case E::kModelVersionDeleted:
      return "model/" + std::to_string(event.model_version_deleted().model_id());
    case E::kWebhookCreated:
      return "webhook/" + std::to_string(event.webhook_created().webhook_id());
    case E::kWebhookUpdated:
      return "webhook/" + std::to_string(event.webhook_updated().webhook_id());
    case E::kWebhookDeleted:
      return "webhook/" + std::to_string(event.webhook_deleted().webhook_id());
    case E::kWebhookAlertRaised:
      return std::to_string(event.webhook_alert_raised().experiment_id());
    case E::kWebhookDeliveriesRecorded:
      return "webhooks";
    case E::kTaskLogsExpired:
      return "task-logs";
    default:
      return TaskIdOf(event);
  }
}

std::vector<events::AllocationPart> AllocationPartsOf(const events::AllocationAssigned& assigned) {
  if (assigned.parts_size() > 0) return {assigned.parts().begin(), assigned.parts().end()};
  events::AllocationPart part;
  part.set_agent_id(assigned.agent_id());
  part.set_agent_incarnation(assigned.agent_incarnation());
  *part.mutable_slot_ids() = assigned.slot_ids();
  return {part};
}

namespace {

template <typename Order>
std::vector<events::AllocationPart> PartsOf(const Order& order) {
  if (order.parts_size() > 0) return {order.parts().begin(), order.parts().end()};
  if (order.agent_id().empty()) return {};
  events::AllocationPart part;
  part.set_agent_id(order.agent_id());
  part.set_agent_incarnation(order.agent_incarnation());
  return {part};
}

}  // namespace

std::vector<events::AllocationPart> OrderPartsOf(const events::Envelope& event) {
  if (event.has_allocation_assigned()) return AllocationPartsOf(event.allocation_assigned());
  if (event.has_preemption_requested()) return PartsOf(event.preemption_requested());
  if (event.has_kill_requested()) return PartsOf(event.kill_requested());
  return {};
}

std::vector<std::string> PlacementAgentsOf(const events::Envelope& event) {
  std::vector<std::string> agents;
  for (const auto& part : OrderPartsOf(event)) agents.push_back(part.agent_id());
  return agents;
}

bool IsPlacementFor(const events::Envelope& event, const std::string& agent_id) {
  for (const auto& agent : PlacementAgentsOf(event)) {
    if (agent == agent_id) return true;
  }
  return false;
}

std::string EnvelopeToJson(const events::Envelope& event, Audience audience) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = false;
  auto status =
      google::protobuf::util::MessageToJsonString(RedactedFor(event, audience), &out, options);
  if (!status.ok()) return "{}";
  // proto3 JSON omits zero values; offset 0 is a real offset, so readers always get one.
  if (event.offset() == 0 && out.size() > 1)
    out.insert(1, out.size() > 2 ? "\"offset\":\"0\"," : "\"offset\":\"0\"");
  return out;
}

Result<events::Envelope> EnvelopeFromJson(const std::string& json) {
  events::Envelope event;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(json, &event, options);
  if (!status.ok()) return Status::InvalidArgument("bad event JSON: " + status.ToString());
  return event;
}

}  // namespace cairn
