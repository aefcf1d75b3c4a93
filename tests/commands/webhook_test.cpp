// Webhooks on the write side: what a webhook may be, who may change it, which events owe a
// delivery through which trigger (Determined's matching rules), that a recorded delivery is never
// owed again, and the payloads and signature Determined's receivers check.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/http_url.h"
#include "commands/experiments/experiment_config.h"
#include "commands/webhooks/webhook_decider.h"
#include "commands/webhooks/webhook_payload.h"
#include "events/redaction.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands::testing {
namespace {

using nlohmann::json;

constexpr const char* kExperimentConfig = R"(
name: mnist
entrypoint: model_def:Trial
hyperparameters: {lr: 0.1}
searcher: {name: single, metric: loss, max_length: {batches: 100}}
checkpoint_storage: {type: shared_fs, host_path: /tmp/cairn-test-checkpoints}
)";

CreateWebhook::Trigger OnState(const std::string& state) {
  return {events::TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE, json{{"state", state}}.dump()};
}

CreateWebhook Webhook(const std::string& name, std::vector<CreateWebhook::Trigger> triggers,
                      events::WebhookMode mode = events::WEBHOOK_MODE_WORKSPACE,
                      int32_t workspace_id = 0) {
  CreateWebhook command;
  command.name = name;
  command.url = "https://hooks.example:8443/services/T0/" + name + "?token=s3cret";
  command.type = events::WEBHOOK_TYPE_DEFAULT;
  command.mode = mode;
  command.workspace_id = workspace_id;
  command.triggers = std::move(triggers);
  return command;
}

class WebhookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto team = cluster.AddTeam();
    ASSERT_TRUE(team.ok()) << team.status().ToString();
    ASSERT_TRUE(cluster.Run(CreateProject{2, "team-project", ""}).ok());
    team_project = cluster.state.tenancy.last_project_id;
  }

  Result<Decision> RunAs(const std::string& user, Command command) {
    return cluster.Run(std::move(command), "", "user:" + user);
  }

  // Creates an experiment (as the admin) from kExperimentConfig plus `extra` YAML, in
  // Uncategorized or (workspace 2) team's project; returns its id.
  int64_t CreateExperimentWith(const std::string& extra, int32_t workspace_id = 1) {
    const std::string yaml = std::string(kExperimentConfig) + extra;
    auto config = experiments::ParseExperimentConfig(yaml);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    CreateExperiment command;
    command.created.set_name(config->name);
    command.created.set_owner("test");
    command.created.set_original_config(yaml);
    command.created.set_config_json(config->effective.dump());
    command.created.set_context_digest("sha256:00");
    command.created.set_activate(true);
    command.created.set_project_id(workspace_id == 1 ? 1 : team_project);
    auto decision = cluster.Run(command);
    EXPECT_TRUE(decision.ok()) << decision.status().ToString();
    return cluster.state.last_experiment_id;
  }

  void Pause(int64_t experiment_id) {
    auto decision = cluster.Run(ExperimentAction{experiment_id, ExperimentAction::Kind::kPause});
    ASSERT_TRUE(decision.ok()) << decision.status().ToString();
  }

  // The owed deliveries' bodies, in order.
  std::vector<json> Owed() const {
    std::vector<json> bodies;
    for (const auto& [key, delivery] : cluster.state.webhooks.pending) {
      bodies.push_back(json::parse(delivery.body_json));
    }
    return bodies;
  }

  Cluster cluster;
  int32_t team_project = 0;
};

