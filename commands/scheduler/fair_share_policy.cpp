// The fair-share scheduler as the seeds describe it: each active job's share of the pool's slots
// is in proportion to its demand × weight, capped at its demand and its max_slots; slots held by
// non-preemptible tasks are never taken back. Remainders go to the largest fractions, ties in
// queue order. Jobs start work within their share; a job under its share whose next task cannot
// fit takes slots back from jobs over theirs (their newest preemptible tasks first); idle slots
// left over are backfilled in queue order, and those tasks may be preempted later.
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/encoding.h"
#include "commands/scheduler/policies.h"
#include "events/envelope_util.h"

namespace cairn::commands {

namespace {

struct JobShare {
  const JobRecord* job = nullptr;
  int64_t demand = 0;   // slots of queued + running tasks, capped at max_slots
  int64_t holding = 0;  // slots of running tasks not on their way out
  int64_t fixed = 0;    // slots of running non-preemptible tasks: cannot be taken back
  double weight = 1;
  int64_t share = 0;
  // The job's queued tasks in submission order, as a list threaded through the pass's task
  // order (next_queued): a pass over 100,000 one-task jobs allocates nothing per job.
  int32_t first_queued = -1;
  int32_t last_queued = -1;
  std::vector<const TaskRecord*> preemptible_running;  // newest first
  int64_t uncapped_demand = 0;
};

// Divides `capacity` among jobs in proportion to demand × weight, each kept between its fixed
// holding and its demand: job i gets clamp(λ · demand_i · weight_i, fixed_i, demand_i) for the
// one λ at which the shares add up to the capacity. The sum only grows with λ, so bisection
// finds it; unlike pinning jobs one round at a time, the answer cannot depend on job order.
// Jobs alike in (demand, weight, fixed) get alike shares, so the arithmetic runs over those
// kinds, a handful however many jobs there are (100,000 jobs: 64 bisection steps over every
// job were a fifth of the pass).
void ComputeShares(std::vector<JobShare>& jobs, int64_t capacity) {
  int64_t fixed_total = 0;
  int64_t demand_total = 0;
  double lambda_high = 0;
  for (const auto& job : jobs) {
    fixed_total += job.fixed;
    demand_total += job.demand;
    if (job.demand > 0) lambda_high = std::max(lambda_high, 1 / job.weight);  // reaches demand
  }
  if (demand_total <= capacity || fixed_total >= capacity) {
    for (auto& job : jobs) job.share = demand_total <= capacity ? job.demand : job.fixed;
    return;
  }
  struct Kind {
    int64_t demand;
    double weight;
    int64_t fixed;
    double ideal = 0;
    int64_t floor = 0;
    std::vector<size_t> members;  // its jobs, in queue order
  };
  std::vector<Kind> kinds;
  std::map<std::tuple<int64_t, double, int64_t>, size_t> kind_index;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobShare& job = jobs[i];
    auto [it, inserted] = kind_index.try_emplace({job.demand, job.weight, job.fixed}, kinds.size());
    if (inserted) kinds.push_back(Kind{job.demand, job.weight, job.fixed, 0, 0, {}});
    kinds[it->second].members.push_back(i);
  }
  auto ideal = [](const Kind& kind, double lambda) {
    return std::clamp(lambda * static_cast<double>(kind.demand) * kind.weight,
                      static_cast<double>(kind.fixed), static_cast<double>(kind.demand));
  };
  double lambda_low = 0;
  for (int step = 0; step < 64; ++step) {
    const double lambda = (lambda_low + lambda_high) / 2;
    double total = 0;
    for (const auto& kind : kinds) {
      total += static_cast<double>(kind.members.size()) * ideal(kind, lambda);
    }
    (total < static_cast<double>(capacity) ? lambda_low : lambda_high) = lambda;
  }
  // Floors, then the remainders to the largest fractions (ties, fractions within 1e-9 of each
  // other, in queue order).
  int64_t given = 0;
  std::vector<size_t> by_fraction(kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    Kind& kind = kinds[k];
    kind.ideal = ideal(kind, lambda_high);
    kind.floor = static_cast<int64_t>(std::floor(kind.ideal + 1e-9));
    given += kind.floor * static_cast<int64_t>(kind.members.size());
    for (size_t i : kind.members) jobs[i].share = kind.floor;
    by_fraction[k] = k;
  }
  auto fraction = [&](size_t k) { return kinds[k].ideal - static_cast<double>(kinds[k].floor); };
  std::sort(by_fraction.begin(), by_fraction.end(),
            [&](size_t a, size_t b) { return fraction(a) > fraction(b); });
  for (size_t first = 0; first < by_fraction.size() && given < capacity;) {
    // One tie: kinds whose fractions are within 1e-9 of the tie's largest.
    size_t last = first + 1;
    while (last < by_fraction.size() &&
           fraction(by_fraction[first]) - fraction(by_fraction[last]) <= 1e-9) {
      ++last;
    }
    std::vector<size_t> tied;
    for (size_t k = first; k < last; ++k) {
      const auto& members = kinds[by_fraction[k]].members;
      tied.insert(tied.end(), members.begin(), members.end());
    }
    if (last - first > 1) std::sort(tied.begin(), tied.end());
    for (size_t i : tied) {
      if (given >= capacity) break;
      if (jobs[i].share < jobs[i].demand) {
        jobs[i].share++;
        given++;
      }
    }
    first = last;
  }
}

}  // namespace

