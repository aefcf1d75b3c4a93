// Rebuild throughput: writes N realistic events (agents registering; tasks submitted, assigned,
// started and exiting in an overlapping pipeline, a few killed) to an embedded log in a temp
// dir, then times a rebuild of every projection from offset 0 into a fresh dir. Prints events/s
// against the 200,000 events/s target, wall and CPU time, and the machine's core count.
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "events/envelope_util.h"
#include "events/event_log.h"
#include "projections/projections.h"

namespace {

constexpr double kTargetEventsPerSecond = 200000;
constexpr int kAgents = 200;
constexpr int kSlotsPerAgent = 8;
constexpr int kPipelineGap = 50;  // tasks between a task's submission and its assignment, etc.
const char* const kPools[] = {"default", "gpu-a100", "cpu"};

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

class Workload {
 public:
  explicit Workload(uint64_t events) : target_(events) {}

  // The next batch of events, empty when the workload is done.
  std::vector<cairn::events::Envelope> NextBatch(size_t size) {
    std::vector<cairn::events::Envelope> batch;
    while (batch.size() < size && produced_ < target_) {
      if (agents_registered_ < kAgents) {
        batch.push_back(Register(agents_registered_++));
        continue;
      }
      // One pipeline step: submit task i, assign i-G, start i-2G, end i-3G.
      const int64_t step = step_++;
      Add(batch, Submit(step));
      if (step >= kPipelineGap) Add(batch, Assign(step - kPipelineGap));
      if (step >= 2 * kPipelineGap) Add(batch, Start(step - 2 * kPipelineGap));
      if (step >= 3 * kPipelineGap) End(batch, step - 3 * kPipelineGap);
    }
    return batch;
  }