TEST_F(WebhookTest, AWebhookIsCheckedAndNumbered) {
  const auto refused = [&](CreateWebhook command) {
    return RunAs("test", std::move(command)).status().code();
  };
  auto no_triggers = Webhook("a", {});
  EXPECT_EQ(refused(no_triggers), StatusCode::kInvalidArgument);
  for (const char* url : {"ftp://host/x", "https:///x", "http://user:pw@host/x", "/relative",
                          "http://host:99999/", "http://ho st/"}) {
    auto bad_url = Webhook("a", {OnState("COMPLETED")});
    bad_url.url = url;
    EXPECT_EQ(refused(bad_url), StatusCode::kInvalidArgument) << url;
  }
  EXPECT_EQ(refused(Webhook("a", {OnState("FINISHED")})), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused(Webhook("a", {{events::TRIGGER_TYPE_TASK_LOG, R"({"regex":"OOM"})"}})),
            StatusCode::kNotSupported);
  EXPECT_EQ(refused(Webhook("a", {{events::TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED, "{}"}})),
            StatusCode::kNotSupported);
  // A custom trigger fires only for experiments that name the webhook.
  EXPECT_EQ(refused(Webhook("a", {{events::TRIGGER_TYPE_CUSTOM, "{}"}})),
            StatusCode::kInvalidArgument);
  auto no_type = Webhook("a", {OnState("COMPLETED")});
  no_type.type = events::WEBHOOK_TYPE_UNSPECIFIED;
  EXPECT_EQ(refused(no_type), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused(Webhook("a", {OnState("COMPLETED")}, events::WEBHOOK_MODE_WORKSPACE, 77)),
            StatusCode::kNotFound);
  EXPECT_TRUE(cluster.state.webhooks.webhooks.empty());

  auto decision = RunAs("test", Webhook("ops", {OnState("COMPLETED"), OnState("ERROR")},
                                        events::WEBHOOK_MODE_UNSPECIFIED));
  ASSERT_TRUE(decision.ok()) << decision.status().ToString();
  EXPECT_EQ(decision->entity_id, "webhook/1");
  const auto created_events = cluster.Last(events::Envelope::kWebhookCreated);
  ASSERT_EQ(created_events.size(), 1u);
  const auto& created = created_events[0].webhook_created();
  EXPECT_EQ(created.mode(), events::WEBHOOK_MODE_WORKSPACE);
  ASSERT_EQ(created.triggers_size(), 2);
  EXPECT_EQ(created.triggers(0).trigger_id(), 1);
  EXPECT_EQ(created.triggers(1).trigger_id(), 2);
  EXPECT_EQ(refused(Webhook("ops", {OnState("COMPLETED")})), StatusCode::kAlreadyExists);
  // The same name in a workspace is another webhook.
  ASSERT_TRUE(
      RunAs("test", Webhook("ops", {OnState("COMPLETED")}, events::WEBHOOK_MODE_WORKSPACE, 2))
          .ok());
  EXPECT_EQ(cluster.state.webhooks.webhooks.at(2).triggers(0).trigger_id(), 3);
}

