// master.yaml's task_container_defaults, cluster-wide and per pool: read and checked with
// Determined's keys (what Cairn cannot apply refused by name), recorded in ResourcePoolsConfigured,
// and merged under commands' specs and experiments' configurations in Determined's order (the
// work's own, then the pool's, then the cluster's), a trial's run carrying the result.
#include "commands/tasks/task_container_defaults.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/yaml_json.h"
#include "commands/agents/pools_config.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using nlohmann::json;

constexpr const char* kMasterYaml = R"(
task_container_defaults:
  image: team/base:1
  environment_variables: [CLUSTER=1, SHARED=cluster]
  bind_mounts:
    - {host_path: /datasets, container_path: /data, read_only: true}
    - {host_path: /scratch, container_path: /scratch}
  registry_auth: {username: robot, password: s3cret, serveraddress: registry.example}
  force_pull_image: true
  shm_size_bytes: 8589934592
  preemption_timeout: 120
  log_policies:
    - {name: NCCL, pattern: ".*NCCL error.*", action: cancel_retries}
  startup_hook: echo cluster-hook
resource_pools:
  - pool_name: default
  - pool_name: gpu
    task_container_defaults:
      startup_hook: echo gpu-hook
      image: {cpu: team/cpu:2, cuda: team/cuda:2}
      environment_variables: [SHARED=pool]
      preemption_timeout: 30
)";

Result<events::ResourcePoolsConfigured> Parse(const std::string& yaml) {
  CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml, "master.yaml"));
  return ParsePools("master.yaml", root);
}

TEST(TaskContainerDefaults, MasterYamlRecordsTheClustersAndEachPoolsOwn) {
  auto pools = Parse(kMasterYaml);
  ASSERT_TRUE(pools.ok()) << pools.status().ToString();
  EXPECT_EQ(pools->preemption_grace_seconds(), 120);
  EXPECT_EQ(pools->pools(0).preemption_grace_seconds(), 0);
  EXPECT_EQ(pools->pools(1).preemption_grace_seconds(), 30);
  const json cluster = json::parse(pools->task_container_defaults_json());
  EXPECT_EQ(cluster["image"], "team/base:1");
  EXPECT_EQ(cluster["shm_size_bytes"], 8589934592);
  EXPECT_EQ(cluster["registry_auth"]["password"], "s3cret");
  EXPECT_FALSE(cluster.contains("preemption_timeout"));
  EXPECT_EQ(pools->pools(0).task_container_defaults_json(), "");

  // In pool gpu the pool's fields win; its variables come after the cluster's, so they win when
  // applied in order; what it leaves unset is the cluster's.
  const auto in_gpu = TaskContainerDefaultsIn(*pools, "gpu");
  EXPECT_EQ(in_gpu["environment"]["image"], json({{"cpu", "team/cpu:2"}, {"cuda", "team/cuda:2"}}));
  EXPECT_EQ(in_gpu["environment"]["environment_variables"],
            json({"CLUSTER=1", "SHARED=cluster", "SHARED=pool"}));
  EXPECT_EQ(in_gpu["environment"]["registry_auth"]["username"], "robot");
  EXPECT_EQ(in_gpu["bind_mounts"].size(), 2u);
  EXPECT_EQ(in_gpu["resources"]["shm_size"], 8589934592);
  EXPECT_EQ(TaskContainerDefaultsIn(*pools, "default")["environment"]["image"], "team/base:1");
  EXPECT_EQ(StartupHookIn(*pools, "gpu"), "echo gpu-hook");
  EXPECT_EQ(StartupHookIn(*pools, "default"), "echo cluster-hook");

  events::ResourcePoolsConfigured none;
  EXPECT_TRUE(TaskContainerDefaultsIn(none, "default").empty());
}

