// What each audience sees of secrets (events/redaction.h): agents everything, owners and admins
// all but variables marked secret, everyone else no values at all.
#include "events/redaction.h"

#include <gtest/gtest.h>

#include "events/envelope_util.h"

namespace cairn {
namespace {

using nlohmann::json;

json Config() {
  return json::parse(R"({
    "entrypoint": ["python3", "train.py"],
    "environment": {
      "environment_variables": ["PLAIN=visible-to-owner", "API_KEY=planted-secret-1234", "BARE"],
      "secret_environment_variables": ["API_KEY"],
      "registry_auth": {"username": "me", "password": "registry-pass"}
    },
    "checkpoint_storage": {"type": "s3", "secret_key": "s3-secret"}
  })");
}

TEST(RedactionTest, EachAudienceSeesWhatItMay) {
  json machine = Config();
  EXPECT_FALSE(RedactConfig(machine, Audience::kMachine));
  EXPECT_EQ(machine, Config());

  json owner = Config();
  EXPECT_TRUE(RedactConfig(owner, Audience::kOwner));
  const std::string owner_text = owner.dump();
  EXPECT_EQ(owner_text.find("planted-secret-1234"), std::string::npos);
  EXPECT_NE(owner_text.find("PLAIN=visible-to-owner"), std::string::npos);
  // A registry password may be the cluster's (task_container_defaults): the owner does not get it.
  EXPECT_EQ(owner_text.find("registry-pass"), std::string::npos);
  EXPECT_NE(owner_text.find("\"username\":\"me\""), std::string::npos);
  EXPECT_NE(owner_text.find("API_KEY=********"), std::string::npos);

  json others = Config();
  EXPECT_TRUE(RedactConfig(others, Audience::kOthers));
  const std::string others_text = others.dump();
  for (const char* secret :
       {"planted-secret-1234", "visible-to-owner", "registry-pass", "s3-secret"}) {
    EXPECT_EQ(others_text.find(secret), std::string::npos) << secret;
  }
  // Names stay: a reader can still tell what the task is given.
  EXPECT_NE(others_text.find("PLAIN=********"), std::string::npos);
  EXPECT_NE(others_text.find("\"BARE\""), std::string::npos);
}

TEST(RedactionTest, StorageCredentialsReachOnlyMachinesNotEvenTheOwner) {
  const json config = json::parse(R"({
    "checkpoint_storage": {"type": "azure", "container": "ckpt",
                           "connection_string": "AccountName=a;AccountKey=azure-key-9876",
                           "credential": "azure-cred-5432",
                           "account_url": "https://a.blob.core.windows.net/?sv=1&sig=sas-sig-1111"}
  })");
  json machine = config;
  EXPECT_FALSE(RedactConfig(machine, Audience::kMachine));
  for (Audience person : {Audience::kOwner, Audience::kOthers}) {
    json shown = config;
    EXPECT_TRUE(RedactConfig(shown, person));
    const std::string text = shown.dump();
    for (const char* secret : {"azure-key-9876", "azure-cred-5432", "sas-sig-1111"}) {
      EXPECT_EQ(text.find(secret), std::string::npos) << secret;
    }
    EXPECT_EQ(shown["checkpoint_storage"]["account_url"],
              "https://a.blob.core.windows.net/?********");
    EXPECT_EQ(shown["checkpoint_storage"]["container"], "ckpt") << "not a secret";
  }
  json owner = Config();
  RedactConfig(owner, Audience::kOwner);
  EXPECT_EQ(owner["checkpoint_storage"]["secret_key"], "********");
}

TEST(RedactionTest, PerDeviceVariablesAndYamlTextAreRedactedToo) {
  const std::string yaml =
      "# my experiment\n"
      "entrypoint: python3 train.py\n"
      "environment:\n"
      "  environment_variables:\n"
      "    cpu: [TOKEN=planted-secret-1234]\n"
      "    cuda: [TOKEN=planted-secret-1234]\n";
  const std::string shown = RedactConfigYaml(yaml, Audience::kOthers);
  EXPECT_EQ(shown.find("planted-secret-1234"), std::string::npos) << shown;
  EXPECT_NE(shown.find("TOKEN="), std::string::npos) << shown;
  // Nothing secret for the owner: the text comes back as written, comment and all.
  EXPECT_EQ(RedactConfigYaml(yaml, Audience::kOwner), yaml);
}