TEST_F(WebhookTest, EditorsOfAWorkspaceChangeItsWebhooksAndOnlyAdminsTheGlobalOnes) {
  const auto team_hook = Webhook("team", {OnState("COMPLETED")}, events::WEBHOOK_MODE_WORKSPACE, 2);
  EXPECT_EQ(RunAs("bob", team_hook).status().code(), StatusCode::kPermissionDenied);  // a Viewer
  EXPECT_EQ(RunAs("alice", Webhook("global", {OnState("COMPLETED")})).status().code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(RunAs("alice", team_hook).ok());  // an Editor of team
  EXPECT_EQ(RunAs("bob", DeleteWebhook{1}).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(RunAs("bob", UpdateWebhook{1, "https://elsewhere.example/"}).status().code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(RunAs("wanda", UpdateWebhook{1, "https://elsewhere.example/"}).ok());
  EXPECT_EQ(cluster.state.webhooks.Find(1)->url(), "https://elsewhere.example/");
  EXPECT_EQ(RunAs("wanda", UpdateWebhook{1, "mailto:x"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunAs("test", DeleteWebhook{9}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(RunAs("alice", DeleteWebhook{1}).ok());
  EXPECT_EQ(cluster.state.webhooks.Find(1), nullptr);
  // Deliveries are the master's to record.
  EXPECT_EQ(RunAs("test", RecordWebhookDeliveries{}).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(WebhookTest, UnderBasicAuthzOnlyAdminsAndTheWorkspacesOwnerSeeItsWebhooks) {
  TenancyState& tenancy = cluster.state.tenancy;
  tenancy.authz = events::AUTHZ_TYPE_BASIC;
  const UserRecord& admin = cluster.state.identity.users.at(1);  // "test", who made team
  const UserRecord& other = cluster.state.identity.users.at(2);
  ASSERT_EQ(tenancy.FindWorkspace(2)->owner_user_id, admin.id);
  EXPECT_TRUE(MayViewWebhooks(tenancy, other, 0)) << "global webhooks are everyone's to see";
  EXPECT_FALSE(MayViewWebhooks(tenancy, other, 2));
  EXPECT_FALSE(MayEditWebhooks(tenancy, other, 2));
  EXPECT_FALSE(MayEditWebhooks(tenancy, other, 0));
  EXPECT_TRUE(MayViewWebhooks(tenancy, admin, 2));
  tenancy.workspaces[2].owner_user_id = other.id;
  EXPECT_TRUE(MayViewWebhooks(tenancy, other, 2)) << "the owner";
  EXPECT_TRUE(MayEditWebhooks(tenancy, other, 2));
  EXPECT_FALSE(MayEditWebhooks(tenancy, other, 0)) << "global ones stay the admins'";
}

TEST_F(WebhookTest, AStateChangeOwesADeliveryToEveryTriggerWaitingForThatState) {
  ASSERT_TRUE(RunAs("test", Webhook("paused", {OnState("PAUSED")})).ok());
  ASSERT_TRUE(RunAs("test", Webhook("done", {OnState("COMPLETED")})).ok());
  const int64_t id = CreateExperimentWith("");
  EXPECT_TRUE(cluster.state.webhooks.pending.empty()) << "creation is no state change";
  cluster.now += 61'000'000;
  Pause(id);
  auto owed = Owed();
  ASSERT_EQ(owed.size(), 1u);
  const json& body = owed[0];
  EXPECT_EQ(body["event_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(body["condition"]["state"], "PAUSED");
  EXPECT_EQ(body["timestamp"], cluster.now / 1'000'000);
  const json& experiment = body["event_data"]["experiment"];
  EXPECT_EQ(experiment["id"], id);
  EXPECT_EQ(experiment["name"], "mnist");
  EXPECT_EQ(experiment["state"], "PAUSED");
  EXPECT_EQ(experiment["duration"], 0) << "not ended yet";
  EXPECT_EQ(experiment["workspace"], "Uncategorized");
  EXPECT_EQ(experiment["slots_per_trial"], 1);
  EXPECT_EQ(body["event_id"].get<std::string>().size(), 36u);
  EXPECT_EQ(cluster.state.webhooks.pending.begin()->second.webhook_id, 1);
  // Activating again owes nothing: no trigger waits for ACTIVE.
  ASSERT_TRUE(cluster.Run(ExperimentAction{id, ExperimentAction::Kind::kActivate}).ok());
  EXPECT_EQ(cluster.state.webhooks.pending.size(), 1u);
  // A second pause owes a second delivery, with its own event_id.
  Pause(id);
  owed = Owed();
  ASSERT_EQ(owed.size(), 2u);
  EXPECT_NE(owed[0]["event_id"], owed[1]["event_id"]);
}

TEST_F(WebhookTest, SpecificWebhooksFireForExperimentsThatNameThemAndExcludeSilencesAll) {
  ASSERT_TRUE(RunAs("test", Webhook("everyone", {OnState("PAUSED")})).ok());  // 1
  ASSERT_TRUE(
      RunAs("test", Webhook("by-name", {OnState("PAUSED")}, events::WEBHOOK_MODE_SPECIFIC)).ok());
  ASSERT_TRUE(
      RunAs("test", Webhook("by-id", {OnState("PAUSED")}, events::WEBHOOK_MODE_SPECIFIC)).ok());
  ASSERT_TRUE(
      RunAs("test", Webhook("team-only", {OnState("PAUSED")}, events::WEBHOOK_MODE_WORKSPACE, 2))
          .ok());  // 4
  const auto fired_for = [&](int64_t experiment_id) {
    std::set<int64_t> webhooks;
    cluster.state.webhooks.pending.clear();
    Pause(experiment_id);
    for (const auto& [key, delivery] : cluster.state.webhooks.pending) {
      webhooks.insert(delivery.webhook_id);
    }
    return webhooks;
  };
  EXPECT_EQ(fired_for(CreateExperimentWith("")), (std::set<int64_t>{1}));
  EXPECT_EQ(fired_for(CreateExperimentWith(
                "integrations: {webhooks: {webhook_name: [by-name], webhook_id: [3]}}\n")),
            (std::set<int64_t>{1, 2, 3}));
  EXPECT_EQ(fired_for(CreateExperimentWith("", 2)), (std::set<int64_t>{1, 4}));
  EXPECT_EQ(fired_for(CreateExperimentWith(
                "integrations: {webhooks: {webhook_name: [by-name], exclude: true}}\n")),
            (std::set<int64_t>{}));
}

TEST_F(WebhookTest, ARecordedDeliveryIsNeverOwedAgainAndADeletedWebhookOwesNothing) {
  ASSERT_TRUE(RunAs("test", Webhook("a", {OnState("PAUSED")})).ok());
  ASSERT_TRUE(RunAs("test", Webhook("b", {OnState("PAUSED")})).ok());
  Pause(CreateExperimentWith(""));
  ASSERT_EQ(cluster.state.webhooks.pending.size(), 2u);
  const auto [key, owed] = *cluster.state.webhooks.pending.begin();
  events::WebhookDelivery delivery;
  delivery.set_source_offset(key.first);
  delivery.set_trigger_id(key.second);
  delivery.set_webhook_id(owed.webhook_id);
  delivery.set_outcome(events::WEBHOOK_DELIVERY_OUTCOME_DELIVERED);
  delivery.set_http_status(204);
  delivery.set_attempts(1);
  auto recorded = cluster.Run(RecordWebhookDeliveries{{delivery}}, "", "system:webhooks");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(cluster.Last(events::Envelope::kWebhookDeliveriesRecorded).size(), 1u);
  EXPECT_EQ(cluster.state.webhooks.pending.count(key), 0u);
  // A retried record changes nothing.
  auto again = cluster.Run(RecordWebhookDeliveries{{delivery}}, "", "system:webhooks");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(cluster.last_events.empty() ||
              cluster.Last(events::Envelope::kWebhookDeliveriesRecorded).empty());
  ASSERT_TRUE(RunAs("test", DeleteWebhook{2}).ok());
  EXPECT_TRUE(cluster.state.webhooks.pending.empty());

  // What is owed is a function of the log: a fresh fold of every event owes the same.
  DecisionState replayed;
  for (const auto& event : cluster.all_events) Apply(replayed, event);
  EXPECT_EQ(replayed.webhooks.pending.size(), cluster.state.webhooks.pending.size());
  EXPECT_EQ(replayed.webhooks.webhooks.size(), cluster.state.webhooks.webhooks.size());
}

TEST_F(WebhookTest, AnAlertIsRecordedOnlyWhenACustomTriggerTakesIt) {
  ASSERT_TRUE(RunAs("test", Webhook("alerts", {{events::TRIGGER_TYPE_CUSTOM, "{}"}},
                                    events::WEBHOOK_MODE_SPECIFIC))
                  .ok());
  const int64_t unlisted = CreateExperimentWith("");
  const int64_t listed = CreateExperimentWith("integrations: {webhooks: {webhook_id: [1]}}\n");
  RaiseWebhookAlert alert{unlisted, 0, "diverged", "loss is NaN", "ERROR"};
  auto nothing = cluster.Run(alert);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_TRUE(nothing->events.empty());
  alert.experiment_id = listed;
  alert.trial_id = 999;
  EXPECT_EQ(cluster.Run(alert).status().code(), StatusCode::kInvalidArgument);
  alert.trial_id = 0;
  EXPECT_EQ(RunAs("bob", alert).status().code(), StatusCode::kPermissionDenied);
  auto raised = cluster.Run(alert);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  ASSERT_EQ(cluster.Last(events::Envelope::kWebhookAlertRaised).size(), 1u);
  auto owed = Owed();
  ASSERT_EQ(owed.size(), 1u);
  EXPECT_EQ(owed[0]["event_type"], "CUSTOM");
  EXPECT_EQ(owed[0]["condition"]["state"], "ACTIVE");
  EXPECT_EQ(owed[0]["event_data"]["custom_data"]["title"], "diverged");
  EXPECT_EQ(owed[0]["event_data"]["custom_data"]["level"], "ERROR");
  EXPECT_FALSE(owed[0]["event_data"]["experiment"].contains("trial_id"));
}

TEST(WebhookPayloadTest, TheSignatureIsDeterminedsHmacOfTimestampAndBody) {
  // Determined's own test vector (master/internal/webhooks/shipper_test.go).
  const std::string body =
      R"({"id":1,"state":"COMPLETED","name":"test-name","duration":1,"resource_pool":"default",)"
      R"("slots_per_trial":1,"workspace":"workspace","project":"project"})";
  EXPECT_EQ(WebhookSignature("testsigningkey", 1666890081, body),
            "899cc042278415da7d91605ffefe81376d64a4d842aa5663cd614f497f88910f");
  EXPECT_NE(WebhookSignature("testsigningkey", 1666890082, body),
            WebhookSignature("testsigningkey", 1666890081, body));
}

TEST(WebhookPayloadTest, PayloadsEscapeAsGoDoesAndSlackSaysHowItEnded) {
  WebhookExperimentFacts facts{7, "COMPLETED", "a<b>&c", 3 * 3600 + 125, "gpu", 2, "team", "nlp"};
  const std::string body = StateChangePayload("id-1", 1700000000, facts);
  EXPECT_NE(body.find(R"("name":"a\u003cb\u003e\u0026c")"), std::string::npos) << body;
  EXPECT_EQ(body.rfind(R"({"event_id":"id-1","event_type":"EXPERIMENT_STATE_CHANGE",)", 0), 0u);
  auto slack = SlackPayload(body, "https://cairn.example/");
  ASSERT_TRUE(slack.ok()) << slack.status().ToString();
  const json blocks = json::parse(*slack);
  EXPECT_EQ(blocks["blocks"][0]["text"]["text"],
            "Your experiment completed successfully \xF0\x9F\x8E\x89");
  EXPECT_EQ(blocks["attachments"][0]["color"], "#13B670");
  const json& details = blocks["attachments"][0]["blocks"][0];
  EXPECT_EQ(details["text"]["text"],
            "\xE2\x9C\x85 <https://cairn.example/det/experiments/7/overview | a<b>&c (#7)>");
  EXPECT_EQ(details["fields"][1]["text"], "*Duration*: 3h 2min");
  EXPECT_EQ(details["fields"][2]["text"], "*Workspace*: team");
  EXPECT_FALSE(SlackPayload("{}", "").ok());
  EXPECT_EQ(WebhookEventId("e", 5, 1), WebhookEventId("e", 5, 1));
  EXPECT_NE(WebhookEventId("e", 5, 1), WebhookEventId("e", 5, 2));
}

TEST(WebhookPayloadTest, UrlsAreParsedAndRedactedToSchemeAndHost) {
  auto url = ParseHttpUrl("https://hooks.slack.com/services/T0/B0/xyz?a=1#frag");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->host, "hooks.slack.com");
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->target, "/services/T0/B0/xyz?a=1");
  auto local = ParseHttpUrl("http://[::1]:8080");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->host, "::1");
  EXPECT_EQ(local->port, 8080);
  EXPECT_EQ(local->target, "/");
  EXPECT_EQ(RedactedWebhookUrl("https://hooks.slack.com/services/T0/B0/xyz"),
            "https://hooks.slack.com/********");
  EXPECT_EQ(RedactedWebhookUrl("http://host:81?token=x"), "http://host:81/********");
  EXPECT_EQ(RedactedWebhookUrl("http://user:pw@host/x"), "http://********");
  const auto refused = ParseHttpUrl("ftp://host/secret-path");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().find("secret-path"), std::string::npos)
      << "an error must not repeat the URL's path: " << refused.status().message();
}

}  // namespace
}  // namespace cairn::commands::testing
