// The cairn-master binary's command line: its help, its usage errors, and the line format of
// what it logs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/test_certificates.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using testing::BinaryPath;
using testing::FinishedProcess;
using testing::RunToEnd;
using testing::TempDir;

constexpr auto kTimeout = 30s;

FinishedProcess RunMaster(std::vector<std::string> args) {
  args.insert(args.begin(), BinaryPath("cairn-master"));
  return RunToEnd(args, kTimeout);
}

TEST(MasterBinaryTest, HelpListsEveryOption) {
  FinishedProcess help = RunMaster({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"usage: cairn-master", "--config FILE", "--log-level LEVEL",
                             "CAIRN_LOG_LEVEL", "--version", "--help"}) {
    EXPECT_NE(help.Text().find(option), std::string::npos) << option << "\n" << help.Text();
  }
}

TEST(MasterBinaryTest, VersionNamesTheBinary) {
  FinishedProcess version = RunMaster({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  ASSERT_EQ(version.lines.size(), 1u) << version.Text();
  EXPECT_EQ(version.lines[0].rfind("cairn-master ", 0), 0u) << version.Text();
}

TEST(MasterBinaryTest, UsageErrorsExitTwoSayingWhatIsWrong) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bogus"}, "--bogus"},
      {{}, "--config"},
      {{"--config"}, "--config"},
      {{"--config", "a.yaml", "--config", "b.yaml"}, "--config"},
      {{"--config", "a.yaml", "extra"}, "extra"},
      {{"--config", "a.yaml", "--log-level", "loud"}, "--log-level"},
  };
  for (const auto& [args, named] : cases) {
    FinishedProcess run = RunMaster(args);
    std::string joined;
    for (const auto& arg : args) joined += arg + " ";
    EXPECT_EQ(run.exit_code, 2) << joined;
    EXPECT_EQ(run.Text().rfind("cairn-master: ", 0), 0u) << joined << "\n" << run.Text();
    EXPECT_NE(run.Text().find(named), std::string::npos) << joined << "\n" << run.Text();
    EXPECT_NE(run.Text().find("cairn-master --help"), std::string::npos) << run.Text();
  }
}

TEST(MasterBinaryTest, ABadConfigIsLoggedInCairnsLineFormatAndExitsTwo) {
  TempDir dir;
  std::ofstream(dir.Sub("master.yaml"))
      << "port: 0\ndata_dir: " << dir.Sub("data") << "\ncolour: blue\n";
  FinishedProcess run = RunMaster({"--config", dir.Sub("master.yaml")});
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_EQ(run.lines.size(), 1u) << run.Text();
  // UTC time with microseconds, the level's letter, the process, the component, the message.
  static const std::regex kLine(
      R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z E cairn-master master: .*colour.*)");
  EXPECT_TRUE(std::regex_match(run.lines[0], kLine)) << run.lines[0];

  // --log-level off silences it; the exit code still tells.
  FinishedProcess quiet = RunMaster({"--config", dir.Sub("master.yaml"), "--log-level", "off"});
  EXPECT_EQ(quiet.exit_code, 2);
  EXPECT_TRUE(quiet.lines.empty()) << quiet.Text();
}

// The master refuses to start, before it touches the log, when it cannot use its TLS files, and
// says which file; with usable ones it announces an https:// URL.
TEST(MasterBinaryTest, AMissingTlsKeyFileStopsTheStartNamingTheFile) {
  TempDir dir;
  auto certificates = testing::MakeTestCertificates(dir.path());
  ASSERT_TRUE(certificates.ok()) << certificates.status().ToString();
  const std::string missing = dir.Sub("absent.key");
  std::ofstream(dir.Sub("master.yaml"))
      << "port: 0\ndata_dir: " << dir.Sub("data")
      << "\nsecurity:\n  tls:\n    cert: " << certificates->cert_file << "\n    key: " << missing
      << "\n";
  FinishedProcess run = RunMaster({"--config", dir.Sub("master.yaml")});
  EXPECT_EQ(run.exit_code, 1) << run.Text();
  EXPECT_NE(run.Text().find("cannot start"), std::string::npos) << run.Text();
  EXPECT_NE(run.Text().find("TLS key file '" + missing + "'"), std::string::npos) << run.Text();
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("data") + "/log")) << "nothing written";
}

}  // namespace
}  // namespace cairn
