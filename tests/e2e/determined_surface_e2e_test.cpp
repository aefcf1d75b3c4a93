// The rest of Determined's surface (issue 45) on a real master and agent, read back through the
// REST routes, `cairn replay` and Determined's own `det` CLI (skipped, saying so, where its
// package cannot run here).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>

#include "base/clock.h"
#include "base/files.h"
#include "tests/e2e/determined_cli.h"
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing {
namespace {

using experiment_e2e::Int;

constexpr int64_t kMicrosPerDay = 86'400'000'000;

std::string DayOf(int64_t unix_micros) {
  const std::chrono::year_month_day date{
      std::chrono::sys_days(std::chrono::days(unix_micros / kMicrosPerDay))};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return text;
}

// Slot-seconds per user in [from, to), counted straight from the events read (each allocation of
// one agent: its slots from its placement to its release or its task's exit, else `now`).
std::map<std::string, double> CountedPerUser(const std::vector<json>& events, int64_t from,
                                             int64_t to, int64_t now) {
  struct Held {
    std::string user;
    int64_t slots = 0;
    int64_t start = 0;
    int64_t end = 0;
  };
  std::map<std::string, std::string> users;  // task -> user
  std::map<std::string, Held> held;          // task -> its allocation
  std::vector<Held> ended;
  for (const json& event : events) {
    const int64_t time = Int(event["timeUnixMicros"]);
    if (event.contains("taskSubmitted")) {
      users[event["taskSubmitted"]["taskId"]] = event["taskSubmitted"]["spec"]["user"];
    } else if (event.contains("allocationAssigned")) {
      const json& assigned = event["allocationAssigned"];
      held[assigned["taskId"]] = {users[assigned["taskId"]],
                                  static_cast<int64_t>(assigned["slotIds"].size()), time, 0};
    } else if (event.contains("allocationReleased") || event.contains("taskExited")) {
      const json& end =
          event.contains("taskExited") ? event["taskExited"] : event["allocationReleased"];
      auto found = held.find(end["taskId"]);
      if (found == held.end()) continue;
      found->second.end = time;
      ended.push_back(found->second);
      held.erase(found);
    }
  }
  for (auto& [task, allocation] : held) {
    allocation.end = now;
    ended.push_back(allocation);
  }
  std::map<std::string, double> counted;
  for (const Held& allocation : ended) {
    const int64_t overlap = std::min(allocation.end, to) - std::max(allocation.start, from);
    if (overlap > 0) counted[allocation.user] += allocation.slots * overlap / 1e6;
  }
  return counted;
}

std::map<std::string, double> ByUsername(const json& report) {
  std::map<std::string, double> by_user;
  for (const json& entry : report["resourceEntries"]) {
    for (const auto& [user, seconds] : entry["byUsername"].items()) {
      by_user[user] += seconds.get<double>();
    }
  }
  return by_user;
}

void ExpectSameUsage(const std::map<std::string, double>& reported,
                     const std::map<std::string, double>& counted, const std::string& what) {
  ASSERT_EQ(reported.size(), counted.size()) << what;
  for (const auto& [user, seconds] : counted) {
    ASSERT_TRUE(reported.count(user)) << what << ": no " << user;
    EXPECT_NEAR(reported.at(user), seconds, 1e-6) << what << ": " << user;
  }
}

class DeterminedSurfaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    auto client = cluster_.Client();
    auto login =
        client.Request("POST", "/api/v1/auth/login", R"({"username":"admin","password":""})");
    ASSERT_TRUE(login.ok() && login->status == 200);
    admin_token_ = json::parse(login->body)["token"];
  }

  // A request as the built-in admin; its answer's status and body.
  std::pair<int, std::string> AsAdmin(const std::string& method, const std::string& target,
                                      const std::string& body = "") {
    net::Client client("127.0.0.1", cluster_.port());
    auto response = client.Request(
        method, target, body,
        {{"Authorization", "Bearer " + admin_token_}, {"Cairn-Min-Offset", cluster_.SeenOffset()}});
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return {0, ""};
    return {response->status, response->body};
  }

  Cluster cluster_;
  std::string admin_token_;
};

