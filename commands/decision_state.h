// The write side's in-memory model of the cluster: everything the decider needs to validate a
// command and place tasks, folded from the log by Apply(). Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"
#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"
#include "commands/identity.h"
#include "commands/job_ranks.h"
#include "commands/model_registry.h"
#include "commands/tenancy.h"
#include "events.pb.h"
#include "events/pool_defaults.h"

namespace cairn::commands {

enum class TaskState { kQueued, kAssigned, kRunning, kTerminating, kExited };
const char* TaskStateName(TaskState state);

struct JobRecord;

// Where a task's current allocation runs. Only live work needs it: an exited task drops it
// (ForgetLiveDetails), so that history's tasks hold a null pointer where each held 168 bytes.
struct Placement {
  std::string allocation_pool;  // the pool the allocation runs in
  // One part per agent (several for a gang). TaskRecord::agent_id and, here, agent_incarnation
  // and slot_ids repeat the first part.
  std::vector<events::AllocationPart> parts;
  std::set<std::string> parts_exited;  // agents whose part of a gang already ended
  std::string agent_incarnation;
  std::vector<int32_t> slot_ids;
  // Set by a preemption (TaskRecord::preempting): the allocation is killed at this time.
  int64_t preemption_deadline = 0;
};

struct TaskRecord {
  std::string task_id;
  // The job's record in DecisionState::jobs (whose records never move or go away), so that a
  // scheduling pass over many queued tasks reaches each one's job without a lookup. Every stored
  // task has one.
  const JobRecord* job = nullptr;
  const std::string& job_id() const;
  // As submitted (an events::TaskSpec, serialized) while the task lives, read with Spec() when it
  // is placed; empty once it exited (ForgetLiveDetails). Bytes rather than the message: a parsed
  // spec keeps each string in an allocation of its own, about three times the bytes, and a long
  // queue is mostly specs.
  std::string packed_spec;
  // Priority, weight and max_slots are the job's current values; the pool is not kept here (each
  // task's copy of the name was a heap string): it is the job's, pool().
  events::Resources resources;
  TaskState state = TaskState::kQueued;
  events::TaskType task_type = events::TASK_TYPE_UNSPECIFIED;  // the spec's; kept after exit
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  int allocation_count = 0;  // allocations so far; numbers the next allocation id
  // Change tracking for incremental snapshots (ByOwnId): not part of the state. (In the padding
  // before allocation_id: a task's record stays 312 bytes.)
  uint32_t change_stamp = 0;
  std::string allocation_id;  // the latest allocation's; kept after it ends
  // Where the current allocation runs (none while queued or once exited): read it with where().
  std::unique_ptr<Placement> placement;
  std::string agent_id;  // kept after the task exits (DecisionState::AllocationAgents)
  // The allocation's agents after agent_id (a gang on several agents), kept like agent_id.
  std::vector<std::string> more_agents;
  bool started = false;
  bool ready = false;  // a notebook's, shell's or TensorBoard's service answers (TaskReady)
  bool kill_requested = false;
  bool kill_by_user = false;  // the kill was a user's, not the system's (gang, disable, preemption)
  bool backfilled = false;
  // A preemption asked this allocation to give its slots back; it is released (and the task
  // re-queued) when it exits, or killed at the deadline.
  bool preempting = false;
  bool spec_preemptible = false;  // the spec's; kept after exit
  std::string last_reason;        // the latest decision about this task, in words
  int64_t trial_id = 0;           // the trial this task is a run of; 0 for other tasks

