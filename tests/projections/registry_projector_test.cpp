// The registry projection on plain values: models and versions as their events leave them, times
// from the envelopes, renames, moves and deletions; and its digest over the busy workload.
#include <gtest/gtest.h>

#include <set>

#include "events/envelope_util.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"

namespace cairn {
namespace {

using testing::Fold;
using testing::History;

views::ModelView MustGetModel(ProjectionState& state, const std::string& name) {
  auto model = state.GetModelByName(name);
  EXPECT_TRUE(model.ok() && model->has_value()) << name;
  return model.ok() && *model ? **model : views::ModelView();
}

TEST(RegistryProjectorTest, AModelAndItsVersionsAsTheirEventsLeaveThem) {
  History history;
  history.CreateModel(1, "mnist", "digits");
  const int64_t created = history.time_of(history.last_offset());
  history.RegisterVersion(1, 1, 1, "ckpt-a");
  history.RegisterVersion(1, 2, 2, "ckpt-b");
  events::ModelVersionUpdated note;
  note.set_model_id(1);
  note.set_version(1);
  note.set_notes("baseline");
  history.UpdateVersion(note);
  const int64_t noted = history.time_of(history.last_offset());
  ProjectionState state = Fold(history);

  views::ModelView model = MustGetModel(state, "mnist");
  EXPECT_EQ(model.id(), 1);
  EXPECT_EQ(model.description(), "digits");
  EXPECT_EQ(model.username(), "alice");
  EXPECT_EQ(model.creation_time_unix_micros(), created);
  EXPECT_EQ(model.last_updated_time_unix_micros(), noted);
  EXPECT_EQ(std::vector<int32_t>(model.versions().begin(), model.versions().end()),
            (std::vector<int32_t>{1, 2}));
  auto versions = state.ListModelVersions(1);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].checkpoint_uuid(), "ckpt-a");
  EXPECT_EQ((*versions)[0].notes(), "baseline");
  EXPECT_EQ((*versions)[0].last_updated_time_unix_micros(), noted);
  EXPECT_EQ((*versions)[1].version(), 2);
  EXPECT_EQ((*versions)[1].name(), "v2");
  auto by_id = state.GetModel(1);
  ASSERT_TRUE(by_id.ok() && *by_id);
  EXPECT_EQ((*by_id)->name(), "mnist");
}

TEST(RegistryProjectorTest, RenamesMovesArchivesAndDeletionsLeaveNothingBehind) {
  History history;
  history.CreateModel(1, "old", "");
  history.RegisterVersion(1, 1, 1, "ckpt-a");
  history.RegisterVersion(1, 2, 2, "ckpt-b");
  history.CreateModel(2, "other", "");
  events::ModelUpdated updated;
  updated.set_model_id(1);
  updated.set_workspace_id(3);
  updated.set_from_workspace_id(1);
  updated.set_name("new");
  updated.set_archived(true);
  updated.mutable_labels();  // set, and empty: the labels are cleared
  history.UpdateModel(updated);
  history.DeleteVersion(1, 1);
  ProjectionState state = Fold(history);
  auto old = state.GetModelByName("old");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->has_value());
  views::ModelView model = MustGetModel(state, "new");
  EXPECT_EQ(model.workspace_id(), 3);
  EXPECT_TRUE(model.archived());
  EXPECT_EQ(model.labels_size(), 0);
  EXPECT_EQ(model.metadata_json(), R"({"framework":"torch"})");  // not in the update
  EXPECT_EQ(model.versions_size(), 1);
  auto gone = state.GetModelVersion(1, 1);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());

  history.DeleteModel(1);
  ProjectionState after = Fold(history);
  auto models = after.ListModels();
  ASSERT_TRUE(models.ok());
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0].name(), "other");
  auto versions = after.ListModelVersions(1);
  ASSERT_TRUE(versions.ok());
  EXPECT_TRUE(versions->empty());
  auto name = after.GetModelByName("new");
  ASSERT_TRUE(name.ok());
  EXPECT_FALSE(name->has_value());
}

// The digest and rebuild tests run over AddWorkload: it must hold every registry event.
TEST(RegistryProjectorTest, TheWorkloadHoldsEveryRegistryEvent) {
  History history;
  history.AddWorkload(4, 60);
  std::set<std::string> types;
  for (const auto& event : history.events()) types.insert(PayloadTypeName(event));
  for (const char* type : {"ModelCreated", "ModelUpdated", "ModelDeleted", "ModelVersionRegistered",
                           "ModelVersionUpdated", "ModelVersionDeleted"}) {
    EXPECT_TRUE(types.count(type)) << type;
  }
  ProjectionState state = Fold(history);
  auto models = state.ListModels();
  ASSERT_TRUE(models.ok());
  EXPECT_FALSE(models->empty());
}

}  // namespace
}  // namespace cairn