TEST(TaskContainerDefaults, WhatCairnCannotApplyIsRefusedByNameAndBadValuesByLine) {
  struct Case {
    const char* yaml;
    StatusCode code;
    const char* message;
  };
  for (const Case& c : {
           Case{"task_container_defaults:\n  cpu_pod_spec: {}\n", StatusCode::kNotSupported,
                "master.yaml:2: task_container_defaults.cpu_pod_spec"},
           Case{"task_container_defaults:\n  startup_hook: [echo]\n", StatusCode::kInvalidArgument,
                "master.yaml:2: task_container_defaults.startup_hook"},
           Case{"task_container_defaults:\n  network_mode: host\n", StatusCode::kNotSupported,
                "network_mode"},
           Case{"task_container_defaults:\n  environment_variables: ['=x']\n",
                StatusCode::kInvalidArgument,
                "master.yaml:2: task_container_defaults.environment_variables"},
           Case{
               "task_container_defaults:\n  bind_mounts: [{host_path: data, container_path: /d}]\n",
               StatusCode::kInvalidArgument, "bind_mounts[0].host_path: must be an absolute path"},
           Case{"task_container_defaults:\n  registry_auth: {username: robot}\n",
                StatusCode::kInvalidArgument, "registry_auth.password: required"},
           Case{"task_container_defaults:\n  shm_size_bytes: 12\n", StatusCode::kInvalidArgument,
                "shm_size_bytes: must be between 1 MiB and 1 TiB"},
           Case{"task_container_defaults:\n  log_policies: [{name: a, pattern: '('}]\n",
                StatusCode::kInvalidArgument, "log_policies[0].pattern"},
           Case{"resource_pools:\n  - pool_name: default\n    task_container_defaults:\n      "
                "gpu_pod_spec: {}\n",
                StatusCode::kNotSupported,
                "resource_pools[0].task_container_defaults.gpu_pod_spec"},
       }) {
    auto parsed = Parse(c.yaml);
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_EQ(parsed.status().code(), c.code) << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos)
        << c.yaml << " -> " << parsed.status().ToString();
    EXPECT_EQ(parsed.status().message().find("s3cret"), std::string::npos);
  }
}

class DefaultsInUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pools = Parse(kMasterYaml);
    ASSERT_TRUE(pools.ok()) << pools.status().ToString();
    ASSERT_TRUE(cluster.Run(ConfigurePools{*pools}).ok());
    // A container agent: a pool of process agents refuses work with bind mounts.
    RegisterAgent agent = testing::Agent("g1", 2, "gpu");
    agent.registration.set_runs_containers(true);
    ASSERT_TRUE(cluster.Run(agent).ok());
  }
  testing::Cluster cluster;
};

TEST_F(DefaultsInUseTest, ACommandTakesWhatItLeavesUnsetFromItsPoolsDefaults) {
  // In a pool of process agents the defaults' mounts could not be applied: refused at once.
  RegisterAgent process = testing::Agent("p1", 1, "default");
  ASSERT_TRUE(cluster.Run(process).ok());
  auto refused = cluster.Run(testing::Submission("cmd-0", {.slots = 1, .force = true}));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bind_mounts"), std::string::npos);

  SubmitTask submit = testing::Submission("cmd-1", {.slots = 1, .pool = "gpu", .force = true});
  submit.spec.add_environment_variables("SHARED=task");
  auto* own = submit.spec.add_bind_mounts();
  own->set_host_path("/home/alice/data");
  own->set_container_path("/data");
  auto decided = cluster.Run(submit);
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  const auto submitted = cluster.Last(events::Envelope::kTaskSubmitted);
  ASSERT_EQ(submitted.size(), 1u);
  const auto& spec = submitted[0].task_submitted().spec();
  EXPECT_EQ(spec.image_gpu(), "team/cuda:2");
  EXPECT_EQ(spec.image_cpu(), "team/cpu:2");
  EXPECT_EQ(
      std::vector<std::string>(spec.environment_variables().begin(),
                               spec.environment_variables().end()),
      (std::vector<std::string>{"CLUSTER=1", "SHARED=cluster", "SHARED=pool", "SHARED=task"}));
  // Its own mount on /data stays; the defaults' other one is added.
  ASSERT_EQ(spec.bind_mounts_size(), 2);
  EXPECT_EQ(spec.bind_mounts(0).host_path(), "/home/alice/data");
  EXPECT_EQ(spec.bind_mounts(1).container_path(), "/scratch");
  EXPECT_EQ(spec.registry_auth().password(), "s3cret");
  EXPECT_TRUE(spec.force_pull_image());
  EXPECT_EQ(spec.shm_size_bytes(), 8589934592);
  EXPECT_EQ(spec.startup_hook(), "echo gpu-hook");
  EXPECT_EQ(cluster.state.PreemptionGraceSeconds("gpu"), 30);
  EXPECT_EQ(cluster.state.PreemptionGraceSeconds("default"), 120);

  // A command with its own image keeps it.
  SubmitTask imaged = testing::Submission("cmd-2", {.slots = 0, .pool = "gpu", .force = true});
  imaged.spec.set_image_cpu("mine:1");
  ASSERT_TRUE(cluster.Run(imaged).ok());
  EXPECT_EQ(cluster.Last(events::Envelope::kTaskSubmitted)[0].task_submitted().spec().image_cpu(),
            "mine:1");
}

