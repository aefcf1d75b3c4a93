#include "replay/state_format.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "events/envelope_util.h"
#include "events/redaction.h"
#include "projections/agent_projector.h"
#include "projections/experiment_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/registry_projector.h"
#include "projections/task_projector.h"

namespace cairn::replay {

namespace {

Result<nlohmann::json> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) return Status::Internal("JSON rendering failed: " + status.ToString());
  return nlohmann::json::parse(text);
}

template <typename View>
Result<nlohmann::json> ToJsonArray(const std::vector<View>& views) {
  nlohmann::json array = nlohmann::json::array();
  for (const auto& view : views) {
    CAIRN_ASSIGN_OR_RETURN(auto json, ToJson(view));
    array.push_back(std::move(json));
  }
  return array;
}

// "QUEUED" from TASK_STATE_QUEUED.
std::string ShortName(const std::string& full, const std::string& prefix) {
  return full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
}

std::string Time(int64_t micros) { return micros == 0 ? "-" : FormatRfc3339(micros); }

std::string Bool(bool value) { return value ? "yes" : "no"; }

// Prints rows with each column padded to its widest cell.
void PrintTable(const std::string& title, const std::vector<std::vector<std::string>>& rows,
                std::ostream& out) {
  out << title << " (" << rows.size() - 1 << ")\n";
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
  out << "\n";
}

std::string JoinSlots(const google::protobuf::RepeatedField<int32_t>& slots) {
  std::string text;
  for (int slot : slots) text += (text.empty() ? "" : ",") + std::to_string(slot);
  return text.empty() ? "-" : text;
}

std::string Exit(const TaskView& task) {
  if (task.state() != views::TASK_STATE_TERMINATED) return "-";
  std::string text;
  if (task.has_exit_code()) text = "code " + std::to_string(task.exit_code());
  if (task.has_signal())
    text += (text.empty() ? "" : ", ") + ("signal " + std::to_string(task.signal()));
  if (text.empty()) text = "none";
  return text + " (" + task.exit_reason() + ")";
}

}  // namespace

const std::vector<std::string>& StateProjections() {
  static const std::vector<std::string> kRead = {
      projections::kTasksProjector, projections::kAgentsProjector, projections::kJobQueueProjector,
      projections::kExperimentsProjector, projections::kRegistryProjector};
  return kRead;
}

Result<nlohmann::json> StateJson(Queries& state, uint64_t next_offset,
                                 const StateJsonOptions& options) {
  CAIRN_ASSIGN_OR_RETURN(auto agents, state.ListAgents());
  // A page is read from the queue's head without loading the rest (job_queue_projector.h).
  std::vector<JobView> jobs;
  size_t queue_total = 0;
  if (options.queue_limit > 0) {
    CAIRN_ASSIGN_OR_RETURN(auto page, state.JobQueuePage("", 0, options.queue_limit, false));
    jobs = std::move(page.jobs);
    queue_total = page.total;
  } else {
    CAIRN_ASSIGN_OR_RETURN(jobs, state.JobQueue(""));
  }
  std::vector<TaskView> tasks;
  if (options.live_tasks_only) {
    // The live tasks are the queue's jobs' tasks: read one by one, not the whole history.
    for (const auto& job : jobs) {
      for (const auto& live : job.tasks()) {
        CAIRN_ASSIGN_OR_RETURN(auto task, state.GetTask(live.task_id()));
        if (task) tasks.push_back(std::move(*task));
      }
    }
  } else {
    CAIRN_ASSIGN_OR_RETURN(tasks, state.ListTasks());
  }
  nlohmann::json document;
  document["nextOffset"] = std::to_string(next_offset);
  CAIRN_ASSIGN_OR_RETURN(document["tasks"], ToJsonArray(tasks));
  CAIRN_ASSIGN_OR_RETURN(document["agents"], ToJsonArray(agents));
  CAIRN_ASSIGN_OR_RETURN(document["jobQueue"], ToJsonArray(jobs));
  if (options.queue_limit > 0) document["jobQueueTotal"] = queue_total;
  if (options.experiments) {
    CAIRN_ASSIGN_OR_RETURN(auto experiments, state.ListExperiments());
    if (options.live_tasks_only) {
      experiments.erase(
          std::remove_if(experiments.begin(), experiments.end(),
                         [](const ExperimentView& experiment) {
                           return experiment.state() == events::EXPERIMENT_STATE_COMPLETED ||
                                  experiment.state() == events::EXPERIMENT_STATE_CANCELED ||
                                  experiment.state() == events::EXPERIMENT_STATE_ERROR ||
                                  experiment.deleted();
                         }),
          experiments.end());
    }
    if (options.experiment_limit > 0) {
      document["experimentsTotal"] = experiments.size();
      if (experiments.size() > options.experiment_limit)
        experiments.resize(options.experiment_limit);
    }
    // Read by operators and admins: what an owner sees, so no storage credential or variable
    // marked secret (events/redaction.h).
    for (auto& experiment : experiments) {
      experiment.set_config_json(RedactConfigJson(experiment.config_json(), Audience::kOwner));
      experiment.set_original_config(
          RedactConfigYaml(experiment.original_config(), Audience::kOwner));
    }
    CAIRN_ASSIGN_OR_RETURN(document["experiments"], ToJsonArray(experiments));
  }
  CAIRN_ASSIGN_OR_RETURN(auto models, state.ListModels());
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& model : models) {
    CAIRN_ASSIGN_OR_RETURN(auto versions, state.ListModelVersions(model.id()));
    CAIRN_ASSIGN_OR_RETURN(auto rendered, ToJson(model));
    CAIRN_ASSIGN_OR_RETURN(rendered["modelVersions"], ToJsonArray(versions));
    listed.push_back(std::move(rendered));
  }
  document["models"] = std::move(listed);
  return document;
}

