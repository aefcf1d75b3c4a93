// Which events a person reads on the event stream (api/event_visibility.h), on plain values:
// work by workspace (learnt from the stream, or looked up for work older than the stream), the
// caller's own sessions, the cluster's events, and roles that change while the stream runs.
#include "api/event_visibility.h"

#include <gtest/gtest.h>

#include <map>

namespace cairn::api {
namespace {

constexpr int32_t kCaller = 5;
constexpr int32_t kSomeoneElse = 9;
constexpr int32_t kTeam = 2;
constexpr int32_t kOther = 3;
constexpr uint64_t kLiveFrom = 100;  // the log's end when the stream opened

class EventVisibilityTest : public ::testing::Test {
 protected:
  EventVisibilityTest() {
    caller_.id = kCaller;
    caller_.username = "alice";
    // Work the projections know from before the stream's start.
    older_tasks_["old-team-task"] = kTeam;
    older_tasks_["old-shared-task"] = 1;
    older_experiments_[7] = kOther;
  }

  EventVisibility Make() {
    EventVisibility::Lookups lookups;
    lookups.task_workspace = [this](const std::string& task_id) -> std::optional<int32_t> {
      ++lookups_made_;
      auto found = older_tasks_.find(task_id);
      if (found == older_tasks_.end()) return std::nullopt;
      return found->second;
    };
    lookups.experiment_workspace = [this](int64_t experiment_id) -> std::optional<int32_t> {
      ++lookups_made_;
      auto found = older_experiments_.find(experiment_id);
      if (found == older_experiments_.end()) return std::nullopt;
      return found->second;
    };
    return EventVisibility(tenancy_, caller_, kLiveFrom, std::move(lookups));
  }

  events::Envelope At(uint64_t offset, events::Envelope event) {
    event.set_offset(offset);
    return event;
  }
  events::Envelope Submitted(uint64_t offset, const std::string& task_id, int32_t workspace_id) {
    events::Envelope event;
    event.mutable_task_submitted()->set_task_id(task_id);
    event.mutable_task_submitted()->set_workspace_id(workspace_id);
    return At(offset, event);
  }
  events::Envelope Exited(uint64_t offset, const std::string& task_id) {
    events::Envelope event;
    event.mutable_task_exited()->set_task_id(task_id);
    return At(offset, event);
  }
  events::Envelope Granted(uint64_t offset, int32_t user_id, int32_t workspace_id) {
    events::Envelope event;
    event.mutable_role_assigned()->set_user_id(user_id);
    event.mutable_role_assigned()->set_workspace_id(workspace_id);
    event.mutable_role_assigned()->set_role(events::ROLE_VIEWER);
    return At(offset, event);
  }
  events::Envelope WorkspaceCreated(uint64_t offset, int32_t workspace_id) {
    events::Envelope event;
    event.mutable_workspace_created()->set_workspace_id(workspace_id);
    event.mutable_workspace_created()->set_name("ws-" + std::to_string(workspace_id));
    event.mutable_workspace_created()->set_owner_user_id(kSomeoneElse);
    return At(offset, event);
  }

  commands::TenancyState tenancy_;
  commands::UserRecord caller_;
  std::map<std::string, int32_t> older_tasks_;
  std::map<int64_t, int32_t> older_experiments_;
  int lookups_made_ = 0;
};

TEST_F(EventVisibilityTest, WorkIsShownOnlyInWorkspacesWhereTheCallerHoldsARole) {
  EventVisibility visibility = Make();
  EXPECT_FALSE(visibility.Visible(WorkspaceCreated(10, kTeam)));
  EXPECT_FALSE(visibility.Visible(Submitted(11, "team-task", kTeam)));
  EXPECT_FALSE(visibility.Visible(Exited(12, "team-task")));
  // Uncategorized (0 in older events) is everyone's.
  EXPECT_TRUE(visibility.Visible(Submitted(13, "shared-task", 0)));
  EXPECT_TRUE(visibility.Visible(Exited(14, "shared-task")));
  // Work from before the stream: its workspace is asked for once, then remembered.
  EXPECT_FALSE(visibility.Visible(Exited(15, "old-team-task")));
  EXPECT_TRUE(visibility.Visible(Exited(16, "old-shared-task")));
  EXPECT_TRUE(visibility.Visible(Exited(17, "old-shared-task")));
  EXPECT_EQ(lookups_made_, 2);
  // Unknown work stays hidden.
  EXPECT_FALSE(visibility.Visible(Exited(18, "never-seen")));
  // Experiments and their trials follow the experiment's workspace.
  events::Envelope trial;
  trial.mutable_trial_created()->set_experiment_id(7);
  EXPECT_FALSE(visibility.Visible(At(19, trial)));
  events::Envelope created;
  created.mutable_experiment_created()->set_experiment_id(8);
  created.mutable_experiment_created()->set_job_id("exp-8-job");
  created.mutable_experiment_created()->set_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(20, created)));
  trial.mutable_trial_created()->set_experiment_id(8);
  EXPECT_TRUE(visibility.Visible(At(21, trial)));
  events::Envelope moved;
  moved.mutable_job_queue_changed()->set_job_id("exp-8-job");
  EXPECT_TRUE(visibility.Visible(At(22, moved)));
}

