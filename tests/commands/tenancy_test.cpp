// Workspaces, projects, roles and pool bindings on the write side: who may do what, what the
// decider refuses, and the scheduler keeping work in the pools its workspace may use.
#include "commands/tenancy/tenancy.h"

#include <gtest/gtest.h>

#include "commands/scheduler/explain.h"
#include "tests/commands/command_builders.h"
#include "tests/commands/scheduler_support.h"

namespace cairn::commands::testing {
namespace {

using scheduler_testing::Contains;

// A cluster with workspace 2 "team" (created by the admin "test"), a pool per team, and users:
// alice (an Editor of team), bob (a Viewer of team), wanda (team's WorkspaceAdmin).
class TenancyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RUN_OK(cluster, Pools({Pool("default"), Pool("gpu")}));
    RUN_OK(cluster, Agent("a1", 4));
    RUN_OK(cluster, Agent("g1", 4, "gpu"));
    auto team = cluster.AddTeam();
    ASSERT_TRUE(team.ok()) << team.status().ToString();
    alice = team->alice;
    bob = team->bob;
    wanda = team->wanda;
  }

  SubmitTask TeamCommand(const std::string& task_id, const std::string& owner) {
    SubmitTask submit = OneSlotSubmit(task_id);
    submit.workspace_id = 2;
    submit.spec.set_user(owner);
    return submit;
  }

  Status RunAs(const std::string& user, Command command) {
    return cluster.Run(std::move(command), "", "user:" + user).status();
  }

  Cluster cluster;
  int32_t alice = 0, bob = 0, wanda = 0;
};

// Each role grants the one before's and more; ModelRegistryViewer only reads models, and the
// strongest role a user holds in a workspace decides there.
TEST(RolePermissionsTest, ModelRegistryViewerReadsModelsAndEveryOtherRoleDoesToo) {
  EXPECT_EQ(PermissionsOf(events::ROLE_MODEL_REGISTRY_VIEWER),
            std::vector<Permission>{Permission::kViewModelRegistry});
  for (events::Role role : {events::ROLE_VIEWER, events::ROLE_EDITOR, events::ROLE_WORKSPACE_ADMIN,
                            events::ROLE_CLUSTER_ADMIN}) {
    EXPECT_TRUE(Grants(role, Permission::kViewModelRegistry)) << RoleName(role);
    EXPECT_TRUE(Grants(role, Permission::kViewWorkspace)) << RoleName(role);
  }
  EXPECT_FALSE(Grants(events::ROLE_MODEL_REGISTRY_VIEWER, Permission::kViewWorkspace));
  EXPECT_EQ(ParseRoleName("ModelRegistryViewer"), events::ROLE_MODEL_REGISTRY_VIEWER);

  TenancyState tenancy;
  UserRecord user;
  user.id = 7;
  tenancy.roles[{7, kEveryWorkspace}] = events::ROLE_MODEL_REGISTRY_VIEWER;
  tenancy.roles[{7, 3}] = events::ROLE_VIEWER;
  EXPECT_EQ(tenancy.RoleIn(user, 3), events::ROLE_VIEWER) << "Viewer outranks it";
  EXPECT_EQ(tenancy.RoleIn(user, 4), events::ROLE_MODEL_REGISTRY_VIEWER);
  EXPECT_TRUE(tenancy.Allows(user, Permission::kViewModelRegistry, 4));
  EXPECT_FALSE(tenancy.Allows(user, Permission::kViewWorkspace, 4));
  EXPECT_EQ(tenancy.RoleIn(user, kUncategorizedWorkspace), events::ROLE_EDITOR)
      << "everyone's Editor role in Uncategorized outranks it";
}

