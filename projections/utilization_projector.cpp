#include "projections/utilization_projector.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kNowKey = "now";
constexpr std::string_view kSamplePrefix = "sample/";
constexpr std::string_view kAgentPrefix = "agent/";
constexpr std::string_view kTaskPrefix = "task/";

// Big-endian with the sign bit flipped: byte order is time order, before 1970 included.
std::string SampleKey(int64_t time_unix_micros, uint64_t offset) {
  std::string key(kSamplePrefix);
  AppendBigEndian64(&key, static_cast<uint64_t>(time_unix_micros) ^ (uint64_t{1} << 63));
  AppendBigEndian64(&key, offset);
  return key;
}

// The counts an event moves, applied to "now" once the event is folded.
struct Change {
  int32_t slots_total = 0;
  int32_t slots_used = 0;
  int32_t tasks_waiting = 0;
  bool any() const { return slots_total != 0 || slots_used != 0 || tasks_waiting != 0; }
};

int32_t HeldSlots(const views::UtilizationTask& task) {
  int32_t slots = 0;
  for (int32_t part : task.part_slots()) slots += part;
  return slots;
}

bool Waiting(const views::UtilizationTask& task) {
  return !task.held() && task.allocation_id().empty();
}

Result<Change> OnAgent(const Envelope& event, ViewStore& store) {
  const bool registered = event.has_agent_registered();
  const std::string& agent_id =
      registered ? event.agent_registered().agent_id() : event.agent_disconnected().agent_id();
  if (agent_id.empty()) return Change{};
  const std::string key = PrefixedKey(kAgentPrefix, agent_id);
  views::UtilizationAgent agent;
  CAIRN_ASSIGN_OR_RETURN(bool known, store.GetMessage(key, &agent));
  Change change;
  if (agent.connected()) change.slots_total -= agent.slot_count();
  if (registered) {
    agent.set_incarnation(event.agent_registered().incarnation());
    agent.set_slot_count(event.agent_registered().slot_count());
    agent.set_connected(true);
  } else {
    const std::string& incarnation = event.agent_disconnected().incarnation();
    // A disconnect of an older process of the agent leaves the current one counted.
    if (!known || (!incarnation.empty() && incarnation != agent.incarnation())) return Change{};
    agent.set_connected(false);
  }
  if (agent.connected()) change.slots_total += agent.slot_count();
  CAIRN_RETURN_IF_ERROR(store.PutMessage(key, agent));
  return change;
}

Result<Change> OnTask(const Envelope& event, ViewStore& store) {
  const std::string key = PrefixedKey(kTaskPrefix, TaskIdOf(event));
  if (event.has_task_submitted()) {
    if (event.task_submitted().task_id().empty()) return Change{};
    CAIRN_ASSIGN_OR_RETURN(auto known, store.Get(key));
    if (known) return Change{};  // a task is submitted once; a repeat changes nothing
    CAIRN_RETURN_IF_ERROR(store.PutMessage(key, views::UtilizationTask()));
    return Change{.tasks_waiting = 1};
  }
  views::UtilizationTask task;
  CAIRN_ASSIGN_OR_RETURN(bool live, store.GetMessage(key, &task));
  if (!live) return Change{};
  const bool was_waiting = Waiting(task);
  const int32_t held_before = HeldSlots(task);
  switch (event.payload_case()) {
    case Envelope::kTaskExited:
      CAIRN_RETURN_IF_ERROR(store.Delete(key));
      return Change{.slots_used = -held_before, .tasks_waiting = was_waiting ? -1 : 0};
    case Envelope::kTaskHeld:
      if (task.held() == event.task_held().held()) return Change{};
      task.set_held(event.task_held().held());
      break;
    case Envelope::kAllocationAssigned: {
      if (!task.allocation_id().empty()) return Change{};  // only a task holding nothing is placed
      const auto& assigned = event.allocation_assigned();
      task.set_allocation_id(assigned.allocation_id());
      for (const events::AllocationPart& part : AllocationPartsOf(assigned)) {
        task.add_part_agents(part.agent_id());
        task.add_part_slots(part.slot_ids_size());
      }
      break;
    }
    case Envelope::kAllocationPartExited: {
      const auto& exited = event.allocation_part_exited();
      if (task.allocation_id().empty() || exited.allocation_id() != task.allocation_id()) {
        return Change{};
      }
      auto* agents = task.mutable_part_agents();
      auto* slots = task.mutable_part_slots();
      auto part = std::find(agents->begin(), agents->end(), exited.agent_id());
      if (part == agents->end()) return Change{};
      slots->erase(slots->begin() + (part - agents->begin()));
      agents->erase(part);
      break;
    }
    case Envelope::kAllocationReleased:
      if (task.allocation_id().empty() ||
          event.allocation_released().allocation_id() != task.allocation_id()) {
        return Change{};
      }
      task.clear_allocation_id();
      task.clear_part_agents();
      task.clear_part_slots();
      break;
    default:
      return Change{};
  }
  CAIRN_RETURN_IF_ERROR(store.PutMessage(key, task));
  return Change{.slots_used = HeldSlots(task) - held_before,
                .tasks_waiting = static_cast<int32_t>(Waiting(task)) - was_waiting};
}

}  // namespace

