// Credentials sealed in the log (events/sealing.h): every event that can hold one keeps it
// sealed, the rest of the event as it was; the machines that use a credential open it; people
// see it redacted as before.
#include "events/sealing.h"

#include <gtest/gtest.h>

#include "events/envelope_util.h"
#include "events/redaction.h"

namespace cairn {
namespace {

using nlohmann::json;

const SecretSealer kSealer("cluster-secret-for-the-sealing-test");

// Every credential in these events, none of which may reach the log.
constexpr const char* kCredentials[] = {"s3-secret-key-1",        "s3-access-key-1",
                                        "registry-pw-2",          "planted-secret-3",
                                        "AccountKey=azure-key-4", "pool-registry-pw-5"};

json ConfigWithCredentials() {
  return json::parse(R"({
    "entrypoint": "python3 train.py",
    "environment": {
      "environment_variables": {"cpu": ["PLAIN=owner-may-see", "API_KEY=planted-secret-3"],
                                "cuda": ["API_KEY=planted-secret-3"]},
      "secret_environment_variables": ["API_KEY"],
      "registry_auth": {"username": "me", "password": "registry-pw-2"}
    },
    "checkpoint_storage": {"type": "s3", "bucket": "b", "access_key": "s3-access-key-1",
                           "secret_key": "s3-secret-key-1"}
  })");
}

std::vector<events::Envelope> EventsWithCredentials() {
  std::vector<events::Envelope> out;
  events::Envelope created;
  created.set_actor("user:alice");
  created.mutable_experiment_created()->set_owner("alice");
  created.mutable_experiment_created()->set_config_json(ConfigWithCredentials().dump());
  created.mutable_experiment_created()->set_original_config(
      "# mine\nenvironment:\n  registry_auth: {username: me, password: registry-pw-2}\n");
  out.push_back(created);

  events::Envelope continued;
  continued.mutable_experiment_continued()->set_config_json(ConfigWithCredentials().dump());
  continued.mutable_experiment_continued()->set_override_yaml(
      "checkpoint_storage: {type: s3, bucket: b, access_key: s3-access-key-1, "
      "secret_key: s3-secret-key-1}\n");
  out.push_back(continued);

  events::Envelope submitted;
  auto* spec = submitted.mutable_task_submitted()->mutable_spec();
  spec->set_user("alice");
  spec->add_environment_variables("API_KEY=planted-secret-3");
  spec->add_environment_variables("PLAIN=owner-may-see");
  spec->add_secret_variable_names("API_KEY");
  spec->mutable_registry_auth()->set_username("me");
  spec->mutable_registry_auth()->set_password("registry-pw-2");
  submitted.mutable_task_submitted()->set_config_json(ConfigWithCredentials().dump());
  out.push_back(submitted);

  events::Envelope assigned;
  *assigned.mutable_allocation_assigned()->mutable_spec() = *spec;
  out.push_back(assigned);

  events::Envelope saved;
  saved.mutable_template_saved()->set_config_yaml(
      "environment:\n  environment_variables: [API_KEY=planted-secret-3]\n"
      "  secret_environment_variables: [API_KEY]\n");
  out.push_back(saved);

  events::Envelope policies;
  policies.mutable_config_policies_set()->set_invariant_config_json(
      R"({"checkpoint_storage": {"type": "azure", "container": "c",)"
      R"( "connection_string": "AccountName=a;AccountKey=azure-key-4"}})");
  out.push_back(policies);

  events::Envelope pools;
  pools.mutable_resource_pools_configured()->set_task_container_defaults_json(
      R"({"environment_variables": ["HTTP_PROXY=proxy:3128"],)"
      R"( "registry_auth": {"username": "robot", "password": "registry-pw-2"}})");
  pools.mutable_resource_pools_configured()->add_pools()->set_task_container_defaults_json(
      R"({"registry_auth": {"username": "gpu", "password": "pool-registry-pw-5"}})");
  out.push_back(pools);

  events::Envelope workspace;
  workspace.mutable_workspace_created()->set_checkpoint_storage_json(
      ConfigWithCredentials()["checkpoint_storage"].dump());
  out.push_back(workspace);
  events::Envelope updated;
  updated.mutable_workspace_updated()->set_checkpoint_storage_json(
      ConfigWithCredentials()["checkpoint_storage"].dump());
  out.push_back(updated);
  return out;
}

TEST(SealingTest, NoCredentialIsLeftInAnySealedEvent) {
  for (events::Envelope event : EventsWithCredentials()) {
    const std::string before = event.SerializeAsString();
    SealSecrets(event, kSealer);
    const std::string stored = event.SerializeAsString();
    EXPECT_NE(stored, before) << PayloadTypeName(event);
    for (const char* credential : kCredentials) {
      EXPECT_EQ(stored.find(credential), std::string::npos)
          << credential << " left in " << PayloadTypeName(event) << ": " << event.DebugString();
    }
    EXPECT_NE(stored.find(kSealedPrefix), std::string::npos) << PayloadTypeName(event);
    // Sealing again changes nothing: what was recorded compares equal to a resubmission.
    events::Envelope again = event;
    SealSecrets(again, kSealer);
    EXPECT_EQ(again.SerializeAsString(), stored);
  }
}

TEST(SealingTest, WhatPeopleMaySeeStaysInTheClear) {
  auto events = EventsWithCredentials();
  SealSecrets(events[0], kSealer);
  const json config = json::parse(events[0].experiment_created().config_json());
  EXPECT_EQ(config["environment"]["environment_variables"]["cpu"][0], "PLAIN=owner-may-see");
  EXPECT_EQ(config["environment"]["registry_auth"]["username"], "me");
  EXPECT_EQ(config["checkpoint_storage"]["bucket"], "b");
  const std::string api_key = config["environment"]["environment_variables"]["cpu"][1];
  EXPECT_EQ(api_key.rfind("API_KEY=" + std::string(kSealedPrefix), 0), 0u) << api_key;
  // A pool's variables are the cluster's, shown to admins: not sealed.
  SealSecrets(events[6], kSealer);
  EXPECT_NE(events[6].resource_pools_configured().task_container_defaults_json().find(
                "HTTP_PROXY=proxy:3128"),
            std::string::npos);
  // Redaction hides the sealed value as it hid the plain one.
  const std::string to_owner = EnvelopeToJson(events[0], Audience::kOwner);
  EXPECT_EQ(to_owner.find(kSealedPrefix), std::string::npos) << to_owner;
  EXPECT_NE(to_owner.find("API_KEY=********"), std::string::npos) << to_owner;
  EXPECT_NE(to_owner.find("owner-may-see"), std::string::npos) << to_owner;
}

TEST(SealingTest, MachinesOpenWhatTheyUse) {
  auto events = EventsWithCredentials();
  events::Envelope assigned = events[3];
  SealSecrets(assigned, kSealer);
  events::TaskSpec spec = assigned.allocation_assigned().spec();
  ASSERT_TRUE(UnsealSpec(spec, kSealer).ok());
  EXPECT_EQ(spec.SerializeAsString(), events[3].allocation_assigned().spec().SerializeAsString());

  events::Envelope created = events[0];
  SealSecrets(created, kSealer);
  json config = json::parse(created.experiment_created().config_json());
  ASSERT_TRUE(UnsealConfig(config, kSealer).ok());
  EXPECT_EQ(config, ConfigWithCredentials());

  // Only the credentials' own places open: a sealed value standing anywhere else (a variable not
  // marked secret, a bucket name) stays sealed.
  events::TaskSpec planted;
  const std::string sealed = kSealer.Seal("registry-pw-2");
  planted.add_environment_variables("PLAIN=" + sealed);
  ASSERT_TRUE(UnsealSpec(planted, kSealer).ok());
  EXPECT_EQ(planted.environment_variables(0), "PLAIN=" + sealed);
  json elsewhere = {{"checkpoint_storage", {{"type", "s3"}, {"bucket", sealed}}},
                    {"hyperparameters", {{"lr", sealed}}}};
  ASSERT_TRUE(UnsealConfig(elsewhere, kSealer).ok());
  EXPECT_EQ(elsewhere["checkpoint_storage"]["bucket"], sealed);
  EXPECT_EQ(elsewhere["hyperparameters"]["lr"], sealed);

  // Another cluster secret cannot open them, and says so without the value.
  events::TaskSpec foreign = assigned.allocation_assigned().spec();
  Status refused = UnsealSpec(foreign, SecretSealer("some-other-cluster-secret"));
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message().find("registry-pw-2"), std::string::npos);
}

