// A cluster over HTTPS with real processes: the master serves TLS with a certificate made for
// the test, the agent verifies it with the CA (--security-tls-master-cert) and hands the CA to
// its tasks, and a trial's harness reports over HTTPS, verified the same way.
#include <gtest/gtest.h>

#include "master/data_dir.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing {
namespace {

using experiment_e2e::Int;
using experiment_e2e::ReachedState;
using experiment_e2e::ReadFile;
using experiment_e2e::ReplaceOnce;

TEST(TlsEndToEnd, AnAgentThatVerifiesTheMasterRunsACommandAndATrialOverHttps) {
  Cluster cluster;
  cluster.ServeHttps();
  cluster.StartMaster();
  ASSERT_EQ(cluster.url().rfind("https://127.0.0.1:", 0), 0u) << cluster.url();
  cluster.StartAgent("agent-1", 1);

  // A command: the task learns the https master and the CA file to verify it with.
  std::string echo = cluster.Submit({{"entrypoint", "echo $CAIRN_MASTER $DET_MASTER_CERT_FILE"}});
  EXPECT_EQ(cluster.FollowLogs(echo), cluster.url() + " " + cluster.certificates().ca_file + "\n");
  EXPECT_EQ(cluster.Get("/api/v1/commands/" + echo)["command"]["cairn"]["exitCode"], 0);

  // A trial: the harness gets its workloads and reports them over HTTPS.
  std::string config = ReadFile(ExamplePath("spiral-mlp") + "/const.yaml");
  ReplaceOnce(config, "    batches: 500", "    batches: 200");
  ReplaceOnce(config, "host_path: /tmp", "host_path: " + cluster.dir().Sub("checkpoints"));
  Reply created = cluster.CreateExperiment(config, ExamplePath("spiral-mlp"));
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const int64_t id = Int(created.body["experiment"]["id"]);
  cluster.FollowEventsUntil([&](const std::vector<json>& events) {
    return ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED");
  });

  // Plain HTTP to the HTTPS port gets nowhere, and the master keeps serving.
  auto plain = net::Client("127.0.0.1", cluster.Client().port()).Request("GET", "/info");
  EXPECT_FALSE(plain.ok() && plain->status == 200);
  EXPECT_EQ(cluster.Get("/api/v1/agents")["agents"].size(), 1u);
}

TEST(TlsEndToEnd, AnAgentWithoutTheCaRefusesTheMaster) {
  Cluster cluster;
  cluster.ServeHttps();
  cluster.StartMaster();
  // The system's CAs do not know the test CA: the agent stops at once, saying why.
  FinishedProcess agent =
      RunToEnd({BinaryPath("cairn-agent"), "--master", cluster.url(), "--id", "doubter", "--slots",
                "1", "--work-root", cluster.dir().Sub("doubter"), "--agent-token-file",
                AgentTokenPath(cluster.data_dir())},
               std::chrono::seconds(30));
  EXPECT_EQ(agent.exit_code, 1) << agent.Text();
  EXPECT_NE(agent.Text().find("failed verification"), std::string::npos) << agent.Text();
}

}  // namespace
}  // namespace cairn::testing