// Allocation accounting: the aggregated report of today equals the slot-seconds counted from the
// log, live over REST and as of every past moment through `cairn replay allocations`; Determined's
// CLI prints the same reports.
TEST_F(DeterminedSurfaceTest, AllocationReportsEqualTheLogAtEveryMoment) {
  cluster_.StartAgent("acct-a", 2);
  const std::string first =
      cluster_.Submit({{"entrypoint", "exit 0"}, {"resources", {{"slots", 1}}}});
  const std::string second =
      cluster_.Submit({{"entrypoint", "exit 0"}, {"resources", {{"slots", 2}}}});
  const std::vector<json> events = cluster_.FollowEventsUntil([&](const std::vector<json>& read) {
    int exits = 0;
    for (const json& event : read) exits += event.contains("taskExited") ? 1 : 0;
    return exits == 2;
  });
  const int64_t last_time = Int(events.back()["timeUnixMicros"]);
  const int64_t first_time = Int(events.front()["timeUnixMicros"]);
  const std::string from_day = DayOf(first_time);
  const std::string to_day = DayOf(last_time);
  const int64_t from = first_time / kMicrosPerDay * kMicrosPerDay;
  const int64_t to = (last_time / kMicrosPerDay + 1) * kMicrosPerDay;
  const auto counted = CountedPerUser(events, from, to, last_time);
  ASSERT_EQ(counted.count("determined"), 1u) << "both commands ran as determined";

  const std::string aggregated = "/api/v1/resources/allocation/aggregated?start_date=" + from_day +
                                 "&end_date=" + to_day +
                                 "&period=RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY";
  // Under roles, only cluster admins read who used how much.
  EXPECT_EQ(cluster_.Call("GET", aggregated).status, 403);
  auto [status, body] = AsAdmin("GET", aggregated);
  ASSERT_EQ(status, 200) << body;
  const json live = json::parse(body);
  ExpectSameUsage(ByUsername(live), counted, "live");
  ASSERT_FALSE(live["resourceEntries"].empty());
  EXPECT_EQ(live["resourceEntries"][0]["periodStart"], from_day);

  // Every allocation appears in the CSV, with its slots.
  const std::string window = "timestamp_after=" + FormatRfc3339(from).substr(0, 19) +
                             "Z&timestamp_before=" + FormatRfc3339(to).substr(0, 19) + "Z";
  auto [csv_status, csv] = AsAdmin("GET", "/resources/allocation/allocations-csv?" + window);
  ASSERT_EQ(csv_status, 200) << csv;
  EXPECT_EQ(csv.rfind("allocation_id,task_type,username,workspace_name", 0), 0u);
  EXPECT_NE(csv.find(first + ".1,COMMAND,determined,Uncategorized,,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(second + ".1,COMMAND,determined,Uncategorized,,2,"), std::string::npos) << csv;
  // A fractional time is refused by the CSV route, as Determined's is.
  EXPECT_EQ(AsAdmin("GET",
                    "/resources/allocation/raw?timestamp_after=2020-01-01T00:00:00.5Z"
                    "&timestamp_before=2020-01-02T00:00:00Z")
                .first,
            400);

  // As of every event that placed or ended an allocation, the replayed report equals the count of
  // the log's prefix, with "now" the moment's last event.
  int checked = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].contains("allocationAssigned") && !events[i].contains("taskExited")) continue;
    const std::vector<json> prefix(events.begin(), events.begin() + i + 1);
    const int64_t moment = Int(events[i]["timeUnixMicros"]);
    auto lines =
        cluster_.RunCairn({"replay", "allocations", "--data", cluster_.data_dir(), "--at-offset",
                           std::to_string(Int(events[i]["offset"])), "--start-date", from_day,
                           "--end-date", to_day, "--format", "json"});
    ASSERT_EQ(lines.size(), 1u);
    ExpectSameUsage(ByUsername(json::parse(lines[0])), CountedPerUser(prefix, from, to, moment),
                    "as of offset " + std::to_string(Int(events[i]["offset"])));
    ++checked;
  }
  EXPECT_EQ(checked, 4);

  // Determined's own CLI: the same report, and the allocations' CSV.
  if (const std::string missing = MissingDependency(); !missing.empty()) {
    GTEST_SKIP() << "det's part: " << missing;
  }
  DeterminedCli det(cluster_, "admin");
  const std::string printed =
      det.Det("resources aggregated " + from_day + " " + to_day + " --json", 0, true);
  ExpectSameUsage(ByUsername(json::parse(printed)), counted, "det resources aggregated --json");
  const std::string printed_csv =
      det.Det("resources aggregated " + from_day + " " + to_day, 0, true);
  EXPECT_NE(printed_csv.find("username,determined," + from_day), std::string::npos) << printed_csv;
  const std::string allocations =
      det.Det("resources allocations " + FormatRfc3339(from).substr(0, 19) + "Z " +
                  FormatRfc3339(to).substr(0, 19) + "Z",
              0, true);
  EXPECT_NE(allocations.find(second + ".1,COMMAND,determined"), std::string::npos) << allocations;
}

