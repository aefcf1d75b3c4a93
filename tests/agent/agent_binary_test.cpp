// The cairn-agent binary: its help, usage errors, the registered line, and a clean stop on
// SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "tests/agent/fake_master.h"
#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using cairn::testing::BinaryPath;
using cairn::testing::ChildProcess;
using cairn::testing::FinishedProcess;
using cairn::testing::RunToEnd;
using cairn::testing::TempDir;
using Calls = std::vector<testing::FakeMaster::Call>;

constexpr auto kBinaryTimeout = 15s;

// Runs cairn-agent with `args` under `env` (via /usr/bin/env, so PATH can be replaced) and
// returns its exit code.
int RunToExit(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(BinaryPath("cairn-agent"));
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::Start(argv);
  EXPECT_TRUE(child.ok());
  if (!child.ok()) return -1;
  Result<int> status = (*child)->Wait(kBinaryTimeout);
  EXPECT_TRUE(status.ok());
  if (!status.ok() || !WIFEXITED(*status)) return -1;
  return WEXITSTATUS(*status);
}

TEST(AgentBinaryTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(RunToExit({"--bogus"}), 2);
  EXPECT_EQ(RunToExit({"--master", "http://127.0.0.1:1", "--id", "a", "--slots", "lots"}), 2);
  EXPECT_EQ(RunToExit({"--master", "http://127.0.0.1:1"}), 2);
  EXPECT_EQ(RunToExit({"--help"}), 0);
}

TEST(AgentBinaryTest, HelpListsEveryOption) {
  FinishedProcess help = RunToEnd({BinaryPath("cairn-agent"), "--help"}, kBinaryTimeout);
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option :
       {"--master URL", "--id NAME", "--slots N", "--pool NAME", "--config FILE", "--work-root DIR",
        "--kill-grace SECONDS", "--heartbeat-interval SECONDS", "--trace-file FILE",
        "--log-level LEVEL", "--version", "--help"}) {
    EXPECT_NE(help.Text().find(option), std::string::npos) << option << "\n" << help.Text();
  }
}

TEST(AgentBinaryTest, ABadFlagExitsTwoSayingWhichAndWhereTheHelpIs) {
  FinishedProcess run = RunToEnd({BinaryPath("cairn-agent"), "--master", "http://127.0.0.1:1",
                                  "--id", "a", "--colour", "blue"},
                                 kBinaryTimeout);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.Text().rfind("cairn-agent: ", 0), 0u) << run.Text();
  EXPECT_NE(run.Text().find("--colour"), std::string::npos) << run.Text();
  EXPECT_NE(run.Text().find("cairn-agent --help"), std::string::npos) << run.Text();
}

TEST(AgentBinaryTest, WithoutSlotsOrNvidiaSmiAsksForSlots) {
  TempDir empty_path;
  EXPECT_EQ(
      RunToExit({"--master", "http://127.0.0.1:1", "--id", "a"}, {"PATH=" + empty_path.path()}), 2);
}

TEST(AgentBinaryTest, RegistersPrintsOneLineAndStopsCleanlyOnSigterm) {
  testing::FakeMaster master;
  TempDir dir;
  std::ofstream(dir.Sub("agent.yaml")) << "id: node-7\nresource_pool: from-file\nslots: 1\n";
  auto child = ChildProcess::Start({BinaryPath("cairn-agent"), "--config", dir.Sub("agent.yaml"),
                                    "--master", master.url(), "--slots", "3", "--work-root",
                                    dir.Sub("work"), "--heartbeat-interval", "0.05"});
  ASSERT_TRUE(child.ok());
  std::string expected =
      "cairn-agent node-7 registered with " + master.url() + " (3 slots, pool from-file)";
  Result<std::string> line =
      (*child)->WaitForLine([&](const std::string& l) { return l == expected; }, kBinaryTimeout);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  ASSERT_TRUE(master.WaitFor(
      [](const Calls& calls) { return testing::CountCalls(calls, "/heartbeat", "", 200) > 0; },
      kBinaryTimeout));
  (*child)->Signal(SIGTERM);
  Result<int> status = (*child)->Wait(kBinaryTimeout);
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_EQ((*child)->Lines(), std::vector<std::string>{expected});
}

}  // namespace
}  // namespace cairn::agent
