// Every field of the decision state survives a decision snapshot (commands/decision_snapshot.h):
// a state in which every field of every stored record holds a value other than its default is
// encoded, decoded and compared with the original field by field. A field the codec drops comes
// back at its default and fails its comparison; a field added to a record fails to compile here
// (FieldCount, next to each record's helpers) until the test fills and compares it, as
// commands/decision_snapshot.cpp fails to compile until the codec stores it and its count says so.
//
// Compared field by field, not through Encode: re-encoding a decoded state cannot see a field the
// codec drops, which both encodings then lack. What decoding derives rather than reads (each
// job's tasks, a task's job, the queues, the live jobs' ranks, the name indexes, an experiment's
// parsed configuration and searcher) is compared in its derived form.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/field_count.h"
#include "commands/decision_snapshot.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"
#include "events.pb.h"

namespace cairn::commands {
namespace {

using experiments::SearcherOp;

// In a comparison helper with records `expected` and `actual`, a bool `filled` and a
// default-made record `unfilled`: the field is the same after the round trip and, when `filled`
// (the test set every field of `expected`), not left at its default, where a codec that dropped
// it would give it back the same.
#define CAIRN_EXPECT_SAME_FIELD(field)                                               \
  do {                                                                               \
    EXPECT_EQ(actual.field, expected.field) << #field " changed in the round trip";  \
    if (filled) {                                                                    \
      EXPECT_NE(expected.field, unfilled.field) << #field " is left at its default"; \
    }                                                                                \
  } while (false)

// The same for a protobuf message field, compared by its bytes.
#define CAIRN_EXPECT_SAME_MESSAGE(field)                                                \
  do {                                                                                  \
    EXPECT_EQ(actual.field.SerializeAsString(), expected.field.SerializeAsString())     \
        << #field " changed in the round trip";                                         \
    if (filled) {                                                                       \
      EXPECT_NE(expected.field.SerializeAsString(), unfilled.field.SerializeAsString()) \
          << #field " is left at its default";                                          \
    }                                                                                   \
  } while (false)

// Each record's fields are counted where it is filled and compared: a field added to a record
// stops the build here until both are updated (and commands/decision_snapshot.cpp says the same
// for the codec).
#define CAIRN_COVERS(Record, fields)              \
  static_assert(FieldCount<Record>() == (fields), \
                #Record " changed: fill and compare the new field")

// --- Tasks and jobs ----------------------------------------------------------------------------

CAIRN_COVERS(Placement, 6);

void ExpectSamePlacement(const Placement& expected, const Placement& actual, bool filled) {
  const Placement unfilled{};
  CAIRN_EXPECT_SAME_FIELD(allocation_pool);
  ASSERT_EQ(actual.parts.size(), expected.parts.size());
  for (size_t i = 0; i < expected.parts.size(); ++i) {
    EXPECT_EQ(actual.parts[i].SerializeAsString(), expected.parts[i].SerializeAsString())
        << "parts[" << i << "]";
  }
  if (filled) {
    EXPECT_FALSE(expected.parts.empty()) << "parts is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(parts_exited);
  CAIRN_EXPECT_SAME_FIELD(agent_incarnation);
  CAIRN_EXPECT_SAME_FIELD(slot_ids);
  CAIRN_EXPECT_SAME_FIELD(preemption_deadline);
}

CAIRN_COVERS(TaskRecord, 24);

// A TaskSpec's bytes as a task record holds them (packed_spec).
std::string PackedSpec(events::TaskType type, bool preemptible, const std::string& entrypoint) {
  events::TaskSpec spec;
  spec.set_task_type(type);
  spec.set_preemptible(preemptible);
  spec.add_entrypoint(entrypoint);
  spec.set_work_dir("/work/" + entrypoint);
  return spec.SerializeAsString();
}

// A running task of a gang with every field set but `job` and `change_stamp`, which the state
// sets (ByOwnId::Insert).
TaskRecord FullRunningTask() {
  TaskRecord task;
  task.task_id = "task-running";
  task.packed_spec = PackedSpec(events::TASK_TYPE_TRIAL, true, "train.py");
  task.resources.set_slots(2);
  task.resources.set_resource_pool("gpu-pool");
  task.resources.set_priority(17);
  task.resources.set_gang_size(2);
  task.resources.set_gang_slots(4);
  task.state = TaskState::kRunning;
  task.task_type = events::TASK_TYPE_TRIAL;  // the spec's, as ApplyTaskSubmitted keeps them
  task.submitted_offset = 101;
  task.submitted_time = 102;
  task.allocation_count = 3;
  task.allocation_id = "task-running.3";
  Placement& placement = task.place();
  placement.allocation_pool = "gpu-pool";
  for (const char* agent : {"agent-1", "agent-2"}) {
    events::AllocationPart& part = placement.parts.emplace_back();
    part.set_agent_id(agent);
    part.set_agent_incarnation(std::string("incarnation-of-") + agent);
    part.add_slot_ids(0);
    part.add_slot_ids(1);
  }
  placement.parts_exited = {"agent-2"};
  placement.agent_incarnation = "incarnation-of-agent-1";
  placement.slot_ids = {0, 1};
  placement.preemption_deadline = 103;
  task.agent_id = "agent-1";
  task.more_agents = {"agent-2"};
  task.started = true;
  task.ready = true;
  task.held = true;
  task.kill_requested = true;
  task.kill_by_user = true;
  task.backfilled = true;
  task.preempting = true;
  task.spec_preemptible = true;
  task.last_reason = "preempted for a higher priority";
  task.trial_id = 21;
  return task;
}

// An exited task, as ForgetLiveDetails leaves it: no spec but its kind and preemptibility (which
// the snapshot then stores in a spec of their own), and no placement.
TaskRecord ExitedTask() {
  TaskRecord task;
  task.task_id = "task-exited";
  task.resources.set_slots(1);
  task.state = TaskState::kExited;
  task.task_type = events::TASK_TYPE_COMMAND;
  task.spec_preemptible = true;
  task.submitted_offset = 104;
  task.submitted_time = 105;
  task.allocation_count = 1;
  task.allocation_id = "task-exited.1";
  task.agent_id = "agent-3";
  task.more_agents = {"agent-4"};
  task.started = true;
  task.last_reason = "exited with code 0";
  return task;
}

// A queued task, which decoding puts in its pool's queue.
TaskRecord QueuedTask() {
  TaskRecord task;
  task.task_id = "task-queued";
  task.packed_spec = PackedSpec(events::TASK_TYPE_COMMAND, false, "serve.py");
  task.task_type = events::TASK_TYPE_COMMAND;
  task.resources.set_slots(1);
  task.resources.set_priority(17);
  task.submitted_offset = 106;
  task.submitted_time = 107;
  return task;
}

void ExpectSameTask(const TaskRecord& expected, const TaskRecord& actual, bool filled) {
  SCOPED_TRACE("task " + expected.task_id);
  const TaskRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(task_id);
  // job: derived (the job that lists the task); ExpectSameTasksAndJobs checks the link.
  ASSERT_NE(actual.job, nullptr);
  EXPECT_EQ(actual.job_id(), expected.job_id());
  CAIRN_EXPECT_SAME_FIELD(packed_spec);
  CAIRN_EXPECT_SAME_MESSAGE(resources);
  CAIRN_EXPECT_SAME_FIELD(state);
  CAIRN_EXPECT_SAME_FIELD(task_type);
  CAIRN_EXPECT_SAME_FIELD(submitted_offset);
  CAIRN_EXPECT_SAME_FIELD(submitted_time);
  CAIRN_EXPECT_SAME_FIELD(allocation_count);
  // change_stamp: not part of the state (ByOwnId's change tracking, zeroed when a record is
  // inserted, so a decoded state's say nothing about the original's).
  CAIRN_EXPECT_SAME_FIELD(allocation_id);
  ASSERT_EQ(actual.placement != nullptr, expected.placement != nullptr);
  if (expected.placement) ExpectSamePlacement(*expected.placement, *actual.placement, filled);
  if (filled) {
    EXPECT_NE(expected.placement, nullptr) << "placement is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(agent_id);
  CAIRN_EXPECT_SAME_FIELD(more_agents);
  CAIRN_EXPECT_SAME_FIELD(started);
  CAIRN_EXPECT_SAME_FIELD(ready);
  CAIRN_EXPECT_SAME_FIELD(held);
  CAIRN_EXPECT_SAME_FIELD(kill_requested);
  CAIRN_EXPECT_SAME_FIELD(kill_by_user);
  CAIRN_EXPECT_SAME_FIELD(backfilled);
  CAIRN_EXPECT_SAME_FIELD(preempting);
  CAIRN_EXPECT_SAME_FIELD(spec_preemptible);
  CAIRN_EXPECT_SAME_FIELD(last_reason);
  CAIRN_EXPECT_SAME_FIELD(trial_id);
}

CAIRN_COVERS(JobRecord, 15);

// The experiment's job, every field set but `tasks` and `live_tasks` (which adding its tasks
// sets) and `change_stamp`.
JobRecord FullJob() {
  JobRecord job;
  job.job_id = "job-experiment-3";
  job.resource_pool = "gpu-pool";
  job.user = "ada";
  job.weight = 2.5;
  job.queue_position = 108;
  job.submitted_offset = 109;
  job.submitted_time = 110;
  job.type = events::TASK_TYPE_TRIAL;
  job.priority = 17;
  job.max_slots = 8;
  job.workspace_id = 9;
  job.open = true;
  return job;
}

std::vector<std::string> TaskIdsOf(const JobRecord& job) {
  std::vector<std::string> ids;
  for (const TaskRecord* task : job.tasks) ids.push_back(task->task_id);
  return ids;
}

void ExpectSameJob(const JobRecord& expected, const JobRecord& actual, bool filled) {
  SCOPED_TRACE("job " + expected.job_id);
  const JobRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(job_id);
  CAIRN_EXPECT_SAME_FIELD(resource_pool);
  CAIRN_EXPECT_SAME_FIELD(user);
  // tasks: derived (the snapshot's job names its tasks by index): the same tasks in the same
  // order; ExpectSameTasksAndJobs checks that they are the decoded state's records.
  EXPECT_EQ(TaskIdsOf(actual), TaskIdsOf(expected));
  if (filled) {
    EXPECT_FALSE(expected.tasks.empty()) << "tasks is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(weight);
  CAIRN_EXPECT_SAME_FIELD(queue_position);
  CAIRN_EXPECT_SAME_FIELD(submitted_offset);
  CAIRN_EXPECT_SAME_FIELD(submitted_time);
  CAIRN_EXPECT_SAME_FIELD(type);
  CAIRN_EXPECT_SAME_FIELD(priority);
  CAIRN_EXPECT_SAME_FIELD(max_slots);
  CAIRN_EXPECT_SAME_FIELD(workspace_id);
  CAIRN_EXPECT_SAME_FIELD(live_tasks);  // derived: its tasks not exited
  CAIRN_EXPECT_SAME_FIELD(open);
  // change_stamp: not part of the state (as a task's).
}

// --- Agents ------------------------------------------------------------------------------------

CAIRN_COVERS(AgentRecord, 14);

AgentRecord FullAgent() {
  AgentRecord agent;
  agent.agent_id = "agent-1";
  agent.incarnation = "incarnation-of-agent-1";
  agent.resource_pool = "gpu-pool";
  agent.slot_count = 4;
  agent.connected = true;
  agent.enabled = false;
  agent.draining = true;
  agent.used_slots = {0, 1};
  agent.zero_slot_containers = 2;
  agent.allocations = {"task-running.3"};
  agent.registered_offset = 111;
  agent.address = "10.0.0.1:8080";
  agent.disabled_slots = {3};
  agent.runs_containers = true;
  return agent;
}

void ExpectSameAgent(const AgentRecord& expected, const AgentRecord& actual, bool filled) {
  SCOPED_TRACE("agent " + expected.agent_id);
  const AgentRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(agent_id);
  CAIRN_EXPECT_SAME_FIELD(incarnation);
  CAIRN_EXPECT_SAME_FIELD(resource_pool);
  CAIRN_EXPECT_SAME_FIELD(slot_count);
  CAIRN_EXPECT_SAME_FIELD(connected);
  CAIRN_EXPECT_SAME_FIELD(enabled);
  CAIRN_EXPECT_SAME_FIELD(draining);
  CAIRN_EXPECT_SAME_FIELD(used_slots);
  CAIRN_EXPECT_SAME_FIELD(zero_slot_containers);
  CAIRN_EXPECT_SAME_FIELD(allocations);
  CAIRN_EXPECT_SAME_FIELD(registered_offset);
  CAIRN_EXPECT_SAME_FIELD(address);
  CAIRN_EXPECT_SAME_FIELD(disabled_slots);
  CAIRN_EXPECT_SAME_FIELD(runs_containers);
}

// --- Experiments, trials and checkpoints -------------------------------------------------------

CAIRN_COVERS(SearcherInput, 4);

void ExpectSameSearcherInput(const SearcherInput& expected, const SearcherInput& actual,
                             bool filled) {
  const SearcherInput unfilled{};
  CAIRN_EXPECT_SAME_FIELD(kind);
  CAIRN_EXPECT_SAME_FIELD(request_id);
  CAIRN_EXPECT_SAME_FIELD(batches);
  CAIRN_EXPECT_SAME_FIELD(metric);
}

CAIRN_COVERS(SearcherOp, 7);

void ExpectSameSearcherOp(const SearcherOp& expected, const SearcherOp& actual, bool filled) {
  const SearcherOp unfilled{};
  CAIRN_EXPECT_SAME_FIELD(kind);
  CAIRN_EXPECT_SAME_FIELD(request_id);
  CAIRN_EXPECT_SAME_FIELD(hparams);
  CAIRN_EXPECT_SAME_FIELD(length_batches);
  CAIRN_EXPECT_SAME_FIELD(reason);
  CAIRN_EXPECT_SAME_FIELD(clone_of);
  CAIRN_EXPECT_SAME_FIELD(clone_at_batches);
}

// A random search, whose trials' hyperparameters come from the seed: a searcher rebuilt with
// another seed, or fed other calls, decides differently.
constexpr const char* kRandomSearch = R"(
name: coverage
entrypoint: model_def:Trial
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
  layers: {type: int, minval: 1, maxval: 8}
searcher:
  name: random
  metric: loss
  max_length: {batches: 50}
  max_trials: 8
  max_concurrent_trials: 2
)";

CAIRN_COVERS(ExperimentRecord, 22);

// An experiment with every field set: its searcher made as ExperimentCreated makes it (from the
// configuration's JSON and the seed) and given calls as the experiment's trials report.
ExperimentRecord FullExperiment() {
  ExperimentRecord experiment;
  experiment.experiment_id = 3;
  experiment.name = "coverage";
  experiment.job_id = "job-experiment-3";
  experiment.owner = "ada";
  experiment.workspace_id = 9;
  experiment.project_id = 10;
  experiment.context_digest = "sha256:context";
  experiment.warm_start_checkpoint = "source-checkpoint";
  experiment.created_unix_micros = 1700000000000042;
  experiment.state = events::EXPERIMENT_STATE_ACTIVE;
  experiment.slots_per_trial = 2;
  auto parsed = experiments::ParseExperimentConfig(kRandomSearch);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return experiment;
  experiment.searcher_config_json = parsed->effective.dump();
  auto config = experiments::ParseExperimentConfig(experiment.searcher_config_json);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  if (!config.ok()) return experiment;
  experiment.config = std::make_shared<const experiments::ExperimentConfig>(std::move(*config));
  experiment.searcher_seed = 112;
  auto searcher = experiments::NewSearcher(*experiment.config, experiment.searcher_seed);
  EXPECT_TRUE(searcher.ok()) << searcher.status().ToString();
  if (!searcher.ok()) return experiment;
  experiment.searcher = std::move(*searcher);
  experiment.searcher->Start();  // trials 1 and 2, each to 50 batches
  // Trial 1 validated at its length (the search closes it and starts trial 3); trial 2 exited
  // early (trial 4 starts). Every field of each call set, also those its kind does not read.
  FeedSearcher(experiment, {SearcherInput::Kind::kValidated, 1, 50, 0.75});
  FeedSearcher(experiment, {SearcherInput::Kind::kExitedEarly, 2, 113, 0.5});
  experiment.pending_ops = {
      SearcherOp{SearcherOp::Kind::kTrainTo, 3, {{"lr", 0.01}}, 50, "trial 3 to its length", 1, 40},
      SearcherOp{SearcherOp::Kind::kCloseTrial, 4, {{"layers", 2}}, 114, "trial 4 is done", 2, 41}};
  experiment.trial_by_request = {{1, 21}, {2, 22}};
  experiment.trial_ids = {21, 22};
  experiment.config_error = "an error a newer master's configuration gave";
  experiment.archived = true;
  experiment.deleted = true;
  return experiment;
}

std::vector<std::string> OpsText(const std::vector<SearcherOp>& ops) {
  std::vector<std::string> text;
  for (const auto& op : ops) text.push_back(experiments::ToString(op));
  return text;
}

// Advances both searchers: call last.
void ExpectSameExperiment(const ExperimentRecord& expected, const ExperimentRecord& actual,
                          bool filled) {
  SCOPED_TRACE("experiment " + std::to_string(expected.experiment_id));
  const ExperimentRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(experiment_id);
  CAIRN_EXPECT_SAME_FIELD(name);
  CAIRN_EXPECT_SAME_FIELD(job_id);
  CAIRN_EXPECT_SAME_FIELD(owner);
  CAIRN_EXPECT_SAME_FIELD(workspace_id);
  CAIRN_EXPECT_SAME_FIELD(project_id);
  CAIRN_EXPECT_SAME_FIELD(context_digest);
  CAIRN_EXPECT_SAME_FIELD(warm_start_checkpoint);
  CAIRN_EXPECT_SAME_FIELD(created_unix_micros);
  CAIRN_EXPECT_SAME_FIELD(state);
  CAIRN_EXPECT_SAME_FIELD(slots_per_trial);
  CAIRN_EXPECT_SAME_FIELD(searcher_config_json);
  CAIRN_EXPECT_SAME_FIELD(searcher_seed);
  ASSERT_EQ(actual.searcher_inputs.size(), expected.searcher_inputs.size());
  for (size_t i = 0; i < expected.searcher_inputs.size(); ++i) {
    SCOPED_TRACE("searcher_inputs[" + std::to_string(i) + "]");
    ExpectSameSearcherInput(expected.searcher_inputs[i], actual.searcher_inputs[i], filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.searcher_inputs.empty()) << "searcher_inputs is left empty";
  }
  ASSERT_EQ(actual.pending_ops.size(), expected.pending_ops.size());
  for (size_t i = 0; i < expected.pending_ops.size(); ++i) {
    SCOPED_TRACE("pending_ops[" + std::to_string(i) + "]");
    ExpectSameSearcherOp(expected.pending_ops[i], actual.pending_ops[i], filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.pending_ops.empty()) << "pending_ops is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(trial_by_request);
  CAIRN_EXPECT_SAME_FIELD(trial_ids);
  CAIRN_EXPECT_SAME_FIELD(config_error);
  CAIRN_EXPECT_SAME_FIELD(archived);
  CAIRN_EXPECT_SAME_FIELD(deleted);
  // config: derived, parsed from searcher_config_json.
  ASSERT_EQ(actual.config != nullptr, expected.config != nullptr);
  if (filled) {
    ASSERT_NE(expected.config, nullptr) << "config is left empty";
  }
  if (expected.config) {
    EXPECT_EQ(actual.config->effective, expected.config->effective);
  }
  // searcher: derived, made from the configuration and seed and given the recorded calls. Where
  // they are right it has come as far, and decides the next call as the original does (a random
  // search draws the next trial's hyperparameters from where the seed's sequence stands).
  ASSERT_EQ(actual.searcher != nullptr, expected.searcher != nullptr);
  if (filled) {
    ASSERT_NE(expected.searcher, nullptr) << "searcher is left empty";
  }
  if (expected.searcher) {
    EXPECT_EQ(actual.searcher->Progress(), expected.searcher->Progress());
    EXPECT_EQ(OpsText(actual.searcher->OnValidation(3, 50, 0.25)),
              OpsText(expected.searcher->OnValidation(3, 50, 0.25)));
  }
}

CAIRN_COVERS(TrialRecord, 34);

TrialRecord FullTrial() {
  TrialRecord trial;
  trial.trial_id = 21;
  trial.experiment_id = 3;
  trial.request_id = 1;
  trial.hparams_json = R"({"layers":3,"lr":0.001})";
  trial.warm_start_checkpoint = "checkpoint-of-its-parent";
  trial.cloned_from_trial = 20;
  trial.state = events::EXPERIMENT_STATE_COMPLETED;
  trial.train_to = 50;
  trial.closed = true;
  trial.validated_at = 115;
  trial.searcher_metric = {{50, 0.75}, {115, 0.5}};
  trial.latest_checkpoint = "checkpoint-latest";
  trial.checkpoint_batches = 116;
  trial.checkpoints = {"checkpoint-first", "checkpoint-latest"};
  trial.restarts = 2;
  trial.runs = 3;
  trial.task_id = "task-running";
  trial.last_exit = TrialRunExit::kKilled;
  trial.last_exit_reason = "killed by a user";
  trial.workload_allocation = "task-running.3";
  trial.last_sequence = 4;
  trial.awaiting_answer = true;
  trial.last_answer.set_experiment_id(3);
  trial.last_answer.set_trial_id(21);
  trial.last_answer.set_kind(events::WORKLOAD_KIND_TRAIN);
  trial.last_answer.set_batches(25);
  trial.batches = 117;
  trial.last_validation_batches = 118;
  trial.kill_requested = true;
  trial.last_reports = {{"metrics/validation", "key-1"}, {"progress", "0.5"}};
  trial.preemption_acked = "task-running.3";
  trial.early_exit = "EXITED_REASON_INVALID_HP";
  trial.log_policy_matched = "CUDA OOM";
  trial.dont_retry_task_id = "task-running";
  trial.excluded_agents = {"agent-flaky"};
  trial.log_policy_run = "task-running";
  trial.matched_log_policies = {"name:CUDA OOM"};
  return trial;
}

void ExpectSameTrial(const TrialRecord& expected, const TrialRecord& actual, bool filled) {
  SCOPED_TRACE("trial " + std::to_string(expected.trial_id));
  const TrialRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(trial_id);
  CAIRN_EXPECT_SAME_FIELD(experiment_id);
  CAIRN_EXPECT_SAME_FIELD(request_id);
  CAIRN_EXPECT_SAME_FIELD(hparams_json);
  CAIRN_EXPECT_SAME_FIELD(warm_start_checkpoint);
  CAIRN_EXPECT_SAME_FIELD(cloned_from_trial);
  CAIRN_EXPECT_SAME_FIELD(log_policy_matched);
  CAIRN_EXPECT_SAME_FIELD(dont_retry_task_id);
  CAIRN_EXPECT_SAME_FIELD(excluded_agents);
  CAIRN_EXPECT_SAME_FIELD(log_policy_run);
  CAIRN_EXPECT_SAME_FIELD(matched_log_policies);
  CAIRN_EXPECT_SAME_FIELD(state);
  CAIRN_EXPECT_SAME_FIELD(train_to);
  CAIRN_EXPECT_SAME_FIELD(closed);
  CAIRN_EXPECT_SAME_FIELD(validated_at);
  CAIRN_EXPECT_SAME_FIELD(searcher_metric);
  CAIRN_EXPECT_SAME_FIELD(latest_checkpoint);
  CAIRN_EXPECT_SAME_FIELD(checkpoint_batches);
  CAIRN_EXPECT_SAME_FIELD(checkpoints);
  CAIRN_EXPECT_SAME_FIELD(restarts);
  CAIRN_EXPECT_SAME_FIELD(runs);
  CAIRN_EXPECT_SAME_FIELD(task_id);
  CAIRN_EXPECT_SAME_FIELD(last_exit);
  CAIRN_EXPECT_SAME_FIELD(last_exit_reason);
  CAIRN_EXPECT_SAME_FIELD(workload_allocation);
  CAIRN_EXPECT_SAME_FIELD(last_sequence);
  CAIRN_EXPECT_SAME_FIELD(awaiting_answer);
  CAIRN_EXPECT_SAME_MESSAGE(last_answer);
  CAIRN_EXPECT_SAME_FIELD(batches);
  CAIRN_EXPECT_SAME_FIELD(last_validation_batches);
  CAIRN_EXPECT_SAME_FIELD(kill_requested);
  CAIRN_EXPECT_SAME_FIELD(last_reports);
  CAIRN_EXPECT_SAME_FIELD(preemption_acked);
  CAIRN_EXPECT_SAME_FIELD(early_exit);
}

CAIRN_COVERS(CheckpointRecord, 6);

void ExpectSameCheckpoint(const CheckpointRecord& expected, const CheckpointRecord& actual,
                          bool filled) {
  SCOPED_TRACE("checkpoint " + expected.uuid);
  const CheckpointRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(uuid);
  CAIRN_EXPECT_SAME_FIELD(experiment_id);
  CAIRN_EXPECT_SAME_FIELD(trial_id);
  CAIRN_EXPECT_SAME_FIELD(total_batches);
  CAIRN_EXPECT_SAME_FIELD(size_bytes);
  CAIRN_EXPECT_SAME_FIELD(deleted);
}

// --- Allocations and idempotency ---------------------------------------------------------------

CAIRN_COVERS(DecisionState::AllocationHolding, 2);

void ExpectSameHolding(const DecisionState::AllocationHolding& expected,
                       const DecisionState::AllocationHolding& actual, bool filled) {
  const DecisionState::AllocationHolding unfilled{};
  CAIRN_EXPECT_SAME_FIELD(task_id);
  CAIRN_EXPECT_SAME_FIELD(agent_ids);
}

CAIRN_COVERS(DecisionState::IdempotentCommand, 5);

void ExpectSameIdempotentCommand(const DecisionState::IdempotentCommand& expected,
                                 const DecisionState::IdempotentCommand& actual, bool filled) {
  const DecisionState::IdempotentCommand unfilled{};
  CAIRN_EXPECT_SAME_FIELD(command);
  CAIRN_EXPECT_SAME_FIELD(actor);
  CAIRN_EXPECT_SAME_FIELD(entity_id);
  CAIRN_EXPECT_SAME_FIELD(request_fingerprint);
  CAIRN_EXPECT_SAME_FIELD(time_unix_micros);
}

// --- Identity ----------------------------------------------------------------------------------

CAIRN_COVERS(UserRecord, 7);

void ExpectSameUser(const UserRecord& expected, const UserRecord& actual, bool filled) {
  SCOPED_TRACE("user " + expected.username);
  const UserRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(id);
  CAIRN_EXPECT_SAME_FIELD(username);
  CAIRN_EXPECT_SAME_FIELD(display_name);
  CAIRN_EXPECT_SAME_FIELD(admin);
  CAIRN_EXPECT_SAME_FIELD(active);
  CAIRN_EXPECT_SAME_FIELD(password_hash);
  CAIRN_EXPECT_SAME_FIELD(agent_user);
}

CAIRN_COVERS(SessionRecord, 2);

void ExpectSameSession(const SessionRecord& expected, const SessionRecord& actual, bool filled) {
  const SessionRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(user_id);
  CAIRN_EXPECT_SAME_FIELD(expires_unix_micros);
}

CAIRN_COVERS(AccessTokenRecord, 6);

void ExpectSameAccessToken(const AccessTokenRecord& expected, const AccessTokenRecord& actual,
                           bool filled) {
  const AccessTokenRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(id);
  CAIRN_EXPECT_SAME_FIELD(user_id);
  CAIRN_EXPECT_SAME_FIELD(token_sha256);
  CAIRN_EXPECT_SAME_FIELD(expires_unix_micros);
  CAIRN_EXPECT_SAME_FIELD(description);
  CAIRN_EXPECT_SAME_FIELD(revoked);
}

CAIRN_COVERS(IdentityState, 8);

void FillIdentity(IdentityState& identity) {
  identity.users[7] = UserRecord{
      7, "ada", "Ada Lovelace", true, false, "argon2id$ada", AgentUser{1500, 1500, "ada", "lab"}};
  identity.user_ids["ada"] = 7;
  identity.sessions["token-sha256"] = SessionRecord{7, 119};
  identity.failures["bob"] = {120, 121};
  identity.last_user_id = 8;
  identity.access_tokens[3] = AccessTokenRecord{3, 7, "access-sha256", 130, "ci", true};
  identity.access_token_ids["access-sha256"] = 3;
  identity.last_access_token_id = 4;
}

void ExpectSameIdentity(const IdentityState& expected, const IdentityState& actual, bool filled) {
  const IdentityState unfilled{};
  ASSERT_EQ(actual.users.size(), expected.users.size());
  for (const auto& [id, user] : expected.users) {
    ASSERT_EQ(actual.users.count(id), 1u) << "user " << id;
    ExpectSameUser(user, actual.users.at(id), filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.users.empty()) << "users is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(user_ids);  // derived: by username
  ASSERT_EQ(actual.sessions.size(), expected.sessions.size());
  for (const auto& [token, session] : expected.sessions) {
    ASSERT_EQ(actual.sessions.count(token), 1u) << "session " << token;
    ExpectSameSession(session, actual.sessions.at(token), filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.sessions.empty()) << "sessions is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(failures);
  CAIRN_EXPECT_SAME_FIELD(last_user_id);
  ASSERT_EQ(actual.access_tokens.size(), expected.access_tokens.size());
  for (const auto& [id, token] : expected.access_tokens) {
    ASSERT_EQ(actual.access_tokens.count(id), 1u) << "access token " << id;
    ExpectSameAccessToken(token, actual.access_tokens.at(id), filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.access_tokens.empty()) << "access_tokens is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(access_token_ids);  // derived: by SHA-256
  CAIRN_EXPECT_SAME_FIELD(last_access_token_id);
}

// --- Tenancy -----------------------------------------------------------------------------------

CAIRN_COVERS(WorkspaceRecord, 10);

void ExpectSameWorkspace(const WorkspaceRecord& expected, const WorkspaceRecord& actual,
                         bool filled) {
  SCOPED_TRACE("workspace " + expected.name);
  const WorkspaceRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(id);
  CAIRN_EXPECT_SAME_FIELD(name);
  CAIRN_EXPECT_SAME_FIELD(owner_user_id);
  CAIRN_EXPECT_SAME_FIELD(archived);
  CAIRN_EXPECT_SAME_FIELD(immutable);
  CAIRN_EXPECT_SAME_FIELD(default_compute_pool);
  CAIRN_EXPECT_SAME_FIELD(default_aux_pool);
  CAIRN_EXPECT_SAME_FIELD(pinned_by);
  CAIRN_EXPECT_SAME_FIELD(agent_user);
  CAIRN_EXPECT_SAME_FIELD(checkpoint_storage_json);
}

CAIRN_COVERS(ProjectRecord, 7);
CAIRN_COVERS(GroupRecord, 3);

void ExpectSameProject(const ProjectRecord& expected, const ProjectRecord& actual, bool filled) {
  SCOPED_TRACE("project " + expected.name);
  const ProjectRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(id);
  CAIRN_EXPECT_SAME_FIELD(workspace_id);
  CAIRN_EXPECT_SAME_FIELD(name);
  CAIRN_EXPECT_SAME_FIELD(description);
  CAIRN_EXPECT_SAME_FIELD(owner_user_id);
  CAIRN_EXPECT_SAME_FIELD(archived);
  CAIRN_EXPECT_SAME_FIELD(immutable);
}

// The built-in workspace and project (TenancyState's constructor) stay; one of each is added.
void FillTenancy(TenancyState& tenancy) {
  tenancy.workspaces[9] =
      WorkspaceRecord{9,
                      "lab",
                      7,
                      true,
                      true,
                      "gpu-pool",
                      "cpu-pool",
                      std::set<int32_t>{7},
                      PartialAgentUser{1500, std::nullopt, "alice", std::nullopt},
                      R"({"type":"s3","bucket":"lab-ckpt"})"};
  tenancy.workspace_ids["lab"] = 9;
  tenancy.projects[10] = ProjectRecord{10, 9, "vision", "image models", 7, true, true};
  tenancy.roles[{7, 9}] = events::ROLE_WORKSPACE_ADMIN;
  tenancy.groups[3] = GroupRecord{3, "vision-team", {7, 8}};
  tenancy.group_roles[{3, 9}] = events::ROLE_EDITOR;
  tenancy.last_group_id = 3;
  tenancy.pool_bindings["gpu-pool"] = {9};
  tenancy.last_workspace_id = 9;
  tenancy.last_project_id = 10;
  tenancy.authz = events::AUTHZ_TYPE_BASIC;
  tenancy.config_policies[{9, "NTSC"}] = {R"({"resources":{"slots":1}})", 42, 2};
}

// TenancyState has a constructor, so FieldCount cannot count it (it is no aggregate); unpacking
// it does the same: this stops compiling when a field is added.
void ExpectSameTenancy(const TenancyState& expected, const TenancyState& actual, bool filled) {
  const TenancyState unfilled{};
  const auto& [workspaces, workspace_ids, projects, roles, groups, group_roles, pool_bindings,
               config_policies, last_workspace_id, last_project_id, last_group_id, authz] =
      expected;
  ASSERT_EQ(actual.workspaces.size(), workspaces.size());
  for (const auto& [id, workspace] : workspaces) {
    ASSERT_EQ(actual.workspaces.count(id), 1u) << "workspace " << id;
    // The built-in one (TenancyState's constructor) keeps some defaults.
    ExpectSameWorkspace(workspace, actual.workspaces.at(id),
                        filled && id != kUncategorizedWorkspace);
  }
  EXPECT_EQ(actual.workspace_ids, workspace_ids) << "workspace_ids differs";  // derived: by name
  ASSERT_EQ(actual.projects.size(), projects.size());
  for (const auto& [id, project] : projects) {
    ASSERT_EQ(actual.projects.count(id), 1u) << "project " << id;
    ExpectSameProject(project, actual.projects.at(id), filled && id != kUncategorizedProject);
  }
  EXPECT_EQ(actual.roles, roles) << "roles changed in the round trip";
  EXPECT_EQ(actual.groups, groups) << "groups changed in the round trip";
  EXPECT_EQ(actual.group_roles, group_roles) << "group_roles changed in the round trip";
  EXPECT_EQ(actual.last_group_id, last_group_id) << "last_group_id changed in the round trip";
  EXPECT_EQ(actual.pool_bindings, pool_bindings) << "pool_bindings changed in the round trip";
  EXPECT_EQ(actual.last_workspace_id, last_workspace_id)
      << "last_workspace_id changed in the round trip";
  EXPECT_EQ(actual.last_project_id, last_project_id) << "last_project_id changed in the round trip";
  EXPECT_EQ(actual.authz, authz) << "authz changed in the round trip";
  EXPECT_EQ(actual.config_policies, config_policies) << "config_policies changed in the round trip";
  if (filled) {
    EXPECT_NE(config_policies, unfilled.config_policies) << "config_policies is left empty";
    EXPECT_NE(authz, unfilled.authz) << "authz is left at its default";
    EXPECT_NE(workspaces.size(), unfilled.workspaces.size()) << "no workspace is added";
    EXPECT_NE(workspace_ids, unfilled.workspace_ids) << "workspace_ids is left at its default";
    EXPECT_NE(projects.size(), unfilled.projects.size()) << "no project is added";
    EXPECT_NE(roles, unfilled.roles) << "roles is left at its default";
    EXPECT_NE(groups, unfilled.groups) << "groups is left empty";
    EXPECT_NE(group_roles, unfilled.group_roles) << "group_roles is left empty";
    EXPECT_NE(last_group_id, unfilled.last_group_id) << "last_group_id is left at its default";
    EXPECT_NE(pool_bindings, unfilled.pool_bindings) << "pool_bindings is left at its default";
    EXPECT_NE(last_workspace_id, unfilled.last_workspace_id) << "last_workspace_id is left";
    EXPECT_NE(last_project_id, unfilled.last_project_id) << "last_project_id is left";
  }
}

// --- Model registry ----------------------------------------------------------------------------

CAIRN_COVERS(ModelVersionRecord, 3);

void ExpectSameModelVersion(const ModelVersionRecord& expected, const ModelVersionRecord& actual,
                            bool filled) {
  const ModelVersionRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(version);
  CAIRN_EXPECT_SAME_FIELD(checkpoint_uuid);
  CAIRN_EXPECT_SAME_FIELD(owner);
}

CAIRN_COVERS(ModelRecord, 7);

void ExpectSameModel(const ModelRecord& expected, const ModelRecord& actual, bool filled) {
  SCOPED_TRACE("model " + expected.name);
  const ModelRecord unfilled{};
  CAIRN_EXPECT_SAME_FIELD(model_id);
  CAIRN_EXPECT_SAME_FIELD(name);
  CAIRN_EXPECT_SAME_FIELD(workspace_id);
  CAIRN_EXPECT_SAME_FIELD(owner);
  CAIRN_EXPECT_SAME_FIELD(archived);
  CAIRN_EXPECT_SAME_FIELD(last_version);
  ASSERT_EQ(actual.versions.size(), expected.versions.size());
  for (const auto& [number, version] : expected.versions) {
    SCOPED_TRACE("version " + std::to_string(number));
    ASSERT_EQ(actual.versions.count(number), 1u);
    ExpectSameModelVersion(version, actual.versions.at(number), filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.versions.empty()) << "versions is left empty";
  }
}

CAIRN_COVERS(RegistryState, 5);

void FillRegistry(RegistryState& registry) {
  ModelRecord& model = registry.models[4];
  model = ModelRecord{4, "resnet", 9, "ada", true, 2, {}};
  model.versions[2] = ModelVersionRecord{2, "checkpoint-latest", "ada"};
  registry.model_ids["resnet"] = 4;
  registry.last_model_id = 4;
  registry.last_version_id = 12;
  registry.registered_checkpoints["checkpoint-latest"] = 1;
}

void ExpectSameRegistry(const RegistryState& expected, const RegistryState& actual, bool filled) {
  const RegistryState unfilled{};
  ASSERT_EQ(actual.models.size(), expected.models.size());
  for (const auto& [id, model] : expected.models) {
    ASSERT_EQ(actual.models.count(id), 1u) << "model " << id;
    ExpectSameModel(model, actual.models.at(id), filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.models.empty()) << "models is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(model_ids);  // derived: by name
  CAIRN_EXPECT_SAME_FIELD(last_model_id);
  CAIRN_EXPECT_SAME_FIELD(last_version_id);
  CAIRN_EXPECT_SAME_FIELD(registered_checkpoints);
}

// --- Webhooks ----------------------------------------------------------------------------------

CAIRN_COVERS(PendingWebhookDelivery, 2);
CAIRN_COVERS(WebhookState, 4);

void FillWebhooks(WebhookState& webhooks) {
  events::WebhookCreated webhook;
  webhook.set_webhook_id(6);
  webhook.set_name("slack-ops");
  webhook.set_url("https://hooks.example/T0/B0/secret");
  webhook.set_type(events::WEBHOOK_TYPE_SLACK);
  webhook.set_mode(events::WEBHOOK_MODE_SPECIFIC);
  webhook.set_workspace_id(9);
  auto* trigger = webhook.add_triggers();
  trigger->set_trigger_id(11);
  trigger->set_type(events::TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE);
  trigger->set_condition_json(R"({"state":"COMPLETED"})");
  webhooks.webhooks[6] = webhook;
  webhooks.last_webhook_id = 7;
  webhooks.last_trigger_id = 12;
  webhooks.pending[{1200, 11}] = PendingWebhookDelivery{6, R"({"event_id":"e"})"};
}

void ExpectSameWebhooks(const WebhookState& expected, const WebhookState& actual, bool filled) {
  const WebhookState unfilled{};
  ASSERT_EQ(actual.webhooks.size(), expected.webhooks.size());
  for (const auto& [id, webhook] : expected.webhooks) {
    ASSERT_EQ(actual.webhooks.count(id), 1u) << "webhook " << id;
    EXPECT_EQ(actual.webhooks.at(id).SerializeAsString(), webhook.SerializeAsString());
  }
  if (filled) {
    EXPECT_FALSE(expected.webhooks.empty()) << "webhooks is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(last_webhook_id);
  CAIRN_EXPECT_SAME_FIELD(last_trigger_id);
  ASSERT_EQ(actual.pending.size(), expected.pending.size());
  for (const auto& [key, delivery] : expected.pending) {
    ASSERT_EQ(actual.pending.count(key), 1u) << "delivery " << key.first << "/" << key.second;
    const PendingWebhookDelivery& got = actual.pending.at(key);
    const PendingWebhookDelivery unfilled_delivery{};
    EXPECT_EQ(got.webhook_id, delivery.webhook_id);
    EXPECT_EQ(got.body_json, delivery.body_json);
    if (filled) {
      EXPECT_NE(delivery.webhook_id, unfilled_delivery.webhook_id);
      EXPECT_NE(delivery.body_json, unfilled_delivery.body_json);
    }
  }
  if (filled) {
    EXPECT_FALSE(expected.pending.empty()) << "pending is left empty";
  }
}

// --- OpenPAI jobs ------------------------------------------------------------------------------

CAIRN_COVERS(PaiMember, 6);

void ExpectSamePaiMember(const PaiMember& expected, const PaiMember& actual, bool filled) {
  SCOPED_TRACE("member " + expected.task_id);
  const PaiMember unfilled{};
  CAIRN_EXPECT_SAME_FIELD(task_id);
  CAIRN_EXPECT_SAME_FIELD(role);
  CAIRN_EXPECT_SAME_FIELD(index);
  CAIRN_EXPECT_SAME_FIELD(agent_id);
  ASSERT_EQ(actual.ports.size(), expected.ports.size());
  for (size_t i = 0; i < expected.ports.size(); ++i) {
    EXPECT_EQ(actual.ports[i].SerializeAsString(), expected.ports[i].SerializeAsString())
        << "ports[" << i << "]";
  }
  if (filled) {
    EXPECT_FALSE(expected.ports.empty()) << "ports is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(exited);
}

CAIRN_COVERS(PaiJobRecord, 12);

events::PaiJobSubmitted PaiSubmission(const std::string& job_id, const std::string& name) {
  events::PaiJobSubmitted submitted;
  submitted.set_job_id(job_id);
  submitted.set_job_name(name);
  submitted.set_username("ada");
  submitted.set_resource_pool("gpu-pool");
  auto* role = submitted.add_task_roles();
  role->set_name("worker");
  role->set_task_number(4);
  return submitted;
}

// An OpenPAI job whose second attempt failed, every field set.
PaiJobRecord FullEndedPaiJob() {
  PaiJobRecord job;
  job.submitted = PaiSubmission("pai-1", "train");
  job.attempt = 2;
  PaiMember& member = job.members.emplace_back();
  member.task_id = "pai-1-worker-3";
  member.role = 1;
  member.index = 3;
  member.agent_id = "agent-1";
  member.ports.emplace_back().set_label("http");
  member.ports.back().add_ports(8080);
  member.exited = true;
  job.completed = 1;
  job.outcome = "FAILED";
  job.outcome_reason = "task worker[3] failed";
  job.trigger_role = "worker";
  job.trigger_index = 3;
  job.trigger_exit_code = 137;
  job.stop_requested = true;
  job.final_state = "FAILED";
  job.retries = 1;
  return job;
}

// An OpenPAI job still running: decoding maps its members' tasks to it (pai_task_to_job).
PaiJobRecord LivePaiJob() {
  PaiJobRecord job;
  job.submitted = PaiSubmission("pai-2", "serve");
  job.members.emplace_back().task_id = "pai-2-worker-0";
  return job;
}

void ExpectSamePaiJob(const PaiJobRecord& expected, const PaiJobRecord& actual, bool filled) {
  SCOPED_TRACE("OpenPAI job " + expected.submitted.job_id());
  const PaiJobRecord unfilled{};
  CAIRN_EXPECT_SAME_MESSAGE(submitted);
  CAIRN_EXPECT_SAME_FIELD(attempt);
  ASSERT_EQ(actual.members.size(), expected.members.size());
  for (size_t i = 0; i < expected.members.size(); ++i) {
    ExpectSamePaiMember(expected.members[i], actual.members[i], filled);
  }
  if (filled) {
    EXPECT_FALSE(expected.members.empty()) << "members is left empty";
  }
  CAIRN_EXPECT_SAME_FIELD(completed);
  CAIRN_EXPECT_SAME_FIELD(outcome);
  CAIRN_EXPECT_SAME_FIELD(outcome_reason);
  CAIRN_EXPECT_SAME_FIELD(trigger_role);
  CAIRN_EXPECT_SAME_FIELD(trigger_index);
  CAIRN_EXPECT_SAME_FIELD(trigger_exit_code);
  CAIRN_EXPECT_SAME_FIELD(stop_requested);
  CAIRN_EXPECT_SAME_FIELD(final_state);
  CAIRN_EXPECT_SAME_FIELD(retries);
}

// --- The whole state ---------------------------------------------------------------------------

CAIRN_COVERS(DecisionState, 28);

// A state in which every field of every stored record is set (and one of each kind of task: a
// running one, an exited one, a queued one), its derived fields made as Apply makes them.
std::unique_ptr<DecisionState> FullState() {
  auto state = std::make_unique<DecisionState>();
  state->next_offset = 1234;
  state->writer_epoch = 5;
  JobRecord& job = *state->jobs.Insert(FullJob()).first;
  std::vector<TaskRecord> tasks;  // in submission order
  tasks.push_back(FullRunningTask());
  tasks.push_back(ExitedTask());
  tasks.push_back(QueuedTask());
  for (TaskRecord& task : tasks) {
    task.job = &job;
    const TaskRecord& stored = *state->tasks.Insert(std::move(task)).first;
    job.tasks.push_back(&stored);
    if (stored.state != TaskState::kExited) job.live_tasks++;
  }
  state->live_jobs.Add(job.resource_pool, job.priority, job.queue_position, job.job_id);
  state->Enqueue(state->tasks.at("task-queued"));
  state->agents["agent-1"] = FullAgent();
  state->pools_config = DefaultPoolsConfig();
  state->pools_config.set_source("coverage");
  state->pools_config.set_preemption_grace_seconds(122);
  state->other_allocations["task-running.2"] = {"task-running", {"agent-1", "agent-2"}};
  state->idempotency["key-1"] = {"SubmitTask", "user:ada", "task-running", "fingerprint", 123};
  state->idempotency_by_time.emplace(123, "key-1");
  state->experiments[3] = FullExperiment();
  state->trials[21] = FullTrial();
  state->checkpoints["checkpoint-latest"] =
      CheckpointRecord{"checkpoint-latest", 3, 21, 116, 4096, true};
  state->deleted_checkpoints = {"checkpoint-first"};
  state->tensorboard_deletions = {{3, 1700000000000000}};
  events::TemplateSaved saved;
  saved.set_name("template-1");
  saved.set_config_yaml("max_restarts: 2\n");
  saved.set_workspace_id(9);
  state->templates["template-1"] = saved;
  FillIdentity(state->identity);
  FillTenancy(state->tenancy);
  FillRegistry(state->registry);
  FillWebhooks(state->webhooks);
  state->last_experiment_id = 3;
  state->last_trial_id = 22;
  state->dirty_experiments = {3};
  std::vector<PaiJobRecord> pai_jobs;
  pai_jobs.push_back(FullEndedPaiJob());
  pai_jobs.push_back(LivePaiJob());
  for (PaiJobRecord& pai_job : pai_jobs) {
    const std::string id = pai_job.submitted.job_id();
    state->pai_job_by_name["ada/" + pai_job.submitted.job_name()] = id;
    if (!pai_job.ended()) {
      for (const auto& member : pai_job.members) state->pai_task_to_job[member.task_id] = id;
    }
    state->pai_jobs[id] = std::move(pai_job);
  }
  state->dirty_pai_jobs = {"pai-1"};
  return state;
}

// The queue of every pool: each task's key and id, slot tasks apart from zero-slot ones.
std::map<std::string, std::vector<std::string>> QueuesOf(const DecisionState& state) {
  std::map<std::string, std::vector<std::string>> queues;
  for (const auto& [pool, queue] : state.queues) {
    for (const auto* tasks : {&queue.slot_tasks, &queue.zero_slot_tasks}) {
      for (const auto& [key, task] : *tasks) {
        const auto& [priority, position, offset] = key;
        queues[pool].push_back((tasks == &queue.slot_tasks ? "slots " : "zero-slot ") +
                               std::to_string(priority) + "/" + std::to_string(position) + "/" +
                               std::to_string(offset) + " " + task->task_id);
      }
    }
  }
  return queues;
}

// The live jobs of each pool the jobs name, in queue order by priority.
std::map<std::string, std::vector<std::string>> LiveJobsOf(const DecisionState& state) {
  std::map<std::string, std::vector<std::string>> live;
  for (const auto& [id, job] : state.jobs) {
    live[job.resource_pool] =
        state.live_jobs.FirstAhead(job.resource_pool, true, std::numeric_limits<int32_t>::max(),
                                   std::numeric_limits<int64_t>::max(), state.jobs.size());
  }
  return live;
}

// The tasks and jobs, and that each decoded job lists the decoded state's own task records, each
// of which points back at its job.
void ExpectSameTasksAndJobs(const DecisionState& expected, const DecisionState& actual) {
  ASSERT_EQ(actual.tasks.size(), expected.tasks.size());
  for (const auto& [id, task] : expected.tasks) {
    ASSERT_EQ(actual.tasks.count(id), 1u) << "task " << id;
    ExpectSameTask(task, actual.tasks.at(id), id == "task-running");
  }
  ASSERT_EQ(actual.jobs.size(), expected.jobs.size());
  for (const auto& [id, job] : expected.jobs) {
    ASSERT_EQ(actual.jobs.count(id), 1u) << "job " << id;
    const JobRecord& decoded = actual.jobs.at(id);
    ExpectSameJob(job, decoded, true);
    for (const TaskRecord* task : decoded.tasks) {
      EXPECT_EQ(task, &actual.tasks.at(task->task_id)) << task->task_id;
      EXPECT_EQ(task->job, &decoded) << task->task_id;
    }
  }
}

TEST(SnapshotCoverageTest, EveryFieldOfEveryRecordSurvivesARoundTrip) {
  const std::unique_ptr<DecisionState> original = FullState();
  const DecisionState& expected = *original;
  const LogAnchor anchor{"event-first", "event-last"};
  auto decoded = DecodeDecisionState(EncodeDecisionState(expected, anchor));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)->anchor.first_event_id, anchor.first_event_id);
  EXPECT_EQ((*decoded)->anchor.last_event_id, anchor.last_event_id);
  const DecisionState& actual = (*decoded)->state;
  const bool filled = true;
  const DecisionState unfilled{};

  CAIRN_EXPECT_SAME_FIELD(next_offset);
  CAIRN_EXPECT_SAME_FIELD(writer_epoch);
  ExpectSameTasksAndJobs(expected, actual);  // tasks, jobs
  ASSERT_EQ(actual.agents.size(), expected.agents.size());
  for (const auto& [id, agent] : expected.agents) {
    ASSERT_EQ(actual.agents.count(id), 1u) << "agent " << id;
    ExpectSameAgent(agent, actual.agents.at(id), filled);
  }
  EXPECT_FALSE(expected.agents.empty());
  CAIRN_EXPECT_SAME_MESSAGE(pools_config);
  ASSERT_EQ(actual.other_allocations.size(), expected.other_allocations.size());
  for (const auto& [id, holding] : expected.other_allocations) {
    ASSERT_EQ(actual.other_allocations.count(id), 1u) << "allocation " << id;
    ExpectSameHolding(holding, actual.other_allocations.at(id), filled);
  }
  EXPECT_FALSE(expected.other_allocations.empty());
  // queues and live_jobs: derived from the tasks and jobs.
  EXPECT_EQ(QueuesOf(actual), QueuesOf(expected));
  EXPECT_FALSE(QueuesOf(expected).empty());
  EXPECT_EQ(LiveJobsOf(actual), LiveJobsOf(expected));
  EXPECT_FALSE(LiveJobsOf(expected).begin()->second.empty());
  ASSERT_EQ(actual.idempotency.size(), expected.idempotency.size());
  for (const auto& [key, command] : expected.idempotency) {
    ASSERT_EQ(actual.idempotency.count(key), 1u) << "idempotency key " << key;
    ExpectSameIdempotentCommand(command, actual.idempotency.at(key), filled);
  }
  EXPECT_FALSE(expected.idempotency.empty());
  CAIRN_EXPECT_SAME_FIELD(idempotency_by_time);
  ASSERT_EQ(actual.experiments.size(), expected.experiments.size());
  for (const auto& [id, experiment] : expected.experiments) {
    ASSERT_EQ(actual.experiments.count(id), 1u) << "experiment " << id;
    ExpectSameExperiment(experiment, actual.experiments.at(id), filled);
  }
  EXPECT_FALSE(expected.experiments.empty());
  ASSERT_EQ(actual.trials.size(), expected.trials.size());
  for (const auto& [id, trial] : expected.trials) {
    ASSERT_EQ(actual.trials.count(id), 1u) << "trial " << id;
    ExpectSameTrial(trial, actual.trials.at(id), filled);
  }
  EXPECT_FALSE(expected.trials.empty());
  ASSERT_EQ(actual.checkpoints.size(), expected.checkpoints.size());
  for (const auto& [uuid, checkpoint] : expected.checkpoints) {
    ASSERT_EQ(actual.checkpoints.count(uuid), 1u) << "checkpoint " << uuid;
    ExpectSameCheckpoint(checkpoint, actual.checkpoints.at(uuid), filled);
  }
  EXPECT_FALSE(expected.checkpoints.empty());
  CAIRN_EXPECT_SAME_FIELD(deleted_checkpoints);
  CAIRN_EXPECT_SAME_FIELD(tensorboard_deletions);
  ASSERT_EQ(actual.templates.size(), expected.templates.size());
  for (const auto& [name, saved] : expected.templates) {
    ASSERT_EQ(actual.templates.count(name), 1u) << "template " << name;
    EXPECT_EQ(actual.templates.at(name).SerializeAsString(), saved.SerializeAsString());
  }
  EXPECT_FALSE(expected.templates.empty());
  ExpectSameIdentity(expected.identity, actual.identity, filled);
  ExpectSameTenancy(expected.tenancy, actual.tenancy, filled);
  ExpectSameRegistry(expected.registry, actual.registry, filled);
  ExpectSameWebhooks(expected.webhooks, actual.webhooks, filled);
  CAIRN_EXPECT_SAME_FIELD(last_experiment_id);
  CAIRN_EXPECT_SAME_FIELD(last_trial_id);
  CAIRN_EXPECT_SAME_FIELD(dirty_experiments);
  ASSERT_EQ(actual.pai_jobs.size(), expected.pai_jobs.size());
  for (const auto& [id, pai_job] : expected.pai_jobs) {
    ASSERT_EQ(actual.pai_jobs.count(id), 1u) << "OpenPAI job " << id;
    ExpectSamePaiJob(pai_job, actual.pai_jobs.at(id), id == "pai-1");
  }
  CAIRN_EXPECT_SAME_FIELD(pai_job_by_name);  // derived: by "<username>/<jobName>"
  CAIRN_EXPECT_SAME_FIELD(pai_task_to_job);  // derived: the live jobs' members
  CAIRN_EXPECT_SAME_FIELD(dirty_pai_jobs);
}

#undef CAIRN_COVERS
#undef CAIRN_EXPECT_SAME_MESSAGE
#undef CAIRN_EXPECT_SAME_FIELD

}  // namespace
}  // namespace cairn::commands
