// The writers projection: every writer epoch a master claimed, keyed
// "claim/<8-byte big-endian offset>" -> events::WriterEpochClaimed, so a reader that starts in
// the middle of the log (an agent resuming its placements) knows which writer was current there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kWritersProjector = "writers";

class WriterProjector : public Projector {
 public:
  const std::string& name() const override { return kWritersProjector; }
  Status Apply(const Envelope& /*event*/, ViewStore& /*store*/) const override {
    return Status::Ok();
  }
  Status OnEpochClaimed(const Envelope& claim, ViewStore& store) const override;
};

// The newest epoch claimed by an event below `offset` (0 when none was).
Result<uint64_t> ReadNewestEpochBefore(ViewReader& reader, uint64_t offset);

}  // namespace cairn::projections
