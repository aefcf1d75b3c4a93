// The `cairn replay` tool run as a real child process over a real embedded log (and Kafka's
// mock cluster): dump filters, state as of an offset or a time, rebuild and digest, what if,
// bad flags.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/clock.h"
#include "base/files.h"
#include "events/envelope_util.h"
#include "events/epoch_fence.h"
#include "events/event_log.h"
#include "projections/projections.h"
#include "replay/usage.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/projections/history.h"
#include "tests/replay/whatif_history.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::History;
using testing::TempDir;

struct CliRun {
  int exit_code = -1;
  std::vector<std::string> lines;
  std::string text() const {
    std::string all;
    for (const auto& line : lines) all += line + "\n";
    return all;
  }
};

CliRun RunCairn(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {testing::BinaryPath("cairn")};
  argv.insert(argv.end(), args.begin(), args.end());
  CliRun run;
  auto child = ChildProcess::Start(argv);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  if (!child.ok()) return run;
  // Wait for stdout to close (every line read), then for the exit.
  auto closed = (*child)->WaitForLine([](const std::string&) { return false; }, 60s);
  EXPECT_EQ(closed.status().code(), StatusCode::kUnavailable) << "cairn did not finish";
  auto status = (*child)->Wait(30s);
  EXPECT_TRUE(status.ok());
  if (status.ok() && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  run.lines = (*child)->Lines();
  return run;
}

std::vector<events::Envelope> ParseDump(const CliRun& run) {
  std::vector<events::Envelope> events;
  for (const auto& line : run.lines) {
    auto event = EnvelopeFromJson(line);
    EXPECT_TRUE(event.ok()) << line;
    if (event.ok()) events.push_back(*event);
  }
  return events;
}

std::vector<uint64_t> Offsets(const std::vector<events::Envelope>& events) {
  std::vector<uint64_t> offsets;
  for (const auto& event : events) offsets.push_back(event.offset());
  return offsets;
}

// name -> {applied offset, digest} from rebuild/digest output.
std::map<std::string, std::pair<uint64_t, std::string>> ParseSummaries(const CliRun& run) {
  std::map<std::string, std::pair<uint64_t, std::string>> summaries;
  for (const auto& line : run.lines) {
    std::istringstream words(line);
    std::string name, offset, digest;
    words >> name >> offset >> digest;
    if (digest.size() == 64) summaries[name] = {std::stoull(offset), digest};
  }
  return summaries;
}

class CairnCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    history_ = new History();
    history_->AddWorkload(4, 60);
    LogConfig config;
    config.data_dir = dir_->path();
    auto log = OpenEventLog(config);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE(history_->AppendTo(**log).ok());
  }
  static void TearDownTestSuite() {
    delete history_;
    delete dir_;
  }

  static std::map<std::string, std::string> FoldDigests(uint64_t last_offset) {
    ProjectionState state;
    for (uint64_t offset = 0; offset <= last_offset; ++offset) {
      EXPECT_TRUE(state.Apply(history_->events()[offset]).ok());
    }
    std::map<std::string, std::string> digests;
    for (const auto& name : projections::ProjectorNames()) digests[name] = *state.Digest(name);
    return digests;
  }

  const std::string& data() { return dir_->path(); }
  const History& history() { return *history_; }

  static TempDir* dir_;
  static History* history_;
};

TempDir* CairnCliTest::dir_ = nullptr;
History* CairnCliTest::history_ = nullptr;

TEST_F(CairnCliTest, DumpPrintsEveryEventAsJsonLines) {
  // Values of environment variables and credentials as anyone may see them, unless an admin asks
  // for them (--reveal); variables marked secret never.
  for (const auto& [flags, audience] :
       {std::pair{std::vector<std::string>{}, Audience::kOthers},
        std::pair{std::vector<std::string>{"--reveal"}, Audience::kOwner}}) {
    std::vector<std::string> args = {"replay", "dump", "--data", data()};
    args.insert(args.end(), flags.begin(), flags.end());
    CliRun run = RunCairn(args);
    ASSERT_EQ(run.exit_code, 0);
    auto events = ParseDump(run);
    ASSERT_EQ(events.size(), history().events().size());
    int differ_by_audience = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      // JSON has no room for fields this build does not know, and password hashes never leave
      // the master; everything else survives.
      events::Envelope original = RedactedFor(history().events()[i], audience);
      original.DiscardUnknownFields();
      EXPECT_EQ(events[i].SerializeAsString(), original.SerializeAsString()) << i;
      differ_by_audience +=
          RedactedFor(history().events()[i], Audience::kOthers).SerializeAsString() !=
          RedactedFor(history().events()[i], Audience::kOwner).SerializeAsString();
    }
    EXPECT_GT(differ_by_audience, 0) << "the history has no value to hide";
  }
  CliRun run = RunCairn({"replay", "dump", "--data", data()});
  int users = 0;
  for (const auto& event : history().events()) users += event.has_user_created() ? 1 : 0;
  ASSERT_GT(users, 0) << "the history has no user to redact";
  EXPECT_EQ(run.text().find("argon2id"), std::string::npos) << "a password hash was dumped";
}