TEST(SealingTest, AWebhookUrlKeepsItsHostAndOpensWhole) {
  events::Envelope created;
  created.mutable_webhook_created()->set_url(
      "https://hooks.slack.com/services/T0/B0/xoxb-secret?a=1");
  SealSecrets(created, kSealer);
  const std::string& url = created.webhook_created().url();
  EXPECT_EQ(url.rfind("https://hooks.slack.com/" + std::string(kSealedPrefix), 0), 0u) << url;
  EXPECT_EQ(url.find("xoxb-secret"), std::string::npos) << url;
  auto opened = UnsealWebhookUrl(url, kSealer);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "https://hooks.slack.com/services/T0/B0/xoxb-secret?a=1");
  EXPECT_EQ(RedactedWebhookUrl(url), "https://hooks.slack.com/********");
  // A sealed value put where the host is never opens.
  const std::string planted = "https://" + kSealer.Seal("x") + "/path";
  auto kept = UnsealWebhookUrl(planted, kSealer);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, planted);
}

TEST(SealingTest, ASealedValueIsFoundBehindEscapes) {
  const std::string sealed = kSealer.Seal("s3-secret-key-1");
  const std::string tail = sealed.substr(1);  // "airn-sealed:v1:..."
  EXPECT_TRUE(HoldsSealedValue(R"({"config": "secret_key: )" + sealed + R"("})"));
  // JSON's escape of 'c'.
  EXPECT_TRUE(HoldsSealedValue(R"({"url": "https://x/\u0063)" + tail + R"("})"));
  // YAML's, inside a JSON string (a config).
  EXPECT_TRUE(HoldsSealedValue(R"({"config": "secret_key: \"\\x63)" + tail + R"(\"\n"})"));
  // An escaped line break inside a double-quoted YAML scalar.
  EXPECT_TRUE(HoldsSealedValue(R"({"config": "secret_key: \"cairn-se\\\n  aled:v1:)" +
                               sealed.substr(kSealedPrefix.size()) + R"(\"\n"})"));
  EXPECT_FALSE(
      HoldsSealedValue(R"({"config": "entrypoint: python3 train.py\nname: \"a\\tb\"\n"})"));
  EXPECT_FALSE(HoldsSealedValue(R"(plain text with a \ backslash)"));
}

TEST(SealingTest, WithoutAKeyEventsAreWrittenAsDecided) {
  for (events::Envelope event : EventsWithCredentials()) {
    const std::string before = event.SerializeAsString();
    SealSecrets(event, SecretSealer());
    EXPECT_EQ(event.SerializeAsString(), before);
  }
}

}  // namespace
}  // namespace cairn
