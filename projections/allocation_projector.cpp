#include "projections/allocation_projector.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "events/envelope_util.h"
#include "events/workspace_defaults.h"
#include "projections/view_reads.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kLedgerAllocationPrefix = "alloc/";
constexpr std::string_view kLedgerJobPrefix = "job/";
constexpr std::string_view kLedgerTaskPrefix = "task/";
constexpr std::string_view kLedgerWorkspacePrefix = "workspace/";

std::string LedgerKey(std::string_view prefix, std::string_view id) {
  std::string key(prefix);
  key += id;
  return key;
}

std::string LedgerWorkspaceKey(int32_t workspace_id) {
  std::string key(kLedgerWorkspacePrefix);
  AppendBigEndian32(&key, static_cast<uint32_t>(workspace_id));
  return key;
}

// The labels of an experiment's configuration (config_json's "labels"); none when unreadable.
std::vector<std::string> ConfigLabels(const std::string& config_json) {
  std::vector<std::string> labels;
  const auto config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object() || !config.contains("labels") || !config["labels"].is_array()) {
    return labels;
  }
  for (const auto& label : config["labels"]) {
    if (label.is_string()) labels.push_back(label.get<std::string>());
  }
  return labels;
}

Status UpdateLedgerJob(ViewStore& store, const std::string& job_id,
                       const std::function<void(views::AllocationJobView&)>& change) {
  if (job_id.empty()) return Status::Ok();
  views::AllocationJobView job;
  const std::string key = LedgerKey(kLedgerJobPrefix, job_id);
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &job));
  if (!found) job.set_workspace_id(kUncategorizedWorkspace);
  change(job);
  return store.PutMessage(key, job);
}

// Ends the parts of the allocation at `key` held by `agent_id` (every part when empty) at `time`,
// and the allocation itself once no part is held.
Status EndLedgerParts(ViewStore& store, const std::string& key, const std::string& agent_id,
                      int64_t time) {
  views::AllocationView allocation;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &allocation));
  if (!found || allocation.end_unix_micros() != 0) return Status::Ok();
  // A writer's clock that stepped back ends a part at its start, never before it.
  const int64_t end = std::max(time, allocation.start_unix_micros());
  bool held = false;
  for (views::AllocationPartView& part : *allocation.mutable_parts()) {
    if (part.end_unix_micros() == 0 && (agent_id.empty() || part.agent_id() == agent_id)) {
      part.set_end_unix_micros(end);
    }
    held = held || part.end_unix_micros() == 0;
  }
  if (!held) allocation.set_end_unix_micros(end);
  return store.PutMessage(key, allocation);
}

Status OnAllocationEnd(const Envelope& event, ViewStore& store) {
  const bool released = event.has_allocation_released();
  const std::string& task_id =
      released ? event.allocation_released().task_id() : event.task_exited().task_id();
  views::AllocationTaskView task;
  const std::string task_key = LedgerKey(kLedgerTaskPrefix, task_id);
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(task_key, &task));
  if (!found || task.exited()) return Status::Ok();
  if (!released) task.set_exited(true);
  if (!task.open_allocation_key().empty()) {
    // A release names its allocation; an exit ends whatever the task holds.
    if (released &&
        !task.open_allocation_key().ends_with(event.allocation_released().allocation_id())) {
      return Status::Ok();
    }
    CAIRN_RETURN_IF_ERROR(
        EndLedgerParts(store, task.open_allocation_key(), "", event.time_unix_micros()));
    task.clear_open_allocation_key();
  }
  return store.PutMessage(task_key, task);
}

}  // namespace

