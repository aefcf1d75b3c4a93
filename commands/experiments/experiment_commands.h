// The experiments domain's commands: create, act on, change, continue an experiment; kill a
// trial; delete checkpoints; a trial process's workload reports.
// Decided by commands/experiments/experiment_decider.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands/tasks/task_commands.h"
#include "events.pb.h"

namespace cairn::commands {

// A new experiment. The edge has merged the template, parsed and validated the configuration
// (filling defaults, the checkpoint storage and the seed) and stored the model definition;
// `created` carries all of it. experiment_id and job_id are decided, not taken from the caller.
struct CreateExperiment {
  static constexpr const char* kName = "CreateExperiment";
  events::ExperimentCreated created;
};

// A user's action on a whole experiment. Archive, unarchive and delete need a terminal one.
struct ExperimentAction {
  static constexpr const char* kName = "ExperimentAction";
  enum class Kind { kActivate, kPause, kCancel, kKill, kArchive, kUnarchive, kDelete };
  int64_t experiment_id = 0;
  Kind kind = Kind::kActivate;
};

// A user renames an experiment or changes its description, notes or labels (PATCH
// /api/v1/experiments/{id}); unset fields stay.
struct UpdateExperiment {
  static constexpr const char* kName = "UpdateExperiment";
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
  static constexpr const char* kName = "KillTrial";
  int64_t trial_id = 0;
};

// det experiment continue: a terminal single-trial experiment trains on from its latest
// checkpoint. The edge merged the override into the configuration and validated it.
struct ContinueExperiment {
  static constexpr const char* kName = "ContinueExperiment";
  int64_t experiment_id = 0;
  std::string config_json;  // the effective configuration after the override
  std::string override_yaml;
};

// det checkpoint delete: checkpoints a user removes by hand (the collector deletes the files).
struct DeleteCheckpoints {
  static constexpr const char* kName = "DeleteCheckpoints";
  std::vector<std::string> uuids;
};

// A trial process reports the result of its previous workload (none for sequence 0) and asks for
// the next one; agent/harness/PROTOCOL.md §3. The answer is recorded by the experiment reactor in
// the same write (TrialWorkloadAssigned) and read back by the edge.
struct ReportWorkload {
  static constexpr const char* kName = "ReportWorkload";
  std::string allocation_id;
  int32_t sequence = 0;
  events::WorkloadKind completed = events::WORKLOAD_KIND_UNSPECIFIED;
  int64_t batches = 0;                 // TRAIN
  std::string metrics_json;            // TRAIN, VALIDATE: {name: finite number}
  events::CheckpointSaved checkpoint;  // CHECKPOINT: uuid, total_batches, size, resources, metadata
};

}  // namespace cairn::commands
