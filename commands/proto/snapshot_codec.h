// What every room's part of the decision snapshot codec shares (commands/<room>/*_snapshot.h):
// the guard that a record's every field is covered, and protobuf's wire format written straight
// from a record.
#pragma once

#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "base/field_count.h"

namespace cairn::commands {

// A field added to a record the snapshot holds must be added to the snapshot (or derived on
// decoding) and to tests/commands/snapshot_coverage_test.cpp, which fills every field and
// round-trips it: these counts make the build say so, on every platform (base/field_count.h).
// Update them with the snapshot's fields, and bump kDecisionSnapshotFormat when an old snapshot
// would decode to a different meaning. TenancyState is left out: it has a constructor (it holds the
// built-in workspace and project), so it is no aggregate and FieldCount cannot count it; the
// coverage test unpacks it with a structured binding instead, which stops compiling when a field is
// added.
#define CAIRN_SNAPSHOT_COVERS(Record, fields)     \
  static_assert(FieldCount<Record>() == (fields), \
                #Record " changed: update its room's *_snapshot.cpp and the coverage test")

// A decoded string's contents, moved out of the message being decoded.
inline std::string Take(std::string* field) { return std::move(*field); }

// Protobuf's wire format appended to a string, for the records a snapshot holds by the hundred
// thousand: a task's and a job's fields are written straight from the record, where filling a
// snapshot::Task first copied every string into the message and parsed the packed spec (at 100k
// queued that was most of a write-side snapshot's time). The bytes are exactly those the
// generated serializer gives for the same message (fields in number order, proto3 defaults
// left out, packed repeated scalars): GeneratedHistory.StreamedBytesAreTheWholeMessagesBytes
// and HandWrittenRecordsAreTheGeneratedBytes compare them.
class WireAppender {
 public:
  using WireFormatLite = google::protobuf::internal::WireFormatLite;

  explicit WireAppender(std::string& out) : out_(out) {}

  void String(int field, std::string_view value) {
    if (!value.empty()) Delimited(field, value);
  }
  // A length-delimited field written even when empty (a sub-message that is present).
  void Delimited(int field, std::string_view value) {
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(value.size());
    out_.append(value);
  }
  void UInt64(int field, uint64_t value) {
    if (value == 0) return;
    Tag(field, WireFormatLite::WIRETYPE_VARINT);
    Varint(value);
  }
  // int32 and int64 alike: a negative value is sign-extended to ten bytes, as protobuf writes it.
  void Int64(int field, int64_t value) { UInt64(field, static_cast<uint64_t>(value)); }
  void Bool(int field, bool value) { UInt64(field, value ? 1 : 0); }
  void Double(int field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (bits == 0) return;  // protobuf writes -0.0, which is not all zero bits
    Tag(field, WireFormatLite::WIRETYPE_FIXED64);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  // A packed repeated int32 or uint32 (proto3's default encoding for repeated scalars).
  template <typename Integers>
  void Packed(int field, const Integers& values) {
    if (values.empty()) return;
    size_t length = 0;
    for (auto value : values) length += VarintSize(Widened(value));
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(length);
    for (auto value : values) Varint(Widened(value));
  }
  // A sub-message of the events' schema, serialized by protobuf from `scratch`, a copy: the
  // record's own message is never asked its size, which would write its cached size into the
  // record (a forked snapshot's child would copy the page).
  template <typename Message>
  void SubMessage(int field, const Message& message, Message& scratch) {
    scratch = message;
    const size_t size = scratch.ByteSizeLong();
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(size);
    const size_t at = out_.size();
    out_.resize(at + size);
    scratch.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out_.data() + at));
  }

 private:
  template <typename Integer>
  static uint64_t Widened(Integer value) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  }
  static size_t VarintSize(uint64_t value) {
    size_t size = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++size;
    }
    return size;
  }
  void Tag(int field, WireFormatLite::WireType type) {
    Varint(static_cast<uint64_t>(WireFormatLite::MakeTag(field, type)));
  }
  void Varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }

  std::string& out_;
};

}  // namespace cairn::commands
