#include "commands/experiments/experiment_reactor.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "commands/experiments/experiment_state.h"
#include "commands/tasks/command_config.h"
#include "commands/tasks/task_container_defaults.h"
#include "commands/tasks/task_events.h"

namespace cairn::commands {

namespace {

using experiments::SearcherOp;

// The command that starts a trial process; the agent puts the harness on PYTHONPATH.
const char* const kHarnessEntrypoint[] = {"python3", "-m", "cairn_harness"};

std::string TrialName(int64_t trial_id) { return "trial " + std::to_string(trial_id); }

// The checkpoint a pbt clone begins from: its parent's first saved at or after `at_batches`
// batches. Without one, it waits while the parent may still save it; once the parent has ended
// or validated past `at_batches` (a script of Determined's package that saves rarely: waiting
// longer would hold up the round, which waits for the clone), its latest saved by then, or ""
// for none. nullopt: wait.
std::optional<std::string> CloneSource(const DecisionState& state, const TrialRecord& parent,
                                       int64_t at_batches) {
  std::string before;  // the latest at or below at_batches
  for (const auto& uuid : parent.checkpoints) {
    auto checkpoint = state.checkpoints.find(uuid);
    if (checkpoint == state.checkpoints.end() || checkpoint->second.deleted) continue;
    if (checkpoint->second.total_batches >= at_batches) return uuid;
    before = uuid;
  }
  if (parent.ended() || parent.validated_at > at_batches) return before;
  return std::nullopt;
}

class Round {
 public:
  explicit Round(const DecisionState& state) : state_(state), next_trial_id_(state.last_trial_id) {}

  void React(const ExperimentRecord& experiment) {
    if (experiment.terminal()) return;
    ended_any_ = false;
    if (RecordSearcherDecisions(experiment)) return;  // the trials see them next round
    bool any_live_run = false;
    for (int64_t trial_id : experiment.trial_ids) {
      const TrialRecord& trial = state_.trials.at(trial_id);
      if (trial.ended()) continue;
      ReactToTrial(experiment, trial);
      any_live_run |= !trial.task_id.empty();
    }
    if (experiment.stopping() && !any_live_run && !ended_any_) Finish(experiment);
  }

  // A stored configuration this master cannot read (a newer master wrote it): the experiment
  // cannot be driven, so it ends in ERROR, saying why, rather than hang.
  void Unreadable(const ExperimentRecord& experiment) {
    if (experiment.terminal()) return;
    events::Envelope event;
    auto* changed = event.mutable_experiment_state_changed();
    changed->set_experiment_id(experiment.experiment_id);
    changed->set_state(events::EXPERIMENT_STATE_ERROR);
    changed->set_reason("this master cannot read the experiment's configuration: " +
                        experiment.config_error);
    events_.push_back(std::move(event));
  }

  std::vector<events::Envelope> Take() { return std::move(events_); }

 private:
  double Progress(const ExperimentRecord& experiment) const {
    return experiment.searcher ? experiment.searcher->Progress() : 0;
  }

