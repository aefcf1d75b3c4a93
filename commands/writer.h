// The write side as the edge (api/) sees it: commands go in, and come back decided and durable or
// refused with a Status. The edge reads cluster state from projections, never the writer's
// state; what a command's caller needs back travels in its Outcome. Two questions only the live
// write side can answer exactly are asked here too: why the scheduler holds a task where it is
// (Explain), and where a live trial run starts (DescribeTrialRun). The one implementation is the
// master's single writer (master/decision_loop.h). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/commands.h"
#include "commands/experiments/log_policies.h"
#include "commands/experiments/trial_run.h"
#include "commands/scheduler/explain.h"
#include "events.pb.h"

namespace cairn::commands {

struct Outcome {
  std::string entity_id;
  // A read that waits for this offset sees the command's effect: the offset of its last event,
  // or, when it changed nothing, of the last event in the log when it was decided.
  uint64_t offset = 0;
  int events_written = 0;
  // For a ReportWorkload: the next workload, which the experiment reactor decided in the same
  // write (agent/harness/PROTOCOL.md §3); unset when it has not been decided yet.
  std::optional<events::TrialWorkloadAssigned> workload_answer;
  // For a RegisterAgent: the offset of the AgentRegistered that began this incarnation, where the
  // agent's placement orders start (also when a retried registration changed nothing).
  std::optional<uint64_t> agent_orders_from;
};

// Who holds or held an allocation (DescribeAllocation).
struct AllocationHolding {
  std::string task_id;
  std::vector<std::string> agent_ids;  // its parts' agents, the first being the main one
  // A trial run's: its experiment's log_policies, which its log lines are matched against
  // (RecordLogPolicyMatch). Empty for other tasks.
  std::vector<experiments::LogPolicy> log_policies;
};

class Writer {
 public:
  virtual ~Writer() = default;

  // Blocks until the command's events are durable, or returns why it was refused.
  virtual Result<Outcome> Execute(Command command, CommandMeta meta) = 0;
  // The decision `command` would get now, authorisation included, with nothing written
  // (Determined's validateOnly). A later Execute may decide differently.
  virtual Result<Decision> Preview(const Command& command, const CommandMeta& meta) = 0;

  // Why a live task is where it is, as the scheduler sees it now (scheduler/explain.h).
  virtual Result<TaskExplanation> Explain(const std::string& task_id, int64_t now_unix_micros) = 0;

  // The start of the live trial run holding `allocation_id`; NotFound when the allocation is not
  // a live trial run's (it ended, or was never one).
  virtual Result<TrialRunStart> DescribeTrialRun(const std::string& allocation_id) = 0;
  // Determined's preemption signal for the live trial run holding `allocation_id`: true as soon as
  // it should stop (commands::TrialRunShouldStop, also when the run is no longer live), false
  // when `timeout` passes first or the writer stops.
  virtual bool AwaitTrialStop(const std::string& allocation_id,
                              std::chrono::milliseconds timeout) = 0;
  // The task and agents of an allocation, current or ended; NotFound for one never assigned.
  virtual Result<AllocationHolding> DescribeAllocation(const std::string& allocation_id) = 0;

  // Identity, answered from the write side because it must be exact the moment a change is
  // acknowledged (a logout, a deactivation, a password change) and cheap enough for every
  // request: an in-memory lookup, never a read of the log or of RocksDB.
  // The user a live session's token (its SHA-256) stands for at `now`; Unauthenticated when the
  // token is unknown, ended or expired, or its user is deactivated.
  virtual Result<UserRecord> Authenticate(const std::string& token_sha256, int64_t now) = 0;
  // The user named `username`, with their password hash, for checking a login; NotFound when
  // there is none. `throttled`: logins as `username` are refused for now (identity.h).
  struct LoginSubject {
    std::optional<UserRecord> user;
    bool throttled = false;
  };
  virtual LoginSubject DescribeLogin(const std::string& username, int64_t now) = 0;
  // A user by name or id, as the write side holds it now; nullopt when there is none.
  virtual std::optional<UserRecord> FindUser(const std::string& username) = 0;
  // Workspaces, projects, roles and pool bindings as of the last durable batch, for the edge's
  // read checks (who may see a workspace's work): an immutable snapshot, replaced per change.
  virtual std::shared_ptr<const TenancyState> Tenancy() = 0;
  // Moves whenever users or tenancy change (never back): equal generations mean the same users,
  // roles, workspaces and authorization model, so an answer rendered for a caller under one
  // generation holds for that caller while it does.
  virtual uint64_t AccessGeneration() = 0;

  // The writer epoch this writer claimed (0 before it claimed one).
  virtual uint64_t writer_epoch() const = 0;
};

}  // namespace cairn::commands
