// Which events of the log a person may read on GET /api/v1/events. Work (tasks, jobs,
// experiments, trials, checkpoints, templates, models and their versions) only in workspaces
// where they hold a role, as
// every list of the REST API; a workspace's own events (the workspace, its projects, its roles)
// the same; sessions, failed logins, refusals and pins only their own; cluster events (agents,
// pools and their bindings, users, writer epochs) always; an event without a rule never. Admins and
// agents are not filtered (the caller decides that). Secrets inside visible events are a separate
// matter (events/redaction.h).
//
// Which workspace an event's work belongs to is learnt from the stream itself (TaskSubmitted,
// ExperimentCreated, ExperimentMoved) and, for work submitted before the stream's start, asked
// of the lookups once per id; work whose workspace cannot be told is hidden. Roles follow the
// log: tenancy events at or after `live_from` (the log's end when the stream opened, which the
// snapshot already holds) are folded in as they pass, so a role granted or removed while a
// follow stream runs counts from that event on. Not thread-safe: one stream, one instance.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "commands/identity/identity.h"
#include "commands/tenancy/tenancy.h"
#include "events.pb.h"

namespace cairn::api {

class EventVisibility {
 public:
  struct Lookups {
    // The workspace of a task (or of the command job with that id) / of an experiment, from the
    // projections; nullopt when unknown.
    std::function<std::optional<int32_t>(const std::string& task_id)> task_workspace;
    std::function<std::optional<int32_t>(int64_t experiment_id)> experiment_workspace;
  };

  EventVisibility(commands::TenancyState tenancy, commands::UserRecord caller, uint64_t live_from,
                  Lookups lookups);

  // Call for every event of the stream, in log order (hidden ones too: they teach workspaces).
  bool Visible(const events::Envelope& event);

 private:
  bool CanView(int32_t workspace_id) const;
  bool CanViewModels(int32_t workspace_id) const;    // the registry's events
  bool CanViewWebhooks(int32_t workspace_id) const;  // 0: the global ones, which everyone sees
  bool CanViewTask(const std::string& task_id);
  bool CanViewJob(const std::string& job_id);
  bool CanViewExperiment(int64_t experiment_id);
  bool CanViewProject(int32_t project_id) const;
  bool Own(int32_t user_id) const { return user_id == caller_.id; }
  bool Decide(const events::Envelope& event);

  commands::TenancyState tenancy_;
  commands::UserRecord caller_;
  uint64_t live_from_;
  Lookups lookups_;
  // Workspaces learnt from the stream or the lookups.
  std::unordered_map<std::string, int32_t> task_workspace_;
  std::unordered_map<std::string, int32_t> job_workspace_;
  std::unordered_map<int64_t, int32_t> experiment_workspace_;
};

}  // namespace cairn::api