TEST_F(TenancyTest, AViewerMayNotKillAndTheRefusalNamesThePermission) {
  ASSERT_TRUE(RunAs("alice", TeamCommand("t1", "alice")).ok());
  const size_t events_before = cluster.all_events.size();
  Status refused = RunAs("bob", KillTask{"t1", ""});
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(refused.message(), "PERMISSION_TYPE_UPDATE_NSC")) << refused.ToString();
  EXPECT_TRUE(Contains(refused.message(), "Viewer")) << refused.ToString();
  EXPECT_EQ(cluster.all_events.size(), events_before);
  // Nor may a Viewer create work there.
  EXPECT_EQ(RunAs("bob", TeamCommand("t2", "bob")).code(), StatusCode::kPermissionDenied);
}

TEST_F(TenancyTest, OwnersWorkspaceAdminsAndClusterAdminsMayChangeWork) {
  ASSERT_TRUE(RunAs("alice", TeamCommand("t1", "alice")).ok());
  ASSERT_TRUE(RunAs("alice", TeamCommand("t2", "alice")).ok());
  ASSERT_TRUE(RunAs("alice", TeamCommand("t3", "alice")).ok());
  // Another Editor may not change alice's work; its owner, the workspace's admin and a cluster
  // admin may.
  const int32_t eddie = cluster.AddUser("eddie");
  RUN_OK(cluster, (ChangeRoles{{{eddie, 2, events::ROLE_EDITOR}}, false}));
  EXPECT_EQ(RunAs("eddie", KillTask{"t1", ""}).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(RunAs("alice", KillTask{"t1", ""}).ok());
  EXPECT_TRUE(RunAs("wanda", KillTask{"t2", ""}).ok());
  EXPECT_TRUE(RunAs("test", KillTask{"t3", ""}).ok());
  // Outside team, wanda is only what every user is in Uncategorized: an Editor.
  ASSERT_TRUE(RunAs("alice", OneSlotSubmit("u1")).ok());
  EXPECT_EQ(RunAs("wanda", KillTask{"u1", ""}).code(), StatusCode::kPermissionDenied);
}

TEST_F(TenancyTest, RolesAreAssignedByWorkspaceAdminsAndClusterWideOnlyByClusterAdmins) {
  const int32_t carol = cluster.AddUser("carol");
  EXPECT_EQ(RunAs("alice", ChangeRoles{{{carol, 2, events::ROLE_VIEWER}}, false}).code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(RunAs("wanda", ChangeRoles{{{carol, 2, events::ROLE_VIEWER}}, false}).ok());
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(carol), 2),
            events::ROLE_VIEWER);
  // A workspace admin cannot make anyone (themself included) a cluster-wide anything.
  Status escalation = RunAs("wanda", ChangeRoles{{{wanda, 0, events::ROLE_CLUSTER_ADMIN}}, false});
  EXPECT_EQ(escalation.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(escalation.message(), "PERMISSION_TYPE_UPDATE_ROLES"));
  // ClusterAdmin is cluster-wide only; removing a role not held is refused.
  EXPECT_EQ(RunAs("test", ChangeRoles{{{carol, 2, events::ROLE_CLUSTER_ADMIN}}, false}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunAs("test", ChangeRoles{{{carol, 2, events::ROLE_EDITOR}}, true}).code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(RunAs("test", ChangeRoles{{{carol, 2, events::ROLE_VIEWER}}, true}).ok());
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(carol), 2),
            events::ROLE_UNSPECIFIED);
  // A cluster-wide Viewer reads everywhere and, once named so in Uncategorized, edits nothing.
  RUN_OK(cluster,
         (ChangeRoles{{{carol, 0, events::ROLE_VIEWER}, {carol, 1, events::ROLE_VIEWER}}, false}));
  EXPECT_TRUE(cluster.state.tenancy.Allows(*cluster.state.identity.FindUser(carol),
                                           Permission::kViewWorkspace, 2));
  EXPECT_EQ(RunAs("carol", OneSlotSubmit("c1")).code(), StatusCode::kPermissionDenied);
}

