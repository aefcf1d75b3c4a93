// The agent daemon's core (PROTOCOL.md): registers with the master, heartbeats, takes placement
// orders from a PlacementSource, runs each allocation at most once with the ProcessRunner, and
// ships logs, started and exited reports through the Reporter.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/container_runtime.h"
#include "agent/http_placement_source.h"
#include "agent/interactive_service.h"
#include "agent/master_client.h"
#include "agent/order_book.h"
#include "agent/placement_source.h"
#include "agent/process_runner.h"
#include "agent/report_queue.h"
#include "agent/reporter.h"
#include "agent/slot_discovery.h"
#include "agent/task_plan.h"
#include "base/sealed_secrets.h"
#include "base/status.h"

namespace cairn::agent {

struct AgentOptions {
  std::string agent_id;
  std::string master_url;
  std::string resource_pool = "default";
  std::string work_root;    // tasks without a work dir run in <work_root>/<allocation id>
  std::string harness_dir;  // the cairn_harness package's parent, put on trials' PYTHONPATH
  // Where Determined's Python package is, for trials whose environment has none ("" = none).
  std::string determined_package_dir;
  std::vector<SlotDevice> devices;
  std::chrono::milliseconds kill_grace{10000};
  std::chrono::milliseconds heartbeat_interval{2000};
  std::string trace_file;  // "" = none; else "<allocation id> <unix micros>" per order run
  std::string hostname;    // "" = gethostname()
  // The master's agent token, sent with every call (a secret: never logged). Each task's own
  // token (CAIRN_ALLOCATION_TOKEN) is derived from it: base/password.h AllocationToken.
  std::string agent_token;
  // The CA file an https:// master is verified with ("" = the system's CAs); tasks get its path
  // as CAIRN_MASTER_CERT_FILE / DET_MASTER_CERT_FILE.
  std::string master_cert_file;
  // Prepared trial environments: their cache and the package index (task_plan.h).
  EnvironmentSettings environments;
  // Notebooks, shells and TensorBoards: where their services listen and what serves them.
  ServiceSettings services;
  // How long a service may take to answer before its task is killed as failed to start.
  std::chrono::milliseconds service_start_timeout{std::chrono::minutes(5)};
  // How tasks run (PROTOCOL.md §5b): in containers (runc) when set, else as processes.
  bool container_runtime = false;
  // A process agent: run a task that names an image on the host anyway (a warning in its log).
  bool allow_images_on_host = false;
  // A container agent: where image names are looked up, and the image of tasks naming none.
  std::string image_dir;
  std::string default_image;
  // Where a GPU slot's device file nvidia<id> is.
  std::string gpu_device_dir = "/dev";
  // Tuning; the defaults are the production values.
  RetryPolicy retry;
  ReportQueue::Options reports;
  HttpPlacementSource::Options stream;
  // How long Shutdown() keeps trying to deliver the last reports once the tasks have ended.
  std::chrono::milliseconds shutdown_report_budget{15000};
};

// The agent's version, sent at registration.
const char* AgentVersion();

// Thread-safe.
class Agent {
 public:
  static Result<std::unique_ptr<Agent>> Create(AgentOptions options);
  ~Agent();  // Shutdown()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Registers (retrying until the master answers; a 4xx is returned), then starts heartbeats and
  // takes orders from the transport the master names. Unavailable when RequestStop() or
  // Shutdown() came first. Called once.
  Result<Registration> Start();
  // Makes Start() give up and WaitForStopRequest() return. Not async-signal-safe.
  void RequestStop();
  void WaitForStopRequest();
  bool stop_requested() const;
  // Stops taking orders, stops every running task as a kill does (reason "agent shutting
  // down"), reports their exits (giving up after shutdown_report_budget), stops heartbeating.
  // Idempotent.
  void Shutdown();

  const std::string& incarnation() const { return incarnation_; }
  size_t RunningTasks() const { return runner_->RunningCount(); }

 private:
  struct Allocation {
    std::string task_id;
    std::string kill_reason;  // set before the task is killed
    // The first log line number of this agent's part: a gang's parts ship lines of one
    // allocation, and a line is stored once per (task, allocation, number).
    uint64_t first_line_seq = 0;
  };

