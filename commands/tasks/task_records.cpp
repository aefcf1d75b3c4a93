#include "commands/tasks/task_records.h"

namespace cairn::commands {

const char* TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kQueued:
      return "QUEUED";
    case TaskState::kAssigned:
      return "ASSIGNED";
    case TaskState::kRunning:
      return "RUNNING";
    case TaskState::kTerminating:
      return "TERMINATING";
    case TaskState::kExited:
      return "EXITED";
  }
  return "UNKNOWN";
}

events::TaskSpec TaskRecord::Spec() const {
  events::TaskSpec spec;
  // Serialized by ApplyTaskSubmitted or DecodeTask from a message: it parses.
  spec.ParseFromString(packed_spec);
  return spec;
}

std::string_view TaskIdOfAllocation(std::string_view allocation_id) {
  const size_t dot = allocation_id.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : allocation_id.substr(0, dot);
}

}  // namespace cairn::commands
