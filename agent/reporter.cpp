#include "agent/reporter.h"

#include "agent/agent_log.h"

namespace cairn::agent {
namespace {

constexpr std::chrono::milliseconds kCancelRepeat(50);

template <typename... Visitors>
struct Overloaded : Visitors... {
  using Visitors::operator()...;
};
template <typename... Visitors>
Overloaded(Visitors...) -> Overloaded<Visitors...>;

}  // namespace

Reporter::Reporter(std::unique_ptr<MasterClient> client, ReportQueue::Options options)
    : client_(std::move(client)), queue_(options), thread_([this] { Run(); }) {}

Reporter::~Reporter() {
  std::unique_lock lock(mutex_);
  abandoned_ = true;
  changed_.notify_all();
  CancelUntilDone(lock);
  lock.unlock();
  if (thread_.joinable()) thread_.join();
}

void Reporter::CancelUntilDone(std::unique_lock<std::mutex>& lock) {
  // A cancel that lands between two attempts can be missed by the HTTP client, so it is repeated
  // until the thread has returned.
  while (!done_) {
    client_->Cancel();
    changed_.wait_for(lock, kCancelRepeat, [&] { return done_; });
  }
}

void Reporter::AddLine(TaskLogLine line) {
  std::lock_guard lock(mutex_);
  if (!queue_.AddLine(std::move(line), ReportQueue::Clock::now())) {
    // The master has been unreachable for long enough to fill the queue.
    if (dropped_lines_++ % 10000 == 0) {
      LogWarning("log queue full, dropping task log lines (" + std::to_string(dropped_lines_) +
                 " so far)");
    }
    return;
  }
  changed_.notify_all();
}

void Reporter::AddStarted(StartedReport report) {
  std::lock_guard lock(mutex_);
  queue_.AddStarted(std::move(report));
  changed_.notify_all();
}

void Reporter::AddExited(ExitedReport report) {
  std::lock_guard lock(mutex_);
  queue_.AddExited(std::move(report));
  changed_.notify_all();
}

bool Reporter::Drain(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  draining_ = true;
  changed_.notify_all();
  bool delivered = changed_.wait_until(lock, deadline, [&] { return done_; });
  if (!delivered) {
    abandoned_ = true;
    LogWarning("giving up on reports the master did not take in time");
  }
  changed_.notify_all();
  CancelUntilDone(lock);
  bool empty = queue_.empty();
  lock.unlock();
  if (thread_.joinable()) thread_.join();
  return delivered && empty;
}

void Reporter::Run() {
  std::unique_lock lock(mutex_);
  while (!abandoned_) {
    std::optional<ReportItem> item = queue_.TakeDue(ReportQueue::Clock::now(), draining_);
    if (item) {
      lock.unlock();
      Send(*item);
      lock.lock();
      continue;
    }
    if (draining_ && queue_.empty()) break;
    std::optional<ReportQueue::Clock::time_point> due = queue_.NextDue();
    if (due) {
      changed_.wait_until(lock, *due);
    } else {
      changed_.wait(lock);
    }
  }
  done_ = true;
  changed_.notify_all();
}

void Reporter::Send(const ReportItem& item) {
  std::visit(Overloaded{
                 [&](const LogBatch& batch) {
                   Status status = client_->ShipLogs(batch);
                   if (!status.ok()) {
                     LogWarning("dropped " + std::to_string(batch.size()) +
                                " log lines: " + status.ToString());
                   }
                 },
                 [&](const StartedReport& report) {
                   Status status = client_->ReportStarted(report);
                   if (!status.ok()) {
                     LogWarning("started report of " + report.allocation_id +
                                " not delivered: " + status.ToString());
                   }
                 },
                 [&](const ExitedReport& report) {
                   Status status = client_->ReportExited(report);
                   if (!status.ok()) {
                     LogWarning("exited report of " + report.allocation_id +
                                " not delivered: " + status.ToString());
                   }
                 },
             },
             item);
}

}  // namespace cairn::agent