// `det token` as its users run it: create, list, describe, edit, log in with the token, revoke;
// the revoked token is refused at once.
TEST_F(DeterminedSurfaceTest, DeterminedsCliManagesAccessTokens) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  DeterminedCli det(cluster_, "admin");
  const std::string created = det.Det("token create -d 'ci token' -e 2", 0, true);
  const size_t id_at = created.find("TokenID: ");
  const size_t token_at = created.find("Access-Token: ");
  ASSERT_NE(id_at, std::string::npos) << created;
  ASSERT_NE(token_at, std::string::npos) << created;
  const std::string id = created.substr(id_at + 9, created.find('\n', id_at) - id_at - 9);
  std::string token = created.substr(token_at + 14);
  token = token.substr(0, token.find_first_of("\r\n"));

  const std::string listed = det.Det("token list", 0, true);
  EXPECT_NE(listed.find("ci token"), std::string::npos) << listed;
  EXPECT_NE(listed.find("ACCESS_TOKEN"), std::string::npos) << listed;
  EXPECT_EQ(listed.find(token), std::string::npos) << "the token is shown once, at creation";
  EXPECT_NE(det.Det("token describe " + id, 0, true).find("ci token"), std::string::npos);
  EXPECT_NE(det.Det("token edit " + id + " -d nightly", 0, true)
                .find("Successfully updated token with ID: " + id),
            std::string::npos);
  EXPECT_NE(det.Det("token list --json", 0, true).find("nightly"), std::string::npos);

  // `det token login` signs in as the token's user (a fresh CLI configuration).
  const std::string login =
      RunShell("cd " + cluster_.dir().path() + " && PYTHONPATH=" + DeterminedDir() +
               "/harness XDG_CONFIG_HOME=" + cluster_.dir().Sub("token-config") + " " + kPython +
               " -m determined.cli -m " + cluster_.url() + " token login " + token + " 2>&1")
          .second;
  EXPECT_NE(login.find("Authenticated as admin."), std::string::npos) << login;

  auto me_status = [&] {
    net::Client client("127.0.0.1", cluster_.port());
    auto response = client.Request("GET", "/api/v1/me", "", {{"Authorization", "Bearer " + token}});
    return response.ok() ? response->status : 0;
  };
  EXPECT_EQ(me_status(), 200);
  EXPECT_NE(det.Det("token revoke " + id, 0, true).find("Successfully revoked token " + id),
            std::string::npos);
  EXPECT_EQ(me_status(), 401);
  EXPECT_EQ(det.Det("token list", 0, true).find("nightly"), std::string::npos)
      << "a revoked token is inactive";
}

// det master cluster-message, det master config set, det preview-search and det task
// cleanup-logs, each read back.
TEST_F(DeterminedSurfaceTest, DeterminedsCliSetsTheClusterMessageAndLogLevelAndPreviewsASearch) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  DeterminedCli det(cluster_, "admin");
  det.Det("master cluster-message set -m 'maintenance at noon' -d 2h");
  EXPECT_NE(det.Det("master cluster-message get --json", 0, true).find("maintenance at noon"),
            std::string::npos);
  EXPECT_NE(det.Det("master info", 0, true).find("maintenance at noon"), std::string::npos);
  det.Det("master cluster-message clear");
  EXPECT_NE(det.Det("master cluster-message get", 0, true).find("clusterMessage: null"),
            std::string::npos);

  EXPECT_NE(det.Det("master config set --log.level DEBUG", 0, true)
                .find("Successfully made changes to the master config."),
            std::string::npos);
  // The change is in the audit trail, with its actor.
  bool recorded = false;
  for (const json& event : cluster_.AllEvents()) {
    if (event.contains("masterLogLevelChanged")) {
      recorded =
          event["masterLogLevelChanged"]["level"] == "debug" && event["actor"] == "user:admin";
    }
  }
  EXPECT_TRUE(recorded);

  const std::string config = cluster_.dir().Sub("search.yaml");
  std::ofstream(config) << "entrypoint: python3 train.py\n"
                           "hyperparameters:\n"
                           "  lr: {type: double, minval: 0.001, maxval: 0.1}\n"
                           "searcher:\n"
                           "  name: adaptive_asha\n"
                           "  metric: loss\n"
                           "  max_length: {batches: 1000}\n"
                           "  max_trials: 16\n";
  const std::string preview = det.Det("preview-search " + config, 0, true);
  EXPECT_NE(preview.find("Using search configuration:"), std::string::npos) << preview;
  EXPECT_NE(preview.find("train for 1000 batches"), std::string::npos) << preview;
  EXPECT_NE(det.Det("task cleanup-logs", 0, true).find("Deleted 0 rows of log entries."),
            std::string::npos);
}

