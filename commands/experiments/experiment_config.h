// The experiment configuration: Determined's experiment YAML, unchanged, parsed into a typed value
// with every default filled in. A field Determined has and Cairn does not is refused by name
// (NotSupported); a field neither knows is InvalidArgument. Every error starts with the YAML line
// and the field path: "line 12: searcher.max_length: expected a map like {batches: 1000}".
// Pure: no I/O, no clock; safe to call from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/experiments/hyperparameters.h"
#include "commands/experiments/log_policies.h"
#include "events.pb.h"

namespace cairn::experiments {

enum class LengthUnit { kBatches, kRecords, kEpochs };

// "batches", "records", "epochs".
const char* LengthUnitName(LengthUnit unit);

// Determined's Length: {batches: N} | {records: N} | {epochs: N}.
struct Length {
  LengthUnit unit = LengthUnit::kBatches;
  int64_t value = 0;
};

// Batches that cover `length`: records are divided by global_batch_size and epochs are
// records_per_epoch records each, rounded up to whole batches. InvalidArgument when the unit needs
// a global_batch_size or records_per_epoch that is not positive.
Result<int64_t> LengthToBatches(const Length& length, int64_t global_batch_size,
                                int64_t records_per_epoch);

enum class SearcherName { kSingle, kGrid, kRandom, kAdaptiveAsha, kPbt };
enum class AshaMode { kAggressive, kStandard, kConservative };

// "single", "grid", "random", "adaptive_asha", "pbt".
const char* SearcherNameText(SearcherName name);
const char* AshaModeText(AshaMode mode);  // "aggressive", "standard", "conservative"

struct SearcherConfig {
  SearcherName name = SearcherName::kSingle;
  std::string metric;
  bool smaller_is_better = true;
  // The length the searcher trains trials to: max_length as given, max_time in the units of
  // time_metric (Determined 0.38), or kOpenEndedBatches when neither is given.
  Length max_length;
  bool max_length_given = false;  // max_length was in the configuration (the package reads it)
  // Determined 0.38's length: trials put `time_metric` (e.g. "batches") in their validation
  // metrics and the searcher compares it with max_time. "" = lengths are counted in batches.
  std::string time_metric;
  std::optional<int64_t> max_time;
  // Neither max_length nor max_time: each trial runs until its own code ends (a Core API script
  // under single, grid or random search).
  bool open_ended = false;
  int max_trials = 1;              // random, adaptive_asha (required there); 1 for single
  int max_concurrent_trials = 16;  // random, grid, adaptive_asha; 0 = no limit; 1 for single
  double divisor = 4;              // adaptive_asha, > 1
  int max_rungs = 5;               // adaptive_asha
  AshaMode mode = AshaMode::kStandard;
  std::vector<int> bracket_rungs;  // adaptive_asha: explicit brackets; empty = derive from mode
  // Warm starts: every trial begins from this trial's latest checkpoint, or this checkpoint
  // (resolved when the experiment is created; the trial id wins when both are given).
  std::optional<int64_t> source_trial_id;
  std::optional<std::string> source_checkpoint_uuid;
  // pbt (population-based training, Determined's before 0.18): population_size trials train
  // length_per_round a round for num_rounds rounds; after each round but the last, the worst
  // truncate_fraction of the population is closed and as many clones of the best begin from
  // their parents' checkpoints with explored hyperparameters (each resampled with
  // resample_probability, else scaled by 1 +/- perturb_factor).
  int population_size = 0;
  int num_rounds = 0;
  Length length_per_round;
  double truncate_fraction = 0;
  double resample_probability = 0;
  double perturb_factor = 0;
};

// How many of a pbt population of `population` a round replaces: the worst
// floor(truncate_fraction * population) close and as many clones of the best begin.
int PbtReplaced(const SearcherConfig& searcher, int population);

struct ResourcesConfig {
  int slots_per_trial = 1;
  std::optional<int> max_slots;
  double weight = 1;
  std::optional<int>
      priority;  // kMinPriority..kMaxPriority; absent = the pool's default, filled by the scheduler
  std::string resource_pool;   // "" = the default pool
  int64_t shm_size_bytes = 0;  // resources.shm_size; 0 = the container's default
};

// A list with a variant per device type: a plain list in the YAML applies to all three, a map
// {cpu: [...], cuda: [...], rocm: [...]} (gpu: the same as cuda) gives each its own.
struct PerDeviceList {
  std::vector<std::string> cpu;
  std::vector<std::string> cuda;
  std::vector<std::string> rocm;
  bool empty() const { return cpu.empty() && cuda.empty() && rocm.empty(); }
};

// {"cpu": [...], "cuda": [...], "rocm": [...]}.
nlohmann::json PerDeviceJson(const PerDeviceList& lists);

// environment_variables as an experiment takes them (NAME=value entries, a list or per device),
// for every configuration that names variables (master.yaml's task_container_defaults too).
Result<PerDeviceList> ReadEnvironmentVariables(const fields::Field& field);

struct EnvironmentConfig {
  // As written (string or {cpu, cuda, rocm}); on a process agent it names the prepared
  // environment's hash only.
  nlohmann::json image;
  // "K=V" entries per device type; a plain list in the YAML applies to all three.
  std::vector<std::string> environment_variables_cpu;
  std::vector<std::string> environment_variables_cuda;
  std::vector<std::string> environment_variables_rocm;
  // PEDL's custom trial environment (a Cairn extension to Determined's schema): shell commands
  // run in order, then pip requirements installed, into the environment an agent prepares once
  // per hash and reuses (agent/harness/cairn_harness/prepared_env.py).
  PerDeviceList runtime_commands;
  PerDeviceList runtime_packages;
  // Names whose values no person sees again once submitted (events/redaction.h).
  std::vector<std::string> secret_environment_variables;
  // {username, password, serveraddress} for pulling the image; null = none. The password is
  // only for machines (events/redaction.h).
  nlohmann::json registry_auth;
  std::optional<bool> force_pull_image;
};

// Where checkpoints go, in Determined's keys. shared_fs: a directory every agent mounts. s3: a
// bucket of AWS S3 or an S3-compatible store (endpoint_url); without access_key/secret_key the
// machine's own AWS credentials apply. azure: a Blob Storage container reached by a connection
// string with an account key (the master signs with it). The credentials are secrets: only the
// machines that run the work see them (events/redaction.h).
struct CheckpointStorageConfig {
  std::string type = "shared_fs";  // shared_fs, s3 or azure
  // shared_fs
  std::string host_path;  // required
  std::optional<std::string> storage_path;
  // s3
  std::string bucket;  // required
  std::string prefix;  // "" or a key prefix without a leading or trailing '/'
  std::optional<std::string> endpoint_url;
  std::optional<std::string> access_key;
  std::optional<std::string> secret_key;
  // azure
  std::string container;  // required
  std::optional<std::string> connection_string;

