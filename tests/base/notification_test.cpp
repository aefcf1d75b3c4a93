#include "base/notification.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace cairn {
namespace {

TEST(NotificationTest, AWaitAfterTheNotifyReturnsAtOnce) {
  Notification done;
  EXPECT_FALSE(done.HasBeenNotified());
  done.Notify();
  EXPECT_TRUE(done.HasBeenNotified());
  done.Wait();
  done.Wait();  // any number of waits
}

// Waiters that arrive before, during and after the Notify all return, and each sees what the
// notifier wrote before it; many rounds, so that each interleaving comes up.
TEST(NotificationTest, EveryWaiterReturnsAndSeesWhatWasWrittenBefore) {
  constexpr int kRounds = 2000;
  constexpr int kWaiters = 3;
  for (int round = 0; round < kRounds; ++round) {
    Notification ready;
    std::string answer;
    std::atomic<int> saw_answer{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < kWaiters; ++i) {
      waiters.emplace_back([&] {
        ready.Wait();
        if (answer == "round " + std::to_string(round)) ++saw_answer;
      });
    }
    answer = "round " + std::to_string(round);
    ready.Notify();
    for (auto& waiter : waiters) waiter.join();
    ASSERT_EQ(saw_answer.load(), kWaiters) << "round " << round;
  }
}

}  // namespace
}  // namespace cairn
