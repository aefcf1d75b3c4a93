// The experiments domain's commands: create, act on, change, continue an experiment; kill a
// trial; delete checkpoints; a trial process's workload reports.
// Decided by commands/experiments/experiment_decider.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands/experiments/log_policies.h"
#include "commands/tasks/task_commands.h"
#include "events.pb.h"

namespace cairn::commands {

// A trial's results are recorded in the control-plane log: each is bounded, whichever harness
// reports it (ReportWorkload, ReportTrial).
inline constexpr size_t kMaxResultBytes = 64 * 1024;  // metrics; a checkpoint's metadata
inline constexpr int kMaxCheckpointFiles = 10000;     // a checkpoint's resources

// A new experiment. The edge has stored the model definition (`created` carries its digest and
// size, the owner and `activate`). experiment_id and job_id are decided, not taken from the
// caller. With a `request`, the decider makes the configuration from it: merged under its
// template as the log holds the template then, parsed with defaults, the master's checkpoint
// storage and a seed filled in, the entrypoint checked against the model definition, and the
// project resolved; `created`'s configuration, seed, template and resources are its output.
// Without one, `created` is taken as already made (tools that write histories).
struct CreateExperiment {
  static constexpr const char* kName = "CreateExperiment";
  struct Request {
    std::string config_yaml;    // the configuration as the user sent it (YAML or JSON text)
    std::string template_name;  // the request's `template`; "" = the config's `template:`, or none
    // The request's projectId; 0 = the configuration's workspace and project by name, else
    // Uncategorized (Determined's order).
    int32_t project_id = 0;
    std::vector<std::string> context_paths;  // the model definition's files, for the entrypoint
    // For a configuration without checkpoint_storage, after its workspace's: master.yaml's
    // checkpoint_storage (NormalizedCheckpointStorage; null = none), else shared_fs in the
    // master's default directory.
    nlohmann::json default_checkpoint_storage;
    std::string default_checkpoint_dir;
    // For a configuration without reproducibility.experiment_seed: drawn by the edge, so the
    // decision stays pure; recorded in the event either way.
    uint32_t seed_if_unset = 0;
  };
  events::ExperimentCreated created;
  std::optional<Request> request;
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
  // det experiment set gc-policy: the ended trials' checkpoints the new policy drops are
  // collected at once (a live trial's at its end, as always).
  struct GcPolicy {
    int save_experiment_best = 0;
    int save_trial_best = 0;
    int save_trial_latest = 0;
  };
  std::optional<GcPolicy> gc_policy{};
};

// det trial kill.
struct KillTrial {
  static constexpr const char* kName = "KillTrial";
  int64_t trial_id = 0;
};

// det experiment continue: a terminal single-trial experiment trains on from its latest
// checkpoint, its configuration with `override_yaml` merged over it.
struct ContinueExperiment {
  static constexpr const char* kName = "ContinueExperiment";
  int64_t experiment_id = 0;
  std::string override_yaml;  // YAML or JSON text; "" = none
};

// det checkpoint delete: checkpoints a user removes by hand (the collector deletes the files).
struct DeleteCheckpoints {
  static constexpr const char* kName = "DeleteCheckpoints";
  std::vector<std::string> uuids;
};

// det experiment delete-tb-files: the experiment's TensorBoard files written so far.
struct DeleteTensorboardFiles {
  static constexpr const char* kName = "DeleteTensorboardFiles";
  int64_t experiment_id = 0;
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

// A trial process running Determined's package reports through Determined's trial-side REST API
// (api/handlers/trial_reports.h). Refused unless `allocation_id` is the live run of `trial_id`.
// A retry of the last report of its kind (the package retries a POST whose answer was lost)
// writes nothing and is answered as the first was.
struct ReportTrial {
  static constexpr const char* kName = "ReportTrial";
  enum class Kind { kMetrics, kProgress, kCheckpoint, kPreemptionAck, kEarlyExit };
  Kind kind = Kind::kMetrics;
  int64_t trial_id = 0;
  std::string allocation_id;
  events::TrialMetricsReported metrics;  // kMetrics: group, steps, avg and batch metrics, run id
  double progress = 0;                   // kProgress: 0..1
  events::CheckpointSaved checkpoint;    // kCheckpoint: uuid, total_batches, resources, metadata
  std::string reason;                    // kEarlyExit: EXITED_REASON_*
};

// The master saw a line of a trial run's logs match one of its experiment's log_policies (as
// logs arrive: api POST /api/v1/task/logs, from the agent holding the run). Refused unless
// `task_id` is a trial's run and `policy` one of its experiment's; a match that would change
// nothing (the run already so marked) writes nothing.
struct RecordLogPolicyMatch {
  static constexpr const char* kName = "RecordLogPolicyMatch";
  std::string task_id;
  std::string agent_id;
  experiments::LogPolicy policy;
  std::string log_line;  // cut to kMaxLogPolicyLineBytes by the decider
};

}  // namespace cairn::commands
