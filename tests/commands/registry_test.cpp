// The model registry on the write side: names, versions pointing at live checkpoints, archive,
// who may change and delete what, and the checkpoints registered versions keep.
#include <gtest/gtest.h>

#include "commands/registry/registry_decider.h"
#include "tests/commands/command_builders.h"
#include "tests/commands/scheduler_support.h"

namespace cairn::commands::testing {
namespace {

using scheduler_testing::Contains;

// A cluster with workspace 2 "team" (the admin "test" made it), users alice (an Editor of team),
// bob (a Viewer of team) and wanda (team's WorkspaceAdmin), and checkpoints "ck-1" (of experiment
// 1, in Uncategorized), "ck-team" (experiment 2, in team) and "ck-gone" (deleted).
class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto team = cluster.AddTeam();
    ASSERT_TRUE(team.ok()) << team.status().ToString();
    alice = team->alice;
    bob = team->bob;
    wanda = team->wanda;
    // Seeded, as the registry only reads them: their own events are tested in experiment_flow.
    cluster.state.experiments[1].experiment_id = 1;
    cluster.state.experiments[2].experiment_id = 2;
    cluster.state.experiments[2].workspace_id = 2;
    cluster.state.checkpoints["ck-1"] = CheckpointRecord{"ck-1", 1, 1, 100, 10, false};
    cluster.state.checkpoints["ck-team"] = CheckpointRecord{"ck-team", 2, 2, 100, 10, false};
    cluster.state.checkpoints["ck-gone"] = CheckpointRecord{"ck-gone", 1, 1, 50, 10, true};
  }

  Result<Decision> RunAs(const std::string& user, Command command) {
    return cluster.Run(std::move(command), "", "user:" + user);
  }

  // Creates a model as `user` and returns its id.
  int32_t Create(const std::string& user, const std::string& name, int32_t workspace_id = 1) {
    CreateModel command;
    command.name = name;
    command.workspace_id = workspace_id;
    auto decision = RunAs(user, command);
    EXPECT_TRUE(decision.ok()) << decision.status().ToString();
    return cluster.state.registry.FindModel(name)->model_id;
  }

  Status Register(const std::string& user, int32_t model_id, const std::string& uuid) {
    RegisterModelVersion command;
    command.model_id = model_id;
    command.checkpoint_uuid = uuid;
    return RunAs(user, command).status();
  }

  Cluster cluster;
  int32_t alice = 0, bob = 0, wanda = 0;
};

TEST_F(RegistryTest, AModelIsCreatedWithItsOwnerAndItsNameIsUniqueAcrossTheCluster) {
  CreateModel command;
  command.name = "mnist";
  command.description = "digits";
  command.labels = {"vision"};
  command.metadata_json = R"({"framework":"torch"})";
  auto decision = RunAs("alice", command);
  ASSERT_TRUE(decision.ok()) << decision.status().ToString();
  EXPECT_EQ(decision->entity_id, "model/1");
  auto created = cluster.Last(events::Envelope::kModelCreated);
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0].model_created().username(), "alice");
  EXPECT_EQ(created[0].model_created().user_id(), alice);
  EXPECT_EQ(created[0].model_created().workspace_id(), 1);
  EXPECT_EQ(created[0].model_created().labels(0), "vision");
  // The same name again, in another workspace too, is taken.
  command.workspace_id = 2;
  EXPECT_EQ(RunAs("alice", command).status().code(), StatusCode::kAlreadyExists);
  command.name = "mnist-2";
  ASSERT_TRUE(RunAs("alice", command).ok());
  EXPECT_EQ(cluster.Last(events::Envelope::kModelCreated)[0].model_created().model_id(), 2);
}

TEST_F(RegistryTest, BadNamesTextsAndMetadataAreRefusedWithoutAnEvent) {
  const size_t events_before = cluster.all_events.size();
  for (const std::string& name :
       {std::string(), std::string("   "), std::string("42"), std::string("a/b"),
        std::string("tab\there"), std::string(256, 'm')}) {
    CreateModel command;
    command.name = name;
    EXPECT_EQ(RunAs("alice", command).status().code(), StatusCode::kInvalidArgument) << name;
  }
  CreateModel command;
  command.name = "ok";
  command.metadata_json = "[1]";
  Status refused = RunAs("alice", command).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.message(), "metadata")) << refused.ToString();
  command.metadata_json = "{}";
  command.labels = {""};
  EXPECT_EQ(RunAs("alice", command).status().code(), StatusCode::kInvalidArgument);
  command.labels = {};
  command.description = std::string(9000, 'd');
  EXPECT_EQ(RunAs("alice", command).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.all_events.size(), events_before);
}

