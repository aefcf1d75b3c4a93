// The round-robin scheduler: jobs take turns, the job holding the fewest slots first (ties in
// queue order); each turn starts a job's next queued task, and a job whose next task does not
// fit drops out of the pass. It never preempts.
#include <algorithm>
#include <unordered_map>

#include "commands/scheduler/policies.h"

namespace cairn::commands {

void RunRoundRobin(PoolPass& pass) {
  struct Turn {
    const JobRecord* job;
    int64_t holding = 0;
    std::vector<const TaskRecord*> queued;
    size_t next = 0;
  };
  std::unordered_map<const JobRecord*, size_t> index;
  std::vector<Turn> turns;
  for (const TaskRecord* task : InJobOrder(pass.queued_slot_tasks)) {
    auto [it, inserted] = index.try_emplace(task->job, turns.size());
    if (inserted) turns.push_back(Turn{&pass.JobOf(*task), 0, {}, 0});
    turns[it->second].queued.push_back(task);
  }
  for (const TaskRecord* task : pass.running_slot_tasks) {
    auto it = index.find(task->job);
    if (it != index.end()) turns[it->second].holding += task->slots_asked();
  }
  std::stable_sort(turns.begin(), turns.end(),
                   [](const Turn& a, const Turn& b) { return a.holding < b.holding; });
  int round = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    ++round;
    for (auto& turn : turns) {
      if (turn.next >= turn.queued.size()) continue;
      const TaskRecord& task = *turn.queued[turn.next];
      const int32_t slots = task.slots_asked();
      auto fit = pass.FitFor(task, false);
      if (!fit) {
        pass.Wait(task, [&] {
          return "round robin: job " + turn.job->job_id + "'s next task needs " + SlotsText(slots) +
                 "; pool " + pass.PoolName() + " has " +
                 std::to_string(pass.capacity.idle_slots()) + " idle (at most " +
                 std::to_string(pass.capacity.largest_free_on_one_agent()) + " on one agent)";
        });
        for (size_t k = turn.next + 1; k < turn.queued.size(); ++k) {
          pass.Wait(*turn.queued[k], [&] {
            return "round robin: behind task " + task.task_id +
                   " of the same job, which does not fit yet";
          });
        }
        turn.next = turn.queued.size();
        continue;
      }
      pass.Assign(task, *fit,
                  "round robin: turn " + std::to_string(round) + " of job " + turn.job->job_id +
                      " (it held " + SlotsText(static_cast<int32_t>(turn.holding)) + ")",
                  false);
      turn.holding += slots;
      turn.next++;
      progress = true;
    }
  }
}

}  // namespace cairn::commands