TEST_F(EventVisibilityTest, ModelsAndTheirVersionsFollowTheModelsWorkspace) {
  EventVisibility visibility = Make();
  events::Envelope created;
  created.mutable_model_created()->set_model_id(1);
  created.mutable_model_created()->set_workspace_id(kTeam);
  EXPECT_FALSE(visibility.Visible(At(1, created)));
  created.mutable_model_created()->set_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(2, created)));
  events::Envelope registered;
  registered.mutable_model_version_registered()->set_workspace_id(kTeam);
  EXPECT_FALSE(visibility.Visible(At(3, registered)));
  events::Envelope updated;
  updated.mutable_model_version_updated()->set_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(4, updated)));
  events::Envelope deleted;
  deleted.mutable_model_version_deleted()->set_workspace_id(kOther);
  EXPECT_FALSE(visibility.Visible(At(5, deleted)));
  deleted.Clear();
  deleted.mutable_model_deleted()->set_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(6, deleted)));
  // A move is seen from both sides: leaving a visible workspace, and arriving in one.
  events::Envelope moved;
  moved.mutable_model_updated()->set_workspace_id(kTeam);
  moved.mutable_model_updated()->set_from_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(7, moved)));
  moved.mutable_model_updated()->set_from_workspace_id(kOther);
  EXPECT_FALSE(visibility.Visible(At(8, moved)));
  moved.mutable_model_updated()->clear_from_workspace_id();
  moved.mutable_model_updated()->set_workspace_id(1);
  EXPECT_TRUE(visibility.Visible(At(9, moved)));
}

TEST_F(EventVisibilityTest, SessionsLoginsAndRefusalsAreOnlyTheCallersOwn) {
  EventVisibility visibility = Make();
  events::Envelope session;
  session.mutable_session_started()->set_user_id(kSomeoneElse);
  EXPECT_FALSE(visibility.Visible(At(1, session)));
  session.mutable_session_started()->set_user_id(kCaller);
  EXPECT_TRUE(visibility.Visible(At(2, session)));
  events::Envelope failed;
  failed.mutable_login_failed()->set_username("bob");
  EXPECT_FALSE(visibility.Visible(At(3, failed)));
  failed.mutable_login_failed()->set_username("alice");
  EXPECT_TRUE(visibility.Visible(At(4, failed)));
  events::Envelope refused;
  refused.set_actor("user:bob");
  refused.mutable_access_denied()->set_reason("no");
  EXPECT_FALSE(visibility.Visible(At(5, refused)));
  refused.set_actor("user:alice");
  EXPECT_TRUE(visibility.Visible(At(6, refused)));
  // The cluster is everyone's.
  events::Envelope agent;
  agent.mutable_agent_registered()->set_agent_id("a1");
  EXPECT_TRUE(visibility.Visible(At(7, agent)));
  // A payload without a rule (here: one this build does not know) is hidden.
  EXPECT_FALSE(visibility.Visible(At(8, events::Envelope())));
}

TEST_F(EventVisibilityTest, ARoleGrantedWhileTheStreamRunsCountsFromItsEventOn) {
  EventVisibility visibility = Make();
  // Before the stream opened: the snapshot already holds what these did, so they are not folded
  // again (a grant there would show in the snapshot; this one is not in it). The caller sees
  // their own role's event all the same.
  EXPECT_TRUE(visibility.Visible(Granted(50, kCaller, kOther)));
  EXPECT_FALSE(visibility.Visible(Submitted(51, "other-task", kOther)));
  // Live: the workspace appears, the caller is granted a role, and its work shows from then on.
  EXPECT_FALSE(visibility.Visible(WorkspaceCreated(kLiveFrom, kTeam)));
  EXPECT_FALSE(visibility.Visible(Submitted(kLiveFrom + 1, "team-task", kTeam)));
  EXPECT_TRUE(visibility.Visible(Granted(kLiveFrom + 2, kCaller, kTeam))) << "the caller's own";
  EXPECT_TRUE(visibility.Visible(Exited(kLiveFrom + 3, "team-task")));
  events::Envelope removed;
  removed.mutable_role_removed()->set_user_id(kCaller);
  removed.mutable_role_removed()->set_workspace_id(kTeam);
  EXPECT_TRUE(visibility.Visible(At(kLiveFrom + 4, removed)));
  EXPECT_FALSE(visibility.Visible(Submitted(kLiveFrom + 5, "team-task-2", kTeam)));
  // Someone else's role in a workspace the caller cannot see stays hidden.
  EXPECT_FALSE(visibility.Visible(Granted(kLiveFrom + 6, kSomeoneElse, kOther)));
}

}  // namespace
}  // namespace cairn::api