TEST_F(RegistryTest, AVersionPointsAtACheckpointThatExistsAndWasNotDeleted) {
  const int32_t model = Create("alice", "m");
  EXPECT_EQ(Register("alice", model, "no-such").code(), StatusCode::kNotFound);
  Status gone = Register("alice", model, "ck-gone");
  EXPECT_EQ(gone.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(gone.message(), "deleted")) << gone.ToString();
  EXPECT_EQ(Register("alice", 99, "ck-1").code(), StatusCode::kNotFound);
  EXPECT_FALSE(cluster.state.IsCheckpointRegistered("ck-1"));

  ASSERT_TRUE(Register("alice", model, "ck-1").ok());
  auto first = cluster.Last(events::Envelope::kModelVersionRegistered);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].model_version_registered().version(), 1);
  EXPECT_EQ(first[0].model_version_registered().checkpoint_uuid(), "ck-1");
  ASSERT_TRUE(Register("alice", model, "ck-1").ok());
  EXPECT_EQ(cluster.Last(events::Envelope::kModelVersionRegistered)[0]
                .model_version_registered()
                .version(),
            2);
  EXPECT_TRUE(cluster.state.IsCheckpointRegistered("ck-1"));
  // A deleted version's number is not given again.
  ASSERT_TRUE(RunAs("alice", DeleteModelVersion{model, 2}).ok());
  EXPECT_EQ(RunAs("alice", DeleteModelVersion{model, 2}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(Register("alice", model, "ck-1").ok());
  EXPECT_EQ(cluster.Last(events::Envelope::kModelVersionRegistered)[0]
                .model_version_registered()
                .version(),
            3);
}

TEST_F(RegistryTest, ACheckpointStaysRegisteredWhileAnyVersionPointsAtIt) {
  const int32_t first = Create("alice", "first");
  const int32_t second = Create("alice", "second");
  ASSERT_TRUE(Register("alice", first, "ck-1").ok());
  ASSERT_TRUE(Register("alice", second, "ck-1").ok());
  ASSERT_TRUE(RunAs("alice", DeleteModelVersion{first, 1}).ok());
  EXPECT_TRUE(cluster.state.IsCheckpointRegistered("ck-1"));
  ASSERT_TRUE(RunAs("alice", DeleteModel{second}).ok());
  EXPECT_FALSE(cluster.state.IsCheckpointRegistered("ck-1"));
  EXPECT_EQ(cluster.state.registry.FindModel("second"), nullptr);
  // Its name is free again.
  Create("alice", "second");
}

TEST_F(RegistryTest, AnArchivedModelTakesNoNewVersionUntilUnarchived) {
  const int32_t model = Create("alice", "m");
  UpdateModel archive;
  archive.model_id = model;
  archive.archived = true;
  ASSERT_TRUE(RunAs("alice", archive).ok());
  ASSERT_EQ(cluster.Last(events::Envelope::kModelUpdated).size(), 1u);
  // Archiving it again changes nothing.
  ASSERT_TRUE(RunAs("alice", archive).ok());
  EXPECT_TRUE(cluster.last_events.empty());
  Status refused = Register("alice", model, "ck-1");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(refused.message(), "archived")) << refused.ToString();
  archive.archived = false;
  ASSERT_TRUE(RunAs("alice", archive).ok());
  EXPECT_TRUE(Register("alice", model, "ck-1").ok());
}

TEST_F(RegistryTest, ARenameKeepsNamesUniqueAndFreesTheOldOne) {
  const int32_t model = Create("alice", "old");
  Create("alice", "taken");
  UpdateModel rename;
  rename.model_id = model;
  rename.name = "taken";
  EXPECT_EQ(RunAs("alice", rename).status().code(), StatusCode::kAlreadyExists);
  rename.name = "new";
  rename.description = "renamed";
  ASSERT_TRUE(RunAs("alice", rename).ok());
  auto updated = cluster.Last(events::Envelope::kModelUpdated);
  ASSERT_EQ(updated.size(), 1u);
  EXPECT_EQ(updated[0].model_updated().name(), "new");
  EXPECT_EQ(updated[0].model_updated().description(), "renamed");
  EXPECT_FALSE(updated[0].model_updated().has_archived());
  EXPECT_EQ(cluster.state.registry.FindModel("old"), nullptr);
  Create("alice", "old");
}

