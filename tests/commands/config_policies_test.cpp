// Config policies on the write side (commands/policies): who sets them, what a policies document
// may hold, the invariant configuration merged over submissions (global over workspace), and the
// constraints that refuse submissions, naming the policy.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "commands/decider.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using nlohmann::json;

constexpr const char* kExperiment = R"(
name: mnist
entrypoint: model_def:Trial
resources:
  slots_per_trial: 4
searcher:
  name: single
  metric: loss
  max_length: {batches: 100}
)";

class ConfigPoliciesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.Run(testing::Agent("a1", 8)).ok());
    auto team = cluster_.AddTeam();
    ASSERT_TRUE(team.ok()) << team.status().ToString();
    team_ = *team;
    ASSERT_TRUE(cluster_.Run(CreateProject{2, "vision", ""}).ok());
    project_id_ = cluster_.state.tenancy.FindProject(2, "vision")->id;
  }

  Status Set(int32_t workspace_id, const std::string& type, const std::string& text,
             const std::string& actor = "user:test") {
    return cluster_.Run(SetConfigPolicies{workspace_id, type, text}, "", actor).status();
  }

  // A command submitted as alice in the team workspace (2) through the request path.
  Status SubmitCommand(const std::string& id, const json& config) {
    SubmitTask submit;
    submit.task_id = id;
    submit.spec.set_task_type(events::TASK_TYPE_COMMAND);
    submit.spec.set_user("alice");
    submit.request = SubmitTask::Request{config.dump(), "", {}, {}};
    submit.workspace_id = 2;
    return cluster_.Run(submit, "", "user:alice").status();
  }

  Result<events::ExperimentCreated> CreateInTeam(const std::string& yaml) {
    CreateExperiment command;
    command.created.set_owner("alice");
    command.created.set_context_digest("sha256:00");
    auto& request = command.request.emplace();
    request.config_yaml = yaml;
    request.context_paths = {"model_def.py"};
    request.default_checkpoint_dir = "/var/cairn/checkpoints";
    request.seed_if_unset = 1;
    request.project_id = project_id_;
    CAIRN_RETURN_IF_ERROR(cluster_.Run(command, "", "user:alice").status());
    auto created = cluster_.Last(events::Envelope::kExperimentCreated);
    if (created.size() != 1) return Status::Internal("no ExperimentCreated");
    return created[0].experiment_created();
  }

  testing::Cluster cluster_;
  testing::Cluster::Team team_;
  int32_t project_id_ = 0;
};

TEST_F(ConfigPoliciesTest, AWorkspaceCapOfTwoSlotsRefusesFourNamingThePolicy) {
  ASSERT_TRUE(Set(2, "NTSC", "constraints:\n  resources:\n    max_slots: 2\n").ok());
  ASSERT_EQ(cluster_.Last(events::Envelope::kConfigPoliciesSet).size(), 1u);
  Status refused = SubmitCommand("big", {{"entrypoint", "true"}, {"resources", {{"slots", 4}}}});
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "failed constraint check: requested resources.slots [4] exceeds limit set by admin [2] "
            "in workspace team's NTSC config policies: submitted workload failed a resource "
            "constraint");
  EXPECT_TRUE(SubmitCommand("small", {{"entrypoint", "true"}, {"resources", {{"slots", 2}}}}).ok());
  // The policy binds the team workspace only.
  SubmitTask elsewhere = testing::Submission("uncategorized", {.slots = 4});
  EXPECT_TRUE(cluster_.Run(elsewhere).ok());
  // Experiments have their own policies: slots_per_trial 4 passes until one is set.
  EXPECT_TRUE(CreateInTeam(kExperiment).ok());
  ASSERT_TRUE(Set(2, "EXPERIMENT", R"({"constraints":{"resources":{"max_slots":2}}})").ok());
  auto capped = CreateInTeam(kExperiment);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.status().message(),
            "requested resources.slots_per_trial [4] exceeds limit set by admin [2] in workspace "
            "team's EXPERIMENT config policies: submitted workload failed a resource constraint");
}

