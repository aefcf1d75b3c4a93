// The closed set of commands Cairn's single writer accepts. A command is a request to change the
// cluster; the decider turns it into events or refuses it with a Status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "commands/identity.h"
#include "commands/tenancy.h"
#include "events.pb.h"

namespace cairn::commands {

// Who asked, when, and how to recognise a retry. Filled by the edge (api/), recorded in every
// event the command produces.
struct CommandMeta {
  std::string actor;            // "user:admin", "agent:a1", "system:heartbeat-monitor"
  std::string correlation_id;   // the request id
  std::string idempotency_key;  // "" = none; a repeat of a key produces no new events
  int64_t time_unix_micros = 0;
  // The request the key came with (hex SHA-256 of method, path and body); "" = not compared.
  std::string request_fingerprint{};
};

struct SubmitTask {
  std::string task_id;  // chosen by the edge (a UUID), recorded in TaskSubmitted
  std::string job_id;
  events::TaskSpec spec;
  // resource_pool "" = the default compute pool, or the default aux pool for zero-slot
  // commands, shells and notebooks and for TensorBoards; priority 0 = the pool's default.
  events::Resources resources;
  std::string config_json;
  // Queue a task even if it can never fit its pool (it then waits for agents to join).
  bool force = false;
  int32_t workspace_id = 1;  // the workspace its job belongs to (a later task: the job's)
};

// An OpenPAI job (commands/pai/pai_job.h): the edge parsed and validated the job JSON and chose
// job_id and workspace_id; the decider maps its virtual cluster to a pool, refuses a name the
// user already used, and submits the first attempt's tasks as one gang.
struct SubmitPaiJob {
  events::PaiJobSubmitted job;
};

// PUT .../executionType {"value": "STOP"}: every task of the job is killed, and it ends STOPPED.
struct StopPaiJob {
  std::string job_id;
};

// Records the master's pool configuration when it differs from the last one in the log.
struct ConfigurePools {
  events::ResourcePoolsConfigured config;
};

// A user's change to a job in the queue. Unset fields keep their value; at most one of
// ahead_of / behind_of.
struct UpdateJob {
  std::string job_id;
  std::optional<int32_t> priority;
  std::optional<double> weight;
  std::optional<std::string> resource_pool;
  std::optional<int32_t> max_slots;
  std::string ahead_of;
  std::string behind_of;
};

// Sent by the master's timer: forces a kill on every preemption whose grace period ended by the
// command's time.
struct ExpirePreemptions {};

struct KillTask {
  std::string task_id;
  std::string reason;
};

struct RegisterAgent {
  events::AgentRegistered registration;  // `reconnect` is decided, not taken from the caller
};

struct DisconnectAgent {
  std::string agent_id;
  std::string incarnation;
  std::string reason;
};

struct EnableAgent {
  std::string agent_id;
};

struct DisableAgent {
  std::string agent_id;
  bool drain = false;
};

struct ReportTaskStarted {
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  int32_t pid = 0;
};

// An interactive task's service answers (the agent probed it): where the proxy reaches it.
struct ReportTaskReady {
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  std::string service_host;
  int32_t service_port = 0;
  std::string service_user;
};

struct ReportTaskExited {
  std::string allocation_id;
  std::string task_id;
  std::string agent_id;
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
  std::string reason;
};

// A new experiment. The edge has merged the template, parsed and validated the configuration
// (filling defaults, the checkpoint storage and the seed) and stored the model definition;
// `created` carries all of it. experiment_id and job_id are decided, not taken from the caller.
struct CreateExperiment {
  events::ExperimentCreated created;
};

// A user's action on a whole experiment. Archive, unarchive and delete need a terminal one.
struct ExperimentAction {
  enum class Kind { kActivate, kPause, kCancel, kKill, kArchive, kUnarchive, kDelete };
  int64_t experiment_id = 0;
  Kind kind = Kind::kActivate;
};

// A user renames an experiment or changes its description, notes or labels (PATCH
// /api/v1/experiments/{id}); unset fields stay.
struct UpdateExperiment {
  int64_t experiment_id = 0;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> notes;
  std::optional<std::vector<std::string>> labels;
  // The experiment's job changes with it (priority, weight, max_slots, pool), all or nothing.
  std::optional<UpdateJob> job_change;
};

// det trial kill.
struct KillTrial {
  int64_t trial_id = 0;
};

// det experiment continue: a terminal single-trial experiment trains on from its latest
// checkpoint. The edge merged the override into the configuration and validated it.
struct ContinueExperiment {
  int64_t experiment_id = 0;
  std::string config_json;  // the effective configuration after the override
  std::string override_yaml;
};

// det checkpoint delete: checkpoints a user removes by hand (the collector deletes the files).
struct DeleteCheckpoints {
  std::vector<std::string> uuids;
};

// A trial process reports the result of its previous workload (none for sequence 0) and asks for
// the next one; agent/harness/PROTOCOL.md §3. The answer is recorded by the experiment reactor in
// the same write (TrialWorkloadAssigned) and read back by the edge.
struct ReportWorkload {
  std::string allocation_id;
  int32_t sequence = 0;
  events::WorkloadKind completed = events::WORKLOAD_KIND_UNSPECIFIED;
  int64_t batches = 0;                 // TRAIN
  std::string metrics_json;            // TRAIN, VALIDATE: {name: finite number}
  events::CheckpointSaved checkpoint;  // CHECKPOINT: uuid, total_batches, size, resources, metadata
};

struct SaveTemplate {
  enum class Mode { kCreate, kUpdate };
  std::string name;
  std::string config_yaml;
  int32_t workspace_id = 1;
  Mode mode = Mode::kCreate;
};

struct DeleteTemplate {
  std::string name;
};

// The model registry (commands/model_registry.h). The edge has resolved a model's name to its
// id and parsed metadata into JSON object text; the decider checks names, references and limits.
struct CreateModel {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string metadata_json = "{}";
  std::string notes;
  int32_t workspace_id = 1;
};
// Unset fields keep their value; archive and unarchive set `archived`, a move `workspace_id`.
struct UpdateModel {
  int32_t model_id = 0;
  std::optional<std::string> name{};
  std::optional<std::string> description{};
  std::optional<std::vector<std::string>> labels{};
  std::optional<std::string> metadata_json{};
  std::optional<std::string> notes{};
  std::optional<bool> archived{};
  std::optional<int32_t> workspace_id{};
};
// With its versions: only by its owner or an admin.
struct DeleteModel {
  int32_t model_id = 0;
};
struct RegisterModelVersion {
  int32_t model_id = 0;
  std::string checkpoint_uuid;
  std::string name;
  std::string comment;
  std::string notes;
  std::string metadata_json = "{}";
  std::vector<std::string> labels;
};
struct UpdateModelVersion {
  int32_t model_id = 0;
  int32_t version = 0;
  std::optional<std::string> name{};
  std::optional<std::string> comment{};
  std::optional<std::string> notes{};
  std::optional<std::string> metadata_json{};
  std::optional<std::vector<std::string>> labels{};
};
struct DeleteModelVersion {
  int32_t model_id = 0;
  int32_t version = 0;
};

// Workspaces and projects (commands/tenancy.h). Unset fields keep their value.
struct CreateWorkspace {
  std::string name;
  std::string default_compute_pool;
  std::string default_aux_pool;
};
struct UpdateWorkspace {
  int32_t workspace_id = 0;
  std::optional<std::string> name{};
  std::optional<bool> archived{};
  std::optional<std::string> default_compute_pool{};
  std::optional<std::string> default_aux_pool{};
};
// Only a workspace without experiments and live tasks; its empty projects go with it.
struct DeleteWorkspace {
  int32_t workspace_id = 0;
};
struct PinWorkspace {
  int32_t workspace_id = 0;
  bool pinned = true;
};
struct CreateProject {
  int32_t workspace_id = 0;
  std::string name;
  std::string description;
};
struct UpdateProject {
  int32_t project_id = 0;
  std::optional<std::string> name{};
  std::optional<std::string> description{};
  std::optional<bool> archived{};
};
// Only a project without experiments.
struct DeleteProject {
  int32_t project_id = 0;
};
struct MoveExperiment {
  int64_t experiment_id = 0;
  int32_t project_id = 0;
};
// Assigns (or removes) roles; all or none are applied.
struct ChangeRoles {
  struct Assignment {
    int32_t user_id = 0;
    int32_t workspace_id = 0;  // 0 = every workspace
    events::Role role = events::ROLE_UNSPECIFIED;
  };
  std::vector<Assignment> assignments;
  bool remove = false;
};
// Binds a resource pool to workspaces, unbinds it, or replaces its bindings.
struct SetPoolBindings {
  enum class Mode { kAdd, kRemove, kReplace };
  std::string pool_name;
  std::vector<int32_t> workspace_ids;
  Mode mode = Mode::kAdd;
};

// Written by a master when it starts, after replaying the log.
struct ClaimWriterEpoch {
  std::string master_id;
};

using Command =
    std::variant<SubmitTask, KillTask, RegisterAgent, DisconnectAgent, EnableAgent, DisableAgent,
                 ReportTaskStarted, ReportTaskExited, ClaimWriterEpoch, ConfigurePools, UpdateJob,
                 ExpirePreemptions, CreateExperiment, ExperimentAction, ReportWorkload,
                 SaveTemplate, DeleteTemplate, CreateUser, UpdateUser, StartSession, EndSession,
                 RecordLoginFailure, RecordAccessDenied, CreateWorkspace, UpdateWorkspace,
                 DeleteWorkspace, PinWorkspace, CreateProject, UpdateProject, DeleteProject,
                 MoveExperiment, ChangeRoles, SetPoolBindings, UpdateExperiment, KillTrial,
                 ContinueExperiment, DeleteCheckpoints, CreateModel, UpdateModel, DeleteModel,
                 RegisterModelVersion, UpdateModelVersion, DeleteModelVersion, ReportTaskReady,
                 SubmitPaiJob, StopPaiJob>;

// A short name for logs and errors, e.g. "SubmitTask".
const char* CommandName(const Command& command);

}  // namespace cairn::commands
