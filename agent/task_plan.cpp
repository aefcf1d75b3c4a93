#include "agent/task_plan.h"

#include <algorithm>
#include <map>

#include "base/password.h"
#include "events/envelope_util.h"

namespace cairn::agent {
namespace {

// An environment that keeps first-seen order while letting a later value replace an earlier one.
class Environment {
 public:
  // "NAME=VALUE" sets NAME; "NAME" alone unsets it (Docker's reading of Determined's entry).
  Status Add(const std::string& entry) {
    size_t equals = entry.find('=');
    if (equals == 0 || entry.empty()) {
      return Status::InvalidArgument("environment variable '" + entry +
                                     "' is not NAME=VALUE or NAME");
    }
    if (equals == std::string::npos) {
      Unset(entry);
      return Status::Ok();
    }
    Set(entry.substr(0, equals), entry.substr(equals + 1));
    return Status::Ok();
  }
  void Unset(const std::string& name) {
    auto it = index_.find(name);
    if (it == index_.end()) return;
    const size_t position = it->second;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(position));
    index_.erase(it);
    for (auto& [other, index] : index_) {
      if (index > position) --index;
    }
  }
  void Set(const std::string& name, const std::string& value) {
    auto [it, inserted] = index_.emplace(name, entries_.size());
    if (inserted) {
      entries_.push_back(name + "=" + value);
    } else {
      entries_[it->second] = name + "=" + value;
    }
  }
  std::vector<std::string> Take() { return std::move(entries_); }

 private:
  std::vector<std::string> entries_;
  std::map<std::string, size_t> index_;
};

bool IsSafeCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string DefaultWorkDir(const std::string& work_root, const std::string& allocation_id) {
  std::string name = allocation_id;
  for (char& c : name) {
    if (!IsSafeCharacter(c)) c = '_';
  }
  // "." and ".." are safe characters but not safe names.
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "_" + name;
  return work_root + "/" + name;
}

Result<std::pair<events::AllocationPart, int>> PartFor(const events::AllocationAssigned& order,
                                                       const std::string& agent_id) {
  auto parts = AllocationPartsOf(order);
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    if (parts[rank].agent_id() == agent_id) {
      return std::make_pair(std::move(parts[rank]), static_cast<int>(rank));
    }
  }
  return Status::NotFound("allocation " + order.allocation_id() + " has no part on agent " +
                          agent_id);
}

Result<std::vector<SlotDevice>> SlotsOf(const events::AllocationPart& part,
                                        const std::vector<SlotDevice>& devices) {
  std::vector<SlotDevice> slots;
  for (int slot_id : part.slot_ids()) {
    auto device = std::find_if(devices.begin(), devices.end(), [&](const SlotDevice& candidate) {
      return candidate.id == slot_id;
    });
    if (device == devices.end()) {
      return Status::InvalidArgument("slot " + std::to_string(slot_id) +
                                     " is not a slot of this agent");
    }
    slots.push_back(*device);
  }
  return slots;
}

std::string ImageFor(const events::TaskSpec& spec, const std::vector<SlotDevice>& slots) {
  bool gpu = std::any_of(slots.begin(), slots.end(),
                         [](const SlotDevice& slot) { return slot.type == "cuda"; });
  return gpu ? spec.image_gpu() : spec.image_cpu();
}

