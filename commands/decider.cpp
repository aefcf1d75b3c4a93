#include "commands/decider.h"

#include <type_traits>
#include <variant>

#include "commands/agents/agent_decider.h"
#include "commands/experiments/experiment_decider.h"
#include "commands/experiments/experiment_reactor.h"
#include "commands/identity/identity_decider.h"
#include "commands/pai/pai_decider.h"
#include "commands/pai/pai_gang_hooks.h"
#include "commands/policies/policy_decider.h"
#include "commands/registry/registry_decider.h"
#include "commands/scheduler/gang_hooks.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/task_decider.h"
#include "commands/tasks/task_events.h"
#include "commands/templates/template_decider.h"
#include "commands/tenancy/tenancy_decider.h"
#include "commands/webhooks/webhook_decider.h"

namespace cairn::commands {

const char* CommandName(const Command& command) {
  return std::visit([](const auto& c) { return std::decay_t<decltype(c)>::kName; }, command);
}

namespace {

// The writer's own command, claimed by a master when it starts, after replaying the log.
Result<Decision> DecideCommand(const DecisionState& state, const ClaimWriterEpoch& command,
                               const CommandMeta&) {
  events::Envelope event;
  event.mutable_writer_epoch_claimed()->set_epoch(state.writer_epoch + 1);
  event.mutable_writer_epoch_claimed()->set_master_id(command.master_id);
  return Decision{{std::move(event)}, command.master_id};
}

Status MayRun(const DecisionState&, const UserRecord&, const ClaimWriterEpoch&) {
  return Status::Ok();
}

// Deleting a workspace kills its live commands, notebooks, shells and TensorBoards first, as
// Determined's master does: tenancy decides the deletion (and refuses while other work lives
// there), the tasks room what each kill is; composed here, where both rooms are known.
Result<Decision> DecideWorkspaceDeletion(const DecisionState& state, const DeleteWorkspace& command,
                                         const CommandMeta& meta) {
  CAIRN_ASSIGN_OR_RETURN(Decision deletion, DecideCommand(state, command, meta));
  Decision decision{{}, deletion.entity_id};
  for (const auto& [job_id, job] : state.jobs) {
    if (job.workspace_id != command.workspace_id || !job.accepts_changes()) continue;
    for (const TaskRecord* task : job.tasks) {
      for (auto& kill : KillEventsFor(*task, "user requested workspace delete", KillBy::kUser)) {
        decision.events.push_back(std::move(kill));
      }
    }
  }
  for (auto& event : deletion.events) decision.events.push_back(std::move(event));
  return decision;
}

}  // namespace

// The scheduler's gang hooks (commands/scheduler/gang_hooks.h): OpenPAI is the one owner.
const GangHooks* GangHooksOf(const DecisionState& state, const std::string& job_id) {
  return PaiGangHooks(state, job_id);
}

Status AuthorizeCommand(const DecisionState& state, const Command& command,
                        const CommandMeta& meta) {
  if (meta.actor.rfind("user:", 0) != 0) return Status::Ok();
  const UserRecord* user = ActingUser(state, meta);
  if (user == nullptr || !user->active) {
    return Status::PermissionDenied(meta.actor.substr(5) + " is not an active user");
  }
  // A command without a MayRun overload for its type does not compile here.
  return std::visit([&](const auto& c) { return MayRun(state, *user, c); }, command);
}

Result<Decision> Decide(const DecisionState& state, const Command& command,
                        const CommandMeta& meta) {
  if (!meta.idempotency_key.empty()) {
    auto seen = state.idempotency.find(meta.idempotency_key);
    // A key older than the window is new again (its entry is dropped with the next event).
    if (seen != state.idempotency.end() &&
        meta.time_unix_micros - seen->second.time_unix_micros <= kIdempotencyWindowMicros) {
      // A retry is the same request from the same caller; anything else reusing the key is a
      // mistake that must not be answered with someone else's result.
      const char* first_event = std::holds_alternative<SubmitTask>(command) ? "TaskSubmitted"
                                : std::holds_alternative<KillTask>(command) ? "KillRequested"
                                : std::holds_alternative<CreateExperiment>(command)
                                    ? "ExperimentCreated"
                                    : nullptr;
      const bool other_request = !seen->second.request_fingerprint.empty() &&
                                 !meta.request_fingerprint.empty() &&
                                 seen->second.request_fingerprint != meta.request_fingerprint;
      if (seen->second.actor != meta.actor || other_request ||
          (first_event != nullptr && seen->second.command != first_event)) {
        return Status::AlreadyExists("idempotency key " + meta.idempotency_key +
                                     " was already used for a different request");
      }
      return NoChange(seen->second.entity_id);
    }
  }
  CAIRN_RETURN_IF_ERROR(AuthorizeCommand(state, command, meta));
  if (const auto* deletion = std::get_if<DeleteWorkspace>(&command)) {
    return DecideWorkspaceDeletion(state, *deletion, meta);
  }
  // A command without a DecideCommand overload for its type does not compile here.
  return std::visit([&](const auto& c) { return DecideCommand(state, c, meta); }, command);
}

void DecideFollowUps(DecisionState& state, int64_t now,
                     const std::function<void(events::Envelope event, const char* actor)>& record) {
  bool settled = false;
  for (int round = 0; round < kMaxReactorRounds && !settled; ++round) {
    auto reactions = ReactToExperiments(state);
    settled = reactions.empty();
    for (auto& event : reactions) record(std::move(event), "system:experiments");
  }
  // Unsettled experiments stay dirty: the next batch goes on where this one stopped.
  if (settled) state.dirty_experiments.clear();
  // OpenPAI jobs: kills of what an attempt's end leaves running, the end itself, retries. One
  // round reacts to everything the batch did; a second sees the kills of queued tasks end.
  settled = false;
  for (int round = 0; round < kMaxReactorRounds && !settled; ++round) {
    auto reactions = ReactToPaiJobs(state);
    settled = reactions.empty();
    for (auto& event : reactions) record(std::move(event), "system:openpai");
  }
  if (settled) state.dirty_pai_jobs.clear();
  for (auto& event : Schedule(state, now).decisions) record(std::move(event), "system:scheduler");
}

}  // namespace cairn::commands
