// How an agent serves a notebook, shell or TensorBoard (PROTOCOL.md §5): the program it starts in
// place of an entrypoint (Jupyter, sshd, TensorBoard) on a port of its own at the agent's service
// address, and how it learns that the service answers, which it reports (TaskReady) so that the
// master's proxy opens. The per-task secrets (Jupyter's token, the shell's host key and the
// owner's key pair) are derived from the agent token as the master derives them
// (base/task_secrets.h): nothing secret travels in an event, an argv or a log.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::agent {

struct ServiceSettings {
  std::string address = "127.0.0.1";  // where services listen; the master connects here
  // Command lines, split at spaces.
  std::string notebook_command = "jupyter-notebook";
  std::string sshd_command = "/usr/sbin/sshd";
  std::string tensorboard_command = "tensorboard";
};

struct ServiceFile {
  std::string path;
  std::string content;
  mode_t mode = 0600;
};

struct ServicePlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;    // added to the task's environment, "KEY=VALUE"
  std::vector<std::string> dirs;   // created (mode 0700) before the files
  std::vector<ServiceFile> files;  // written before it starts
  enum class Probe { kHttp, kSshBanner } probe = Probe::kHttp;
  std::string probe_path;  // kHttp: what to GET; any answer below 400 means ready
  std::string login_user;  // shells: the account sshd accepts logins for
};

// What to start for a notebook, shell or TensorBoard task (pure). `login_user` is the account
// the agent runs as (sshd, started unprivileged by it, can only log that account in).
// InvalidArgument for another task type, a TensorBoard without event directories, or a key that
// cannot be made (no agent token: the agent cannot derive the task's secrets).
Result<ServicePlan> PlanService(const events::TaskSpec& spec, const std::string& task_id,
                                const ServiceSettings& settings, const std::string& agent_token,
                                int port, const std::string& work_dir,
                                const std::string& login_user);

// A port free on `address` now (bound and released; the service binds it right after).
Result<int> FreePort(const std::string& address);
// Creates the plan's directories and writes its files with their modes.
Status WriteServiceFiles(const ServicePlan& plan);
// Probes the service every `interval` until it answers (OK), `gave_up()` turns true
// (Unavailable: the task ended) or `deadline` passes (DeadlineExceeded).
Status AwaitService(const ServicePlan& plan, const std::string& address, int port,
                    const std::function<bool()>& gave_up,
                    std::chrono::steady_clock::time_point deadline,
                    std::chrono::milliseconds interval = std::chrono::milliseconds(100));
// The name of the account this process runs as.
std::string CurrentUserName();

}  // namespace cairn::agent
