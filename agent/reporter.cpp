#include "agent/reporter.h"

#include <algorithm>

#include "base/log.h"

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
    : queue_(options) {
  senders_.reserve(queue_.lanes());
  for (size_t lane = 0; lane < queue_.lanes(); ++lane) {
    senders_.push_back(std::make_unique<Sender>());
    senders_.back()->client = lane + 1 < queue_.lanes() ? client->Clone() : std::move(client);
  }
  // Only once senders_ is complete: the threads read it.
  for (size_t lane = 0; lane < senders_.size(); ++lane) {
    Sender& sender = *senders_[lane];
    sender.thread = std::thread([this, &sender, lane] { Run(sender, lane); });
  }
}

Reporter::~Reporter() {
  std::unique_lock lock(mutex_);
  abandoned_ = true;
  WakeAll();
  CancelUntilDone(lock);
  lock.unlock();
  JoinAll();
}

void Reporter::WakeAll() {
  for (auto& sender : senders_) sender->wake.notify_one();
}

bool Reporter::AllDone() const {
  return std::all_of(senders_.begin(), senders_.end(),
                     [](const auto& sender) { return sender->done; });
}

void Reporter::CancelUntilDone(std::unique_lock<std::mutex>& lock) {
  // A cancel that lands between two attempts can be missed by the HTTP client, so it is repeated
  // until every thread has returned.
  while (!AllDone()) {
    for (auto& sender : senders_) {
      if (!sender->done) sender->client->Cancel();
    }
    sender_done_.wait_for(lock, kCancelRepeat, [&] { return AllDone(); });
  }
}

void Reporter::JoinAll() {
  for (auto& sender : senders_) {
    if (sender->thread.joinable()) sender->thread.join();
  }
}

void Reporter::AddLine(TaskLogLine line) {
  std::lock_guard lock(mutex_);
  size_t lane = queue_.LaneOf(line.allocation_id);
  if (!queue_.AddLine(std::move(line), ReportQueue::Clock::now())) {
    // The master has been unreachable for long enough to fill the queue.
    if (dropped_lines_++ % 10000 == 0) {
      log::Warn("reporter", "log queue full, dropping task log lines ({} so far)", dropped_lines_);
    }
    return;
  }
  senders_[lane]->wake.notify_one();
}

bool Reporter::MayReadLines() {
  std::lock_guard lock(mutex_);
  return queue_.below_throttle();
}

void Reporter::OnRoomForLines(std::function<void()> on_room) {
  std::lock_guard lock(mutex_);
  on_room_ = std::move(on_room);
}

void Reporter::AddStarted(StartedReport report) {
  std::lock_guard lock(mutex_);
  size_t lane = queue_.LaneOf(report.allocation_id);
  queue_.AddStarted(std::move(report));
  senders_[lane]->wake.notify_one();
}

void Reporter::AddReady(ReadyReport report) {
  std::lock_guard lock(mutex_);
  size_t lane = queue_.LaneOf(report.allocation_id);
  queue_.AddReady(std::move(report));
  senders_[lane]->wake.notify_one();
}

void Reporter::AddExited(ExitedReport report) {
  std::lock_guard lock(mutex_);
  size_t lane = queue_.LaneOf(report.allocation_id);
  queue_.AddExited(std::move(report));
  senders_[lane]->wake.notify_one();
}

bool Reporter::Drain(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  draining_ = true;
  WakeAll();
  bool delivered = sender_done_.wait_until(lock, deadline, [&] { return AllDone(); });
  if (!delivered) {
    abandoned_ = true;
    log::Warn("reporter", "giving up on reports the master did not take in time");
  }
  WakeAll();
  CancelUntilDone(lock);
  bool empty = queue_.empty();
  lock.unlock();
  JoinAll();
  return delivered && empty;
}

void Reporter::Run(Sender& sender, size_t lane) {
  std::unique_lock lock(mutex_);
  while (!abandoned_) {
    const bool was_throttling = !queue_.below_throttle();
    std::optional<ReportItem> item = queue_.TakeDue(lane, ReportQueue::Clock::now(), draining_);
    if (item) {
      // The lane's next item is taken only after this one was answered: that is what keeps one
      // allocation's reports in order (see reporter.h).
      // Under the lock, so that once OnRoomForLines(nullptr) returned it is never called again.
      if (was_throttling && queue_.below_throttle() && on_room_) on_room_();
      lock.unlock();
      Send(*sender.client, *item);
      lock.lock();
      continue;
    }
    if (draining_ && queue_.empty(lane)) break;
    std::optional<ReportQueue::Clock::time_point> due = queue_.NextDue(lane);
    if (due) {
      sender.wake.wait_until(lock, *due);
    } else {
      sender.wake.wait(lock);
    }
  }
  sender.done = true;
  sender_done_.notify_all();
}

void Reporter::Send(MasterClient& client, const ReportItem& item) {
  std::visit(Overloaded{
                 [&](const LogBatch& batch) {
                   Status status = client.ShipLogs(batch);
                   if (!status.ok()) {
                     log::Warn("reporter", "dropped {} log lines: {}", batch.size(), status);
                   }
                 },
                 [&](const StartedReport& report) {
                   Status status = client.ReportStarted(report);
                   if (!status.ok()) {
                     log::Warn("reporter", "started report of {} not delivered: {}",
                               report.allocation_id, status);
                   }
                 },
                 [&](const ReadyReport& report) {
                   Status status = client.ReportReady(report);
                   if (!status.ok()) {
                     log::Warn("reporter", "ready report of {} not delivered: {}",
                               report.allocation_id, status);
                   }
                 },
                 [&](const ExitedReport& report) {
                   Status status = client.ReportExited(report);
                   if (!status.ok()) {
                     log::Warn("reporter", "exited report of {} not delivered: {}",
                               report.allocation_id, status);
                   }
                 },
             },
             item);
}

}  // namespace cairn::agent