 private:
  cairn::events::Envelope Stamp(cairn::events::Envelope event) {
    event.set_event_id("event-" + std::to_string(produced_));
    event.set_time_unix_micros(1'700'000'000'000'000 + static_cast<int64_t>(produced_) * 500);
    event.set_actor("system:scheduler");
    event.set_correlation_id("req-" + std::to_string(produced_ / 4));
    event.set_writer_epoch(1);
    event.set_schema_version(cairn::kSchemaVersion);
    ++produced_;
    return event;
  }

  void Add(std::vector<cairn::events::Envelope>& batch, cairn::events::Envelope event) {
    if (produced_ < target_) batch.push_back(Stamp(std::move(event)));
  }

  static std::string Agent(int64_t task) { return "agent-" + std::to_string(task % kAgents); }
  static std::string Task(int64_t task) { return "task-" + std::to_string(task); }
  static std::string Allocation(int64_t task) { return "alloc-" + std::to_string(task); }

  cairn::events::Envelope Register(int agent) {
    cairn::events::Envelope event;
    auto* registered = event.mutable_agent_registered();
    registered->set_agent_id("agent-" + std::to_string(agent));
    registered->set_incarnation("incarnation-" + std::to_string(agent));
    registered->set_resource_pool(kPools[agent % 3]);
    registered->set_slot_count(kSlotsPerAgent);
    for (int slot = 0; slot < kSlotsPerAgent; ++slot) {
      auto* device = registered->add_devices();
      device->set_id(slot);
      device->set_brand("NVIDIA A100-SXM4-80GB");
      device->set_uuid("GPU-" + std::to_string(agent) + "-" + std::to_string(slot));
      device->set_type("cuda");
    }
    registered->set_hostname("node-" + std::to_string(agent) + ".cluster.local");
    registered->set_version("0.1.0");
    return Stamp(std::move(event));
  }

  cairn::events::Envelope Submit(int64_t task) {
    cairn::events::Envelope event;
    auto* submitted = event.mutable_task_submitted();
    submitted->set_task_id(Task(task));
    submitted->set_job_id("job-" + std::to_string(task));
    auto* spec = submitted->mutable_spec();
    spec->set_task_type(cairn::events::TASK_TYPE_COMMAND);
    spec->add_entrypoint("python3");
    spec->add_entrypoint("train.py");
    spec->add_entrypoint("--epochs=" + std::to_string(task % 90 + 10));
    spec->add_environment_variables("CUDA_VISIBLE_DEVICES=0,1");
    spec->set_work_dir("/home/user" + std::to_string(task % 40));
    spec->set_user("user" + std::to_string(task % 40));
    spec->set_description("resnet-50 sweep point " + std::to_string(task));
    auto* resources = submitted->mutable_resources();
    resources->set_slots(1 + static_cast<int>(task % 2));
    resources->set_resource_pool(kPools[(task % kAgents) % 3]);
    resources->set_priority(static_cast<int>(task % 5) * 10);
    resources->set_weight(1.0);
    submitted->set_config_json(
        R"({"entrypoint":"python3 train.py","resources":{"slots":2,"priority":42},)"
        R"("environment":{"image":"determinedai/pytorch-ngc:0.38.0"},"description":"resnet-50"})");
    return event;
  }

  cairn::events::Envelope Assign(int64_t task) {
    cairn::events::Envelope event;
    auto* assigned = event.mutable_allocation_assigned();
    assigned->set_task_id(Task(task));
    assigned->set_allocation_id(Allocation(task));
    assigned->set_agent_id(Agent(task));
    for (int slot = 0; slot < 1 + task % 2; ++slot) {
      assigned->add_slot_ids(static_cast<int>((task / kAgents + slot) % kSlotsPerAgent));
    }
    assigned->set_resource_pool(kPools[(task % kAgents) % 3]);
    assigned->set_reason("priority 42: best fit on " + Agent(task) + " (2 of 8 slots free)");
    return event;
  }

  cairn::events::Envelope Start(int64_t task) {
    cairn::events::Envelope event;
    event.mutable_task_started()->set_task_id(Task(task));
    event.mutable_task_started()->set_allocation_id(Allocation(task));
    event.mutable_task_started()->set_agent_id(Agent(task));
    event.mutable_task_started()->set_pid(static_cast<int>(10000 + task % 50000));
    return event;
  }

  void End(std::vector<cairn::events::Envelope>& batch, int64_t task) {
    if (task % 20 == 0) {
      cairn::events::Envelope kill;
      kill.mutable_kill_requested()->set_task_id(Task(task));
      kill.mutable_kill_requested()->set_allocation_id(Allocation(task));
      kill.mutable_kill_requested()->set_agent_id(Agent(task));
      kill.mutable_kill_requested()->set_reason("user asked");
      Add(batch, std::move(kill));
    }
    cairn::events::Envelope event;
    auto* exited = event.mutable_task_exited();
    exited->set_task_id(Task(task));
    exited->set_allocation_id(Allocation(task));
    exited->set_agent_id(Agent(task));
    if (task % 20 == 0) {
      exited->set_signal(9);
      exited->set_reason("killed");
    } else {
      exited->set_exit_code(task % 17 == 0 ? 1 : 0);
      exited->set_reason("exited");
    }
    Add(batch, std::move(event));
  }

  uint64_t target_;
  uint64_t produced_ = 0;
  int agents_registered_ = 0;
  int64_t step_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 1'000'000;
  std::string base_dir;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--events" && i + 1 < argc) {
      events = std::strtoull(argv[++i], nullptr, 10);
    } else if (flag == "--dir" && i + 1 < argc) {
      base_dir = argv[++i];
    } else {
      std::cerr << "usage: cairn-bench-rebuild [--events N] [--dir DIR]" << std::endl;
      return 2;
    }
  }
  if (events == 0) {
    std::cerr << "--events must be positive" << std::endl;
    return 2;
  }
  std::string pattern =
      (base_dir.empty() ? std::filesystem::temp_directory_path().string() : base_dir) +
      "/cairn-bench-rebuild-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "cannot create " << pattern << std::endl;
    return 1;
  }
  const std::string dir = pattern;
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{dir};

  cairn::LogConfig config;
  config.data_dir = dir;
  uint64_t written = 0;
  auto write_start = std::chrono::steady_clock::now();
  {
    auto log = cairn::OpenEventLog(config);
    if (!log.ok()) {
      std::cerr << log.status().ToString() << std::endl;
      return 1;
    }
    Workload workload(events);
    while (true) {
      auto batch = workload.NextBatch(1000);
      if (batch.empty()) break;
      auto appended = (*log)->Append(batch);
      if (!appended.ok()) {
        std::cerr << appended.status().ToString() << std::endl;
        return 1;
      }
      written += batch.size();
    }
  }
  double write_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();

  config.read_only = true;
  auto log = cairn::OpenEventLog(config);
  if (!log.ok()) {
    std::cerr << log.status().ToString() << std::endl;
    return 1;
  }
  // Reading alone, for scale: the part of a rebuild the projections cannot speed up.
  double read_cpu_before = CpuSeconds();
  auto read_start = std::chrono::steady_clock::now();
  {
    auto reader = (*log)->OpenReader(0);
    if (!reader.ok()) {
      std::cerr << reader.status().ToString() << std::endl;
      return 1;
    }
    while ((*reader)->position() < written) {
      auto batch = (*reader)->Next(10000, std::chrono::seconds(10));
      if (!batch.ok() || batch->empty()) {
        std::cerr << "reading the log failed at " << (*reader)->position() << std::endl;
        return 1;
      }
    }
  }
  double read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  double read_cpu_seconds = CpuSeconds() - read_cpu_before;

  double cpu_before = CpuSeconds();
  auto start = std::chrono::steady_clock::now();
  auto summaries = cairn::RebuildProjections(dir + "/rebuilt", log->get(), {}, std::nullopt);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu_seconds = CpuSeconds() - cpu_before;
  if (!summaries.ok()) {
    std::cerr << summaries.status().ToString() << std::endl;
    return 1;
  }
  for (const auto& summary : *summaries) {
    if (summary.next_offset != written) {
      std::cerr << summary.name << " stopped at " << summary.next_offset << " of " << written
                << std::endl;
      return 1;
    }
  }
  double rate = static_cast<double>(written) / seconds;
  std::printf("machine: %ld cores (nproc)\n", sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("log written: %llu events in %.2f s\n", static_cast<unsigned long long>(written),
              write_seconds);
  std::printf("log read alone: %.2f s wall, %.2f s CPU (%.0f events/s)\n", read_seconds,
              read_cpu_seconds, static_cast<double>(written) / read_seconds);
  std::printf("rebuild of %zu projections: %.2f s wall, %.2f s CPU\n", summaries->size(), seconds,
              cpu_seconds);
  std::printf("rebuild rate: %.0f events/s = %.2fx the %.0f events/s target\n", rate,
              rate / kTargetEventsPerSecond, kTargetEventsPerSecond);
  for (const auto& summary : *summaries) {
    std::printf("  %-10s applied_offset %llu digest %s\n", summary.name.c_str(),
                static_cast<unsigned long long>(summary.next_offset), summary.digest.c_str());
  }
  return 0;
}