  int save_experiment_best = 0;
  int save_trial_best = 1;
  int save_trial_latest = 1;

  bool IsObjectStore() const { return type != "shared_fs"; }
};

// integrations.webhooks: the webhooks of mode SPECIFIC that fire for the experiment, by id or
// name; `exclude` keeps every webhook (global ones too) from firing for it.
struct WebhookIntegration {
  std::vector<int64_t> webhook_ids;
  std::vector<std::string> webhook_names;
  bool exclude = false;
  bool given = false;  // the config has integrations.webhooks (shown in the effective config)
};

struct ExperimentConfig {
  std::string name;  // "" when absent: the API layer names the experiment
  // Where the experiment goes, by name: both or neither ("" = the request's project, or
  // Uncategorized).
  std::string workspace;
  std::string project;
  std::optional<std::string> description;
  std::vector<std::string> labels;
  nlohmann::json data = nlohmann::json::object();  // free-form, passed to the trial as is
  HyperparameterSpace hyperparameters;
  SearcherConfig searcher;
  ResourcesConfig resources;
  EnvironmentConfig environment;
  // Absent: the master's default storage applies; the caller fills it in before storing.
  std::optional<CheckpointStorageConfig> checkpoint_storage;
  int max_restarts = 5;
  // A trial class ("module:Class", Determined's legacy form and Cairn's harness) or a command
  // (a string run by sh -c, or entrypoint_argv when given as a list), as Determined's launcher
  // runs it.
  std::string entrypoint;
  std::vector<std::string> entrypoint_argv;
  // Determined's trial-harness settings Cairn passes to the trial unchanged (checkpoint_policy,
  // perform_initial_validation, profiling, optimizations, debug), as given.
  nlohmann::json trial_settings = nlohmann::json::object();
  Length min_validation_period;
  Length min_checkpoint_period;
  int64_t records_per_epoch = 0;            // required (> 0) when a length is in epochs
  int scheduling_unit = 100;                // batches per training workload
  std::optional<uint32_t> experiment_seed;  // reproducibility.experiment_seed
  // hyperparameters.global_batch_size when it is a constant integer; required when a length is
  // in records or epochs.
  std::optional<int64_t> global_batch_size;
  WebhookIntegration webhooks;
  // bind_mounts, as the configuration shows them; null = none.
  nlohmann::json bind_mounts;
  // What a trial run's TaskSpec takes from the configuration beyond its image: bind_mounts,
  // registry_auth, force_pull_image and shm_size (the experiment reactor copies them in).
  events::TaskSpec container;
  // log_policies with Determined's defaults under them (commands/experiments/log_policies.h).
  std::vector<LogPolicy> log_policies;
  // retention_policy.log_retention_days: days its trials' logs are kept after they end; -1
  // forever; unset: master.yaml's retention_policy (master/log_retention.h).
  std::optional<int> log_retention_days;

