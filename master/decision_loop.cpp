#include "master/decision_loop.h"

#include <algorithm>
#include <optional>
#include <set>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/notification.h"
#include "base/thread_priority.h"
#include "commands/experiments/experiment_decider.h"
#include "commands/experiments/log_policies.h"
#include "commands/scheduler/explain.h"
#include "commands/scheduler/scheduler.h"
#include "events/envelope_util.h"
#include "events/sealing.h"
#include "master/decision_snapshots.h"

namespace cairn {

// The writer is the master's; what it decides with is the write side's.
using commands::AgentRecord;
using commands::AllocationHolding;
using commands::Apply;
using commands::ClaimWriterEpoch;
using commands::Command;
using commands::CommandMeta;
using commands::CommandName;
using commands::Decide;
using commands::DecideFollowUps;
using commands::Decision;
using commands::DecisionState;
using commands::DescribeLiveTrialRun;
using commands::ExpiredPreemptions;
using commands::ExpirePreemptions;
using commands::ExplainTask;
using commands::IdentityState;
using commands::LoginThrottle;
using commands::Outcome;
using commands::RecordedWorkloadAnswer;
using commands::RegisterAgent;
using commands::ReportWorkload;
using commands::TaskExplanation;
using commands::TaskRecord;
using commands::TenancyState;
using commands::TrialRunStart;
using commands::UserRecord;
using commands::Writer;

// A command on its way through the writer, and the caller waiting for its answer.
struct DecisionLoop::Pending {
  Command command;
  CommandMeta meta;

  void Answer(Result<Outcome> result) {
    answer = std::move(result);
    answered.Notify();  // both sides hold the Pending: it outlives this call
  }
  Result<Outcome> AwaitAnswer() {
    answered.Wait();
    return std::move(*answer);
  }

