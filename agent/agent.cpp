#include "agent/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "agent/kafka_placement_source.h"
#include "agent/task_files.h"
#include "agent/task_plan.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/password.h"
#include "events/envelope_util.h"
#include "events/sealing.h"

extern char** environ;

namespace cairn::agent {
namespace {

using Clock = std::chrono::steady_clock;

// The exit code reported for an allocation whose process could not be started, as a shell does.
constexpr int kCannotStartExitCode = 127;
// The reason of the exit reported for an order still queued when the agent shuts down.
constexpr const char* kNotStartedAtShutdown =
    "could not start: agent shutting down before the task started";
// After the grace period a killed group gets SIGKILL; this covers the reaping after that and the
// runner's pipe drain after the leader's death (on_exit, and so the exit report, comes only after
// it), plus a margin, so that no exit arrives after the reporter was drained.
constexpr std::chrono::seconds kKillSettle =
    ProcessRunner::kDrainAfterExit + std::chrono::seconds(5);

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  return env;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// What the agent presents to the master: its own credential, derived from the agent token, so
// the master takes its reports only for its own allocations ("" without a token).
std::string CredentialOf(const AgentOptions& options) {
  return options.agent_token.empty() ? "" : AgentCredential(options.agent_token, options.agent_id);
}

}  // namespace

const char* AgentVersion() { return CAIRN_AGENT_VERSION; }

Result<std::unique_ptr<Agent>> Agent::Create(AgentOptions options) {
  if (options.agent_id.empty()) return Status::InvalidArgument("the agent needs an id");
  if (options.devices.empty()) return Status::InvalidArgument("the agent needs at least one slot");
  if (options.work_root.empty()) return Status::InvalidArgument("the agent needs a work root");
  if (options.hostname.empty()) options.hostname = Hostname();
  CAIRN_ASSIGN_OR_RETURN(auto control_client,
                         MasterClient::Create(options.master_url, options.agent_id, options.retry,
                                              CredentialOf(options), options.master_cert_file));
  std::unique_ptr<MasterClient> report_client = control_client->Clone();
  std::unique_ptr<ContainerRuntime> containers;
  if (options.container_runtime) {
    // runc is in /usr/sbin, which an agent's own PATH may lack.
    const char* path = std::getenv("PATH");
    std::string tools_path =
        (path != nullptr && *path != '\0' ? std::string(path) + ":" : std::string()) +
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    CAIRN_ASSIGN_OR_RETURN(
        containers,
        ContainerRuntime::Create({options.agent_id, options.work_root + "/.cairn-containers",
                                  options.image_dir, tools_path}));
  }
  return std::unique_ptr<Agent>(new Agent(std::move(options), std::move(control_client),
                                          std::move(report_client), std::move(containers)));
}

namespace {

std::string AllocationOf(const events::Envelope& order) {
  if (order.has_allocation_assigned()) return order.allocation_assigned().allocation_id();
  if (order.has_kill_requested()) return order.kill_requested().allocation_id();
  if (order.has_preemption_requested()) return order.preemption_requested().allocation_id();
  return "";
}

TaskLaunchSettings LaunchSettingsFor(const AgentOptions& options) {
  TaskLaunchSettings settings;
  settings.master_url = options.master_url;
  settings.agent_id = options.agent_id;
  settings.resource_pool = options.resource_pool;
  settings.work_root = options.work_root;
  settings.devices = options.devices;
  settings.base_env = CurrentEnvironment();
  settings.harness_dir = options.harness_dir;
  settings.determined_package_dir = options.determined_package_dir;
  settings.agent_token = options.agent_token;
  settings.master_cert_file = options.master_cert_file;
  settings.environments = options.environments;
  return settings;
}

}  // namespace

Agent::Agent(AgentOptions options, std::unique_ptr<MasterClient> control_client,
             std::unique_ptr<MasterClient> report_client,
             std::unique_ptr<ContainerRuntime> containers)
    : options_(std::move(options)),
      incarnation_(NewUuid()),
      launch_settings_(LaunchSettingsFor(options_)),
      sealer_(options_.agent_token),
      control_client_(std::move(control_client)),
      reporter_(std::make_unique<Reporter>(std::move(report_client), options_.reports)),
      containers_(std::move(containers)),
      order_book_(options_.agent_id, incarnation_) {
  ProcessRunner::Callbacks callbacks;
  callbacks.on_started = [this](const std::string& allocation_id, pid_t pid) {
    reporter_->AddStarted({allocation_id, TaskIdOf(allocation_id), static_cast<int>(pid)});
  };
  callbacks.on_line = [this](const OutputLine& line) {
    TaskLogLine log;
    auto [task_id, first_seq] = LinesOf(line.key);
    log.task_id = std::move(task_id);
    log.allocation_id = line.key;
    log.seq = first_seq + line.seq;
    log.stdtype = OutputStreamName(line.stream);
    log.text = line.text;
    log.unix_micros = line.unix_micros;
    reporter_->AddLine(std::move(log));
  };
  callbacks.may_read = [this] { return reporter_->MayReadLines(); };
  callbacks.on_exit = [this](const std::string& allocation_id, const ProcessExit& exit) {
    ExitedReport report;
    report.allocation_id = allocation_id;
    report.exit_code = exit.exit_code;
    report.signal = exit.signal;
    {
      std::lock_guard lock(mutex_);
      auto it = allocations_.find(allocation_id);
      if (it != allocations_.end()) {
        report.task_id = it->second.task_id;
        if (exit.kill_requested) report.reason = it->second.kill_reason;
        std::string note = containers_ ? containers_->TakeExitNote(allocation_id) : "";
        if (report.reason.empty()) report.reason = note;
        // on_exit is the last callback of a process; the order book still remembers the id.
        allocations_.erase(it);
      }
    }
    log::Info("agent", "allocation {} ended: {}{}", allocation_id,
              exit.exit_code ? "exit code " + std::to_string(*exit.exit_code)
                             : "signal " + std::to_string(exit.signal.value_or(0)),
              report.reason.empty() ? "" : " (" + report.reason + ")");
    reporter_->AddExited(std::move(report));
  };
  runner_ = std::make_unique<ProcessRunner>(std::move(callbacks), options_.kill_grace);
  // A throttled task's reader waits until the queue has room again: no polling.
  reporter_->OnRoomForLines([runner = runner_.get()] { runner->WakeAll(); });
}

Agent::~Agent() {
  Shutdown();
  // The runner's supervise threads call back into mutex_, allocations_ and reporter_: end them
  // (~ProcessRunner joins them) while those members still exist.
  reporter_->OnRoomForLines(nullptr);
  runner_.reset();
  if (trace_ != nullptr) std::fclose(trace_);
}

RegisterRequest Agent::MakeRegisterRequest() const {
  RegisterRequest request;
  request.incarnation = incarnation_;
  request.resource_pool = options_.resource_pool;
  request.devices = options_.devices;
  request.hostname = options_.hostname;
  request.address = options_.services.address;
  request.version = AgentVersion();
  request.runs_containers = options_.container_runtime;
  return request;
}

Result<Registration> Agent::Start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return Status::FailedPrecondition("the agent was started already");
    started_ = true;
    if (stop_requested_) return Status::Unavailable("stopped before registering");
    if (!options_.trace_file.empty()) {
      trace_ = std::fopen(options_.trace_file.c_str(), "a");
      if (trace_ == nullptr) {
        return Status::IOError("cannot open trace file '" + options_.trace_file + "'");
      }
    }
  }
  std::error_code error;
  std::filesystem::create_directories(options_.work_root, error);
  if (error) {
    return Status::IOError("cannot create work root '" + options_.work_root +
                           "': " + error.message());
  }

  CAIRN_ASSIGN_OR_RETURN(Registration registration,
                         control_client_->Register(MakeRegisterRequest()));
  CAIRN_ASSIGN_OR_RETURN(auto placement, OpenPlacementSource(registration));
  log::Info("agent", "registered as incarnation {}; orders from {}{}", incarnation_,
            placement->Describe(),
            registration.transport == "http"
                ? " from offset " + std::to_string(registration.resume_from)
                : "");

  std::lock_guard lock(mutex_);
  if (stop_requested_) return Status::Unavailable("stopped while registering");
  placement_ = std::move(placement);
  // Starting a process costs a few milliseconds (spawn, exec, pipes, a supervisor thread); a
  // few launchers start a wave of orders in parallel.
  constexpr int kLaunchers = 4;
  for (int i = 0; i < kLaunchers; ++i) launcher_threads_.emplace_back([this] { LaunchOrders(); });
  placement_thread_ = std::thread(
      [this] { placement_->Run([this](const events::Envelope& order) { ReceiveOrder(order); }); });
  heartbeat_thread_ = std::thread([this] { Heartbeat(); });
  return registration;
}

