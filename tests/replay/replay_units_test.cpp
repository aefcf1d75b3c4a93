// In-process tests of the replay tool's pieces: flag parsing and event filters.
#include <gtest/gtest.h>

#include "events/envelope_util.h"
#include "replay/event_filter.h"
#include "replay/flags.h"
#include "tests/projections/history.h"

namespace cairn::replay {
namespace {

using cairn::testing::History;

TEST(FlagsTest, AcceptsSpaceAndEqualsForms) {
  auto flags = Flags::Parse({"--data", "/d", "--from-offset=7"}, {"data", "from-offset"});
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->Get("data"), "/d");
  auto from = flags->GetUint("from-offset");
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(**from, 7u);
  EXPECT_FALSE(flags->has("to-offset"));
}

TEST(FlagsTest, RejectsEveryMistakeWithAMessage) {
  const std::set<std::string> known = {"data", "to-offset", "since"};
  const std::vector<std::vector<std::string>> bad = {
      {"--nope", "x"}, {"--data"}, {"--data", "a", "--data", "b"},
      {"positional"},  {"--"},     {"--data="},
  };
  for (const auto& args : bad) {
    auto flags = Flags::Parse(args, known);
    ASSERT_FALSE(flags.ok()) << args[0];
    EXPECT_EQ(flags.status().code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(flags.status().message().empty());
  }
  for (const char* number : {"-1", "12x", "99999999999999999999", "1e3"}) {
    auto flags = Flags::Parse({"--to-offset", number}, known);
    ASSERT_TRUE(flags.ok());
    EXPECT_FALSE(flags->GetUint("to-offset").ok()) << number;
  }
  for (const char* time :
       {"yesterday", "2025-03-20", "2025-03-20T12:00:00+ab:cd", "2025-03-20T12:00:00Zjunk", "-5"}) {
    auto flags = Flags::Parse({"--since", time}, known);
    ASSERT_TRUE(flags.ok());
    EXPECT_FALSE(flags->GetTime("since").ok()) << time;
  }
  // Long enough to overflow the stack of a recursive regex match.
  for (const std::string& time :
       {std::string(60000, '1'), "2025-03-20T12:00:00." + std::string(60000, '0') + "Z"}) {
    auto flags = Flags::Parse({"--since", time}, known);
    ASSERT_TRUE(flags.ok());
    auto parsed = flags->GetTime("since");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_LT(parsed.status().message().size(), 200u);
  }
}

TEST(FlagsTest, ParsesTimesInBothForms) {
  auto flags = Flags::Parse({"--since", "1700000000", "--until", "2023-11-14T22:13:20.5Z"},
                            {"since", "until"});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(**flags->GetTime("since"), History::kStartMicros);
  EXPECT_EQ(**flags->GetTime("until"), History::kStartMicros + 500000);
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
