// The agent's configuration: command-line flags over an optional YAML file (--config).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/status.h"

namespace cairn::agent {

struct AgentConfig {
  std::string master_url;  // "http://host:port" or "https://host:port"
  std::string agent_id;
  std::optional<int> slots;  // artificial CPU slots; unset = discover GPUs
  std::string resource_pool = "default";
  std::string work_root;  // "" = <TMPDIR or /tmp>/cairn-agent-<agent id>
  std::chrono::milliseconds kill_grace{10000};
  std::chrono::milliseconds heartbeat_interval{2000};
  std::string trace_file;  // "" = no trace
  // The file holding the agent token the master requires of agents (read at start; the token
  // itself is never logged). "" = none: the master then refuses this agent.
  std::string agent_token_file;
  // The CA file (PEM) an https:// master's certificate is verified with; "" = the system's CAs.
  std::string master_cert_file;
  // Notebooks, shells and TensorBoards: the address their services listen on, which the master's
  // proxy connects to (this host's address as the master reaches it), and the programs that
  // serve them (a command line, split at spaces).
  std::string service_address = "127.0.0.1";
  std::string notebook_command = "jupyter-notebook";
  std::string sshd_command = "/usr/sbin/sshd";
  std::string tensorboard_command = "tensorboard";
  // Prepared trial environments (runtime_commands, runtime_packages): where they are cached
  // ("" = <work root>/env-cache) and the package index pip installs them from.
  std::string env_cache_dir;
  std::string pip_index_url;
  std::string pip_find_links;
  // Where Determined's Python package is, for trials whose environment has none; "" = none.
  std::string determined_package_dir;
  bool pip_no_index = false;
  // How tasks run: "process" (on the host, the default) or "container" (runc, PROTOCOL.md §5b).
  std::string runtime = "process";
  // A process agent runs a task that names an image on its host anyway, with a warning in the
  // task's log; without it such a task fails.
  bool allow_images_on_host = false;
  // Container agents: where image names are looked up (<dir>/<name>.tar, an OCI archive), and
  // the image of tasks that name none ("" = such tasks fail).
  std::string image_dir;
  std::string default_image;
  // Artificial GPU slots (for tests and demos): N "cuda" slots whose device files are
  // <gpu_device_dir>/nvidia<i>; unset = discover GPUs (or --slots).
  std::optional<int> artificial_gpus;
  std::string gpu_device_dir = "/dev";
};

struct CommandLine {
  // --help or --version: the text to print on stdout before exiting 0; nothing else is set.
  std::optional<std::string> exit_text;
  log::Level log_level = log::Level::kInfo;
  AgentConfig config;
};

// Parses the arguments after the program name (CLI11). --config FILE is read first, so flags
// override its keys wherever they appear. Unknown flags or keys, missing or malformed values, and
// a missing --master or --id are InvalidArgument with a message meant for the user.
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// Applies the keys of a YAML config document (see Usage()) to `config`; `source` names the
// document in errors ("agent.yaml:3: slots: ...").
Status ApplyConfigYaml(const std::string& yaml_text, const std::string& source,
                       AgentConfig& config);

// Checks the values that every source must get right (URL shape, id characters, ranges).
Status ValidateConfig(const AgentConfig& config);

// The work root to use: config.work_root, or the default under $TMPDIR (or /tmp).
std::string EffectiveWorkRoot(const AgentConfig& config);
// The prepared environments' cache: config.env_cache_dir, or <effective work root>/env-cache.
std::string EffectiveEnvCacheDir(const AgentConfig& config);

}  // namespace cairn::agent