  const std::string& pool() const;  // the job's pool, where the task queues and is placed
  // The placement, or an empty one when there is none.
  const Placement& where() const {
    static const Placement kNowhere;
    return placement ? *placement : kNowhere;
  }
  // The placement to change, made when there is none.
  Placement& place() {
    if (!placement) placement = std::make_unique<Placement>();
    return *placement;
  }
  // The spec as submitted; an empty one once the task exited.
  events::TaskSpec Spec() const;
  bool preemptible() const { return task_type == events::TASK_TYPE_TRIAL || spec_preemptible; }
  bool holds_allocation() const {
    return state == TaskState::kAssigned || state == TaskState::kRunning ||
           state == TaskState::kTerminating;
  }
  // A gang's followers never wait in a queue: their leader stands for the whole gang, asking
  // for every member's slots.
  bool follows_gang() const { return resources.gang_rank() > 0; }
  bool leads_gang() const { return resources.gang_size() > 1 && resources.gang_rank() == 0; }
  // What the scheduler weighs this task at: a queued gang leader asks for the whole gang.
  int32_t slots_asked() const {
    return leads_gang() && state == TaskState::kQueued ? resources.gang_slots() : resources.slots();
  }
};

// A job groups the tasks the scheduler treats as one (a command, or an experiment's trials):
// fair share divides slots among jobs, the queue orders jobs.
struct JobRecord {
  std::string job_id;
  std::string resource_pool;
  std::string user;
  // Its tasks in submission order: records of DecisionState::tasks, which never move. Const:
  // a task is changed through DecisionState::tasks, which tracks what changed (ByOwnId).
  std::vector<const TaskRecord*> tasks;
  double weight = 1;
  int64_t queue_position = 0;  // smaller = further ahead among equal priorities
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  // The 4-byte fields together: every job of history has this record, and padding adds up.
  events::TaskType type = events::TASK_TYPE_UNSPECIFIED;
  int32_t priority = kDefaultPriority;
  int32_t max_slots = 0;  // 0 = no cap
  int32_t workspace_id = kUncategorizedWorkspace;
  int live_tasks = 0;  // tasks not exited
  // The job may still get tasks although none is live (an experiment that is not over).
  bool open = false;
  uint32_t change_stamp = 0;  // change tracking for incremental snapshots (ByOwnId)
  bool accepts_changes() const { return live_tasks > 0 || open; }
};

inline const std::string& TaskRecord::job_id() const { return job->job_id; }
inline const std::string& TaskRecord::pool() const { return job->resource_pool; }

// Records keyed by a view of their own id (`kId`, never changed once stored): the key costs no
// second copy of the id, about 64 bytes a record for every task and job of history. An ordered
// map that offers only the insertions that key a record by itself.
//
// The tree's nodes hold the key and a pointer; each record is an allocation of its own. Why: a
// forked write-side snapshot (master/decision_snapshots.h) shares the writer's pages until the
// writer changes them, and an insertion rebalances the tree, writing to nodes at random. With the
// records inside the nodes (a task's node 384 bytes), those writes spread over every page of
// every task and job, and at 100k queued the writer copied 2.0 pages per submission while a
// snapshot's child lived (54 MiB); 64-byte nodes keep the tree on a sixth of the pages (with
// jemalloc, whose size classes put the nodes on pages of their own; glibc's malloc would lay
// each node between two records). Records stay where they are for their life, so pointers to
// them (JobRecord::tasks) stay valid.
//
// Iterators read like a std::map's (`it->first` is the id, `it->second` the record) except that
// `*it` is a pair of views made on the spot: `auto& e = *it` does not compile (use `const auto&`
// or `auto&&`); `auto e = *it` views the stored record rather than copying it; `&it->first` is
// not an address to keep; and on a mutable map `const auto& [id, record]` still gives a mutable
// record (read through std::as_const(map) for a const one).
//
// It tracks which records changed, for incremental write-side snapshots (master/
// decision_snapshots.h): once TakeChanged was first called, every record handed out mutable (by
// dereferencing a mutable iterator, by a mutable at(), Insert, FindOrMake or Changed) counts as
// changed, once, until the next TakeChanged.
// Conservative by construction: no record can be changed without being handed out mutable
// (pointers kept elsewhere, as JobRecord::tasks, are const), and one handed out and left as it
// was only makes a snapshot larger. Record::change_stamp holds the tracking's generation when it
// was last counted, so that counting is a compare, not a lookup.
template <typename Record, std::string Record::*kId>
class ByOwnId {
  using Tree = std::map<std::string_view, std::unique_ptr<Record>, std::less<>>;

