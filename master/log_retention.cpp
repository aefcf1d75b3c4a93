#include "master/log_retention.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"

namespace cairn {

namespace {

constexpr int64_t kMicrosPerDay = int64_t{24} * 3600 * 1'000'000;
// Tasks one TaskLogsExpired names at most (commands::ExpireTaskLogs takes 10,000).
constexpr size_t kTasksPerEvent = 5'000;

// An experiment's retention_policy.log_retention_days, when its configuration sets one.
std::optional<int> ExperimentRetentionDays(const std::string& config_json) {
  auto config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  auto policy = config.find("retention_policy");
  if (policy == config.end() || !policy->is_object()) return std::nullopt;
  auto days = policy->find("log_retention_days");
  if (days == policy->end() || !days->is_number_integer()) return std::nullopt;
  return days->get<int>();
}

}  // namespace

LogRetention::LogRetention(EventLog* log, DecisionLoop* loop, Projections* projections,
                           TaskLogStore* logs, Options options)
    : log_(log),
      loop_(loop),
      projections_(projections),
      logs_(logs),
      options_(std::move(options)) {}

void LogRetention::Start() {
  if (!options_.schedule) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      // ParseSchedule takes only schedules that run within a year.
      const int64_t next = NextRun(*options_.schedule, NowUnixMicros());
      const auto when = std::chrono::system_clock::time_point(std::chrono::microseconds(next));
      if (wakeup_.wait_until(lock, when, [this] { return stopping_; })) break;
      lock.unlock();
      auto removed = Sweep(NowUnixMicros(), "system:log-retention");
      if (!removed.ok()) {
        log::Warn("log_retention", "the sweep failed: {}", removed.status());
      } else if (*removed > 0) {
        log::Info("log_retention", "removed {} log lines of expired tasks", *removed);
      }
      lock.lock();
    }
  });
}

void LogRetention::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<uint64_t> LogRetention::Sweep(int64_t now_unix_micros, const std::string& actor) {
  std::lock_guard sweep(sweep_mutex_);
  // Every read waits for the log as it is now, so the sweep judges the tasks' latest state.
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log_->EndOffset());
  if (end > 0)
    CAIRN_RETURN_IF_ERROR(projections_->WaitForOffset(end - 1, std::chrono::seconds(30)));
  std::map<std::string, int> days_by_job;  // experiments' own policies
  CAIRN_ASSIGN_OR_RETURN(auto experiments, projections_->ListExperiments());
  for (const auto& experiment : experiments) {
    if (auto days = ExperimentRetentionDays(experiment.config_json())) {
      days_by_job[experiment.job_id()] = *days;
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto tasks, projections_->ListTasks());
  uint64_t removed = 0;
  // The tasks due, by the policy that makes them due: (days, whose) -> task ids.
  std::map<std::pair<int, std::string>, std::vector<std::string>> due;
  for (const auto& task : tasks) {
    if (task.state() != views::TASK_STATE_TERMINATED || task.end_time_unix_micros() == 0) continue;
    if (task.logs_expired()) {
      // Recorded before: its lines normally went then (a seek finds none); a delete that failed,
      // or lines a cache rebuilt from Kafka has again, go now.
      CAIRN_ASSIGN_OR_RETURN(uint64_t lines, logs_->Delete(task.task_id()));
      removed += lines;
      continue;
    }
    auto own = days_by_job.find(task.job_id());
    const int days = own != days_by_job.end() ? own->second : options_.default_days;
    if (days < 0 || task.end_time_unix_micros() > now_unix_micros - days * kMicrosPerDay) continue;
    due[{days, own != days_by_job.end() ? "its experiment's retention_policy" : "master.yaml"}]
        .push_back(task.task_id());
  }
  // Reason -> the tasks it removes, in the order they go.
  std::vector<std::pair<std::string, std::vector<std::string>>> expiring;
  std::set<std::string> going;
  for (const auto& [policy, task_ids] : due) {
    expiring.emplace_back("log_retention_days " + std::to_string(policy.first) + " (" +
                              policy.second + "); ended before " +
                              FormatRfc3339(now_unix_micros - policy.first * kMicrosPerDay),
                          task_ids);
    going.insert(task_ids.begin(), task_ids.end());
  }
  if (options_.max_total_bytes > 0) {
    uint64_t total = logs_->TotalBytes();
    for (const auto& task_id : going) total -= std::min(total, logs_->TaskBytes(task_id));
    if (total > options_.max_total_bytes) {
      const uint64_t held = total;
      const uint64_t keep = options_.max_total_bytes - options_.max_total_bytes / 4;
      std::vector<const views::TaskView*> ended;
      for (const auto& task : tasks) {
        if (task.state() == views::TASK_STATE_TERMINATED && task.end_time_unix_micros() != 0 &&
            !task.logs_expired() && !going.count(task.task_id())) {
          ended.push_back(&task);
        }
      }
      std::sort(ended.begin(), ended.end(), [](const auto* a, const auto* b) {
        return std::make_tuple(a->end_time_unix_micros(), a->task_id()) <
               std::make_tuple(b->end_time_unix_micros(), b->task_id());
      });
      std::vector<std::string> oldest;
      for (const views::TaskView* task : ended) {
        if (total <= keep) break;
        const uint64_t bytes = logs_->TaskBytes(task->task_id());
        if (bytes == 0) continue;
        oldest.push_back(task->task_id());
        total -= std::min(total, bytes);
      }
      if (!oldest.empty()) {
        expiring.emplace_back("log_max_total_bytes " + std::to_string(options_.max_total_bytes) +
                                  " (master.yaml): the logs held " + std::to_string(held) +
                                  " bytes; the longest-ended tasks' go first",
                              std::move(oldest));
      }
    }
  }
  for (const auto& [reason, task_ids] : expiring) {
    for (size_t first = 0; first < task_ids.size(); first += kTasksPerEvent) {
      commands::ExpireTaskLogs command;
      command.task_ids.assign(task_ids.begin() + static_cast<std::ptrdiff_t>(first),
                              task_ids.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                     task_ids.size(), first + kTasksPerEvent)));
      command.reason = reason;
      // Recorded first: a master that dies before deleting deletes on its next first sweep.
      CAIRN_RETURN_IF_ERROR(
          loop_->Execute(command, commands::CommandMeta{actor, NewUuid(), "", now_unix_micros})
              .status());
      for (const auto& task_id : command.task_ids) {
        CAIRN_ASSIGN_OR_RETURN(uint64_t lines, logs_->Delete(task_id));
        removed += lines;
      }
    }
  }
  return removed;
}

}  // namespace cairn