 private:
  std::optional<Result<Outcome>> answer;
  Notification answered;
};

DecisionLoop::DecisionLoop(EventLog* log, Options options)
    : log_(log), options_(std::move(options)) {}

DecisionLoop::~DecisionLoop() { Stop(); }

namespace {

// What a command carries that the decider compares with what the log recorded, sealed as the log
// keeps it (events/sealing.h): an unchanged pool configuration, a `continue` override restating
// the experiment's storage or secret variables, a workspace's restated storage are then no change.
// Sealing is deterministic, so the stamp's sealing of the resulting events changes nothing more.
void SealCommand(commands::Command& command, const DecisionState& state,
                 const SecretSealer& sealer) {
  if (!sealer.has_key()) return;
  if (auto* pools = std::get_if<commands::ConfigurePools>(&command)) {
    SealSecrets(pools->config, sealer);
  } else if (auto* continued = std::get_if<commands::ContinueExperiment>(&command)) {
    std::set<std::string> secret;
    const auto* experiment = state.FindExperiment(continued->experiment_id);
    if (experiment != nullptr && experiment->config != nullptr) {
      const auto& names = experiment->config->environment.secret_environment_variables;
      secret.insert(names.begin(), names.end());
    }
    continued->override_yaml = SealConfigYaml(continued->override_yaml, sealer, secret);
  } else if (auto* workspace = std::get_if<commands::UpdateWorkspace>(&command)) {
    if (workspace->checkpoint_storage_json) {
      workspace->checkpoint_storage_json =
          SealStorageJson(*workspace->checkpoint_storage_json, sealer);
    }
  }
}

// The payload field numbers of events.proto's ranges: 200-219 identity, 220-239 tenancy.
bool IsIdentityEvent(const Envelope& event) {
  return event.payload_case() >= 200 && event.payload_case() < 220 && !event.has_access_denied();
}

bool IsTenancyEvent(const Envelope& event) {
  return event.payload_case() >= 220 && event.payload_case() < 240;
}

// What an answer's rendering may read of users: who exists, their ids, names and admin flags.
bool ChangesAccess(const Envelope& event) {
  return event.has_user_created() || event.has_user_updated() || IsTenancyEvent(event);
}

}  // namespace

void DecisionLoop::PublishIdentity() {
  std::unique_lock lock(identity_mutex_);
  identity_ = state_.identity;
}

void DecisionLoop::PublishTenancy() {
  auto tenancy = std::make_shared<const TenancyState>(state_.tenancy);
  std::unique_lock lock(identity_mutex_);
  tenancy_ = std::move(tenancy);
}

uint64_t DecisionLoop::AccessGeneration() { return access_generation_.load(); }

std::shared_ptr<const TenancyState> DecisionLoop::Tenancy() {
  std::shared_lock lock(identity_mutex_);
  return tenancy_ != nullptr ? tenancy_ : std::make_shared<const TenancyState>();
}

Result<UserRecord> DecisionLoop::Authenticate(const std::string& token_sha256, int64_t now) {
  std::shared_lock lock(identity_mutex_);
  const UserRecord* user = identity_.SessionUser(token_sha256, now);
  if (user == nullptr) {
    return Status::Unauthenticated("the token is not a live session; log in again");
  }
  return *user;
}

Writer::LoginSubject DecisionLoop::DescribeLogin(const std::string& username, int64_t now) {
  std::shared_lock lock(identity_mutex_);
  LoginSubject subject;
  if (const UserRecord* user = identity_.FindUser(username)) subject.user = *user;
  subject.throttled = identity_.Throttled(username, now, options_.login_throttle);
  return subject;
}

std::optional<UserRecord> DecisionLoop::FindUser(const std::string& username) {
  std::shared_lock lock(identity_mutex_);
  const UserRecord* user = identity_.FindUser(username);
  return user == nullptr ? std::nullopt : std::optional<UserRecord>(*user);
}

namespace {
double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

Status DecisionLoop::Replay() {
  const auto started = std::chrono::steady_clock::now();
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log_->EndOffset());
  DecisionSnapshotStore::Restored restored;
  if (options_.snapshots != nullptr) restored = options_.snapshots->RestoreNewest(*log_, end);
  std::unique_ptr<DecisionState> fresh = std::move(restored.state);
  const uint64_t from = fresh ? fresh->next_offset : 0;
  if (!fresh) fresh = std::make_unique<DecisionState>();
  CAIRN_RETURN_IF_ERROR(FoldLogInto(*fresh, *log_, end));
  const std::string chain = restored.chain.size() > 1
                                ? " (the snapshot a whole one and " +
                                      std::to_string(restored.chain.size() - 1) +
                                      " deltas after it)"
                                : "";
  log::Info("decision_loop",
            "folded the write side's state to offset {} in {:.2f} s: {} the log's {} events {}{}",
            end, SecondsSince(started), from > 0 ? "a decision snapshot and" : "all", end - from,
            from > 0 ? "after offset " + std::to_string(from) : "from offset 0", chain);
  std::lock_guard lock(state_mutex_);
  state_ = std::move(*fresh);
  explained_ = {};  // it may have explained a state at this offset that the log never took
  PublishIdentity();
  PublishTenancy();
  ++access_generation_;
  const uint64_t my_epoch = my_epoch_.load();
  if (my_epoch != 0 && state_.writer_epoch > my_epoch) {
    fenced_reason_ = "a newer master (writer epoch " + std::to_string(state_.writer_epoch) +
                     ") took over the log; this master (epoch " + std::to_string(my_epoch) +
                     ") no longer writes";
  }
  return Status::Ok();
}

Status DecisionLoop::Start() {
  CAIRN_RETURN_IF_ERROR(Replay());
  writer_ = std::thread(&DecisionLoop::Run, this);
  CommandMeta meta{"system:master", options_.master_id, "", NowUnixMicros()};
  auto claimed = Execute(ClaimWriterEpoch{options_.master_id}, meta);
  if (!claimed.ok()) return claimed.status();
  {
    std::lock_guard lock(state_mutex_);
    my_epoch_ = state_.writer_epoch;
  }
  preemption_timer_ = std::thread(&DecisionLoop::RunPreemptionTimer, this);
  return Status::Ok();
}

void DecisionLoop::RunPreemptionTimer() {
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    timer_wakeup_.wait_for(lock, options_.preemption_check_period);
    if (stopping_) return;
    lock.unlock();
    const int64_t now = NowUnixMicros();
    bool expired = false;
    Read([&](const DecisionState& state) { expired = !ExpiredPreemptions(state, now).empty(); });
    if (expired) {
      auto result =
          Execute(ExpirePreemptions{}, CommandMeta{"system:preemption-timer", "", "", now});
      if (!result.ok()) {
        log::Error("decision_loop", "forcing expired preemptions failed: {}", result.status());
      }
    }
    lock.lock();
  }
}

void DecisionLoop::Stop() {
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_ && !writer_.joinable()) return;
    stopping_ = true;
  }
  queue_changed_.notify_all();
  timer_wakeup_.notify_all();
  {
    std::lock_guard lock(state_mutex_);
    state_watch_closed_ = true;
  }
  state_changed_.notify_all();
  if (preemption_timer_.joinable()) preemption_timer_.join();
  if (writer_.joinable()) writer_.join();
}

Result<Outcome> DecisionLoop::Execute(Command command, CommandMeta meta) {
  auto pending = std::make_shared<Pending>();
  pending->command = std::move(command);
  pending->meta = std::move(meta);
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return Status::Unavailable("the master is shutting down");
    queue_.push_back(pending);
  }
  queue_changed_.notify_one();
  return pending->AwaitAnswer();
}

