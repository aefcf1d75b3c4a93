// Fuzz target: one event's bytes as a log record or a Kafka message carries them, decoded into an
// Envelope and read by the helpers every consumer uses (events/envelope_util.h). An envelope that
// decodes must also go out as JSON (the event stream, `cairn replay dump`) and read back from it
// (agents read placement orders so) as the same event, less its secrets and unknown fields.
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include "events/envelope_util.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool SameEvent(const cairn::events::Envelope& a, const cairn::events::Envelope& b) {
  // JSON has one NaN: a NaN metric comes back a NaN, though maybe not bit for bit.
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  return differencer.Compare(a, b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::events::Envelope event;
  if (!event.ParseFromArray(data, static_cast<int>(size))) return 0;

  (void)cairn::PayloadTypeName(event);
  (void)cairn::TaskIdOf(event);
  (void)cairn::EntityIdOf(event);
  (void)cairn::IsPlacementFor(event, "agent-1");
  if (event.has_allocation_assigned()) {
    FUZZ_CHECK(!cairn::AllocationPartsOf(event.allocation_assigned()).empty());
  }
  // The machine's view: everything but password hashes, which never leave the master.
  const cairn::events::Envelope redacted = cairn::RedactedFor(event, cairn::Audience::kMachine);
  FUZZ_CHECK(!redacted.has_user_created() || redacted.user_created().password_hash().empty());
  // The other audiences must not throw on any event (configs that are not JSON or YAML included).
  (void)cairn::RedactedFor(event, cairn::Audience::kOwner);
  (void)cairn::RedactedFor(event, cairn::Audience::kOthers);

  const std::string json = cairn::EnvelopeToJson(event, cairn::Audience::kMachine);
  auto read_back = cairn::EnvelopeFromJson(json);
  FUZZ_CHECK(read_back.ok());
  cairn::events::Envelope expected = redacted;
  expected.DiscardUnknownFields();
  FUZZ_CHECK(SameEvent(*read_back, expected));
  return 0;
}
