// The resource pool and scheduler sections of master.yaml: the all-or-nothing scheduler override
// from Determined's documentation, the legacy format, defaults, and errors that name the file,
// the line and the field.
#include "master/master_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace cairn {
namespace {

Result<MasterConfig> Parse(const std::string& text) {
  return ParseMasterConfig(text, "master.yaml");
}

// The pools of a document that must parse.
events::ResourcePoolsConfigured PoolsOf(const std::string& text) {
  auto config = Parse(text);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? config->pools : events::ResourcePoolsConfigured{};
}

const events::ResourcePoolConfig* FindPool(const events::ResourcePoolsConfigured& pools,
                                           const std::string& name) {
  for (const auto& pool : pools.pools()) {
    if (pool.pool_name() == name) return &pool;
  }
  return nullptr;
}

void ExpectError(const std::string& text, StatusCode code, const std::string& message) {
  auto config = Parse(text);
  ASSERT_FALSE(config.ok()) << "parsed, but expected: " << message;
  EXPECT_EQ(config.status().code(), code) << config.status().ToString();
  EXPECT_EQ(config.status().message(), message);
}

// The seeds' first example: the pool's block sets only fitting_policy, so its type is the
// scheduler default (fair_share), not the cluster-wide round_robin.
TEST(MasterConfigPools, PoolSchedulerBlockInheritsNothing) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  type: agent
  scheduler:
    type: round_robin
    fitting_policy: best
  default_aux_resource_pool: pool1
  default_compute_resource_pool: pool1

resource_pools:
  - pool_name: pool1
    scheduler:
      fitting_policy: worst
)");
  ASSERT_EQ(pools.pools_size(), 1);
  const auto& pool = pools.pools(0);
  EXPECT_EQ(pool.pool_name(), "pool1");
  EXPECT_EQ(pool.scheduler().type(), events::SCHEDULER_TYPE_FAIR_SHARE);
  EXPECT_EQ(pool.scheduler().fitting_policy(), events::FITTING_POLICY_WORST);
  EXPECT_EQ(pool.scheduler().default_priority(), 42);
  EXPECT_TRUE(pool.scheduler_from_pool());
  EXPECT_EQ(pools.default_compute_pool(), "pool1");
  EXPECT_EQ(pools.default_aux_pool(), "pool1");
}

// The seeds' second example: redefining the type in the pool's block keeps round robin.
TEST(MasterConfigPools, PoolSchedulerBlockRedefiningTypeKeepsRoundRobin) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  type: agent
  scheduler:
    type: round_robin
    fitting_policy: best
  default_aux_resource_pool: pool1
  default_compute_resource_pool: pool1

resource_pools:
  - pool_name: pool1
    scheduler:
      type: round_robin
      fitting_policy: worst
)");
  ASSERT_EQ(pools.pools_size(), 1);
  EXPECT_EQ(pools.pools(0).scheduler().type(), events::SCHEDULER_TYPE_ROUND_ROBIN);
  EXPECT_EQ(pools.pools(0).scheduler().fitting_policy(), events::FITTING_POLICY_WORST);
}

TEST(MasterConfigPools, PoolWithoutSchedulerBlockInheritsEverything) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  scheduler:
    type: priority
    fitting_policy: worst
    preemption: true
    default_priority: 10
  default_compute_resource_pool: gpu
  default_aux_resource_pool: cpu
resource_pools:
  - pool_name: gpu
  - pool_name: cpu
    description: cheap machines
    scheduler:
  - pool_name: spare
    scheduler: {}
)");
  ASSERT_EQ(pools.pools_size(), 3);
  // A blank `scheduler:` (no value or an empty map) sets nothing, so it inherits like an absent
  // one.
  for (const auto& pool : pools.pools()) {
    SCOPED_TRACE(pool.pool_name());
    EXPECT_EQ(pool.scheduler().type(), events::SCHEDULER_TYPE_PRIORITY);
    EXPECT_EQ(pool.scheduler().fitting_policy(), events::FITTING_POLICY_WORST);
    EXPECT_TRUE(pool.scheduler().preemption());
    EXPECT_EQ(pool.scheduler().default_priority(), 10);
    EXPECT_FALSE(pool.scheduler_from_pool());
    EXPECT_EQ(pool.max_aux_containers_per_agent(), 100);
  }
  EXPECT_EQ(pools.pools(1).description(), "cheap machines");
  EXPECT_EQ(pools.default_compute_pool(), "gpu");
  EXPECT_EQ(pools.default_aux_pool(), "cpu");
}

