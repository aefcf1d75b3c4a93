// Turns a placement order into what the process runner starts (PROTOCOL.md §5): argv, the
// environment and the work directory. Pure: no I/O.
#pragma once

#include <string>
#include <vector>

#include "agent/process_runner.h"
#include "agent/slot_discovery.h"
#include "base/status.h"
#include "events.pb.h"
#include "events/envelope_util.h"

namespace cairn::agent {

// Where trials keep their prepared environments (runtime_commands and runtime_packages, built by
// the harness: agent/harness/cairn_harness/prepared_env.py) and the package index pip installs
// from.
struct EnvironmentSettings {
  std::string cache_dir;       // absolute; tasks get it as CAIRN_ENV_CACHE
  std::string pip_index_url;   // "" = pip's default; PIP_INDEX_URL
  std::string pip_find_links;  // "" = none; PIP_FIND_LINKS (space-separated paths or URLs)
  bool pip_no_index = false;   // PIP_NO_INDEX: find-links only
};

struct TaskLaunchSettings {
  std::string master_url;
  std::string agent_id;
  std::string resource_pool;  // used when the order names none
  std::string work_root;
  std::vector<SlotDevice> devices;
  std::vector<std::string> base_env;  // the agent's own environment, "KEY=VALUE"
  // Where the trial harness (the cairn_harness Python package) is: put on PYTHONPATH for trials.
  std::string harness_dir;
  // Where Determined's Python package is (trials get it as CAIRN_DETERMINED_PATH); "" = none.
  std::string determined_package_dir;
  // The master's agent token: the task's CAIRN_ALLOCATION_TOKEN is derived from it.
  std::string agent_token;
  // The CA file the agent verifies an https:// master with; "" = none given.
  std::string master_cert_file;
  EnvironmentSettings environments;
};

// This agent's part of an allocation (several agents share a gang), and its rank among them;
// NotFound when the order names no part here.
Result<std::pair<events::AllocationPart, int>> PartFor(const events::AllocationAssigned& order,
                                                       const std::string& agent_id);

// The directory a task of `allocation_id` runs in when its spec names none:
// <work_root>/<allocation id with every character but [A-Za-z0-9._-] replaced by '_'>.
std::string DefaultWorkDir(const std::string& work_root, const std::string& allocation_id);

// The devices of this agent that `part` names, in its order; InvalidArgument for a slot id the
// agent does not have.
Result<std::vector<SlotDevice>> SlotsOf(const events::AllocationPart& part,
                                        const std::vector<SlotDevice>& devices);

// The image the task runs in on `slots`: spec.image_gpu when any of them is a GPU, else
// spec.image_cpu (Determined's per-device-type images); "" = none.
std::string ImageFor(const events::TaskSpec& spec, const std::vector<SlotDevice>& slots);

// `argv` run after /bin/sh sources the work directory's startup-hook.sh, as Determined's command,
// notebook and shell entrypoints do (a trial's harness sources it itself); the agent uses it only
// when the hook is there, so that a program that cannot start still says so. A hook that fails
// fails the task with its status.
std::vector<std::string> WithStartupHook(std::vector<std::string> argv);

// The spec's startup hook (task_container_defaults.startup_hook) put before `process`'s program:
// /bin/sh evaluates it in the task's shell with `set -e` (what it exports reaches the program; a
// failing command fails the task with its status), then execs the program. The script travels in
// the shell's environment (kStartupHookVariable, unset before the exec), not in its argv, which
// every user of the host may read. Every kind of task takes it, first, as Determined's
// entrypoints source it.
inline constexpr const char* kStartupHookVariable = "CAIRN_TCD_STARTUP_HOOK";
void AddClusterStartupHook(const std::string& hook, ProcessSpec& process);

// The environment is the agent's, then DET_MASTER, DET_TASK_ID, DET_ALLOCATION_ID,
// DET_AGENT_ID, DET_TASK_TYPE, DET_SLOT_IDS ("[0,1]"), DET_RESOURCE_POOL, the same under
// CAIRN_*, CUDA_VISIBLE_DEVICES (GPU uuids, or indexes when a uuid is unknown) when the slots
// are GPUs, CAIRN_MASTER_CERT_FILE / DET_MASTER_CERT_FILE (the CA file that verifies an https://
// master) when the agent has one, CAIRN_NUM_AGENTS / CAIRN_AGENT_RANK (a gang's size and this
// part's rank), CAIRN_SLOT_TYPE ("cuda" when the slots are GPUs, else "cpu": which variant of an
// experiment's environment lists applies), CAIRN_ENV_CACHE and the PIP_* variables of
// settings.environments that are set, for
// trials PYTHONPATH with the harness directory first, then spec.environment_variables (a later
// value of a name replaces an earlier one), and last CAIRN_ALLOCATION_TOKEN when the agent has a
// token, with, for trials, DET_SESSION_TOKEN (base/password.h TaskSessionToken), DET_USER (the
// owner) and CAIRN_DETERMINED_PATH when the agent names Determined's package.
// InvalidArgument for an empty entrypoint, a slot id this agent does not have, or an
// environment variable that is neither NAME=VALUE nor NAME (which unsets NAME).
Result<ProcessSpec> PlanTask(const events::AllocationAssigned& order,
                             const TaskLaunchSettings& settings);

}  // namespace cairn::agent