TEST_F(CairnCliTest, DumpFiltersByTypeEntityOffsetAndTime) {
  CliRun by_type =
      RunCairn({"replay", "dump", "--data", data(), "--type", "TaskStarted,TaskExited"});
  ASSERT_EQ(by_type.exit_code, 0);
  std::vector<uint64_t> expected;
  for (const auto& event : history().events()) {
    if (event.has_task_started() || event.has_task_exited()) expected.push_back(event.offset());
  }
  EXPECT_EQ(Offsets(ParseDump(by_type)), expected);

  CliRun by_entity = RunCairn({"replay", "dump", "--data", data(), "--entity=task-5"});
  ASSERT_EQ(by_entity.exit_code, 0);
  expected.clear();
  for (const auto& event : history().events()) {
    if (EntityIdOf(event) == "task-5") expected.push_back(event.offset());
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Offsets(ParseDump(by_entity)), expected);

  CliRun by_offset =
      RunCairn({"replay", "dump", "--data", data(), "--from-offset", "5", "--to-offset", "9"});
  ASSERT_EQ(by_offset.exit_code, 0);
  EXPECT_EQ(Offsets(ParseDump(by_offset)), (std::vector<uint64_t>{5, 6, 7, 8, 9}));

  // History events are one second apart from kStartMicros.
  const std::string since = std::to_string(History::kStartMicros / 1'000'000 + 10);
  const std::string until = FormatRfc3339(history().time_of(13));
  CliRun by_time =
      RunCairn({"replay", "dump", "--data", data(), "--since", since, "--until", until});
  ASSERT_EQ(by_time.exit_code, 0);
  EXPECT_EQ(Offsets(ParseDump(by_time)), (std::vector<uint64_t>{10, 11, 12, 13}));
}

TEST_F(CairnCliTest, StateAtAnOffsetShowsTheEarlierState) {
  uint64_t submitted = 0;
  for (const auto& event : history().events()) {
    if (event.has_task_submitted() && event.task_submitted().task_id() == "task-0") {
      submitted = event.offset();
      break;
    }
  }
  CliRun early = RunCairn({"replay", "state", "--data", data(), "--at-offset",
                           std::to_string(submitted), "--format", "json"});
  ASSERT_EQ(early.exit_code, 0);
  auto early_json = nlohmann::json::parse(early.text());
  EXPECT_EQ(early_json["nextOffset"], std::to_string(submitted + 1));
  ASSERT_EQ(early_json["tasks"].size(), 1u);
  EXPECT_EQ(early_json["tasks"][0]["taskId"], "task-0");
  EXPECT_EQ(early_json["tasks"][0]["state"], "TASK_STATE_QUEUED");
  ASSERT_EQ(early_json["jobQueue"].size(), 1u);
  EXPECT_EQ(early_json["jobQueue"][0]["jobsAhead"], 0);

  CliRun late = RunCairn({"replay", "state", "--data", data(), "--at-offset",
                          std::to_string(history().last_offset()), "--format", "json"});
  ASSERT_EQ(late.exit_code, 0);
  auto late_json = nlohmann::json::parse(late.text());
  EXPECT_EQ(late_json["tasks"][0]["taskId"], "task-0");
  EXPECT_EQ(late_json["tasks"][0]["state"], "TASK_STATE_TERMINATED");
  EXPECT_GT(late_json["agents"].size(), 0u);

  // The same moment named by time gives the same state.
  CliRun by_time = RunCairn({"replay", "state", "--data", data(), "--at-time",
                             FormatRfc3339(history().time_of(submitted)), "--format", "json"});
  ASSERT_EQ(by_time.exit_code, 0);
  EXPECT_EQ(by_time.text(), early.text());
}

