#include "base/notification.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace cairn {
namespace {

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  // Returns at once when the word no longer holds `expected` (EAGAIN), on a wake, or on a signal:
  // the caller re-checks in every case.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit integer");

}  // namespace

void Notification::Notify() {
  if (state_.exchange(kNotified, std::memory_order_acq_rel) == kWaiting) FutexWakeAll(&state_);
}

void Notification::Wait() const {
  uint32_t state = state_.load(std::memory_order_acquire);
  while (state != kNotified) {
    if (state == kPending &&
        !state_.compare_exchange_weak(state, kWaiting, std::memory_order_acq_rel)) {
      continue;  // `state` now holds what is there: notified, or another waiter's mark
    }
    FutexWait(&state_, kWaiting);
    state = state_.load(std::memory_order_acquire);
  }
}

}  // namespace cairn