  // Returns true when it recorded any decision.
  bool RecordSearcherDecisions(const ExperimentRecord& experiment) {
    if (!experiment.running() || experiment.pending_ops.empty()) return false;
    std::map<int, int64_t> created;  // request id -> trial id, for this round's new trials
    auto trial_of = [&](int request_id) -> int64_t {
      auto known = experiment.trial_by_request.find(request_id);
      if (known != experiment.trial_by_request.end()) return known->second;
      auto fresh = created.find(request_id);
      return fresh == created.end() ? 0 : fresh->second;
    };
    bool recorded = false;
    const double progress = Progress(experiment);
    std::set<int> waiting;  // clones whose source is not saved yet, and their later ops
    for (const SearcherOp& op : experiment.pending_ops) {
      if (waiting.count(op.request_id)) continue;
      events::Envelope event;
      switch (op.kind) {
        case SearcherOp::Kind::kCreateTrial: {
          std::string reason = op.reason;
          std::optional<std::string> source;
          const int64_t parent_id = op.clone_of == 0 ? 0 : trial_of(op.clone_of);
          if (op.clone_of != 0) {
            auto parent = state_.trials.find(parent_id);
            source = parent == state_.trials.end()
                         ? std::optional<std::string>("")
                         : CloneSource(state_, parent->second, op.clone_at_batches);
            if (!source) {
              waiting.insert(op.request_id);
              continue;
            }
            if (!source->empty()) {
              reason +=
                  "; begins from trial " + std::to_string(parent_id) + "'s checkpoint " + *source;
            } else {
              // TrialCreated without a source: the experiment's warm start, if any.
              reason += "; trial " + std::to_string(parent_id) + " saved no checkpoint by then: " +
                        (experiment.warm_start_checkpoint.empty()
                             ? std::string("it begins from scratch")
                             : "it begins from the experiment's warm start " +
                                   experiment.warm_start_checkpoint);
            }
          }
          auto* trial = event.mutable_trial_created();
          trial->set_experiment_id(experiment.experiment_id);
          trial->set_trial_id(++next_trial_id_);
          trial->set_request_id(op.request_id);
          trial->set_hparams_json(op.hparams.dump());
          trial->set_reason(std::move(reason));
          trial->set_progress(progress);
          if (source) {
            trial->set_warm_start_checkpoint_uuid(*source);
            trial->set_cloned_from_trial_id(parent_id);
          }
          created[op.request_id] = trial->trial_id();
          break;
        }
        case SearcherOp::Kind::kTrainTo: {
          int64_t trial_id = trial_of(op.request_id);
          if (trial_id == 0) continue;
          auto* train = event.mutable_trial_train_to();
          train->set_experiment_id(experiment.experiment_id);
          train->set_trial_id(trial_id);
          train->set_length_batches(op.length_batches);
          train->set_reason(op.reason);
          train->set_progress(progress);
          break;
        }
        case SearcherOp::Kind::kCloseTrial: {
          int64_t trial_id = trial_of(op.request_id);
          if (trial_id == 0) continue;
          auto* closed = event.mutable_trial_closed();
          closed->set_experiment_id(experiment.experiment_id);
          closed->set_trial_id(trial_id);
          closed->set_reason(op.reason);
          closed->set_progress(progress);
          break;
        }
        case SearcherOp::Kind::kShutdown: {
          auto* changed = event.mutable_experiment_state_changed();
          changed->set_experiment_id(experiment.experiment_id);
          changed->set_state(events::EXPERIMENT_STATE_STOPPING_COMPLETED);
          changed->set_reason("the search is over" +
                              (op.reason.empty() ? std::string() : ": " + op.reason));
          changed->set_progress(1);
          break;
        }
      }
      events_.push_back(std::move(event));
      recorded = true;
      if (op.kind == SearcherOp::Kind::kShutdown) break;  // nothing after it counts
    }
    return recorded;
  }