Result<ProcessSpec> PlanTask(const events::AllocationAssigned& order,
                             const TaskLaunchSettings& settings) {
  const events::TaskSpec& spec = order.spec();
  CAIRN_ASSIGN_OR_RETURN(auto own, PartFor(order, settings.agent_id));
  const auto& [part, rank] = own;
  // A notebook's, shell's or TensorBoard's program is the agent's to choose (PlanService).
  if (!IsInteractiveTask(spec.task_type()) &&
      (spec.entrypoint().empty() || spec.entrypoint(0).empty())) {
    return Status::InvalidArgument("the task spec has no entrypoint");
  }
  CAIRN_ASSIGN_OR_RETURN(std::vector<SlotDevice> slots, SlotsOf(part, settings.devices));
  std::string slot_ids = "[";
  std::string cuda_devices;
  bool any_gpu = false;
  for (const SlotDevice& device : slots) {
    if (slot_ids.size() > 1) slot_ids += ",";
    slot_ids += std::to_string(device.id);
    if (device.type == "cuda") {
      any_gpu = true;
      if (!cuda_devices.empty()) cuda_devices += ",";
      cuda_devices += device.uuid.empty() ? std::to_string(device.id) : device.uuid;
    }
  }
  slot_ids += "]";
  std::string pool = order.resource_pool().empty() ? settings.resource_pool : order.resource_pool();

  Environment env;
  // A malformed entry in the agent's own environment is not the order's fault: it is left out.
  for (const auto& entry : settings.base_env) env.Add(entry).ok();
  const std::pair<const char*, std::string> task_values[] = {
      {"MASTER", settings.master_url},
      {"TASK_ID", order.task_id()},
      {"ALLOCATION_ID", order.allocation_id()},
      {"AGENT_ID", settings.agent_id},
      {"TASK_TYPE", TaskTypeName(spec.task_type())},
      {"SLOT_IDS", slot_ids},
      {"RESOURCE_POOL", pool},
  };
  for (const char* prefix : {"DET_", "CAIRN_"}) {
    for (const auto& [name, value] : task_values) env.Set(prefix + std::string(name), value);
  }
  if (any_gpu) env.Set("CUDA_VISIBLE_DEVICES", cuda_devices);
  // The task verifies the master as the agent does (Determined's harness reads
  // DET_MASTER_CERT_FILE).
  if (!settings.master_cert_file.empty()) {
    for (const char* name : {"DET_MASTER_CERT_FILE", "CAIRN_MASTER_CERT_FILE"}) {
      env.Set(name, settings.master_cert_file);
    }
  }
  const int agents = std::max(order.parts_size(), 1);
  env.Set("CAIRN_NUM_AGENTS", std::to_string(agents));
  env.Set("CAIRN_AGENT_RANK", std::to_string(rank));
  env.Set("CAIRN_SLOT_TYPE", any_gpu ? "cuda" : "cpu");
  const EnvironmentSettings& environments = settings.environments;
  if (!environments.cache_dir.empty()) env.Set("CAIRN_ENV_CACHE", environments.cache_dir);
  if (!environments.pip_index_url.empty()) env.Set("PIP_INDEX_URL", environments.pip_index_url);
  if (!environments.pip_find_links.empty()) env.Set("PIP_FIND_LINKS", environments.pip_find_links);
  if (environments.pip_no_index) env.Set("PIP_NO_INDEX", "1");
  if (spec.task_type() == events::TASK_TYPE_TRIAL && !settings.harness_dir.empty()) {
    const char* existing = nullptr;
    for (const auto& entry : settings.base_env) {
      if (entry.rfind("PYTHONPATH=", 0) == 0) existing = entry.c_str() + 11;
    }
    env.Set("PYTHONPATH",
            settings.harness_dir + (existing && *existing ? ":" + std::string(existing) : ""));
  }
  for (const auto& entry : spec.environment_variables()) CAIRN_RETURN_IF_ERROR(env.Add(entry));
  // After the task's own variables, so that a task cannot present another token than its own.
  if (!settings.agent_token.empty()) {
    env.Set("CAIRN_ALLOCATION_TOKEN", AllocationToken(settings.agent_token, order.allocation_id()));
  }
  if (spec.task_type() == events::TASK_TYPE_TRIAL) {
    // What Determined's package authenticates with and requires (its harness never logs in).
    if (!settings.agent_token.empty()) {
      env.Set("DET_SESSION_TOKEN", TaskSessionToken(settings.agent_token, order.allocation_id()));
    }
    env.Set("DET_USER", spec.user());
    if (!settings.determined_package_dir.empty()) {
      env.Set("CAIRN_DETERMINED_PATH", settings.determined_package_dir);
    }
  }

  ProcessSpec process;
  process.argv.assign(spec.entrypoint().begin(), spec.entrypoint().end());
  process.work_dir = spec.work_dir().empty()
                         ? DefaultWorkDir(settings.work_root, order.allocation_id())
                         : spec.work_dir();
  // An OpenPAI task (commands/pai/) is told its working directory, which only the agent knows.
  const bool openpai =
      std::any_of(spec.environment_variables().begin(), spec.environment_variables().end(),
                  [](const std::string& entry) { return entry.rfind("PAI_JOB_NAME=", 0) == 0; });
  if (openpai) env.Set("PAI_WORK_DIR", process.work_dir);
  process.env = env.Take();
  return process;
}

std::vector<std::string> WithStartupHook(std::vector<std::string> argv) {
  std::vector<std::string> wrapped = {
      "/bin/sh", "-c",
      "if [ -f ./startup-hook.sh ]; then . ./startup-hook.sh || exit $?; fi; exec \"$@\"",
      "startup-hook"};
  wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin()),
                 std::make_move_iterator(argv.end()));
  return wrapped;
}

void AddClusterStartupHook(const std::string& hook, ProcessSpec& process) {
  const std::string variable = kStartupHookVariable;
  std::vector<std::string> wrapped = {
      "/bin/sh", "-c",
      "set -e; eval \"$" + variable + "\"; unset " + variable + "; set +e; exec \"$@\"",
      "tcd-startup-hook"};
  wrapped.insert(wrapped.end(), std::make_move_iterator(process.argv.begin()),
                 std::make_move_iterator(process.argv.end()));
  process.argv = std::move(wrapped);
  process.env.push_back(variable + "=" + hook);
}

}  // namespace cairn::agent