Status UtilizationProjector::Apply(const Envelope& event, ViewStore& store) const {
  Result<Change> change = Change{};
  switch (event.payload_case()) {
    case Envelope::kAgentRegistered:
    case Envelope::kAgentDisconnected:
      change = OnAgent(event, store);
      break;
    case Envelope::kTaskSubmitted:
    case Envelope::kTaskExited:
    case Envelope::kTaskHeld:
    case Envelope::kAllocationAssigned:
    case Envelope::kAllocationPartExited:
    case Envelope::kAllocationReleased:
      change = OnTask(event, store);
      break;
    default:
      return Status::Ok();
  }
  CAIRN_RETURN_IF_ERROR(change.status());
  if (!change->any()) return Status::Ok();
  views::UtilizationSample now;
  CAIRN_RETURN_IF_ERROR(store.GetMessage(kNowKey, &now).status());
  now.set_offset(event.offset());
  now.set_time_unix_micros(event.time_unix_micros());
  now.set_slots_total(now.slots_total() + change->slots_total);
  now.set_slots_used(now.slots_used() + change->slots_used);
  now.set_tasks_waiting(now.tasks_waiting() + change->tasks_waiting);
  CAIRN_RETURN_IF_ERROR(store.PutMessage(kNowKey, now));
  return store.PutMessage(SampleKey(event.time_unix_micros(), event.offset()), now);
}

Result<UtilizationRead> ReadUtilization(ViewReader& reader, int64_t from_unix_micros,
                                        int64_t to_unix_micros, int steps) {
  if (steps < 1 || to_unix_micros - from_unix_micros < steps) {
    return Status::InvalidArgument("the window must be at least a microsecond per step");
  }
  UtilizationRead read;
  // Every sample at or before `from` sorts below the first key of `from + 1`.
  const std::string window_begin = SampleKey(from_unix_micros + 1, 0);
  const std::string window_end = SampleKey(to_unix_micros + 1, 0);
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(reader.ScanRange(kSamplePrefix, window_begin, /*backward=*/true,
                                         [&](std::string_view key, std::string_view value) {
                                           parse_error = ParseView(value, key, &read.at_start);
                                           return false;
                                         }));
  CAIRN_RETURN_IF_ERROR(parse_error);

  const int64_t span = to_unix_micros - from_unix_micros;
  auto step_end = [&](int step) {
    // Exact in 128 bits: the last step ends at `to`.
    return from_unix_micros +
           static_cast<int64_t>(static_cast<__int128>(span) * (step + 1) / steps);
  };
  views::UtilizationSample current = read.at_start;
  auto open_step = [&](int step) {
    UtilizationPoint& point = read.points.emplace_back();
    point.end_unix_micros = step_end(step);
    point.peak_slots_used = current.slots_used();
    point.peak_tasks_waiting = current.tasks_waiting();
  };
  auto close_step = [&]() { read.points.back().at_end = current; };
  open_step(0);
  CAIRN_RETURN_IF_ERROR(reader.ScanRange(
      window_begin, window_end, /*backward=*/false,
      [&](std::string_view key, std::string_view value) {
        views::UtilizationSample sample;
        parse_error = ParseView(value, key, &sample);
        if (!parse_error.ok()) return false;
        // Steps without samples carry the counts across.
        while (sample.time_unix_micros() > read.points.back().end_unix_micros) {
          close_step();
          open_step(static_cast<int>(read.points.size()));
        }
        current = std::move(sample);
        UtilizationPoint& point = read.points.back();
        point.peak_slots_used = std::max(point.peak_slots_used, current.slots_used());
        point.peak_tasks_waiting = std::max(point.peak_tasks_waiting, current.tasks_waiting());
        return true;
      }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  while (true) {
    close_step();
    if (static_cast<int>(read.points.size()) == steps) break;
    open_step(static_cast<int>(read.points.size()));
  }
  return read;
}

}  // namespace cairn::projections