 public:
  template <bool kConst>
  class Iterator {
    using TreeIterator =
        std::conditional_t<kConst, typename Tree::const_iterator, typename Tree::iterator>;
    using RecordRef = std::conditional_t<kConst, const Record&, Record&>;

   public:
    struct Entry {
      std::string_view first;
      RecordRef second;
    };
    struct Arrow {
      Entry entry;
      const Entry* operator->() const { return &entry; }
    };
    using value_type = Entry;
    using reference = Entry;
    using pointer = Arrow;
    using difference_type = std::ptrdiff_t;
    // Bidirectional though `reference` is a value (as vector<bool>'s): std::prev, std::next and
    // std::distance choose by the tag, and C++20's std::bidirectional_iterator holds.
    using iterator_category = std::bidirectional_iterator_tag;

    Iterator() = default;
    // `owner` counts the records a mutable iterator hands out; none for a const one.
    Iterator(TreeIterator at, ByOwnId* owner) : at_(at), owner_(owner) {}
    // iterator -> const_iterator, as a std::map's converts.
    template <bool kOther>
    requires(kConst && !kOther) Iterator(const Iterator<kOther>& other) : at_(other.at_) {}

    Entry operator*() const {
      if constexpr (!kConst) owner_->Count(*at_->second);
      return Entry{at_->first, *at_->second};
    }
    Arrow operator->() const { return Arrow{**this}; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++at_;
      return before;
    }
    Iterator& operator--() {
      --at_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator before = *this;
      --at_;
      return before;
    }
    template <bool kOther>
    bool operator==(const Iterator<kOther>& other) const {
      return at_ == other.at_;
    }

   private:
    template <bool>
    friend class Iterator;
    TreeIterator at_;
    ByOwnId* owner_ = nullptr;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  iterator begin() { return Mutable(tree_.begin()); }
  iterator end() { return Mutable(tree_.end()); }
  const_iterator begin() const { return const_iterator(tree_.begin(), nullptr); }
  const_iterator end() const { return const_iterator(tree_.end(), nullptr); }
  size_t size() const { return tree_.size(); }
  bool empty() const { return tree_.empty(); }
  // Lookups by any string (std::less<> compares views).
  size_t count(std::string_view id) const { return tree_.count(id); }
  iterator find(std::string_view id) { return Mutable(tree_.find(id)); }
  const_iterator find(std::string_view id) const { return const_iterator(tree_.find(id), nullptr); }
  iterator lower_bound(std::string_view id) { return Mutable(tree_.lower_bound(id)); }
  const_iterator lower_bound(std::string_view id) const {
    return const_iterator(tree_.lower_bound(id), nullptr);
  }
  iterator upper_bound(std::string_view id) { return Mutable(tree_.upper_bound(id)); }
  const_iterator upper_bound(std::string_view id) const {
    return const_iterator(tree_.upper_bound(id), nullptr);
  }
  // std::out_of_range when there is none, as a std::map's.
  Record& at(std::string_view id) { return Count(*tree_.at(id)); }
  const Record& at(std::string_view id) const { return *tree_.at(id); }

  // Inserts `record` unless one with its id is stored already. Returns the stored record (the
  // one already there, if any) and whether it was inserted. Records inserted in id order (a
  // snapshot's) go in at the end without a search.
  std::pair<Record*, bool> Insert(Record record) {
    auto owned = std::make_unique<Record>(std::move(record));
    owned->change_stamp = 0;                    // a copy's stamp says nothing about this map
    const std::string_view id = (*owned).*kId;  // the key views the record's own id
    const size_t before = tree_.size();
    auto at = tree_.emplace_hint(tree_.end(), id, std::move(owned));
    return {&Count(*at->second), tree_.size() != before};
  }
  // The record with this id, made with only its id if there is none; and whether it was made.
  std::pair<Record*, bool> FindOrMake(std::string_view id) {
    if (auto it = tree_.find(id); it != tree_.end()) return {&Count(*it->second), false};
    Record made;
    made.*kId = id;
    return Insert(std::move(made));
  }

