// The OpenPAI domain's part of the decision state (commands/decision_state.h): a job's record
// and its current attempt's members. Pure data; folded by commands/pai/pai_state.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "events.pb.h"

namespace cairn::commands {

// One task of an OpenPAI job's current attempt, and where it was placed.
struct PaiMember {
  std::string task_id;
  int32_t role = 0;  // index into the job's task_roles
  int32_t index = 0;
  std::string agent_id;                 // "" until placed
  std::vector<events::PaiPorts> ports;  // its ports on that agent, while it holds them
  bool exited = false;
};

// An OpenPAI job (commands/pai_job.h). The current attempt's outcome is decided by the first
// member end that settles it (a failure, the killAllOnCompletedTaskNumber-th success, every
// success, or a stop); the job controller (commands/pai_reactor.h) then kills what is left and,
// once every member ended, records the attempt's end and any retry.
struct PaiJobRecord {
  events::PaiJobSubmitted submitted;
  int32_t attempt = 0;
  std::vector<PaiMember> members;
  int32_t completed = 0;  // members of this attempt that exited with code 0
  std::string outcome;    // "" (undecided), "SUCCEEDED", "FAILED" or "STOPPED"
  std::string outcome_reason;
  std::string trigger_role;
  int32_t trigger_index = -1;
  std::optional<int32_t> trigger_exit_code;
  bool stop_requested = false;
  std::string final_state;  // "" while the job lives; then SUCCEEDED, FAILED or STOPPED
  int32_t retries = 0;      // attempts that ended and were retried

  bool ended() const { return !final_state.empty(); }
  bool all_exited() const {
    for (const auto& member : members) {
      if (!member.exited) return false;
    }
    return true;
  }
};

}  // namespace cairn::commands
