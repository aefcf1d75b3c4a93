// An experiment's configuration made on the write side (commands::CreateExperiment::Request,
// ContinueExperiment's override): merged under its template as the decision state holds it when
// the command is decided, with the master's checkpoint storage and the edge's seed filled in only
// where the configuration has none, its entrypoint checked against the model definition and its
// project resolved by name as the user may see it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "commands/decider.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using nlohmann::json;

constexpr const char* kConfig = R"(
name: mnist
entrypoint: model_def:Trial
hyperparameters:
  lr: 0.1
searcher:
  name: single
  metric: loss
  max_length: {batches: 100}
)";

class ExperimentRequestTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cluster_.Run(testing::Agent("a1", 4)).ok()); }

  static CreateExperiment Create(const std::string& yaml, const std::string& template_name = "") {
    CreateExperiment command;
    command.created.set_owner("test");
    command.created.set_context_digest("sha256:00");
    auto& request = command.request.emplace();
    request.config_yaml = yaml;
    request.template_name = template_name;
    request.context_paths = {"data.py", "model_def.py"};
    request.default_checkpoint_dir = "/var/cairn/checkpoints";
    request.seed_if_unset = 4242;
    return command;
  }

  Result<events::ExperimentCreated> Run(const CreateExperiment& command,
                                        const std::string& actor = "user:test") {
    CAIRN_RETURN_IF_ERROR(cluster_.Run(command, "", actor).status());
    auto created = cluster_.Last(events::Envelope::kExperimentCreated);
    if (created.size() != 1) return Status::Internal("no ExperimentCreated");
    return created[0].experiment_created();
  }

  Status SaveTemplate(const std::string& name, const std::string& yaml) {
    commands::SaveTemplate save{name, yaml, 1, SaveTemplate::Mode::kCreate};
    if (cluster_.state.templates.count(name)) save.mode = SaveTemplate::Mode::kUpdate;
    return cluster_.Run(save).status();
  }

  static json Config(const events::ExperimentCreated& created) {
    return json::parse(created.config_json());
  }

  testing::Cluster cluster_;
};

TEST_F(ExperimentRequestTest, TheTemplateIsTheOneTheLogHoldsWhenTheExperimentIsDecided) {
  ASSERT_TRUE(SaveTemplate("base", "resources:\n  priority: 7\nmax_restarts: 2\n").ok());
  auto first = Run(Create(kConfig, "base"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->template_name(), "base");
  EXPECT_EQ(first->resources().priority(), 7);
  EXPECT_EQ(Config(*first)["max_restarts"], 2);
  EXPECT_EQ(first->original_config(), kConfig);  // what the user sent, unmerged

  // The config's own `template:` names it too, and the template as changed since is what counts.
  ASSERT_TRUE(SaveTemplate("base", "resources:\n  priority: 9\n").ok());
  auto second = Run(Create(std::string(kConfig) + "template: base\n"));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->template_name(), "base");
  EXPECT_EQ(second->resources().priority(), 9);

  // The user's value wins over the template's.
  auto own = Run(Create(std::string(kConfig) + "resources:\n  priority: 3\n", "base"));
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->resources().priority(), 3);

  auto missing = Run(Create(kConfig, "nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
}

TEST_F(ExperimentRequestTest, CheckpointStorageAndSeedAreFilledOnlyWhereTheConfigHasNone) {
  auto defaulted = Run(Create(kConfig));
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(Config(*defaulted)["checkpoint_storage"]["host_path"], "/var/cairn/checkpoints");
  EXPECT_EQ(defaulted->seed(), 4242u);
  EXPECT_EQ(Config(*defaulted)["reproducibility"]["experiment_seed"], 4242);

  auto own = Run(Create(std::string(kConfig) +
                        "reproducibility:\n  experiment_seed: 11\n"
                        "checkpoint_storage:\n  type: shared_fs\n  host_path: /data/ckpt\n"));
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->seed(), 11u);
  EXPECT_EQ(Config(*own)["checkpoint_storage"]["host_path"], "/data/ckpt");

  auto relative = Run(
      Create(std::string(kConfig) + "checkpoint_storage:\n  type: shared_fs\n  host_path: ckpt\n"));
  EXPECT_EQ(relative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(relative.status().message().find("checkpoint_storage.host_path"), std::string::npos)
      << relative.status().ToString();
}

TEST_F(ExperimentRequestTest, StorageComesFromTheConfigThenItsWorkspaceThenTheMaster) {
  const json master = {{"type", "s3"},
                       {"bucket", "cluster-ckpt"},
                       {"prefix", nullptr},
                       {"endpoint_url", nullptr},
                       {"access_key", nullptr},
                       {"secret_key", nullptr},
                       {"save_experiment_best", 0},
                       {"save_trial_best", 1},
                       {"save_trial_latest", 1}};
  auto with_master_default = [&](const std::string& yaml) {
    CreateExperiment command = Create(yaml);
    command.request->default_checkpoint_storage = master;
    return command;
  };
  // Uncategorized has no storage of its own: the master's.
  auto inherited = Run(with_master_default(kConfig));
  ASSERT_TRUE(inherited.ok()) << inherited.status().ToString();
  EXPECT_EQ(Config(*inherited)["checkpoint_storage"], master);

  // A workspace's storage overrides the master's for its experiments.
  CreateWorkspace team{"team", "", ""};
  team.checkpoint_storage_json =
      R"({"type":"azure","container":"team-ckpt","connection_string":"UseDevelopmentStorage=true",)"
      R"("save_experiment_best":0,"save_trial_best":2,)"
      R"("save_trial_latest":1})";
  ASSERT_TRUE(cluster_.Run(team).ok());
  ASSERT_TRUE(
      cluster_.Run(CreateProject{cluster_.state.tenancy.last_workspace_id, "vision", ""}).ok());
  auto in_team =
      Run(with_master_default(std::string(kConfig) + "workspace: team\nproject: vision\n"));
  ASSERT_TRUE(in_team.ok()) << in_team.status().ToString();
  EXPECT_EQ(Config(*in_team)["checkpoint_storage"]["container"], "team-ckpt");
  EXPECT_EQ(Config(*in_team)["checkpoint_storage"]["save_trial_best"], 2);

  // The config's own storage wins over both.
  auto own =
      Run(with_master_default(std::string(kConfig) +
                              "workspace: team\nproject: vision\n"
                              "checkpoint_storage:\n  type: shared_fs\n  host_path: /own\n"));
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(Config(*own)["checkpoint_storage"]["host_path"], "/own");

  // Cleared, the workspace's experiments take the master's again.
  UpdateWorkspace clear;
  clear.workspace_id = cluster_.state.tenancy.last_workspace_id;
  clear.checkpoint_storage_json = "";
  ASSERT_TRUE(cluster_.Run(clear).ok());
  EXPECT_TRUE(cluster_.state.tenancy.FindWorkspace("team")->checkpoint_storage_json.empty());
  auto after =
      Run(with_master_default(std::string(kConfig) + "workspace: team\nproject: vision\n"));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(Config(*after)["checkpoint_storage"], master);
}

TEST_F(ExperimentRequestTest, TheEntrypointMustBeInTheModelDefinitionAndConfigErrorsComeFirst) {
  auto elsewhere = Create(kConfig);
  elsewhere.request->context_paths = {"train.py"};
  auto refused = Run(elsewhere);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("the model definition has no model_def.py"),
            std::string::npos)
      << refused.status().ToString();

  std::string in_package = kConfig;
  in_package.replace(in_package.find("model_def:Trial"), 15, "pkg.model:Trial");
  auto package = Create(in_package);
  package.request->context_paths = {"pkg/model/__init__.py"};
  auto packaged = Run(package);
  EXPECT_TRUE(packaged.ok()) << packaged.status().ToString();

  auto none = Create(kConfig);
  none.request->context_paths.clear();
  auto no_files = Run(none);
  EXPECT_NE(no_files.status().message().find("modelDefinition is required"), std::string::npos)
      << no_files.status().ToString();

  // Without files and with a broken configuration, the configuration's error is the one shown.
  none.request->config_yaml = std::string(kConfig) + "max_restarts: many\n";
  auto broken = Run(none);
  EXPECT_NE(broken.status().message().find("max_restarts"), std::string::npos)
      << broken.status().ToString();
  EXPECT_EQ(cluster_.state.last_experiment_id, 1);
}

