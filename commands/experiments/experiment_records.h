// The experiments domain's part of the decision state (commands/decision_state.h): experiments,
// trials, checkpoints and the searcher inputs they were folded from. Pure data; folded by
// commands/experiments/experiment_state.h.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"
#include "events.pb.h"
#include "events/workspace_defaults.h"

namespace cairn::commands {

// How a trial's last run ended, until the experiment reactor has acted on it.
// kFinished: a run of a command entrypoint (Determined's launcher runs it; it drives itself)
// exited 0 unasked: its code is done, so the trial is.
enum class TrialRunExit { kNone, kClean, kFailed, kKilled, kFinished };

struct TrialRecord {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  int request_id = 0;
  std::string hparams_json;
  // A pbt clone's source: its parent's checkpoint it begins from until it saves its own; ""
  // for every other trial (which begins from the experiment's warm start, if any).
  std::string warm_start_checkpoint;
  int64_t cloned_from_trial = 0;                                    // a pbt clone's parent trial
  events::ExperimentState state = events::EXPERIMENT_STATE_ACTIVE;  // terminal once ended
  int64_t train_to = 0;      // the searcher's latest length, in batches; 0 = none yet
  bool closed = false;       // the searcher has no more work for it
  int64_t validated_at = 0;  // the largest batch count it validated at
  std::map<int64_t, double> searcher_metric;  // batch count -> searcher.metric at validation
  std::string latest_checkpoint;              // uuid; "" = none
  int64_t checkpoint_batches = 0;
  std::vector<std::string> checkpoints;  // uuids in the order they were saved
  int32_t restarts = 0;
  int runs = 0;         // tasks submitted for it
  std::string task_id;  // the live run's task; "" when it has none
  TrialRunExit last_exit = TrialRunExit::kNone;
  std::string last_exit_reason;
  // The current process's conversation (agent/harness/PROTOCOL.md §3).
  std::string workload_allocation;
  int32_t last_sequence = -1;
  bool awaiting_answer = false;
  events::TrialWorkloadAssigned last_answer;
  int64_t batches = 0;  // the process's model: batches trained (from its checkpoint on)
  int64_t last_validation_batches = 0;
  bool kill_requested = false;  // det trial kill: it ends CANCELED once no run is live
  // Determined's trial-side API (ReportTrial): the last report of each kind, to know a retry
  // ("metrics/<group>", "progress", "checkpoint").
  std::map<std::string, std::string> last_reports;
  std::string preemption_acked;  // the allocation that acknowledged its preemption signal
  std::string early_exit;        // why its code gave up (EXITED_REASON_*); "" = it did not
  // Its log policies' matches (TrialLogPolicyMatched): the last matching policy's name
  // (Determined's logPolicyMatched), the run whose failure must not be retried (cancel_retries),
  // and the agents its later runs avoid (exclude_node).
  std::string log_policy_matched;
  std::string dont_retry_task_id;
  std::vector<std::string> excluded_agents;
  // The policies (LogPolicyKey) that matched in run `log_policy_run`, each recorded once.
  std::string log_policy_run;
  std::set<std::string> matched_log_policies;

  bool ended() const {
    return state == events::EXPERIMENT_STATE_COMPLETED ||
           state == events::EXPERIMENT_STATE_CANCELED || state == events::EXPERIMENT_STATE_ERROR;
  }
  // The searcher's last length is not yet trained, validated and saved.
  bool has_work() const {
    return train_to > 0 && (validated_at < train_to || checkpoint_batches < train_to);
  }
};

struct CheckpointRecord {
  std::string uuid;
  int64_t experiment_id = 0;
  int64_t trial_id = 0;
  int64_t total_batches = 0;
  int64_t size_bytes = 0;
  bool deleted = false;
};

// A call an experiment's searcher was given after Start, in order: with the configuration and
// seed it was made from they rebuild it (a decision snapshot stores these, not its internals).
struct SearcherInput {
  enum class Kind { kTrained, kValidated, kExitedEarly };
  Kind kind = Kind::kTrained;
  int request_id = 0;
  int64_t batches = 0;  // kTrained: total batches; kValidated: the validation's batch count
  double metric = 0;    // kValidated
};

struct ExperimentRecord {
  int64_t experiment_id = 0;
  std::string name;  // as created, then as users rename it
  std::string job_id;
  std::string owner;
  int32_t workspace_id = kUncategorizedWorkspace;
  int32_t project_id = kUncategorizedProject;
  std::string context_digest;
  std::string warm_start_checkpoint;  // uuid every trial begins from until it saves its own
  int64_t created_unix_micros = 0;    // its ExperimentCreated's time
  events::ExperimentState state = events::EXPERIMENT_STATE_PAUSED;
  // Slots each trial run asks for; the pool, priority, weight and max_slots are its job's.
  int32_t slots_per_trial = 1;
  std::shared_ptr<const experiments::ExperimentConfig> config;
  // Folded from the log: fed every input the searcher was given, in order. Its decisions wait in
  // pending_ops until the reactor records them (TrialCreated, TrialTrainTo, ...). Owned, so a
  // decision state cannot be copied (a copy would share, and advance, the same searcher): fold
  // the log again to get a second one.
  std::unique_ptr<experiments::Searcher> searcher;
  // What the searcher was made from and every call it was given since (FeedSearcher).
  std::string searcher_config_json;
  uint64_t searcher_seed = 0;
  std::vector<SearcherInput> searcher_inputs;
  std::deque<experiments::SearcherOp> pending_ops;
  std::map<int, int64_t> trial_by_request;
  std::vector<int64_t> trial_ids;
  std::string config_error;  // the stored configuration no longer parses (a newer master wrote it)
  bool archived = false;
  // Deleted experiments keep their record (the checkpoint collector still finds their storage
  // through it) but no command reaches them.
  bool deleted = false;

  bool running() const {
    return state == events::EXPERIMENT_STATE_ACTIVE || state == events::EXPERIMENT_STATE_PAUSED;
  }
  bool terminal() const {
    return state == events::EXPERIMENT_STATE_COMPLETED ||
           state == events::EXPERIMENT_STATE_CANCELED || state == events::EXPERIMENT_STATE_ERROR;
  }
  bool stopping() const { return !running() && !terminal(); }
};

// Gives the experiment's searcher `input` and records it; returns the searcher's operations.
std::vector<experiments::SearcherOp> FeedSearcher(ExperimentRecord& experiment,
                                                  const SearcherInput& input);

}  // namespace cairn::commands
