// A reader of TensorBoard event files for tests, written apart from the harness's Python writer
// (agent/harness/cairn_harness/tfevents.py) so that each checks the other: TFRecord framing with
// masked CRC-32Cs, and the few fields of tensorflow.Event a trial's scalars use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::testing {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
uint32_t Crc32c(std::string_view bytes);

// One tensorflow.Event: its time and step, and either a file_version or scalars
// (Summary.value's tag and simple_value, in order).
struct TfEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> scalars;
};

// Every event of a file's bytes. Corruption for a CRC that does not match, a record cut short,
// or a protobuf that does not parse.
Result<std::vector<TfEvent>> ReadEventFile(std::string_view bytes);

}  // namespace cairn::testing
