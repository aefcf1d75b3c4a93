// Ships an agent's reports to the master from one background thread, in ReportQueue order:
// log batches (at least every ~100 ms or 1000 lines) and started/exited reports.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/master_client.h"
#include "agent/report_queue.h"

namespace cairn::agent {

// Thread-safe.
class Reporter {
 public:
  Reporter(std::unique_ptr<MasterClient> client, ReportQueue::Options options);
  // Gives up on whatever is still queued (Drain first to deliver it).
  ~Reporter();
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void AddLine(TaskLogLine line);
  void AddStarted(StartedReport report);
  void AddExited(ExitedReport report);

  // Sends everything queued without waiting for batch delays and stops the thread. At
  // `deadline` it gives up on what is left; true when nothing was left.
  bool Drain(std::chrono::steady_clock::time_point deadline);

 private:
  void Run();
  void Send(const ReportItem& item);
  // Cancels the client until Run() has returned; `lock` holds mutex_.
  void CancelUntilDone(std::unique_lock<std::mutex>& lock);

  std::unique_ptr<MasterClient> client_;
  std::mutex mutex_;
  std::condition_variable changed_;
  ReportQueue queue_;
  bool draining_ = false;
  bool abandoned_ = false;
  bool done_ = false;  // the thread has returned from Run
  uint64_t dropped_lines_ = 0;
  std::thread thread_;
};

}  // namespace cairn::agent
