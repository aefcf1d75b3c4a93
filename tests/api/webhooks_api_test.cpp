// Determined's webhook routes over real HTTP, and deliveries to a real endpoint on loopback: the
// shapes Determined's bindings read, who may see and change which webhook, what bad input gets,
// signed deliveries with retries, 4xx giving up, and URLs kept out of the event stream.
#include <gtest/gtest.h>

#include "base/encoding.h"
#include "base/files.h"
#include "commands/webhooks/webhook_payload.h"
#include "master/data_dir.h"
#include "tests/api/api_fixture.h"
#include "tests/support/webhook_receiver.h"

namespace cairn::api_testing {
namespace {

using testing::WebhookReceiver;

json WebhookBody(const std::string& name, const std::string& url, const json& triggers,
                 const std::string& mode = "WEBHOOK_MODE_WORKSPACE", int workspace_id = 0) {
  return {{"name", name},         {"url", url},   {"webhookType", "WEBHOOK_TYPE_DEFAULT"},
          {"triggers", triggers}, {"mode", mode}, {"workspaceId", workspace_id}};
}

json OnState(const std::string& state) {
  return json::array({{{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                       {"condition", {{"state", state}}}}});
}

class WebhooksApiTest : public ApiTest {
 protected:
  void SetUp() override {
    configure_ = [](MasterConfig& config) {
      config.webhooks.first_retry_seconds = 0.05;
      config.webhooks.max_retry_seconds = 0.05;
      config.webhooks.max_attempts = 3;
    };
    ApiTest::SetUp();
  }

  int64_t CreateExperiment() {
    json created = CallJson("POST", "/api/v1/experiments", CreateExperimentBody(true).dump());
    return created["experiment"]["id"].get<int64_t>();
  }

  // Follows the event stream until a WebhookDeliveriesRecorded has recorded `count` deliveries
  // in all; returns them.
  std::vector<json> AwaitRecordedDeliveries(size_t count) {
    std::vector<json> deliveries;
    net::Client streamer("127.0.0.1", master_->port());
    auto status = streamer.StreamLines(
        "GET", "/api/v1/events?from=0&follow=true",
        [&](std::string_view line) {
          if (line.empty()) return true;
          json event = json::parse(line);
          if (event.contains("webhookDeliveriesRecorded")) {
            for (const auto& delivery : event["webhookDeliveriesRecorded"]["deliveries"]) {
              deliveries.push_back(delivery);
            }
            const json& offset = event["offset"];
            recorded_offset_ = offset.is_string() ? offset.get<std::string>() : offset.dump();
          }
          return deliveries.size() < count;
        },
        {{"Authorization", "Bearer " + agent_token_}}, std::chrono::seconds(30));
    EXPECT_TRUE(status.ok() || deliveries.size() >= count) << status.ToString();
    return deliveries;
  }

  WebhookReceiver receiver_;
  std::string
      recorded_offset_;  // of the last WebhookDeliveriesRecorded AwaitRecordedDeliveries read
};

TEST_F(WebhooksApiTest, WebhooksHaveDeterminedsShapeAndBadInputIsRefusedByName) {
  LoginAs("admin");
  json created =
      CallJson("POST", "/api/v1/webhooks",
               WebhookBody("ops", receiver_.Url("/x?token=s3cret"), OnState("COMPLETED")).dump());
  const json& webhook = created["webhook"];
  EXPECT_EQ(webhook["id"], 1);
  EXPECT_EQ(webhook["name"], "ops");
  EXPECT_EQ(webhook["url"], receiver_.Url("/x?token=s3cret"));
  EXPECT_EQ(webhook["webhookType"], "WEBHOOK_TYPE_DEFAULT");
  EXPECT_EQ(webhook["mode"], "WEBHOOK_MODE_WORKSPACE");
  EXPECT_EQ(webhook["workspaceId"], 0);
  ASSERT_EQ(webhook["triggers"].size(), 1u);
  EXPECT_EQ(webhook["triggers"][0]["triggerType"], "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(webhook["triggers"][0]["condition"]["state"], "COMPLETED");
  EXPECT_EQ(webhook["triggers"][0]["webhookId"], 1);
  EXPECT_EQ(webhook["cairn"]["createdBy"], "user:admin");

  const auto status_of = [&](const std::string& method, const std::string& target,
                             const json& body) { return Call(method, target, body.dump()).status; };
  EXPECT_EQ(status_of("POST", "/api/v1/webhooks", WebhookBody("a", receiver_.Url(), json::array())),
            400);
  EXPECT_EQ(
      status_of("POST", "/api/v1/webhooks", WebhookBody("a", "not a url", OnState("COMPLETED"))),
      400);
  json task_log = WebhookBody("a", receiver_.Url(), json::array());
  task_log["triggers"] =
      json::array({{{"triggerType", "TRIGGER_TYPE_TASK_LOG"}, {"condition", {{"regex", "OOM"}}}}});
  auto refused = Call("POST", "/api/v1/webhooks", task_log.dump());
  EXPECT_EQ(refused.status, 501) << refused.body;
  EXPECT_NE(refused.body.find("TRIGGER_TYPE_TASK_LOG"), std::string::npos) << refused.body;
  json unknown_key = WebhookBody("a", receiver_.Url(), OnState("COMPLETED"));
  unknown_key["colour"] = "red";
  EXPECT_EQ(status_of("POST", "/api/v1/webhooks", unknown_key), 400);
  EXPECT_EQ(status_of("PATCH", "/api/v1/webhooks/99", json{{"url", receiver_.Url()}}), 404);
  EXPECT_EQ(status_of("PATCH", "/api/v1/webhooks/1", json{{"url", "gopher://x"}}), 400);

  CallJson("PATCH", "/api/v1/webhooks/1", json{{"url", receiver_.Url("/moved")}}.dump());
  json listed = CallJson("GET", "/api/v1/webhooks");
  ASSERT_EQ(listed["webhooks"].size(), 1u);
  EXPECT_EQ(listed["webhooks"][0]["url"], receiver_.Url("/moved"));
  CallJson("DELETE", "/api/v1/webhooks/1");
  EXPECT_TRUE(CallJson("GET", "/api/v1/webhooks")["webhooks"].empty());
}

TEST_F(WebhooksApiTest, OnlyEditorsSeeTheWholeUrlAndTheStreamNeverShowsItsPath) {
  LoginAs("admin");
  CallJson(
      "POST", "/api/v1/webhooks",
      WebhookBody("global", receiver_.Url("/services/T0/s3cret-path"), OnState("ERROR")).dump());
  LoginAs("determined");  // no admin: sees the global webhook, not its path
  json listed = CallJson("GET", "/api/v1/webhooks");
  ASSERT_EQ(listed["webhooks"].size(), 1u);
  const std::string shown = listed["webhooks"][0]["url"];
  EXPECT_EQ(shown.find("s3cret-path"), std::string::npos) << shown;
  EXPECT_EQ(Call("DELETE", "/api/v1/webhooks/1").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/webhooks/1/test").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/webhooks",
                 WebhookBody("mine", receiver_.Url(), OnState("ERROR")).dump())
                .status,
            403);
  for (const std::string& token : {agent_token_, token_}) {
    for (const auto& event : EventsAs(token)) {
      EXPECT_EQ(event.dump().find("s3cret-path"), std::string::npos) << event.dump();
    }
  }
}

TEST_F(WebhooksApiTest, ATransitionIsDeliveredSignedAfterRetriesAndA4xxGivesUp) {
  LoginAs("admin");
  CallJson("POST", "/api/v1/webhooks",
           WebhookBody("paused", receiver_.Url("/paused"), OnState("PAUSED")).dump());
  receiver_.Script({503, 200});  // the first attempt fails, the retry is taken
  const int64_t id = CreateExperiment();
  CallJson("POST", "/api/v1/experiments/" + std::to_string(id) + "/pause");
  auto recorded = AwaitRecordedDeliveries(1);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0]["outcome"], "WEBHOOK_DELIVERY_OUTCOME_DELIVERED");
  EXPECT_EQ(recorded[0]["attempts"], 2);
  auto received = receiver_.received();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].body, received[1].body) << "a retry sends the same payload";
  const auto& delivery = received[1];
  EXPECT_EQ(delivery.target, "/paused");
  json body = json::parse(delivery.body);
  EXPECT_EQ(body["event_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(body["event_data"]["experiment"]["id"], id);
  EXPECT_EQ(body["event_data"]["experiment"]["state"], "PAUSED");
  // Signed as Determined signs: HMAC-SHA256 of "<timestamp>,<body>" under the master's key,
  // made at its first start and kept in its data directory.
  auto key = ReadTokenFile(WebhookSigningKeyPath(dir_.Sub("data")));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  const std::string timestamp = delivery.headers.at("x-determined-ai-signature-timestamp");
  EXPECT_EQ(delivery.headers.at("x-determined-ai-signature"),
            commands::WebhookSignature(*key, std::stoll(timestamp), delivery.body));
  // The projections may trail the stream: the read waits for the record's offset.
  json listed = CallJson("GET", "/api/v1/webhooks?minOffset=" + recorded_offset_);
  EXPECT_EQ(listed["webhooks"][0]["cairn"]["delivered"], 1);

  // A 4xx is the endpoint's refusal: no retry.
  receiver_.Script({410});
  CallJson("POST", "/api/v1/experiments/" + std::to_string(id) + "/activate");
  CallJson("POST", "/api/v1/experiments/" + std::to_string(id) + "/pause");
  recorded = AwaitRecordedDeliveries(2);
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[1]["outcome"], "WEBHOOK_DELIVERY_OUTCOME_GAVE_UP");
  EXPECT_EQ(recorded[1]["attempts"], 1);
  EXPECT_EQ(recorded[1]["httpStatus"], 410);
  EXPECT_EQ(receiver_.received().size(), 3u);
}