  void ReactToTrial(const ExperimentRecord& experiment, const TrialRecord& trial) {
    const auto& config = *experiment.config;
    if (trial.kill_requested && trial.task_id.empty()) {
      End(experiment, trial, events::EXPERIMENT_STATE_CANCELED, "killed by a user");
      return;
    }
    switch (trial.last_exit) {
      case TrialRunExit::kFailed:
        if (trial.closed && !trial.has_work()) {
          // Its work was all trained, validated and saved: a crash on the way out loses nothing.
          End(experiment, trial, events::EXPERIMENT_STATE_COMPLETED,
              "the searcher closed it; its last run then failed (" + trial.last_exit_reason +
                  ") with nothing left unsaved");
        } else if (!trial.dont_retry_task_id.empty() &&
                   trial.dont_retry_task_id ==
                       TrialRunTaskId(experiment.experiment_id, trial.trial_id, trial.runs)) {
          End(experiment, trial, events::EXPERIMENT_STATE_ERROR,
              "run " + std::to_string(trial.runs) + " failed (" + trial.last_exit_reason +
                  ") and its logs matched a log policy with action cancel_retries: trial failed "
                  "and matched logs to a don't retry policy");
        } else if (experiment.running() && trial.restarts < config.max_restarts) {
          events::Envelope event;
          auto* restarted = event.mutable_trial_restarted();
          restarted->set_experiment_id(experiment.experiment_id);
          restarted->set_trial_id(trial.trial_id);
          restarted->set_restarts(trial.restarts + 1);
          restarted->set_reason("run " + std::to_string(trial.runs) + " failed (" +
                                trial.last_exit_reason + "); restart " +
                                std::to_string(trial.restarts + 1) + " of " +
                                std::to_string(config.max_restarts) + " resumes from " +
                                (trial.latest_checkpoint.empty()
                                     ? "the start"
                                     : "checkpoint " + trial.latest_checkpoint + " at " +
                                           std::to_string(trial.checkpoint_batches) + " batches"));
          events_.push_back(std::move(event));
        } else {
          End(experiment, trial, events::EXPERIMENT_STATE_ERROR,
              experiment.running()
                  ? "run " + std::to_string(trial.runs) + " failed (" + trial.last_exit_reason +
                        ") and the trial used its max_restarts of " +
                        std::to_string(config.max_restarts)
                  : "its last run failed (" + trial.last_exit_reason + ")");
        }
        return;
      case TrialRunExit::kKilled:
        End(experiment, trial, events::EXPERIMENT_STATE_CANCELED,
            "its run was killed (" + trial.last_exit_reason + ")");
        return;
      case TrialRunExit::kFinished:
        End(experiment, trial, events::EXPERIMENT_STATE_COMPLETED,
            trial.early_exit.empty() ? "its code finished (" + trial.last_exit_reason + ")"
                                     : "its code exited early (" + trial.early_exit + ")");
        return;
      default:
        break;
    }
    if (!trial.task_id.empty()) {
      const TaskRecord& task = state_.tasks.at(trial.task_id);
      if (task.state == TaskState::kQueued &&
          (experiment.state != events::EXPERIMENT_STATE_ACTIVE || trial.closed)) {
        std::string why = trial.closed ? "the searcher closed the trial"
                                       : std::string("the experiment is ") +
                                             ExperimentStateText(experiment.state);
        for (auto& event : KillEventsFor(task, why, KillBy::kSystem))
          events_.push_back(std::move(event));
      } else if (trial.awaiting_answer) {
        events::Envelope event;
        *event.mutable_trial_workload_assigned() = NextWorkload(state_, experiment, trial);
        events_.push_back(std::move(event));
      }
      return;
    }
    if (!experiment.running()) return;  // Finish ends it
    if (trial.closed) {
      End(experiment, trial, events::EXPERIMENT_STATE_COMPLETED, "the searcher closed it");
    } else if (experiment.state == events::EXPERIMENT_STATE_ACTIVE && trial.has_work()) {
      SubmitRun(experiment, trial);
    }
  }

  void SubmitRun(const ExperimentRecord& experiment, const TrialRecord& trial) {
    const JobRecord& job = state_.jobs.at(experiment.job_id);
    events::Envelope event;
    auto* submitted = event.mutable_task_submitted();
    submitted->set_task_id(
        TrialRunTaskId(experiment.experiment_id, trial.trial_id, trial.runs + 1));
    submitted->set_job_id(experiment.job_id);
    submitted->set_trial_id(trial.trial_id);
    submitted->set_workspace_id(job.workspace_id);
    submitted->set_job_name(experiment.name);
    auto* spec = submitted->mutable_spec();
    spec->set_task_type(events::TASK_TYPE_TRIAL);
    for (const char* arg : kHarnessEntrypoint) spec->add_entrypoint(arg);
    spec->set_user(experiment.owner);
    // Recorded with the experiment's configuration; the agent picks the cpu or cuda variant.
    SetTaskImage(experiment.config->environment.image, *spec);
    spec->MergeFrom(experiment.config->container);  // bind mounts, registry auth, shm size
    // The pool's startup hook as it is now, as Determined's tasks take it at their start.
    spec->set_startup_hook(StartupHookIn(state_.pools_config, job.resource_pool));
    spec->set_description(TrialName(trial.trial_id) + " of experiment " +
                          std::to_string(experiment.experiment_id) + " (" + experiment.name +
                          "), run " + std::to_string(trial.runs + 1));
    auto* resources = submitted->mutable_resources();
    resources->set_slots(experiment.slots_per_trial);
    resources->set_resource_pool(job.resource_pool);
    resources->set_priority(job.priority);
    resources->set_weight(job.weight);
    resources->set_max_slots(job.max_slots);
    for (const auto& agent_id : trial.excluded_agents) resources->add_excluded_agents(agent_id);
    if (Status run_as =
            SetRunAs(state_.identity, state_.tenancy.WorkspaceAgentUser(job.workspace_id), *spec);
        !run_as.ok()) {
      End(experiment, trial, events::EXPERIMENT_STATE_ERROR, run_as.message());
      return;
    }
    events_.push_back(std::move(event));
  }

