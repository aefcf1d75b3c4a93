#include "api/bulk_reads.h"

#include <future>

#include "base/thread_priority.h"

namespace cairn::api {

BulkReadPool::BulkReadPool(int threads, int nice) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back(&BulkReadPool::Work, this, nice);
}

BulkReadPool::~BulkReadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (auto& worker : workers_) worker.join();
}

net::Response BulkReadPool::Run(const std::function<net::Response()>& work) {
  std::packaged_task<net::Response()> task(work);
  auto answer = task.get_future();
  {
    std::lock_guard lock(mutex_);
    // A packaged_task cannot be copied into a std::function: the queue holds a pointer to this
    // one, which lives until its answer is taken below.
    queue_.push_back([&task] { task(); });
  }
  queued_.notify_one();
  return answer.get();
}

void BulkReadPool::Work(int nice) {
  SetThisThreadNice(nice);
  while (true) {
    std::function<void()> next;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    next();
  }
}

}  // namespace cairn::api