// A group's role admits its members while they are members: carol, in no workspace role of her
// own, submits to team through the group and is refused once removed from it.
TEST_F(TenancyTest, AGroupsRoleAdmitsItsMembersAndStopsAdmittingARemovedMember) {
  const int32_t carol = cluster.AddUser("carol");
  const int32_t dave = cluster.AddUser("dave");
  EXPECT_EQ(RunAs("carol", TeamCommand("c0", "carol")).code(), StatusCode::kPermissionDenied);
  // Only cluster admins make groups; a workspace admin may not.
  Status refused = RunAs("wanda", CreateGroup{"vision", {carol}});
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(refused.message(), "PERMISSION_TYPE_UPDATE_GROUP")) << refused.ToString();
  ASSERT_TRUE(RunAs("test", CreateGroup{"vision", {carol, carol}}).ok());
  const GroupRecord* group = cluster.state.tenancy.FindGroup("vision");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->members, (std::set<int32_t>{carol})) << "a member is listed once";
  const int32_t group_id = group->id;
  EXPECT_EQ(RunAs("test", CreateGroup{"VISION", {}}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(RunAs("test", CreateGroup{"ghosts", {999}}).code(), StatusCode::kNotFound);

  // The workspace's admin gives the group Editor in team: carol may now submit there.
  ASSERT_TRUE(RunAs("wanda", ChangeRoles{{{0, 2, events::ROLE_EDITOR, group_id}}, false}).ok());
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(carol), 2),
            events::ROLE_EDITOR);
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(dave), 2),
            events::ROLE_UNSPECIFIED)
      << "not a member";
  EXPECT_TRUE(RunAs("carol", TeamCommand("c1", "carol")).ok());
  // The group's role never makes her less than she holds herself, and adds to it.
  RUN_OK(cluster, (ChangeRoles{{{carol, 2, events::ROLE_VIEWER}}, false}));
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(carol), 2),
            events::ROLE_EDITOR);

  // Removed from the group, she is a Viewer again: refused, naming the permission.
  UpdateGroup remove;
  remove.group_id = group_id;
  remove.remove_user_ids = {carol};
  remove.add_user_ids = {dave};
  ASSERT_TRUE(RunAs("test", remove).ok());
  Status after = RunAs("carol", TeamCommand("c2", "carol"));
  EXPECT_EQ(after.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(after.message(), "PERMISSION_TYPE_CREATE_NSC")) << after.ToString();
  EXPECT_TRUE(RunAs("dave", TeamCommand("d1", "dave")).ok()) << "the new member is admitted";
  EXPECT_EQ(RunAs("test", remove).code(), StatusCode::kNotFound) << "carol is no member now";

  // Deleting the group removes its role first (RoleRemoved), then the group: dave loses it too.
  const size_t before = cluster.all_events.size();
  ASSERT_TRUE(RunAs("test", DeleteGroup{group_id}).ok());
  ASSERT_EQ(cluster.all_events.size(), before + 2);
  EXPECT_EQ(cluster.all_events[before].role_removed().group_id(), group_id);
  EXPECT_TRUE(cluster.all_events[before + 1].has_group_deleted());
  EXPECT_EQ(RunAs("dave", TeamCommand("d2", "dave")).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(cluster.state.tenancy.FindGroup(group_id), nullptr);

  // Replaying the log rebuilds the same groups and group roles.
  TenancyState replayed;
  for (const auto& event : cluster.all_events) ApplyTenancy(replayed, event);
  EXPECT_EQ(replayed.groups, cluster.state.tenancy.groups);
  EXPECT_EQ(replayed.group_roles, cluster.state.tenancy.group_roles);
}