// Determined's own example of the override: cluster-wide preemption does not reach a pool that
// writes any scheduler field of its own.
TEST(MasterConfigPools, PoolSchedulerBlockDropsClusterPreemption) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  scheduler: {type: priority, preemption: true, default_priority: 7}
resource_pools:
  - pool_name: default
    scheduler: {type: priority, fitting_policy: worst}
)");
  ASSERT_EQ(pools.pools_size(), 1);
  EXPECT_EQ(pools.pools(0).scheduler().type(), events::SCHEDULER_TYPE_PRIORITY);
  EXPECT_FALSE(pools.pools(0).scheduler().preemption());
  EXPECT_EQ(pools.pools(0).scheduler().default_priority(), 42);
}

TEST(MasterConfigPools, NoResourcePoolsGivesOnePoolDefaultWithClusterScheduler) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  scheduler:
    type: priority
    preemption: true
)");
  ASSERT_EQ(pools.pools_size(), 1);
  EXPECT_EQ(pools.pools(0).pool_name(), "default");
  EXPECT_EQ(pools.pools(0).scheduler().type(), events::SCHEDULER_TYPE_PRIORITY);
  EXPECT_EQ(pools.pools(0).scheduler().fitting_policy(), events::FITTING_POLICY_BEST);
  EXPECT_TRUE(pools.pools(0).scheduler().preemption());
  EXPECT_EQ(pools.default_compute_pool(), "default");
  EXPECT_EQ(pools.default_aux_pool(), "default");
}

TEST(MasterConfigPools, LegacySchedulerIsOnePoolDefaultForComputeAndAux) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
scheduler:
  type: round_robin
  fitting_policy: worst
)");
  ASSERT_EQ(pools.pools_size(), 1);
  EXPECT_EQ(pools.pools(0).pool_name(), "default");
  EXPECT_EQ(pools.pools(0).scheduler().type(), events::SCHEDULER_TYPE_ROUND_ROBIN);
  EXPECT_EQ(pools.pools(0).scheduler().fitting_policy(), events::FITTING_POLICY_WORST);
  EXPECT_EQ(pools.default_compute_pool(), "default");
  EXPECT_EQ(pools.default_aux_pool(), "default");
}

// The documented defaults (seeds and Determined's config.go): fair_share when the type is blank,
// best fit, default_priority 42, 100 aux containers per agent, preemption_timeout 3600 s.
void ExpectDocumentedDefaults(const events::ResourcePoolsConfigured& pools) {
  ASSERT_EQ(pools.pools_size(), 1);
  const auto& pool = pools.pools(0);
  EXPECT_EQ(pool.pool_name(), "default");
  EXPECT_EQ(pool.scheduler().type(), events::SCHEDULER_TYPE_FAIR_SHARE);
  EXPECT_EQ(pool.scheduler().fitting_policy(), events::FITTING_POLICY_BEST);
  EXPECT_FALSE(pool.scheduler().preemption());
  EXPECT_EQ(pool.scheduler().default_priority(), 42);
  EXPECT_FALSE(pool.scheduler_from_pool());
  EXPECT_EQ(pool.max_aux_containers_per_agent(), 100);
  EXPECT_EQ(pools.default_compute_pool(), "default");
  EXPECT_EQ(pools.default_aux_pool(), "default");
  EXPECT_EQ(pools.preemption_grace_seconds(), 3600);
}

TEST(MasterConfigPools, DefaultConstructedConfigHoldsDocumentedDefaults) {
  MasterConfig config;
  ExpectDocumentedDefaults(config.pools);
  EXPECT_EQ(config.pools.source(), "defaults");
}

TEST(MasterConfigPools, FileWithoutPoolSectionsHoldsDocumentedDefaults) {
  auto pools = PoolsOf("data_dir: /tmp/cairn\n");
  ExpectDocumentedDefaults(pools);
  EXPECT_EQ(pools.source(), "master.yaml");
}

TEST(MasterConfigPools, DeprecatedDefaultPoolNamesAndAuxAliasAreRead) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
resource_manager:
  default_gpu_resource_pool: gpu
  default_cpu_resource_pool: cpu
