// The single writer: serialises commands, decides them against the in-memory decision state,
// appends the resulting events to the log in group-committed batches, and answers each caller
// once its events are durable. Startup is replay: the state is folded from the log (from the
// newest decision snapshot on, when there is one), then the loop claims a new writer epoch. This is
// the I/O shell around the pure decider.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "base/metrics.h"
#include "base/sealed_secrets.h"
#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"
#include "commands/writer.h"
#include "events/event_log.h"

namespace cairn {

class DecisionSnapshotStore;  // master/decision_snapshots.h

class DecisionLoop : public commands::Writer {
 public:
  struct Options {
    std::string master_id;
    size_t max_commands_per_batch = 1024;
    // How often the preemption timer looks for grace periods that ended.
    std::chrono::milliseconds preemption_check_period{250};
    commands::LoginThrottle login_throttle{};
    // Where the fold starts, at startup and on a reload after a failed append: the newest
    // snapshot that checks out, then the log's tail. nullptr: the whole log.
    const DecisionSnapshotStore* snapshots = nullptr;
    // Called on the writer thread after each durable append has been answered, with the state
    // it left (the log's up to the appended events, the last of which has the id given). The
    // state must not be kept: the writer changes it once the call returns. Mutable only for its
    // change tracking (ByOwnId::TakeChanged): what the log means must not change.
    std::function<void(commands::DecisionState&, const std::string& last_event_id)> on_appended{};
    // Seals every event's credentials before it is applied and appended (events/sealing.h); no
    // key: events are written as decided.
    SecretSealer sealer{};
  };

  // `log` must outlive the loop.
  DecisionLoop(EventLog* log, Options options);
  ~DecisionLoop();

  // Replays the log, starts the writer thread and claims a new writer epoch.
  Status Start();
  // Refuses new commands, finishes the queued ones, and joins the writer thread.
  void Stop();

  // Writer (commands/writer.h). Thread-safe.
  Result<commands::Outcome> Execute(commands::Command command, commands::CommandMeta meta) override;
  Result<commands::Decision> Preview(const commands::Command& command,
                                     const commands::CommandMeta& meta) override;
  Result<commands::TaskExplanation> Explain(const std::string& task_id,
                                            int64_t now_unix_micros) override;
  Result<commands::TrialRunStart> DescribeTrialRun(const std::string& allocation_id) override;
  Result<commands::AllocationHolding> DescribeAllocation(const std::string& allocation_id) override;
  bool AwaitTrialStop(const std::string& allocation_id, std::chrono::milliseconds timeout) override;
  uint64_t writer_epoch() const override;
  Result<commands::UserRecord> Authenticate(const std::string& token_sha256, int64_t now) override;
  LoginSubject DescribeLogin(const std::string& username, int64_t now) override;
  std::optional<commands::UserRecord> FindUser(const std::string& username) override;
  std::shared_ptr<const commands::TenancyState> Tenancy() override;
  uint64_t AccessGeneration() override;

  // What the writer measures of itself, for GET /metrics. Thread-safe.
  struct Metrics {
    metrics::LatencyHistogram follow_ups;  // a batch's experiment reactions and scheduling pass
    metrics::LatencyHistogram append;      // a batch's durable append
    std::atomic<uint64_t> events_appended{0};
  };
  const Metrics& metrics() const { return metrics_; }

  // Thread-safe. Runs `reader` on the current decision state under its lock; keep it short. For
  // the master's own services (checkpoint collection); the edge asks through Writer.
  void Read(const std::function<void(const commands::DecisionState&)>& reader) const;

 private:
  struct Pending;
  void Run();
  void RunPreemptionTimer();
  void ProcessBatch(std::deque<std::shared_ptr<Pending>>& batch);
  // What a command's caller needs back beyond the offset (commands::Outcome); under state_mutex_.
  void FillReply(const commands::Command& command, commands::Outcome& outcome) const;
  Status Replay();
  // Copies the state's identity and tenancy for the lock-free-of-the-writer lookups above; under
  // state_mutex_ or on the writer thread.
  void PublishIdentity();
  void PublishTenancy();

  EventLog* log_;
  Options options_;
  Metrics metrics_;
  mutable std::mutex state_mutex_;
  commands::DecisionState state_;
  // Notified whenever a batch changed the state or the loop stops (waited on under state_mutex_):
  // what long polls of the state (AwaitTrialStop) wait on.
  std::condition_variable state_changed_;
  bool state_watch_closed_ = false;  // under state_mutex_: the loop stopped
  // Explain's passes over pools with agents for the current state; under state_mutex_.
  commands::ExplainedPasses explained_;
  // Set once at Start; read by every GET /api/v1/master, so without the state's lock.
  std::atomic<uint64_t> my_epoch_{0};
  std::string fenced_reason_;  // non-empty once a newer master took over
  // Set when the state may hold events the log does not (an append failed and the reload that
  // followed failed too): the next batch reloads first, or is refused.
  bool needs_replay_ = false;
  // The identity as of the last durable batch, read on every request (Authenticate): its own
  // lock, so a request never waits for a batch being decided.
  mutable std::shared_mutex identity_mutex_;
  commands::IdentityState identity_;
  std::shared_ptr<const commands::TenancyState> tenancy_;  // replaced whole, never changed in place
  // Moved after what changed users or tenancy is published (AccessGeneration).
  std::atomic<uint64_t> access_generation_{0};

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<std::shared_ptr<Pending>> queue_;
  bool stopping_ = false;
  std::thread writer_;
  std::thread preemption_timer_;
  std::condition_variable timer_wakeup_;  // its own: the writer's must never wake the timer
};

}  // namespace cairn