TEST_F(CairnCliTest, ExplainTellsATasksStoryAsOfAnyOffset) {
  uint64_t submitted = 0;
  std::string preempted;
  for (const auto& event : history().events()) {
    if (event.has_task_submitted() && event.task_submitted().task_id() == "task-0" && !submitted) {
      submitted = event.offset();
    }
    if (event.has_preemption_requested() && preempted.empty()) {
      preempted = event.preemption_requested().task_id();
    }
  }
  // Right after its submission the task waits, and the history holds only its submission.
  CliRun early = RunCairn(
      {"replay", "explain", "task-0", "--data", data(), "--at-offset", std::to_string(submitted)});
  ASSERT_EQ(early.exit_code, 0) << early.text();
  EXPECT_NE(early.text().find("QUEUED in pool"), std::string::npos) << early.text();
  EXPECT_NE(early.text().find("TaskSubmitted"), std::string::npos) << early.text();
  EXPECT_EQ(early.text().find("TaskExited"), std::string::npos) << early.text();
  // At the end it has ended, with every decision about it listed.
  CliRun late = RunCairn({"replay", "explain", "task-0", "--data", data()});
  ASSERT_EQ(late.exit_code, 0) << late.text();
  EXPECT_NE(late.text().find("EXITED"), std::string::npos) << late.text();
  EXPECT_NE(late.text().find("TaskExited"), std::string::npos) << late.text();
  // A preempted task's story carries the preemption and its reason.
  ASSERT_FALSE(preempted.empty()) << "the history workload preempts a task";
  CliRun story = RunCairn({"replay", "explain", preempted, "--data", data()});
  ASSERT_EQ(story.exit_code, 0) << story.text();
  EXPECT_NE(story.text().find("PreemptionRequested"), std::string::npos) << story.text();

  EXPECT_EQ(RunCairn({"replay", "explain", "--data", data()}).exit_code, 2);
  EXPECT_EQ(RunCairn({"replay", "explain", "no-such-task", "--data", data()}).exit_code, 1);
  EXPECT_EQ(RunCairn({"replay", "explain", "task-0", "--data", data(), "--at-offset", "1",
                      "--at-time", "0"})
                .exit_code,
            2);
}

TEST_F(CairnCliTest, ExperimentTellsTheSearchersStoryAsOfAnyOffset) {
  uint64_t created = 0;
  uint64_t first_trial = 0;
  for (const auto& event : history().events()) {
    if (event.has_experiment_created() && event.experiment_created().experiment_id() == 1) {
      created = event.offset();
    }
    if (event.has_trial_created() && event.trial_created().experiment_id() == 1 && !first_trial) {
      first_trial = event.offset();
    }
  }
  ASSERT_GT(first_trial, created) << "the history workload has experiment 1 with trials";
  CliRun late = RunCairn({"replay", "experiment", "1", "--data", data()});
  ASSERT_EQ(late.exit_code, 0) << late.text();
  EXPECT_NE(late.text().find("experiment 1 as of offset"), std::string::npos) << late.text();
  EXPECT_NE(late.text().find("TrialCreated"), std::string::npos) << late.text();
  // As of its creation it has no trial yet, and its history is that one event.
  CliRun early = RunCairn(
      {"replay", "experiment", "1", "--data", data(), "--at-offset", std::to_string(created)});
  ASSERT_EQ(early.exit_code, 0) << early.text();
  EXPECT_NE(early.text().find("ExperimentCreated"), std::string::npos) << early.text();
  EXPECT_EQ(early.text().find("TrialCreated"), std::string::npos) << early.text();
  EXPECT_EQ(RunCairn({"replay", "experiment", "abc", "--data", data()}).exit_code, 2);
  EXPECT_EQ(RunCairn({"replay", "experiment", "999", "--data", data()}).exit_code, 1);
}