resource_pools:
  - pool_name: gpu
    max_aux_containers_per_agent: 0
  - pool_name: cpu
    max_cpu_containers_per_agent: 8
)");
  EXPECT_EQ(pools.default_compute_pool(), "gpu");
  EXPECT_EQ(pools.default_aux_pool(), "cpu");
  ASSERT_EQ(pools.pools_size(), 2);
  EXPECT_EQ(pools.pools(0).max_aux_containers_per_agent(), 0);
  EXPECT_EQ(pools.pools(1).max_aux_containers_per_agent(), 8);
}

TEST(MasterConfigPools, TaskContainerDefaultsPreemptionTimeoutIsTheGracePeriod) {
  auto pools = PoolsOf(R"(data_dir: /tmp/cairn
task_container_defaults:
  preemption_timeout: 90
)");
  EXPECT_EQ(pools.preemption_grace_seconds(), 90);

  ExpectError(R"(data_dir: /tmp/cairn
task_container_defaults:
  preemption_timeout: 0
)",
              StatusCode::kInvalidArgument,
              "master.yaml:3: task_container_defaults.preemption_timeout: must be more than 0 and "
              "at most 86400 seconds");
  ExpectError(R"(data_dir: /tmp/cairn
task_container_defaults:
  preemption_timeout: 60
  shm_size_bytes: 1024
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: task_container_defaults.shm_size_bytes: must be between 1 MiB and "
              "1 TiB");
  // A pool's own preemption_timeout is its grace period; the cluster's stays for the others.
  auto per_pool = PoolsOf(R"(data_dir: /tmp/cairn
task_container_defaults:
  preemption_timeout: 90
resource_pools:
  - pool_name: default
  - pool_name: batch
    task_container_defaults:
      preemption_timeout: 5
)");
  EXPECT_EQ(per_pool.preemption_grace_seconds(), 90);
  EXPECT_EQ(per_pool.pools(1).preemption_grace_seconds(), 5);
}

TEST(MasterConfigPools, PreemptionNeedsThePriorityScheduler) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
    scheduler:
      fitting_policy: worst
      preemption: true
)",
              StatusCode::kInvalidArgument,
              "master.yaml:6: resource_pools[0].scheduler.preemption: only the priority scheduler "
              "preempts, and resource_pools[0].scheduler.type is fair_share");
}

TEST(MasterConfigPools, FittingPolicyTypoNamesFileLineAndField) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: a
  - pool_name: default
    scheduler:
      type: priority
      fitting_policy: worts
)",
              StatusCode::kInvalidArgument,
              "master.yaml:7: resource_pools[1].scheduler.fitting_policy: must be best or worst, "
              "got 'worts'");
}

TEST(MasterConfigPools, BadSchedulerValuesAreRejected) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_manager:
  scheduler:
    type: fifo
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: resource_manager.scheduler.type: must be fair_share, priority or "
              "round_robin, got 'fifo'");
  ExpectError(R"(data_dir: /tmp/cairn
scheduler:
  type: priority
  default_priority: 100
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: scheduler.default_priority: must be between 1 and 99, got 100");
  ExpectError(R"(data_dir: /tmp/cairn
resource_manager:
  scheduler:
    allow_heterogeneous_fits: true
)",
              StatusCode::kNotSupported,
              "master.yaml:4: resource_manager.scheduler.allow_heterogeneous_fits: heterogeneous "
              "fits are not supported");
}

TEST(MasterConfigPools, DefaultPoolMustBeConfigured) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_manager:
  default_compute_resource_pool: gpu
  default_aux_resource_pool: cpux
resource_pools:
  - pool_name: gpu
  - pool_name: cpu
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: resource_manager.default_aux_resource_pool: no resource pool named "
              "'cpux' (configured: gpu, cpu)");
  // Unwritten defaults are "default", which these pools do not have.
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: gpu
)",
              StatusCode::kInvalidArgument,
              "master.yaml:2: resource_manager.default_compute_resource_pool: not set, so it is "
              "'default', but no resource pool is named 'default' (configured: gpu)");
}

TEST(MasterConfigPools, DuplicatePoolNamesAreRejected) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
  - pool_name: gpu
  - pool_name: default
)",
              StatusCode::kInvalidArgument,
              "master.yaml:5: resource_pools[2].pool_name: duplicate pool name 'default' (also "
              "resource_pools[0])");
}