  void End(const ExperimentRecord& experiment, const TrialRecord& trial,
           events::ExperimentState end_state, const std::string& reason) {
    events::Envelope event;
    auto* ended = event.mutable_trial_ended();
    ended->set_experiment_id(experiment.experiment_id);
    ended->set_trial_id(trial.trial_id);
    ended->set_state(end_state);
    ended->set_reason(reason);
    ended->set_progress(Progress(experiment));
    events_.push_back(std::move(event));
    ended_any_ = true;
    Collect(experiment, trial.trial_id, TrialName(trial.trial_id) + " ended");
  }

  void Collect(const ExperimentRecord& experiment, std::optional<int64_t> trial_id,
               const std::string& when) {
    std::vector<std::string> uuids = CheckpointsToCollect(state_, experiment, trial_id);
    if (uuids.empty()) return;
    events_.push_back(CollectionEvent(experiment, std::move(uuids), when));
  }

  void Finish(const ExperimentRecord& experiment) {
    events::ExperimentState final_state = events::EXPERIMENT_STATE_CANCELED;
    // As Determined: a search that ran out completes even if some trials errored, and is an
    // ERROR only when every trial it made failed.
    const bool every_trial_failed =
        !experiment.trial_ids.empty() &&
        std::all_of(experiment.trial_ids.begin(), experiment.trial_ids.end(), [&](int64_t id) {
          return state_.trials.at(id).state == events::EXPERIMENT_STATE_ERROR;
        });
    if (experiment.state == events::EXPERIMENT_STATE_STOPPING_COMPLETED) {
      final_state =
          every_trial_failed ? events::EXPERIMENT_STATE_ERROR : events::EXPERIMENT_STATE_COMPLETED;
    } else if (experiment.state == events::EXPERIMENT_STATE_STOPPING_ERROR) {
      final_state = events::EXPERIMENT_STATE_ERROR;
    }
    for (int64_t trial_id : experiment.trial_ids) {
      const TrialRecord& trial = state_.trials.at(trial_id);
      if (trial.ended()) continue;
      events::ExperimentState trial_state =
          final_state == events::EXPERIMENT_STATE_COMPLETED && !trial.closed
              ? events::EXPERIMENT_STATE_CANCELED
              : final_state;
      events::Envelope event;
      auto* ended = event.mutable_trial_ended();
      ended->set_experiment_id(experiment.experiment_id);
      ended->set_trial_id(trial_id);
      ended->set_state(trial_state);
      ended->set_reason(std::string("the experiment is ") + ExperimentStateText(final_state));
      ended->set_progress(Progress(experiment));
      events_.push_back(std::move(event));
    }
    events::Envelope event;
    auto* changed = event.mutable_experiment_state_changed();
    changed->set_experiment_id(experiment.experiment_id);
    changed->set_state(final_state);
    changed->set_reason(every_trial_failed && final_state == events::EXPERIMENT_STATE_ERROR
                            ? std::string("every trial failed")
                            : std::string("every trial has stopped after ") +
                                  ExperimentStateText(experiment.state));
    changed->set_progress(final_state == events::EXPERIMENT_STATE_COMPLETED ? 1
                                                                            : Progress(experiment));
    events_.push_back(std::move(event));
    Collect(experiment, std::nullopt, "the experiment ended");
  }

