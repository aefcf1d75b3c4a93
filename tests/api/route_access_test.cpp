// Every route of the table, called by every kind of caller it must refuse: no route can be added
// without an access rule that is enforced (a new route is covered by this walk the moment it is
// in api/route_table.cpp), and a refused call appends nothing to the log.
#include <gtest/gtest.h>

#include <set>

#include "api/route_table.h"
#include "base/password.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

using api::Access;
using api::AccessName;
using api::Route;
using api::RouteTable;

// A concrete request path for `pattern`: every parameter becomes `value`, a "{rest...}" two
// segments.
std::string PathFor(const std::string& pattern, const std::string& value) {
  std::string path;
  size_t start = 1;
  while (start <= pattern.size()) {
    size_t slash = pattern.find('/', start);
    if (slash == std::string::npos) slash = pattern.size();
    std::string segment = pattern.substr(start, slash - start);
    if (segment == "{rest...}") {
      segment = value + "/" + value;
    } else if (segment.size() > 2 && segment.front() == '{') {
      segment = value;
    }
    path += "/" + segment;
    start = slash + 1;
  }
  return path;
}

std::string MethodFor(const Route& route) {
  return std::string(route.method) == "*" ? "POST" : route.method;
}

class RouteAccessTest : public ApiTest {
 protected:
  int StatusOf(const Route& route, const std::string& token, const std::string& value = "7") {
    std::map<std::string, std::string> headers;
    headers["Authorization"] = token.empty() ? "" : "Bearer " + token;
    return Call(MethodFor(route), PathFor(route.pattern, value), "{}", headers).status;
  }
};

// The web UI's page and files are open too: a browser loads them before it can log in (the page
// that opens a notebook for Determined's CLI logs in itself).
TEST_F(RouteAccessTest, OnlyTheLoginTheMastersPublicInfoAndTheWebUiFilesAreOpen) {
  std::set<std::string> open;
  for (const Route& route : RouteTable()) {
    if (route.access == Access::kPublic) open.insert(MethodFor(route) + " " + route.pattern);
  }
  EXPECT_EQ(open, (std::set<std::string>{
                      "GET /info", "GET /api/v1/master", "POST /api/v1/auth/login",
                      // OpenPAI's login, at its path and under /pai
                      "POST /api/v1/token", "POST /pai/api/v1/token", "GET /", "GET /ui/{rest...}",
                      "GET /ui/vendor/chart.js", "GET /det/interactive/{rest...}"}));
}

TEST_F(RouteAccessTest, EveryOtherRouteRefusesCallersItIsNotFor) {
  const size_t events_before = Events().size();
  const std::string user_session = token_;
  const std::string wrong_allocation = AllocationToken(agent_token_, "another-allocation");
  int walked = 0;
  for (const Route& route : RouteTable()) {
    if (route.access == Access::kPublic) continue;
    ++walked;
    const std::string what =
        MethodFor(route) + " " + route.pattern + " (" + AccessName(route.access) + ")";
    // Nobody, and somebody with a token the master never issued.
    EXPECT_EQ(StatusOf(route, ""), 401) << what;
    EXPECT_EQ(StatusOf(route, "cairn-" + std::string(64, 'a')), 401) << what;
    switch (route.access) {
      case Access::kUser:
        EXPECT_EQ(StatusOf(route, agent_token_), 401) << what << ": the agent token";
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        break;
      case Access::kProxyUserOrSshTunnel: {
        EXPECT_EQ(StatusOf(route, agent_token_), 401) << what << ": the agent token";
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        // A WebSocket without a credential reaches a ready shell's sshd only: for anything
        // else, the same 401 whether the task exists or not.
        EXPECT_EQ(Call("GET", PathFor(route.pattern, "7"), "", AnonymousWebSocketUpgrade()).status,
                  401)
            << what << ": an anonymous WebSocket to no shell";
        break;
      }
      case Access::kAgent:
        EXPECT_EQ(StatusOf(route, user_session), 401) << what << ": a user's session";
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        break;
      case Access::kAllocation:
        EXPECT_EQ(StatusOf(route, user_session), 401) << what << ": a user's session";
        EXPECT_EQ(StatusOf(route, agent_token_), 401) << what << ": the agent token";
        EXPECT_EQ(StatusOf(route, wrong_allocation), 401) << what << ": another allocation's";
        break;
      case Access::kUserOrAgent:
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        break;
      case Access::kTask:
        EXPECT_EQ(StatusOf(route, user_session), 401) << what << ": a user's session";
        EXPECT_EQ(StatusOf(route, agent_token_), 401) << what << ": the agent token";
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        EXPECT_EQ(StatusOf(route, TaskSessionToken("another agent token", "7")), 401)
            << what << ": a task token another master's agent token made";
        break;
      case Access::kUserOrTask:
        EXPECT_EQ(StatusOf(route, agent_token_), 401) << what << ": the agent token";
        EXPECT_EQ(StatusOf(route, AllocationToken(agent_token_, "7")), 401)
            << what << ": an allocation's token";
        break;
      case Access::kPublic:
        break;
    }
  }
  EXPECT_GT(walked, 60);
  EXPECT_EQ(Events().size(), events_before) << "a refused call must append nothing";
}

TEST_F(RouteAccessTest, EachCallerGetsPastTheCheckOnItsOwnRoutes) {
  // Past the check, an unknown id is the handler's 404 (or a 4xx of its own), never a 401.
  std::set<std::string> passed;
  for (const Route& route : RouteTable()) {
    std::string token;
    switch (route.access) {
      case Access::kPublic:
        continue;
      case Access::kUser:
      case Access::kUserOrAgent:
      case Access::kProxyUserOrSshTunnel:
        token = token_;
        break;
      case Access::kAgent:
        token = agent_token_;
        break;
      case Access::kAllocation:
        token = AllocationToken(agent_token_, "7");
        break;
      case Access::kTask:
      case Access::kUserOrTask:
        token = TaskSessionToken(agent_token_, "7");
        break;
    }
    if (std::string(route.pattern) == "/api/v1/auth/logout") continue;  // would end the session
    const int status = StatusOf(route, token);
    EXPECT_NE(status, 401) << MethodFor(route) << " " << route.pattern;
    EXPECT_NE(status, 0) << MethodFor(route) << " " << route.pattern;
    passed.insert(AccessName(route.access));
  }
  EXPECT_EQ(passed, (std::set<std::string>{"user", "user or agent", "agent", "allocation",
                                           "user (token or proxy cookie), or a shell's SSH tunnel",
                                           "task (its session token)", "user or task"}));
}

TEST_F(RouteAccessTest, AnEndedSessionIsRefusedAtOnce) {
  const std::string session = token_;
  CallJson("POST", "/api/v1/auth/logout");
  auto refused = Call("GET", "/api/v1/tasks", "", {{"Authorization", "Bearer " + session}});
  EXPECT_EQ(refused.status, 401) << refused.body;
}

}  // namespace
}  // namespace cairn::api_testing