TEST(MasterConfigPools, BadPoolEntriesAreRejected) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
    max_slots: 4
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: resource_pools[0].max_slots: unknown field");
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - description: no name
)",
              StatusCode::kInvalidArgument, "master.yaml:3: resource_pools[0].pool_name: required");
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: "gpu pool"
)",
              StatusCode::kInvalidArgument,
              "master.yaml:3: resource_pools[0].pool_name: must be letters, digits, '-', '_', "
              "'.'; at most 128, got 'gpu pool'");
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
    max_aux_containers_per_agent: -1
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: resource_pools[0].max_aux_containers_per_agent: must be 0 or more, "
              "got -1");
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
    task_container_defaults:
      shm_size_bytes: 1
)",
              StatusCode::kInvalidArgument,
              "master.yaml:5: resource_pools[0].task_container_defaults.shm_size_bytes: must be "
              "between 1 MiB and 1 TiB");
}

TEST(MasterConfigPools, DynamicAgentsAreNotSupported) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
    provider:
      type: aws
)",
              StatusCode::kNotSupported,
              "master.yaml:4: resource_pools[0].provider: dynamic agents (provider) are not "
              "supported; start agents by hand with --pool NAME");
  ExpectError(R"(data_dir: /tmp/cairn
provisioner:
  provider: gcp
)",
              StatusCode::kNotSupported,
              "master.yaml:2: provisioner: dynamic agents (provisioner) are not supported; start "
              "agents by hand with --pool NAME");
  ExpectError(R"(data_dir: /tmp/cairn
resource_manager:
  type: kubernetes
)",
              StatusCode::kNotSupported,
              "master.yaml:3: resource_manager.type: only the agent resource manager is supported, "
              "got 'kubernetes'");
}

TEST(MasterConfigPools, LegacyAndCurrentFormatsCannotBeMixed) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_pools:
  - pool_name: default
scheduler:
  type: priority
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: scheduler: the legacy format (top-level scheduler/provisioner) "
              "cannot be mixed with resource_pools; move it to resource_manager.scheduler or "
              "resource_pools");
}

TEST(MasterConfigPools, NewAndDeprecatedNamesCannotBothBeSet) {
  ExpectError(R"(data_dir: /tmp/cairn
resource_manager:
  default_compute_resource_pool: default
  default_gpu_resource_pool: default
)",
              StatusCode::kInvalidArgument,
              "master.yaml:4: resource_manager.default_gpu_resource_pool: deprecated name of "
              "resource_manager.default_compute_resource_pool; set only one of them");
}

// The example shipped in ops/ must stay loadable. CMake passes the source tree's path (a ccache
// base_dir would make __FILE__ relative).
TEST(MasterConfigPools, ShippedExampleLoads) {
  const std::string example = std::string(CAIRN_SOURCE_DIR) + "/ops/master.example.yaml";
  auto config = LoadMasterConfig(example);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const auto& pools = config->pools;
  EXPECT_EQ(pools.source(), example);
  EXPECT_EQ(pools.default_compute_pool(), "gpu");
  EXPECT_EQ(pools.default_aux_pool(), "cpu");
  const auto* gpu = FindPool(pools, "gpu");
  const auto* cpu = FindPool(pools, "cpu");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(gpu->scheduler().type(), events::SCHEDULER_TYPE_PRIORITY);
  EXPECT_TRUE(gpu->scheduler().preemption());
  EXPECT_TRUE(gpu->scheduler_from_pool());
  EXPECT_FALSE(cpu->scheduler_from_pool());
}

