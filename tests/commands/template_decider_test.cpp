// A task's configuration read on the write side (commands::SubmitTask::Request): merged under its
// template as the decision state holds it when the command is decided; the templates room's own
// commands; a job-queue request with nothing in it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "commands/decider.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using nlohmann::json;

class TemplateDeciderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cluster_.Run(testing::Agent("a1", 4)).ok()); }

  Status Save(const std::string& name, const std::string& yaml, int32_t workspace_id = 1) {
    SaveTemplate save{name, yaml, workspace_id, SaveTemplate::Mode::kCreate};
    if (cluster_.state.templates.count(name)) save.mode = SaveTemplate::Mode::kUpdate;
    return cluster_.Run(save).status();
  }

  // A command as `det cmd run [--template NAME]` asks for it, decided as `actor`.
  Result<events::TaskSubmitted> Launch(const std::string& task_id, const json& config,
                                       const std::string& template_name,
                                       events::TaskType type = events::TASK_TYPE_COMMAND,
                                       const std::string& actor = "user:test") {
    SubmitTask submit;
    submit.task_id = task_id;
    submit.spec.set_task_type(type);
    submit.spec.set_user("test");
    submit.request = SubmitTask::Request{config.dump(), template_name, {}, {}};
    if (type == events::TASK_TYPE_TENSORBOARD) {
      submit.spec.add_tensorboard_logdirs("experiment_3:/ckpt/tensorboard/experiment/3");
      submit.request->experiment_ids = {3};
    }
    CAIRN_RETURN_IF_ERROR(cluster_.Run(submit, "", actor).status());
    auto submitted = cluster_.Last(events::Envelope::kTaskSubmitted);
    if (submitted.size() != 1) return Status::Internal("no TaskSubmitted");
    return submitted[0].task_submitted();
  }

  testing::Cluster cluster_;
};

TEST_F(TemplateDeciderTest, ACommandTakesItsTemplateAsTheLogHasItWhenDecided) {
  ASSERT_TRUE(Save("gpu-defaults",
                   "resources:\n  priority: 7\nenvironment:\n  environment_variables:\n"
                   "    - FROM_TEMPLATE=1\n")
                  .ok());
  auto first = Launch("t1", {{"entrypoint", {"echo", "hi"}}}, "gpu-defaults");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->resources().priority(), 7);
  ASSERT_EQ(first->spec().environment_variables_size(), 1);
  EXPECT_EQ(first->spec().environment_variables(0), "FROM_TEMPLATE=1");
  EXPECT_EQ(first->spec().entrypoint(0), "echo");
  EXPECT_EQ(first->spec().user(), "test");
  EXPECT_EQ(json::parse(first->config_json())["resources"]["priority"], 7);

  // The template changes in the log: the next command takes the new one, the first keeps its own.
  ASSERT_TRUE(Save("gpu-defaults", "resources:\n  priority: 9\n").ok());
  auto second = Launch("t2", {{"entrypoint", {"true"}}}, "gpu-defaults");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->resources().priority(), 9);
  EXPECT_EQ(second->spec().environment_variables_size(), 0);
  EXPECT_EQ(cluster_.Task("t1").resources.priority(), 7);

  // The user's own value wins over the template's.
  auto third =
      Launch("t3", {{"entrypoint", {"true"}}, {"resources", {{"priority", 3}}}}, "gpu-defaults");
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->resources().priority(), 3);
}

TEST_F(TemplateDeciderTest, AMissingOrUnseenTemplateIsNotFoundAndABadConfigIsRefused) {
  auto missing = Launch("t1", {{"entrypoint", {"true"}}}, "nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("template nope not found"), std::string::npos);

  // A template in a workspace "other" has no role in is one they cannot name.
  auto team = cluster_.AddTeam();
  ASSERT_TRUE(team.ok()) << team.status().ToString();
  ASSERT_TRUE(Save("team-only", "resources:\n  priority: 5\n", 2).ok());
  auto unseen = Launch("t2", {{"entrypoint", {"true"}}}, "team-only", events::TASK_TYPE_COMMAND,
                       "user:other");
  EXPECT_EQ(unseen.status().code(), StatusCode::kNotFound) << unseen.status().ToString();
  auto seen = Launch("t3", {{"entrypoint", {"true"}}}, "team-only", events::TASK_TYPE_COMMAND,
                     "user:alice");
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->resources().priority(), 5);
  // Nor can they delete it: it is not there for them (Determined's 404), not forbidden.
  auto deleted = cluster_.Run(DeleteTemplate{"team-only"}, "", "user:other");
  EXPECT_EQ(deleted.status().code(), StatusCode::kNotFound) << deleted.status().ToString();

  // What the configuration says is read on the write side too, and named by field.
  auto bad = Launch("t4", {{"entrypoint", {"true"}}, {"resources", {{"slots", "many"}}}}, "");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("config.resources.slots"), std::string::npos)
      << bad.status().ToString();
  EXPECT_FALSE(cluster_.state.tasks.count("t4"));
}

TEST_F(TemplateDeciderTest, ANotebookLaunchedWithATemplateAndNoConfigTakesTheTemplate) {
  ASSERT_TRUE(Save("big", "resources:\n  slots: 2\n").ok());
  SubmitTask submit;
  submit.task_id = "nb1";
  submit.spec.set_task_type(events::TASK_TYPE_NOTEBOOK);
  submit.request = SubmitTask::Request{};  // no `config` in the request: "{}"
  submit.request->template_name = "big";
  ASSERT_TRUE(cluster_.Run(submit).ok());
  EXPECT_EQ(cluster_.Task("nb1").resources.slots(), 2);
  submit.task_id = "nb2";
  submit.request->template_name = "";
  ASSERT_TRUE(cluster_.Run(submit).ok());
  EXPECT_EQ(cluster_.Task("nb2").resources.slots(), 1);  // Determined's default for a notebook
}

TEST_F(TemplateDeciderTest, AnEmptyJobQueueRequestChangesNothing) {
  auto decision = cluster_.Run(UpdateJobs{});
  ASSERT_TRUE(decision.ok()) << decision.status().ToString();
  EXPECT_TRUE(decision->events.empty());
}

TEST_F(TemplateDeciderTest, ATensorBoardIsNamedAfterItsExperimentsAndShowsThem) {
  auto board = Launch("tb1", json::object(), "", events::TASK_TYPE_TENSORBOARD);
  ASSERT_TRUE(board.ok()) << board.status().ToString();
  EXPECT_EQ(board->spec().description(), "TensorBoard (Experiments 3)");
  ASSERT_EQ(board->spec().tensorboard_logdirs_size(), 1);
  json config = json::parse(board->config_json());
  EXPECT_EQ(config["experimentIds"], json::array({3}));
  EXPECT_EQ(config["trialIds"], json::array());
}

TEST_F(TemplateDeciderTest, ATemplateNameFollowsTheIdRuleAndATemplateTakesNoTemplate) {
  Status bad_name = Save("a b", "resources:\n  priority: 5\n");
  EXPECT_EQ(bad_name.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_name.message().find(SafeIdRuleText()), std::string::npos) << bad_name.ToString();
  EXPECT_EQ(Save("nested", "template: other\n").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(cluster_.state.templates.empty());
}

}  // namespace
}  // namespace cairn::commands
