// The bulk read pool (api/bulk_reads.h): identical requests waiting together share one render,
// and a render that has begun is never joined (it might miss what the newcomer must see); the
// cache of rendered entities lists are assembled from (api/render_cache.h).
#include "api/bulk_reads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "api/render_cache.h"

namespace cairn::api {
namespace {

// A shared render's answer carries its bytes once, for every request (shared_body).
std::string BodyOf(const net::Response& answer) {
  EXPECT_TRUE(answer.body.empty());
  return answer.shared_body ? *answer.shared_body : "(no shared body)";
}

net::Response Answer(std::string body) {
  net::Response answer;
  answer.body = std::move(body);
  return answer;
}

// Holds the pool's only worker until released, so that renders queue behind it.
class Blocker {
 public:
  explicit Blocker(BulkReadPool& pool)
      : done_(std::async(std::launch::async, [this, &pool] {
          return pool.Run([this] {
            started_.store(true);
            while (!released_.load()) std::this_thread::yield();
            return net::Response{};
          });
        })) {
    while (!started_.load()) std::this_thread::yield();
  }
  void Release() {
    released_.store(true);
    done_.get();
  }

 private:
  std::atomic<bool> started_{false};
  std::atomic<bool> released_{false};
  std::future<net::Response> done_;
};

// A versioned answer is kept: asked again with the same version it is not rendered again; a new
// version renders; a failure is never kept; another key is another answer.
TEST(BulkReadPoolTest, AVersionedAnswerIsServedAgainUntilItsVersionMoves) {
  BulkReadPool pool(1, 0);
  int renders = 0;
  auto render = [&] { return Answer("render " + std::to_string(++renders)); };
  EXPECT_EQ(BodyOf(pool.RunVersioned("k", "v1", render)), "render 1");
  EXPECT_EQ(BodyOf(pool.RunVersioned("k", "v1", render)), "render 1");
  EXPECT_EQ(renders, 1);
  EXPECT_EQ(BodyOf(pool.RunVersioned("k", "v2", render)), "render 2");
  EXPECT_EQ(BodyOf(pool.RunVersioned("other", "v2", render)), "render 3") << "keys are apart";
  EXPECT_EQ(BodyOf(pool.RunVersioned("k", "v2", render)), "render 2");
  EXPECT_EQ(BodyOf(pool.RunShared("k", render)), "render 4") << "unversioned: always rendered";
  EXPECT_EQ(BodyOf(pool.RunVersioned("k", "v2", render)), "render 5")
      << "an unversioned render replaced what was kept";

  auto failing = [&] {
    net::Response failed = Answer("failed " + std::to_string(++renders));
    failed.status = 503;
    return failed;
  };
  EXPECT_EQ(BodyOf(pool.RunVersioned("f", "v1", failing)), "failed 6");
  EXPECT_EQ(BodyOf(pool.RunVersioned("f", "v1", failing)), "failed 7") << "a failure is not kept";
}

// A big answer kept is sent gzipped from what was kept, not compressed again.
TEST(BulkReadPoolTest, AKeptAnswerKeepsItsGzippedBytes) {
  BulkReadPool pool(1, 0);
  int renders = 0;
  auto render = [&] {
    ++renders;
    return Answer(std::string(256 * 1024, 'x'));
  };
  net::Response first = pool.RunVersioned("k", "v", render);
  net::Response again = pool.RunVersioned("k", "v", render);
  EXPECT_EQ(renders, 1);
  ASSERT_NE(first.shared_gzip_body, nullptr);
  EXPECT_EQ(again.shared_gzip_body, first.shared_gzip_body) << "the same bytes, not a copy";
}

TEST(BulkReadPoolTest, RequestsThatWaitTogetherShareOneRender) {
  BulkReadPool pool(1, 0);
  Blocker blocker(pool);
  std::atomic<int> renders{0};
  auto render = [&] { return Answer("render " + std::to_string(++renders)); };
  std::vector<std::future<net::Response>> answers;
  for (int i = 0; i < 5; ++i) {
    answers.push_back(std::async(std::launch::async, [&] { return pool.RunShared("k", render); }));
  }
  // Another caller's request is never joined to theirs. It is sent once all five wait, so that
  // it queues behind their render.
  while (pool.Joined("k") < 5) std::this_thread::yield();
  auto other = std::async(std::launch::async, [&] { return pool.RunShared("other", render); });
  while (pool.Joined("other") < 1) std::this_thread::yield();
  blocker.Release();
  for (auto& answer : answers) EXPECT_EQ(BodyOf(answer.get()), "render 1");
  EXPECT_EQ(BodyOf(other.get()), "render 2");
  EXPECT_EQ(renders.load(), 2);
}

TEST(BulkReadPoolTest, ARenderThatHasBegunIsNotJoined) {
  BulkReadPool pool(1, 0);
  std::atomic<bool> begun{false};
  std::atomic<bool> finish{false};
  std::atomic<int> renders{0};
  auto first = std::async(std::launch::async, [&] {
    return pool.RunShared("k", [&] {
      ++renders;
      begun.store(true);
      while (!finish.load()) std::this_thread::yield();
      return Answer("first");
    });
  });
  while (!begun.load()) std::this_thread::yield();
  auto second = std::async(std::launch::async, [&] {
    return pool.RunShared("k", [&] {
      ++renders;
      return Answer("second");
    });
  });
  while (pool.Joined("k") < 1) std::this_thread::yield();
  finish.store(true);
  EXPECT_EQ(BodyOf(first.get()), "first");
  EXPECT_EQ(BodyOf(second.get()), "second") << "a newcomer gets a render that began after it came";
  EXPECT_EQ(renders.load(), 2);
}

TEST(RenderCacheTest, RendersAKeyOnceAndForgetsEverythingPastItsCap) {
  RenderCache cache(100);
  int renders = 0;
  auto render = [&] { return "text " + std::to_string(++renders); };
  EXPECT_EQ(cache.Get("task a @1", render), "text 1");
  EXPECT_EQ(cache.Get("task a @1", render), "text 1") << "kept";
  EXPECT_EQ(cache.Get("task a @2", render), "text 2") << "a new version is a new key";
  const std::string big(90, 'x');
  EXPECT_EQ(cache.Get("big", [&] { return big; }), big);
  EXPECT_EQ(cache.Get("task a @1", render), "text 3") << "emptied past its cap";
}

}  // namespace
}  // namespace cairn::api
