#include "replay/event_filter.h"

#include <sstream>
#include <vector>

#include "events/envelope_util.h"

namespace cairn::replay {

namespace {

// Every name PayloadTypeName can return.
const std::vector<std::string>& KnownTypes() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> types;
    const auto* oneof = events::Envelope::descriptor()->FindOneofByName("payload");
    for (int i = 0; i < oneof->field_count(); ++i) {
      events::Envelope probe;
      probe.GetReflection()->MutableMessage(&probe, oneof->field(i));
      types.push_back(PayloadTypeName(probe));
    }
    types.push_back(PayloadTypeName(events::Envelope()));  // payloads this build does not know
    return types;
  }();
  return kTypes;
}

}  // namespace

Result<std::set<std::string>> ParseEventTypes(const std::string& list) {
  std::set<std::string> types;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    if (name.empty()) continue;
    bool known = false;
    for (const auto& type : KnownTypes()) known = known || type == name;
    if (!known) {
      std::string all;
      for (const auto& type : KnownTypes()) all += (all.empty() ? "" : ", ") + type;
      return Status::InvalidArgument("unknown event type '" + name + "' (known: " + all + ")");
    }
    types.insert(name);
  }
  if (types.empty()) return Status::InvalidArgument("--type names no event type");
  return types;
}

bool EventMentions(const events::Envelope& event, const std::string& id) {
  if (EntityIdOf(event) == id || IsPlacementFor(event, id)) return true;
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted:
      return event.task_submitted().job_id() == id;
    case events::Envelope::kAllocationAssigned:
      return event.allocation_assigned().allocation_id() == id;
    case events::Envelope::kTaskStarted:
      return event.task_started().agent_id() == id || event.task_started().allocation_id() == id;
    case events::Envelope::kTaskReady:
      return event.task_ready().agent_id() == id || event.task_ready().allocation_id() == id;
    case events::Envelope::kTaskExited:
      return event.task_exited().agent_id() == id || event.task_exited().allocation_id() == id;
    case events::Envelope::kKillRequested:
      return event.kill_requested().allocation_id() == id;
    default:
      return false;
  }
}

bool EventFilter::Matches(const events::Envelope& event) const {
  if (event.offset() < from_offset) return false;
  if (to_offset && event.offset() > *to_offset) return false;
  if (since_micros && event.time_unix_micros() < *since_micros) return false;
  if (until_micros && event.time_unix_micros() > *until_micros) return false;
  if (!types.empty() && types.count(PayloadTypeName(event)) == 0) return false;
  if (!entity.empty() && !EventMentions(event, entity)) return false;
  return true;
}

}  // namespace cairn::replay
