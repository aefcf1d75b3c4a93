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
#include <map>
#include <memory>
#include <mutex>
#include <string>
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

  // As Run, but requests with the same `key` (the same caller asking the same thing) share a
  // render: one that has not begun yet is joined, and sees everything the joiner would (it
  // begins after the joiner arrived). So a crowd asking for a big list costs one render per
  // worker's turn, not one each. `work` runs at most once, for the request that queued it.
  net::Response RunShared(const std::string& key, const std::function<net::Response()>& work);
  // As RunShared, and a successful answer is kept with `version` (what the answer depends on, as
  // the caller read it on arrival: the views' version and the access generation): a later
  // request with the same key and version gets the kept answer, gzipped bytes included, without
  // a render. A render reads no earlier state than any of its waiters' versions, so a kept
  // answer is at least as new as the version it is kept with. Kept answers are bounded in bytes.
  net::Response RunVersioned(const std::string& key, const std::string& version,
                             const std::function<net::Response()>& work);
  // How many requests wait for the render with `key` that has not begun (0: none queued).
  size_t Joined(const std::string& key);

 private:
  // A render that requests with one key share, and its answer once done.
  struct SharedRender {
    std::function<net::Response()> work;
    size_t joined = 0;
    std::string version;                          // the latest waiter's ("": keep nothing)
    std::shared_ptr<const net::Response> answer;  // set when done
  };
  struct KeptAnswer {
    std::string version;
    std::shared_ptr<const net::Response> answer;
    size_t bytes = 0;
  };

  // Under mutex_: keeps a render's answer for its key, dropping others beyond the byte cap.
  void Keep(const std::string& key, const SharedRender& render);
  void Work(int nice);

  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable rendered_;
  std::deque<std::function<void()>> queue_;
  // By key, the shared render queued and not begun (the one a newcomer joins).
  std::map<std::string, std::shared_ptr<SharedRender>> waiting_;
  std::map<std::string, KeptAnswer> kept_;  // by key, the last versioned answer
  size_t kept_bytes_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// The pages of at most this many rows that a paged list serves on the caller's own thread: they
// cost a page's reads, like a single entity, and must not queue behind a big render.
inline constexpr size_t kLightPageRows = 100;

// The bytes of versioned answers a pool keeps, across all keys.
inline constexpr size_t kKeptAnswerBytes = size_t{128} << 20;

// Who asks for what: the caller (what they may see and how it is redacted) and the target (the
// path and query).
std::string SharedRenderKey(const Call& call);

// A route handler run on the API's bulk read pool (on the calling thread when it has none),
// its render shared by the caller's identical requests waiting at the same time.
template <RouteHandler handler>
net::Response Bulk(Call& call) {
  BulkReadPool* pool = call.services().bulk_reads;
  if (pool == nullptr) return handler(call);
  return pool->RunShared(SharedRenderKey(call), [&call] { return handler(call); });
}

// What a versioned bulk answer depends on, as `call` reads it now; an error: nothing kept.
using AnswerVersion = Result<std::string> (*)(Call& call);

// Bulk, and the answer kept by its version (BulkReadPool::RunVersioned): a list asked for again
// while nothing it shows changed costs a lookup, however big it is.
template <RouteHandler handler, AnswerVersion version_of>
net::Response BulkVersioned(Call& call) {
  BulkReadPool* pool = call.services().bulk_reads;
  if (pool == nullptr) return handler(call);
  auto version = version_of(call);
  auto work = [&call] { return handler(call); };
  if (!version.ok()) return pool->RunShared(SharedRenderKey(call), work);
  return pool->RunVersioned(SharedRenderKey(call), *version, work);
}

// Bulk, but a page of at most kLightPageRows (`?limit=`) with no filter that needs every row
// (`states`) runs on the caller's thread: for lists whose page is read from an ordered index.
template <RouteHandler handler>
net::Response BulkUnlessSmallPage(Call& call) {
  auto paging = call.ReadPaging();
  if (paging.ok() && paging->limit > 0 && paging->limit <= kLightPageRows &&
      call.request().QueryParams("states").empty()) {
    return handler(call);
  }
  return Bulk<handler>(call);
}

}  // namespace cairn::api