  // Replaces the record with `with`'s id by `with`, where it is (pointers to it stay right); the
  // key then views the new record's id (assigning a record over a stored one would leave the key
  // viewing the freed bytes of the old one's id). nullptr when none has that id.
  Record* Replace(Record with) {
    auto at = tree_.find(std::string_view(with.*kId));
    if (at == tree_.end()) return nullptr;
    Record& stored = *at->second;
    // The stored id's bytes go back into the stored record (the ids are equal), so that the key
    // usually still views them; when they did not (a string implementation that copied), the
    // node is keyed again.
    std::swap(stored.*kId, with.*kId);
    stored = std::move(with);
    if ((stored.*kId).data() != at->first.data()) {
      auto node = tree_.extract(at);
      node.key() = stored.*kId;
      tree_.insert(std::move(node));
    }
    return &Count(stored);
  }
  // A record of this map, reached through a const pointer, to change: counted as changed.
  Record& Changed(const Record& record) { return Count(const_cast<Record&>(record)); }
  // The records counted as changed since the last call (each once, in the order first counted);
  // counting starts anew. Counting is off until the first call: a state no snapshot is taken
  // of (a replay tool's, or a master's without write-side snapshots) keeps no list.
  std::vector<const Record*> TakeChanged() {
    counting_ = true;
    ++generation_;
    return std::exchange(changed_, {});
  }
  size_t changed_count() const { return changed_.size(); }
  // Whether every change since the last TakeChanged was counted: false for a map that never had
  // one (decoded, folded anew), whose changes no list holds.
  bool counting() const { return counting_; }

 private:
  iterator Mutable(typename Tree::iterator at) { return iterator(at, this); }
  Record& Count(Record& record) {
    if (counting_ && record.change_stamp != generation_) {
      record.change_stamp = generation_;
      changed_.push_back(&record);
    }
    return record;
  }

  Tree tree_;
  std::vector<const Record*> changed_;
  uint32_t generation_ = 1;  // a record's stamp 0: never counted
  bool counting_ = false;
};

// How a trial's last run ended, until the experiment reactor has acted on it.
enum class TrialRunExit { kNone, kClean, kFailed, kKilled };

struct TrialRecord {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  int request_id = 0;
  std::string hparams_json;
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

struct AgentRecord {
  std::string agent_id;
  std::string incarnation;
  std::string resource_pool;
  int32_t slot_count = 0;
  bool connected = false;
  bool enabled = true;
  bool draining = false;
  std::set<int32_t> used_slots;
  int32_t zero_slot_containers = 0;
  std::set<std::string> allocations;  // allocation ids running or assigned here
  uint64_t registered_offset = 0;     // the AgentRegistered that began this incarnation
  std::string address;                // where other tasks reach its tasks (AgentRegistered)

  int32_t free_slots() const { return slot_count - static_cast<int32_t>(used_slots.size()); }
  bool schedulable() const { return connected && enabled && !draining; }
};

// One task of an OpenPAI job's current attempt, and where it was placed.
struct PaiMember {
  std::string task_id;
  int32_t role = 0;  // index into the job's task_roles
  int32_t index = 0;
  std::string agent_id;                 // "" until placed
  std::vector<events::PaiPorts> ports;  // its ports on that agent, while it holds them
  bool exited = false;
};

// An OpenPAI job (commands/pai_job.h). The current attempt's outcome is decided by the first
// member end that settles it (a failure, the killAllOnCompletedTaskNumber-th success, every
// success, or a stop); the job controller (commands/pai_reactor.h) then kills what is left and,
// once every member ended, records the attempt's end and any retry.
struct PaiJobRecord {
  events::PaiJobSubmitted submitted;
  int32_t attempt = 0;
  std::vector<PaiMember> members;
  int32_t completed = 0;  // members of this attempt that exited with code 0
  std::string outcome;    // "" (undecided), "SUCCEEDED", "FAILED" or "STOPPED"
  std::string outcome_reason;
  std::string trigger_role;
  int32_t trigger_index = -1;
  std::optional<int32_t> trigger_exit_code;
  bool stop_requested = false;
  std::string final_state;  // "" while the job lives; then SUCCEEDED, FAILED or STOPPED
  int32_t retries = 0;      // attempts that ended and were retried

