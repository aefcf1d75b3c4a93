// The limits and defaults of what events carry, each defined once. Parsing (the REST edge,
// master.yaml, the agent's flags, replay's what-if), deciding (commands/) and rendering read them
// here, so a refusal's wording and the check behind it cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cairn {

// Priorities, as Determined's: lower numbers are more important; 42 when nothing says otherwise.
inline constexpr int32_t kMinPriority = 1;
inline constexpr int32_t kMaxPriority = 99;
inline constexpr int32_t kDefaultPriority = 42;
// "between 1 and 99", for refusals.
std::string PriorityRangeText();

// Slots one task may ask for, and one agent may offer.
inline constexpr int32_t kMaxSlotsPerTask = 4096;
inline constexpr int32_t kMaxSlotsPerAgent = 4096;

// The pool a cluster has when its configuration names none, and the zero-slot (aux) containers
// one agent may run at once (Determined's default).
inline constexpr const char* kDefaultPool = "default";
inline constexpr int32_t kMaxZeroSlotContainersPerAgent = 100;

// Ids (tasks, jobs, agents, pools) end up in URLs, keys and file names: letters, digits, '-',
// '_', '.'; at most kMaxIdLength.
inline constexpr size_t kMaxIdLength = 128;
bool IsSafeId(const std::string& id);
// "letters, digits, '-', '_', '.'; at most 128", for refusals.
std::string SafeIdRuleText();

// How long a preempted task may take to give its slots back before it is killed
// (Determined's task_container_defaults.preemption_timeout default), and the longest allowed.
inline constexpr double kDefaultPreemptionGraceSeconds = 3600;
inline constexpr double kMaxPreemptionGraceSeconds = 86400;

// task_container_defaults.startup_hook: an inline script, bounded like a small file.
inline constexpr size_t kMaxStartupHookBytes = 64 * 1024;

// The log line a trial's log policy match keeps in its event (TrialLogPolicyMatched).
inline constexpr size_t kMaxLogPolicyLineBytes = 1024;

// A project's description, as Determined bounds it.
inline constexpr size_t kMaxProjectDescriptionLength = 4096;

}  // namespace cairn