// det experiment set gc-policy: the preview (answered "n": nothing changes), then --yes; the
// configuration shows the policy in force. (Which checkpoints go is the decider's test,
// AChangedGcPolicyCollectsWhatItDropsAtOnce.)
TEST_F(DeterminedSurfaceTest, DeterminedsCliChangesAnExperimentsGcPolicy) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  Reply created = cluster_.CreateExperiment(
      experiment_e2e::ReadFile(ExamplePath("spiral-mlp") + "/grid.yaml"), ExamplePath("spiral-mlp"),
      /*activate=*/false);
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string id = std::to_string(Int(created.body["experiment"]["id"]));
  DeterminedCli det(cluster_);
  const std::string policy = " --save-experiment-best 2 --save-trial-best 0 --save-trial-latest 3";
  const std::string preview =
      RunShell("echo n | (" + det.PythonAsDetermined() + " -m determined.cli -m " + cluster_.url() +
               " experiment set gc-policy " + id + policy + ") 2>&1")
          .second;
  EXPECT_NE(preview.find("This policy will delete 0 checkpoints"), std::string::npos) << preview;
  EXPECT_NE(preview.find("Aborting operations."), std::string::npos) << preview;
  EXPECT_EQ(cluster_.Get("/api/v1/experiments/" +
                         id)["experiment"]["config"]["checkpoint_storage"]["save_trial_latest"],
            1)
      << "declined: unchanged";
  const std::string applied =
      det.Det("experiment set gc-policy " + id + policy + " --yes", 0, true);
  EXPECT_NE(applied.find("Set GC policy of experiment " + id), std::string::npos) << applied;
  const json storage =
      cluster_.Get("/api/v1/experiments/" + id)["experiment"]["config"]["checkpoint_storage"];
  EXPECT_EQ(storage["save_experiment_best"], 2) << storage;
  EXPECT_EQ(storage["save_trial_latest"], 3) << storage;
}

// det slot disable/enable, det cmd run --volume on process agents, and det experiment
// delete-tb-files, through Determined's CLI.
TEST_F(DeterminedSurfaceTest, DeterminedsCliDisablesSlotsRefusesVolumesAndDeletesTensorboardFiles) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  cluster_.StartAgent("slot-agent", 2);
  DeterminedCli det(cluster_, "admin");
  EXPECT_NE(
      det.Det("slot disable slot-agent 0", 0, true).find("Disabled slot 0 of agent slot-agent"),
      std::string::npos);
  const json agent = cluster_.Get("/api/v1/agents/slot-agent")["agent"];
  EXPECT_EQ(agent["slots"]["/agents/slot-agent/slots/0"]["enabled"], false) << agent;
  EXPECT_EQ(agent["slots"]["/agents/slot-agent/slots/1"]["enabled"], true) << agent;
  EXPECT_EQ(agent["slotStats"]["typeStats"]["TYPE_CPU"]["disabled"], 1) << agent;
  const std::string listed = det.Det("slot list --json", 0, true);
  EXPECT_NE(listed.find("\"enabled\": false"), std::string::npos) << listed;
  // A command placed while slot 0 is out runs on slot 1.
  const std::string task =
      cluster_.Submit({{"entrypoint", "exit 0"}, {"resources", {{"slots", 1}}}});
  const json placed = cluster_.WaitForEvent([&](const json& event) {
    return event.contains("allocationAssigned") && event["allocationAssigned"]["taskId"] == task;
  });
  EXPECT_EQ(placed["allocationAssigned"]["slotIds"], json::array({1})) << placed;
  EXPECT_NE(det.Det("slot enable slot-agent 0", 0, true).find("Enabled slot 0 of agent slot-agent"),
            std::string::npos);
  EXPECT_EQ(
      cluster_.Get(
          "/api/v1/agents/slot-agent")["agent"]["slots"]["/agents/slot-agent/slots/0"]["enabled"],
      true);
  // A user without the cluster-wide right to manage agents may not take slots out.
  EXPECT_EQ(cluster_.Call("POST", "/api/v1/agents/slot-agent/slots/1/disable").status, 403);

  // The agent runs processes: a mount it cannot apply is refused at submission, not ignored.
  const std::string volume = RunShell(det.PythonAsDetermined() + " -m determined.cli -m " +
                                      cluster_.url() + " cmd run --volume /tmp:/data true 2>&1")
                                 .second;
  EXPECT_NE(volume.find("bind_mounts (--volume) cannot be applied"), std::string::npos) << volume;

  // delete-tb-files removes what the trials wrote so far, and nothing written later.
  std::string config = experiment_e2e::ReadFile(ExamplePath("spiral-mlp") + "/grid.yaml");
  experiment_e2e::ReplaceOnce(config, "host_path: /tmp", "host_path: " + cluster_.dir().path());
  Reply created = cluster_.CreateExperiment(config, ExamplePath("spiral-mlp"), /*activate=*/false);
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string id = std::to_string(Int(created.body["experiment"]["id"]));
  const std::string trial_dir =
      cluster_.dir().path() + "/cairn-checkpoints/tensorboard/experiment/" + id + "/trial/1";
  std::filesystem::create_directories(trial_dir);
  std::ofstream(trial_dir + "/events.out.tfevents.1") << "written before";
  std::ofstream(trial_dir + "/events.out.tfevents.2") << "written after";
  std::filesystem::last_write_time(
      trial_dir + "/events.out.tfevents.2",
      std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  det.Det("experiment delete-tb-files " + id);
  EXPECT_TRUE(experiment_e2e::WaitUntilRemoved({trial_dir + "/events.out.tfevents.1"},
                                               std::chrono::seconds(30)));
  EXPECT_TRUE(std::filesystem::exists(trial_dir + "/events.out.tfevents.2"));
  const json recorded = cluster_.WaitForEvent(
      [](const json& event) { return event.contains("tensorboardFilesDeleted"); });
  EXPECT_EQ(recorded["actor"], "user:admin") << recorded;
}