  bool ended() const { return !final_state.empty(); }
  bool all_exited() const {
    for (const auto& member : members) {
      if (!member.exited) return false;
    }
    return true;
  }
};

// Orders queued tasks: priority (lower first), then the job's queue position, then the task's
// submission order (its TaskSubmitted's offset, unique per task).
using QueueKey = std::tuple<int32_t, int64_t, uint64_t>;

// One resource pool's queued tasks in queue order, each with its record (in
// DecisionState::tasks, whose records never move), slot tasks apart from zero-slot ones: a
// scheduling pass over a pool walks exactly the tasks it schedules, without a lookup per task.
struct PoolQueue {
  using Tasks = std::pmr::map<QueueKey, const TaskRecord*>;
  // The queues' nodes come from a pool of their own: a walk of a long queue then touches a few
  // megabytes, not a page per task of the heap that also holds the task records (measured: the
  // walk took a third of a pass over 100,000 queued tasks before). Neither copied nor moved: the
  // maps point at it, and it stays where DecisionState::queues built it.
  std::pmr::unsynchronized_pool_resource nodes;
  Tasks slot_tasks{&nodes};
  Tasks zero_slot_tasks{&nodes};
  bool empty() const { return slot_tasks.empty() && zero_slot_tasks.empty(); }
};

// How long an Idempotency-Key is remembered, by event time: retries come within minutes; a day
// covers a client retrying across a long master outage.
inline constexpr int64_t kIdempotencyWindowMicros = int64_t{24} * 3600 * 1'000'000;

// A new job's queue position: its submission offset, spaced so that moves can insert between.
inline constexpr int64_t kQueuePositionSpacing = int64_t{1} << 20;

struct DecisionState {
  uint64_t next_offset = 0;  // the offset the next event gets (= events applied)
  uint64_t writer_epoch = 0;
  ByOwnId<TaskRecord, &TaskRecord::task_id> tasks;
  ByOwnId<JobRecord, &JobRecord::job_id> jobs;
  std::map<std::string, AgentRecord> agents;
  events::ResourcePoolsConfigured pools_config = DefaultPoolsConfig();
  // Allocations their task's record no longer answers for (FindAllocation, AllocationAgents):
  // released ones (the task was re-queued), with the agents that held them; and ids not of the
  // scheduler's form "<task_id>.<n>" while they are their task's latest, with no agents (the
  // record answers). Most tasks have one allocation in their life, so this stays small, where
  // maps of every allocation ever made cost about 370 bytes a task of history.
  struct AllocationHolding {
    std::string task_id;
    std::vector<std::string> agent_ids;
  };
  std::map<std::string, AllocationHolding, std::less<>> other_allocations;
  std::map<std::string, PoolQueue> queues;  // queued tasks by pool; no entry for an empty one
  JobRanks live_jobs;                       // jobs with live tasks, in each pool's queue order
  // idempotency key -> what its command was and the entity it created or touched
  struct IdempotentCommand {
    std::string command;  // the payload type of the command's first event
    std::string actor;
    std::string entity_id;
    std::string request_fingerprint;
    int64_t time_unix_micros = 0;
  };
  std::map<std::string, IdempotentCommand> idempotency;
  // The keys by the time they were first used, to forget them after kIdempotencyWindow.
  std::multimap<int64_t, std::string> idempotency_by_time;
  std::map<int64_t, ExperimentRecord> experiments;
  std::map<int64_t, TrialRecord> trials;
  std::map<std::string, CheckpointRecord> checkpoints;
  std::vector<std::string> deleted_checkpoints;  // in the order garbage collection decided it
  std::map<std::string, events::TemplateSaved> templates;
  IdentityState identity;  // users and live sessions (commands/identity.h)
  TenancyState tenancy;    // workspaces, projects, roles, pool bindings (commands/tenancy.h)
  RegistryState registry;  // models and their versions (commands/model_registry.h)
  int64_t last_experiment_id = 0;
  int64_t last_trial_id = 0;
  // Experiments an event touched since the reactor last looked (commands/experiment_reactor.h).
  // Not part of the log's meaning: a replayed state has them all, and the reactor is idempotent.
  std::set<int64_t> dirty_experiments;
  // OpenPAI jobs by job id; by "<username>/<jobName>" (names are unique per user); the live
  // attempts' task ids to their job; and the jobs an event touched since the job controller looked.
  std::map<std::string, PaiJobRecord> pai_jobs;
  std::map<std::string, std::string> pai_job_by_name;
  std::map<std::string, std::string> pai_task_to_job;
  std::set<std::string> dirty_pai_jobs;

