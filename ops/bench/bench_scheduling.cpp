// Scheduling figures, each against its target:
//   pass   one scheduling pass (commands/scheduler) per policy — fair share, priority with
//          preemption, round robin — with 10,000 and 100,000 queued tasks (or --queued N,...)
//          over 1,000 agents (in-process); target <= 20 ms at 10k, <= 50 ms at 100k (issue 17)
//   submit sustained POST /api/v1/commands per second from 8 keep-alive clients while 10,000
//          jobs are already queued (a master without agents, so everything stays queued)
//   curve  the same submissions measured as the queue grows (0, 10k, 100k queued by default, or
//          --queued N,N,...): rate, p50/p99 and the master's RSS at each size, and each rate as
//          a share of the first (issue 17: flat means >= 0.8x at 100k), and what each write-side
//          snapshot cost (a forked child's; from the master's log). The log passes offset
//          100,000, a snapshot, as the 100k measurement starts (a delta: the tasks and jobs of the
//          50,000 submissions since the one before): --write-side-every 0 measures the queue
//          alone. And the master's CPU per submission, split by thread (the threads
//          a submission waits for, and the background work): in the window, and counted on
//          through 10 idle seconds, so that the snapshots and compactions the window's
//          submissions set off are included; --measure 50000 (one snapshot interval) makes that
//          each size's amortized cost. Also per thread in the window: the time runnable but
//          waiting for a core, the minor page faults (copy-on-write after a write-side fork),
//          and the writer's appends (count, mean, share of the window). CAIRN_BENCH_WINDOWS=1
//          prints each window for `perf record -k CLOCK_MONOTONIC` / `perf report --time`. Not
//          in the default run.
//   history the decider's heap with many tasks in history (1,000,000 by default, or --tasks N):
//          every task submitted, placed, started and exited, then 100,000 queued behind; heap
//          bytes per task (mallinfo2, in-process), against issue 17's budget for the master
//          (1 GiB with 1M tasks in history, 256 MiB with 100k queued); then the same history
//          written to a log and a real cairn-master started on it: its RSS once it answers and
//          its projections caught up, and its peak while folding. Not in the default run.
//   true   makespan of 1,000 `true` commands on one agent with 64 slots
//   sleep  makespan of 100 `sleep 0.1` commands on one agent with 8 slots
// Real cairn-master and cairn-agent processes on loopback for all but `pass`; makespans run from
// the first submission to the last TaskExited in the event log (the master's clock, same host).
// The Slurm figures are quoted baselines for this machine, not measured here.
//   build/bin/bench_scheduling [--only pass|submit|curve|true|sleep] [--queued N,N,...]
//                              [--write-side-every EVENTS] [--measure N]
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/thread_priority.h"
#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"
#include "events/envelope_util.h"
#include "events/event_log.h"
#include "master/data_dir.h"
#include "net/http_client.h"
#include "net/session_login.h"
#include "tests/support/test_support.h"

using cairn::testing::BinaryPath;
using cairn::testing::ChildProcess;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "bench_scheduling: %s\n", why.c_str());
  return 1;
}

// Prints one figure against its target; `lower_is_better` decides what meeting it means.
void Report(const char* name, double figure, const char* unit, double target, bool lower_is_better,
            const std::string& extra = "") {
  bool meets = lower_is_better ? figure <= target : figure >= target;
  std::printf("%-36s %10.2f %-5s target %s %.0f %-5s ratio %.2f %s%s\n", name, figure, unit,
              lower_is_better ? "<=" : ">=", target, unit, figure / target,
              meets ? "(meets target)" : "(MISSES target)", extra.c_str());
  std::fflush(stdout);
}

