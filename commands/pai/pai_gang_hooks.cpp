#include "commands/pai/pai_gang_hooks.h"

#include <map>
#include <string_view>

#include "commands/pai/pai_job.h"
#include "commands/pai/pai_state.h"

namespace cairn::commands {
namespace {

class PaiHooks final : public GangHooks {
 public:
  bool HoldsPorts(const DecisionState& state, const TaskRecord& member) const override {
    return MemberOf(state, member) != nullptr;
  }

  std::set<int32_t> PortsHeld(const DecisionState& state,
                              const std::string& agent_id) const override {
    std::set<int32_t> ports;
    for (const auto& [job_id, job] : state.pai_jobs) {
      if (job.ended()) continue;
      for (const auto& member : job.members) {
        if (member.exited || member.agent_id != agent_id) continue;
        for (const auto& labelled : member.ports) {
          ports.insert(labelled.ports().begin(), labelled.ports().end());
        }
      }
    }
    return ports;
  }

  Result<std::vector<events::PaiPorts>> ChoosePorts(const DecisionState& state,
                                                    const TaskRecord& member,
                                                    std::set<int32_t>& taken) const override {
    const PaiJobRecord* job = state.FindPaiJob(member.job_id());
    const PaiMember* pai = FindPaiMember(job, member.task_id);
    if (pai == nullptr) return std::vector<events::PaiPorts>();
    return pai::ChoosePorts(job->submitted.task_roles(pai->role), taken);
  }

  std::vector<std::vector<std::string>> PlacementVariables(
      const DecisionState& state, const std::vector<PlacedMember>& placed) const override {
    std::vector<std::vector<std::string>> variables(placed.size());
    if (placed.empty()) return variables;
    const PaiJobRecord* job = state.FindPaiJob(placed.front().task->job_id());
    if (job == nullptr) return variables;
    std::map<std::string_view, const PaiMember*> by_task;
    for (const auto& member : job->members) by_task.emplace(member.task_id, &member);
    std::vector<pai::PlacedMember> members;
    members.reserve(placed.size());
    for (const auto& one : placed) {
      pai::PlacedMember member;
      if (auto pai = by_task.find(one.task->task_id); pai != by_task.end()) {
        member.role = pai->second->role;
        member.index = pai->second->index;
      }
      member.host_ip = one.host_ip;
      member.ports = one.ports;
      members.push_back(std::move(member));
    }
    for (size_t i = 0; i < placed.size(); ++i) {
      variables[i] = pai::PlacementVariables(job->submitted, members, i);
    }
    return variables;
  }

 private:
  static const PaiMember* MemberOf(const DecisionState& state, const TaskRecord& task) {
    return FindPaiMember(state.FindPaiJob(task.job_id()), task.task_id);
  }
};

}  // namespace

const GangHooks* PaiGangHooks(const DecisionState& state, const std::string& job_id) {
  static const PaiHooks kHooks;
  return state.FindPaiJob(job_id) != nullptr ? &kHooks : nullptr;
}

}  // namespace cairn::commands
