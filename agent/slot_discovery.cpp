#include "agent/slot_discovery.h"

#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "agent/process_runner.h"

extern char** environ;

namespace cairn::agent {
namespace {

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

constexpr std::chrono::seconds kNvidiaSmiTimeout(30);

}  // namespace

std::vector<SlotDevice> ArtificialCpuSlots(int count) {
  std::vector<SlotDevice> slots;
  for (int i = 0; i < count; ++i) slots.push_back({i, "Artificial", "", "cpu"});
  return slots;
}

std::vector<SlotDevice> ArtificialGpuSlots(int count) {
  std::vector<SlotDevice> slots;
  for (int i = 0; i < count; ++i) {
    slots.push_back({i, "Artificial GPU", "GPU-artificial-" + std::to_string(i), "cuda"});
  }
  return slots;
}

Result<std::vector<SlotDevice>> ParseNvidiaSmiCsv(const std::string& output) {
  std::vector<SlotDevice> devices;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (Trim(line).empty()) continue;
    size_t first = line.find(',');
    size_t second = first == std::string::npos ? first : line.find(',', first + 1);
    if (second == std::string::npos) {
      return Status::InvalidArgument("unexpected nvidia-smi line (want 'index, uuid, name'): " +
                                     line);
    }
    std::string index = Trim(line.substr(0, first));
    if (index.empty() || index.size() > 6 ||
        index.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("unexpected GPU index in nvidia-smi line: " + line);
    }
    SlotDevice device;
    device.id = std::stoi(index);
    device.uuid = Trim(line.substr(first + 1, second - first - 1));
    device.brand = Trim(line.substr(second + 1));
    device.type = "cuda";
    devices.push_back(std::move(device));
  }
  return devices;
}

Result<std::vector<SlotDevice>> DiscoverGpus(const std::string& path_env) {
  std::string program = FindOnPath("nvidia-smi", path_env);
  if (program.empty()) return Status::NotFound("nvidia-smi is not on the PATH");

  // Shared with the runner's callbacks, which may outlive this call (see the timeout below).
  struct Run {
    std::mutex mutex;
    std::condition_variable done;
    std::string output, errors;
    std::optional<ProcessExit> exit;
  };
  auto run = std::make_shared<Run>();
  ProcessRunner::Callbacks callbacks;
  callbacks.on_line = [run](const OutputLine& line) {
    std::lock_guard lock(run->mutex);
    (line.stream == OutputStream::kStdout ? run->output : run->errors) += line.text;
  };
  callbacks.on_exit = [run](const std::string&, const ProcessExit& process_exit) {
    std::lock_guard lock(run->mutex);
    run->exit = process_exit;
    run->done.notify_all();
  };
  auto runner = std::make_unique<ProcessRunner>(std::move(callbacks), std::chrono::seconds(1));
  ProcessSpec spec;
  spec.argv = {program, "--query-gpu=index,uuid,name", "--format=csv,noheader"};
  for (char** entry = environ; *entry != nullptr; ++entry) spec.env.emplace_back(*entry);
  spec.work_dir = "/";
  CAIRN_ASSIGN_OR_RETURN(pid_t pid, runner->Start("nvidia-smi", spec));
  (void)pid;
  {
    std::unique_lock lock(run->mutex);
    if (!run->done.wait_for(lock, kNvidiaSmiTimeout, [&] { return run->exit.has_value(); })) {
      lock.unlock();
      runner->Kill("nvidia-smi");
      // ~ProcessRunner joins its thread, which waits for the reaping: a process stuck in
      // uninterruptible sleep would block it for ever. Hand the runner off instead of waiting.
      std::thread([owned = std::move(runner)]() mutable { owned.reset(); }).detach();
      return Status::DeadlineExceeded("nvidia-smi did not answer within 30 s");
    }
  }
  // on_exit has run: the runner's destructor only joins a thread that is returning.
  runner.reset();
  std::lock_guard lock(run->mutex);
  const std::string& output = run->output;
  const std::string& errors = run->errors;
  if (run->exit->exit_code != 0) {
    return Status::Unavailable("nvidia-smi failed: " + Trim(errors.empty() ? output : errors));
  }
  CAIRN_ASSIGN_OR_RETURN(auto devices, ParseNvidiaSmiCsv(output));
  if (devices.empty()) return Status::NotFound("nvidia-smi lists no GPU");
  return devices;
}

}  // namespace cairn::agent
