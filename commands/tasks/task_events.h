// The task events more than one domain decides (a kill, an end), built here, so that a kill or an
// end is always recorded the same way.
#pragma once

#include <string>
#include <vector>

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Who asked for a kill: a user's kill of a trial's run cancels the trial, the system's (a failed
// gang part, a disabled agent, a queued run withdrawn) does not.
enum class KillBy { kSystem, kUser };

// A kill order for every agent the task's allocation runs on (none for a queued task).
events::Envelope KillOrderFor(const TaskRecord& task, const std::string& reason,
                              KillBy by = KillBy::kSystem);
// The task's end, with `reason`; no exit code (it never ran, or its process is gone).
events::Envelope ExitOf(const TaskRecord& task, const std::string& reason);
// What a kill of the task decides in its current state: kill and end together for a queued task,
// a kill order for one holding an allocation, nothing for one already ending or ended.
std::vector<events::Envelope> KillEventsFor(const TaskRecord& task, const std::string& reason,
                                            KillBy by);

}  // namespace cairn::commands