// Config policies through Determined's CLI: a workspace admin's cap of 2 slots refuses a 4-slot
// command with the policy named; describe shows the policy; delete lifts it.
TEST_F(DeterminedSurfaceTest, DeterminedsCliSetsConfigPoliciesThatRefuseSubmissions) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  cluster_.StartAgent("policy-agent", 4);
  DeterminedCli det(cluster_, "admin");
  det.Det("workspace create team");
  const std::string policy_file = cluster_.dir().path() + "/policy.yaml";
  std::ofstream(policy_file) << "invariant_config:\n  description: team work\n"
                                "constraints:\n  resources:\n    max_slots: 2\n";
  const std::string set = det.Det("config-policies set tasks " + policy_file + " -w team", 0, true);
  EXPECT_NE(set.find("max_slots: 2"), std::string::npos) << set;
  const std::string described = det.Det("config-policies describe tasks -w team --json", 0, true);
  EXPECT_NE(described.find("\"max_slots\": 2"), std::string::npos) << described;
  EXPECT_NE(described.find("team work"), std::string::npos) << described;
  // The default user, no admin: the team workspace is not theirs to see, the global policies not
  // theirs to set.
  DeterminedCli user(cluster_);
  const std::string hidden = user.Det("config-policies set tasks " + policy_file + " -w team", 1);
  EXPECT_NE(hidden.find("Failed to set config policies: workspace 'team' not found"),
            std::string::npos)
      << hidden;
  const std::string forbidden = user.Det("config-policies set tasks " + policy_file, 1);
  EXPECT_NE(forbidden.find("set global config policies"), std::string::npos) << forbidden;
  const std::string refused = det.Det("cmd run -d -w team --config resources.slots=4 true", 1);
  EXPECT_NE(refused.find("requested resources.slots [4] exceeds limit set by admin [2] in "
                         "workspace team's NTSC config policies"),
            std::string::npos)
      << refused;
  // Within the cap it runs, with the invariant description.
  const std::string launched =
      det.Det("cmd run -d -w team --config resources.slots=2 true", 0, true);
  const std::string task_id = launched.substr(0, launched.find_first_of("\r\n"));
  auto [status, command] = AsAdmin("GET", "/api/v1/commands/" + task_id);
  ASSERT_EQ(status, 200) << command;
  EXPECT_EQ(json::parse(command)["command"]["description"], "team work") << command;
  det.Det("config-policies delete tasks -w team");
  EXPECT_EQ(det.Det("config-policies describe tasks -w team --json", 0, true).find("max_slots"),
            std::string::npos);
  det.Det("cmd run -d -w team --config resources.slots=4 true");
}

