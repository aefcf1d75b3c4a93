// Read-side fencing, the one rule every reader of the log applies (docs/architecture.md, rule 2): a
// master that starts claims a new writer epoch with WriterEpochClaimed; events written afterwards
// under an older epoch come from a master that was fenced off, and never happened. The write side's
// state, the projectors, the placement relay and the event stream all fold the log through this.
#pragma once

#include <algorithm>
#include <cstdint>

#include "events.pb.h"

namespace cairn {

class EpochFence {
 public:
  enum class Verdict {
    kFact,    // an event that happened: apply it
    kClaim,   // a WriterEpochClaimed: bookkeeping that raised (or kept) the fence
    kFenced,  // written by a master an earlier claim fenced off: ignore it
  };

  explicit EpochFence(uint64_t newest_epoch = 0) : newest_epoch_(newest_epoch) {}

  // Folds the next event of the log, in order.
  Verdict Admit(const events::Envelope& event) {
    if (event.has_writer_epoch_claimed()) {
      newest_epoch_ = std::max(newest_epoch_, event.writer_epoch_claimed().epoch());
      return Verdict::kClaim;
    }
    return event.writer_epoch() < newest_epoch_ ? Verdict::kFenced : Verdict::kFact;
  }

  // The newest epoch claimed so far (0 before any claim).
  uint64_t newest_epoch() const { return newest_epoch_; }

 private:
  uint64_t newest_epoch_;
};

}  // namespace cairn
