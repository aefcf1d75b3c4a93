#include "tests/support/tfevents_reader.h"

#include <array>
#include <cstring>

namespace cairn::testing {
namespace {

constexpr uint32_t kMaskDelta = 0xa282ead8;

uint32_t Masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint64_t LittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = value << 8 | static_cast<unsigned char>(bytes[i]);
  return value;
}

// A cursor over one protobuf message.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view message) : rest_(message) {}
  bool done() const { return rest_.empty(); }

  Result<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) break;
      const auto byte = static_cast<unsigned char>(rest_.front());
      rest_.remove_prefix(1);
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Status::Corruption("a protobuf varint runs past its message");
  }

  Result<std::string_view> Bytes(size_t size) {
    if (size > rest_.size()) return Status::Corruption("a protobuf field runs past its message");
    std::string_view bytes = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return bytes;
  }

  // The next field's number and wire type, and its value: a varint's in `number`, the bytes of
  // the others (fixed64, length-delimited, fixed32) in `bytes`.
  struct Field {
    uint64_t field = 0;
    uint64_t wire_type = 0;
    uint64_t number = 0;
    std::string_view bytes;
  };
  Result<Field> Next() {
    CAIRN_ASSIGN_OR_RETURN(uint64_t key, Varint());
    Field field{key >> 3, key & 7, 0, {}};
    switch (field.wire_type) {
      case 0: {
        CAIRN_ASSIGN_OR_RETURN(field.number, Varint());
        break;
      }
      case 1: {
        CAIRN_ASSIGN_OR_RETURN(field.bytes, Bytes(8));
        break;
      }
      case 2: {
        CAIRN_ASSIGN_OR_RETURN(uint64_t size, Varint());
        CAIRN_ASSIGN_OR_RETURN(field.bytes, Bytes(size));
        break;
      }
      case 5: {
        CAIRN_ASSIGN_OR_RETURN(field.bytes, Bytes(4));
        break;
      }
      default:
        return Status::Corruption("protobuf wire type " + std::to_string(field.wire_type));
    }
    return field;
  }

 private:
  std::string_view rest_;
};

Result<std::pair<std::string, float>> DecodeValue(std::string_view message) {
  std::pair<std::string, float> scalar;
  ProtoReader reader(message);
  while (!reader.done()) {
    CAIRN_ASSIGN_OR_RETURN(auto field, reader.Next());
    if (field.field == 1 && field.wire_type == 2) scalar.first = std::string(field.bytes);
    if (field.field == 2 && field.wire_type == 5) {
      const auto bits = static_cast<uint32_t>(LittleEndian(field.bytes));
      std::memcpy(&scalar.second, &bits, sizeof bits);
    }
  }
  return scalar;
}

Result<TfEvent> DecodeEvent(std::string_view message) {
  TfEvent event;
  ProtoReader reader(message);
  while (!reader.done()) {
    CAIRN_ASSIGN_OR_RETURN(auto field, reader.Next());
    if (field.field == 1 && field.wire_type == 1) {
      const uint64_t bits = LittleEndian(field.bytes);
      std::memcpy(&event.wall_time, &bits, sizeof bits);
    } else if (field.field == 2 && field.wire_type == 0) {
      event.step = static_cast<int64_t>(field.number);
    } else if (field.field == 3 && field.wire_type == 2) {
      event.file_version = std::string(field.bytes);
    } else if (field.field == 5 && field.wire_type == 2) {
      ProtoReader summary(field.bytes);
      while (!summary.done()) {
        CAIRN_ASSIGN_OR_RETURN(auto value, summary.Next());
        if (value.field != 1 || value.wire_type != 2) continue;
        CAIRN_ASSIGN_OR_RETURN(auto scalar, DecodeValue(value.bytes));
        event.scalars.push_back(std::move(scalar));
      }
    }
  }
  return event;
}

}  // namespace

uint32_t Crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t byte = 0; byte < 256; ++byte) {
      uint32_t crc = byte;
      for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
      entries[byte] = crc;
    }
    return entries;
  }();
  uint32_t crc = 0xffffffffu;
  for (char c : bytes) crc = table[(crc ^ static_cast<unsigned char>(c)) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

Result<std::vector<TfEvent>> ReadEventFile(std::string_view bytes) {
  std::vector<TfEvent> events;
  size_t position = 0;
  while (position < bytes.size()) {
    const std::string where = " in the record at byte " + std::to_string(position);
    if (bytes.size() - position < 12) return Status::Corruption("a record header is cut" + where);
    const std::string_view length_bytes = bytes.substr(position, 8);
    const uint64_t length = LittleEndian(length_bytes);
    if (Masked(Crc32c(length_bytes)) != LittleEndian(bytes.substr(position + 8, 4))) {
      return Status::Corruption("the length's CRC does not match" + where);
    }
    if (length > bytes.size() - position - 12 || bytes.size() - position - 12 - length < 4) {
      return Status::Corruption("the data is cut" + where);
    }
    const std::string_view data = bytes.substr(position + 12, length);
    if (Masked(Crc32c(data)) != LittleEndian(bytes.substr(position + 12 + length, 4))) {
      return Status::Corruption("the data's CRC does not match" + where);
    }
    auto event = DecodeEvent(data);
    if (!event.ok()) return Status::Corruption(event.status().message() + where);
    events.push_back(std::move(*event));
    position += 12 + length + 4;
  }
  return events;
}

}  // namespace cairn::testing