TEST_F(CairnCliTest, StateTableListsTasksAgentsAndQueue) {
  CliRun run = RunCairn({"replay", "state", "--data", data(), "--at-offset",
                         std::to_string(history().last_offset())});
  ASSERT_EQ(run.exit_code, 0);
  const std::string text = run.text();
  EXPECT_NE(text.find("TASKS ("), std::string::npos) << text;
  EXPECT_NE(text.find("AGENTS ("), std::string::npos);
  EXPECT_NE(text.find("JOB QUEUE ("), std::string::npos);
  EXPECT_NE(text.find("task-0 "), std::string::npos);
  EXPECT_NE(text.find("agent-3 "), std::string::npos);
}

TEST_F(CairnCliTest, RebuildAndLiveDigestAgree) {
  TempDir scratch;
  // A "master" keeps the live projections open while the tool reads them as a secondary.
  LogConfig config;
  config.data_dir = data();
  config.read_only = true;
  auto log = OpenEventLog(config);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  auto live = Projections::Open(data() + "/projections", log->get());
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_TRUE((*live)->WaitForOffset(history().last_offset(), 30s).ok());

  CliRun rebuilt = RunCairn({"replay", "rebuild", "--data", data(), "--out", scratch.Sub("out")});
  ASSERT_EQ(rebuilt.exit_code, 0);
  CliRun digest = RunCairn({"replay", "digest", "--data", data(), "--projection", "all"});
  ASSERT_EQ(digest.exit_code, 0);
  auto rebuilt_summaries = ParseSummaries(rebuilt);
  auto live_summaries = ParseSummaries(digest);
  ASSERT_EQ(rebuilt_summaries.size(), projections::ProjectorNames().size());
  EXPECT_EQ(rebuilt_summaries, live_summaries);
  auto expected = FoldDigests(history().last_offset());
  for (const auto& [name, summary] : rebuilt_summaries) {
    EXPECT_EQ(summary.first, history().events().size()) << name;
    EXPECT_EQ(summary.second, expected[name]) << name;
  }
  EXPECT_EQ(digest.lines.back(), "log_end " + std::to_string(history().events().size()));

  // One projection, up to an earlier offset.
  const uint64_t middle = history().last_offset() / 2;
  CliRun partial = RunCairn({"replay", "rebuild", "--data", data(), "--out", scratch.Sub("mid"),
                             "--projection", "job_queue", "--to-offset", std::to_string(middle)});
  ASSERT_EQ(partial.exit_code, 0);
  auto partial_summaries = ParseSummaries(partial);
  ASSERT_EQ(partial_summaries.size(), 1u);
  EXPECT_EQ(partial_summaries["job_queue"].first, middle + 1);
  EXPECT_EQ(partial_summaries["job_queue"].second, FoldDigests(middle)["job_queue"]);
}

// A snapshot's metadata holds no digests: `digest --snapshot N` computes them from its files, and
// they are the fold's to that offset.
TEST_F(CairnCliTest, DigestOfASnapshotIsTheFoldToItsOffset) {
  TempDir master;
  LogConfig config;
  config.data_dir = master.path();
  auto log = OpenEventLog(config);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_TRUE(history().AppendTo(**log).ok());
  uint64_t taken = 0;
  {
    auto live = Projections::Open(master.path() + "/projections", log->get(),
                                  master.path() + "/snapshots", {/*every_events=*/100, 4});
    ASSERT_TRUE(live.ok()) << live.status().ToString();
    ASSERT_TRUE((*live)->WaitForOffset(history().last_offset(), 30s).ok());
    ASSERT_TRUE((*live)->WaitForSnapshot(100, 30s).ok());
    taken = (*live)->LatestSnapshot()->next_offset;
  }
  ASSERT_GT(taken, 0u);
  CliRun digest = RunCairn({"replay", "digest", "--data", master.path(), "--snapshot",
                            std::to_string(taken), "--projection", "all"});
  ASSERT_EQ(digest.exit_code, 0) << digest.text();
  auto summaries = ParseSummaries(digest);
  ASSERT_EQ(summaries.size(), projections::ProjectorNames().size());
  const auto expected = FoldDigests(taken - 1);
  for (const auto& [name, summary] : summaries) {
    EXPECT_EQ(summary.first, taken) << name;
    EXPECT_EQ(summary.second, expected.at(name)) << name;
  }

  // An offset with no snapshot says which offsets have one.
  testing::FinishedProcess missing =
      testing::RunToEnd({testing::BinaryPath("cairn"), "replay", "digest", "--data", master.path(),
                         "--snapshot", "7"},
                        60s);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.Text().find("no snapshot at offset 7"), std::string::npos) << missing.Text();
  EXPECT_NE(missing.Text().find(std::to_string(taken)), std::string::npos) << missing.Text();
}

