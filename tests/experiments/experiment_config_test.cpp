// The experiment configuration parser: Determined's YAML accepted unchanged, defaults filled,
// every error naming its line and field, unsupported fields refused by name.
#include "commands/experiments/experiment_config.h"

#include <gtest/gtest.h>

namespace cairn::experiments {
namespace {

// A configuration using every section Cairn supports, written as a Determined user would.
constexpr const char* kFullConfig = R"(name: mnist_asha
description: MNIST with ASHA
labels: [mnist, tutorial]
data:
  base_url: https://example.com/mnist/
  validation_set_size: 10000
hyperparameters:
  global_batch_size: 64
  learning_rate:
    type: log
    minval: -4
    maxval: -1
  n_filters1:
    type: int
    minval: 8
    maxval: 64
    count: 3
  dropout:
    type: double
    minval: 0.2
    maxval: 0.5
  activation:
    type: categorical
    vals: [relu, tanh, "1"]
  optimizer:
    momentum:
      type: const
      val: 0.9
    nesterov: true
searcher:
  name: adaptive_asha
  metric: validation_error
  smaller_is_better: true
  max_length:
    epochs: 2
  max_trials: 16
  max_concurrent_trials: 4
  divisor: 3
  max_rungs: 4
  mode: aggressive
resources:
  slots_per_trial: 2
  max_slots: 8
  weight: 0.5
  priority: 10
  resource_pool: gpu-pool
environment:
  image: determinedai/pytorch-ngc:0.38.0
  environment_variables:
    cpu: [OMP_NUM_THREADS=4]
    cuda: [NCCL_DEBUG=INFO, A=B=C]
checkpoint_storage:
  type: shared_fs
  host_path: /mnt/checkpoints
  storage_path: mnist
  save_experiment_best: 2
  save_trial_best: 3
  save_trial_latest: 0
max_restarts: 2
entrypoint: model_def:MNistTrial
min_validation_period:
  records: 640
min_checkpoint_period:
  batches: 50
records_per_epoch: 6000
scheduling_unit: 25
reproducibility:
  experiment_seed: 777
)";

const Hyperparameter* Find(const HyperparameterSpace& space, const std::string& name) {
  for (const auto& h : space) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

// A minimal valid configuration with `extra` appended (YAML lines at the top level).
std::string Minimal(const std::string& extra = "") {
  return "entrypoint: model_def:Trial\n"
         "searcher:\n"
         "  name: single\n"
         "  metric: loss\n"
         "  max_length:\n"
         "    batches: 100\n" +
         extra;
}

TEST(ExperimentConfigTest, FullDeterminedConfigParses) {
  auto parsed = ParseExperimentConfig(kFullConfig);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ExperimentConfig& c = *parsed;
  EXPECT_EQ(c.name, "mnist_asha");
  EXPECT_EQ(c.description, "MNIST with ASHA");
  EXPECT_EQ(c.labels, (std::vector<std::string>{"mnist", "tutorial"}));
  EXPECT_EQ(c.data["validation_set_size"], 10000);
  EXPECT_EQ(c.searcher.name, SearcherName::kAdaptiveAsha);
  EXPECT_EQ(c.searcher.metric, "validation_error");
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kEpochs);
  EXPECT_EQ(c.searcher.max_length.value, 2);
  EXPECT_EQ(c.searcher.max_trials, 16);
  EXPECT_EQ(c.searcher.max_concurrent_trials, 4);
  EXPECT_EQ(c.searcher.divisor, 3);
  EXPECT_EQ(c.searcher.max_rungs, 4);
  EXPECT_EQ(c.searcher.mode, AshaMode::kAggressive);
  EXPECT_EQ(c.resources.slots_per_trial, 2);
  EXPECT_EQ(c.resources.max_slots, 8);
  EXPECT_EQ(c.resources.weight, 0.5);
  EXPECT_EQ(c.resources.priority, 10);
  EXPECT_EQ(c.resources.resource_pool, "gpu-pool");
  EXPECT_EQ(c.environment.image, "determinedai/pytorch-ngc:0.38.0");
  EXPECT_EQ(c.environment.environment_variables_cpu,
            (std::vector<std::string>{"OMP_NUM_THREADS=4"}));
  EXPECT_EQ(c.environment.environment_variables_cuda,
            (std::vector<std::string>{"NCCL_DEBUG=INFO", "A=B=C"}));
  EXPECT_TRUE(c.environment.environment_variables_rocm.empty());
  ASSERT_TRUE(c.checkpoint_storage.has_value());
  EXPECT_EQ(c.checkpoint_storage->host_path, "/mnt/checkpoints");
  EXPECT_EQ(c.checkpoint_storage->storage_path, "mnist");
  EXPECT_EQ(c.checkpoint_storage->save_experiment_best, 2);
  EXPECT_EQ(c.checkpoint_storage->save_trial_best, 3);
  EXPECT_EQ(c.checkpoint_storage->save_trial_latest, 0);
  EXPECT_EQ(c.max_restarts, 2);
  EXPECT_EQ(c.entrypoint, "model_def:MNistTrial");
  EXPECT_EQ(c.min_validation_period.unit, LengthUnit::kRecords);
  EXPECT_EQ(c.min_validation_period.value, 640);
  EXPECT_EQ(c.min_checkpoint_period.value, 50);
  EXPECT_EQ(c.records_per_epoch, 6000);
  EXPECT_EQ(c.scheduling_unit, 25);
  EXPECT_EQ(c.experiment_seed, 777u);
  EXPECT_EQ(c.global_batch_size, 64);
  // 2 epochs of 6000 records in batches of 64: 12000 / 64 = 187.5, rounded up.
  auto batches = LengthInBatches(c, c.searcher.max_length);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 188);
}

