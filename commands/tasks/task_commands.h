// The tasks and job queue domain's commands: submit and kill a task, change a job in the queue,
// end expired preemptions, and the agents' reports on a task's allocation. Decided by
// commands/tasks/task_decider.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::commands {

struct SubmitTask {
  static constexpr const char* kName = "SubmitTask";
  std::string task_id;  // chosen by the edge (a UUID), recorded in TaskSubmitted
  std::string job_id;
  events::TaskSpec spec;
  // resource_pool "" = the default compute pool, or the default aux pool for zero-slot
  // commands, shells and notebooks and for TensorBoards; priority 0 = the pool's default.
  events::Resources resources;
  std::string config_json;
  // Queue a task even if it can never fit its pool (it then waits for agents to join).
  bool force = false;
  // The configuration as the user sent it, for the write side to read under the template it
  // names, as that template is when the command is decided (`det cmd run`, and every notebook,
  // shell and TensorBoard launch). When set, the decider fills the spec's configured fields,
  // `resources` and `config_json` from it (commands/tasks/command_config.h), and `spec` carries
  // only what is not the user's to configure: its kind, user, context and TensorBoard logdirs.
  struct Request {
    std::string config_json = "{}";  // the request's `config`, as JSON text
    std::string template_name;       // "" = none
    // A TensorBoard's experiments and trials, shown back in its configuration.
    std::vector<int64_t> experiment_ids;
    std::vector<int64_t> trial_ids;
  };
  std::optional<Request> request;
  int32_t workspace_id = 1;  // the workspace its job belongs to (a later task: the job's)
};

// A user's change to a job in the queue. Unset fields keep their value; at most one of
// ahead_of / behind_of.
struct UpdateJob {
  static constexpr const char* kName = "UpdateJob";
  std::string job_id;
  std::optional<int32_t> priority;
  std::optional<double> weight;
  std::optional<std::string> resource_pool;
  std::optional<int32_t> max_slots;
  std::string ahead_of;
  std::string behind_of;
};

// Several changes to jobs in the queue (POST /api/v1/job-queues), all or none, in order: each
// decided as an UpdateJob against the queue as the entries before it left it.
struct UpdateJobs {
  static constexpr const char* kName = "UpdateJobs";
  std::vector<UpdateJob> updates;
};
// How a refused UpdateJobs says why, as Determined reports several refused updates ("encountered
// the following errors: a; b"): NotFound when every one is, InvalidArgument for any other mix.
// The edge reports updates it could not read the same way.
Status CombinedJobUpdateErrors(const std::vector<Status>& errors);

// Sent by the master's timer: forces a kill on every preemption whose grace period ended by the
// command's time.
struct ExpirePreemptions {
  static constexpr const char* kName = "ExpirePreemptions";
};

struct KillTask {
  static constexpr const char* kName = "KillTask";
  std::string task_id;
  std::string reason;
  bool from_root = false;  // a generic task: kill its whole tree (det task kill --root)
};

// Pauses (held) or unpauses a generic task and its live descendants (det task pause|unpause);
// commands/tasks/generic_tasks.h says what that does.
struct HoldTask {
  static constexpr const char* kName = "HoldTask";
  std::string task_id;
  bool held = true;
  std::string by;  // the user, for the recorded reason
};

// Log retention: these ended tasks' logs go (their events stay). Decided by the master's
// retention sweep (system:log-retention) or an admin's `det master cleanup-logs`.
struct ExpireTaskLogs {
  static constexpr const char* kName = "ExpireTaskLogs";
  std::vector<std::string> task_ids;
  std::string reason;
};

struct ReportTaskStarted {
  static constexpr const char* kName = "ReportTaskStarted";
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  int32_t pid = 0;
};

// An interactive task's service answers (the agent probed it): where the proxy reaches it.
struct ReportTaskReady {
  static constexpr const char* kName = "ReportTaskReady";
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  std::string service_host;
  int32_t service_port = 0;
  std::string service_user;
};

struct ReportTaskExited {
  static constexpr const char* kName = "ReportTaskExited";
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
  std::string reason;
};

}  // namespace cairn::commands
