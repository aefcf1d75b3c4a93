// The priority scheduler, as the seeds describe it and Determined implements it: more important
// work first (lower number), equal priorities in queue order. Without preemption it is strict:
// once a task of some priority cannot start, nothing less important starts in that pass. With
// preemption, a pending task that cannot fit takes slots from the least important preemptible
// tasks (trials), and less important preemptible work may be backfilled onto idle slots.
#include <algorithm>
#include <map>
#include <set>

#include "commands/scheduler/policies.h"

namespace cairn::commands {

namespace {

std::string Describe(const TaskRecord& task) {
  return "task " + task.task_id + " (priority " + std::to_string(task.resources.priority()) + ", " +
         SlotsText(task.slots_asked()) + ")";
}

// The running tasks whose departure would let `pending` fit, least important first, or none
// when even all eligible ones would not make room.
// On success the victims' slots are left marked releasing in `capacity`; on failure it is as
// it was.
std::vector<const TaskRecord*> ChooseVictims(const PoolPass& pass, PoolCapacity& capacity,
                                             const TaskRecord& pending,
                                             const std::vector<const TaskRecord*>& running,
                                             const std::set<std::string>& releasing) {
  capacity.BeginTrial();
  std::vector<const TaskRecord*> victims;
  const int64_t pending_position = pass.JobOf(pending).queue_position;
  // `running` is in queue order (most important first): walk it from the back.
  for (auto it = running.rbegin(); it != running.rend(); ++it) {
    const TaskRecord& candidate = **it;
    if (candidate.resources.priority() < pending.resources.priority()) break;
    if (candidate.resources.priority() == pending.resources.priority()) {
      // Within one priority only work strictly behind the pending task's job yields.
      if (pass.JobOf(candidate).queue_position <= pending_position) break;
    }
    if (!candidate.preemptible() || candidate.preempting || candidate.kill_requested ||
        releasing.count(candidate.task_id)) {
      continue;
    }
    capacity.MarkReleasing(candidate);
    victims.push_back(&candidate);
    if (FitTask(pass, capacity, pending, true)) {
      capacity.Commit();
      return victims;
    }
  }
  capacity.Rollback();
  return {};
}

}  // namespace

void RunPriority(PoolPass& pass) {
  const bool preemption = pass.pool.scheduler().preemption();
  std::vector<const TaskRecord*> running = pass.running_slot_tasks;
  {
    // Keys computed once: a key is a map lookup and a string copy.
    std::vector<std::pair<QueueKey, const TaskRecord*>> keyed;
    keyed.reserve(running.size());
    for (const TaskRecord* task : running) keyed.emplace_back(pass.state.QueueKeyOf(*task), task);
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 0; i < keyed.size(); ++i) running[i] = keyed[i].second;
  }
  bool any_preemptible_running = false;
  for (const TaskRecord* task : running) {
    any_preemptible_running |= task->preemptible() && !task->preempting && !task->kill_requested;
  }

  bool backfilling = false;
  std::string blocked_by;          // the first more important task that could not start
  std::set<std::string> released;  // victims chosen in this pass
  std::set<int32_t> failed_preemption_sizes;
  const auto& queued = pass.queued_slot_tasks;  // already in priority order
  size_t level_begin = 0;
  while (level_begin < queued.size()) {
    const int32_t priority = queued[level_begin]->resources.priority();
    size_t level_end = level_begin;
    while (level_end < queued.size() && queued[level_end]->resources.priority() == priority) {
      ++level_end;
    }
    std::vector<const TaskRecord*> failures;
    for (size_t i = level_begin; i < level_end; ++i) {
      const TaskRecord& task = *queued[i];
      auto fit = pass.FitFor(task, true);
      if (!fit) {
        failures.push_back(&task);
        continue;
      }
      auto position = [&] {
        return "priority " + std::to_string(priority) + ", position " + std::to_string(i + 1) +
               " in pool " + pass.PoolName() + "'s queue";
      };
      if (fit->uses_releasing_slots) {
        pass.capacity.Take(*fit);
        pass.Wait(task, [&] {
          return position() +
                 ": its slots are reserved, waiting for preempted or killed "
                 "tasks to release them";
        });
      } else if (!released.empty()) {
        pass.capacity.Take(*fit);
        pass.Wait(task, [&] {
          return position() + ": waits one pass while this pass's preemptions complete";
        });
      } else if (!backfilling) {
        pass.Assign(task, *fit, position(), false);
      } else if (preemption && task.preemptible()) {
        pass.Assign(task, *fit,
                    position() + ": backfilled onto idle slots while " + blocked_by +
                        " waits (it may be preempted when that task can run)",
                    true);
      } else {
        pass.capacity.Take(*fit);
        pass.Wait(task, [&] {
          return position() + ": " + blocked_by + " waits ahead of it" +
                 (preemption ? "; only preemptible tasks (trials) are backfilled"
                             : "; without preemption the priority scheduler does not "
                               "backfill");
        });
      }
    }
    if (!failures.empty() && !backfilling) {
      backfilling = true;
      blocked_by = Describe(*failures.front());
    }
    for (const TaskRecord* failed : failures) {
      const int32_t slots = failed->slots_asked();
      auto why = [&] {
        return "needs " + SlotsText(slots) + "; pool " + pass.PoolName() + " has " +
               std::to_string(pass.capacity.idle_slots()) + " idle of " +
               std::to_string(pass.capacity.total_slots()) + " (at most " +
               std::to_string(pass.capacity.largest_free_on_one_agent()) + " free on one agent)";
      };
      if (!preemption) {
        pass.Wait(*failed, [&] { return why() + "; preemption is off in this pool"; });
        continue;
      }
      if (auto fit = pass.FitFor(*failed, true)) {
        pass.capacity.Take(*fit);  // room freed by this pass's preemptions: reserve it
        pass.Wait(*failed, [&] {
          return why() + "; slots reserved, waiting for preempted tasks to release them";
        });
        continue;
      }
      // A task kept off some agents (exclude_node) fits less than its size says: it neither
      // uses nor feeds the cache of sizes that failed.
      const bool narrowed = !failed->resources.excluded_agents().empty();
      if (!any_preemptible_running || (!narrowed && failed_preemption_sizes.count(slots))) {
        pass.Wait(*failed,
                  [&] { return why() + "; no less important preemptible task to preempt"; });
        continue;
      }
      auto victims = ChooseVictims(pass, pass.capacity, *failed, running, released);
      if (victims.empty()) {
        if (!narrowed) failed_preemption_sizes.insert(slots);
        pass.Wait(*failed, [&] {
          return why() +
                 "; preempting every less important preemptible task would "
                 "still not make room (commands, notebooks, shells and "
                 "TensorBoards are not preemptible)";
        });
        continue;
      }
      for (const TaskRecord* victim : victims) {
        released.insert(victim->task_id);
        pass.Preempt(*victim,
                     "preempted by the priority scheduler for " + Describe(*failed) +
                         ", which cannot fit otherwise; " + Describe(*victim) +
                         " is the least important preemptible work",
                     failed);
      }
      if (auto fit = pass.FitFor(*failed, true)) pass.capacity.Take(*fit);
      pass.Wait(*failed, [&] {
        return why() + "; preempting " + std::to_string(victims.size()) +
               " less important task(s) to make room";
      });
    }
    level_begin = level_end;
  }
}

}  // namespace cairn::commands