TEST(ExperimentConfigTest, EveryHyperparameterTypeParses) {
  auto parsed = ParseExperimentConfig(kFullConfig);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& space = parsed->hyperparameters;
  // Sorted by name, whatever the order in the file.
  std::vector<std::string> names;
  for (const auto& h : space) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"activation", "dropout", "global_batch_size",
                                             "learning_rate", "n_filters1", "optimizer"}));

  const auto* batch = Find(space, "global_batch_size");
  EXPECT_EQ(batch->type, HyperparameterType::kConst);
  EXPECT_EQ(batch->val, 64);
  const auto* lr = Find(space, "learning_rate");
  EXPECT_EQ(lr->type, HyperparameterType::kLog);
  EXPECT_EQ(lr->minval, -4);
  EXPECT_EQ(lr->maxval, -1);
  EXPECT_EQ(lr->base, 10);  // the default base
  EXPECT_FALSE(lr->count.has_value());
  const auto* filters = Find(space, "n_filters1");
  EXPECT_EQ(filters->type, HyperparameterType::kInt);
  EXPECT_EQ(filters->count, 3);
  const auto* dropout = Find(space, "dropout");
  EXPECT_EQ(dropout->type, HyperparameterType::kDouble);
  EXPECT_EQ(dropout->minval, 0.2);
  const auto* activation = Find(space, "activation");
  EXPECT_EQ(activation->type, HyperparameterType::kCategorical);
  // A quoted "1" stays a string; plain words are strings too.
  EXPECT_EQ(activation->vals, (std::vector<nlohmann::json>{"relu", "tanh", nlohmann::json("1")}));
  const auto* optimizer = Find(space, "optimizer");
  ASSERT_EQ(optimizer->type, HyperparameterType::kNested);
  ASSERT_EQ(optimizer->members.size(), 2u);
  EXPECT_EQ(optimizer->members[0].name, "momentum");
  EXPECT_EQ(optimizer->members[0].val, 0.9);
  EXPECT_EQ(optimizer->members[1].name, "nesterov");
  EXPECT_EQ(optimizer->members[1].val, true);
}

TEST(ExperimentConfigTest, DefaultsAreFilledInTheEffectiveConfig) {
  auto parsed = ParseExperimentConfig(
      "entrypoint: model_def:Trial\n"
      "searcher:\n"
      "  name: adaptive_asha\n"
      "  metric: loss\n"
      "  max_trials: 8\n"
      "  max_length: {batches: 100}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& e = parsed->effective;
  EXPECT_EQ(e["max_restarts"], 5);
  EXPECT_EQ(e["scheduling_unit"], 100);
  EXPECT_EQ(e["records_per_epoch"], 0);
  EXPECT_EQ(e["resources"]["slots_per_trial"], 1);
  EXPECT_EQ(e["resources"]["weight"], 1.0);
  EXPECT_TRUE(e["resources"]["priority"].is_null());
  EXPECT_EQ(e["searcher"]["smaller_is_better"], true);
  EXPECT_EQ(e["searcher"]["divisor"], 4.0);
  EXPECT_EQ(e["searcher"]["max_rungs"], 5);
  EXPECT_EQ(e["searcher"]["mode"], "standard");
  EXPECT_EQ(e["searcher"]["max_concurrent_trials"], 16);
  EXPECT_EQ(e["min_validation_period"], (nlohmann::json{{"batches", 0}}));
  EXPECT_EQ(e["min_checkpoint_period"], (nlohmann::json{{"batches", 0}}));
  EXPECT_TRUE(e["checkpoint_storage"].is_null());
  EXPECT_TRUE(e["reproducibility"]["experiment_seed"].is_null());
  EXPECT_EQ(e["hyperparameters"], nlohmann::json::object());
}

TEST(ExperimentConfigTest, TheEffectiveConfigParsesBackToItself) {
  auto first = ParseExperimentConfig(kFullConfig);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = ParseExperimentConfig(first->effective.dump(2));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->effective, first->effective);
  // The expanded form names every hyperparameter's type.
  EXPECT_EQ(first->effective["hyperparameters"]["global_batch_size"],
            (nlohmann::json{{"type", "const"}, {"val", 64}}));
  EXPECT_EQ(first->effective["hyperparameters"]["optimizer"]["nesterov"]["type"], "const");
}

