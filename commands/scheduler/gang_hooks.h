// What the owner of a gang adds to its placement, so that the scheduler knows gangs but no kind of
// job: the fixed ports a member must hold on its agent, and the environment each member gets once
// the whole gang is placed (where the others run). OpenPAI jobs (commands/pai/pai_gang_hooks.h)
// are the one owner today; a job no hook claims is placed by slots alone.
//
// The hook is linked in, not passed around: the composition of the write side
// (commands/decider.cpp) defines GangHooksOf, so the scheduler's folder includes no domain's
// header. Pure, like the scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

class GangHooks {
 public:
  virtual ~GangHooks() = default;

  // Whether `member` (a task of a gang) holds ports of its own on its agent.
  virtual bool HoldsPorts(const DecisionState& state, const TaskRecord& member) const = 0;
  // The ports live work holds on `agent_id`.
  virtual std::set<int32_t> PortsHeld(const DecisionState& state,
                                      const std::string& agent_id) const = 0;
  // Chooses the ports `member` holds on an agent where `taken` are in use, and adds them to
  // `taken`; FailedPrecondition naming a fixed port that is taken there.
  virtual Result<std::vector<events::PaiPorts>> ChoosePorts(const DecisionState& state,
                                                            const TaskRecord& member,
                                                            std::set<int32_t>& taken) const = 0;

  // One member of a gang as placed: its task, its agent's address, the ports it got there.
  struct PlacedMember {
    const TaskRecord* task = nullptr;
    std::string host_ip;
    std::vector<events::PaiPorts> ports;
  };
  // The environment variables ("NAME=value") of each of `placed` once the gang is placed, in
  // their order.
  virtual std::vector<std::vector<std::string>> PlacementVariables(
      const DecisionState& state, const std::vector<PlacedMember>& placed) const = 0;
};

// The hooks of the job `job_id`'s owner, or nullptr when no owner adds anything to its placement.
const GangHooks* GangHooksOf(const DecisionState& state, const std::string& job_id);

}  // namespace cairn::commands
