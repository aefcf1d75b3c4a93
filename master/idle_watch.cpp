#include "master/idle_watch.h"

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/task_secrets.h"
#include "events/envelope_util.h"
#include "net/http_client.h"

namespace cairn {

IdleWatch::IdleWatch(DecisionLoop* loop, Projections* projections, Options options)
    : loop_(loop), projections_(projections), options_(std::move(options)) {}

void IdleWatch::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      CheckOnce(std::chrono::steady_clock::now());
      lock.lock();
      wakeup_.wait_for(lock, options_.check_period, [this] { return stopping_; });
    }
  });
}

void IdleWatch::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void IdleWatch::RecordTraffic(const std::string& task_id) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  last_activity_[task_id] = now;
}

std::optional<std::chrono::steady_clock::time_point> IdleWatch::KernelActivity(
    const std::string& task_id, std::chrono::steady_clock::time_point now) {
  auto task = projections_->GetTask(task_id);
  if (!task.ok() || !*task || !(*task)->ready()) return std::nullopt;
  net::Client client((*task)->service_host(), static_cast<uint16_t>((*task)->service_port()));
  const std::map<std::string, std::string> headers = {
      {"Authorization",
       "token " + DeriveTaskToken(options_.agent_token, kJupyterTokenPurpose, task_id)}};
  auto answer = client.Request("GET", ServicePath(task_id) + "api/kernels", "", headers,
                               std::chrono::seconds(5));
  if (!answer.ok() || answer->status != 200) return std::nullopt;
  auto kernels = nlohmann::json::parse(answer->body, nullptr, false);
  if (!kernels.is_array()) return std::nullopt;
  std::optional<std::chrono::steady_clock::time_point> newest;
  const int64_t wall_now = NowUnixMicros();
  for (const auto& kernel : kernels) {
    if (!kernel.is_object()) continue;
    // A kernel at work is activity now, however long its cell has been running.
    if (kernel.value("execution_state", "") == "busy") return now;
    auto at = ParseTimeToUnixMicros(kernel.value("last_activity", ""));
    if (!at.ok()) continue;
    auto when = now - std::chrono::microseconds(std::max<int64_t>(0, wall_now - *at));
    if (!newest || when > *newest) newest = when;
  }
  return newest;
}

std::vector<std::string> IdleWatch::CheckOnce(std::chrono::steady_clock::time_point now) {
  struct Live {
    std::string task_id;
    events::TaskType type;
    int64_t timeout_seconds;
  };
  std::vector<Live> live;
  // The running allocations, agent by agent: as many as run, not every task ever submitted.
  loop_->Read([&](const commands::DecisionState& state) {
    for (const auto& [agent_id, agent] : state.agents) {
      for (const auto& allocation_id : agent.allocations) {
        auto allocation = state.FindAllocation(allocation_id);
        if (!allocation) continue;
        const commands::TaskRecord& task = *allocation;
        const events::TaskType type = task.task_type;
        if (!IsInteractiveTask(type) || !task.ready || task.kill_requested) continue;
        int64_t timeout = task.Spec().idle_timeout_seconds();
        if (timeout == 0 && type == events::TASK_TYPE_NOTEBOOK) {
          timeout = options_.notebook_timeout_seconds;
        }
        if (timeout == 0 && type == events::TASK_TYPE_TENSORBOARD) {
          timeout = options_.tensorboard_timeout_seconds;
        }
        live.push_back({task.task_id, type, timeout});
      }
    }
  });
  std::vector<Live> idle;
  {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::chrono::steady_clock::time_point> kept;
    for (const Live& task : live) {
      // First seen now: its clock starts now (after a master restart too).
      auto [it, inserted] = last_activity_.emplace(task.task_id, now);
      kept.insert(*it);
      if (task.timeout_seconds > 0 &&
          now - it->second >= std::chrono::seconds(task.timeout_seconds)) {
        idle.push_back(task);
      }
    }
    last_activity_.swap(kept);  // tasks that ended are forgotten
  }
  std::vector<std::string> killed;
  for (const Live& task : idle) {
    if (task.type == events::TASK_TYPE_NOTEBOOK) {
      auto kernels = KernelActivity(task.task_id, now);
      if (kernels && now - *kernels < std::chrono::seconds(task.timeout_seconds)) {
        std::lock_guard lock(mutex_);
        auto& last = last_activity_[task.task_id];
        last = std::max(last, *kernels);
        continue;
      }
    }
    const std::string reason =
        "idle: no activity for " + std::to_string(task.timeout_seconds) + " s (idle_timeout)";
    commands::CommandMeta meta{"system:idle-watch", NewUuid(), "", NowUnixMicros()};
    auto outcome = loop_->Execute(commands::KillTask{task.task_id, reason}, meta);
    if (!outcome.ok()) {
      log::Warn("idle_watch", "could not end idle task {}: {}", task.task_id, outcome.status());
      continue;
    }
    log::Info("idle_watch", "ended task {}: {}", task.task_id, reason);
    killed.push_back(task.task_id);
  }
  return killed;
}

}  // namespace cairn
