// A log written by the previous version (tests/fixtures/v1, see its README) is read by this one:
// its projections rebuild to the digests that version printed, and a master starts on it and
// serves what it recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "net/http_client.h"
#include "net/session_login.h"
#include "replay/replay_tool.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::TempDir;

const std::string kFixture = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/v1";

// A master data directory whose log is a copy of the fixture (the test may append to it).
std::string CopyFixtureInto(const TempDir& dir) {
  std::string data = dir.Sub("data");
  std::filesystem::create_directories(data + "/log");
  std::filesystem::copy_file(kFixture + "/00000000000000000000.log",
                             data + "/log/00000000000000000000.log");
  return data;
}

// "name applied_offset digest" rows of a rebuild's output, by name.
std::map<std::string, std::string> RowsByProjection(const std::string& text) {
  std::map<std::string, std::string> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("projection ", 0) == 0) continue;
    rows[line.substr(0, line.find(' '))] = line;
  }
  return rows;
}

TEST(CompatibilityTest, TheProjectionsOfAV1LogRebuildToTheDigestsV1Printed) {
  TempDir dir;
  replay::ReplayOptions options;
  options.data_dir = CopyFixtureInto(dir);
  options.out_dir = dir.Sub("rebuilt");
  std::ostringstream out;
  ASSERT_TRUE(replay::Rebuild(options, out).ok()) << out.str();
  auto rebuilt = RowsByProjection(out.str());

  std::ifstream stored_file(kFixture + "/digests.txt");
  std::stringstream stored_text;
  stored_text << stored_file.rdbuf();
  auto stored = RowsByProjection(stored_text.str());
  ASSERT_EQ(stored.size(), 4u) << "the fixture's digests are unreadable";
  for (const auto& [name, row] : stored) {
    EXPECT_EQ(rebuilt[name], row) << name << " no longer rebuilds to what v1 built";
  }
  // Projections v1 did not have are built from the same log, to its end.
  for (const char* name : {"pools", "templates", "writers"}) {
    ASSERT_TRUE(rebuilt.count(name)) << out.str();
    EXPECT_EQ(rebuilt[name].rfind(std::string(name) + " 149 ", 0), 0u) << rebuilt[name];
  }
}

// Every event of v1 already named its actor, so the audit trail reaches back to the first one.
TEST(CompatibilityTest, TheAuditOfAV1LogTellsWhoDidWhat) {
  TempDir dir;
  testing::FinishedProcess audit =
      testing::RunToEnd({testing::BinaryPath("cairn"), "replay", "audit", "--data",
                         CopyFixtureInto(dir), "--entity", "experiment/1", "--actor", "determined"},
                        std::chrono::seconds(60));
  ASSERT_EQ(audit.exit_code, 0) << audit.Text();
  std::vector<std::string> found;
  for (const auto& line : audit.lines) {
    if (line.find("  #") != std::string::npos) found.push_back(line);
  }
  ASSERT_EQ(found.size(), 1u) << audit.Text();
  EXPECT_NE(found[0].find("  #20  user:determined  ExperimentCreated  experiment/1"),
            std::string::npos)
      << found[0];
}

TEST(CompatibilityTest, AMasterStartsOnAV1LogAndServesWhatItRecorded) {
  TempDir dir;
  std::string data = CopyFixtureInto(dir);
  std::ofstream(dir.Sub("master.yaml"))
      << "port: 0\nlisten_address: 127.0.0.1\ndata_dir: " << data << "\n";
  auto master = ChildProcess::Start(
      {testing::BinaryPath("cairn-master"), "--config", dir.Sub("master.yaml")});
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  auto listening = (*master)->WaitForLine(
      [](const std::string& line) { return line.rfind("cairn-master listening on ", 0) == 0; },
      60s);
  ASSERT_TRUE(listening.ok()) << listening.status().ToString();
  auto client = net::Client::FromUrl(listening->substr(listening->rfind(' ') + 1));
  ASSERT_TRUE(client.ok());
  // The old log has no users: the new master made Determined's built-in ones as it started.
  ASSERT_TRUE(net::LogIn(*client, "determined").ok());

  // The grid search: completed, its six trials and their checkpoints.
  auto experiment = client->Request("GET", "/api/v1/experiments/1");
  ASSERT_TRUE(experiment.ok());
  ASSERT_EQ(experiment->status, 200) << experiment->body;
  auto body = nlohmann::json::parse(experiment->body);
  EXPECT_EQ(body["experiment"]["state"], "STATE_COMPLETED") << experiment->body;
  auto trials = client->Request("GET", "/api/v1/experiments/1/trials");
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->status, 200) << trials->body;
  auto trial_list = nlohmann::json::parse(trials->body)["trials"];
  ASSERT_EQ(trial_list.size(), 6u) << trials->body;
  for (const auto& trial : trial_list) EXPECT_EQ(trial["state"], "STATE_COMPLETED") << trial;

  // The demo's four commands, among them the killed sleep.
  auto commands = client->Request("GET", "/api/v1/commands");
  ASSERT_TRUE(commands.ok());
  ASSERT_EQ(commands->status, 200) << commands->body;
  auto command_list = nlohmann::json::parse(commands->body)["commands"];
  EXPECT_EQ(command_list.size(), 4u) << commands->body;
  EXPECT_NE(commands->body.find("sleep"), std::string::npos) << commands->body;

  (*master)->Signal(SIGTERM);
  auto exited = (*master)->Wait(30s);
  ASSERT_TRUE(exited.ok());
  EXPECT_TRUE(WIFEXITED(*exited) && WEXITSTATUS(*exited) == 0);
}

}  // namespace
}  // namespace cairn
