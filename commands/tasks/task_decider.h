// The tasks and job queue domain's decisions (commands/tasks/task_commands.h): each command
// decided against the whole decision state into events or a refusal, and who may run it (MayRun,
// from the roles of commands/tenancy/tenancy.h). Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/tasks/task_commands.h"
#include "events.pb.h"

namespace cairn::commands {

// FailedPrecondition when `spec` has bind mounts and every agent of `pool` runs tasks as processes
// (nothing could mount them); `from_defaults` says the mounts came from task_container_defaults.
// Experiments' trials are checked with it too, when the experiment is created.
Status CheckMountsApplied(const DecisionState& state, const std::string& pool,
                          const events::TaskSpec& spec, bool from_defaults);

Result<Decision> DecideCommand(const DecisionState& state, const SubmitTask& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const KillTask& command,
                               const CommandMeta& meta);
// commands/tasks/generic_tasks.cpp
Result<Decision> DecideCommand(const DecisionState& state, const HoldTask& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskStarted& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskReady& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskExited& command,
                               const CommandMeta& meta);
// A user's change to a job's priority, weight, pool, max slots or place in the queue.
Result<Decision> DecideCommand(const DecisionState& state, const UpdateJob& command,
                               const CommandMeta& meta);
// All of the updates or none; a refusal lists every update's (CombinedJobUpdateErrors).
Result<Decision> DecideCommand(const DecisionState& state, const UpdateJobs& command,
                               const CommandMeta& meta);
// TaskLogsExpired for those of the tasks that exist and ended (at most kMaxTasksPerExpiry); none
// when no task qualifies.
Result<Decision> DecideCommand(const DecisionState& state, const ExpireTaskLogs& command,
                               const CommandMeta& meta);
// A kill for every preemption whose grace period ended by the command's time.
Result<Decision> DecideCommand(const DecisionState& state, const ExpirePreemptions& command,
                               const CommandMeta& meta);

// OK when `user` may run the command: a new task needs the right to create work in its
// workspace, a change to a job (a kill, a queue change, a later task) the right to change its
// owner's work there. Reports and timers are not users' to send.
Status MayRun(const DecisionState& state, const UserRecord& user, const HoldTask& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const SubmitTask& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const KillTask& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateJob& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateJobs& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ReportTaskStarted& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ReportTaskReady& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ReportTaskExited& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ExpirePreemptions& command);
// Only those who may change the master's configuration (admins), as Determined's cleanup-logs.
Status MayRun(const DecisionState& state, const UserRecord& user, const ExpireTaskLogs& command);

// The seeds' routing of a task that names no pool: TensorBoards, and commands, shells and
// notebooks that ask for no slot, go to the default aux pool; everything else (experiments'
// trials included) to the default compute pool.
bool IsAuxTask(const events::TaskSpec& spec, int32_t slots);

}  // namespace cairn::commands