Result<Decision> DecisionLoop::Preview(const Command& command, const CommandMeta& meta) {
  std::lock_guard lock(state_mutex_);
  Command sealed = command;
  SealCommand(sealed, state_, options_.sealer);
  return commands::Decide(state_, sealed, meta);
}

void DecisionLoop::Read(const std::function<void(const DecisionState&)>& reader) const {
  std::lock_guard lock(state_mutex_);
  reader(state_);
}

Result<TaskExplanation> DecisionLoop::Explain(const std::string& task_id, int64_t now_unix_micros) {
  std::lock_guard lock(state_mutex_);
  return ExplainTask(state_, task_id, now_unix_micros, &explained_);
}

Result<TrialRunStart> DecisionLoop::DescribeTrialRun(const std::string& allocation_id) {
  std::lock_guard lock(state_mutex_);
  return DescribeLiveTrialRun(state_, allocation_id);
}

bool DecisionLoop::AwaitTrialStop(const std::string& allocation_id,
                                  std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_mutex_);
  return state_changed_.wait_for(lock, timeout, [&] {
    return state_watch_closed_ || commands::TrialRunShouldStop(state_, allocation_id);
  }) && !state_watch_closed_;
}

Result<AllocationHolding> DecisionLoop::DescribeAllocation(const std::string& allocation_id) {
  std::lock_guard lock(state_mutex_);
  CAIRN_ASSIGN_OR_RETURN(const commands::TaskRecord* task, state_.AllocationNamed(allocation_id));
  AllocationHolding holding{task->task_id, state_.AllocationAgents(allocation_id), {}};
  const commands::TrialRecord* trial =
      task->trial_id != 0 ? state_.FindTrial(task->trial_id) : nullptr;
  const commands::ExperimentRecord* experiment =
      trial != nullptr ? state_.FindExperiment(trial->experiment_id) : nullptr;
  if (experiment != nullptr && experiment->config != nullptr) {
    // A policy that already matched in this run is recorded: its lines need no matching.
    const bool this_run = trial->log_policy_run == task->task_id;
    for (const auto& policy : experiment->config->log_policies) {
      if (this_run && trial->matched_log_policies.count(experiments::LogPolicyKey(policy)))
        continue;
      holding.log_policies.push_back(policy);
    }
  }
  return holding;
}

uint64_t DecisionLoop::writer_epoch() const { return my_epoch_.load(); }