// Found by fuzzing (tests/fuzz/corpus/experiment_config/regression-nul-in-plain-scalar.yaml):
// yaml-cpp read a NUL in a plain scalar (a JSON body's "\u0000") as the lone byte A0, and the
// configuration's JSON dump then threw: a 500 for a bad request. LoadYaml refuses it now.
TEST(ExperimentConfigTest, TextThatYamlCannotReadAsUnicodeIsRefused) {
  using namespace std::string_literals;
  const std::string text =
      "entrypoint: m:T\nhyperparameters:\n  hidde\0_size: 3\n"
      "searcher: {name: single, metric: m, max_length: {batches: 1}}\n"s;
  auto config = ParseExperimentConfig(text);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find("not valid UTF-8"), std::string::npos)
      << config.status().message();
}

TEST(ExperimentConfigTest, SetExperimentSeedRecordsItInBothForms) {
  auto parsed = ParseExperimentConfig(Minimal());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  SetExperimentSeed(*parsed, 4242);
  EXPECT_EQ(parsed->experiment_seed, 4242u);
  EXPECT_EQ(parsed->effective["reproducibility"]["experiment_seed"], 4242);
}

TEST(ExperimentConfigTest, EnvironmentVariablesAsAListApplyToEveryDevice) {
  auto parsed =
      ParseExperimentConfig(Minimal("environment:\n"
                                    "  environment_variables:\n"
                                    "    - A=1\n"
                                    "    - B=2\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::vector<std::string> expected = {"A=1", "B=2"};
  EXPECT_EQ(parsed->environment.environment_variables_cpu, expected);
  EXPECT_EQ(parsed->environment.environment_variables_cuda, expected);
  EXPECT_EQ(parsed->environment.environment_variables_rocm, expected);
}

// The exact message for a broken input, which must name the line and the field path.
std::string ErrorOf(const std::string& yaml, StatusCode expected_code) {
  auto parsed = ParseExperimentConfig(yaml);
  if (parsed.ok()) return "(parsed without error)";
  EXPECT_EQ(parsed.status().code(), expected_code) << parsed.status().ToString();
  return parsed.status().message();
}

// PEDL's custom trial environment: a plain list applies to every device type, a map gives each
// its own (gpu is cuda's other name); the effective form keeps them and parses back to itself.
TEST(ExperimentConfigTest, RuntimeCommandsAndPackagesHaveVariantsPerDeviceType) {
  auto parsed =
      ParseExperimentConfig(Minimal("environment:\n"
                                    "  runtime_commands:\n"
                                    "    - echo one\n"
                                    "    - apt-get install -y python3-pandas\n"
                                    "  runtime_packages:\n"
                                    "    cpu: [tensorflow-cpu==2.15]\n"
                                    "    gpu: ['tensorflow[and-cuda]>=2.15', pandas]\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const EnvironmentConfig& e = parsed->environment;
  const std::vector<std::string> commands = {"echo one", "apt-get install -y python3-pandas"};
  EXPECT_EQ(e.runtime_commands.cpu, commands);
  EXPECT_EQ(e.runtime_commands.cuda, commands);
  EXPECT_EQ(e.runtime_commands.rocm, commands);
  EXPECT_EQ(e.runtime_packages.cpu, std::vector<std::string>{"tensorflow-cpu==2.15"});
  EXPECT_EQ(e.runtime_packages.cuda,
            (std::vector<std::string>{"tensorflow[and-cuda]>=2.15", "pandas"}));
  EXPECT_TRUE(e.runtime_packages.rocm.empty());

  const auto& effective = parsed->effective["environment"];
  EXPECT_EQ(effective["runtime_packages"]["cuda"][1], "pandas");
  EXPECT_EQ(effective["runtime_commands"]["rocm"][0], "echo one");
  auto again = ParseExperimentConfig(parsed->effective.dump());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->effective, parsed->effective);
  EXPECT_EQ(again->environment.runtime_packages.cuda, e.runtime_packages.cuda);

  // Without them the effective environment is Determined's, key for key.
  auto plain = ParseExperimentConfig(Minimal());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->effective["environment"].contains("runtime_commands"));
  EXPECT_FALSE(plain->effective["environment"].contains("runtime_packages"));
}

TEST(ExperimentConfigTest, RuntimeListsAreValidated) {
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_packages: [--index-url=http://elsewhere, pandas]\n"),
                    StatusCode::kInvalidArgument),
            "line 8: environment.runtime_packages: '--index-url=http://elsewhere' is a pip "
            "option, not a requirement; the package index is the cluster's (agent flags "
            "--pip-index-url, --pip-find-links)");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_commands:\n"
                            "    cpu: ['  ']\n"),
                    StatusCode::kInvalidArgument),
            "line 9: environment.runtime_commands.cpu: a command is empty");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_packages:\n"
                            "    cuda: [a]\n"
                            "    gpu: [b]\n"),
                    StatusCode::kInvalidArgument),
            "line 10: environment.runtime_packages.gpu: gpu is another name for cuda; give one "
            "of them");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_commands:\n"
                            "    tpu: [echo]\n"),
                    StatusCode::kInvalidArgument),
            "line 9: environment.runtime_commands.tpu: unknown field");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_packages: pandas\n"),
                    StatusCode::kInvalidArgument),
            "line 8: environment.runtime_packages: expected a list of pip requirements or a map "
            "{cpu: [...], cuda: [...]}");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  runtime_packages: [\"a\\nb\"]\n"),
                    StatusCode::kInvalidArgument),
            "line 8: environment.runtime_packages: 'a\nb' holds a line break; give one "
            "requirement per entry");
}

