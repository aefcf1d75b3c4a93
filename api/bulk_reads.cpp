#include "api/bulk_reads.h"

#include <future>

#include "base/gzip.h"
#include "base/thread_priority.h"

namespace cairn::api {

namespace {

// Below this a shared answer goes out as it is: gzip would save less than it costs.
constexpr size_t kGzipFromBytes = 64 * 1024;

}  // namespace

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

net::Response BulkReadPool::RunShared(const std::string& key,
                                      const std::function<net::Response()>& work) {
  return RunVersioned(key, "", work);
}

net::Response BulkReadPool::RunVersioned(const std::string& key, const std::string& version,
                                         const std::function<net::Response()>& work) {
  std::unique_lock lock(mutex_);
  if (!version.empty()) {
    auto kept = kept_.find(key);
    if (kept != kept_.end() && kept->second.version == version) {
      std::shared_ptr<const net::Response> answer = kept->second.answer;
      lock.unlock();
      return *answer;
    }
  }
  std::shared_ptr<SharedRender>& waiting = waiting_[key];
  std::shared_ptr<SharedRender> render = waiting;
  if (render == nullptr) {
    render = waiting = std::make_shared<SharedRender>();
    // This request waits until the render is done, so `work` (and what it refers to) lives.
    render->work = work;
    queue_.push_back([this, key, render] {
      {
        std::lock_guard begun(mutex_);
        auto found = waiting_.find(key);
        if (found != waiting_.end() && found->second == render) waiting_.erase(found);
      }
      // Whatever happens, every waiter gets an answer: a thrown render is a 500.
      std::shared_ptr<const net::Response> done;
      try {
        net::Response answer = render->work();
        // Every waiter sends the same bytes: shared, never copied per answer.
        if (!answer.shared_body) {
          answer.shared_body = std::make_shared<const std::string>(std::move(answer.body));
          answer.body.clear();
        }
        // Big lists go to most callers gzipped (Determined's CLI and browsers ask): once here.
        if (answer.shared_body->size() >= kGzipFromBytes) {
          if (auto gzipped = GzipFast(*answer.shared_body); gzipped.ok()) {
            answer.shared_gzip_body = std::make_shared<const std::string>(std::move(*gzipped));
          }
        }
        done = std::make_shared<const net::Response>(std::move(answer));
      } catch (...) {
        net::Response failed;
        failed.status = 500;
        failed.body = R"({"code":13,"message":"internal error","details":[]})";
        done = std::make_shared<const net::Response>(std::move(failed));
      }
      {
        std::lock_guard finished(mutex_);
        render->answer = std::move(done);
        Keep(key, *render);
      }
      rendered_.notify_all();
    });
    queued_.notify_one();
  }
  ++render->joined;
  // It has not begun, so it reads no earlier state than this waiter's version.
  render->version = version;
  rendered_.wait(lock, [&] { return render->answer != nullptr; });
  std::shared_ptr<const net::Response> answer = render->answer;
  lock.unlock();
  return *answer;
}

void BulkReadPool::Keep(const std::string& key, const SharedRender& render) {
  auto dropped = kept_.find(key);
  if (dropped != kept_.end()) {
    kept_bytes_ -= dropped->second.bytes;
    kept_.erase(dropped);
  }
  if (render.version.empty() || render.answer->status != 200) return;
  const net::Response& answer = *render.answer;
  const size_t bytes = key.size() + render.version.size() + answer.body.size() +
                       (answer.shared_body ? answer.shared_body->size() : 0) +
                       (answer.shared_gzip_body ? answer.shared_gzip_body->size() : 0);
  if (bytes > kKeptAnswerBytes) return;
  // Beyond the cap, others go (in key order: which ones matters less than that it stays cheap).
  while (kept_bytes_ + bytes > kKeptAnswerBytes && !kept_.empty()) {
    kept_bytes_ -= kept_.begin()->second.bytes;
    kept_.erase(kept_.begin());
  }
  kept_.emplace(key, KeptAnswer{render.version, render.answer, bytes});
  kept_bytes_ += bytes;
}

size_t BulkReadPool::Joined(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto found = waiting_.find(key);
  return found == waiting_.end() ? 0 : found->second->joined;
}

std::string SharedRenderKey(const Call& call) {
  return call.user().username + (call.user().admin ? " admin " : " ") + call.request().method +
         " " + call.request().target;
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
