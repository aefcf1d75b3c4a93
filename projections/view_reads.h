// Typed reads the projections' queries share over a ViewReader: one view by key, every view
// under a key prefix.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "projections/view_store.h"

namespace cairn::projections {

// The view at `key`; nullopt when absent, Corruption when unparsable.
template <typename View>
Result<std::optional<View>> ReadView(ViewReader& reader, std::string_view key) {
  View view;
  CAIRN_ASSIGN_OR_RETURN(bool found, GetMessage(reader, key, &view));
  if (!found) return std::optional<View>();
  return std::optional<View>(std::move(view));
}

// Every view under `prefix`, in key order.
template <typename View>
Result<std::vector<View>> ScanViews(ViewReader& reader, std::string_view prefix) {
  std::vector<View> found;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view key, std::string_view value) {
    parse_error = ParseView(value, key, &found.emplace_back());
    return parse_error.ok();
  }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  return found;
}

}  // namespace cairn::projections