TEST(ExperimentConfigTest, MaxLengthMustBeAUnitMap) {
  EXPECT_EQ(ErrorOf("entrypoint: model_def:Trial\n"
                    "searcher:\n"
                    "  name: single\n"
                    "  metric: loss\n"
                    "  max_length: 1000\n",
                    StatusCode::kInvalidArgument),
            "line 5: searcher.max_length: expected a map like {batches: 1000}");
  EXPECT_EQ(ErrorOf("entrypoint: model_def:Trial\n"
                    "searcher:\n"
                    "  name: single\n"
                    "  metric: loss\n"
                    "  max_length:\n"
                    "    steps: 10\n",
                    StatusCode::kInvalidArgument),
            "line 6: searcher.max_length.steps: unknown unit; expected batches, records or "
            "epochs");
}

TEST(ExperimentConfigTest, ErrorsNameTheLineAndFieldPath) {
  EXPECT_EQ(ErrorOf(Minimal("hyperparameters:\n"
                            "  optimizer:\n"
                            "    lr:\n"
                            "      type: double\n"
                            "      minval: 0.5\n"
                            "      maxval: 0.1\n"),
                    StatusCode::kInvalidArgument),
            "line 12: hyperparameters.optimizer.lr.maxval: must be greater than minval");
  EXPECT_EQ(ErrorOf(Minimal("resources:\n"
                            "  slots_per_trial: two\n"),
                    StatusCode::kInvalidArgument),
            "line 8: resources.slots_per_trial: expected an integer, got \"two\"");
  EXPECT_EQ(ErrorOf(Minimal("hyperparameters:\n"
                            "  act:\n"
                            "    type: categorical\n"
                            "    vals: []\n"),
                    StatusCode::kInvalidArgument),
            "line 10: hyperparameters.act.vals: expected a non-empty list");
  EXPECT_EQ(ErrorOf(Minimal("hyperparameters:\n"
                            "  act:\n"
                            "    type: uniform\n"),
                    StatusCode::kInvalidArgument),
            "line 9: hyperparameters.act.type: unknown hyperparameter type 'uniform'; expected "
            "const, int, double, log or categorical");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n"
                            "  environment_variables: [NOVALUE]\n"),
                    StatusCode::kInvalidArgument),
            "line 8: environment.environment_variables: expected entries like NAME=value, got "
            "'NOVALUE'");
  EXPECT_EQ(ErrorOf(Minimal("max_restarts: -1\n"), StatusCode::kInvalidArgument),
            "line 7: max_restarts: must be at least 0, got -1");
}