// det user-group and det rbac assign-role -g: a group's role admits its members and stops
// admitting a member once removed.
TEST_F(DeterminedSurfaceTest, DeterminedsCliManagesUserGroupsWhoseRolesAdmitTheirMembers) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  cluster_.StartAgent("group-agent", 2);
  DeterminedCli admin(cluster_, "admin");
  DeterminedCli user(cluster_);
  admin.Det("workspace create team");
  user.Det("cmd run -d -w team true", 1);
  const std::string created = admin.Det("user-group create vision --add-user determined", 0, true);
  EXPECT_NE(created.find("user group with name vision and ID"), std::string::npos) << created;
  EXPECT_NE(created.find("determined was added to the group"), std::string::npos) << created;
  const std::string listed = admin.Det("user-group list", 0, true);
  EXPECT_NE(listed.find("vision"), std::string::npos) << listed;
  const std::string described = admin.Det("user-group describe vision --json", 0, true);
  EXPECT_NE(described.find("\"username\": \"determined\""), std::string::npos) << described;
  // A member may not change groups.
  const std::string refused = user.Det("user-group create others", 1);
  EXPECT_NE(refused.find("PERMISSION_TYPE_UPDATE_GROUP"), std::string::npos) << refused;

  admin.Det("rbac assign-role Editor -g vision -w team");
  const std::string roles = admin.Det("rbac list-groups-roles vision --json", 0, true);
  EXPECT_NE(roles.find("\"name\": \"Editor\""), std::string::npos) << roles;
  user.Det("cmd run -d -w team true");  // admitted through the group

  admin.Det("user-group remove-user vision determined");
  const std::string after = user.Det("cmd run -d -w team true", 1);
  EXPECT_NE(after.find("team"), std::string::npos) << after;
  admin.Det("user-group add-user vision determined");
  user.Det("cmd run -d -w team true");

  admin.Det("user-group change-name vision cv");
  admin.Det("user-group delete cv --yes");
  EXPECT_EQ(admin.Det("user-group list", 0, true).find("cv"), std::string::npos);
  user.Det("cmd run -d -w team true", 1);  // the group's role went with it
}

// det user link-with-agent-user: a linked user's task runs as its Unix account, the files it
// writes are that account's, and another account's task cannot read them.
TEST_F(DeterminedSurfaceTest, DeterminedsCliLinksUsersWhoseTasksRunAsTheirOwnAccounts) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  if (geteuid() != 0) GTEST_SKIP() << "the agent must be root to run tasks as other accounts";
  cluster_.StartAgent("linked-agent", 2);
  DeterminedCli admin(cluster_, "admin");
  DeterminedCli user(cluster_);
  admin.Det(
      "user link-with-agent-user admin --agent-uid 1501 --agent-gid 1501 "
      "--agent-user owner --agent-group owners");
  admin.Det(
      "user link-with-agent-user determined --agent-uid 1500 --agent-gid 1500 "
      "--agent-user other --agent-group others");
  const std::string listed = admin.Det("user list", 0, true);
  EXPECT_NE(listed.find("1500"), std::string::npos) << listed;
  // Only admins link.
  user.Det(
      "user link-with-agent-user determined --agent-uid 0 --agent-gid 0 --agent-user root "
      "--agent-group root",
      1);

  const std::string first = admin.Det(
      "cmd run \"sh -c 'id -u; echo secret > mine.txt; stat -c owner=%u mine.txt; pwd'\"", 0, true);
  EXPECT_NE(first.find("1501\n"), std::string::npos) << first;
  EXPECT_NE(first.find("owner=1501"), std::string::npos) << first;
  const size_t slash = first.rfind("\n/");
  ASSERT_NE(slash, std::string::npos) << first;
  const std::string work_dir = first.substr(slash + 1, first.find('\n', slash + 1) - slash - 1);

  const std::string second = user.Det(
      "cmd run \"sh -c 'id -u; id -g; cat " + work_dir + "/mine.txt || echo refused'\"", 0, true);
  EXPECT_NE(second.find("1500\n1500\n"), std::string::npos) << second;
  EXPECT_NE(second.find("refused"), std::string::npos) << second;
  EXPECT_EQ(second.find("secret"), std::string::npos) << second;

  // A workspace's link is laid over its users' links: its uid, the user's gid and names.
  admin.Det("workspace create linked --agent-uid 1502");
  const std::string workspaces = admin.Det("workspace list", 0, true);
  EXPECT_NE(workspaces.find("1502"), std::string::npos) << workspaces;
  const std::string third = admin.Det("cmd run -w linked \"sh -c 'id -u; id -g'\"", 0, true);
  EXPECT_NE(third.find("1502\n1501\n"), std::string::npos) << third;
  admin.Det("rbac assign-role WorkspaceAdmin -u determined -w linked");
  const std::string not_admin = user.Det("workspace edit linked --agent-uid 7", 1);
  EXPECT_NE(not_admin.find("PERMISSION_TYPE_SET_WORKSPACE_AGENT_USER_GROUP"), std::string::npos)
      << not_admin;
}

