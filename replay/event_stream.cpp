#include "replay/event_stream.h"

#include "events/envelope_util.h"

namespace cairn::replay {

Result<std::unique_ptr<EventStream>> EventStream::Open(EventLog* log, EventStreamOptions options) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  if (options.from > end) {
    return Status::InvalidArgument("from " + std::to_string(options.from) +
                                   " is past the end of the log (" + std::to_string(end) + ")");
  }
  CAIRN_ASSIGN_OR_RETURN(auto reader, log->OpenReader(options.from));
  return std::unique_ptr<EventStream>(new EventStream(std::move(reader), std::move(options)));
}

Result<std::vector<events::Envelope>> EventStream::Next(size_t max_events,
                                                        std::chrono::milliseconds wait) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<events::Envelope> events, reader_->Next(max_events, wait));
  std::vector<events::Envelope> passed;
  for (auto& event : events) {
    const EpochFence::Verdict verdict = fence_.Admit(event);
    if (!options_.agent.empty() &&
        (verdict != EpochFence::Verdict::kFact || !IsPlacementFor(event, options_.agent))) {
      continue;
    }
    if (!options_.types.empty() && !options_.types.count(PayloadTypeName(event))) continue;
    passed.push_back(std::move(event));
  }
  return passed;
}

uint64_t EventStream::position() const { return reader_->position(); }

}  // namespace cairn::replay