TEST(ExperimentConfigTest, RequiredFieldsAreNamed) {
  EXPECT_EQ(ErrorOf("searcher:\n"
                    "  name: single\n"
                    "  metric: loss\n"
                    "  max_length: {batches: 10}\n",
                    StatusCode::kInvalidArgument),
            "line 1: entrypoint: required (e.g. entrypoint: model_def:MyTrial)");
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "searcher:\n"
                    "  name: random\n"
                    "  metric: loss\n"
                    "  max_length: {batches: 10}\n",
                    StatusCode::kInvalidArgument),
            "line 2: searcher.max_trials: required (e.g. max_trials: 16)");
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "searcher:\n"
                    "  name: single\n"
                    "  max_length: {batches: 10}\n",
                    StatusCode::kInvalidArgument),
            "line 2: searcher.metric: required (e.g. metric: validation_loss)");
  EXPECT_EQ(ErrorOf(Minimal("checkpoint_storage:\n"
                            "  type: shared_fs\n"),
                    StatusCode::kInvalidArgument),
            "line 7: checkpoint_storage.host_path: required (e.g. host_path: /mnt/ckpt)");
}

TEST(ExperimentConfigTest, UnknownFieldsAreInvalid) {
  EXPECT_EQ(ErrorOf(Minimal("colour: blue\n"), StatusCode::kInvalidArgument),
            "line 7: colour: unknown field");
  EXPECT_EQ(ErrorOf(Minimal("resources:\n  slots: 2\n"), StatusCode::kInvalidArgument),
            "line 8: resources.slots: not allowed for experiments; use "
            "resources.slots_per_trial");
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "searcher:\n"
                    "  name: grid\n"
                    "  metric: loss\n"
                    "  divisor: 3\n"
                    "  max_length: {batches: 10}\n",
                    StatusCode::kInvalidArgument),
            "line 5: searcher.divisor: not a field of the grid searcher");
  EXPECT_EQ(ErrorOf(Minimal("hyperparameters:\n"
                            "  lr:\n"
                            "    type: int\n"
                            "    minval: 1\n"
                            "    maxval: 4\n"
                            "    base: 2\n"),
                    StatusCode::kInvalidArgument),
            "line 12: hyperparameters.lr.base: not a field of int hyperparameters");
}

TEST(ExperimentConfigTest, ContainerFieldsAreReadAsCommandsReadThem) {
  auto config = experiments::ParseExperimentConfig(
      Minimal("bind_mounts:\n"
              "  - {host_path: /datasets, container_path: /data, read_only: true}\n"
              "environment:\n"
              "  registry_auth: {username: robot, password: pw-1, serveraddress: r.example}\n"
              "  force_pull_image: true\n"
              "resources:\n"
              "  shm_size: 2G\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->container.bind_mounts_size(), 1);
  EXPECT_TRUE(config->container.bind_mounts(0).read_only());
  EXPECT_EQ(config->container.registry_auth().password(), "pw-1");
  EXPECT_TRUE(config->container.force_pull_image());
  EXPECT_EQ(config->container.shm_size_bytes(), int64_t{2} << 30);
  // The effective form reads back to the same configuration.
  auto again = experiments::ParseExperimentConfig(config->effective.dump());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->effective, config->effective);
  EXPECT_EQ(again->container.SerializeAsString(), config->container.SerializeAsString());
  EXPECT_EQ(ErrorOf(Minimal("bind_mounts:\n  - {host_path: data, container_path: /d}\n"),
                    StatusCode::kInvalidArgument),
            "line 8: bind_mounts[0].host_path: must be an absolute path");
}

TEST(ExperimentConfigTest, UnsupportedDeterminedFieldsAreRefusedByName) {
  EXPECT_EQ(ErrorOf(Minimal("preemption_timeout: 60\n"), StatusCode::kNotSupported),
            "line 7: preemption_timeout is not supported yet");
  EXPECT_EQ(ErrorOf(Minimal("environment:\n  pod_spec: {}\n"), StatusCode::kNotSupported),
            "line 8: environment.pod_spec is not supported yet");
  const std::string gcs = ErrorOf(Minimal("checkpoint_storage:\n"
                                          "  type: gcs\n"
                                          "  bucket: b\n"),
                                  StatusCode::kNotSupported);
  EXPECT_EQ(gcs.rfind("line 8: checkpoint_storage.type: checkpoint storage of type gcs is not "
                      "supported: ",
                      0),
            0u)
      << gcs;
  const std::string bad_source = ErrorOf(
      "entrypoint: a:B\n"
      "searcher:\n"
      "  name: single\n"
      "  metric: loss\n"
      "  source_trial_id: 0\n"
      "  max_length: {batches: 10}\n",
      StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_source.rfind("line 5: searcher.source_trial_id", 0), 0u) << bad_source;
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "searcher:\n"
                    "  name: async_halving\n"
                    "  metric: loss\n",
                    StatusCode::kNotSupported),
            "line 3: searcher.name: the async_halving searcher is not supported yet; use "
            "single, grid, random, adaptive_asha or pbt");
}