  // The whole configuration with defaults filled, in Determined's shape: what the API returns and
  // what is stored with the experiment. Parsing its dump() gives the same configuration back.
  nlohmann::json effective;
};

// A searcher length no trial reaches: an open-ended trial runs until its code ends.
inline constexpr int64_t kOpenEndedBatches = int64_t{1} << 50;

// True for Determined's trial-class form "module:Class" ([A-Za-z0-9_.]+:[A-Za-z0-9_]+), the one
// its launcher hands to the legacy harness; anything else is a command.
bool IsTrialClassEntrypoint(const std::string& entrypoint);

// The configuration as Determined's package reads it in a trial (DET_EXPERIMENT_CONFIG): the
// effective configuration with the harness's own settings' defaults filled in.
nlohmann::json DeterminedTrialConfig(const ExperimentConfig& config);

// Parses an experiment configuration (YAML or JSON text). A `template` key is refused: apply the
// template first (template_merge.h) and parse the merged text.
Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text);

// `length` in batches under `config`'s global_batch_size and records_per_epoch. Never fails for a
// length of a config that ParseExperimentConfig returned.
Result<int64_t> LengthInBatches(const ExperimentConfig& config, const Length& length);

// Where a trial's checkpoints go on shared_fs storage: checkpoint_storage.host_path, or
// storage_path inside it (an absolute storage_path stands alone). "" when the configuration has no
// checkpoint storage or keeps it in an object store.
std::string CheckpointDirectory(const ExperimentConfig& config);

// The storage as the effective config shows it: Determined's keys of its type, save_* last.
nlohmann::json CheckpointStorageJson(const CheckpointStorageConfig& storage);

// A checkpoint_storage given on its own (master.yaml, a workspace's checkpointStorageConfig)
// checked as an experiment's would be and shown as CheckpointStorageJson does; errors name
// `field` ("checkpoint_storage.bucket: required").
Result<nlohmann::json> NormalizedCheckpointStorage(const nlohmann::json& storage,
                                                   const std::string& field = "checkpoint_storage");

// Records `seed` as reproducibility.experiment_seed in both the typed config and `effective`. The
// submitting layer calls it with a recorded seed when the user gave none.
void SetExperimentSeed(ExperimentConfig& config, uint32_t seed);

}  // namespace cairn::experiments
