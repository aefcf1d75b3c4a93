// Webhook deliveries across a master killed with SIGKILL while one is in flight: every experiment
// transition reaches the endpoint, none recorded as delivered is sent again, the one in flight is
// sent again with the same event_id, signatures check out with the key kept across the restart,
// and neither the key nor the URL's path reaches the master's log lines or its command line.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <set>

#include "base/encoding.h"
#include "base/password.h"
#include "base/task_secrets.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/support/webhook_receiver.h"

namespace cairn::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kConfig =
    "name: hooked\nentrypoint: model_def:T\nhyperparameters:\n  lr: 0.1\n"
    "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 100}\n";

size_t RecordedDeliveries(const std::vector<json>& events) {
  size_t count = 0;
  for (const auto& event : events) {
    if (event.contains("webhookDeliveriesRecorded")) {
      count += event["webhookDeliveriesRecorded"]["deliveries"].size();
    }
  }
  return count;
}

TEST(WebhookE2eTest, AKillNineMidDeliveryLosesNothingAndRepeatsOnlyWhatWasNotAcknowledged) {
  Cluster cluster("webhooks:\n  first_retry_seconds: 0.05\n  max_retry_seconds: 0.2\n");
  WebhookReceiver receiver;
  const std::string secret_path = "/services/T0/B0/xoxb-s3cret-path";
  receiver.HoldFrom(1);  // the second delivery stays unanswered until released
  cluster.StartMaster({}, /*with_stderr=*/true);

  // A webhook of the Uncategorized workspace (its Editors may add one) on two states.
  Reply webhook = cluster.Call("POST", "/api/v1/webhooks",
                               {{"name", "lifecycle"},
                                {"url", receiver.Url(secret_path)},
                                {"webhookType", "WEBHOOK_TYPE_DEFAULT"},
                                {"mode", "WEBHOOK_MODE_WORKSPACE"},
                                {"workspaceId", 1},
                                {"triggers",
                                 {{{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                                   {"condition", {{"state", "PAUSED"}}}},
                                  {{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                                   {"condition", {{"state", "ACTIVE"}}}}}}});
  ASSERT_EQ(webhook.status, 200) << webhook.body.dump();

  TempDir context;
  { std::ofstream(context.path() + "/model_def.py") << "class T:\n  pass\n"; }
  Reply created = cluster.CreateExperiment(kConfig, context.path(), /*activate=*/true);
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string experiment = std::to_string(created.body["experiment"]["id"].get<int64_t>());

  // 1: PAUSED, delivered and recorded.
  ASSERT_EQ(cluster.Call("POST", "/api/v1/experiments/" + experiment + "/pause").status, 200);
  cluster.FollowEventsUntil([](const auto& events) { return RecordedDeliveries(events) == 1; });
  // 2: ACTIVE, in flight when the master dies.
  ASSERT_EQ(cluster.Call("POST", "/api/v1/experiments/" + experiment + "/activate").status, 200);
  ASSERT_TRUE(receiver.WaitFor(2));
  const std::string signing_key = [&] {
    auto key = ReadTokenFile(cluster.data_dir() + "/webhook-signing-key");
    EXPECT_TRUE(key.ok()) << key.status().ToString();
    return key.ok() ? *key : std::string();
  }();
  const std::string command_line = [&] {
    std::ifstream in("/proc/" + std::to_string(cluster.master_pid()) + "/cmdline");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  cluster.StopMaster(SIGKILL);
  receiver.Release();

  // The restarted master owes the unacknowledged delivery still; 3: PAUSED after it.
  cluster.StartMaster({}, /*with_stderr=*/true);
  cluster.FollowEventsUntil([](const auto& events) { return RecordedDeliveries(events) == 2; });
  ASSERT_EQ(cluster.Call("POST", "/api/v1/experiments/" + experiment + "/pause").status, 200);
  cluster.FollowEventsUntil([](const auto& events) { return RecordedDeliveries(events) == 3; });

  const auto received = receiver.received();
  ASSERT_EQ(received.size(), 4u);
  std::vector<std::string> ids;
  std::vector<std::string> states;
  for (const auto& request : received) {
    EXPECT_EQ(request.target, secret_path);
    json body = json::parse(request.body);
    ids.push_back(body["event_id"]);
    states.push_back(body["event_data"]["experiment"]["state"]);
    const std::string timestamp = request.headers.at("x-determined-ai-signature-timestamp");
    // Determined's signature: hex HMAC-SHA256 of "<timestamp>,<body>".
    const std::string mac = HmacSha256(signing_key, timestamp + "," + request.body);
    EXPECT_EQ(request.headers.at("x-determined-ai-signature"),
              HexLower(reinterpret_cast<const unsigned char*>(mac.data()), mac.size()))
        << "the key is kept across the restart";
  }
  EXPECT_EQ(states, (std::vector<std::string>{"PAUSED", "ACTIVE", "ACTIVE", "PAUSED"}))
      << "each transition once, the one in flight twice";
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_EQ(ids[1], ids[2]) << "the delivery in flight is sent again under its event_id";
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 3u)
      << "every transition once; none recorded as delivered was sent again";

  // Secrets: neither the signing key nor the URL's path in a log line or the command line, nor
  // the path in the event stream.
  EXPECT_EQ(command_line.find(signing_key), std::string::npos);
  for (const auto& line : cluster.master().Lines()) {
    EXPECT_EQ(line.find(signing_key), std::string::npos) << line;
    EXPECT_EQ(line.find("s3cret-path"), std::string::npos) << line;
  }
  for (const auto& event : cluster.AllEvents()) {
    EXPECT_EQ(event.dump().find("s3cret-path"), std::string::npos) << event.dump();
    EXPECT_EQ(event.dump().find(signing_key), std::string::npos) << event.dump();
  }
  // Nor on the master's disk: the log keeps the path sealed (the deliveries above went to it,
  // opened by the shipper).
  auto holding = FilesHolding(cluster.data_dir(), "s3cret-path");
  ASSERT_TRUE(holding.has_value());
  EXPECT_TRUE(holding->empty()) << ::testing::PrintToString(*holding);
}

}  // namespace
}  // namespace cairn::testing
