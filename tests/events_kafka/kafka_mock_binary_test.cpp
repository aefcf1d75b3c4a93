// cairn-kafka-mock as a real process: it prints its bootstrap list, serves Cairn's topics to the
// Kafka log, and exits cleanly on SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "events/kafka/kafka_log.h"
#include "tests/events_kafka/kafka_test_util.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using std::chrono::milliseconds;
using testing::BinaryPath;
using testing::ChildProcess;

constexpr char kLinePrefix[] = "cairn-kafka-mock bootstraps: ";

TEST(KafkaMockBinaryTest, ServesCairnTopicsUntilSigterm) {
  testing::TempDir dir;
  const std::string bootstrap_file = dir.Sub("bootstraps");
  auto child = ChildProcess::Start({BinaryPath("cairn-kafka-mock"), "--brokers", "2",
                                    "--topic-prefix", "local", "--bootstrap-file", bootstrap_file});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto line =
      (*child)->WaitForLine([](const std::string& text) { return text.rfind(kLinePrefix, 0) == 0; },
                            milliseconds(20'000));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  const std::string bootstraps = line->substr(sizeof kLinePrefix - 1);
  EXPECT_EQ(std::count(bootstraps.begin(), bootstraps.end(), ','), 1) << bootstraps;

  std::string from_file;
  std::getline(std::ifstream(bootstrap_file), from_file);
  EXPECT_EQ(from_file, bootstraps);

  auto log = OpenKafkaLog(bootstraps, "local", false);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  auto range = (*log)->Append({testing::MakeEvent("through-the-binary")});
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->first, 0u);
  auto events = testing::ReadRange(**log, 0, 1, milliseconds(20'000));
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(events->at(0).event_id(), "through-the-binary");
  auto placements = testing::ReadWholeTopic(bootstraps, "local.placements", milliseconds(20'000));
  ASSERT_TRUE(placements.ok()) << placements.status().ToString();
  log->reset();

  (*child)->Signal(SIGTERM);
  auto status = (*child)->Wait(milliseconds(20'000));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  ASSERT_TRUE(WIFEXITED(*status)) << "raw wait status " << *status;
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_FALSE(std::filesystem::exists(bootstrap_file));
}

TEST(KafkaMockBinaryTest, RejectsBadArguments) {
  auto child = ChildProcess::Start({BinaryPath("cairn-kafka-mock"), "--brokers", "zero"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto status = (*child)->Wait(milliseconds(20'000));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 2);
}

TEST(KafkaMockBinaryTest, HelpListsEveryOption) {
  testing::FinishedProcess help =
      testing::RunToEnd({BinaryPath("cairn-kafka-mock"), "--help"}, milliseconds(20'000));
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--brokers N", "--topic-prefix PREFIX", "--placement-partitions N",
                             "--bootstrap-file FILE", "--log-level LEVEL", "--version"}) {
    EXPECT_NE(help.Text().find(option), std::string::npos) << option << "\n" << help.Text();
  }
}

}  // namespace
}  // namespace cairn
