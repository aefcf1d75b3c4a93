// In-process tests of the replay tool's pieces: its command line and event filters.
#include <gtest/gtest.h>

#include "base/command_line.h"
#include "events/envelope_util.h"
#include "replay/event_filter.h"
#include "replay/replay_command.h"
#include "tests/projections/history.h"

namespace cairn::replay {
namespace {

using cairn::testing::History;

// Parses `cairn ARGS` as the binary does; nullopt when the command line passes every check.
std::optional<command_line::Stop> ParseCairn(const std::vector<std::string>& args) {
  CLI::App app("", "cairn");
  command_line::Configure(app);
  log::Level log_level = log::Level::kInfo;
  command_line::AddLogLevelOption(app, log_level);
  ReplayCommand replay(app);
  return command_line::Parse(app, args);
}

TEST(ReplayCommandTest, AcceptsSpaceAndEqualsForms) {
  auto stop = ParseCairn({"replay", "dump", "--data", "/d", "--from-offset=7", "--until",
                          "1700000000", "--type=TaskSubmitted"});
  EXPECT_FALSE(stop) << stop->text;
}

TEST(ReplayCommandTest, RejectsEveryMistakeWithAMessageNamingTheFlag) {
  const std::vector<std::string> dump = {"replay", "dump", "--data", "/d"};
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--nope", "x"}, "--nope"},
      {{"--data"}, "--data"},
      {{"--data", "/e"}, "--data"},
      {{"positional"}, "positional"},
      {{"--type", "TaskSubmited"}, "TaskSubmited"},
      {{"--topic-prefix", "p"}, "--kafka"},
      {{"--from-offset", "9", "--to-offset", "2"}, "--to-offset"},
  };
  for (const char* number : {"-1", "12x", "99999999999999999999", "1e3", "0x10", "+5", " 5", ""}) {
    cases.push_back({{"--to-offset", number}, "--to-offset"});
  }
  for (const char* time :
       {"yesterday", "2025-03-20", "2025-03-20T12:00:00+ab:cd", "2025-03-20T12:00:00Zjunk", "-5"}) {
    cases.push_back({{"--since", time}, "--since"});
  }
  // Long enough to overflow the stack of a recursive regex match.
  for (const std::string& time :
       {std::string(60000, '1'), "2025-03-20T12:00:00." + std::string(60000, '0') + "Z"}) {
    cases.push_back({{"--until", time}, "--until"});
  }
  for (const auto& [extra, named] : cases) {
    std::vector<std::string> args = dump;
    args.insert(args.end(), extra.begin(), extra.end());
    std::optional<command_line::Stop> stop = ParseCairn(args);
    ASSERT_TRUE(stop) << extra[0];
    EXPECT_EQ(stop->kind, command_line::Stop::Kind::kUsageError) << extra[0];
    EXPECT_EQ(stop->command, "cairn replay dump") << extra[0];
    EXPECT_NE(stop->text.find(named), std::string::npos) << stop->text;
    // One line, except that an unknown event type is answered with the known ones (about 20
    // characters each).
    const size_t event_types =
        events::Envelope::descriptor()->FindOneofByName("payload")->field_count();
    EXPECT_LT(stop->text.size(), named == "TaskSubmited" ? 200u + 20u * event_types : 200u)
        << stop->text;
  }
}

TEST(ReplayCommandTest, ChecksWhatFlagsExcludeAndNeed) {
  const std::vector<std::vector<std::string>> bad = {
      {"replay"},
      {"replay", "undo"},
      {"replay", "dump", "--data", "/d", "--kafka", "k:1"},
      {"replay", "state", "--data", "/d"},
      {"replay", "state", "--data", "/d", "--at-offset", "1", "--at-time", "1"},
      {"replay", "state", "--data", "/d", "--at-offset", "1", "--format", "xml"},
      {"replay", "state", "--data", "/d", "--at-offset", "1", "dump"},
      {"replay", "explain", "--data", "/d"},
      {"replay", "explain", "t", "--data", "/d", "--at-offset", "1", "--at-time", "1"},
      {"replay", "experiment", "0", "--data", "/d"},
      {"replay", "rebuild", "--data", "/d"},
      {"replay", "rebuild", "--data", "/d", "--out", "/o", "--projection", "workspaces"},
      {"replay", "digest", "--kafka", "k:1"},
  };
  for (const auto& args : bad) {
    std::string joined;
    for (const auto& arg : args) joined += arg + " ";
    std::optional<command_line::Stop> stop = ParseCairn(args);
    ASSERT_TRUE(stop) << joined;
    EXPECT_EQ(stop->kind, command_line::Stop::Kind::kUsageError) << joined;
  }
  const std::vector<std::vector<std::string>> good = {
      {"replay", "state", "--kafka", "k:1", "--topic-prefix", "p", "--at-time",
       "2025-03-20T12:00:00+01:00"},
      {"replay", "explain", "t", "--data", "/d"},
      {"replay", "explain", "--task", "t", "--data", "/d", "--at-offset", "3"},
      {"replay", "experiment", "12", "--data", "/d", "--at-time", "1700000000"},
      {"replay", "rebuild", "--data", "/d", "--out", "/o", "--projection", "job_queue"},
      {"replay", "digest", "--data", "/d", "--kafka", "k:1", "--log-level", "debug"},
  };
  for (const auto& args : good) {
    std::optional<command_line::Stop> stop = ParseCairn(args);
    EXPECT_FALSE(stop) << stop->text;
  }
}

TEST(ParseTimeArgumentTest, ParsesTimesInBothForms) {
  EXPECT_EQ(*ParseTimeArgument("1700000000"), History::kStartMicros);
  EXPECT_EQ(*ParseTimeArgument("2023-11-14T22:13:20.5Z"), History::kStartMicros + 500000);
  EXPECT_EQ(*ParseTimeArgument("2023-11-14T23:13:20+01:00"), History::kStartMicros);
  EXPECT_EQ(ParseTimeArgument("soon").status().code(), StatusCode::kInvalidArgument);
}

TEST(EventFilterTest, TypesMustExist) {
  auto types = ParseEventTypes("TaskSubmitted,TaskExited");
  ASSERT_TRUE(types.ok());
  EXPECT_EQ(types->size(), 2u);
  EXPECT_TRUE(ParseEventTypes("Unknown").ok());
  EXPECT_FALSE(ParseEventTypes("TaskSubmited").ok());
  EXPECT_FALSE(ParseEventTypes(",").ok());
}

TEST(EventFilterTest, EntityMatchesEveryIdAnEventIsAbout) {
  History history;
  const events::Envelope submit = history.Submit("t1", "j1", "default", 42, 1);
  const events::Envelope assign = history.Assign("t1", "al1", "a1", "i1", {0});
  const events::Envelope exit = history.Exit("t1", "al1", "a1", 0, std::nullopt, "done");
  const events::Envelope registered = history.Register("a1", "i1", "default", 4);
  EXPECT_TRUE(EventMentions(submit, "t1"));
  EXPECT_TRUE(EventMentions(submit, "j1"));
  EXPECT_FALSE(EventMentions(submit, "a1"));
  EXPECT_TRUE(EventMentions(assign, "a1"));
  EXPECT_TRUE(EventMentions(assign, "al1"));
  EXPECT_TRUE(EventMentions(exit, "a1"));
  EXPECT_TRUE(EventMentions(registered, "a1"));
  EXPECT_FALSE(EventMentions(registered, "t1"));
}

TEST(EventFilterTest, BoundsAreInclusive) {
  History history;
  for (int i = 0; i < 10; ++i) history.Submit("t" + std::to_string(i), "j", "default", 1, 1);
  EventFilter filter;
  filter.from_offset = 2;
  filter.to_offset = 7;
  filter.since_micros = history.time_of(3);
  filter.until_micros = history.time_of(6);
  std::vector<uint64_t> kept;
  for (const auto& event : history.events()) {
    if (filter.Matches(event)) kept.push_back(event.offset());
  }
  EXPECT_EQ(kept, (std::vector<uint64_t>{3, 4, 5, 6}));
}

}  // namespace
}  // namespace cairn::replay