  Agent(AgentOptions options, std::unique_ptr<MasterClient> control_client,
        std::unique_ptr<MasterClient> report_client, std::unique_ptr<ContainerRuntime> containers);
  RegisterRequest MakeRegisterRequest() const;
  Result<std::unique_ptr<PlacementSource>> OpenPlacementSource(const Registration& registration);
  // Called on the placement thread: notes the order's arrival and queues it, so that reading
  // orders never waits on launching processes.
  void ReceiveOrder(const events::Envelope& order);
  // The launcher thread: takes queued orders in arrival order and acts on them.
  void LaunchOrders();
  void HandleOrder(const events::Envelope& order, int64_t received_micros);
  void RunAllocation(const events::AllocationAssigned& assigned);
  // The image the task runs in here (none on a process agent): a container agent resolves the
  // task's or its default image, a process agent refuses an image or bind mounts unless allowed
  // on the host. What the task's log should begin with goes to `preamble`.
  Result<std::optional<UnpackedImage>> ImageOf(const events::AllocationAssigned& assigned,
                                               const std::vector<SlotDevice>& slots,
                                               std::vector<std::string>& preamble);
  // On a container agent, what runs `spec` in `image`: runc, with the task's mounts (work dir,
  // harness, CA file, CAIRN_ENV_CACHE, bind_mounts) and its GPUs' device files.
  Result<ProcessSpec> ContainerOf(const events::AllocationAssigned& assigned,
                                  const std::vector<SlotDevice>& slots, const UnpackedImage& image,
                                  const ProcessSpec& spec);
  // A notebook's, shell's or TensorBoard's service: the plan that replaces the entrypoint.
  Status PlanServiceOf(const events::AllocationAssigned& assigned, ProcessSpec& spec,
                       ServicePlan& plan, int& port);
  // Probes a started service until it answers, then reports it ready (its own thread).
  void AwaitReady(std::string allocation_id, std::string task_id, ServicePlan plan, int port);
  void Heartbeat();
  std::string TaskIdOf(const std::string& allocation_id);
  // TaskIdOf and the part's first line number.
  std::pair<std::string, uint64_t> LinesOf(const std::string& allocation_id);

  const AgentOptions options_;
  const std::string incarnation_;
  // What every task's launch shares (the agent's environment among it): built once.
  const TaskLaunchSettings launch_settings_;
  const SecretSealer sealer_;  // opens the credentials in placements (events/sealing.h)
  std::unique_ptr<MasterClient> control_client_;  // register and heartbeat
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<ContainerRuntime> containers_;  // a container agent's; before runner_
  std::unique_ptr<ProcessRunner> runner_;  // after reporter_: its callbacks feed the reporter
  std::unique_ptr<PlacementSource> placement_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  OrderBook order_book_;                           // guarded by mutex_
  std::map<std::string, Allocation> allocations_;  // by allocation id; guarded by mutex_
  std::FILE* trace_ = nullptr;                     // guarded by mutex_
  bool stop_requested_ = false;                    // guarded by mutex_
  bool started_ = false;                           // guarded by mutex_
  bool shut_down_ = false;                         // guarded by mutex_
  bool heartbeat_stop_ = false;                    // guarded by mutex_
  struct ReceivedOrder {
    events::Envelope order;
    int64_t received_micros;
    std::string allocation_id;  // "" when the order names none
  };
  std::deque<ReceivedOrder> received_orders_;  // guarded by mutex_
  // Allocations a launcher is acting on: their later orders wait, so that each allocation's
  // orders are handled one at a time and in order while different allocations start in
  // parallel. Guarded by mutex_.
  std::set<std::string> launching_;
  bool launcher_stop_ = false;  // guarded by mutex_
  std::condition_variable orders_arrived_;
  std::thread placement_thread_;
  std::vector<std::thread> launcher_threads_;
  std::thread heartbeat_thread_;
  // Service probes (AwaitReady), each with its done flag: finished ones are joined when the next
  // starts, the rest by Shutdown(). Guarded by mutex_.
  struct Probe {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Probe> probes_;
};

}  // namespace cairn::agent