Status AllocationProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kTaskSubmitted: {
      const events::TaskSubmitted& submitted = event.task_submitted();
      const std::string task_key = LedgerKey(kLedgerTaskPrefix, submitted.task_id());
      CAIRN_ASSIGN_OR_RETURN(auto known, store.Get(task_key));
      if (known) return Status::Ok();  // a task is submitted once
      views::AllocationTaskView task;
      task.set_username(submitted.spec().user());
      task.set_job_id(submitted.job_id().empty() ? submitted.task_id() : submitted.job_id());
      task.set_task_type(submitted.spec().task_type());
      // A job's workspace is its first task's until the job moves.
      views::AllocationJobView job;
      const std::string job_key = LedgerKey(kLedgerJobPrefix, task.job_id());
      CAIRN_ASSIGN_OR_RETURN(bool job_known, store.GetMessage(job_key, &job));
      if (!job_known) {
        job.set_workspace_id(WorkspaceOrUncategorized(submitted.workspace_id()));
        CAIRN_RETURN_IF_ERROR(store.PutMessage(job_key, job));
      }
      return store.PutMessage(task_key, task);
    }
    case Envelope::kExperimentCreated: {
      const events::ExperimentCreated& created = event.experiment_created();
      return UpdateLedgerJob(store, created.job_id(), [&](views::AllocationJobView& job) {
        job.set_workspace_id(WorkspaceOrUncategorized(created.workspace_id()));
        job.set_experiment_id(created.experiment_id());
        job.clear_labels();
        for (auto& label : ConfigLabels(created.config_json())) job.add_labels(std::move(label));
      });
    }
    case Envelope::kExperimentUpdated: {
      const events::ExperimentUpdated& updated = event.experiment_updated();
      if (!updated.labels_set()) return Status::Ok();
      return UpdateLedgerJob(store, updated.job_id(), [&](views::AllocationJobView& job) {
        *job.mutable_labels() = updated.labels();
      });
    }
    case Envelope::kExperimentMoved: {
      const events::ExperimentMoved& moved = event.experiment_moved();
      return UpdateLedgerJob(store, moved.job_id(), [&](views::AllocationJobView& job) {
        job.set_workspace_id(WorkspaceOrUncategorized(moved.workspace_id()));
      });
    }
    case Envelope::kWorkspaceCreated:
      return store.Put(LedgerWorkspaceKey(event.workspace_created().workspace_id()),
                       event.workspace_created().name());
    case Envelope::kWorkspaceUpdated:
      if (!event.workspace_updated().has_name()) return Status::Ok();
      return store.Put(LedgerWorkspaceKey(event.workspace_updated().workspace_id()),
                       event.workspace_updated().name());
    case Envelope::kAllocationAssigned: {
      const events::AllocationAssigned& assigned = event.allocation_assigned();
      views::AllocationTaskView task;
      const std::string task_key = LedgerKey(kLedgerTaskPrefix, assigned.task_id());
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(task_key, &task));
      // As the scheduler's own state: only a queued task is placed.
      if (!found || task.exited() || !task.open_allocation_key().empty()) return Status::Ok();
      views::AllocationView allocation;
      allocation.set_allocation_id(assigned.allocation_id());
      allocation.set_task_id(assigned.task_id());
      allocation.set_task_type(task.task_type());
      allocation.set_username(task.username());
      allocation.set_job_id(task.job_id());
      allocation.set_resource_pool(assigned.resource_pool());
      allocation.set_start_unix_micros(event.time_unix_micros());
      int32_t slots = 0;
      for (const events::AllocationPart& part : AllocationPartsOf(assigned)) {
        views::AllocationPartView* view = allocation.add_parts();
        view->set_agent_id(part.agent_id());
        view->set_slots(part.slot_ids_size());
        slots += part.slot_ids_size();
      }
      allocation.set_slots(slots);
      std::string key(kLedgerAllocationPrefix);
      AppendBigEndian64(&key,
                        static_cast<uint64_t>(std::max<int64_t>(0, event.time_unix_micros())));
      key += assigned.allocation_id();
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, allocation));
      task.set_open_allocation_key(key);
      return store.PutMessage(task_key, task);
    }
    case Envelope::kAllocationPartExited: {
      const events::AllocationPartExited& exited = event.allocation_part_exited();
      if (exited.agent_id().empty()) return Status::Ok();
      views::AllocationTaskView task;
      CAIRN_ASSIGN_OR_RETURN(
          bool found, store.GetMessage(LedgerKey(kLedgerTaskPrefix, exited.task_id()), &task));
      if (!found || task.open_allocation_key().empty() ||
          !task.open_allocation_key().ends_with(exited.allocation_id())) {
        return Status::Ok();
      }
      return EndLedgerParts(store, task.open_allocation_key(), exited.agent_id(),
                            event.time_unix_micros());
    }
    case Envelope::kAllocationReleased:
    case Envelope::kTaskExited:
      return OnAllocationEnd(event, store);
    default:
      return Status::Ok();
  }
}

Result<AllocationLedgerRead> ReadAllocationLedger(ViewReader& reader, int64_t after,
                                                  int64_t before) {
  AllocationLedgerRead read;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(
      reader.Scan(kLedgerAllocationPrefix, [&](std::string_view key, std::string_view value) {
        views::AllocationView allocation;
        parse_error = ParseView(value, key, &allocation);
        if (!parse_error.ok()) return false;
        if (read.first_start_unix_micros == 0) {
          read.first_start_unix_micros = allocation.start_unix_micros();
        }
        if (allocation.start_unix_micros() >= before) return false;  // in start order
        if (allocation.end_unix_micros() == 0 || allocation.end_unix_micros() >= after) {
          read.allocations.push_back(std::move(allocation));
        }
        return true;
      }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  CAIRN_ASSIGN_OR_RETURN(views::ProjectorCheckpoint checkpoint, ReadCheckpoint(reader));
  read.folded_until_unix_micros = checkpoint.max_event_time_unix_micros();
  for (const views::AllocationView& allocation : read.allocations) {
    if (read.jobs.count(allocation.job_id())) continue;
    CAIRN_ASSIGN_OR_RETURN(auto job, ReadView<views::AllocationJobView>(
                                         reader, LedgerKey(kLedgerJobPrefix, allocation.job_id())));
    views::AllocationJobView& kept = read.jobs[allocation.job_id()];
    if (job) kept = std::move(*job);
    if (!job) kept.set_workspace_id(kUncategorizedWorkspace);
    if (read.workspace_names.count(kept.workspace_id())) continue;
    CAIRN_ASSIGN_OR_RETURN(auto name, reader.Get(LedgerWorkspaceKey(kept.workspace_id())));
    read.workspace_names[kept.workspace_id()] =
        name ? *name
             : (kept.workspace_id() == kUncategorizedWorkspace ? "Uncategorized" : std::string());
  }
  return read;
}

}  // namespace cairn::projections