Result<std::unique_ptr<PlacementSource>> Agent::OpenPlacementSource(
    const Registration& registration) {
  if (registration.transport == "http") {
    CAIRN_ASSIGN_OR_RETURN(net::Client client,
                           net::Client::FromUrl(options_.master_url, options_.master_cert_file));
    if (!options_.agent_token.empty()) {
      client.SetDefaultHeader("Authorization", "Bearer " + CredentialOf(options_));
    }
    return std::unique_ptr<PlacementSource>(std::make_unique<HttpPlacementSource>(
        std::move(client), options_.agent_id, registration.resume_from, options_.stream));
  }
  if (registration.transport == "kafka") {
    CAIRN_ASSIGN_OR_RETURN(
        auto source, KafkaPlacementSource::Open(registration.brokers, registration.topic_prefix,
                                                options_.agent_id));
    return std::unique_ptr<PlacementSource>(std::move(source));
  }
  return Status::NotSupported("the master names placement transport '" + registration.transport +
                              "', which this agent does not support");
}

void Agent::RequestStop() {
  bool cancel_registration = false;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    // Heartbeats go on until Shutdown() has reported the tasks' exits; only a registration
    // that is still being retried is abandoned.
    cancel_registration = placement_ == nullptr;
  }
  changed_.notify_all();
  if (cancel_registration) control_client_->Cancel();
}

