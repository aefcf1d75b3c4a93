#include "replay/usage.h"

#include <algorithm>
#include <cstdio>

#include "events/envelope_util.h"
#include "events/workspace_defaults.h"

namespace cairn::replay {

namespace {

constexpr double kMicrosPerHour = 3600.0 * 1e6;

}  // namespace

double GpuHours(int64_t slot_micros) { return static_cast<double>(slot_micros) / kMicrosPerHour; }

void UsageLedger::EndParts(OpenAllocation& allocation, const std::string& agent_id,
                           int64_t end_micros) {
  // A writer's clock that stepped back charges nothing rather than a negative time.
  const int64_t held = std::max<int64_t>(0, end_micros - allocation.start_micros);
  for (auto part = allocation.live_part_slots.begin(); part != allocation.live_part_slots.end();) {
    if (!agent_id.empty() && part->first != agent_id) {
      ++part;
      continue;
    }
    const int64_t slot_micros = part->second * held;
    by_user_[allocation.user].slot_micros += slot_micros;
    by_workspace_[allocation.workspace_id].slot_micros += slot_micros;
    part = allocation.live_part_slots.erase(part);
  }
}

void UsageLedger::Apply(const events::Envelope& event) {
  log_end_ = event.offset() + 1;
  if (fence_.Admit(event) != EpochFence::Verdict::kFact) return;
  const int64_t time = event.time_unix_micros();
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted: {
      const events::TaskSubmitted& submitted = event.task_submitted();
      // A task id is submitted once; the decider refuses a second.
      if (tasks_.count(submitted.task_id())) return;
      Task& task = tasks_[submitted.task_id()];
      task.user = submitted.spec().user();
      task.job_id = submitted.job_id().empty() ? submitted.task_id() : submitted.job_id();
      // A job's workspace is its first task's until the job moves.
      job_workspaces_.try_emplace(task.job_id, WorkspaceOrUncategorized(submitted.workspace_id()));
      return;
    }
    case events::Envelope::kExperimentMoved:
      job_workspaces_[event.experiment_moved().job_id()] =
          WorkspaceOrUncategorized(event.experiment_moved().workspace_id());
      return;
    case events::Envelope::kWorkspaceCreated:
      workspace_names_[event.workspace_created().workspace_id()] = event.workspace_created().name();
      return;
    case events::Envelope::kWorkspaceUpdated:
      if (event.workspace_updated().has_name()) {
        workspace_names_[event.workspace_updated().workspace_id()] =
            event.workspace_updated().name();
      }
      return;
    case events::Envelope::kAllocationAssigned: {
      const events::AllocationAssigned& assigned = event.allocation_assigned();
      auto task = tasks_.find(assigned.task_id());
      // As the scheduler's own state: only a queued task is placed.
      if (task == tasks_.end() || task->second.exited || task->second.holds_allocation) return;
      OpenAllocation allocation;
      allocation.allocation_id = assigned.allocation_id();
      allocation.user = task->second.user;
      allocation.workspace_id = job_workspaces_[task->second.job_id];
      allocation.start_micros = time;
      for (const events::AllocationPart& part : AllocationPartsOf(assigned)) {
        allocation.live_part_slots[part.agent_id()] += part.slot_ids_size();
      }
      task->second.allocation = std::move(allocation);
      task->second.holds_allocation = true;
      ++open_allocations_;
      return;
    }
    case events::Envelope::kAllocationPartExited: {
      const events::AllocationPartExited& exited = event.allocation_part_exited();
      auto task = tasks_.find(exited.task_id());
      if (task == tasks_.end() || !task->second.holds_allocation ||
          task->second.allocation.allocation_id != exited.allocation_id() ||
          exited.agent_id().empty()) {
        return;
      }
      EndParts(task->second.allocation, exited.agent_id(), time);
      return;
    }
    case events::Envelope::kAllocationReleased:
    case events::Envelope::kTaskExited: {
      const bool released = event.has_allocation_released();
      const std::string& task_id =
          released ? event.allocation_released().task_id() : event.task_exited().task_id();
      auto task = tasks_.find(task_id);
      if (task == tasks_.end() || task->second.exited) return;
      // A release names its allocation; an exit ends whatever the task holds.
      if (released &&
          task->second.allocation.allocation_id != event.allocation_released().allocation_id()) {
        return;
      }
      if (!released) task->second.exited = true;
      if (!task->second.holds_allocation) return;
      OpenAllocation& allocation = task->second.allocation;
      EndParts(allocation, "", time);
      by_user_[allocation.user].allocations++;
      by_workspace_[allocation.workspace_id].allocations++;
      task->second.holds_allocation = false;
      --open_allocations_;
      return;
    }
    default:
      return;
  }
}

UsageReport UsageLedger::Report() const {
  UsageReport report;
  report.log_end = log_end_;
  report.by_user = by_user_;
  report.by_workspace = by_workspace_;
  report.open_allocations = open_allocations_;
  for (const auto& [workspace_id, totals] : by_workspace_) {
    auto name = workspace_names_.find(workspace_id);
    report.workspace_names[workspace_id] = name != workspace_names_.end() ? name->second : "";
  }
  return report;
}

nlohmann::json UsageJson(const UsageReport& report) {
  auto figures = [](nlohmann::json row, const UsageTotals& totals) {
    row["allocations"] = totals.allocations;
    row["slotMicroseconds"] = totals.slot_micros;
    row["gpuHours"] = GpuHours(totals.slot_micros);
    return row;
  };
  nlohmann::json users = nlohmann::json::array();
  for (const auto& [user, totals] : report.by_user) {
    users.push_back(figures({{"user", user}}, totals));
  }
  nlohmann::json workspaces = nlohmann::json::array();
  for (const auto& [workspace_id, totals] : report.by_workspace) {
    workspaces.push_back(
        figures({{"workspaceId", workspace_id}, {"name", report.workspace_names.at(workspace_id)}},
                totals));
  }
  return {{"logEnd", report.log_end},
          {"users", std::move(users)},
          {"workspaces", std::move(workspaces)},
          {"openAllocations", report.open_allocations}};
}

void PrintUsageTable(const UsageReport& report, std::ostream& out) {
  auto row = [&out](const std::string& name, const UsageTotals& totals) {
    char figures[64];
    std::snprintf(figures, sizeof figures, "%12lld  %12.6f",
                  static_cast<long long>(totals.allocations), GpuHours(totals.slot_micros));
    out << name << std::string(name.size() < 32 ? 32 - name.size() : 1, ' ') << figures << "\n";
  };
  out << "GPU-hours (slot-hours) of the allocations that ended in offsets 0 to "
      << (report.log_end == 0 ? std::string("- (the log is empty)")
                              : std::to_string(report.log_end - 1))
      << "; " << report.open_allocations << " still running (not counted)\n\n";
  out << "user                             allocations     gpu_hours\n";
  for (const auto& [user, totals] : report.by_user) row(user, totals);
  out << "\nworkspace                        allocations     gpu_hours\n";
  for (const auto& [workspace_id, totals] : report.by_workspace) {
    row(std::to_string(workspace_id) + " " + report.workspace_names.at(workspace_id), totals);
  }
}

}  // namespace cairn::replay