// Determined 0.38's forms: a command entrypoint (string or list), no length for a script that
// runs to its own end, max_time + time_metric, and the trial harness's settings passed through.
TEST(ExperimentConfigTest, DeterminedCommandsLengthsAndHarnessSettingsParse) {
  auto script = ParseExperimentConfig(
      "entrypoint: python3 0_start.py\n"
      "searcher: {name: single, metric: x}\n");
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  EXPECT_EQ(script->entrypoint, "python3 0_start.py");
  EXPECT_TRUE(script->searcher.open_ended);
  EXPECT_FALSE(script->effective["searcher"].contains("max_length"));
  EXPECT_EQ(DeterminedTrialConfig(*script)["checkpoint_policy"], "best");
  EXPECT_EQ(DeterminedTrialConfig(*script)["profiling"]["enabled"], false);

  auto list = ParseExperimentConfig(
      "entrypoint: [python3, -m, determined.launch.torch_distributed, python3, train.py]\n"
      "searcher: {name: single, metric: x}\n"
      "checkpoint_policy: all\n"
      "optimizations: {aggregation_frequency: 2}\n");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->entrypoint_argv.size(), 5u);
  EXPECT_EQ(list->effective["entrypoint"].size(), 5u);
  EXPECT_EQ(list->effective["checkpoint_policy"], "all");
  // The user's optimizations stay; Determined's defaults fill the rest.
  EXPECT_EQ(DeterminedTrialConfig(*list)["optimizations"]["aggregation_frequency"], 2);
  EXPECT_EQ(DeterminedTrialConfig(*list)["optimizations"]["average_aggregated_gradients"], true);
  // The effective form parses back to the same configuration.
  auto again = ParseExperimentConfig(list->effective.dump());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->effective, list->effective);

  auto asha = ParseExperimentConfig(
      "entrypoint: python3 3_hpsearch.py\n"
      "hyperparameters: {increment_by: {type: int, minval: 1, maxval: 8}}\n"
      "searcher: {name: adaptive_asha, metric: x, max_trials: 10, time_metric: batches, "
      "max_time: 100}\n");
  ASSERT_TRUE(asha.ok()) << asha.status().ToString();
  EXPECT_EQ(asha->searcher.time_metric, "batches");
  EXPECT_EQ(asha->searcher.max_length.value, 100);
  EXPECT_EQ(asha->effective["searcher"]["max_time"], 100);

  EXPECT_EQ(ErrorOf("entrypoint: python3 a.py\n"
                    "searcher: {name: adaptive_asha, metric: x, max_trials: 4}\n",
                    StatusCode::kInvalidArgument),
            "line 2: searcher: adaptive_asha needs a length: max_time and time_metric (e.g. "
            "max_time: 100, time_metric: batches), or max_length: {batches: N}");
  EXPECT_EQ(ErrorOf("entrypoint: python3 a.py\n"
                    "searcher: {name: single, metric: x, max_time: 10}\n",
                    StatusCode::kInvalidArgument),
            "line 2: searcher.max_time: max_time and time_metric go together: the searcher "
            "compares max_time with the time_metric value of each validation");
  EXPECT_EQ(ErrorOf("entrypoint: model_def:Trial\n"
                    "searcher: {name: single, metric: x}\n",
                    StatusCode::kInvalidArgument),
            "line 2: searcher: a trial class entrypoint (model_def:Trial) trains to the "
            "searcher's length: give max_length: {batches: N}, or max_time and time_metric");
  EXPECT_EQ(ErrorOf("entrypoint: []\nsearcher: {name: single, metric: x}\n",
                    StatusCode::kInvalidArgument),
            "line 1: entrypoint: the command list must name a program first");
  EXPECT_EQ(
      ErrorOf("entrypoint: a:B\nsearcher: {name: single, metric: x, max_length: {batches: 5}}\n"
              "checkpoint_policy: sometimes\n",
              StatusCode::kInvalidArgument),
      "line 3: checkpoint_policy: unknown checkpoint_policy 'sometimes'; expected best, "
      "all or none");
}

