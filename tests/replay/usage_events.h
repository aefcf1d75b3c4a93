// Builders for the events GPU-hours are counted from (replay/usage.h), at times given in seconds
// from a fixed start, for the usage tests and the consumer test that writes them to Kafka.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "events/event_log.h"

namespace cairn::testing {

class UsageHistory {
 public:
  static constexpr int64_t kStartMicros = 1'700'000'000'000'000;

  // Events from now on are written by the master of `epoch` (claimed or fenced).
  UsageHistory& By(uint64_t epoch) {
    epoch_ = epoch;
    return *this;
  }
  UsageHistory& Claim(int64_t second, uint64_t epoch) {
    Envelope& event = Add(second);
    event.mutable_writer_epoch_claimed()->set_epoch(epoch);
    event.set_writer_epoch(epoch);
    epoch_ = epoch;
    return *this;
  }
  UsageHistory& Workspace(int64_t second, int32_t workspace_id, const std::string& name) {
    auto* created = Add(second).mutable_workspace_created();
    created->set_workspace_id(workspace_id);
    created->set_name(name);
    return *this;
  }
  UsageHistory& RenameWorkspace(int64_t second, int32_t workspace_id, const std::string& name) {
    auto* updated = Add(second).mutable_workspace_updated();
    updated->set_workspace_id(workspace_id);
    updated->set_name(name);
    return *this;
  }
  // `workspace_id` as the event carries it (0: written before workspaces, meaning 1).
  UsageHistory& Submit(int64_t second, const std::string& task_id, const std::string& user,
                       int32_t workspace_id, int32_t slots, const std::string& job_id = "") {
    auto* submitted = Add(second).mutable_task_submitted();
    submitted->set_task_id(task_id);
    submitted->set_job_id(job_id);
    submitted->mutable_spec()->set_user(user);
    submitted->mutable_spec()->add_entrypoint("train.py");
    submitted->mutable_resources()->set_slots(slots);
    submitted->mutable_resources()->set_resource_pool("default");
    submitted->set_workspace_id(workspace_id);
    return *this;
  }
  // One agent's slots 0..slots-1.
  UsageHistory& Assign(int64_t second, const std::string& task_id, const std::string& allocation_id,
                       const std::string& agent_id, int32_t slots) {
    auto* assigned = Add(second).mutable_allocation_assigned();
    assigned->set_task_id(task_id);
    assigned->set_allocation_id(allocation_id);
    assigned->set_agent_id(agent_id);
    assigned->set_agent_incarnation(agent_id + "-1");
    for (int32_t slot = 0; slot < slots; ++slot) assigned->add_slot_ids(slot);
    assigned->set_resource_pool("default");
    assigned->set_reason("fits");
    return *this;
  }
  // A gang: one part per (agent, slots), the first being the allocation's agent_id.
  UsageHistory& AssignGang(int64_t second, const std::string& task_id,
                           const std::string& allocation_id,
                           const std::vector<std::pair<std::string, int32_t>>& parts) {
    auto* assigned = Add(second).mutable_allocation_assigned();
    assigned->set_task_id(task_id);
    assigned->set_allocation_id(allocation_id);
    assigned->set_agent_id(parts.front().first);
    assigned->set_agent_incarnation(parts.front().first + "-1");
    for (int32_t slot = 0; slot < parts.front().second; ++slot) assigned->add_slot_ids(slot);
    for (const auto& [agent_id, slots] : parts) {
      auto* part = assigned->add_parts();
      part->set_agent_id(agent_id);
      part->set_agent_incarnation(agent_id + "-1");
      for (int32_t slot = 0; slot < slots; ++slot) part->add_slot_ids(slot);
    }
    assigned->set_resource_pool("default");
    return *this;
  }
  UsageHistory& Start(int64_t second, const std::string& task_id, const std::string& allocation_id,
                      const std::string& agent_id) {
    auto* started = Add(second).mutable_task_started();
    started->set_task_id(task_id);
    started->set_allocation_id(allocation_id);
    started->set_agent_id(agent_id);
    started->set_pid(4242);
    return *this;
  }
  UsageHistory& PartExit(int64_t second, const std::string& task_id,
                         const std::string& allocation_id, const std::string& agent_id) {
    auto* exited = Add(second).mutable_allocation_part_exited();
    exited->set_task_id(task_id);
    exited->set_allocation_id(allocation_id);
    exited->set_agent_id(agent_id);
    exited->set_exit_code(0);
    return *this;
  }
  UsageHistory& Release(int64_t second, const std::string& task_id,
                        const std::string& allocation_id) {
    auto* released = Add(second).mutable_allocation_released();
    released->set_task_id(task_id);
    released->set_allocation_id(allocation_id);
    released->set_signal(15);
    released->set_reason("preempted");
    return *this;
  }
  // `allocation_id` "" for a task that never got one.
  UsageHistory& Exit(int64_t second, const std::string& task_id, const std::string& allocation_id) {
    auto* exited = Add(second).mutable_task_exited();
    exited->set_task_id(task_id);
    exited->set_allocation_id(allocation_id);
    exited->set_exit_code(0);
    return *this;
  }
  UsageHistory& Move(int64_t second, const std::string& job_id, int32_t workspace_id) {
    auto* moved = Add(second).mutable_experiment_moved();
    moved->set_job_id(job_id);
    moved->set_workspace_id(workspace_id);
    return *this;
  }
  // An experiment whose job is `job_id`, with these labels in its configuration.
  UsageHistory& Experiment(int64_t second, int64_t experiment_id, const std::string& job_id,
                           int32_t workspace_id, const std::vector<std::string>& labels) {
    auto* created = Add(second).mutable_experiment_created();
    created->set_experiment_id(experiment_id);
    created->set_job_id(job_id);
    created->set_workspace_id(workspace_id);
    std::string config = "{\"labels\":[";
    for (size_t i = 0; i < labels.size(); ++i) config += (i ? ",\"" : "\"") + labels[i] + "\"";
    created->set_config_json(config + "]}");
    return *this;
  }
  UsageHistory& Relabel(int64_t second, int64_t experiment_id, const std::string& job_id,
                        const std::vector<std::string>& labels) {
    auto* updated = Add(second).mutable_experiment_updated();
    updated->set_experiment_id(experiment_id);
    updated->set_job_id(job_id);
    updated->set_labels_set(true);
    for (const auto& label : labels) updated->add_labels(label);
    return *this;
  }
  // An event of a type the fold does not count (a user's refusal).
  UsageHistory& Other(int64_t second) {
    Add(second).mutable_access_denied()->set_method("POST");
    return *this;
  }

  const std::vector<Envelope>& events() const { return events_; }

 private:
  Envelope& Add(int64_t second) {
    Envelope& event = events_.emplace_back();
    event.set_offset(events_.size() - 1);
    event.set_event_id("usage-" + std::to_string(events_.size() - 1));
    event.set_time_unix_micros(kStartMicros + second * 1'000'000);
    event.set_actor("system:test");
    event.set_writer_epoch(epoch_);
    event.set_schema_version(1);
    return event;
  }

  uint64_t epoch_ = 1;
  std::vector<Envelope> events_;
};

}  // namespace cairn::testing
