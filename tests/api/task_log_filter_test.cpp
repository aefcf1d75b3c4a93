// Determined's task-log filters (GET /api/v1/tasks/{id}/logs: allocationIds, agentIds,
// containerIds, rankIds, levels, stdtypes, sources, timestampBefore/After, searchText with
// enableRegex), as `det task logs` and `det trial logs` send them, over real HTTP: each keeps
// exactly the lines whose field it names, they combine with the window (limit, orderBy), and a
// bad value is a 400 naming the parameter.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/api/api_fixture.h"

namespace cairn {
namespace {

using nlohmann::json;
using namespace api_testing;

class TaskLogFilterTest : public ApiTest {
 protected:
  // A finished command whose agent sent three lines: stdout, stderr, and a rank-1 gang part's.
  void SetUp() override {
    ApiTest::SetUp();
    RegisterAgent("a1", 1, "inc-1");
    task_ = Submit({{"entrypoint", {"true"}}});
    net::Client streamer = LoggedInClient();
    std::string allocation;
    ASSERT_TRUE(streamer
                    .StreamLines("GET", "/api/v1/events?from=0&agent=a1",
                                 [&](std::string_view line) {
                                   allocation = json::parse(line)["allocationAssigned"].value(
                                       "allocationId", "");
                                   return false;
                                 })
                    .ok());
    ASSERT_FALSE(allocation.empty());
    CallJson("POST", "/api/v1/allocations/" + allocation + "/started",
             json{{"taskId", task_}, {"agentId", "a1"}, {"pid", 9}}.dump());
    auto line = [&](int64_t seq, const char* stdtype, const char* text, const char* time) {
      return json{{"taskId", task_},  {"allocationId", allocation}, {"agentId", "a1"},
                  {"seq", seq},       {"stdtype", stdtype},         {"log", text},
                  {"timestamp", time}};
    };
    CallJson(
        "POST", "/api/v1/task/logs",
        json{{"logs",
              {line(0, "stdout", "training step 1\n", "2025-03-20T12:00:01Z"),
               line(1, "stderr", "Traceback: boom\n", "2025-03-20T12:00:02Z"),
               line((int64_t{1} << 40) + 2, "stdout", "[rank=1] hello\n", "2025-03-20T12:00:03Z")}}}
            .dump());
    auto exited = Call("POST", "/api/v1/allocations/" + allocation + "/exited",
                       json{{"taskId", task_}, {"agentId", "a1"}, {"exitCode", 0}}.dump());
    ASSERT_EQ(exited.status, 200);
    CallJson("GET", "/api/v1/tasks/" + task_ + "?minOffset=" + exited.headers["cairn-offset"]);
  }

  // The messages of the lines the query keeps, in order.
  std::vector<std::string> Messages(const std::string& query) {
    std::vector<std::string> messages;
    net::Client client = LoggedInClient();
    auto status = client.StreamLines("GET", "/api/v1/tasks/" + task_ + "/logs?" + query,
                                     [&](std::string_view text) {
                                       json record = json::parse(text);
                                       messages.push_back(record["result"].value("message", ""));
                                       return true;
                                     });
    EXPECT_TRUE(status.ok()) << query << ": " << status.ToString();
    return messages;
  }

  std::string task_;
};

using Lines = std::vector<std::string>;

TEST_F(TaskLogFilterTest, EachFilterKeepsTheLinesItNames) {
  const std::string exited = "resources exited successfully with a zero exit code\n";
  EXPECT_EQ(Messages("").size(), 5u) << "three task lines, two of the master's";
  EXPECT_EQ(Messages("stdtypes=stderr"), (Lines{"Traceback: boom\n"}));
  EXPECT_EQ(Messages("levels=LOG_LEVEL_ERROR&levels=LOG_LEVEL_CRITICAL"),
            (Lines{"Traceback: boom\n"}));
  EXPECT_EQ(Messages("sources=master").size(), 2u);
  EXPECT_EQ(Messages("sources=master")[0], exited);
  EXPECT_EQ(Messages("rankIds=1"), (Lines{"[rank=1] hello\n"}));
  EXPECT_EQ(Messages("agentIds=a1").size(), 3u) << "the master's lines have no agent";
  EXPECT_TRUE(Messages("agentIds=a2").empty());
  EXPECT_TRUE(Messages("containerIds=c1").empty());
  EXPECT_EQ(Messages("timestampAfter=2025-03-20T12:00:01Z&timestampBefore=2025-03-20T12:00:03Z"),
            (Lines{"Traceback: boom\n"}));
  EXPECT_EQ(Messages("searchText=TRACEBACK"), (Lines{"Traceback: boom\n"}));
  EXPECT_EQ(Messages("searchText=%5E%5C%5Brank%3D%5Cd%5C%5D&enableRegex=true"),
            (Lines{"[rank=1] hello\n"}));
  // Filters combine with AND, and the window counts only the lines they keep.
  EXPECT_EQ(Messages("stdtypes=stdout&sources=task&limit=1&orderBy=ORDER_BY_DESC"),
            (Lines{"[rank=1] hello\n"}));
  EXPECT_EQ(Messages("stdtypes=stdout&sources=task&limit=1"), (Lines{"training step 1\n"}));
}

TEST_F(TaskLogFilterTest, BadFilterValuesAreRefusedByName) {
  for (const auto& [query, named] : std::vector<std::pair<std::string, std::string>>{
           {"levels=LOUD", "levels"},
           {"rankIds=first", "rankIds"},
           {"timestampBefore=yesterday", "timestampBefore"},
           {"searchText=%28&enableRegex=true", "searchText"}}) {
    auto answer = Call("GET", "/api/v1/tasks/" + task_ + "/logs?" + query);
    EXPECT_EQ(answer.status, 400) << query;
    EXPECT_NE(answer.body.find(named), std::string::npos) << query << ": " << answer.body;
  }
}

}  // namespace
}  // namespace cairn