TEST_F(WebhooksApiTest, AnUnreachableEndpointIsGivenUpWithoutItsPathInAnyRecord) {
  LoginAs("admin");
  // Port 1 on loopback: nothing listens, every attempt is refused at once.
  const std::string url = "http://127.0.0.1:1/services/T0/unreachable-s3cret";
  CallJson("POST", "/api/v1/webhooks", WebhookBody("down", url, OnState("PAUSED")).dump());
  const int64_t id = CreateExperiment();
  CallJson("POST", "/api/v1/experiments/" + std::to_string(id) + "/pause");
  auto recorded = AwaitRecordedDeliveries(1);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0]["outcome"], "WEBHOOK_DELIVERY_OUTCOME_GAVE_UP");
  EXPECT_EQ(recorded[0]["attempts"], 3);
  const std::string detail = recorded[0]["detail"];
  EXPECT_NE(detail.find("not delivered after 3 attempts"), std::string::npos) << detail;
  LoginAs("determined");  // sees the global webhook and its deliveries, not its path
  const std::string listed =
      CallJson("GET", "/api/v1/webhooks?minOffset=" + recorded_offset_).dump();
  EXPECT_NE(listed.find("not delivered after 3 attempts"), std::string::npos) << listed;
  for (const std::string& shown : {listed, json(EventsAs(token_)).dump()}) {
    EXPECT_EQ(shown.find("unreachable-s3cret"), std::string::npos) << shown;
  }
  LoginAs("admin");
  auto test = Call("POST", "/api/v1/webhooks/1/test");
  EXPECT_EQ(test.status, 400);
  EXPECT_EQ(test.body.find("unreachable-s3cret"), std::string::npos) << test.body;
}

TEST_F(WebhooksApiTest, TheTestRouteSendsOneSignedPayloadAndSaysWhatTheEndpointAnswered) {
  LoginAs("admin");
  CallJson("POST", "/api/v1/webhooks",
           WebhookBody("t", receiver_.Url("/t"), OnState("COMPLETED")).dump());
  json answer = CallJson("POST", "/api/v1/webhooks/1/test");
  EXPECT_EQ(answer["completed"], true);
  ASSERT_TRUE(receiver_.WaitFor(1));
  json body = json::parse(receiver_.received()[0].body);
  EXPECT_EQ(body["event_data"]["data"], "test");
  EXPECT_TRUE(receiver_.received()[0].headers.count("x-determined-ai-signature"));
  receiver_.Script({500});
  auto failed = Call("POST", "/api/v1/webhooks/1/test");
  EXPECT_EQ(failed.status, 400) << failed.body;
  EXPECT_NE(failed.body.find("HTTP 500"), std::string::npos) << failed.body;
}

}  // namespace
}  // namespace cairn::api_testing