// Determined 0.38's generic tasks through its own CLI: det task create runs the config's
// entrypoint in its context directory, config shows the config as given, pause releases the
// running allocation and holds the task, unpause runs it again, fork copies config and context,
// and kill cancels.
TEST_F(DeterminedSurfaceTest, DeterminedsCliCreatesPausesUnpausesAndForksGenericTasks) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  cluster_.StartAgent("generic-agent", 1);
  DeterminedCli user(cluster_);
  const std::string dir = cluster_.dir().path() + "/generic";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/context").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/context/run.sh", "echo ran-from-$DET_TASK_TYPE\n").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/echo.yaml", "entrypoint: [\"sh\", \"run.sh\"]\n").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/sleep.yaml", "entrypoint: [\"sleep\", \"600\"]\n").ok());
  auto created_id = [](const std::string& out) {
    const size_t at = out.find("Created task ");
    return at == std::string::npos ? std::string() : out.substr(at + 13, 36);
  };

  const std::string followed =
      user.Det("task create " + dir + "/echo.yaml -c " + dir + "/context -f", 0, true);
  EXPECT_NE(followed.find("ran-from-GENERIC"), std::string::npos) << followed;
  const std::string echo_id = created_id(followed);
  ASSERT_EQ(echo_id.size(), 36u) << followed;
  const std::string config = user.Det("task config " + echo_id, 0, true);
  EXPECT_NE(config.find("run.sh"), std::string::npos) << config;
  EXPECT_EQ(config.find("resources"), std::string::npos) << "no defaults filled in: " << config;
  EXPECT_EQ(cluster_.Get("/api/v1/tasks/" + echo_id)["task"]["taskState"],
            "GENERIC_TASK_STATE_COMPLETED");

  const std::string forked = created_id(user.Det("task fork " + echo_id, 0, true));
  ASSERT_EQ(forked.size(), 36u);
  EXPECT_NE(cluster_.FollowLogs(forked).find("ran-from-GENERIC"), std::string::npos)
      << "the fork runs the parent's config in the parent's context";

  const std::string sleeper = created_id(user.Det("task create " + dir + "/sleep.yaml", 0, true));
  ASSERT_EQ(sleeper.size(), 36u);
  auto of_sleeper = [&](const char* kind) {
    return [&, kind](const json& e) { return e.contains(kind) && e[kind]["taskId"] == sleeper; };
  };
  cluster_.WaitForEvent(of_sleeper("taskStarted"));
  EXPECT_NE(user.Det("task pause " + sleeper, 0, true).find("Paused task"), std::string::npos);
  const json released = cluster_.WaitForEvent(of_sleeper("allocationReleased"));
  EXPECT_NE(released["allocationReleased"].value("reason", "").find("held until unpaused"),
            std::string::npos)
      << released;
  const json paused = cluster_.Get("/api/v1/tasks/" + sleeper)["task"];
  EXPECT_EQ(paused["taskState"], "GENERIC_TASK_STATE_PAUSED") << paused;
  // A paused task asks for nothing: it is not in the job queue (`det job list`).
  auto queued = [&] {
    const json queue = cluster_.Get("/api/v1/job-queues-v2");
    for (const auto& job : queue["jobs"]) {
      if (job["full"]["jobId"] == sleeper) return true;
    }
    return false;
  };
  EXPECT_FALSE(queued());
  user.Det("task pause " + sleeper, 1);  // already paused
  user.Det("task unpause " + sleeper);
  cluster_.WaitForEvent([&](const json& e) {
    return e.contains("taskStarted") && e["taskStarted"]["allocationId"] == sleeper + ".2";
  });
  EXPECT_EQ(cluster_.Get("/api/v1/tasks/" + sleeper)["task"]["taskState"],
            "GENERIC_TASK_STATE_ACTIVE");
  EXPECT_TRUE(queued());
  user.Det("task kill " + sleeper);
  cluster_.WaitForEvent(of_sleeper("taskExited"));
  EXPECT_EQ(cluster_.Get("/api/v1/tasks/" + sleeper)["task"]["taskState"],
            "GENERIC_TASK_STATE_CANCELED");
  // A command is not a generic task: it is not paused.
  const std::string refused =
      user.Det("task pause " + cluster_.Submit({{"entrypoint", "true"}}), 1);
  EXPECT_NE(refused.find("generic"), std::string::npos) << refused;
}