void DecisionLoop::Run() {
  NameThisThread(kDeciderThreadName);
  while (true) {
    std::deque<std::shared_ptr<Pending>> batch;
    {
      std::unique_lock lock(queue_mutex_);
      queue_changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued was answered
      while (!queue_.empty() && batch.size() < options_.max_commands_per_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    ProcessBatch(batch);
  }
}

void DecisionLoop::FillReply(const Command& command, Outcome& outcome) const {
  if (const auto* report = std::get_if<ReportWorkload>(&command)) {
    // The experiment reactor answered the report in the same write.
    outcome.workload_answer = RecordedWorkloadAnswer(state_, *report);
  } else if (const auto* registration = std::get_if<RegisterAgent>(&command)) {
    const AgentRecord* agent = state_.FindAgent(registration->registration.agent_id());
    if (agent != nullptr && agent->incarnation == registration->registration.incarnation()) {
      outcome.agent_orders_from = agent->registered_offset;
    }
  }
}

void DecisionLoop::ProcessBatch(std::deque<std::shared_ptr<Pending>>& batch) {
  if (needs_replay_) {
    Status reloaded = Replay();
    if (!reloaded.ok()) {
      for (auto& pending : batch) {
        pending->Answer(Status::Unavailable("the master cannot read its log back (" +
                                            reloaded.message() + "); retry later"));
      }
      return;
    }
    needs_replay_ = false;
  }
  std::vector<Envelope> to_append;
  std::vector<std::optional<Result<Outcome>>> answers(batch.size());
  std::vector<size_t> last_event_index(batch.size(), SIZE_MAX);
  uint64_t first_offset;
  {
    std::lock_guard lock(state_mutex_);
    if (!fenced_reason_.empty()) {
      for (auto& pending : batch) pending->Answer(Status::Unavailable(fenced_reason_));
      return;
    }
    first_offset = state_.next_offset;
    auto stamp = [&](Envelope& event, const CommandMeta& meta, const std::string& causation) {
      event.set_offset(state_.next_offset);
      event.set_event_id(NewUuid());
      event.set_time_unix_micros(meta.time_unix_micros);
      event.set_actor(meta.actor);
      event.set_correlation_id(meta.correlation_id);
      event.set_causation_id(causation);
      event.set_idempotency_key(meta.idempotency_key);
      if (!meta.idempotency_key.empty()) event.set_request_fingerprint(meta.request_fingerprint);
      event.set_writer_epoch(event.has_writer_epoch_claimed() ? event.writer_epoch_claimed().epoch()
                                                              : state_.writer_epoch);
      event.set_schema_version(kSchemaVersion);
      // Before Apply, so that the state holds what the log does and a replay gives the same.
      SealSecrets(event, options_.sealer);
      Apply(state_, event);  // the next command of the batch sees this one's effect
      to_append.push_back(std::move(event));
    };
    std::string last_cause;
    int64_t batch_time = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      batch_time = std::max(batch_time, batch[i]->meta.time_unix_micros);
      SealCommand(batch[i]->command, state_, options_.sealer);
      auto decision = Decide(state_, batch[i]->command, batch[i]->meta);
      if (!decision.ok()) {
        answers[i] = decision.status();
        continue;
      }
      for (auto& event : decision->events) {
        stamp(event, batch[i]->meta, "command:" + batch[i]->meta.correlation_id);
        last_cause = to_append.back().event_id();
      }
      if (!decision->events.empty()) last_event_index[i] = to_append.size() - 1;
      Outcome outcome;
      outcome.entity_id = decision->entity_id;
      outcome.events_written = static_cast<int>(decision->events.size());
      answers[i] = std::move(outcome);
    }
    // Also when nothing was written but experiments still need a reaction (after a replay, or
    // when the last batch's reactions did not settle).
    if (!to_append.empty() || !state_.dirty_experiments.empty()) {
      const auto started = std::chrono::steady_clock::now();
      DecideFollowUps(state_, batch_time, [&](events::Envelope event, const char* actor) {
        stamp(event, CommandMeta{actor, "", "", batch_time}, last_cause);
      });
      metrics_.follow_ups.Observe(SecondsSince(started));
    }
  }

  if (!to_append.empty()) {
    const auto append_started = std::chrono::steady_clock::now();
    auto appended = log_->Append(to_append);
    metrics_.append.Observe(SecondsSince(append_started));
    if (appended.ok()) {
      metrics_.events_appended += to_append.size();
    }
    if (!appended.ok()) {
      log::Error("decision_loop", "append failed ({}); reloading state from the log",
                 appended.status());
      Status reloaded = Replay();
      if (!reloaded.ok()) {
        // The state still holds this batch's events: decide nothing more until it is reloaded.
        needs_replay_ = true;
        log::Error("decision_loop", "reload failed: {}", reloaded);
      }
      // Some of the batch may have landed; clients retry with their idempotency keys.
      for (size_t i = 0; i < batch.size(); ++i) {
        batch[i]->Answer(answers[i]->ok() ? appended.status() : answers[i]->status());
      }
      return;
    }
    if (appended->first != first_offset) {
      // Someone else appended since our last read (an old master, or a second one started by
      // mistake). Our events did land, after theirs: re-fold the log, so the state is exactly
      // the log's, and find out whether a newer epoch fenced us off.
      log::Warn("decision_loop",
                "the log moved under this writer (expected offset {}, got {}); reloading state "
                "from the log",
                first_offset, appended->first);
      Status reloaded = Replay();
      if (!reloaded.ok()) needs_replay_ = true;
      std::string fenced;
      {
        std::lock_guard lock(state_mutex_);
        fenced = fenced_reason_;
      }
      if (!reloaded.ok() || !fenced.empty()) {
        Status failure = !reloaded.ok() ? reloaded : Status::Unavailable(fenced);
        for (size_t i = 0; i < batch.size(); ++i) {
          batch[i]->Answer(answers[i]->ok() ? failure : answers[i]->status());
        }
        return;
      }
      first_offset = appended->first;
    }
  }
  uint64_t end = first_offset + to_append.size();
  {
    std::lock_guard lock(state_mutex_);  // the replies read the state this batch left
    // Before anyone hears of the batch: a logout is refused no later than it is acknowledged.
    if (std::any_of(to_append.begin(), to_append.end(), IsIdentityEvent)) PublishIdentity();
    if (std::any_of(to_append.begin(), to_append.end(), IsTenancyEvent)) PublishTenancy();
    if (std::any_of(to_append.begin(), to_append.end(), ChangesAccess)) ++access_generation_;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (answers[i]->ok()) {
        Outcome& outcome = answers[i]->value();
        outcome.offset = last_event_index[i] != SIZE_MAX ? first_offset + last_event_index[i]
                                                         : (end == 0 ? 0 : end - 1);
        FillReply(batch[i]->command, outcome);
      }
      batch[i]->Answer(std::move(*answers[i]));
    }
  }
  if (!to_append.empty()) state_changed_.notify_all();
  // The state is the log's up to its end, which is this batch's last event (unless the log
  // moved under the writer and was folded again: then the next batch says so). Only this thread
  // changes the state, so the hook reads it without the lock.
  if (options_.on_appended && !to_append.empty() && state_.next_offset == end) {
    options_.on_appended(state_, to_append.back().event_id());
  }
}

}  // namespace cairn