TEST(MasterConfigCheckpointStorage, ADefaultInDeterminedsKeysWithItsCredentialsMasked) {
  auto config = Parse(
      "data_dir: /d\ncheckpoint_storage:\n  type: s3\n  bucket: cluster-ckpt\n"
      "  access_key: AKIA1\n  secret_key: planted-secret-42\n  save_trial_best: 2\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->checkpoint_storage["bucket"], "cluster-ckpt");
  EXPECT_EQ(config->checkpoint_storage["secret_key"], "planted-secret-42") << "kept for the trials";
  EXPECT_EQ(config->checkpoint_storage["save_trial_best"], 2);
  const std::string shown = MasterConfigJson(*config);
  EXPECT_EQ(shown.find("planted-secret-42"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("AKIA1"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\"bucket\":\"cluster-ckpt\""), std::string::npos) << shown;
  EXPECT_TRUE(Parse("data_dir: /d\n")->checkpoint_storage.is_null());
  auto missing = Parse("data_dir: /d\ncheckpoint_storage:\n  type: s3\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "master.yaml:3: checkpoint_storage: checkpoint_storage.bucket: required (e.g. bucket: "
            "my-checkpoints)");
  auto gcs = Parse("data_dir: /d\ncheckpoint_storage:\n  type: gcs\n  bucket: b\n");
  ASSERT_FALSE(gcs.ok());
  EXPECT_EQ(gcs.status().code(), StatusCode::kNotSupported);
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

TEST(MasterConfigSecurity, AnAgentTokenIsReadAndABadOneIsRefusedWithoutBeingEchoed) {
  auto config = Parse("data_dir: /d\nsecurity:\n  agent_token: s3cret-agent-token-0123\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->security.agent_token, "s3cret-agent-token-0123");
  EXPECT_TRUE(Parse("data_dir: /d\n")->security.agent_token.empty()) << "made at first start";
  for (const std::string bad : {"short-s3cret", "has a space in the s3cret value"}) {
    auto refused = Parse("data_dir: /d\nsecurity:\n  agent_token: " + bad + "\n");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("master.yaml:3"), std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("security.agent_token"), std::string::npos);
    EXPECT_EQ(refused.status().message().find("s3cret"), std::string::npos)
        << "a secret is never echoed: " << refused.status().message();
  }
}

// Determined's security.authz.type; unset, the log decides (EffectiveAuthz).
TEST(MasterConfigSecurity, TheAuthorizationModelIsBasicOrRbac) {
  EXPECT_EQ(Parse("data_dir: /d\nsecurity:\n  authz:\n    type: rbac\n")->security.authz,
            events::AUTHZ_TYPE_RBAC);
  EXPECT_EQ(Parse("data_dir: /d\nsecurity:\n  authz:\n    type: basic\n")->security.authz,
            events::AUTHZ_TYPE_BASIC);
  EXPECT_EQ(Parse("data_dir: /d\n")->security.authz, events::AUTHZ_TYPE_UNSPECIFIED);
  ExpectError("data_dir: /d\nsecurity:\n  authz:\n    type: ldap\n", StatusCode::kInvalidArgument,
              "master.yaml:4: security.authz.type: expected basic or rbac, got 'ldap'");
  ExpectError("data_dir: /d\nsecurity:\n  authz:\n    fallback_type: basic\n",
              StatusCode::kInvalidArgument,
              "master.yaml:4: security.authz.fallback_type: unknown field");
}

// A setting wins; unset keeps the log's model; a log without one is a new cluster (basic) or was
// written when roles were the only model (rbac, so nobody suddenly sees everyone's work).
TEST(MasterConfigSecurity, AnUnsetModelKeepsTheLogsAndAnOldLogKeepsRoles) {
  using events::AUTHZ_TYPE_BASIC;
  using events::AUTHZ_TYPE_RBAC;
  using events::AUTHZ_TYPE_UNSPECIFIED;
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_BASIC, AUTHZ_TYPE_RBAC, true), AUTHZ_TYPE_BASIC);
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_RBAC, AUTHZ_TYPE_UNSPECIFIED, false), AUTHZ_TYPE_RBAC);
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_UNSPECIFIED, AUTHZ_TYPE_RBAC, true), AUTHZ_TYPE_RBAC);
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_UNSPECIFIED, AUTHZ_TYPE_BASIC, true), AUTHZ_TYPE_BASIC);
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_UNSPECIFIED, AUTHZ_TYPE_UNSPECIFIED, false),
            AUTHZ_TYPE_BASIC);
  EXPECT_EQ(EffectiveAuthz(AUTHZ_TYPE_UNSPECIFIED, AUTHZ_TYPE_UNSPECIFIED, true), AUTHZ_TYPE_RBAC);
}