TEST(ExperimentConfigTest, LengthsInRecordsOrEpochsNeedTheirConversions) {
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "searcher:\n"
                    "  name: single\n"
                    "  metric: loss\n"
                    "  max_length:\n"
                    "    records: 6400\n",
                    StatusCode::kInvalidArgument),
            "line 5: searcher.max_length: a length in records needs "
            "hyperparameters.global_batch_size");
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "hyperparameters:\n"
                    "  global_batch_size: 32\n"
                    "searcher:\n"
                    "  name: single\n"
                    "  metric: loss\n"
                    "  max_length:\n"
                    "    epochs: 1\n",
                    StatusCode::kInvalidArgument),
            "line 7: searcher.max_length: a length in epochs needs records_per_epoch");
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "hyperparameters:\n"
                    "  global_batch_size:\n"
                    "    type: int\n"
                    "    minval: 16\n"
                    "    maxval: 64\n"
                    "min_validation_period:\n"
                    "  records: 100\n"
                    "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n",
                    StatusCode::kInvalidArgument),
            "line 3: hyperparameters.global_batch_size: must be a positive integer constant "
            "when a length is given in records (min_validation_period)");
}

TEST(ExperimentConfigTest, GridNeedsACountOnEveryRange) {
  EXPECT_EQ(ErrorOf("entrypoint: a:B\n"
                    "hyperparameters:\n"
                    "  lr:\n"
                    "    type: double\n"
                    "    minval: 0.1\n"
                    "    maxval: 0.2\n"
                    "searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n",
                    StatusCode::kInvalidArgument),
            "line 3: hyperparameters.lr: grid search is in use but count was not provided");
}

TEST(ExperimentConfigTest, MalformedDocumentsAreRefusedWithTheirLine) {
  EXPECT_EQ(ErrorOf(Minimal("name: a\nname: b\n"), StatusCode::kInvalidArgument),
            "line 8: name: duplicate key");
  const std::string bad =
      ErrorOf("entrypoint: a:B\nsearcher: [unclosed\n", StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.rfind("line ", 0), 0u) << bad;
  EXPECT_NE(bad.find("not valid YAML"), std::string::npos) << bad;
  EXPECT_EQ(ErrorOf("- a\n- b\n", StatusCode::kInvalidArgument),
            "line 1: (top level): expected a map of experiment settings");
  EXPECT_EQ(ErrorOf(Minimal("template: shared\n"), StatusCode::kInvalidArgument),
            "line 7: template: the template must be applied before the configuration is "
            "parsed");
}

TEST(LengthTest, ConvertsRecordsAndEpochsToWholeBatches) {
  auto batches = LengthToBatches({LengthUnit::kBatches, 500}, 0, 0);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 500);
  // 1000 records in batches of 64 is 15.6 batches: 16 cover them.
  batches = LengthToBatches({LengthUnit::kRecords, 1000}, 64, 0);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 16);
  batches = LengthToBatches({LengthUnit::kRecords, 1024}, 64, 0);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 16);
  // 3 epochs of 100 records in batches of 32: 300 / 32 = 9.4, so 10.
  batches = LengthToBatches({LengthUnit::kEpochs, 3}, 32, 100);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 10);
  EXPECT_FALSE(LengthToBatches({LengthUnit::kRecords, 10}, 0, 0).ok());
  EXPECT_FALSE(LengthToBatches({LengthUnit::kEpochs, 10}, 32, 0).ok());
  EXPECT_FALSE(LengthToBatches({LengthUnit::kEpochs, INT64_MAX / 2}, 32, 100).ok());
}

