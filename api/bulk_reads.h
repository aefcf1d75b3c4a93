// Bulk reads (lists that render many entities) run on a few threads of their own at a lower CPU
// priority, so that under load they use the cores single-entity reads and submissions leave
// idle, instead of making those wait: one page of 100 commands costs about as much as a hundred
// GET /api/v1/tasks/{id}, and with lists served on the connection threads, a mixed load pushed up
// the p99 of every read (docs/benchmarks.md, "HTTP edge"). A route opts in in the route table:
// Bulk<ListCommands>.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "api/router.h"
#include "net/http_types.h"

namespace cairn::api {

class BulkReadPool {
 public:
  // `threads` workers, each at nice value `nice` (raising a thread's nice value needs no
  // privilege; a failure leaves it at the process's).
  BulkReadPool(int threads, int nice);
  ~BulkReadPool();  // runs what is queued, then joins
  BulkReadPool(const BulkReadPool&) = delete;
  BulkReadPool& operator=(const BulkReadPool&) = delete;

  // Runs `work` on a worker and returns its answer; the caller's thread waits.
  net::Response Run(const std::function<net::Response()>& work);

 private:
  void Work(int nice);

  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// A route handler run on the API's bulk read pool (on the calling thread when it has none).
template <RouteHandler handler>
net::Response Bulk(Call& call) {
  BulkReadPool* pool = call.services().bulk_reads;
  if (pool == nullptr) return handler(call);
  return pool->Run([&call] { return handler(call); });
}

}  // namespace cairn::api
