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

}  // namespace cairn::commands