TEST(ExperimentConfigTest, ObjectStoresTakeDeterminedsKeysAndNormalizeThePrefix) {
  auto s3 =
      ParseExperimentConfig(Minimal("checkpoint_storage:\n"
                                    "  type: s3\n"
                                    "  bucket: my-ckpt.v2\n"
                                    "  prefix: /runs/a/\n"
                                    "  endpoint_url: http://127.0.0.1:9000\n"
                                    "  access_key: AK\n"
                                    "  secret_key: SK\n"
                                    "  save_trial_latest: 3\n"));
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  const auto& storage = *s3->checkpoint_storage;
  EXPECT_TRUE(storage.IsObjectStore());
  EXPECT_EQ(storage.bucket, "my-ckpt.v2");
  EXPECT_EQ(storage.prefix, "runs/a");
  EXPECT_EQ(storage.secret_key.value_or(""), "SK");
  EXPECT_EQ(CheckpointDirectory(*s3), "") << "no directory: the trial writes the bucket";
  const auto& shown = s3->effective["checkpoint_storage"];
  EXPECT_EQ(shown["type"], "s3");
  EXPECT_EQ(shown["prefix"], "runs/a");
  EXPECT_EQ(shown["endpoint_url"], "http://127.0.0.1:9000");
  EXPECT_EQ(shown["save_trial_latest"], 3);
  EXPECT_FALSE(shown.contains("host_path")) << "Determined's package refuses unknown keys";
  // The effective config parses back to the same storage.
  auto again = ParseExperimentConfig(s3->effective.dump());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->effective["checkpoint_storage"], shown);

  auto azure =
      ParseExperimentConfig(Minimal("checkpoint_storage:\n"
                                    "  type: azure\n"
                                    "  container: ckpt\n"
                                    "  connection_string: \"AccountName=a;AccountKey=k\"\n"));
  ASSERT_TRUE(azure.ok()) << azure.status().ToString();
  EXPECT_EQ(azure->effective["checkpoint_storage"]["container"], "ckpt");
  EXPECT_EQ(azure->effective["checkpoint_storage"]["connection_string"],
            "AccountName=a;AccountKey=k");

  // The prefix as Determined's package normalizes it (os.path.normpath, no leading '/'), so the
  // master finds what the trials wrote.
  for (const auto& [given, normalized] : std::vector<std::pair<std::string, std::string>>{
           {"a//b/", "a/b"}, {"./a/./b", "a/b"}, {"/", ""}, {"a", "a"}}) {
    auto parsed = ParseExperimentConfig(
        Minimal("checkpoint_storage:\n  type: s3\n  bucket: b12\n  prefix: \"" + given + "\"\n"));
    ASSERT_TRUE(parsed.ok()) << given << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->checkpoint_storage->prefix, normalized) << given;
  }
}

TEST(ExperimentConfigTest, ObjectStoreMistakesAreExplained) {
  auto error = [](const std::string& storage) {
    auto parsed = ParseExperimentConfig(Minimal("checkpoint_storage:\n" + storage));
    return parsed.ok() ? std::string("parsed") : parsed.status().message();
  };
  EXPECT_EQ(error("  type: s3\n"),
            "line 7: checkpoint_storage.bucket: required (e.g. bucket: "
            "my-checkpoints)");
  EXPECT_NE(error("  type: s3\n  bucket: Bad_Bucket\n").find("must be an S3 bucket name"),
            std::string::npos);
  EXPECT_NE(error("  type: s3\n  bucket: b12\n  prefix: a/../b\n").find("without '..'"),
            std::string::npos);
  EXPECT_NE(error("  type: s3\n  bucket: b12\n  access_key: AK\n").find("go together"),
            std::string::npos);
  EXPECT_NE(error("  type: s3\n  bucket: b12\n  endpoint_url: ftp://x\n").find("http://"),
            std::string::npos);
  EXPECT_NE(error("  type: s3\n  bucket: b12\n  host_path: /x\n").find("unknown field"),
            std::string::npos);
  EXPECT_NE(error("  type: azure\n  container: ckpt\n").find("connection_string: required"),
            std::string::npos);
  EXPECT_NE(error("  type: azure\n  container: ckpt\n  account_url: https://a.b\n")
                .find("account_url is not supported"),
            std::string::npos);
  const std::string sas = error(
      "  type: azure\n  container: ckpt\n"
      "  connection_string: \"BlobEndpoint=x;SharedAccessSignature=SECRET\"\n");
  EXPECT_NE(sas.find("without AccountKey is not supported"), std::string::npos) << sas;
  EXPECT_EQ(sas.find("SECRET"), std::string::npos) << sas;
  const std::string listed =
      error("  type: s3\n  bucket: b12\n  access_key: [SECRET]\n  secret_key: k\n");
  EXPECT_NE(listed.find("access_key: expected a string"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("SECRET"), std::string::npos) << listed;
  EXPECT_NE(
      error("  type: s3\n  bucket: b12\n  endpoint_url: http://h:9000/minio\n").find("no path"),
      std::string::npos);
  EXPECT_NE(error("  type: azure\n  container: c.k\n  connection_string: AccountKey=b\n")
                .find("Azure container name"),
            std::string::npos);
  EXPECT_NE(error("  type: blob\n").find("unknown storage type 'blob'"), std::string::npos);
}

}  // namespace
}  // namespace cairn::experiments
