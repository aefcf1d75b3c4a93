#include "projections/writer_projector.h"

#include <algorithm>

namespace cairn::projections {

namespace {

constexpr std::string_view kClaimPrefix = "claim/";

}  // namespace

Status WriterProjector::OnEpochClaimed(const Envelope& claim, ViewStore& store) const {
  std::string key(kClaimPrefix);
  AppendBigEndian64(&key, claim.offset());
  return store.PutMessage(key, claim.writer_epoch_claimed());
}

Result<uint64_t> ReadNewestEpochBefore(ViewReader& reader, uint64_t offset) {
  // Claims are rare (one per master start): a scan of them all is cheap.
  uint64_t newest = 0;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(
      reader.Scan(kClaimPrefix, [&](std::string_view key, std::string_view value) {
        if (DecodeBigEndian64(key.substr(kClaimPrefix.size())) >= offset) return false;
        events::WriterEpochClaimed claimed;
        parse_error = ParseView(value, key, &claimed);
        newest = std::max(newest, claimed.epoch());
        return parse_error.ok();
      }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  return newest;
}

}  // namespace cairn::projections