TEST_F(DefaultsInUseTest, AnExperimentShowsTheDefaultsMergedAndItsTrialsRunWithThem) {
  CreateExperiment command;
  command.created.set_owner("test");
  command.created.set_context_digest("sha256:00");
  command.created.set_activate(true);
  auto& request = command.request.emplace();
  request.config_yaml = R"(
entrypoint: model_def:Trial
searcher: {name: single, metric: loss, max_length: {batches: 100}}
resources: {resource_pool: gpu}
environment:
  environment_variables: [SHARED=experiment]
log_policies:
  - {name: Mine, pattern: "boom", action: exclude_node}
)";
  request.context_paths = {"model_def.py"};
  request.default_checkpoint_dir = "/var/cairn/checkpoints";
  request.seed_if_unset = 1;
  auto decided = cluster.Run(command);
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  const auto created = cluster.Last(events::Envelope::kExperimentCreated);
  ASSERT_EQ(created.size(), 1u);
  const json config = json::parse(created[0].experiment_created().config_json());
  EXPECT_EQ(config["environment"]["image"]["cuda"], "team/cuda:2");
  EXPECT_EQ(config["environment"]["environment_variables"]["cuda"],
            json({"CLUSTER=1", "SHARED=cluster", "SHARED=pool", "SHARED=experiment"}));
  EXPECT_EQ(config["environment"]["registry_auth"]["password"], "s3cret");
  EXPECT_EQ(config["environment"]["force_pull_image"], true);
  EXPECT_EQ(config["bind_mounts"][0]["container_path"], "/data");
  EXPECT_EQ(config["resources"]["shm_size"], 8589934592);
  // The experiment's policy, then the cluster's, then Determined's defaults.
  std::vector<std::string> names;
  for (const auto& policy : config["log_policies"]) names.push_back(policy.value("name", ""));
  EXPECT_EQ(names, (std::vector<std::string>{"Mine", "NCCL", "CUDA OOM", "ECC Error"}));

  const auto runs = cluster.Last(events::Envelope::kTaskSubmitted);
  ASSERT_EQ(runs.size(), 1u);
  const auto& spec = runs[0].task_submitted().spec();
  EXPECT_EQ(spec.image_gpu(), "team/cuda:2");
  ASSERT_EQ(spec.bind_mounts_size(), 2);
  EXPECT_TRUE(spec.bind_mounts(0).read_only());
  EXPECT_EQ(spec.registry_auth().username(), "robot");
  EXPECT_TRUE(spec.force_pull_image());
  EXPECT_EQ(spec.shm_size_bytes(), 8589934592);
  EXPECT_EQ(spec.startup_hook(), "echo gpu-hook");
  EXPECT_FALSE(config.contains("startup_hook")) << "not an experiment's key";
}

}  // namespace
}  // namespace cairn::commands