// The command line's plumbing (the log, --at-offset, --format); the fold's figures are checked
// by hand in usage_test.cpp.
TEST_F(CairnCliTest, UsageFoldsTheLogUpToTheOffsetAsked) {
  auto fold = [&](uint64_t last_offset) {
    replay::UsageLedger ledger;
    for (uint64_t offset = 0; offset <= last_offset; ++offset) {
      ledger.Apply(history().events()[offset]);
    }
    return replay::UsageJson(ledger.Report());
  };
  CliRun whole = RunCairn({"replay", "usage", "--data", data(), "--format", "json"});
  ASSERT_EQ(whole.exit_code, 0);
  ASSERT_EQ(whole.lines.size(), 1u) << whole.text();
  const nlohmann::json figures = nlohmann::json::parse(whole.lines[0]);
  EXPECT_EQ(figures, fold(history().last_offset()));
  ASSERT_FALSE(figures["users"].empty()) << "the history has no allocation that ended";

  const uint64_t middle = history().last_offset() / 2;
  CliRun earlier = RunCairn({"replay", "usage", "--data", data(), "--format", "json", "--at-offset",
                             std::to_string(middle)});
  ASSERT_EQ(earlier.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(earlier.lines.at(0)), fold(middle));

  CliRun table = RunCairn({"replay", "usage", "--data", data()});
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.text().find("gpu_hours"), std::string::npos) << table.text();
}

TEST_F(CairnCliTest, BadUsageExitsTwoWithoutOutput) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"replay"},
      {"replay", "undo"},
      {"replay", "dump"},
      {"replay", "dump", "--data"},
      {"replay", "dump", "--data", data(), "--bogus", "1"},
      {"replay", "dump", "--data", data(), "--data", data()},
      {"replay", "dump", "--data", data(), "--type", "TaskSubmited"},
      {"replay", "dump", "--data", data(), "--from-offset", "-3"},
      {"replay", "dump", "--data", data(), "--from-offset", "9", "--to-offset", "2"},
      {"replay", "dump", "--data", data(), "--since", "2025-03-20T12:00:00+ab:cd"},
      {"replay", "dump", "--data", data(), "--since", std::string(60000, '1')},
      {"replay", "dump", "--data", data(), "--until",
       "2025-03-20T12:00:00." + std::string(60000, '0') + "Z"},
      {"replay", "dump", "--data", data(), "--kafka", "127.0.0.1:1"},
      {"replay", "dump", "--data", data(), "--topic-prefix", "x"},
      {"replay", "rebuild", "--data", data()},
      {"replay", "rebuild", "--data", data(), "--out", "/tmp/x", "--projection", "workspaces"},
      {"replay", "digest"},
      {"replay", "state", "--data", data()},
      {"replay", "state", "--data", data(), "--at-offset", "1", "--at-time", "1700000000"},
      {"replay", "state", "--data", data(), "--at-offset", "1", "--format", "xml"},
      {"replay", "state", "--data", data(), "extra"},
      {"replay", "usage"},
      {"replay", "usage", "--data", data(), "--format", "csv"},
      {"replay", "schema", "--data", data()},
      {"replay", "whatif", "--data", data()},
      {"replay", "whatif", "--data", data(), "--config", "w.yaml", "--from", "1700000010",
       "--until", "1700000000"},
      {"replay", "whatif", "--data", data(), "--config", "w.yaml", "--from", "yesterday"},
  };
  for (const auto& args : bad) {
    std::string joined;
    for (const auto& arg : args) joined += arg + " ";
    CliRun run = RunCairn(args);
    EXPECT_EQ(run.exit_code, 2) << joined;
    EXPECT_TRUE(run.lines.empty()) << joined;
  }
}

TEST_F(CairnCliTest, FailuresExitOne) {
  TempDir scratch;
  const std::string past_end = std::to_string(history().events().size());
  const std::vector<std::vector<std::string>> failing = {
      {"replay", "dump", "--data", scratch.Sub("missing")},
      {"replay", "state", "--data", data(), "--at-offset", past_end},
      {"replay", "rebuild", "--data", data(), "--out", data()},  // not empty
      {"replay", "digest", "--data", scratch.Sub("missing")},
  };
  for (const auto& args : failing) {
    CliRun run = RunCairn(args);
    EXPECT_EQ(run.exit_code, 1) << args[1] << " " << args[3];
  }
}