void Agent::WaitForStopRequest() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stop_requested_; });
}

bool Agent::stop_requested() const {
  std::lock_guard lock(mutex_);
  return stop_requested_;
}

void Agent::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  RequestStop();
  if (placement_thread_.joinable()) {
    placement_->Stop();
    placement_thread_.join();
  }
  {
    std::lock_guard lock(mutex_);
    launcher_stop_ = true;
  }
  orders_arrived_.notify_all();
  for (auto& launcher : launcher_threads_) {
    if (launcher.joinable()) launcher.join();
  }
  {
    // Orders not acted on yet are dropped: nothing new starts while the agent shuts down. An
    // allocation the agent would have run is reported as one that could not start, so that the
    // master does not wait for it.
    std::vector<ExitedReport> not_started;
    {
      std::lock_guard lock(mutex_);
      for (const ReceivedOrder& received : received_orders_) {
        if (order_book_.Decide(received.order).action != OrderBook::Action::kRun) continue;
        const auto& assigned = received.order.allocation_assigned();
        ExitedReport report;
        report.allocation_id = assigned.allocation_id();
        report.task_id = assigned.task_id();
        report.exit_code = kCannotStartExitCode;
        report.reason = kNotStartedAtShutdown;
        not_started.push_back(std::move(report));
      }
      received_orders_.clear();
    }
    for (ExitedReport& report : not_started) {
      log::Info("agent", "allocation {} not started: the agent is shutting down",
                report.allocation_id);
      reporter_->AddExited(std::move(report));
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (auto& [allocation_id, allocation] : allocations_) {
      if (allocation.kill_reason.empty()) allocation.kill_reason = "agent shutting down";
    }
  }
  if (runner_->RunningCount() > 0) {
    log::Info("agent", "stopping {} running task(s)", runner_->RunningCount());
  }
  runner_->KillAll();
  {
    std::vector<Probe> probes;
    {
      std::lock_guard lock(mutex_);
      probes.swap(probes_);
    }
    for (auto& probe : probes) probe.thread.join();
  }
  if (!runner_->WaitAllExited(Clock::now() + options_.kill_grace + kKillSettle)) {
    log::Error("agent", "tasks still running after SIGKILL; their exits may go unreported");
  }
  reporter_->Drain(Clock::now() + options_.shutdown_report_budget);
  {
    std::lock_guard lock(mutex_);
    heartbeat_stop_ = true;
  }
  changed_.notify_all();
  control_client_->Cancel();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

void Agent::ReceiveOrder(const events::Envelope& order) {
  int64_t received_micros = NowUnixMicros();
  {
    std::lock_guard lock(mutex_);
    received_orders_.push_back({order, received_micros, AllocationOf(order)});
  }
  orders_arrived_.notify_one();
}

void Agent::LaunchOrders() {
  while (true) {
    ReceivedOrder next;
    std::string allocation_id;
    {
      std::unique_lock lock(mutex_);
      // The oldest order whose allocation no other launcher is acting on: an allocation's later
      // orders stay behind its earlier ones.
      auto eligible = received_orders_.end();
      orders_arrived_.wait(lock, [&] {
        if (launcher_stop_) return true;
        eligible = std::find_if(
            received_orders_.begin(), received_orders_.end(),
            [&](const ReceivedOrder& r) { return !launching_.count(r.allocation_id); });
        return eligible != received_orders_.end();
      });
      if (launcher_stop_) return;
      next = std::move(*eligible);
      received_orders_.erase(eligible);
      allocation_id = next.allocation_id;
      if (!allocation_id.empty()) launching_.insert(allocation_id);
    }
    HandleOrder(next.order, next.received_micros);
    {
      std::lock_guard lock(mutex_);
      launching_.erase(allocation_id);
    }
    orders_arrived_.notify_all();
  }
}

void Agent::HandleOrder(const events::Envelope& order, int64_t received_micros) {
  OrderBook::Decision decision;
  {
    std::lock_guard lock(mutex_);
    decision = order_book_.Decide(order);
    if (decision.action == OrderBook::Action::kRun && trace_ != nullptr) {
      std::fprintf(trace_, "%s %lld\n", order.allocation_assigned().allocation_id().c_str(),
                   static_cast<long long>(received_micros));
      std::fflush(trace_);
    }
  }
  switch (decision.action) {
    case OrderBook::Action::kIgnore:
      log::Info("agent", "ignoring {} at offset {}: {}", PayloadTypeName(order), order.offset(),
                decision.why);
      return;
    case OrderBook::Action::kRun:
      RunAllocation(order.allocation_assigned());
      return;
    case OrderBook::Action::kPreempt: {
      // Slurm's way: SIGTERM now; the master forces a kill if the grace period runs out.
      const auto& preemption = order.preemption_requested();
      if (runner_->Signal(preemption.allocation_id(), SIGTERM)) {
        log::Info("agent", "preempting allocation {} (SIGTERM): {}", preemption.allocation_id(),
                  preemption.reason());
      }
      return;
    }
    case OrderBook::Action::kKill: {
      const auto& kill = order.kill_requested();
      {
        std::lock_guard lock(mutex_);
        auto it = allocations_.find(kill.allocation_id());
        if (it != allocations_.end() && it->second.kill_reason.empty()) {
          it->second.kill_reason = kill.reason().empty() ? "kill requested" : kill.reason();
        }
      }
      if (runner_->Kill(kill.allocation_id())) {
        log::Info("agent", "killing allocation {}", kill.allocation_id());
      } else {
        log::Info("agent", "kill order for allocation {}, which has ended already",
                  kill.allocation_id());
      }
      return;
    }
  }
}

namespace {

// The task runs as its linked agent user: its process (or container) takes the account's ids,
// and the work directory the agent made for it, with the files written there, becomes the
// account's alone (0700), so that no other account's task reads it.
Status RunAsLinkedUser(const events::AllocationAssigned& assigned, ProcessSpec& spec) {
  const events::AgentUserGroup& account = assigned.spec().run_as();
  spec.run_as = RunAs{static_cast<uid_t>(account.uid()), static_cast<gid_t>(account.gid())};
  // Its home is its work directory: the agent's own home is not the account's to write.
  std::erase_if(spec.env, [](const std::string& entry) {
    return entry.rfind("USER=", 0) == 0 || entry.rfind("LOGNAME=", 0) == 0 ||
           entry.rfind("HOME=", 0) == 0;
  });
  spec.env.push_back("USER=" + account.user());
  spec.env.push_back("LOGNAME=" + account.user());
  spec.env.push_back("HOME=" + spec.work_dir);
  if (!assigned.spec().work_dir().empty()) return Status::Ok();  // a directory the task named
  auto hand_over = [&](const std::string& path) -> Status {
    if (lchown(path.c_str(), spec.run_as->uid, spec.run_as->gid) != 0) {
      return Status::IOError("cannot give " + path + " to uid " + std::to_string(account.uid()) +
                             ": " + std::strerror(errno));
    }
    return Status::Ok();
  };
  CAIRN_RETURN_IF_ERROR(hand_over(spec.work_dir));
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(spec.work_dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    CAIRN_RETURN_IF_ERROR(hand_over(it->path().string()));
  }
  if (error) return Status::IOError("cannot walk " + spec.work_dir + ": " + error.message());
  if (chmod(spec.work_dir.c_str(), 0700) != 0) {
    return Status::IOError("cannot restrict " + spec.work_dir + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

void Agent::RunAllocation(const events::AllocationAssigned& order) {
  // The log keeps credentials sealed (events/sealing.h); this agent opens them with the cluster
  // secret it holds, for this task alone.
  events::AllocationAssigned assigned = order;
  const Status opened = UnsealSpec(*assigned.mutable_spec(), sealer_);
  const std::string& allocation_id = assigned.allocation_id();
  {
    std::lock_guard lock(mutex_);
    Allocation& allocation = allocations_[allocation_id];
    allocation.task_id = assigned.task_id();
    // Part k of a gang numbers its lines from k * 2^40: the parts never collide.
    auto part = PartFor(assigned, options_.agent_id);
    if (part.ok()) allocation.first_line_seq = static_cast<uint64_t>(part->second) << 40;
  }
  const bool service = IsInteractiveTask(assigned.spec().task_type());
  ServicePlan plan;
  int port = 0;
  Status started = [&]() -> Status {
    CAIRN_RETURN_IF_ERROR(opened);
    CAIRN_ASSIGN_OR_RETURN(auto own, PartFor(assigned, options_.agent_id));
    CAIRN_ASSIGN_OR_RETURN(std::vector<SlotDevice> slots, SlotsOf(own.first, options_.devices));
    std::vector<std::string> preamble;
    CAIRN_ASSIGN_OR_RETURN(std::optional<UnpackedImage> image, ImageOf(assigned, slots, preamble));
    TaskLaunchSettings settings = launch_settings_;
    if (image) {
      // In a container the image's environment stands where the agent's would; the prepared
      // environments' cache the agent names stays (it is mounted, ContainerOf).
      std::vector<std::string> env = image->defaults.env;
      for (const auto& entry : launch_settings_.base_env) {
        if (entry.rfind("CAIRN_ENV_CACHE=", 0) == 0) env.push_back(entry);
      }
      settings.base_env = std::move(env);
    }
    CAIRN_ASSIGN_OR_RETURN(ProcessSpec spec, PlanTask(assigned, settings));
    spec.preamble = std::move(preamble);
    if (service) CAIRN_RETURN_IF_ERROR(PlanServiceOf(assigned, spec, plan, port));
    if (assigned.spec().work_dir().empty()) {
      std::error_code error;
      std::filesystem::create_directories(spec.work_dir, error);
      if (error) {
        return Status::IOError("cannot create work dir '" + spec.work_dir +
                               "': " + error.message());
      }
    }
    if (!assigned.spec().context_digest().empty()) {
      CAIRN_ASSIGN_OR_RETURN(std::string files,
                             control_client_->Clone()->FetchTaskFiles(allocation_id));
      CAIRN_RETURN_IF_ERROR(WriteTaskFiles(files, spec.work_dir));
    }
    if (service) CAIRN_RETURN_IF_ERROR(WriteServiceFiles(plan));
    // Commands, notebooks and shells source the context's startup hook (TensorBoards run no
    // code of the user's; trials' harness sources it itself).
    const events::TaskType type = assigned.spec().task_type();
    if ((type == events::TASK_TYPE_COMMAND || type == events::TASK_TYPE_GENERIC ||
         type == events::TASK_TYPE_NOTEBOOK || type == events::TASK_TYPE_SHELL) &&
        std::filesystem::is_regular_file(spec.work_dir + "/startup-hook.sh")) {
      spec.argv = WithStartupHook(std::move(spec.argv));
    }
    if (!assigned.spec().startup_hook().empty()) {
      AddClusterStartupHook(assigned.spec().startup_hook(), spec);
    }
    if (assigned.spec().has_run_as()) {
      CAIRN_RETURN_IF_ERROR(RunAsLinkedUser(assigned, spec));
    }
    if (image) {
      CAIRN_ASSIGN_OR_RETURN(spec, ContainerOf(assigned, slots, *image, spec));
    }
    Result<pid_t> pid = runner_->Start(allocation_id, spec);
    if (!pid.ok()) {
      // Nothing was started: what the launch set up is released here.
      if (spec.after_exit) spec.after_exit();
      return pid.status();
    }
    log::Info("agent", "allocation {} of task {} started, pid {}{}", allocation_id,
              assigned.task_id(), *pid, image ? " (in a container)" : "");
    return Status::Ok();
  }();
  if (!started.ok()) {
    log::Warn("agent", "allocation {} could not start: {}", allocation_id, started);
    {
      std::lock_guard lock(mutex_);
      allocations_.erase(allocation_id);
    }
    ExitedReport report;
    report.allocation_id = allocation_id;
    report.task_id = assigned.task_id();
    report.exit_code = kCannotStartExitCode;
    report.reason = "could not start: " + started.message();
    reporter_->AddExited(std::move(report));
    return;
  }
  if (service) {
    std::vector<Probe> finished;
    {
      std::lock_guard lock(mutex_);
      if (shut_down_) return;
      auto done = std::partition(probes_.begin(), probes_.end(),
                                 [](const Probe& probe) { return !probe.done->load(); });
      std::move(done, probes_.end(), std::back_inserter(finished));
      probes_.erase(done, probes_.end());
      auto flag = std::make_shared<std::atomic<bool>>(false);
      probes_.push_back({std::thread([this, flag, allocation_id, task = assigned.task_id(),
                                      plan = std::move(plan), port]() mutable {
                           AwaitReady(allocation_id, task, std::move(plan), port);
                           flag->store(true);
                         }),
                         flag});
    }
    for (auto& probe : finished) probe.thread.join();
  }
}

Result<std::optional<UnpackedImage>> Agent::ImageOf(const events::AllocationAssigned& assigned,
                                                    const std::vector<SlotDevice>& slots,
                                                    std::vector<std::string>& preamble) {
  std::string image_name = ImageFor(assigned.spec(), slots);
  if (containers_ != nullptr) {
    if (image_name.empty()) image_name = options_.default_image;
    if (image_name.empty()) {
      return Status::FailedPrecondition(
          "agent " + options_.agent_id +
          " runs tasks in containers and the task names no image (environment.image), nor "
          "has the agent a --default-image");
    }
    const auto& auth = assigned.spec().registry_auth();
    CAIRN_ASSIGN_OR_RETURN(
        UnpackedImage image,
        containers_->Image(image_name, {auth.username(), auth.password(), auth.server_address()},
                           assigned.spec().force_pull_image()));
    preamble.push_back("cairn-agent: running in " + image.note);
    return std::optional<UnpackedImage>(std::move(image));
  }
  if (image_name.empty() && assigned.spec().bind_mounts_size() == 0) {
    return std::optional<UnpackedImage>();
  }
  const std::string what = image_name.empty() ? "bind_mounts" : "image " + image_name;
  if (!options_.allow_images_on_host) {
    return Status::FailedPrecondition(
        "the task names " + what + ", but agent " + options_.agent_id +
        " runs tasks as processes on its host (runtime: process); run it on a container "
        "agent (--runtime container), or start this agent with --allow-images-on-host to "
        "run such tasks on the host");
  }
  preamble.push_back("cairn-agent: WARNING: the task names " + what + ", but agent " +
                     options_.agent_id +
                     " runs it as a process on its host (--allow-images-on-host): the image, "
                     "bind mounts and limits are not applied");
  return std::optional<UnpackedImage>();
}

Result<ProcessSpec> Agent::ContainerOf(const events::AllocationAssigned& assigned,
                                       const std::vector<SlotDevice>& slots,
                                       const UnpackedImage& image, const ProcessSpec& spec) {
  // Paths the task is told about are the host's: each is mounted at the same place.
  std::vector<ContainerMount> mounts = {{spec.work_dir, spec.work_dir, false}};
  auto value_of = [&](const std::string& name) {
    std::string found;
    for (const auto& entry : spec.env) {
      if (entry.rfind(name + "=", 0) == 0) found = entry.substr(name.size() + 1);
    }
    return found;
  };
  if (assigned.spec().task_type() == events::TASK_TYPE_TRIAL && !options_.harness_dir.empty()) {
    mounts.push_back({options_.harness_dir, options_.harness_dir, true});
  }
  if (!options_.master_cert_file.empty()) {
    mounts.push_back({options_.master_cert_file, options_.master_cert_file, true});
  }
  // Prepared environments (runtime_packages) are cached per agent and named to the task.
  const std::string env_cache = value_of("CAIRN_ENV_CACHE");
  if (!env_cache.empty() && env_cache[0] == '/' && std::filesystem::is_directory(env_cache)) {
    mounts.push_back({env_cache, env_cache, false});
  }
  for (const auto& mount : assigned.spec().bind_mounts()) {
    if (!std::filesystem::exists(mount.host_path())) {
      return Status::NotFound("bind mount " + mount.host_path() + " does not exist on agent " +
                              options_.agent_id);
    }
    // A relative container_path is under the working directory (Determined joins it so).
    const std::string& target = mount.container_path();
    mounts.push_back({mount.host_path(),
                      target.empty() || target[0] == '/' ? target : spec.work_dir + "/" + target,
                      mount.read_only()});
  }
  std::vector<ContainerDevice> devices;
  bool any_gpu = false;
  for (const SlotDevice& slot : slots) {
    if (slot.type != "cuda") continue;
    any_gpu = true;
    const std::string name = "nvidia" + std::to_string(slot.id);
    CAIRN_ASSIGN_OR_RETURN(ContainerDevice device,
                           CharacterDevice(options_.gpu_device_dir + "/" + name));
    device.path = "/dev/" + name;
    devices.push_back(device);
  }
  // The driver's shared devices, where this host has them.
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}) {
    if (!any_gpu) break;
    auto device = CharacterDevice(options_.gpu_device_dir + "/" + name);
    if (!device.ok()) continue;
    device->path = std::string("/dev/") + name;
    devices.push_back(*device);
  }
  ContainerLimits limits;
  limits.cpus = assigned.spec().cpus();
  limits.memory_mb = assigned.spec().memory_mb();
  limits.shm_size_bytes = assigned.spec().shm_size_bytes();
  return containers_->Prepare(assigned.allocation_id(), image, spec, std::move(mounts),
                              std::move(devices), limits);
}

Status Agent::PlanServiceOf(const events::AllocationAssigned& assigned, ProcessSpec& spec,
                            ServicePlan& plan, int& port) {
  CAIRN_ASSIGN_OR_RETURN(port, FreePort(options_.services.address));
  CAIRN_ASSIGN_OR_RETURN(plan,
                         PlanService(assigned.spec(), assigned.task_id(), options_.services,
                                     options_.agent_token, port, spec.work_dir, CurrentUserName()));
  // A program that is not installed fails the task with words, not only "not found".
  const std::string& program = plan.argv[0];
  if (containers_ != nullptr) {
    // The program is the image's to have; its init says so when it is missing.
  } else if (program.find('/') == std::string::npos) {
    std::string path;
    for (const auto& entry : spec.env) {
      if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
    }
    if (FindOnPath(program, path).empty()) {
      return Status::NotFound(
          program + " is not installed on agent " + options_.agent_id +
          " (not on its PATH); install it or give the agent's " +
          (assigned.spec().task_type() == events::TASK_TYPE_NOTEBOOK ? "--notebook-command"
           : assigned.spec().task_type() == events::TASK_TYPE_SHELL  ? "--sshd-command"
                                                                     : "--tensorboard-command") +
          " its path");
    }
  } else if (::access(program.c_str(), X_OK) != 0) {
    return Status::NotFound(program + " is not installed on agent " + options_.agent_id);
  }
  spec.argv = plan.argv;
  spec.env.insert(spec.env.end(), plan.env.begin(), plan.env.end());
  spec.env.push_back("CAIRN_SERVICE_PORT=" + std::to_string(port));
  // sshd, started by root, needs its privilege separation directory (Debian makes it only
  // when its own service starts).
  if (assigned.spec().task_type() == events::TASK_TYPE_SHELL && ::geteuid() == 0) {
    std::error_code ignored;
    std::filesystem::create_directories("/run/sshd", ignored);
  }
  return Status::Ok();
}

void Agent::AwaitReady(std::string allocation_id, std::string task_id, ServicePlan plan, int port) {
  auto gave_up = [&] {
    // Signal 0 checks that the process group still runs.
    if (!runner_->Signal(allocation_id, 0)) return true;
    std::lock_guard lock(mutex_);
    return shut_down_;
  };
  Status ready = AwaitService(plan, options_.services.address, port, gave_up,
                              Clock::now() + options_.service_start_timeout);
  if (ready.ok()) {
    log::Info("agent", "allocation {}: its service answers on {}:{}", allocation_id,
              options_.services.address, port);
    reporter_->AddReady({allocation_id, task_id, options_.services.address, port, plan.login_user});
    return;
  }
  if (ready.code() == StatusCode::kDeadlineExceeded) {
    log::Warn("agent", "allocation {}: {}; killing it", allocation_id, ready.message());
    {
      std::lock_guard lock(mutex_);
      auto it = allocations_.find(allocation_id);
      if (it != allocations_.end() && it->second.kill_reason.empty()) {
        it->second.kill_reason = ready.message();
      }
    }
    runner_->Kill(allocation_id);
  }
}

void Agent::Heartbeat() {
  int failures = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    if (changed_.wait_for(lock, options_.heartbeat_interval, [&] { return heartbeat_stop_; })) {
      return;
    }
    lock.unlock();
    Status status = control_client_->Heartbeat(incarnation_);
    if (status.code() == StatusCode::kFailedPrecondition ||
        status.code() == StatusCode::kNotFound) {
      log::Info("agent",
                "the master does not hold this agent as connected ({}); registering again with "
                "the same incarnation",
                status.message());
      Result<Registration> registration = control_client_->Register(MakeRegisterRequest());
      if (registration.ok()) {
        failures = 0;
        // The order stream may still hang on a connection to a master that has gone.
        placement_->Reconnect();
      } else {
        log::Warn("agent", "registering again failed: {}", registration.status());
      }
    } else if (!status.ok()) {
      if (failures++ % 10 == 0) log::Warn("agent", "heartbeat failed: {}", status);
    } else {
      failures = 0;
    }
    lock.lock();
  }
}

std::string Agent::TaskIdOf(const std::string& allocation_id) {
  return LinesOf(allocation_id).first;
}

std::pair<std::string, uint64_t> Agent::LinesOf(const std::string& allocation_id) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return {"", 0};
  return {it->second.task_id, it->second.first_line_seq};
}

}  // namespace cairn::agent
