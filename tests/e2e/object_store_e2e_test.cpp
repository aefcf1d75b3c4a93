// Checkpoints in object stores end to end (issue 46): trials write them to s3rver (S3) and to
// azurite (Azure Blob), both real protocol servers on loopback; the master downloads and collects
// them through the same protocols; no credential reaches the event stream, a log line or `ps`.
// Cairn's own harness runs the spiral-mlp grid; Determined's package (0.38.1, unmodified) runs
// its Core API tutorial, writing through boto3 and Azure's SDK.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "net/azure_blob_client.h"
#include "net/s3_client.h"
#include "tests/e2e/determined_cli.h"
#include "tests/e2e/experiment_fixture.h"
#include "tests/support/object_store_servers.h"

namespace cairn::testing {
namespace {

using experiment_e2e::Find;
using experiment_e2e::Int;
using experiment_e2e::OfTrial;
using experiment_e2e::ReachedState;
namespace fs = std::filesystem;

// Distinctive, so that any copy of them in a log, an event or an argv is found.
constexpr char kSecretKey[] = "cairn-test-secret-3f9d2a71";
constexpr char kBucket[] = "ckpt";

// Every key in `store` under `prefix`.
std::set<std::string> Keys(net::ObjectStore& store, const std::string& prefix = "") {
  auto listed = store.List(prefix);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  std::set<std::string> keys;
  if (listed.ok()) {
    for (const auto& object : *listed) keys.insert(object.key);
  }
  return keys;
}

// The checkpoints (uuids) that hold at least one key.
std::set<std::string> CheckpointsIn(const std::set<std::string>& keys, const std::string& prefix) {
  std::set<std::string> uuids;
  for (const auto& key : keys) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    uuids.insert(rest.substr(0, rest.find('/')));
  }
  return uuids;
}

// Waits until the master has said it collected each of `uuids` (the stores tell no one, so
// the collector logs each checkpoint it carries out; the master must run with its log captured),
// allowing 90 s each on a loaded machine.
void UntilCollected(ChildProcess& master, const std::set<std::string>& uuids) {
  for (const auto& uuid : uuids) {
    auto said = master.WaitForLine(
        [&](const std::string& line) {
          return line.find("collected checkpoint " + uuid) != std::string::npos;
        },
        std::chrono::seconds(90));
    EXPECT_TRUE(said.ok()) << "checkpoint " << uuid << ": " << said.status().ToString();
  }
}

// No file of the master's (its event log, projections, snapshots) holds `secret`: the log keeps
// credentials sealed and everything else is built from the log. The embedded log's records are
// not compressed, so a plain copy would be found.
void ExpectNoFileHolds(const std::string& data_dir, const std::string& secret) {
  auto holding = FilesHolding(data_dir, secret);
  ASSERT_TRUE(holding.has_value()) << "nothing under " << data_dir;
  EXPECT_TRUE(holding->empty()) << "hold the credential: " << ::testing::PrintToString(*holding);
}

// What `ps` shows of every process's command line.
std::string ProcessTable() {
  FinishedProcess ps = RunToEnd({"ps", "-eww", "-o", "args"}, std::chrono::seconds(10));
  return ps.Text();
}

class ObjectStoreSpiralTest : public experiment_e2e::ExperimentEndToEnd {};

// The spiral-mlp grid through cairn_harness with S3 storage: every checkpoint is uploaded under
// the prefix; garbage collection removes exactly the collected checkpoints' objects.
TEST_F(ObjectStoreSpiralTest, SpiralGridWritesToS3AndCollectionDeletesExactlyTheCollectedObjects) {
  TempDir storage_dir;
  auto server = S3Server::Start(storage_dir.Sub("s3"), kBucket);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  StartCluster(4, "", /*master_log=*/true);
  std::string config = experiment_e2e::ReadFile(ExamplePath("spiral-mlp") + "/grid.yaml");
  experiment_e2e::ReplaceOnce(config,
                              "  type: shared_fs\n  host_path: /tmp\n  storage_path: "
                              "cairn-checkpoints\n",
                              "  type: s3\n  bucket: ckpt\n  prefix: /runs/spiral/\n"
                              "  endpoint_url: " +
                                  (*server)->endpoint() + "\n  access_key: S3RVER\n" +
                                  "  secret_key: " + kSecretKey + "\n");
  config += "min_checkpoint_period:\n  batches: 100\n";
  const int64_t id = Create(config, ExamplePath("spiral-mlp"));
  ASSERT_GT(id, 0);
  WaitForState(id, "EXPERIMENT_STATE_COMPLETED");

  std::set<std::string> kept, collected;
  for (const auto& trial : Trials(id)) {
    for (const auto& checkpoint : Checkpoints(trial["id"])) {
      (checkpoint["state"] == "STATE_COMPLETED" ? kept : collected)
          .insert(checkpoint["uuid"].get<std::string>());
    }
  }
  ASSERT_EQ(kept.size(), 6u);
  ASSERT_EQ(collected.size(), 12u);
  auto store = net::OpenS3({(*server)->endpoint(), "us-east-1", kBucket},
                           {S3Server::kAccessKey, kSecretKey, ""});
  ASSERT_TRUE(store.ok());
  // The prefix is normalized as Determined's package does: "runs/spiral/<uuid>/<file>".
  UntilCollected(cluster_->master(), collected);
  EXPECT_EQ(CheckpointsIn(Keys(**store), "runs/spiral/"), kept)
      << "left in the bucket: " << ::testing::PrintToString(Keys(**store));
  for (const auto& uuid : kept) {
    EXPECT_EQ(
        Keys(**store, "runs/spiral/" + uuid + "/").count("runs/spiral/" + uuid + "/state.json"), 1u)
        << uuid;
  }

  // The stream, as the experiment's owner reads it, never holds the secret.
  std::string stream;
  for (const auto& event : cluster_->AllEvents()) stream += event.dump();
  EXPECT_NE(stream.find("runs/spiral"), std::string::npos) << "the config is in the stream";
  EXPECT_EQ(stream.find(kSecretKey), std::string::npos);
  const std::string shown =
      cluster_
          ->Get("/api/v1/experiments/" +
                std::to_string(id))["experiment"]["config"]["checkpoint_storage"]
          .dump();
  EXPECT_EQ(shown.find(kSecretKey), std::string::npos) << shown;
  EXPECT_NE(shown.find("********"), std::string::npos) << shown;
  ExpectNoFileHolds(cluster_->data_dir(), kSecretKey);
}

// Population-based training on azurite through cairn_harness: every clone starts from its
// parent's checkpoint, downloaded from the container (a clone that could not load it would fail,
// and the experiment with it), and at the end exactly the kept checkpoints' blobs are left.
TEST_F(ObjectStoreSpiralTest, PbtOnAzuriteClonesFromCheckpointsDownloadedFromTheContainer) {
  TempDir storage_dir;
  auto server = AzureBlobServer::Start(storage_dir.Sub("azurite"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  // Trials run Debian's python3, where Azure's SDK is (python3-azure-storage).
  StartMaster("", /*master_log=*/true);
  cluster_->StartAgent("agent-1", 4, {}, {"PATH=/usr/bin:/bin:/usr/sbin:/sbin"});
  std::string config = experiment_e2e::ReadFile(ExamplePath("spiral-mlp") + "/pbt.yaml");
  experiment_e2e::ReplaceOnce(config,
                              "  type: shared_fs\n  host_path: /tmp\n  storage_path: "
                              "cairn-checkpoints\n",
                              "  type: azure\n  container: pbt-ckpt\n  connection_string: \"" +
                                  (*server)->connection_string() + "\"\n");
  const int64_t id = Create(config, ExamplePath("spiral-mlp"));
  ASSERT_GT(id, 0);
  auto events = WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED"));

  std::set<std::string> kept, collected;
  int clones = 0;
  for (const auto& trial : Trials(id)) {
    EXPECT_EQ(trial["state"], "STATE_COMPLETED") << trial.dump();
    if (Int(trial["cairn"]["clonedFromTrialId"]) != 0) {
      ++clones;
      EXPECT_FALSE(trial["warmStartCheckpointUuid"].get<std::string>().empty()) << trial.dump();
    }
    for (const auto& checkpoint : Checkpoints(trial["id"])) {
      (checkpoint["state"] == "STATE_COMPLETED" ? kept : collected)
          .insert(checkpoint["uuid"].get<std::string>());
    }
  }
  EXPECT_EQ(clones, 4);
  auto account = net::ParseAzureConnectionString((*server)->connection_string());
  ASSERT_TRUE(account.ok());
  auto store = net::OpenAzureBlob(*account, "pbt-ckpt");
  ASSERT_TRUE(store.ok());
  UntilCollected(cluster_->master(), collected);
  EXPECT_EQ(CheckpointsIn(Keys(**store), ""), kept)
      << "left in the container: " << ::testing::PrintToString(Keys(**store));
}

// master.yaml's checkpoint_storage is the storage of experiments that name none; a workspace's
// (det workspace create --checkpoint-storage-config) overrides it for the workspace's
// experiments; det experiment config shows the merged result, credentials masked.
TEST_F(ObjectStoreSpiralTest, MasterAndWorkspaceStorageAreInheritedInDeterminedsOrder) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  TempDir storage_dir;
  auto server = S3Server::Start(storage_dir.Sub("s3"), kBucket);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  StartCluster(2,
               "checkpoint_storage:\n  type: s3\n  bucket: ckpt\n  prefix: cluster\n"
               "  endpoint_url: " +
                   (*server)->endpoint() + "\n  access_key: S3RVER\n  secret_key: " + kSecretKey +
                   "\n");
  DeterminedCli det(*cluster_);  // any user may make a workspace, and administers it
  const json team_storage = {{"type", "s3"},           {"bucket", kBucket},
                             {"prefix", "team"},       {"endpoint_url", (*server)->endpoint()},
                             {"access_key", "S3RVER"}, {"secret_key", kSecretKey}};
  det.Det("workspace create team --checkpoint-storage-config '" + team_storage.dump() + "'");
  det.Det("project create team vision");

  std::string config = experiment_e2e::ReadFile(ExamplePath("spiral-mlp") + "/const.yaml");
  experiment_e2e::ReplaceOnce(config,
                              "checkpoint_storage:\n  type: shared_fs\n  host_path: /tmp\n"
                              "  storage_path: cairn-checkpoints\n",
                              "");
  const int64_t in_cluster = Create(config, ExamplePath("spiral-mlp"));
  const int64_t in_team =
      Create(config + "workspace: team\nproject: vision\n", ExamplePath("spiral-mlp"));
  ASSERT_GT(in_cluster, 0);
  ASSERT_GT(in_team, 0);
  WaitForState(in_cluster, "EXPERIMENT_STATE_COMPLETED");
  WaitForState(in_team, "EXPERIMENT_STATE_COMPLETED");

  auto latest = [&](int64_t experiment_id) {
    json trials = Trials(experiment_id);
    json checkpoints = Checkpoints(trials[0]["id"]);
    return checkpoints.back()["uuid"].get<std::string>();
  };
  auto store = net::OpenS3({(*server)->endpoint(), "us-east-1", kBucket},
                           {S3Server::kAccessKey, kSecretKey, ""});
  ASSERT_TRUE(store.ok());
  const std::string cluster_checkpoint = latest(in_cluster);
  const std::string team_checkpoint = latest(in_team);
  EXPECT_EQ(Keys(**store, "cluster/" + cluster_checkpoint + "/").size(), 1u)
      << ::testing::PrintToString(Keys(**store));
  EXPECT_EQ(Keys(**store, "team/" + team_checkpoint + "/").size(), 1u)
      << ::testing::PrintToString(Keys(**store));

  // det experiment config: the merged storage, masked.
  const std::string shown = det.Det("experiment config " + std::to_string(in_team), 0, true);
  EXPECT_NE(shown.find("prefix: team"), std::string::npos) << shown;
  EXPECT_NE(shown.find("type: s3"), std::string::npos) << shown;
  EXPECT_EQ(shown.find(kSecretKey), std::string::npos) << shown;
  const std::string cluster_shown =
      det.Det("experiment config " + std::to_string(in_cluster), 0, true);
  EXPECT_NE(cluster_shown.find("prefix: cluster"), std::string::npos) << cluster_shown;
  const std::string workspace = det.Det("workspace describe team --json", 0, true);
  EXPECT_NE(workspace.find("\"prefix\": \"team\""), std::string::npos) << workspace;
  EXPECT_EQ(workspace.find(kSecretKey), std::string::npos) << workspace;
  // The workspace's storage and the master's, merged into the experiments' configs: sealed.
  ExpectNoFileHolds(cluster_->data_dir(), kSecretKey);
}

class ObjectStoreDeterminedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string missing = MissingDependency();
    if (!missing.empty()) GTEST_SKIP() << missing;
    cluster_.StartMaster({}, /*with_stderr=*/true);
    cluster_.StartAgent("det-a", 2, {"--determined-package-dir", DeterminedDir() + "/harness"},
                        {"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                         "PYTHONPATH=" + SourcePath("tests/tools/trial_site")});
  }

  // Core API stage 2 (ten checkpoints of a file "state") with `storage` as its storage.
  int64_t CreateStageTwo(const std::string& storage) {
    std::string yaml = experiment_e2e::ReadFile(Tutorials() + "/2_checkpoints.yaml");
    yaml += "checkpoint_storage:\n" + storage;
    auto reply = cluster_.CreateExperiment(yaml, Tutorials());
    EXPECT_EQ(reply.status, 200) << reply.body.dump();
    return reply.body.is_object() ? Int(reply.body["experiment"]["id"]) : 0;
  }

  // Follows the log until the experiment ends; checks `ps` once its first checkpoint is saved,
  // while the trial still runs with the storage's credentials in its environment.
  std::vector<json> RunCheckingProcesses(int64_t id, const std::string& secret) {
    bool checked = false;
    auto events = cluster_.FollowEventsUntil(
        [&](const std::vector<json>& seen) {
          if (!checked && !Find(seen, "checkpointSaved").empty()) {
            checked = true;
            EXPECT_EQ(ProcessTable().find(secret), std::string::npos)
                << "a command line holds the storage's credential";
          }
          return ReachedState(seen, id, "EXPERIMENT_STATE_COMPLETED") ||
                 ReachedState(seen, id, "EXPERIMENT_STATE_ERROR");
        },
        std::chrono::seconds(180));
    EXPECT_TRUE(checked) << "no checkpoint was saved";
    return events;
  }

  std::string TrialLogs(int64_t trial_id) {
    std::string text;
    auto client = cluster_.Client();
    auto status = client.StreamLines("GET", "/api/v1/trials/" + std::to_string(trial_id) + "/logs",
                                     [&](std::string_view line) {
                                       text += std::string(line) + "\n";
                                       return true;
                                     });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return text;
  }

  // Nothing the cluster printed or recorded holds `secret`.
  void ExpectSecretNowhere(const std::string& secret, int64_t trial_id) {
    std::string stream;
    for (const auto& event : cluster_.AllEvents()) stream += event.dump();
    EXPECT_EQ(stream.find(secret), std::string::npos) << "the event stream holds it";
    const std::string logs = TrialLogs(trial_id);
    EXPECT_NE(logs.find("New trial runner"), std::string::npos) << logs;
    EXPECT_EQ(logs.find(secret), std::string::npos) << "the trial's log holds it:\n" << logs;
    std::string master;
    for (const auto& line : cluster_.master().Lines()) master += line + "\n";
    EXPECT_EQ(master.find(secret), std::string::npos) << "the master's log holds it";
    std::string agent;
    for (const auto& line : cluster_.agent(0).Lines()) agent += line + "\n";
    EXPECT_EQ(agent.find(secret), std::string::npos) << "the agent's log holds it";
    ExpectNoFileHolds(cluster_.data_dir(), secret);
  }

  std::string Det(const std::string& arguments, int expected_status = 0) {
    return DeterminedCli(cluster_).Det(arguments, expected_status, /*stdout_only=*/true);
  }

  Cluster cluster_;
};

TEST_F(ObjectStoreDeterminedTest, CoreApiCheckpointsGoToS3DownloadThroughTheMasterAndCollect) {
  auto server = S3Server::Start(cluster_.dir().Sub("s3"), kBucket);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  // Every checkpoint kept until the policy changes below.
  const int64_t id =
      CreateStageTwo("  type: s3\n  bucket: ckpt\n  endpoint_url: " + (*server)->endpoint() +
                     "\n  access_key: S3RVER\n" + "  secret_key: " + kSecretKey +
                     "\n  save_trial_latest: 10\n  save_trial_best: 0\n");
  ASSERT_GT(id, 0);
  auto events = RunCheckingProcesses(id, kSecretKey);
  const int64_t trial = experiment_e2e::FirstTrial(events, id);
  ASSERT_TRUE(ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  ASSERT_EQ(saved.size(), 10u);
  std::vector<std::string> uuids;
  for (const auto& checkpoint : saved) uuids.push_back(checkpoint.payload["uuid"]);

  // Before: Determined's package uploaded all ten, "<uuid>/state" each.
  auto store = net::OpenS3({(*server)->endpoint(), "us-east-1", kBucket},
                           {S3Server::kAccessKey, kSecretKey, ""});
  ASSERT_TRUE(store.ok());
  std::set<std::string> before = Keys(**store);
  for (const auto& uuid : uuids) EXPECT_EQ(before.count(uuid + "/state"), 1u) << uuid;
  EXPECT_EQ(CheckpointsIn(before, "").size(), 10u) << ::testing::PrintToString(before);

  // det checkpoint download: the answer leaves the credentials out, the CLI has none of its own,
  // so it downloads through the master, which reads s3rver.
  const std::string download = cluster_.dir().Sub("downloaded");
  Det("checkpoint download " + uuids.back() + " -o " + download);
  EXPECT_EQ(experiment_e2e::ReadFile(download + "/state"), "100,100," + std::to_string(trial));

  // A stricter policy: the newest two stay, exactly the other eight checkpoints' objects go.
  Det("experiment set gc-policy " + std::to_string(id) +
      " --save-experiment-best 0 --save-trial-best 0 --save-trial-latest 2 --yes");
  const std::set<std::string> newest = {uuids[8], uuids[9]};
  UntilCollected(cluster_.master(), std::set<std::string>(uuids.begin(), uuids.begin() + 8));
  EXPECT_EQ(CheckpointsIn(Keys(**store), ""), newest)
      << "left in the bucket: " << ::testing::PrintToString(Keys(**store));
  std::set<std::string> after = Keys(**store);
  for (const auto& key : before) {
    const bool kept = newest.count(key.substr(0, key.find('/'))) > 0;
    EXPECT_EQ(after.count(key), kept ? 1u : 0u) << key;
  }
  ExpectSecretNowhere(kSecretKey, trial);
}

TEST_F(ObjectStoreDeterminedTest, CoreApiCheckpointsGoToAzuriteAndTheMasterReadsAndDeletesThem) {
  auto server = AzureBlobServer::Start(cluster_.dir().Sub("azurite"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string connection = (*server)->connection_string();
  const int64_t id = CreateStageTwo("  type: azure\n  container: ckpt\n  connection_string: \"" +
                                    connection + "\"\n");
  ASSERT_GT(id, 0);
  // The account key is what makes the connection string a secret.
  const std::string account_key =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
  auto events = RunCheckingProcesses(id, account_key);
  const int64_t trial = experiment_e2e::FirstTrial(events, id);
  ASSERT_TRUE(ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  ASSERT_EQ(saved.size(), 10u);
  const std::string latest = saved.back().payload["uuid"];
  std::set<std::string> collected;
  for (size_t i = 0; i + 1 < saved.size(); ++i) collected.insert(saved[i].payload["uuid"]);

  auto account = net::ParseAzureConnectionString(connection);
  ASSERT_TRUE(account.ok());
  auto store = net::OpenAzureBlob(*account, kBucket);
  ASSERT_TRUE(store.ok());
  // save_trial_latest 1, save_trial_best 1: the trial's end left only the newest (the tutorial
  // reports no validation).
  UntilCollected(cluster_.master(), collected);
  EXPECT_EQ(CheckpointsIn(Keys(**store), ""), std::set<std::string>{latest})
      << ::testing::PrintToString(Keys(**store));

  // Determined's CLI never downloads Azure through the master by itself; --mode master does.
  const std::string download = cluster_.dir().Sub("downloaded");
  Det("checkpoint download " + latest + " --mode master -o " + download);
  EXPECT_EQ(experiment_e2e::ReadFile(download + "/state"), "100,100," + std::to_string(trial));

  ExpectSecretNowhere(account_key, trial);

  // Deleting the experiment deletes its checkpoints' blobs.
  Det("experiment delete " + std::to_string(id) + " --yes");
  UntilCollected(cluster_.master(), {latest});
  EXPECT_TRUE(Keys(**store).empty()) << ::testing::PrintToString(Keys(**store));
}

}  // namespace
}  // namespace cairn::testing
