// master.yaml's checkpoint_storage over real HTTP: an experiment that names no storage is stored
// with the master's, and no answer hands its credentials back, not the creating call's (real or
// --test), not the experiment's config, not the event stream its owner reads.
#include <gtest/gtest.h>

#include "base/sealed_secrets.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

constexpr char kSecret[] = "planted-master-secret-31";

class CheckpointStorageApiTest : public ApiTest {
 protected:
  void SetUp() override {
    configure_ = [](MasterConfig& config) {
      config.checkpoint_storage = {{"type", "s3"},
                                   {"bucket", "cluster-ckpt"},
                                   {"prefix", nullptr},
                                   {"endpoint_url", nullptr},
                                   {"access_key", "AKIA-CLUSTER"},
                                   {"secret_key", kSecret},
                                   {"save_experiment_best", 0},
                                   {"save_trial_best", 1},
                                   {"save_trial_latest", 1}};
    };
    ApiTest::SetUp();
  }
};

TEST_F(CheckpointStorageApiTest, AnInheritedStorageKeepsItsCredentialsFromEveryAnswer) {
  json preview = CreateExperimentBody(false);
  preview["validateOnly"] = true;
  const net::ClientResponse tested = Call("POST", "/api/v1/experiments", preview.dump());
  ASSERT_EQ(tested.status, 200) << tested.body;
  EXPECT_EQ(tested.body.find(kSecret), std::string::npos) << tested.body;

  const net::ClientResponse created =
      Call("POST", "/api/v1/experiments", CreateExperimentBody(false).dump());
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(created.body.find(kSecret), std::string::npos) << created.body;
  const json answer = json::parse(created.body);
  EXPECT_EQ(answer["config"]["checkpoint_storage"]["bucket"], "cluster-ckpt") << "inherited";
  EXPECT_EQ(answer["config"]["checkpoint_storage"]["secret_key"], "********");

  const std::string id = std::to_string(answer["experiment"]["id"].get<int64_t>());
  const net::ClientResponse shown = Call("GET", "/api/v1/experiments/" + id);
  EXPECT_EQ(shown.body.find(kSecret), std::string::npos) << shown.body;
  std::string stream;
  for (const auto& event : EventsAs(token_)) stream += event.dump();
  EXPECT_NE(stream.find("cluster-ckpt"), std::string::npos);
  EXPECT_EQ(stream.find(kSecret), std::string::npos);
  // The log keeps it sealed: the machines' own stream carries the sealed value, which opens under
  // the cluster secret (the agent token) and under nothing else.
  std::string sealed;
  for (const auto& event : EventsOfType("experimentCreated")) {
    const json config = json::parse(event["experimentCreated"]["configJson"].get<std::string>());
    sealed = config["checkpoint_storage"]["secret_key"];
  }
  ASSERT_TRUE(IsSealed(sealed)) << sealed;
  auto opened = SecretSealer(agent_token_).UnsealText(sealed);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, kSecret);
  EXPECT_FALSE(SecretSealer("not-this-cluster-token-000").UnsealText(sealed).ok());
  std::string machines;
  for (const auto& event : Events()) machines += event.dump();
  EXPECT_EQ(machines.find(kSecret), std::string::npos);

  // A sealed value copied out of the log is never accepted back: the master would open it for
  // the caller's own work.
  json copied = CreateExperimentBody(false);
  copied["config"] =
      "entrypoint: python3 train.py\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
      "checkpoint_storage: {type: s3, bucket: mine, access_key: AKIA-ME,"
      " secret_key: '" +
      sealed + "'}\n";
  const net::ClientResponse refused = Call("POST", "/api/v1/experiments", copied.dump());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("sealed"), std::string::npos) << refused.body;
  const net::ClientResponse webhook =
      Call("POST", "/api/v1/webhooks",
           json{{"url", "https://example.com/" + sealed},
                {"webhookType", "WEBHOOK_TYPE_DEFAULT"},
                {"triggers", json::array({{{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                                           {"condition", {{"state", "COMPLETED"}}}}})}}
               .dump());
  EXPECT_EQ(webhook.status, 400) << webhook.body;
  EXPECT_NE(webhook.body.find("sealed value"), std::string::npos) << webhook.body;
}

}  // namespace
}  // namespace cairn::api_testing