// Folds events into `state` as a log would number and time them.
auto FoldInto(cairn::commands::DecisionState& state) {
  return [&state, offset = uint64_t{0}](cairn::events::Envelope event) mutable {
    event.set_offset(offset++);
    event.set_time_unix_micros(1'700'000'000'000'000 + static_cast<int64_t>(offset));
    cairn::commands::Apply(state, event);
  };
}

// ---------------------------------------------------------------------------------------------
// 1. One placement pass, in-process.

int RunPass(int queued_tasks) {
  constexpr int kAgents = 1000;
  constexpr int kSlotsPerAgent = 8;
  const int runs = queued_tasks > 20'000 ? 10 : 20;
  const double target_ms = queued_tasks > 10'000 ? 50 : 20;
  cairn::commands::DecisionState state;
  auto apply = FoldInto(state);
  int submitted_count = 0;
  auto submit = [&](const std::string& id, int32_t slots, int32_t priority) {
    cairn::events::Envelope event;
    auto* submitted = event.mutable_task_submitted();
    submitted->set_task_id(id);
    submitted->set_job_id(id);
    submitted->mutable_spec()->add_entrypoint("true");
    // Half trials (preemptible), half commands, so preemption has candidates to weigh.
    submitted->mutable_spec()->set_task_type(
        submitted_count++ % 2 ? cairn::events::TASK_TYPE_TRIAL : cairn::events::TASK_TYPE_COMMAND);
    submitted->mutable_resources()->set_slots(slots);
    submitted->mutable_resources()->set_priority(priority);
    submitted->mutable_resources()->set_resource_pool(cairn::kDefaultPool);
    apply(std::move(event));
  };
  // 1,000 agents of 8 slots; 900 completely busy, 100 with 2 free slots each: 200 free slots for
  // the queued tasks, so nearly every task stays queued and scans every agent.
  int free_slots = 0;
  for (int a = 0; a < kAgents; ++a) {
    char agent_id[32];
    std::snprintf(agent_id, sizeof agent_id, "agent-%04d", a);
    cairn::events::Envelope registered;
    auto* r = registered.mutable_agent_registered();
    r->set_agent_id(agent_id);
    r->set_incarnation(std::string("inc-") + agent_id);
    r->set_resource_pool(cairn::kDefaultPool);
    r->set_slot_count(kSlotsPerAgent);
    apply(std::move(registered));
    const int busy = a % 10 == 0 ? kSlotsPerAgent - 2 : kSlotsPerAgent;
    free_slots += kSlotsPerAgent - busy;
    std::string filler = std::string("running-") + agent_id;
    submit(filler, busy, cairn::kDefaultPriority);
    cairn::events::Envelope assigned;
    auto* as = assigned.mutable_allocation_assigned();
    as->set_task_id(filler);
    as->set_allocation_id(filler + ".1");
    as->set_agent_id(agent_id);
    as->set_agent_incarnation(std::string("inc-") + agent_id);
    as->set_resource_pool(cairn::kDefaultPool);
    for (int s = 0; s < busy; ++s) as->add_slot_ids(s);
    apply(std::move(assigned));
  }
  std::mt19937 random(42);
  const int32_t priorities[] = {1, 10, 42, 42, 42, 50, 80, 99};
  const int32_t slot_choices[] = {1, 1, 1, 2, 2, 4, 8};
  for (int t = 0; t < queued_tasks; ++t) {
    char task_id[32];
    std::snprintf(task_id, sizeof task_id, "task-%07d", t);
    submit(task_id, slot_choices[random() % std::size(slot_choices)],
           priorities[random() % std::size(priorities)]);
  }
  if (state.QueuedTaskCount() != static_cast<size_t>(queued_tasks)) {
    return Fail("the state does not hold the queued tasks");
  }
  const std::pair<cairn::events::SchedulerType, const char*> policies[] = {
      {cairn::events::SCHEDULER_TYPE_FAIR_SHARE, "fair_share"},
      {cairn::events::SCHEDULER_TYPE_PRIORITY, "priority+preemption"},
      {cairn::events::SCHEDULER_TYPE_ROUND_ROBIN, "round_robin"}};
  for (const auto& [type, name] : policies) {
    auto* scheduler = state.pools_config.mutable_pools(0)->mutable_scheduler();
    scheduler->set_type(type);
    scheduler->set_preemption(type == cairn::events::SCHEDULER_TYPE_PRIORITY);
    std::vector<double> times;
    size_t placed = 0;
    size_t preempted = 0;
    for (int run = 0; run < runs + 1; ++run) {
      auto start = Clock::now();
      auto pass = cairn::commands::Schedule(state, 1'800'000'000'000'000);
      double ms = MillisSince(start);
      placed = preempted = 0;
      for (const auto& decision : pass.decisions) {
        placed += decision.has_allocation_assigned();
        preempted += decision.has_preemption_requested();
      }
      if (run > 0) times.push_back(ms);  // the first run warms caches and the allocator
    }
    std::printf(
        "pass (%s): %d queued tasks (slots 1/2/4/8, priorities 1..99, half of them trials), %d "
        "agents x %d slots, %d free slots; %zu placed and %zu preempted per pass; %d timed runs "
        "after 1 warm-up\n",
        name, queued_tasks, kAgents, kSlotsPerAgent, free_slots, placed, preempted, runs);
    double median = Percentile(times, 0.5);
    double max = *std::max_element(times.begin(), times.end());
    char extra[96];
    std::snprintf(extra, sizeof extra, "  [max %.2f ms, min %.2f ms]", max,
                  *std::min_element(times.begin(), times.end()));
    const std::string label = "pass " + std::to_string(queued_tasks / 1000) + "k, " + name;
    Report((label + ", median").c_str(), median, "ms", target_ms, true, extra);
    Report((label + ", max").c_str(), max, "ms", target_ms, true);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// 2. The decider's memory with a long history, in-process.

size_t HeapInUse() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

// The history's events in order: kAgents agents of 8 slots, then `history_tasks` commands each
// submitted, placed, started and exited. `emit` gets each one.
constexpr int kHistoryAgents = 100;
constexpr int kHistoryQueued = 100'000;

// A task as the REST API submits one: a uuid-like id, a short command, its user.
cairn::events::Envelope HistorySubmission(const std::string& id) {
  cairn::events::Envelope event;
  auto* submitted = event.mutable_task_submitted();
  submitted->set_task_id(id);
  submitted->set_job_id(id);
  auto* spec = submitted->mutable_spec();
  for (const char* part : {"python3", "train.py", "--epochs", "3"}) spec->add_entrypoint(part);
  spec->set_task_type(cairn::events::TASK_TYPE_COMMAND);
  spec->set_user("alice");
  spec->set_description("Command (train.py)");
  submitted->mutable_resources()->set_slots(1);
  submitted->mutable_resources()->set_resource_pool(cairn::kDefaultPool);
  return event;
}

void EmitHistory(int history_tasks, const std::function<void(cairn::events::Envelope)>& emit) {
  for (int a = 0; a < kHistoryAgents; ++a) {
    cairn::events::Envelope registered;
    auto* r = registered.mutable_agent_registered();
    r->set_agent_id("agent-" + std::to_string(a));
    r->set_incarnation("inc-" + std::to_string(a));
    r->set_resource_pool(cairn::kDefaultPool);
    r->set_slot_count(8);
    emit(std::move(registered));
  }
  char id[48];
  for (int t = 0; t < history_tasks; ++t) {
    std::snprintf(id, sizeof id, "c0ffee00-0000-4000-8000-%012d", t);
    emit(HistorySubmission(id));
    const std::string agent = "agent-" + std::to_string(t % kHistoryAgents);
    const std::string allocation = std::string(id) + ".1";
    cairn::events::Envelope assigned;
    auto* as = assigned.mutable_allocation_assigned();
    as->set_task_id(id);
    as->set_allocation_id(allocation);
    as->set_agent_id(agent);
    as->set_agent_incarnation("inc-" + std::to_string(t % kHistoryAgents));
    as->set_resource_pool(cairn::kDefaultPool);
    as->add_slot_ids(0);
    as->set_reason("fair share: job's fair share is 1 of 800 slots; best fit on agent");
    emit(std::move(assigned));
    cairn::events::Envelope started;
    started.mutable_task_started()->set_task_id(id);
    started.mutable_task_started()->set_allocation_id(allocation);
    started.mutable_task_started()->set_agent_id(agent);
    emit(std::move(started));
    cairn::events::Envelope exited;
    exited.mutable_task_exited()->set_task_id(id);
    exited.mutable_task_exited()->set_allocation_id(allocation);
    exited.mutable_task_exited()->set_agent_id(agent);
    exited.mutable_task_exited()->set_exit_code(0);
    exited.mutable_task_exited()->set_reason("exited with code 0");
    emit(std::move(exited));
  }
}

void EmitQueued(int queued, const std::function<void(cairn::events::Envelope)>& emit) {
  char id[48];
  for (int q = 0; q < queued; ++q) {
    std::snprintf(id, sizeof id, "deadbeef-0000-4000-8000-%012d", q);
    emit(HistorySubmission(id));
  }
}

int RunHistory(int history_tasks) {
  const size_t heap_before = HeapInUse();
  auto start = Clock::now();
  int failed = 0;
  {
    cairn::commands::DecisionState state;
    auto apply = FoldInto(state);
    EmitHistory(history_tasks, apply);
    const size_t heap_history = HeapInUse();
    EmitQueued(kHistoryQueued, apply);
    const size_t heap_queued = HeapInUse();
    if (state.tasks.size() != static_cast<size_t>(history_tasks + kHistoryQueued)) {
      failed = Fail("the state does not hold every task");
    }
    const double history_mib = static_cast<double>(heap_history - heap_before) / (1 << 20);
    const double queued_mib = static_cast<double>(heap_queued - heap_history) / (1 << 20);
    std::printf(
        "history: %d tasks submitted, placed, started and exited, then %d queued, folded in "
        "%.1f s\n",
        history_tasks, kHistoryQueued, MillisSince(start) / 1000);
    char extra[96];
    std::snprintf(extra, sizeof extra, "  [%.0f bytes per task]",
                  static_cast<double>(heap_history - heap_before) / history_tasks);
    Report(("decider heap, " + std::to_string(history_tasks / 1000) + "k in history").c_str(),
           history_mib, "MiB", 1024.0 * history_tasks / 1'000'000, true, extra);
    std::snprintf(extra, sizeof extra, "  [%.0f bytes per task]",
                  static_cast<double>(heap_queued - heap_history) / kHistoryQueued);
    Report("decider heap, 100k queued", queued_mib, "MiB", 256, true, extra);
  }
  return failed;
}

// ---------------------------------------------------------------------------------------------
// Real processes.

// Lines added to every master's configuration (--write-side-every).
std::string g_master_config_extra;

// Starts a child with its stderr (its log) going to `log_path` instead of ours.
cairn::Result<std::unique_ptr<ChildProcess>> StartLogged(const std::vector<std::string>& argv,
                                                         const std::string& log_path) {
  int saved = dup(STDERR_FILENO);
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (saved >= 0 && log >= 0) dup2(log, STDERR_FILENO);
  auto child = ChildProcess::Start(argv);
  if (saved >= 0 && log >= 0) dup2(saved, STDERR_FILENO);
  if (log >= 0) close(log);
  if (saved >= 0) close(saved);
  return child;
}

// A master, optionally one agent; stopped in order (agent, then master) on destruction. Their
// logs go to files in a temporary directory and are shown only when a part fails.
class Cluster {
 public:
  ~Cluster() { Stop(); }

  // The lines of one process's log ("master.log", "agent.log") that contain `text`.
  std::vector<std::string> LogLines(const char* name, const std::string& text = "") {
    std::ifstream in(dir_.Sub(name));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos) lines.push_back(line);
    }
    return lines;
  }

  // Prints why, and the end of each process's log, to stderr.
  int Fail(const std::string& why) {
    for (const char* name : {"master.log", "agent.log"}) {
      if (!std::filesystem::exists(dir_.Sub(name))) continue;
      const std::vector<std::string> lines = LogLines(name);
      std::fprintf(stderr, "--- last lines of %s\n", name);
      for (size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i)
        std::fprintf(stderr, "%s\n", lines[i].c_str());
    }
    return ::Fail(why);
  }

  int Start(int agent_slots) {
    {
      std::ofstream config(dir_.Sub("master.yaml"));
      config << "port: 0\ndata_dir: " << dir_.Sub("data") << "\n" << g_master_config_extra;
    }
    auto master = StartLogged({BinaryPath("cairn-master"), "--config", dir_.Sub("master.yaml")},
                              dir_.Sub("master.log"));
    if (!master.ok()) return Fail(master.status().ToString());
    master_ = std::move(*master);
    auto line = master_->WaitForLine(
        [](const std::string& l) { return l.rfind("cairn-master listening on", 0) == 0; },
        std::chrono::seconds(60));
    if (!line.ok()) return Fail("master did not start");
    url_ = line->substr(line->rfind(' ') + 1);
    port_ = static_cast<uint16_t>(std::stoi(url_.substr(url_.rfind(':') + 1)));
    if (agent_slots <= 0) return 0;
    auto agent =
        StartLogged({BinaryPath("cairn-agent"), "--master", url_, "--id", "bench", "--slots",
                     std::to_string(agent_slots), "--work-root", dir_.Sub("work"),
                     "--agent-token-file", cairn::AgentTokenPath(dir_.Sub("data"))},
                    dir_.Sub("agent.log"));
    if (!agent.ok()) return Fail(agent.status().ToString());
    agent_ = std::move(*agent);
    if (!agent_
             ->WaitForLine(
                 [](const std::string& l) { return l.find("registered") != std::string::npos; },
                 std::chrono::seconds(60))
             .ok()) {
      return Fail("agent did not register");
    }
    return 0;
  }

  void Stop() {
    if (agent_) {
      agent_->Signal(SIGTERM);
      (void)agent_->Wait(std::chrono::seconds(30));
      agent_.reset();
    }
    if (master_) {
      master_->Signal(SIGTERM);
      (void)master_->Wait(std::chrono::seconds(30));
      master_.reset();
    }
  }

  uint16_t port() const { return port_; }
  // The master's data directory; a log written there before Start() is the master's history.
  std::string data_dir() const { return dir_.Sub("data"); }
  pid_t master_pid() const { return master_ ? master_->pid() : 0; }

 private:
  cairn::testing::TempDir dir_;
  std::unique_ptr<ChildProcess> master_;
  std::unique_ptr<ChildProcess> agent_;
  std::string url_;
  uint16_t port_ = 0;
};

// Submits `per_client` commands from each of `clients` (one keep-alive connection each, in its
// own thread). Returns false if any submission failed; `latencies_ms` gets each request's time.
bool SubmitParallel(const std::vector<std::unique_ptr<cairn::net::Client>>& clients, int per_client,
                    const std::function<std::string(int client, int i)>& body,
                    std::vector<double>* latencies_ms) {
  std::atomic<bool> ok{true};
  std::vector<std::vector<double>> per_thread(clients.size());
  std::vector<std::thread> threads;
  for (size_t c = 0; c < clients.size(); ++c) {
    threads.emplace_back([&, c] {
      per_thread[c].reserve(per_client);
      for (int i = 0; i < per_client && ok; ++i) {
        auto start = Clock::now();
        auto response =
            clients[c]->Request("POST", "/api/v1/commands", body(static_cast<int>(c), i));
        per_thread[c].push_back(MillisSince(start));
        if (!response.ok() || response->status != 200) {
          std::fprintf(
              stderr, "bench_scheduling: submission failed: %s\n",
              response.ok() ? response->body.c_str() : response.status().ToString().c_str());
          ok = false;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (latencies_ms) {
    for (const auto& values : per_thread)
      latencies_ms->insert(latencies_ms->end(), values.begin(), values.end());
  }
  return ok;
}

std::vector<std::unique_ptr<cairn::net::Client>> MakeClients(uint16_t port, int count) {
  std::vector<std::unique_ptr<cairn::net::Client>> clients;
  for (int i = 0; i < count; ++i) {
    clients.push_back(std::make_unique<cairn::net::Client>("127.0.0.1", port));
    // Each client has its session, as each user of a cluster would.
    if (!cairn::net::LogIn(*clients.back(), "determined").ok()) return {};
  }
  return clients;
}

// ---------------------------------------------------------------------------------------------
// 2. Sustained submissions with 10,000 jobs queued.

int RunSubmit() {
  constexpr int kClients = 8;
  constexpr int kQueued = 10000;
  constexpr int kPerClient = 1000;
  Cluster cluster;
  if (cluster.Start(0) != 0) return 1;
  auto clients = MakeClients(cluster.port(), kClients);
  if (clients.empty()) return cluster.Fail("login failed");
  const int32_t priorities[] = {1, 10, 42, 50, 80};
  auto body = [&](int client, int i) {
    return R"({"config":{"entrypoint":["true"],"resources":{"slots":1,"priority":)" +
           std::to_string(priorities[(client + i) % std::size(priorities)]) +
           // No agent joins this master, so each command is forced into the queue.
           R"(}},"force":true})";
  };
  auto prefill_start = Clock::now();
  if (!SubmitParallel(clients, kQueued / kClients, body, nullptr))
    return cluster.Fail("pre-submission failed");
  double prefill_ms = MillisSince(prefill_start);
  std::vector<double> latencies;
  auto start = Clock::now();
  if (!SubmitParallel(clients, kPerClient, body, &latencies))
    return cluster.Fail("measured submission failed");
  double seconds = MillisSince(start) / 1000.0;
  const double rate = kClients * kPerClient / seconds;
  std::printf(
      "submit: master without agents; %d commands pre-submitted by %d clients in %.2f s "
      "(%.0f/s); then %d x %d measured in %.2f s; request latency p50 %.2f ms, p99 %.2f ms, "
      "max %.2f ms\n",
      kQueued, kClients, prefill_ms / 1000.0, kQueued / (prefill_ms / 1000.0), kClients, kPerClient,
      seconds, Percentile(latencies, 0.5), Percentile(latencies, 0.99),
      *std::max_element(latencies.begin(), latencies.end()));
  char extra[128];
  std::snprintf(extra, sizeof extra, "  [vs Slurm sbatch ~320/s (quoted, not measured): x%.1f]",
                rate / 320.0);
  Report("submissions/s, 10k queued, 8 clients", rate, "/s", 5000, false, extra);
  cluster.Stop();
  return 0;
}

// The master's resident set, MiB (VmRSS), or -1.
// `field` of /proc/PID/status in MiB (VmRSS: resident now, VmHWM: its peak), or -1.
long ResidentMiB(pid_t pid, const std::string& field = "VmRSS:") {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size())) / 1024;
  }
  return -1;
}

// The seconds of CPU in a /proc stat line: utime + stime (fields 14 and 15), and with `reaped`
// also cutime + cstime (16, 17: the children the process waited for), in clock ticks.
double CpuSecondsOfStat(const std::string& text, bool reaped) {
  const size_t name_end = text.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(text.substr(name_end + 2));
  std::string field;
  double ticks = 0;
  for (int number = 3; number <= 17 && fields >> field; ++number) {
    if (number == 14 || number == 15 || (reaped && number >= 16)) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A /proc file's text; empty when the process or thread has gone. Read as a stream:
// ReadWholeFile (base/files.h) sizes its read by the file's size, which /proc reports as 0.
std::string ReadProcText(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// Where a process's CPU went, by the names its threads give themselves: the master names the
// threads a submission waits for (cairn-http, cairn-decider, cairn-projector) and its background
// work (rocksdb:* compactions and flushes, cairn-snapshots publishing projection snapshots); a
// write-side snapshot is a forked child's, counted once reaped. "other" is the rest, threads that
// ended included.
// Also how long each part's threads were runnable but waited for a core (schedstat's run delay):
// on 2 cores, the time a request's threads queue behind other work; and their minor page faults.
struct CpuSplit {
  std::map<std::string, double> seconds;  // by part
  struct ThreadCounts {
    std::string part;
    double waiting_seconds = 0;  // runnable, not running
    double faults = 0;           // minor page faults
  };
  std::map<std::string, ThreadCounts> threads;  // by thread id, the named threads only
  static CpuSplit Of(pid_t pid) {
    CpuSplit split;
    const std::string proc = "/proc/" + std::to_string(pid);
    const std::string process = ReadProcText(proc + "/stat");
    const double total = CpuSecondsOfStat(process, /*reaped=*/false);
    split.seconds["write-side child"] = CpuSecondsOfStat(process, true) - total;
    double named = 0;
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator(proc + "/task", error)) {
      const std::string stat = ReadProcText(task.path().string() + "/stat");
      const size_t open = stat.find('('), close = stat.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      std::string name = stat.substr(open + 1, close - open - 1);
      if (name.rfind("rocksdb:", 0) == 0) name = "rocksdb";
      if (name != cairn::kHttpThreadName && name != cairn::kDeciderThreadName &&
          name != cairn::kProjectorThreadName && name != "rocksdb" &&
          name != cairn::kSnapshotThreadName) {
        continue;
      }
      const double seconds = CpuSecondsOfStat(stat, false);
      split.seconds[name] += seconds;
      named += seconds;
      ThreadCounts& counts = split.threads[task.path().filename().string()];
      counts.part = name;
      std::istringstream fields(stat.substr(close + 2));  // from field 3 on
      std::string field;
      for (int number = 3; number <= 10 && fields >> field; ++number) {
        if (number == 10) counts.faults = std::stod(field);
      }
      std::istringstream schedstat(ReadProcText(task.path().string() + "/schedstat"));
      double running_ns = 0, waiting_ns = 0;
      if (schedstat >> running_ns >> waiting_ns) counts.waiting_seconds = waiting_ns / 1e9;
    }
    split.seconds["other"] = total - named;
    return split;
  }
  double Of(const std::string& part) const {
    auto it = seconds.find(part);
    return it == seconds.end() ? 0 : it->second;
  }
  double Total() const {
    double sum = 0;
    for (const auto& [part, value] : seconds) sum += value;
    return sum;
  }
  // A thread count's growth since `before`, by part, over the threads alive at both readings (a
  // connection's thread may come or go between them).
  std::map<std::string, double> Since(const CpuSplit& before, double ThreadCounts::*count) const {
    std::map<std::string, double> parts;
    for (const auto& [id, counts] : threads) {
      auto earlier = before.threads.find(id);
      if (earlier != before.threads.end())
        parts[counts.part] += counts.*count - earlier->second.*count;
    }
    return parts;
  }
};

// The master's memory with `history_tasks` tasks in its log's history: the events EmitHistory
// makes written to a data directory, then a cairn-master started on it, measured once it
// answers and its projections have applied the whole log (issue 17: RSS <= 1 GiB at 1M).
int RunHistoryMaster(int history_tasks) {
  Cluster cluster;
  auto start = Clock::now();
  uint64_t written = 0;
  {
    cairn::LogConfig config;
    config.data_dir = cluster.data_dir();
    auto log = cairn::OpenEventLog(config);
    if (!log.ok()) return Fail(log.status().ToString());
    std::vector<cairn::events::Envelope> batch;
    cairn::Status status = cairn::Status::Ok();
    auto flush = [&] {
      if (status.ok() && !batch.empty()) status = (*log)->Append(batch).status();
      batch.clear();
    };
    EmitHistory(history_tasks, [&](cairn::events::Envelope event) {
      event.set_event_id("history-" + std::to_string(written));
      event.set_time_unix_micros(1'700'000'000'000'000 + static_cast<int64_t>(written++));
      event.set_actor("bench");
      event.set_schema_version(cairn::kSchemaVersion);
      batch.push_back(std::move(event));
      if (batch.size() == 8192) flush();
    });
    flush();
    if (!status.ok()) return Fail(status.ToString());
  }
  std::printf("history for a master: %llu events written in %.1f s\n",
              static_cast<unsigned long long>(written), MillisSince(start) / 1000);
  start = Clock::now();
  if (cluster.Start(0) != 0) return 1;
  auto client = cairn::net::Client::FromUrl("http://127.0.0.1:" + std::to_string(cluster.port()));
  if (!client.ok()) return cluster.Fail(client.status().ToString());
  // Ready: the master answers (its write side folded) and every projection applied the log.
  // Asked every 100 ms: often enough to measure, rarely enough not to take a core from the fold.
  while (true) {
    auto reply = client->Request("GET", "/api/v1/master");
    if (reply.ok() && reply->status == 200) {
      auto body = nlohmann::json::parse(reply->body, nullptr, false);
      if (!body.is_discarded() &&
          std::stoull(body["cairn"].value("appliedOffset", "0")) >= written) {
        break;
      }
    }
    if (MillisSince(start) > 30 * 60 * 1000) return cluster.Fail("the master never caught up");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double ready_s = MillisSince(start) / 1000;
  const long rss = ResidentMiB(cluster.master_pid());
  const long peak = ResidentMiB(cluster.master_pid(), "VmHWM:");
  char extra[160];
  std::snprintf(extra, sizeof extra,
                "  [heap and other anonymous %ld MiB, mapped files %ld MiB; ready in %.1f s; "
                "peak while folding %ld MiB]",
                ResidentMiB(cluster.master_pid(), "RssAnon:"),
                ResidentMiB(cluster.master_pid(), "RssFile:"), ready_s, peak);
  Report(("master RSS, " + std::to_string(history_tasks / 1000) + "k tasks in history").c_str(),
         static_cast<double>(rss), "MiB", 1024.0 * history_tasks / 1'000'000, true, extra);
  return 0;
}

// Where the master's memory is now, from its GET /metrics (cairn_memory_bytes), in MiB.
void PrintMemoryParts(cairn::net::Client& client) {
  auto metrics = client.Request("GET", "/metrics");
  if (!metrics.ok() || metrics->status != 200) return;
  auto part = [&](const std::string& name) {
    const std::string series = "cairn_memory_bytes{part=\"" + name + "\"}";
    return cairn::testing::PrometheusSample(metrics->body, series).value_or(0) / (1 << 20);
  };
  std::printf(
      "%10s now: RSS %.0f MiB; heap in use %.0f of %.0f held; of that RocksDB memtables %.0f, "
      "block cache %.0f, table readers %.0f\n",
      "", part("resident"), part("heap_allocated"), part("heap_resident"),
      part("rocksdb_memtables"), part("rocksdb_block_cache"), part("rocksdb_table_readers"));
}

// Submission rate and latency at each queue size: one master, the queue grown between the
// measurements by the same clients (the measured submissions stay queued too).
int RunSubmitCurve(const std::vector<int>& sizes, int measured) {
  constexpr int kClients = 8;
  const int kPerClient = std::max(1, measured / kClients);
  Cluster cluster;
  if (cluster.Start(0) != 0) return 1;
  auto clients = MakeClients(cluster.port(), kClients);
  if (clients.empty()) return cluster.Fail("login failed");
  const int32_t priorities[] = {1, 10, 42, 50, 80};
  auto body = [&](int client, int i) {
    return R"({"config":{"entrypoint":["true"],"resources":{"slots":1,"priority":)" +
           std::to_string(priorities[(client + i) % std::size(priorities)]) + R"(}},"force":true})";
  };
  std::printf(
      "curve: master without agents, %d keep-alive clients, %d submissions measured at "
      "each size\n",
      kClients, kClients * kPerClient);
  // CPU per submission is the master's work whatever else the machine does: the rates move
  // +-15-30% between runs on this VM, the work far less.
  std::printf("%10s %12s %9s %9s %9s %10s %14s %18s %18s %16s\n", "queued", "submits/s", "p50 ms",
              "p99 ms", "max ms", "RSS MiB", "rate/first", "queue page p50/95", "task p50/95",
              "master CPU us");
  std::fflush(stdout);
  int queued = 0;
  double first_rate = 0;
  for (int size : sizes) {
    if (size > queued) {
      const int per_client = (size - queued + kClients - 1) / kClients;
      if (!SubmitParallel(clients, per_client, body, nullptr))
        return cluster.Fail("growing the queue failed");
      queued += per_client * kClients;
    }
    std::vector<double> latencies;
    // The writer's durable appends (GET /metrics, cairn_log_append_seconds): how many, and their
    // mean. The writer decides a batch, then appends it and waits for the fsync, so its share of
    // the window (appends x mean) says how close the single writer is to being the bound.
    struct Appends {
      double seconds = 0;
      double count = 0;
    };
    auto appends = [&] {
      Appends so_far;
      auto metrics = clients[0]->Request("GET", "/metrics");
      if (!metrics.ok() || metrics->status != 200) return so_far;
      auto sample = [&](const char* series) {
        return cairn::testing::PrometheusSample(metrics->body, series).value_or(0);
      };
      so_far.seconds = sample("cairn_log_append_seconds_sum");
      so_far.count = sample("cairn_log_append_seconds_count");
      return so_far;
    };
    const auto appends_before = appends();
    const CpuSplit cpu_before = CpuSplit::Of(cluster.master_pid());
    auto start = Clock::now();
    if (!SubmitParallel(clients, kPerClient, body, &latencies))
      return cluster.Fail("measured submission failed");
    const auto end = Clock::now();
    const double window_seconds = std::chrono::duration<double>(end - start).count();
    const double rate = kClients * kPerClient / window_seconds;
    const CpuSplit cpu_after = CpuSplit::Of(cluster.master_pid());
    const auto appends_after = appends();  // after the CPU reading: its own request is not counted
    auto us_per_submission = [&](double seconds) {
      return seconds * 1e6 / (kClients * kPerClient);
    };
    const double cpu_us_per_submission = us_per_submission(cpu_after.Total() - cpu_before.Total());
    if (first_rate == 0) first_rate = rate;
    const int queued_at_start = queued;
    // The reads of `det job list` (its first page) and of one task, one client, one at a time.
    auto one = clients[0]->Request("POST", "/api/v1/commands", body(0, 0));
    if (!one.ok() || one->status != 200) return cluster.Fail("submitting the read task failed");
    const std::string last_task_id =
        nlohmann::json::parse(one->body, nullptr, false).value("/command/id"_json_pointer, "");
    ++queued;
    std::vector<double> page_ms, task_ms;
    for (int i = 0; i < 50; ++i) {
      auto read_start = Clock::now();
      auto page = clients[0]->Request(
          "GET", "/api/v1/job-queues-v2?limit=100&offset=0&orderBy=ORDER_BY_ASC");
      page_ms.push_back(MillisSince(read_start));
      if (!page.ok() || page->status != 200) return cluster.Fail("reading the job queue failed");
      read_start = Clock::now();
      auto task = clients[0]->Request("GET", "/api/v1/tasks/" + last_task_id);
      task_ms.push_back(MillisSince(read_start));
      if (!task.ok() || task->status != 200) return cluster.Fail("reading a task failed");
    }
    char page_figures[32], task_figures[32];
    std::snprintf(page_figures, sizeof page_figures, "%.2f / %.2f", Percentile(page_ms, 0.5),
                  Percentile(page_ms, 0.95));
    std::snprintf(task_figures, sizeof task_figures, "%.2f / %.2f", Percentile(task_ms, 0.5),
                  Percentile(task_ms, 0.95));
    std::printf("%10d %12.0f %9.2f %9.2f %9.2f %10ld %14.2f %18s %18s %16.0f\n", queued_at_start,
                rate, Percentile(latencies, 0.5), Percentile(latencies, 0.99),
                *std::max_element(latencies.begin(), latencies.end()),
                ResidentMiB(cluster.master_pid()), rate / first_rate, page_figures, task_figures,
                cpu_us_per_submission);
    const double append_count = appends_after.count - appends_before.count;
    const double append_seconds = appends_after.seconds - appends_before.seconds;
    if (append_count > 0) {
      std::printf(
          "%10s the writer's appends in the window: %.0f, %.2f submissions each, %.3f ms each "
          "on average: %.0f%% of the window\n",
          "", append_count, kClients * kPerClient / append_count,
          append_seconds * 1000 / append_count, 100 * append_seconds / window_seconds);
    }
    // For `perf report --time`: the window on the clock `perf record -k CLOCK_MONOTONIC` uses.
    if (std::getenv("CAIRN_BENCH_WINDOWS") != nullptr) {
      std::printf("%10s the window on CLOCK_MONOTONIC: %.6f,%.6f\n", "",
                  std::chrono::duration<double>(start.time_since_epoch()).count(),
                  std::chrono::duration<double>(end.time_since_epoch()).count());
    }
    // The RSS above is one moment: its lowest and highest over the next 10 s, every 100 ms
    // (background work comes and goes: projection snapshots, compactions).
    long low = ResidentMiB(cluster.master_pid()), high = low;
    for (int i = 0; i < 100; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const long now = ResidentMiB(cluster.master_pid());
      low = std::min(low, now);
      high = std::max(high, now);
    }
    std::printf("%10s RSS over the next 10 s, idle: lowest %ld MiB, highest %ld MiB\n", "", low,
                high);
    PrintMemoryParts(*clients[0]);
    // The window's work by thread, and the same counted on through the 10 idle seconds above:
    // the background work the window's submissions set off (a snapshot taken as the window ends,
    // its compactions) finished by then. With --measure 50000, one snapshot interval, that is
    // each size's amortized cost; the reads above add about 100 requests to it.
    const CpuSplit cpu_settled = CpuSplit::Of(cluster.master_pid());
    auto print_parts = [&](const char* title, const CpuSplit& until) {
      std::string parts;
      for (const auto& [part, seconds] : until.seconds) {
        char text[64];
        std::snprintf(text, sizeof text, "%s%s %.0f", parts.empty() ? "" : ", ", part.c_str(),
                      std::max(0.0, us_per_submission(seconds - cpu_before.Of(part))));
        parts += text;
      }
      std::printf("%10s master CPU us per submission, %s: %.0f = %s\n", "", title,
                  us_per_submission(until.Total() - cpu_before.Total()), parts.c_str());
    };
    print_parts("in the window", cpu_after);
    // Per submission in the window, by part: a count each thread keeps (CpuSplit::ThreadCounts).
    auto print_per_submission = [&](const char* what, const char* format, double scale,
                                    double CpuSplit::ThreadCounts::*count) {
      std::string parts;
      for (const auto& [part, window] : cpu_after.Since(cpu_before, count)) {
        char text[64];
        std::snprintf(text, sizeof text, format, parts.empty() ? "" : ", ", part.c_str(),
                      window * scale / (kClients * kPerClient));
        parts += text;
      }
      std::printf("%10s master threads' %s per submission, in the window: %s\n", "", what,
                  parts.c_str());
    };
    print_per_submission("us runnable but waiting for a core", "%s%s %.0f", 1e6,
                         &CpuSplit::ThreadCounts::waiting_seconds);
    // Copy-on-write after a write-side snapshot's fork lands here, in the threads that write.
    print_per_submission("page faults", "%s%s %.2f", 1, &CpuSplit::ThreadCounts::faults);
    print_parts("with the background work it set off", cpu_settled);
    std::fflush(stdout);
    queued += kClients * kPerClient;
  }
  // A write-side snapshot is a forked child's (master/decision_snapshots.h): not in the RSS
  // above, so what each cost is shown from the master's log.
  for (const std::string& line : cluster.LogLines("master.log", "took the write side's snapshot")) {
    std::printf("  master: %s\n", line.substr(line.find("took")).c_str());
  }
  // And the projections' snapshots: their checkpoint pauses the projections (requests wait).
  for (const std::string& line : cluster.LogLines("master.log", "published in")) {
    const size_t at = line.find("snapshot at offset");
    if (at == std::string::npos) continue;
    const std::string text = line.substr(at);
    std::printf("  master: %s)\n", text.substr(0, text.find("; ")).c_str());
  }
  std::printf(
      "targets (issue 17): >= 5000/s and p99 <= 10 ms at every size; the last rate >= "
      "0.8x the first; RSS <= 256 MiB at 100k queued; queue page and task read p95 <= 20 ms\n");
  cluster.Stop();
  return 0;
}

// ---------------------------------------------------------------------------------------------
// 3 and 4. Makespans on one agent.

struct TaskTimes {
  int64_t submitted = 0, assigned = 0, started = 0, exited = 0;
  int exit_code = -1;
};

int RunMakespan(const char* name, int count, int slots, const std::string& entrypoint_json,
                int clients_count, double target_s, double ideal_s, const char* slurm) {
  Cluster cluster;
  if (cluster.Start(slots) != 0) return 1;
  auto clients = MakeClients(cluster.port(), clients_count);
  if (clients.empty()) return cluster.Fail("login failed");
  // Open every connection before the clock starts.
  for (auto& client : clients) {
    auto response = client->Request("GET", "/info");
    if (!response.ok()) return cluster.Fail("cannot reach the master");
  }
  const std::string body = R"({"config":{"entrypoint":)" + entrypoint_json + "}}";
  const int64_t first_submission = cairn::NowUnixMicros();
  if (!SubmitParallel(
          clients, count / clients_count, [&](int, int) -> std::string { return body; }, nullptr)) {
    return cluster.Fail("submission failed");
  }
  const int64_t last_ack = cairn::NowUnixMicros();
  // Follow the log until every task has exited.
  cairn::net::Client reader("127.0.0.1", cluster.port());
  if (!cairn::net::LogIn(reader, "determined").ok()) return cluster.Fail("login failed");
  std::map<std::string, TaskTimes> tasks;
  int exited = 0;
  cairn::Status streamed = reader.StreamLines(
      "GET",
      "/api/v1/events?from=0&follow=true&type=TaskSubmitted,AllocationAssigned,TaskStarted,"
      "TaskExited",
      [&](std::string_view line) {
        if (line.empty()) return true;
        json event = json::parse(line);
        int64_t at = std::stoll(event["timeUnixMicros"].get<std::string>());
        if (event.contains("taskSubmitted")) {
          tasks[event["taskSubmitted"]["taskId"]].submitted = at;
        } else if (event.contains("allocationAssigned")) {
          tasks[event["allocationAssigned"]["taskId"]].assigned = at;
        } else if (event.contains("taskStarted")) {
          tasks[event["taskStarted"]["taskId"]].started = at;
        } else if (event.contains("taskExited")) {
          TaskTimes& task = tasks[event["taskExited"]["taskId"]];
          task.exited = at;
          task.exit_code = event["taskExited"].value("exitCode", 0);
          ++exited;
        }
        return exited < count;
      },
      {}, std::chrono::seconds(60));
  if (exited < count) {
    return cluster.Fail(std::string(name) + ": only " + std::to_string(exited) + " of " +
                        std::to_string(count) + " tasks exited: " + streamed.ToString());
  }
  int64_t last_submitted = 0, last_assigned = 0, last_started = 0, last_exited = 0;
  int failures = 0;
  std::vector<double> run_ms;    // started -> exited per task
  std::vector<double> start_ms;  // assigned -> started per task (delivery, fork and exec)
  for (const auto& [id, t] : tasks) {
    last_submitted = std::max(last_submitted, t.submitted);
    last_assigned = std::max(last_assigned, t.assigned);
    last_started = std::max(last_started, t.started);
    last_exited = std::max(last_exited, t.exited);
    if (t.exit_code != 0) ++failures;
    run_ms.push_back((t.exited - t.started) / 1000.0);
    start_ms.push_back((t.started - t.assigned) / 1000.0);
  }
  auto rel = [&](int64_t at) { return (at - first_submission) / 1e6; };
  const double makespan = rel(last_exited);
  std::printf(
      "%s: %d x %s on one agent with %d slots, submitted by %d clients; %d non-zero exits\n"
      "  phases from first submission (s): last submission answered %.3f, last TaskSubmitted "
      "%.3f, last AllocationAssigned %.3f, last TaskStarted %.3f, last TaskExited %.3f; "
      "AllocationAssigned->TaskStarted p50 %.1f ms p99 %.1f ms; TaskStarted->TaskExited p50 %.1f "
      "ms p99 %.1f ms\n",
      name, count, entrypoint_json.c_str(), slots, clients_count, failures, rel(last_ack),
      rel(last_submitted), rel(last_assigned), rel(last_started), rel(last_exited),
      Percentile(start_ms, 0.5), Percentile(start_ms, 0.99), Percentile(run_ms, 0.5),
      Percentile(run_ms, 0.99));
  std::string extra = "  [Slurm " + std::string(slurm) + " (quoted, not measured)";
  if (ideal_s > 0) {
    char ideal[48];
    std::snprintf(ideal, sizeof ideal, "; ideal %.1f s, x%.2f of ideal", ideal_s,
                  makespan / ideal_s);
    extra += ideal;
  }
  extra += "]";
  Report((std::string("makespan, ") + name).c_str(), makespan, "s", target_s, true, extra);
  cluster.Stop();
  return failures == 0 ? 0 : cluster.Fail(std::string(name) + ": some tasks failed");
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: bench_scheduling [--only pass|submit|curve|history|true|sleep] [--queued N,N,...] "
      "[--tasks N] [--write-side-every EVENTS] [--measure N]\n"
      "  --write-side-every: the masters' write-side snapshot interval (default 50000; 0: none),\n"
      "  to tell a snapshot's cost from the queue's in the curve\n"
      "  --measure: submissions measured at each size of the curve (default 8000); 50000, one\n"
      "  snapshot interval, gives each size its amortized share of the snapshots\n";
  std::string only;
  std::vector<int> curve_sizes = {0, 10'000, 100'000};
  bool sizes_given = false;
  int history_tasks = 1'000'000;
  int measured = 8000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--tasks" && i + 1 < argc) {
      const std::string number = argv[++i];
      if (number.empty() || number.size() > 8 ||
          number.find_first_not_of("0123456789") != std::string::npos || std::stoi(number) == 0) {
        std::fprintf(stderr, "bench_scheduling: --tasks wants a count like 1000000\n%s", kUsage);
        return 2;
      }
      history_tasks = std::stoi(number);
    } else if (arg == "--measure" && i + 1 < argc) {
      const std::string number = argv[++i];
      if (number.empty() || number.size() > 7 ||
          number.find_first_not_of("0123456789") != std::string::npos || std::stoi(number) < 8) {
        std::fprintf(stderr, "bench_scheduling: --measure wants a count of at least 8\n%s", kUsage);
        return 2;
      }
      measured = std::stoi(number);
    } else if (arg == "--write-side-every" && i + 1 < argc) {
      const std::string number = argv[++i];
      if (number.empty() || number.size() > 9 ||
          number.find_first_not_of("0123456789") != std::string::npos) {
        std::fprintf(stderr, "bench_scheduling: --write-side-every wants a count of events\n%s",
                     kUsage);
        return 2;
      }
      g_master_config_extra = "snapshots:\n  write_side_every_events: " + number + "\n";
    } else if (arg == "--queued" && i + 1 < argc) {
      curve_sizes.clear();
      sizes_given = true;
      std::string list = argv[++i];
      for (size_t from = 0; from <= list.size();) {
        size_t comma = list.find(',', from);
        if (comma == std::string::npos) comma = list.size();
        const std::string number = list.substr(from, comma - from);
        if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos ||
            number.size() > 7) {
          std::fprintf(stderr, "bench_scheduling: --queued wants sizes like 0,10000,100000\n%s",
                       kUsage);
          return 2;
        }
        curve_sizes.push_back(std::stoi(number));
        from = comma + 1;
      }
      if (!std::is_sorted(curve_sizes.begin(), curve_sizes.end())) {
        std::fprintf(stderr, "bench_scheduling: --queued sizes must be ascending\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "%s", kUsage);
      return 2;
    }
  }
  if (!only.empty() && only != "pass" && only != "submit" && only != "curve" && only != "history" &&
      only != "true" && only != "sleep") {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  std::printf(
      "machine: %ld cores (nproc); scheduler: commands/scheduler (fair share unless the line says "
      "otherwise)\n",
      sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);
  int failed = 0;
  auto wanted = [&](const char* part) { return only.empty() || only == part; };
  if (wanted("pass")) {
    for (int queued : sizes_given ? curve_sizes : std::vector<int>{10'000, 100'000}) {
      if (queued > 0) failed |= RunPass(queued);
    }
  }
  if (wanted("submit")) failed |= RunSubmit();
  // Minutes at 100k, so only when asked for.
  if (only == "curve") failed |= RunSubmitCurve(curve_sizes, measured);
  if (only == "history") failed |= RunHistory(history_tasks) | RunHistoryMaster(history_tasks);
  if (wanted("true"))
    failed |= RunMakespan("1000 true", 1000, 64, R"(["true"])", 4, 3.0, 0, "30-45 s");
  if (wanted("sleep"))
    failed |= RunMakespan("100 sleep 0.1", 100, 8, R"(["sleep","0.1"])", 4, 2.0, 1.3, "12-32 s");
  return failed;
}