  const TaskRecord* FindTask(std::string_view task_id) const;
  const JobRecord* FindJob(std::string_view job_id) const;
  const AgentRecord* FindAgent(const std::string& agent_id) const;
  const events::ResourcePoolConfig* FindPool(const std::string& pool_name) const;
  const ExperimentRecord* FindExperiment(int64_t experiment_id) const;
  const TrialRecord* FindTrial(int64_t trial_id) const;
  const PaiJobRecord* FindPaiJob(const std::string& job_id) const;
  // Whether a model version points at the checkpoint: garbage collection and experiment deletion
  // keep it.
  bool IsCheckpointRegistered(std::string_view uuid) const {
    return registry.IsCheckpointRegistered(uuid);
  }
  // The task the allocation named `allocation_id` was made for, also after it ended; nullptr
  // when no allocation had that id.
  const TaskRecord* FindAllocation(std::string_view allocation_id) const;
  // FindAllocation for a caller that names it (an agent's report, a trial's workload): NotFound,
  // saying which, when no allocation had that id.
  Result<const TaskRecord*> AllocationNamed(std::string_view allocation_id) const;
  // The agents that held the allocation (several for a gang), also after it ended; none when no
  // allocation had that id.
  std::vector<std::string> AllocationAgents(std::string_view allocation_id) const;
  // The task of an allocation that is some agent's now (AgentRecord::allocations).
  const TaskRecord& TaskOfLiveAllocation(const std::string& allocation_id) const;
  // The trial whose run holds `allocation_id`, or nullptr.
  const TrialRecord* FindTrialByAllocation(const std::string& allocation_id) const;
  QueueKey QueueKeyOf(const TaskRecord& task) const;
  size_t QueuedTaskCount() const;  // over every pool's queue (a few pools)
  // Puts a queued task in its pool's queue, or takes it out: call Dequeue before changing what
  // QueueKeyOf or the pool reads (priority, pool, the job's position), Enqueue after.
  void Enqueue(const TaskRecord& task);
  void Dequeue(const TaskRecord& task);
};

// Gives the experiment's searcher `input` and records it; returns the searcher's operations.
std::vector<experiments::SearcherOp> FeedSearcher(ExperimentRecord& experiment,
                                                  const SearcherInput& input);

// Running tasks whose preemption grace period ended by `now` and that no kill reached yet.
std::vector<const TaskRecord*> ExpiredPreemptions(const DecisionState& state, int64_t now);

// Folds one event into the state. Events of an epoch older than the newest claimed one are
// ignored (read-side fencing); unknown payloads are skipped.
void Apply(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