  const DecisionState& state_;
  int64_t next_trial_id_;
  bool ended_any_ = false;
  std::vector<events::Envelope> events_;
};

events::TrialWorkloadAssigned Workload(const TrialRecord& trial, events::WorkloadKind kind,
                                       std::string reason) {
  events::TrialWorkloadAssigned workload;
  workload.set_experiment_id(trial.experiment_id);
  workload.set_trial_id(trial.trial_id);
  workload.set_allocation_id(trial.workload_allocation);
  workload.set_sequence(trial.last_sequence);
  workload.set_kind(kind);
  workload.set_reason(std::move(reason));
  return workload;
}

int64_t BatchesOf(const experiments::ExperimentConfig& config, const experiments::Length& length) {
  auto batches = experiments::LengthInBatches(config, length);
  return batches.ok() ? *batches : 0;
}

}  // namespace

events::TrialWorkloadAssigned NextWorkload(const DecisionState& state,
                                           const ExperimentRecord& experiment,
                                           const TrialRecord& trial) {
  const auto& config = *experiment.config;
  const TaskRecord* task = state.FindTask(trial.task_id);
  const bool killing = task != nullptr && task->kill_requested;
  const bool preempting = task != nullptr && task->preempting;
  std::string stop;
  if (killing) {
    stop = "the run is being killed";
  } else if (preempting) {
    stop = "preempted (" + task->last_reason + ")";
  } else if (experiment.state != events::EXPERIMENT_STATE_ACTIVE) {
    stop = std::string("the experiment is ") + ExperimentStateText(experiment.state);
  } else if (trial.closed) {
    stop = "the searcher closed the trial";
  }
  const int64_t batches = trial.batches;
  if (stop.empty() && batches < trial.train_to) {
    int64_t validation_period = BatchesOf(config, config.min_validation_period);
    if (validation_period > 0 && batches - trial.last_validation_batches >= validation_period) {
      return Workload(trial, events::WORKLOAD_KIND_VALIDATE, "min_validation_period");
    }
    int64_t checkpoint_period = BatchesOf(config, config.min_checkpoint_period);
    if (checkpoint_period > 0 && batches - trial.checkpoint_batches >= checkpoint_period) {
      return Workload(trial, events::WORKLOAD_KIND_CHECKPOINT, "min_checkpoint_period");
    }
    auto train =
        Workload(trial, events::WORKLOAD_KIND_TRAIN,
                 "towards the searcher's length of " + std::to_string(trial.train_to) + " batches");
    train.set_batches(
        std::min<int64_t>(std::max(config.scheduling_unit, 1), trial.train_to - batches));
    train.set_start_batch(batches);
    return train;
  }
  if (!killing && !preempting && trial.train_to > 0 && batches >= trial.train_to &&
      trial.validated_at < trial.train_to) {
    // The validation ends the round; the clones of the best begin from this checkpoint.
    if (config.searcher.name == experiments::SearcherName::kPbt &&
        batches > trial.checkpoint_batches) {
      return Workload(trial, events::WORKLOAD_KIND_CHECKPOINT,
                      "population-based training clones the best from their round's checkpoint");
    }
    return Workload(
        trial, events::WORKLOAD_KIND_VALIDATE,
        "reached the searcher's length of " + std::to_string(trial.train_to) + " batches");
  }
  if (!killing && batches > trial.checkpoint_batches) {
    return Workload(trial, events::WORKLOAD_KIND_CHECKPOINT,
                    stop.empty() ? "the searcher's length is done" : stop);
  }
  return Workload(trial, events::WORKLOAD_KIND_EXIT,
                  stop.empty() ? "waiting for the searcher's next decision" : stop);
}

std::vector<std::string> CheckpointsToCollect(const DecisionState& state,
                                              const ExperimentRecord& experiment,
                                              std::optional<int64_t> trial_id) {
  if (!experiment.config || !experiment.config->checkpoint_storage) return {};
  const auto& storage = *experiment.config->checkpoint_storage;
  const bool smaller_is_better = experiment.config->searcher.smaller_is_better;
  struct Candidate {
    const CheckpointRecord* checkpoint;
    double metric;  // NaN: no validation at its batch count
    size_t order;   // save order within the trial
  };
  auto better = [&](const Candidate& a, const Candidate& b) {
    if (std::isnan(a.metric) != std::isnan(b.metric)) return std::isnan(b.metric);
    if (a.metric != b.metric) return smaller_is_better ? a.metric < b.metric : a.metric > b.metric;
    return a.checkpoint->uuid < b.checkpoint->uuid;
  };
  std::vector<Candidate> experiment_wide;
  std::map<int64_t, std::vector<Candidate>> by_trial;
  for (int64_t id : experiment.trial_ids) {
    const TrialRecord& trial = state.trials.at(id);
    for (size_t i = 0; i < trial.checkpoints.size(); ++i) {
      const CheckpointRecord& checkpoint = state.checkpoints.at(trial.checkpoints[i]);
      if (checkpoint.deleted) continue;
      auto metric = trial.searcher_metric.find(checkpoint.total_batches);
      Candidate candidate{&checkpoint,
                          metric == trial.searcher_metric.end() ? std::nan("") : metric->second, i};
      experiment_wide.push_back(candidate);
      by_trial[id].push_back(candidate);
    }
  }
  std::set<std::string> keep = state.WarmStartSources();
  // A pbt clone still waiting for its source keeps every checkpoint of its parent.
  for (const auto& op : experiment.pending_ops) {
    if (op.kind != experiments::SearcherOp::Kind::kCreateTrial || op.clone_of == 0) continue;
    auto parent = experiment.trial_by_request.find(op.clone_of);
    if (parent == experiment.trial_by_request.end()) continue;
    const TrialRecord& parent_trial = state.trials.at(parent->second);
    keep.insert(parent_trial.checkpoints.begin(), parent_trial.checkpoints.end());
  }
  auto keep_best = [&](std::vector<Candidate> candidates, int count) {
    std::sort(candidates.begin(), candidates.end(), better);
    for (int i = 0; i < count && i < static_cast<int>(candidates.size()); ++i) {
      if (!std::isnan(candidates[i].metric)) keep.insert(candidates[i].checkpoint->uuid);
    }
  };
  keep_best(experiment_wide, storage.save_experiment_best);
  std::vector<std::string> collect;
  for (auto& [id, candidates] : by_trial) {
    if (trial_id && id != *trial_id) continue;
    keep_best(candidates, storage.save_trial_best);
    std::vector<Candidate> latest = candidates;
    std::sort(latest.begin(), latest.end(), [](const Candidate& a, const Candidate& b) {
      if (a.checkpoint->total_batches != b.checkpoint->total_batches) {
        return a.checkpoint->total_batches > b.checkpoint->total_batches;
      }
      return a.order > b.order;
    });
    for (int i = 0; i < storage.save_trial_latest && i < static_cast<int>(latest.size()); ++i) {
      keep.insert(latest[i].checkpoint->uuid);
    }
    for (const auto& candidate : candidates) {
      const std::string& uuid = candidate.checkpoint->uuid;
      // A model version's checkpoint stays whatever the policy says (it still ranks above), as
      // one another experiment warm-starts from does (kept from the start).
      if (!keep.count(uuid) && !state.IsCheckpointRegistered(uuid)) collect.push_back(uuid);
    }
  }
  return collect;
}

events::Envelope CollectionEvent(const ExperimentRecord& experiment, std::vector<std::string> uuids,
                                 const std::string& when) {
  const auto& storage = *experiment.config->checkpoint_storage;
  events::Envelope event;
  auto* deleted = event.mutable_checkpoints_deleted();
  deleted->set_experiment_id(experiment.experiment_id);
  for (auto& uuid : uuids) deleted->add_uuids(std::move(uuid));
  deleted->set_reason(when + ": keeping the " + std::to_string(storage.save_trial_latest) +
                      " latest and " + std::to_string(storage.save_trial_best) +
                      " best of each trial and the " +
                      std::to_string(storage.save_experiment_best) + " best of the experiment");
  return event;
}

std::vector<events::Envelope> ReactToExperiments(const DecisionState& state) {
  Round round(state);
  for (int64_t experiment_id : state.dirty_experiments) {
    const ExperimentRecord* experiment = state.FindExperiment(experiment_id);
    if (experiment == nullptr) continue;
    if (experiment->config == nullptr) {
      round.Unreadable(*experiment);
    } else {
      round.React(*experiment);
    }
  }
  return round.Take();
}

}  // namespace cairn::commands