TEST_F(CairnCliTest, HelpGoesToStdoutAndExitsZero) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"replay", "--help"}, {"replay", "state", "-h"}}) {
    CliRun run = RunCairn(args);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_NE(run.text().find("usage: cairn"), std::string::npos);
  }
}

// The busy history (two pools, preemptions, gangs, an agent restart, a fenced straggler,
// experiments) replayed under each policy: every submission the log kept is simulated and
// counted in both columns.
TEST_F(CairnCliTest, WhatIfReplaysABusyLogUnderEveryPolicy) {
  EpochFence fence;
  std::set<std::string> submitted;
  for (const auto& event : history().events()) {
    if (fence.Admit(event) == EpochFence::Verdict::kFact && event.has_task_submitted()) {
      submitted.insert(event.task_submitted().task_id());
    }
  }
  ASSERT_GT(submitted.size(), 60u);
  TempDir scratch;
  for (const char* scheduler : {"fair_share", "priority\n    preemption: true", "round_robin"}) {
    const std::string config = scratch.Sub("whatif.yaml");
    ASSERT_TRUE(WriteFileAtomically(config, std::string("resource_manager:\n  scheduler:\n"
                                                        "    type: ") +
                                                scheduler +
                                                "\nresource_pools:\n  - pool_name: default\n"
                                                "  - pool_name: gpu\n")
                    .ok());
    CliRun run = RunCairn({"replay", "whatif", "--data", data(), "--config", config, "--json"});
    ASSERT_EQ(run.exit_code, 0) << scheduler;
    nlohmann::json json = nlohmann::json::parse(run.text());
    EXPECT_EQ(json["overall"]["actual"]["tasks"], submitted.size()) << scheduler;
    EXPECT_EQ(json["overall"]["whatif"]["tasks"], submitted.size()) << scheduler;
    EXPECT_GT(json["overall"]["whatif"]["started"], 0) << scheduler;
    EXPECT_GT(json["overall"]["actual"]["preemptions"], 0) << scheduler;
    EXPECT_EQ(json["window"]["events"], history().events().size()) << scheduler;
  }
}

// `cairn replay whatif` over a log the decider wrote: the case (whatif_test.cpp works
// its waits out by hand) as JSON and as a table, a window, and what a mistake says.
class CairnWhatIfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LogConfig config;
    config.data_dir = dir_.path();
    auto log = OpenEventLog(config);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE((*log)->Append(replay::whatif_testing::StarvationHistory()).ok());
  }

  std::string Config(const std::string& name, const std::string& yaml) {
    const std::string path = dir_.Sub(name);
    EXPECT_TRUE(WriteFileAtomically(path, yaml).ok());
    return path;
  }

  TempDir dir_;
};