void RunFairShare(PoolPass& pass) {
  // Never iterated, only looked up: hashing keeps a pass over thousands of jobs cheap.
  std::unordered_map<const JobRecord*, size_t> index;
  index.reserve(pass.queued_slot_tasks.size() + pass.running_slot_tasks.size());
  std::vector<JobShare> jobs;
  auto job_share = [&](const TaskRecord& task) -> JobShare& {
    auto [it, inserted] = index.try_emplace(task.job, jobs.size());
    if (inserted) {
      JobShare share;
      share.job = &pass.JobOf(task);
      share.weight = share.job->weight > 0 ? share.job->weight : 1;
      jobs.push_back(std::move(share));
    }
    return jobs[it->second];
  };
  // Jobs in queue order, so that every tie goes to the job further ahead.
  std::vector<const TaskRecord*> all;
  all.reserve(pass.running_slot_tasks.size() + pass.queued_slot_tasks.size());
  all.insert(all.end(), pass.running_slot_tasks.begin(), pass.running_slot_tasks.end());
  all.insert(all.end(), pass.queued_slot_tasks.begin(), pass.queued_slot_tasks.end());
  const std::vector<const TaskRecord*> in_job_order = InJobOrder(std::move(all));
  std::vector<int32_t> next_queued(in_job_order.size(), -1);  // the same job's next queued task
  jobs.reserve(in_job_order.size());
  for (size_t i = 0; i < in_job_order.size(); ++i) {
    const TaskRecord* task = in_job_order[i];
    JobShare& job = job_share(*task);
    const int64_t slots = task->slots_asked();
    if (task->state == TaskState::kQueued) {
      job.demand += slots;
      (job.last_queued < 0 ? job.first_queued : next_queued[job.last_queued]) =
          static_cast<int32_t>(i);
      job.last_queued = static_cast<int32_t>(i);
      continue;
    }
    if (task->kill_requested && !task->preempting) continue;  // ending for good
    job.demand += slots;
    // A preempted task comes back to the queue: still demand, no longer holding. Dropping it
    // from the demand would shrink the job's share while its victims leave, and preempt more.
    if (task->preempting) continue;
    job.holding += slots;
    if (task->preemptible()) {
      job.preemptible_running.push_back(task);
    } else {
      job.fixed += slots;
    }
  }
  for (auto& job : jobs) {
    std::reverse(job.preemptible_running.begin(), job.preemptible_running.end());
    job.uncapped_demand = job.demand;
    if (job.job->max_slots > 0) job.demand = std::min<int64_t>(job.demand, job.job->max_slots);
    job.demand = std::max(job.demand, job.fixed);
  }
  const int64_t capacity = pass.capacity.total_slots();
  ComputeShares(jobs, capacity);
  auto share_text = [&](const JobShare& job) {
    return "job " + job.job->job_id + "'s fair share is " + std::to_string(job.share) + " of " +
           std::to_string(capacity) + " slots in pool " + pass.PoolName() + " (demand " +
           std::to_string(job.uncapped_demand) +
           (job.demand != job.uncapped_demand
                ? " (capped at max_slots " + std::to_string(job.job->max_slots) + ")"
                : "") +
           " × weight " + FormatNumber(job.weight) + ", among " + std::to_string(jobs.size()) +
           " active jobs); it holds " + std::to_string(job.holding);
  };

  // 1. Within share, jobs furthest below their share first.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    double ratio_a = jobs[a].share > 0
                         ? static_cast<double>(jobs[a].holding) / static_cast<double>(jobs[a].share)
                         : 1e18;
    double ratio_b = jobs[b].share > 0
                         ? static_cast<double>(jobs[b].holding) / static_cast<double>(jobs[b].share)
                         : 1e18;
    return ratio_a < ratio_b;
  });
  // Queued tasks placed or reserved in this pass, by their place in in_job_order.
  std::vector<bool> handled(in_job_order.size(), false);
  struct Blocked {
    size_t job;
    int32_t task;  // in in_job_order
  };
  std::vector<Blocked> blocked;  // within share, but no room
  for (size_t j : order) {
    JobShare& job = jobs[j];
    for (int32_t i = job.first_queued; i >= 0; i = next_queued[i]) {
      const TaskRecord* task = in_job_order[i];
      const int64_t slots = task->slots_asked();
      if (job.holding + slots > job.share) continue;
      auto fit = pass.FitFor(*task, true);
      if (!fit) {
        blocked.push_back({j, i});
        continue;
      }
      handled[i] = true;
      if (fit->uses_releasing_slots) {
        pass.capacity.Take(*fit);
        pass.Wait(*task, [&] {
          return share_text(job) +
                 "; its slots are reserved, waiting for preempted "
                 "tasks to release them";
        });
      } else {
        pass.Assign(*task, *fit, "fair share: " + share_text(job), false);
      }
      job.holding += slots;
    }
  }

  // 2. A job below its share whose task cannot fit takes slots back from jobs over theirs.
  bool anyone_over_share = false;
  for (const auto& job : jobs) {
    anyone_over_share |= job.holding > job.share && !job.preemptible_running.empty();
  }
  int64_t smallest_failed = INT64_MAX;  // victims only get fewer: a larger task fails too
  for (const auto& [j, blocked_task] : blocked) {
    if (!anyone_over_share) break;
    const TaskRecord* task = in_job_order[blocked_task];
    JobShare& job = jobs[j];
    const int64_t slots = task->slots_asked();
    // A task kept off some agents (exclude_node) says nothing about others of its size.
    const bool narrowed = !task->resources.excluded_agents().empty();
    if (job.holding + slots > job.share || (!narrowed && slots >= smallest_failed)) continue;
    pass.capacity.BeginTrial();
    std::vector<std::pair<size_t, const TaskRecord*>> victims;
    std::map<size_t, int64_t> giving;  // victim job -> slots it gives back in this attempt
    bool fits = false;
    for (size_t v = 0; v < jobs.size() && !fits; ++v) {
      JobShare& over = jobs[v];
      for (const TaskRecord* candidate : over.preemptible_running) {
        if (over.holding - giving[v] <= over.share) break;
        if (candidate->preempting) continue;
        pass.capacity.MarkReleasing(*candidate);
        victims.push_back({v, candidate});
        giving[v] += candidate->slots_asked();
        if (pass.FitFor(*task, true)) {
          fits = true;
          break;
        }
      }
    }
    if (!fits) {
      pass.capacity.Rollback();
      if (!narrowed) smallest_failed = slots;
      continue;
    }
    pass.capacity.Commit();
    for (const auto& [v, victim] : victims) {
      JobShare& over = jobs[v];
      pass.Preempt(*victim,
                   "preempted by the fair-share scheduler: " + share_text(over) + "; job " +
                       job.job->job_id + " is below its share (" + std::to_string(job.holding) +
                       " of " + std::to_string(job.share) + ") and needs " +
                       SlotsText(static_cast<int32_t>(slots)),
                   task);
      over.holding -= victim->slots_asked();
      auto& list = over.preemptible_running;
      list.erase(std::find(list.begin(), list.end(), victim));
    }
    if (auto fit = pass.FitFor(*task, true)) {
      pass.capacity.Take(*fit);
    }
    handled[blocked_task] = true;
    job.holding += slots;
    pass.Wait(*task, [&] {
      return share_text(job) + "; preempting tasks of jobs over their share to make room";
    });
  }

  // 3. Idle slots nobody's share can use go to the queue in order.
  for (size_t i = 0; i < in_job_order.size(); ++i) {
    const TaskRecord* task = in_job_order[i];
    if (task->state != TaskState::kQueued || handled[i]) continue;
    JobShare& job = jobs[index.at(task->job)];
    const int32_t slots = task->slots_asked();
    if (job.job->max_slots > 0 && job.holding + slots > job.job->max_slots) {
      pass.Wait(*task, [&] {
        return share_text(job) + "; max_slots " + std::to_string(job.job->max_slots) +
               " reached, idle slots notwithstanding";
      });
      continue;
    }
    auto fit = pass.FitFor(*task, false);
    if (!fit) {
      pass.Wait(*task, [&] {
        return share_text(job) + "; needs " + SlotsText(slots) + ", pool " + pass.PoolName() +
               " has " + std::to_string(pass.capacity.idle_slots()) + " idle (at most " +
               std::to_string(pass.capacity.largest_free_on_one_agent()) + " free on one agent)";
      });
      continue;
    }
    job.holding += slots;
    pass.Assign(*task, *fit,
                "fair share: backfilled onto idle slots beyond its share; " + share_text(job) +
                    " (it may be preempted when another job needs its share)",
                true);
  }
}

}  // namespace cairn::commands