// A linked user's tasks carry the account they run as, resolved at submission and recorded in the
// log; nobody else's do, and a linked user's shell is refused.
TEST_F(TenancyTest, ALinkedUsersTasksRecordTheAccountTheyRunAs) {
  UpdateUser link;
  link.user_id = alice;
  link.agent_user = AgentUser{1500, 1500, "alice", "lab"};
  RUN_OK(cluster, link);
  link.agent_user = AgentUser{1500, 1500, "Not A Name", "lab"};
  EXPECT_EQ(RunAs("test", link).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(RunAs("alice", TeamCommand("a1", "alice")).ok());
  auto submitted = cluster.Last(events::Envelope::kTaskSubmitted);
  ASSERT_EQ(submitted.size(), 1u);
  const auto& spec = submitted[0].task_submitted().spec();
  ASSERT_TRUE(spec.has_run_as());
  EXPECT_EQ(spec.run_as().uid(), 1500);
  EXPECT_EQ(spec.run_as().user(), "alice");
  ASSERT_TRUE(RunAs("wanda", TeamCommand("w1", "wanda")).ok());
  EXPECT_FALSE(
      cluster.Last(events::Envelope::kTaskSubmitted)[0].task_submitted().spec().has_run_as());
  SubmitTask shell = TeamCommand("s1", "alice");
  shell.spec.set_task_type(events::TASK_TYPE_SHELL);
  shell.spec.clear_entrypoint();
  EXPECT_EQ(RunAs("alice", shell).code(), StatusCode::kNotSupported);
}

// Determined lays a workspace's link over its tasks' owners' links, field by field.
TEST_F(TenancyTest, AWorkspacesLinkIsLaidOverItsUsersLinksFieldByField) {
  UpdateUser link;
  link.user_id = alice;
  link.agent_user = AgentUser{1500, 1500, "alice", "lab"};
  RUN_OK(cluster, link);
  UpdateWorkspace partial;
  partial.workspace_id = 2;
  partial.agent_user = PartialAgentUser{1600, std::nullopt, std::nullopt, std::nullopt};
  // Only a cluster admin links a workspace; its own admin may not.
  EXPECT_EQ(RunAs("wanda", partial).code(), StatusCode::kPermissionDenied);
  ASSERT_TRUE(RunAs("test", partial).ok());
  ASSERT_TRUE(RunAs("alice", TeamCommand("a1", "alice")).ok());
  const auto spec = cluster.Last(events::Envelope::kTaskSubmitted)[0].task_submitted().spec();
  ASSERT_TRUE(spec.has_run_as());
  EXPECT_EQ(spec.run_as().uid(), 1600);
  EXPECT_EQ(spec.run_as().gid(), 1500);
  EXPECT_EQ(spec.run_as().user(), "alice");
  // wanda has no link to complete the workspace's: refused, naming what is missing.
  Status refused = RunAs("wanda", TeamCommand("w1", "wanda"));
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("agent gid, agent user, agent group"), std::string::npos)
      << refused.message();
  UpdateWorkspace whole = partial;
  whole.agent_user = PartialAgentUser{1700, 1700, "team", "team"};
  ASSERT_TRUE(RunAs("test", whole).ok());
  ASSERT_TRUE(RunAs("wanda", TeamCommand("w2", "wanda")).ok());
  EXPECT_EQ(
      cluster.Last(events::Envelope::kTaskSubmitted)[0].task_submitted().spec().run_as().uid(),
      1700);
  whole.agent_user = PartialAgentUser{-1, std::nullopt, std::nullopt, std::nullopt};
  EXPECT_EQ(RunAs("test", whole).code(), StatusCode::kInvalidArgument);
  whole.agent_user = PartialAgentUser{};
  EXPECT_EQ(RunAs("test", whole).code(), StatusCode::kInvalidArgument);
  TenancyState replayed;
  for (const auto& event : cluster.all_events) ApplyTenancy(replayed, event);
  EXPECT_EQ(replayed.workspaces.at(2).agent_user,
            cluster.state.tenancy.workspaces.at(2).agent_user);
  EXPECT_EQ(replayed.workspaces.at(2).agent_user->uid, 1700);
}