TEST_F(ConfigPoliciesTest, TheGlobalLimitWinsOverTheWorkspacesAndPriorityIsBoundedFromAbove) {
  ASSERT_TRUE(Set(2, "NTSC", "constraints: {priority_limit: 10, resources: {max_slots: 8}}").ok());
  ASSERT_TRUE(Set(kEveryWorkspace, "NTSC", "constraints: {resources: {max_slots: 1}}").ok());
  Status refused = SubmitCommand("two", {{"entrypoint", "true"}, {"resources", {{"slots", 2}}}});
  EXPECT_NE(refused.message().find("limit set by admin [1] in the global NTSC config policies"),
            std::string::npos)
      << refused.message();
  // Smaller is higher: 5 is more favourable than the limit 10.
  Status eager = SubmitCommand("eager", {{"entrypoint", "true"}, {"resources", {{"priority", 5}}}});
  EXPECT_NE(eager.message().find("requested priority [5] exceeds limit set by admin [10] in "
                                 "workspace team's NTSC config policies"),
            std::string::npos)
      << eager.message();
  EXPECT_TRUE(
      SubmitCommand("patient", {{"entrypoint", "true"}, {"resources", {{"priority", 20}}}}).ok());
  ASSERT_TRUE(cluster_.Run(DeleteConfigPolicies{kEveryWorkspace, "NTSC"}).ok());
  EXPECT_TRUE(
      SubmitCommand("two-again", {{"entrypoint", "true"}, {"resources", {{"slots", 2}}}}).ok());
}

TEST_F(ConfigPoliciesTest, InvariantConfigsAreMergedOverTheSubmissionGlobalLast) {
  ASSERT_TRUE(Set(2, "NTSC",
                  "invariant_config:\n  description: team work\n"
                  "  environment:\n    environment_variables: [TEAM=1]\n")
                  .ok());
  ASSERT_TRUE(Set(kEveryWorkspace, "NTSC", "invariant_config: {description: cluster work}").ok());
  ASSERT_TRUE(SubmitCommand("merged", {{"entrypoint", "true"}, {"description", "mine"}}).ok());
  const json config = json::parse(
      cluster_.Last(events::Envelope::kTaskSubmitted)[0].task_submitted().config_json());
  EXPECT_EQ(config["description"], "cluster work") << config.dump();
  EXPECT_NE(config.dump().find("TEAM=1"), std::string::npos) << config.dump();
}

TEST_F(ConfigPoliciesTest, OnlyAdminsSetThemAndBadDocumentsAreRefusedByName) {
  EXPECT_EQ(Set(kEveryWorkspace, "NTSC", "constraints: {priority_limit: 10}", "user:alice").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(Set(2, "NTSC", "constraints: {priority_limit: 10}", "user:alice").code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(Set(2, "NTSC", "constraints: {priority_limit: 10}", "user:wanda").ok())
      << "the workspace's admin";
  struct Case {
    std::string type, text, expected;
  };
  const Case cases[] = {
      {"TASKS", "{}", "workloadType: EXPERIMENT or NTSC"},
      {"NTSC", "invariant: {}", "invariant: not a key of config policies"},
      {"NTSC", "constraints: {resources: {slots: 2}}", "constraints.resources.slots: not a key"},
      {"NTSC", "constraints: {priority_limit: 0}", "constraints.priority_limit: an integer from 1"},
      {"NTSC", "invariant_config: [1]", "invariant_config: must be a map"},
      {"NTSC",
       "invariant_config: {resources: {slots: 4}}\nconstraints: {resources: {max_slots: 2}}",
       "invariant_config conflicts with its own constraints"},
      {"NTSC", "key: [unclosed", "configPolicies"},
  };
  for (const auto& c : cases) {
    Status refused = Set(2, c.type, c.text);
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(refused.message().find(c.expected), std::string::npos)
        << c.text << ": " << refused.message();
  }
  // A workspace's invariant configuration may not contradict the global constraints.
  ASSERT_TRUE(Set(kEveryWorkspace, "NTSC", "constraints: {resources: {max_slots: 2}}").ok());
  Status conflict = Set(2, "NTSC", "invariant_config: {resources: {slots: 3}}");
  EXPECT_NE(conflict.message().find("conflicts with the global constraints"), std::string::npos)
      << conflict.message();
  EXPECT_EQ(Set(99, "NTSC", "{}").code(), StatusCode::kNotFound);
}

TEST_F(ConfigPoliciesTest, AWorkspacesDeletionEndsItsPolicies) {
  ASSERT_TRUE(Set(2, "EXPERIMENT", "constraints: {priority_limit: 10}").ok());
  ASSERT_NE(cluster_.state.tenancy.FindConfigPolicies(2, "EXPERIMENT"), nullptr);
  ASSERT_TRUE(cluster_.Run(DeleteWorkspace{2}).ok());
  EXPECT_EQ(cluster_.state.tenancy.FindConfigPolicies(2, "EXPERIMENT"), nullptr);
}

}  // namespace
}  // namespace cairn::commands