TEST(RedactionTest, EventsAreRedactedForTheirAudience) {
  events::Envelope event;
  event.set_actor("user:alice");
  auto* submitted = event.mutable_task_submitted();
  submitted->mutable_spec()->set_user("alice");
  submitted->mutable_spec()->add_environment_variables("API_KEY=planted-secret-1234");
  submitted->mutable_spec()->add_environment_variables("PLAIN=visible-to-owner");
  submitted->mutable_spec()->add_secret_variable_names("API_KEY");
  submitted->set_config_json(Config().dump());
  EXPECT_EQ(OwnerOf(event), "alice");

  const std::string to_agent = EnvelopeToJson(event, Audience::kMachine);
  EXPECT_NE(to_agent.find("planted-secret-1234"), std::string::npos);
  const std::string to_owner = EnvelopeToJson(event, Audience::kOwner);
  EXPECT_EQ(to_owner.find("planted-secret-1234"), std::string::npos) << to_owner;
  EXPECT_NE(to_owner.find("visible-to-owner"), std::string::npos) << to_owner;
  const std::string to_others = EnvelopeToJson(event, Audience::kOthers);
  EXPECT_EQ(to_others.find("planted-secret-1234"), std::string::npos) << to_others;
  EXPECT_EQ(to_others.find("visible-to-owner"), std::string::npos) << to_others;

  events::Envelope user;
  user.mutable_user_created()->set_password_hash("$argon2id$v=19$hash");
  EXPECT_EQ(EnvelopeToJson(user, Audience::kMachine).find("argon2id"), std::string::npos);
}

TEST(RedactionTest, ARegistryPasswordReachesOnlyAgents) {
  events::Envelope event;
  auto* assigned = event.mutable_allocation_assigned();
  assigned->mutable_spec()->set_user("alice");
  assigned->mutable_spec()->mutable_registry_auth()->set_username("alice");
  assigned->mutable_spec()->mutable_registry_auth()->set_password("registry-pw-5678");
  EXPECT_NE(EnvelopeToJson(event, Audience::kMachine).find("registry-pw-5678"), std::string::npos);
  for (Audience person : {Audience::kOwner, Audience::kOthers}) {
    const std::string shown = EnvelopeToJson(event, person);
    EXPECT_EQ(shown.find("registry-pw-5678"), std::string::npos) << shown;
    EXPECT_NE(shown.find("alice"), std::string::npos) << shown;
  }
}

TEST(RedactionTest, TaskContainerDefaultsKeepTheirRegistryPasswordForMachines) {
  events::Envelope event;
  auto* pools = event.mutable_resource_pools_configured();
  pools->set_task_container_defaults_json(
      R"({"image":"team/base:1","environment_variables":["TOKEN=cluster-token-42"],)"
      R"("registry_auth":{"username":"robot","password":"cluster-registry-pw"},)"
      R"("startup_hook":"export HUB_TOKEN=hook-token-77"})");
  auto* pool = pools->add_pools();
  pool->set_pool_name("gpu");
  pool->set_task_container_defaults_json(
      R"({"registry_auth":{"username":"gpu-robot","password":"pool-registry-pw"}})");
  EXPECT_EQ(RedactedFor(event, Audience::kMachine).DebugString(), event.DebugString());
  const std::string admins = RedactedFor(event, Audience::kOwner).DebugString();
  EXPECT_EQ(admins.find("cluster-registry-pw"), std::string::npos);
  EXPECT_EQ(admins.find("pool-registry-pw"), std::string::npos);
  EXPECT_NE(admins.find("cluster-token-42"), std::string::npos);
  EXPECT_NE(admins.find("gpu-robot"), std::string::npos);
  const std::string others = RedactedFor(event, Audience::kOthers).DebugString();
  EXPECT_EQ(others.find("cluster-token-42"), std::string::npos);
  EXPECT_EQ(others.find("hook-token-77"), std::string::npos);
  EXPECT_NE(admins.find("hook-token-77"), std::string::npos);
  EXPECT_NE(others.find("team/base:1"), std::string::npos);
}

TEST(RedactionTest, AudienceOfTheCaller) {
  EXPECT_EQ(AudienceOf(true, false, "", "alice"), Audience::kMachine);
  EXPECT_EQ(AudienceOf(false, true, "root", "alice"), Audience::kOwner);
  EXPECT_EQ(AudienceOf(false, false, "alice", "alice"), Audience::kOwner);
  EXPECT_EQ(AudienceOf(false, false, "bob", "alice"), Audience::kOthers);
  EXPECT_EQ(AudienceOf(false, false, "", ""), Audience::kOthers);
}

}  // namespace
}  // namespace cairn
