// Ships an agent's reports to the master from a few background sender threads, one per
// ReportQueue lane, each on its own connection: log batches (at least every ~100 ms or 1000
// lines) and started/exited reports.
//
// Why the protocol's order holds (PROTOCOL.md §4): every line and report of one allocation is
// queued in the same lane (ReportQueue::LaneOf its allocation id), a lane is a FIFO, and exactly
// one sender takes from a lane, taking its next item only once the previous one was answered (or
// given up on). So the master gets one allocation's items one at a time, in the order they were
// queued: `started` before `exited`, and `exited` only after the lines queued before it. Items of
// different lanes are unordered, which the protocol allows; they go in parallel so that the
// master's single writer can commit several reports at once. (Two allocations of one task need no
// order either: the master assigns the next only after it took the previous one's exit.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/master_client.h"
#include "agent/report_queue.h"

namespace cairn::agent {

// Thread-safe.
class Reporter {
 public:
  // Sends over `client` and, for every further lane of `options`, over a Clone() of it.
  Reporter(std::unique_ptr<MasterClient> client, ReportQueue::Options options);
  // Gives up on whatever is still queued (Drain first to deliver it).
  ~Reporter();
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void AddLine(TaskLogLine line);
  // Whether tasks' output may be read: false while the master takes lines more slowly than the
  // tasks print them (ReportQueue::Options::throttle_lines wait), so that they are throttled
  // rather than their lines dropped.
  bool MayReadLines();
  // Called (on a sender's thread, under the reporter's lock: it must not call back into the
  // reporter) when MayReadLines turns from no to yes: the agent wakes its tasks' readers with
  // it. nullptr stops the calls.
  void OnRoomForLines(std::function<void()> on_room);
  void AddStarted(StartedReport report);
  void AddReady(ReadyReport report);
  void AddExited(ExitedReport report);

  // Sends everything queued without waiting for batch delays and stops the threads. At
  // `deadline` it gives up on what is left; true when nothing was left.
  bool Drain(std::chrono::steady_clock::time_point deadline);

 private:
  // The thread that sends one lane's items, and its connection.
  struct Sender {
    std::unique_ptr<MasterClient> client;
    std::condition_variable wake;  // the lane got an item, or draining_/abandoned_ changed
    bool done = false;             // the thread has returned from Run
    std::thread thread;
  };

  void Run(Sender& sender, size_t lane);
  static void Send(MasterClient& client, const ReportItem& item);
  // WakeAll, AllDone and CancelUntilDone run with mutex_ held (by `lock` for the last).
  void WakeAll();
  bool AllDone() const;
  // Cancels the clients until every Run() has returned.
  void CancelUntilDone(std::unique_lock<std::mutex>& lock);
  void JoinAll();

  std::mutex mutex_;
  std::function<void()> on_room_;  // under mutex_
  std::condition_variable sender_done_;
  ReportQueue queue_;
  bool draining_ = false;
  bool abandoned_ = false;
  uint64_t dropped_lines_ = 0;
  // One per lane; the vector does not change once the threads run.
  std::vector<std::unique_ptr<Sender>> senders_;
};

}  // namespace cairn::agent