TEST(MasterConfigSecurity, TlsTakesACertificateAndAKeyTogether) {
  auto config =
      Parse("data_dir: /d\nsecurity:\n  tls:\n    cert: /etc/c.crt\n    key: /etc/c.key\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->security.tls.cert, "/etc/c.crt");
  EXPECT_EQ(config->security.tls.key, "/etc/c.key");
  EXPECT_TRUE(Parse("data_dir: /d\n")->security.tls.cert.empty()) << "plain HTTP by default";
  ExpectError("data_dir: /d\nsecurity:\n  tls:\n    cert: /etc/c.crt\n",
              StatusCode::kInvalidArgument,
              "master.yaml:4: security.tls: cert and key go together: set both to serve HTTPS, "
              "or neither");
  ExpectError("data_dir: /d\nsecurity:\n  tls:\n    key: /etc/c.key\n    ca: /x\n",
              StatusCode::kInvalidArgument, "master.yaml:5: security.tls.ca: unknown field");
}

TEST(MasterConfigSnapshots, EachIntervalIsReadAndCheckedApart) {
  auto config =
      Parse("data_dir: /d\nsnapshots:\n  every_events: 200\n  write_side_every_events: 0\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->snapshots.every_events, 200u);
  EXPECT_EQ(config->snapshots.write_side_every_events, 0u) << "0 turns them off";
  EXPECT_EQ(Parse("data_dir: /d\n")->snapshots.write_side_every_events,
            MasterConfig().snapshots.write_side_every_events);
  // Many agents behind one NAT address need more connections from it than the default.
  EXPECT_EQ(Parse("data_dir: /d\nmax_connections_per_address: 2000\n")->max_connections_per_address,
            2000u);
  ExpectError("data_dir: /d\nmax_connections_per_address: 0\n", StatusCode::kInvalidArgument,
              "master.yaml:2: max_connections_per_address: must be at least 1");
  // On Kafka a shorter interval bounds the restart's fold, unless master.yaml says otherwise.
  const std::string kafka = "data_dir: /d\nlog:\n  backend: kafka\n  brokers: b:9092\n";
  EXPECT_EQ(Parse(kafka)->snapshots.write_side_every_events,
            MasterConfig::Snapshots::kKafkaWriteSideEveryEvents);
  EXPECT_NE(MasterConfig::Snapshots::kKafkaWriteSideEveryEvents,
            MasterConfig().snapshots.write_side_every_events);
  EXPECT_EQ(Parse(kafka + "snapshots:\n  write_side_every_events: 70000\n")
                ->snapshots.write_side_every_events,
            70'000u);
  // The projections' defaults bound a past state's fold to 50,000 events and reach back 1.6M.
  EXPECT_EQ(Parse("data_dir: /d\n")->snapshots.every_events, 50'000u);
  EXPECT_EQ(Parse("data_dir: /d\n")->snapshots.keep, 32);
  ExpectError("data_dir: /d\nsnapshots:\n  write_side_every_events: 99\n",
              StatusCode::kInvalidArgument,
              "master.yaml:3: snapshots.write_side_every_events: must be 0 (no snapshots) or "
              "between 100 and 1000000000");
  ExpectError("data_dir: /d\nsnapshots:\n  write_side_every: 1000\n", StatusCode::kInvalidArgument,
              "master.yaml:3: snapshots.write_side_every: unknown field");
  EXPECT_FALSE(Parse("data_dir: /d\n")->snapshots.write_side_forks) << "fold by default";
  EXPECT_FALSE(
      Parse("data_dir: /d\nsnapshots:\n  write_side_copy: fold\n")->snapshots.write_side_forks);
  EXPECT_TRUE(
      Parse("data_dir: /d\nsnapshots:\n  write_side_copy: fork\n")->snapshots.write_side_forks);
  ExpectError("data_dir: /d\nsnapshots:\n  write_side_copy: thread\n", StatusCode::kInvalidArgument,
              "master.yaml:3: snapshots.write_side_copy: must be fork or fold");
  EXPECT_EQ(Parse("data_dir: /d\n")->snapshots.catch_up_bulk_mib, 32u);
  EXPECT_EQ(
      Parse("data_dir: /d\nsnapshots:\n  catch_up_bulk_mib: 0\n")->snapshots.catch_up_bulk_mib, 0u);
  EXPECT_EQ(
      Parse("data_dir: /d\nsnapshots:\n  catch_up_bulk_mib: 256\n")->snapshots.catch_up_bulk_mib,
      256u);
  ExpectError("data_dir: /d\nsnapshots:\n  catch_up_bulk_mib: -1\n", StatusCode::kInvalidArgument,
              "master.yaml:3: snapshots.catch_up_bulk_mib: must be between 0 (a batch at a time) "
              "and 65536");
  auto words = Parse("data_dir: /d\nsnapshots:\n  catch_up_bulk_mib: lots\n");
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(words.status().message().find("snapshots.catch_up_bulk_mib"), std::string::npos)
      << words.status().ToString();
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

// Determined's keys for idle notebooks and TensorBoards (master/idle_watch.h): seconds, 0 never.
TEST(MasterConfigIdle, NotebookAndTensorboardTimeoutsAreSecondsWithDeterminedsDefaults) {
  auto defaults = ParseMasterConfig("data_dir: /tmp/cairn\n", "master.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->notebook_timeout_seconds, 0);
  EXPECT_EQ(defaults->tensorboard_timeout_seconds, 300);
  auto set = ParseMasterConfig("data_dir: /d\nnotebook_timeout: 3600\ntensorboard_timeout: 0\n",
                               "master.yaml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->notebook_timeout_seconds, 3600);
  EXPECT_EQ(set->tensorboard_timeout_seconds, 0);
  auto negative = ParseMasterConfig("data_dir: /d\nnotebook_timeout: -1\n", "master.yaml");
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("master.yaml:2"), std::string::npos)
      << negative.status().ToString();
  EXPECT_FALSE(ParseMasterConfig("data_dir: /d\ntensorboard_timeout: soon\n", "master.yaml").ok());
}

TEST(MasterConfigRetentionAndWebhooks, DeterminedsKeysWithTheirBoundsAndSecretsMasked) {
  auto config = Parse(
      "data_dir: /d\nretention_policy:\n  log_retention_days: 30\n  schedule: \"0 0 * * *\"\n"
      "webhooks:\n  signing_key: not-a-short-key\n  base_url: https://cairn.example\n"
      "  max_attempts: 3\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->retention.log_retention_days, 30);
  EXPECT_EQ(config->retention.schedule, "0 0 * * *");
  EXPECT_EQ(config->webhooks.max_attempts, 3);
  const std::string shown = MasterConfigJson(*config);
  EXPECT_EQ(shown.find("not-a-short-key"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\"schedule\":\"0 0 * * *\""), std::string::npos) << shown;
  ExpectError("data_dir: /d\nretention_policy:\n  log_retention_days: -2\n",
              StatusCode::kInvalidArgument,
              "master.yaml:3: retention_policy.log_retention_days: must be between -1 (keep "
              "forever) and 32767");
  auto bad_schedule = Parse("data_dir: /d\nretention_policy:\n  schedule: every day\n");
  ASSERT_FALSE(bad_schedule.ok());
  EXPECT_NE(bad_schedule.status().message().find("retention_policy.schedule"), std::string::npos);
  ExpectError("data_dir: /d\nwebhooks:\n  signing_key: short\n", StatusCode::kInvalidArgument,
              "master.yaml:3: webhooks.signing_key: must have at least 8 characters");
  ExpectError("data_dir: /d\nwebhooks:\n  max_attempts: 0\n", StatusCode::kInvalidArgument,
              "master.yaml:3: webhooks.max_attempts: must be between 1 and 100");
}

TEST(MasterConfigTaskContainerDefaults, ShownWithTheClustersAndEachPoolsOwnPasswordMasked) {
  auto config = Parse(
      "data_dir: /d\ntask_container_defaults:\n  image: team/base:1\n"
      "  registry_auth: {username: robot, password: planted-registry-pw}\n"
      "resource_pools:\n  - pool_name: default\n    task_container_defaults:\n"
      "      shm_size_bytes: 2G\n      preemption_timeout: 30\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const auto shown = nlohmann::json::parse(MasterConfigJson(*config));
  EXPECT_EQ(shown.dump().find("planted-registry-pw"), std::string::npos) << shown.dump();
  const auto& cluster = shown["task_container_defaults"];
  EXPECT_EQ(cluster["image"], "team/base:1");
  EXPECT_EQ(cluster["registry_auth"]["username"], "robot");
  EXPECT_EQ(cluster["preemption_timeout"], 3600);
  const auto& pool = shown["resource_pools"][0]["task_container_defaults"];
  EXPECT_EQ(pool["shm_size_bytes"], int64_t{2} << 30);
  EXPECT_EQ(pool["preemption_timeout"], 30);
}

}  // namespace
}  // namespace cairn