TEST_F(TenancyTest, WorkspacesAreNamedOnceArchivedAgainstNewWorkAndDeletedOnlyEmpty) {
  // Names are unique ignoring case (Determined's CLI looks them up both ways).
  EXPECT_EQ(RunAs("alice", CreateWorkspace{"TEAM", "", ""}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(RunAs("alice", CreateWorkspace{"", "", ""}).code(), StatusCode::kInvalidArgument);
  // Any user may create one, and administers it.
  ASSERT_TRUE(RunAs("alice", CreateWorkspace{"alices", "", ""}).ok());
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(alice), 3),
            events::ROLE_WORKSPACE_ADMIN);
  // Renaming and archiving need the workspace's admin.
  UpdateWorkspace rename;
  rename.workspace_id = 2;
  rename.name = "blue";
  EXPECT_EQ(RunAs("alice", rename).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(RunAs("wanda", rename).ok());
  EXPECT_EQ(cluster.state.tenancy.FindWorkspace("blue")->id, 2);
  ASSERT_TRUE(RunAs("alice", TeamCommand("t1", "alice")).ok());
  UpdateWorkspace archive;
  archive.workspace_id = 2;
  archive.archived = true;
  ASSERT_TRUE(RunAs("wanda", archive).ok());
  // Determined answers 404 for work launched into an archived workspace.
  EXPECT_EQ(RunAs("alice", TeamCommand("t2", "alice")).code(), StatusCode::kNotFound);
  EXPECT_EQ(RunAs("wanda", rename).code(), StatusCode::kFailedPrecondition)
      << "an archived workspace is unarchived before it changes";
  // Its live commands die with it (Determined's master kills them); the built-in workspace is
  // never deleted.
  EXPECT_EQ(RunAs("test", DeleteWorkspace{1}).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(RunAs("wanda", DeleteWorkspace{2}).ok());
  bool killed = false, deleted = false;
  for (const auto& event : cluster.last_events) {
    killed |= event.has_kill_requested() && event.kill_requested().task_id() == "t1" &&
              event.kill_requested().reason() == "user requested workspace delete";
    deleted |= event.has_workspace_deleted();
  }
  EXPECT_TRUE(killed && deleted);
  EXPECT_EQ(cluster.state.tenancy.FindWorkspace(2), nullptr);
  EXPECT_EQ(cluster.state.tenancy.RoleIn(*cluster.state.identity.FindUser(bob), 2),
            events::ROLE_UNSPECIFIED);
}

TEST_F(TenancyTest, ProjectsAreCreatedByEditorsAndChangedByTheirOwnersOrAdmins) {
  EXPECT_EQ(RunAs("bob", CreateProject{2, "vision", ""}).code(), StatusCode::kPermissionDenied);
  ASSERT_TRUE(RunAs("alice", CreateProject{2, "vision", "cats"}).ok());
  const int32_t project = cluster.state.tenancy.last_project_id;
  EXPECT_EQ(RunAs("alice", CreateProject{2, "vision", ""}).code(), StatusCode::kAlreadyExists);
  UpdateProject rename;
  rename.project_id = project;
  rename.name = "sight";
  const int32_t eddie = cluster.AddUser("eddie");
  RUN_OK(cluster, (ChangeRoles{{{eddie, 2, events::ROLE_EDITOR}}, false}));
  EXPECT_EQ(RunAs("eddie", rename).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(RunAs("alice", rename).ok());
  EXPECT_EQ(cluster.state.tenancy.FindProject(project)->name, "sight");
  EXPECT_TRUE(RunAs("wanda", DeleteProject{project}).ok());
  EXPECT_EQ(RunAs("test", DeleteProject{1}).code(), StatusCode::kFailedPrecondition);
}

TEST_F(TenancyTest, BoundPoolsTakeOnlyTheirWorkspacesWorkAndDefaultsRouteIt) {
  // Only cluster admins bind pools.
  EXPECT_EQ(RunAs("wanda", SetPoolBindings{"gpu", {2}, SetPoolBindings::Mode::kAdd}).code(),
            StatusCode::kPermissionDenied);
  RUN_OK(cluster, (SetPoolBindings{"gpu", {2}, SetPoolBindings::Mode::kAdd}));
  // Uncategorized work may not ask for gpu; team's may, and unbound pools take everyone's.
  Ask gpu;
  gpu.pool = "gpu";
  auto refused = cluster.Run(Submission("u1", gpu));
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.status().message(), "not available to workspace id 1"));
  SubmitTask team_gpu = Submission("t1", gpu);
  team_gpu.workspace_id = 2;
  ASSERT_TRUE(RunAs("alice", team_gpu).ok());
  EXPECT_EQ(cluster.Task("t1").agent_id, "g1");
  SubmitTask team_default = OneSlotSubmit("t2");
  team_default.workspace_id = 2;
  ASSERT_TRUE(RunAs("alice", team_default).ok());
  EXPECT_EQ(cluster.Task("t2").pool(), "default");
  // A workspace's default compute pool routes its work there.
  UpdateWorkspace defaults;
  defaults.workspace_id = 2;
  defaults.default_compute_pool = "gpu";
  ASSERT_TRUE(RunAs("wanda", defaults).ok());
  SubmitTask routed = OneSlotSubmit("t3");
  routed.workspace_id = 2;
  ASSERT_TRUE(RunAs("alice", routed).ok());
  EXPECT_EQ(cluster.Task("t3").pool(), "gpu");
  // A job may not move into a pool bound to others.
  UpdateJob move;
  move.job_id = "u2";
  move.resource_pool = "gpu";
  RUN_OK(cluster, OneSlotSubmit("u2"));
  EXPECT_EQ(cluster.Run(move).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(TenancyTest, WorkQueuedBeforeABindingWaitsAndTheExplanationSaysWhy) {
  // Fill gpu, queue an Uncategorized task behind, then bind gpu to team only.
  Ask gpu;
  gpu.pool = "gpu";
  gpu.slots = 4;
  RUN_OK(cluster, Submission("big", gpu));
  ASSERT_EQ(cluster.Task("big").agent_id, "g1");
  RUN_OK(cluster, Submission("next", gpu));
  RUN_OK(cluster, (SetPoolBindings{"gpu", {2}, SetPoolBindings::Mode::kReplace}));
  RUN_OK(cluster, Exit("big"));
  // The slots are free, but the pool no longer takes Uncategorized work.
  EXPECT_EQ(cluster.Task("next").state, TaskState::kQueued);
  auto why = ExplainTask(cluster.state, "next", cluster.now);
  ASSERT_TRUE(why.ok()) << why.status().ToString();
  EXPECT_TRUE(Contains(why->reason, "no longer available to workspace id 1")) << why->reason;
  // Unbinding lets it run.
  RUN_OK(cluster, (SetPoolBindings{"gpu", {2}, SetPoolBindings::Mode::kRemove}));
  EXPECT_EQ(cluster.Task("next").agent_id, "g1");
}

TEST_F(TenancyTest, ReplayingTheEventsRebuildsTheSameTenancy) {
  RUN_OK(cluster, (SetPoolBindings{"gpu", {2}, SetPoolBindings::Mode::kAdd}));
  ASSERT_TRUE(RunAs("alice", CreateProject{2, "vision", ""}).ok());
  ASSERT_TRUE(RunAs("alice", PinWorkspace{2, true}).ok());
  TenancyState replayed;
  for (const auto& event : cluster.all_events) ApplyTenancy(replayed, event);
  const TenancyState& live = cluster.state.tenancy;
  EXPECT_EQ(replayed.roles, live.roles);
  EXPECT_EQ(replayed.pool_bindings, live.pool_bindings);
  EXPECT_EQ(replayed.workspace_ids, live.workspace_ids);
  EXPECT_EQ(replayed.projects.size(), live.projects.size());
  EXPECT_EQ(replayed.workspaces.at(2).pinned_by, (std::set<int32_t>{alice}));
}

}  // namespace
}  // namespace cairn::commands::testing
