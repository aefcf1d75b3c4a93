// The closed set of commands Cairn's single writer accepts. A command is a request to change the
// cluster; each domain (commands/<domain>/*_commands.h) owns its commands and decides them, and
// the dispatcher (commands/decider.h) routes each to its domain. A command added here without a
// decider (DecideCommand) and an authorization (MayRun) for it does not compile.
#pragma once

#include <string>
#include <variant>

#include "commands/agents/agent_commands.h"
#include "commands/decision.h"
#include "commands/experiments/experiment_commands.h"
#include "commands/identity/identity.h"
#include "commands/pai/pai_commands.h"
#include "commands/policies/policy_commands.h"
#include "commands/registry/registry_commands.h"
#include "commands/tasks/task_commands.h"
#include "commands/templates/template_commands.h"
#include "commands/tenancy/tenancy_commands.h"
#include "commands/webhooks/webhook_commands.h"

namespace cairn::commands {

// Written by a master when it starts, after replaying the log.
struct ClaimWriterEpoch {
  static constexpr const char* kName = "ClaimWriterEpoch";
  std::string master_id;
};

using Command = std::variant<
    SubmitTask, KillTask, RegisterAgent, DisconnectAgent, EnableAgent, DisableAgent,
    ReportTaskStarted, ReportTaskExited, ClaimWriterEpoch, ConfigurePools, UpdateJob,
    ExpirePreemptions, CreateExperiment, ExperimentAction, ReportWorkload, SaveTemplate,
    DeleteTemplate, CreateUser, UpdateUser, StartSession, EndSession, RecordLoginFailure,
    RecordAccessDenied, CreateWorkspace, UpdateWorkspace, DeleteWorkspace, PinWorkspace,
    CreateProject, UpdateProject, DeleteProject, MoveExperiment, ChangeRoles, SetPoolBindings,
    UpdateExperiment, KillTrial, ContinueExperiment, DeleteCheckpoints, CreateModel, UpdateModel,
    DeleteModel, RegisterModelVersion, UpdateModelVersion, DeleteModelVersion, ReportTaskReady,
    SubmitPaiJob, StopPaiJob, UpdateJobs, ReportTrial, ConfigureAuthz, CreateAccessToken,
    UpdateAccessToken, SetClusterMessage, ChangeMasterLogLevel, SetSlotEnabled,
    DeleteTensorboardFiles, SetConfigPolicies, DeleteConfigPolicies, CreateGroup, UpdateGroup,
    DeleteGroup, HoldTask, CreateWebhook, UpdateWebhook, DeleteWebhook, RaiseWebhookAlert,
    RecordWebhookDeliveries, ExpireTaskLogs, RecordLogPolicyMatch>;

// A short name for logs and errors, e.g. "SubmitTask" (each command's kName).
const char* CommandName(const Command& command);

}  // namespace cairn::commands