Status PrintStateJson(Queries& state, uint64_t next_offset, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(auto document, StateJson(state, next_offset, {}));
  out << document.dump(2) << "\n";
  return Status::Ok();
}

Status PrintStateTable(Queries& state, uint64_t next_offset, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(auto tasks, state.ListTasks());
  CAIRN_ASSIGN_OR_RETURN(auto agents, state.ListAgents());
  CAIRN_ASSIGN_OR_RETURN(auto jobs, state.JobQueue(""));
  if (next_offset == 0) {
    out << "state before the first event\n\n";
  } else {
    out << "state after offsets 0.." << next_offset - 1 << "\n\n";
  }

  std::vector<std::vector<std::string>> rows = {
      {"TASK", "JOB", "STATE", "POOL", "SLOTS", "AGENT", "SLOT_IDS", "SUBMITTED", "EXIT"}};
  for (const auto& task : tasks) {
    rows.push_back({task.task_id(), task.job_id(),
                    ShortName(views::TaskState_Name(task.state()), "TASK_STATE_") +
                        (task.kill_requested() && task.state() != views::TASK_STATE_TERMINATED
                             ? " (kill requested)"
                             : ""),
                    task.resource_pool(), std::to_string(task.slots()),
                    task.agent_id().empty() ? "-" : task.agent_id(), JoinSlots(task.slot_ids()),
                    Time(task.submit_time_unix_micros()), Exit(task)});
  }
  PrintTable("TASKS", rows, out);

  rows = {{"AGENT", "POOL", "SLOTS", "USED", "CONNECTED", "ENABLED", "DRAINING", "INCARNATION",
           "ALLOCATIONS"}};
  for (const auto& agent : agents) {
    int used = 0;
    std::string allocations;
    for (const auto& allocation : agent.allocations()) {
      used += allocation.slot_ids_size();
      allocations += (allocations.empty() ? "" : " ") + allocation.task_id();
    }
    rows.push_back({agent.agent_id(), agent.resource_pool(), std::to_string(agent.slot_count()),
                    std::to_string(used), Bool(agent.connected()), Bool(agent.enabled()),
                    Bool(agent.draining()), agent.incarnation(),
                    allocations.empty() ? "-" : allocations});
  }
  PrintTable("AGENTS", rows, out);

  rows = {
      {"POOL", "#", "JOB", "TASK", "STATE", "PRIORITY", "REQUESTED", "ALLOCATED", "USER", "NAME"}};
  for (const auto& job : jobs) {
    rows.push_back({job.resource_pool(), std::to_string(job.jobs_ahead()), job.job_id(),
                    job.task_id(), ShortName(views::JobState_Name(job.state()), "JOB_STATE_"),
                    std::to_string(job.priority()), std::to_string(job.requested_slots()),
                    std::to_string(job.allocated_slots()), job.user(), job.name()});
  }
  PrintTable("JOB QUEUE", rows, out);

  CAIRN_ASSIGN_OR_RETURN(auto models, state.ListModels());
  rows = {{"MODEL", "NAME", "WORKSPACE", "OWNER", "ARCHIVED", "UPDATED", "VERSIONS"}};
  for (const auto& model : models) {
    CAIRN_ASSIGN_OR_RETURN(auto versions, state.ListModelVersions(model.id()));
    std::string listed;
    for (const auto& version : versions) {
      listed += (listed.empty() ? "" : " ") + std::to_string(version.version()) + ":" +
                version.checkpoint_uuid();
    }
    rows.push_back({std::to_string(model.id()), model.name(), std::to_string(model.workspace_id()),
                    model.username().empty() ? "-" : model.username(), Bool(model.archived()),
                    Time(model.last_updated_time_unix_micros()), listed.empty() ? "-" : listed});
  }
  PrintTable("MODELS", rows, out);
  return Status::Ok();
}

}  // namespace cairn::replay
