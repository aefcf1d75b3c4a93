// A one-shot signal between two threads: one Notify(), any number of waits. A thread handing an
// answer to another (the writer to a request's thread) pays one futex wake, and the waiter one
// futex wait only when it got there first: std::promise took three futex calls for the same
// hand-off, and std::atomic::wait spins on sched_yield first, which on a 2-core master took CPU
// from the very thread it was waiting for.
#pragma once

#include <atomic>
#include <cstdint>

namespace cairn {

class Notification {
 public:
  Notification() = default;
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  // Wakes every waiter. Whatever the notifier wrote before is visible to them. Call once; the
  // object must outlive the call (both sides hold it, e.g. by shared_ptr).
  void Notify();
  // Returns once Notify() was called.
  void Wait() const;
  bool HasBeenNotified() const { return state_.load(std::memory_order_acquire) == kNotified; }

 private:
  static constexpr uint32_t kPending = 0;
  static constexpr uint32_t kWaiting = 1;  // a waiter may be asleep: Notify must wake
  static constexpr uint32_t kNotified = 2;
  mutable std::atomic<uint32_t> state_{kPending};
};

}  // namespace cairn