TEST_F(ExperimentRequestTest, TheProjectIsFoundByNameOnlyInAWorkspaceTheUserMaySee) {
  auto team = cluster_.AddTeam();
  ASSERT_TRUE(team.ok()) << team.status().ToString();
  ASSERT_TRUE(cluster_.Run(CreateProject{2, "vision", ""}).ok());
  const std::string named = std::string(kConfig) + "workspace: team\nproject: vision\n";

  auto seen = Run(Create(named), "user:alice");
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->project_id(), cluster_.state.tenancy.FindProject(2, "vision")->id);
  EXPECT_EQ(seen->workspace_id(), 2);

  auto unseen = Run(Create(named), "user:other");
  EXPECT_EQ(unseen.status().code(), StatusCode::kNotFound) << unseen.status().ToString();
  EXPECT_NE(unseen.status().message().find("team/vision"), std::string::npos);

  auto no_project = Run(Create(std::string(kConfig) + "workspace: team\nproject: nope\n"));
  EXPECT_EQ(no_project.status().code(), StatusCode::kNotFound);

  // An explicit projectId wins over the names.
  auto by_id = Create(named);
  by_id.request->project_id = 1;
  auto uncategorized = Run(by_id);
  ASSERT_TRUE(uncategorized.ok()) << uncategorized.status().ToString();
  EXPECT_EQ(uncategorized->project_id(), 1);
}

TEST_F(ExperimentRequestTest, AContinuedExperimentTakesItsOverrideOverItsOwnConfiguration) {
  auto created = Run(Create(kConfig));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const int64_t id = created->experiment_id();
  ASSERT_TRUE(cluster_.Run(ExperimentAction{id, ExperimentAction::Kind::kKill}).ok());

  auto moved = cluster_.Run(ContinueExperiment{id, "entrypoint: other:Trial\n"});
  EXPECT_EQ(moved.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(moved.status().message().find("entrypoint: cannot change"), std::string::npos)
      << moved.status().ToString();

  auto longer = cluster_.Run(ContinueExperiment{id, "searcher:\n  max_length: {batches: 300}\n"});
  ASSERT_TRUE(longer.ok()) << longer.status().ToString();
  auto continued = cluster_.Last(events::Envelope::kExperimentContinued);
  ASSERT_EQ(continued.size(), 1u);
  const json config = json::parse(continued[0].experiment_continued().config_json());
  EXPECT_EQ(config["searcher"]["max_length"]["batches"], 300);
  EXPECT_EQ(config["hyperparameters"], Config(*created)["hyperparameters"]);
  EXPECT_EQ(config["checkpoint_storage"]["host_path"], "/var/cairn/checkpoints");
}

}  // namespace
}  // namespace cairn::commands