// `det shell start -d` and `det shell open ID -- CMD` as Determined's CLI runs them: ssh with the
// shell's key, through Determined's own tunnel (`python3 -m determined.cli.tunnel`), which opens
// the master's /proxy/{id}/ WebSocket without a token. The shell's sshd is what it reaches, and
// only the shell's key gets in there.
TEST_F(DeterminedSurfaceTest, DeterminedsShellOpenTunnelsSshToTheShellWithoutAToken) {
  if (const std::string missing = MissingDependency(); !missing.empty()) GTEST_SKIP() << missing;
  if (RunShell(std::string(kPython) + " -c 'import websocket' 2>&1").first != 0 ||
      RunShell("command -v ssh && test -x /usr/sbin/sshd").first != 0) {
    GTEST_FAIL() << "python3-websocket, openssh-client and openssh-server are needed: run "
                    "ops/install-deps.sh";
  }
  cluster_.StartAgent("shell-agent", 1);
  DeterminedCli user(cluster_);
  // ssh keeps its known hosts under $HOME: the test's own.
  const std::string home = "export HOME=" + cluster_.dir().path() + "; ";
  const std::string started = user.Det("shell start -d", 0, true);
  const std::string id = started.substr(0, started.find('\n'));
  ASSERT_EQ(id.size(), 36u) << started;
  char hostname[256] = {};
  ::gethostname(hostname, sizeof hostname - 1);
  const std::string open_command = home + user.PythonAsDetermined() + " -m determined.cli -m " +
                                   cluster_.url() + " shell open " + id +
                                   " -- hostname </dev/null 2>&1";
  auto [status, opened] = RunShell(open_command);
  EXPECT_EQ(status, 0) << opened;
  EXPECT_NE(opened.find(std::string(hostname) + "\r\n"), std::string::npos) << opened;
  EXPECT_NE(opened.find("To reconnect, run: det shell open " + id), std::string::npos) << opened;

  // The same tunnel with another key: sshd refuses it.
  const std::string other_key = cluster_.dir().path() + "/other_key";
  ASSERT_EQ(RunShell("ssh-keygen -q -t ed25519 -N '' -f " + other_key).first, 0);
  const std::string tunnel = user.PythonAsDetermined();
  const std::string proxy_command = "env " + tunnel.substr(tunnel.find("PYTHONPATH")) +
                                    " -m determined.cli.tunnel " + cluster_.url() + " %h";
  // ssh through Determined's tunnel with `key`, as `det shell open` runs it.
  auto ssh_with = [&](const std::string& key) {
    return RunShell(home + "cd " + cluster_.dir().path() +
                    " && ssh -o 'ProxyCommand=" + proxy_command +
                    "' -o StrictHostKeyChecking=no -o BatchMode=yes -o IdentitiesOnly=yes -i " +
                    key + " root@" + id + " hostname </dev/null 2>&1");
  };
  auto [refused_status, refused] = ssh_with(other_key);
  EXPECT_EQ(refused_status, 255) << refused;
  EXPECT_NE(refused.find("Permission denied (publickey)"), std::string::npos) << refused;

  // Another user gets no key for it.
  DeterminedCli bob(cluster_, "bob");
  auto [created, body] =
      AsAdmin("POST", "/api/v1/users",
              R"({"user": {"username": "bob", "active": true}, "password": "", "isHashed": true})");
  ASSERT_EQ(created, 200) << body;
  auto [bob_status, bob_opened] =
      RunShell(home + bob.PythonAsDetermined() + " -m determined.cli -m " + cluster_.url() +
               " shell open " + id + " -- hostname </dev/null 2>&1");
  EXPECT_NE(bob_status, 0) << bob_opened;
  EXPECT_EQ(bob_opened.find(std::string(hostname) + "\r\n"), std::string::npos) << bob_opened;

  // Deactivating the owner shuts the shell's door too: its key no longer gets through.
  const std::string key = cluster_.dir().path() + "/shell_key";
  ASSERT_TRUE(
      WriteFileAtomically(
          key, cluster_.Get("/api/v1/shells/" + id)["shell"]["privateKey"].get<std::string>())
          .ok());
  ASSERT_EQ(chmod(key.c_str(), 0600), 0);
  auto [key_status, key_output] = ssh_with(key);
  EXPECT_EQ(key_status, 0) << key_output;
  DeterminedCli admin(cluster_, "admin");
  admin.Det("user deactivate determined", 0, true);
  auto [closed_status, closed] = ssh_with(key);
  EXPECT_EQ(closed_status, 255) << closed;
  // Refused before sshd: the connection closes before any key exchange.
  EXPECT_NE(closed.find("Connection closed"), std::string::npos) << closed;
  EXPECT_EQ(closed.find(hostname), std::string::npos) << closed;
  admin.Det("shell kill " + id, 0, true);
}

}  // namespace
}  // namespace cairn::testing