TEST_F(RegistryTest, OnlyTheOwnerOrAnAdminChangesOrDeletesAModel) {
  const int32_t model = Create("alice", "alices", 2);
  ASSERT_TRUE(Register("alice", model, "ck-team").ok());
  UpdateModel change;
  change.model_id = model;
  change.description = "mine now";
  // An Editor may create models but not change anyone else's.
  RUN_OK(cluster, (ChangeRoles{{{bob, 2, events::ROLE_EDITOR}}, false}));
  Status refused = RunAs("bob", change).status();
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(refused.message(), "PERMISSION_TYPE_DELETE_OTHER_USER_MODEL_REGISTRY"))
      << refused.ToString();
  EXPECT_EQ(RunAs("bob", DeleteModel{model}).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(RunAs("bob", DeleteModelVersion{model, 1}).status().code(),
            StatusCode::kPermissionDenied);
  UpdateModelVersion note;
  note.model_id = model;
  note.version = 1;
  note.notes = "by bob";
  EXPECT_EQ(RunAs("bob", note).status().code(), StatusCode::kPermissionDenied);
  // The owner, the workspace's admin and a cluster admin may.
  EXPECT_TRUE(RunAs("alice", change).ok());
  EXPECT_TRUE(RunAs("wanda", note).ok());
  EXPECT_TRUE(RunAs("test", change).ok());
  EXPECT_TRUE(RunAs("wanda", DeleteModel{model}).ok());
}

TEST_F(RegistryTest, CreatingNeedsARoleThatCreatesWorkAndRegisteringOneThatSeesTheCheckpoint) {
  CreateModel command;
  command.name = "bobs";
  command.workspace_id = 2;
  Status refused = RunAs("bob", command).status();
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(refused.message(), "PERMISSION_TYPE_CREATE_MODEL_REGISTRY"))
      << refused.ToString();
  // In Uncategorized every user is an Editor; the team's checkpoint is not bob's to see.
  command.workspace_id = 1;
  ASSERT_TRUE(RunAs("bob", command).ok());
  const int32_t model = cluster.state.registry.FindModel("bobs")->model_id;
  EXPECT_EQ(Register("other", model, "ck-team").code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Register("bob", model, "ck-team").ok());
  // Nor may a model move into a workspace where its owner creates nothing.
  RUN_OK(cluster, (CreateWorkspace{"closed", "", ""}));
  UpdateModel move;
  move.model_id = model;
  move.workspace_id = 3;
  EXPECT_EQ(RunAs("bob", move).status().code(), StatusCode::kPermissionDenied);
  move.workspace_id = 2;
  RUN_OK(cluster, (ChangeRoles{{{bob, 2, events::ROLE_EDITOR}}, false}));
  ASSERT_TRUE(RunAs("bob", move).ok());
  auto moved = cluster.Last(events::Envelope::kModelUpdated);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].model_updated().workspace_id(), 2);
  EXPECT_EQ(moved[0].model_updated().from_workspace_id(), 1);
  EXPECT_EQ(cluster.state.registry.FindModel(model)->workspace_id, 2);
}

TEST_F(RegistryTest, ReplayFoldsTheSameRegistry) {
  const int32_t model = Create("alice", "m");
  ASSERT_TRUE(Register("alice", model, "ck-1").ok());
  ASSERT_TRUE(Register("alice", model, "ck-1").ok());
  ASSERT_TRUE(RunAs("alice", DeleteModelVersion{model, 1}).ok());
  RegistryState replayed;
  for (const auto& event : cluster.all_events) ApplyRegistryEvent(replayed, event);
  const ModelRecord* folded = replayed.FindModel("m");
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->last_version, 2);
  ASSERT_EQ(folded->versions.size(), 1u);
  EXPECT_EQ(folded->versions.at(2).checkpoint_uuid, "ck-1");
  EXPECT_EQ(replayed.last_version_id, 2);
  EXPECT_TRUE(replayed.IsCheckpointRegistered("ck-1"));
}

}  // namespace
}  // namespace cairn::commands::testing

namespace cairn::commands::testing {
namespace {

// A workspace holding models is not deleted: their names stay reserved cluster-wide, and nobody
// could see or remove them afterwards.
TEST_F(RegistryTest, AWorkspaceHoldingModelsIsNotDeleted) {
  cluster.state.experiments[2].deleted = true;  // a deleted experiment holds nothing back
  const int32_t model = Create("alice", "team-model", 2);
  EXPECT_EQ(cluster.Run(DeleteWorkspace{2}).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(RunAs("alice", DeleteModel{model}).ok());
  EXPECT_TRUE(cluster.Run(DeleteWorkspace{2}).ok());
}

}  // namespace
}  // namespace cairn::commands::testing