TEST_F(CairnWhatIfTest, PrintsPerUserWaitsUnderAnotherPolicyBesideWhatHappened) {
  const std::string priority =
      Config("priority.yaml", "resource_manager:\n  scheduler:\n    type: priority\n");
  CliRun run =
      RunCairn({"replay", "whatif", "--data", dir_.path(), "--config", priority, "--json"});
  ASSERT_EQ(run.exit_code, 0);
  nlohmann::json json = nlohmann::json::parse(run.text());
  auto waits = [&](const char* user, const char* column) {
    return json["users"][user][column]["wait_seconds"];
  };
  auto seconds = [](double p50, double p95, double max) {
    return nlohmann::json{{"p50", p50}, {"p95", p95}, {"max", max}};
  };
  // Fair share as recorded: Bob 0, 9, 18; Alice 27, 36, 45. Priority: Bob 0, 39, 48; Alice 7,
  // 16, 25.
  EXPECT_EQ(waits("bob", "actual"), seconds(9, 18, 18));
  EXPECT_EQ(waits("alice", "actual"), seconds(36, 45, 45));
  EXPECT_EQ(waits("bob", "whatif"), seconds(39, 48, 48));
  EXPECT_EQ(waits("alice", "whatif"), seconds(16, 25, 25));
  EXPECT_EQ(json["overall"]["whatif"]["makespan_seconds"], 60.0);
  EXPECT_EQ(json["overall"]["whatif"]["slot_utilization"], 1.0);
  EXPECT_EQ(json["overall"]["whatif"]["preemptions"], 0);
  EXPECT_EQ(json["configuration"]["actual"]["pools"][0]["scheduler"], "fair_share");
  EXPECT_EQ(json["configuration"]["whatif"]["pools"][0]["scheduler"], "priority");
  EXPECT_EQ(json["workspaces"]["1"]["name"], "Uncategorized");

  // From Alice's burst on: only her tasks are counted.
  CliRun window = RunCairn({"replay", "whatif", "--data", dir_.path(), "--config", priority,
                            "--json", "--from", FormatRfc3339(replay::whatif_testing::At(3))});
  ASSERT_EQ(window.exit_code, 0);
  nlohmann::json alice_only = nlohmann::json::parse(window.text());
  EXPECT_EQ(alice_only["users"].size(), 1u);
  EXPECT_EQ(alice_only["users"]["alice"]["whatif"]["wait_seconds"], seconds(16, 25, 25));

  CliRun table = RunCairn({"replay", "whatif", "--data", dir_.path(), "--config", priority});
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.text().find("user alice"), std::string::npos) << table.text();
  EXPECT_NE(table.text().find("what-if: default priority"), std::string::npos) << table.text();
}

TEST_F(CairnWhatIfTest, AMistakeIsNamed) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::string missing = dir_.Sub("missing.yaml");
  const std::string bad =
      Config("bad.yaml", "resource_manager:\n  scheduler:\n    type: lottery\n");
  const std::string good = Config("good.yaml", "scheduler:\n  type: priority\n");
  const std::vector<Case> cases = {
      {{"--config", missing}, "--config: " + missing + " does not exist"},
      {{"--config", bad}, bad + ":3: resource_manager.scheduler.type: must be fair_share"},
      {{"--config", good, "--from", "2030-01-01T00:00:00Z"},
       "no task was submitted between 2030-01-01T00:00:00"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {testing::BinaryPath("cairn"), "replay", "whatif", "--data",
                                     dir_.path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    testing::FinishedProcess run = testing::RunToEnd(argv, 60s);
    EXPECT_EQ(run.exit_code, 1) << run.Text();
    EXPECT_NE(run.Text().find("cairn replay whatif: " + message), std::string::npos) << run.Text();
  }
}

TEST(CairnKafkaTest, ReadsTheLogFromKafka) {
  auto cluster = testing::MockKafkaCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  ASSERT_TRUE((*cluster)->CreateCairnTopics("replaytest").ok());
  History history;
  history.AddWorkload(2, 10);
  {
    LogConfig config;
    config.backend = "kafka";
    config.brokers = (*cluster)->bootstraps();
    config.topic_prefix = "replaytest";
    auto log = OpenEventLog(config);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE(history.AppendTo(**log).ok());
  }
  const std::vector<std::string> kafka = {"--kafka", (*cluster)->bootstraps(), "--topic-prefix",
                                          "replaytest"};
  std::vector<std::string> dump = {"replay", "dump", "--type", "TaskSubmitted"};
  dump.insert(dump.end(), kafka.begin(), kafka.end());
  CliRun dumped = RunCairn(dump);
  ASSERT_EQ(dumped.exit_code, 0);
  size_t submissions = 0;
  for (const auto& event : history.events()) submissions += event.has_task_submitted() ? 1 : 0;
  EXPECT_EQ(ParseDump(dumped).size(), submissions);

  TempDir scratch;
  std::vector<std::string> rebuild = {"replay", "rebuild", "--out", scratch.Sub("out")};
  rebuild.insert(rebuild.end(), kafka.begin(), kafka.end());
  CliRun rebuilt = RunCairn(rebuild);
  ASSERT_EQ(rebuilt.exit_code, 0);
  ProjectionState state;
  for (const auto& event : history.events()) ASSERT_TRUE(state.Apply(event).ok());
  auto summaries = ParseSummaries(rebuilt);
  ASSERT_EQ(summaries.size(), projections::ProjectorNames().size());
  for (const auto& [name, summary] : summaries) {
    EXPECT_EQ(summary.second, *state.Digest(name)) << name;
  }
}

}  // namespace
}  // namespace cairn
