// cairn-agent: runs a node's tasks for the Cairn master. Exit codes: 0 after a clean stop
// (SIGTERM/SIGINT), 1 when the agent cannot work (the master refuses it), 2 for a usage error.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/slot_discovery.h"
#include "base/command_line.h"
#include "base/log.h"
#include "base/password.h"

namespace {

constexpr int kExitFailure = 1;

int UsageError(const std::string& message) {
  return cairn::command_line::UsageError("cairn-agent", message);
}

}  // namespace

// The trial harness ships beside the binary (<bin>/../lib/python, copied there by the build);
// CAIRN_HARNESS_DIR overrides it.
static std::string HarnessDir() {
  if (const char* from_env = std::getenv("CAIRN_HARNESS_DIR")) return from_env;
  std::error_code error;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  auto dir = exe.parent_path().parent_path() / "lib" / "python";
  return std::filesystem::exists(dir / "cairn_harness", error) ? dir.string() : "";
}

int main(int argc, char** argv) {
  using namespace cairn;
  using namespace cairn::agent;

  // Writes to a closed socket must fail with EPIPE, not kill the agent.
  signal(SIGPIPE, SIG_IGN);
  // SIGTERM and SIGINT are taken by one thread with sigwait; every thread started later inherits
  // the mask. Tasks get a clean mask from the ProcessRunner.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::vector<std::string> args(argv + 1, argv + argc);
  Result<CommandLine> command_line = ParseCommandLine(args);
  if (!command_line.ok()) return UsageError(command_line.status().message());
  if (command_line->exit_text) {
    std::fputs(command_line->exit_text->c_str(), stdout);
    return 0;
  }
  log::Init("cairn-agent", command_line->log_level);
  const AgentConfig& config = command_line->config;

  AgentOptions options;
  options.agent_id = config.agent_id;
  options.master_url = config.master_url;
  options.resource_pool = config.resource_pool;
  options.work_root = EffectiveWorkRoot(config);
  options.harness_dir = HarnessDir();
  if (!config.determined_package_dir.empty()) {
    options.determined_package_dir =
        std::filesystem::absolute(config.determined_package_dir).string();
  }
  options.kill_grace = config.kill_grace;
  options.heartbeat_interval = config.heartbeat_interval;
  options.trace_file = config.trace_file;
  options.services.address = config.service_address;
  options.services.notebook_command = config.notebook_command;
  options.services.sshd_command = config.sshd_command;
  options.services.tensorboard_command = config.tensorboard_command;
  // Absolute, because tasks get the paths and run in their own work directories.
  options.environments.cache_dir = std::filesystem::absolute(EffectiveEnvCacheDir(config)).string();
  options.environments.pip_index_url = config.pip_index_url;
  options.environments.pip_find_links = config.pip_find_links;
  options.environments.pip_no_index = config.pip_no_index;
  if (!config.master_cert_file.empty()) {
    options.master_cert_file = std::filesystem::absolute(config.master_cert_file).string();
  }
  if (!config.agent_token_file.empty()) {
    Result<std::string> token = ReadTokenFile(config.agent_token_file);
    if (!token.ok()) return UsageError("agent token: " + token.status().message());
    options.agent_token = std::move(token).value();
  }
  options.container_runtime = config.runtime == "container";
  options.allow_images_on_host = config.allow_images_on_host;
  options.image_dir = config.image_dir;
  options.default_image = config.default_image;
  options.gpu_device_dir = config.gpu_device_dir;
  if (config.slots) {
    options.devices = ArtificialCpuSlots(*config.slots);
  } else if (config.artificial_gpus) {
    options.devices = ArtificialGpuSlots(*config.artificial_gpus);
  } else {
    const char* path = std::getenv("PATH");
    Result<std::vector<SlotDevice>> gpus = DiscoverGpus(path != nullptr ? path : "");
    if (!gpus.ok()) {
      return UsageError("no --slots given and no GPU found (" + gpus.status().message() +
                        "); pass --slots N to offer N CPU slots");
    }
    options.devices = std::move(gpus).value();
  }
  const size_t slot_count = options.devices.size();

  Result<std::unique_ptr<Agent>> created = Agent::Create(std::move(options));
  if (!created.ok()) return UsageError(created.status().message());
  Agent& agent = **created;

  std::atomic<bool> exiting{false};
  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (exiting) return;
    log::Info("agent", "received {}, stopping", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
    agent.RequestStop();
  });
  auto finish = [&](int code) {
    agent.Shutdown();
    exiting = true;
    // Wakes the signal thread if no signal came; a pending one is consumed all the same.
    pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
    return code;
  };

  Result<Registration> registration = agent.Start();
  if (!registration.ok()) {
    if (agent.stop_requested()) {
      log::Info("agent", "stopped before registering: {}", registration.status().message());
      return finish(0);
    }
    log::Error("agent", "cannot start: {}", registration.status());
    return finish(kExitFailure);
  }
  std::printf("cairn-agent %s registered with %s (%zu slots, pool %s)\n", config.agent_id.c_str(),
              config.master_url.c_str(), slot_count, config.resource_pool.c_str());
  std::fflush(stdout);

  agent.WaitForStopRequest();
  return finish(0);
}
