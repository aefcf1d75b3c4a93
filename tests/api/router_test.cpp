// The route table's matching rules, on a table of test routes, and the shape of the real table.
#include "api/router.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/route_table.h"

namespace cairn::api {
namespace {

// Each handler answers with its name and the parameters it was given.
net::Response Named(const std::string& name, Call& call) {
  net::Response response;
  response.body = name + " id=" + call.Param("id") + " rest=" + call.Param("rest");
  return response;
}
net::Response GetThing(Call& call) { return Named("get-thing", call); }
net::Response KillThing(Call& call) { return Named("kill-thing", call); }
net::Response AnyAction(Call& call) { return Named("any-action", call); }
net::Response Rest(Call& call) { return Named("rest", call); }
net::Response ListThings(Call& call) { return Named("list", call); }

Router TestRouter() {
  auto router = Router::Build({
      {"GET", "/things", Access::kPublic, ListThings},
      {"GET", "/things/{id}", Access::kPublic, GetThing},
      {"POST", "/things/{id}/kill", Access::kPublic, KillThing},
      {"*", "/things/{id}/{what}", Access::kPublic, AnyAction},
      {"*", "/others/{rest...}", Access::kPublic, Rest},
  });
  EXPECT_TRUE(router.ok()) << router.status().ToString();
  return std::move(router).value();
}

net::Response Send(const Router& router, const std::string& method, const std::string& target) {
  net::Request request;
  request.method = method;
  request.target = target;
  request.path = target.substr(0, target.find('?'));
  static const Services services;
  return router.Handle(services, request);
}

TEST(RouterTest, MatchesByPathSegmentsAndHandsOverParameters) {
  Router router = TestRouter();
  EXPECT_EQ(Send(router, "GET", "/things").body, "list id= rest=");
  EXPECT_EQ(Send(router, "GET", "/things/7").body, "get-thing id=7 rest=");
  EXPECT_EQ(Send(router, "GET", "/things/7?x=1").body, "get-thing id=7 rest=");
  // An escaped slash stays inside its segment.
  EXPECT_EQ(Send(router, "GET", "/things/a%2Fb").body, "get-thing id=a/b rest=");
  EXPECT_EQ(Send(router, "GET", "/others/a/b/c").body, "rest id= rest=a/b/c");
}

TEST(RouterTest, TheMostSpecificPatternWinsAndAnExactMethodBeatsACatchAll) {
  Router router = TestRouter();
  EXPECT_EQ(Send(router, "POST", "/things/7/kill").body, "kill-thing id=7 rest=");
  EXPECT_EQ(Send(router, "POST", "/things/7/archive").body, "any-action id=7 rest=");
  EXPECT_EQ(Send(router, "DELETE", "/things/7/archive").body, "any-action id=7 rest=");
}

TEST(RouterTest, AKnownPathUnderAnotherMethodIs405AndAnUnknownOne404) {
  Router router = TestRouter();
  EXPECT_EQ(Send(router, "DELETE", "/things").status, 405);
  EXPECT_EQ(Send(router, "POST", "/things/7").status, 405);
  // The more specific kill route decides: a GET of it is 405, not the catch-all's.
  EXPECT_EQ(Send(router, "GET", "/things/7/kill").status, 405);
  EXPECT_EQ(Send(router, "GET", "/nothing/here").status, 404);
  EXPECT_EQ(Send(router, "GET", "/others").status, 404);  // {rest...} takes one or more
}

TEST(RouterTest, TheRootPatternMatchesTheRootAlone) {
  auto router = Router::Build({{"GET", "/", Access::kPublic, ListThings},
                               {"GET", "/things/{id}", Access::kPublic, GetThing}});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  EXPECT_EQ(Send(*router, "GET", "/").body, "list id= rest=");
  EXPECT_EQ(Send(*router, "GET", "/?next=1").body, "list id= rest=");
  EXPECT_EQ(Send(*router, "GET", "/things/7").body, "get-thing id=7 rest=");
  EXPECT_EQ(Send(*router, "GET", "/elsewhere").status, 404);
  EXPECT_EQ(Send(*router, "POST", "/").status, 405);
}

TEST(RouterTest, MalformedTablesAreRefused) {
  EXPECT_FALSE(Router::Build({{"GET", "", Access::kPublic, ListThings}}).ok());
  EXPECT_FALSE(Router::Build({{"GET", "things", Access::kPublic, ListThings}}).ok());
  EXPECT_FALSE(Router::Build({{"GET", "/a/{rest...}/b", Access::kPublic, ListThings}}).ok());
  EXPECT_FALSE(Router::Build({{"GET", "/a", Access::kPublic, ListThings},
                              {"GET", "/a", Access::kPublic, GetThing}})
                   .ok());
  EXPECT_FALSE(Router::Build({{"GET", "/a", Access::kPublic, nullptr}}).ok());
}

// The real table builds, and its access rules follow the protocols: what agents send is for
// agents, what a trial process sends is for its allocation, and only the login and the master's
// public identity are open to anyone.
TEST(RouteTableTest, EveryRouteBuildsAndNamesWhoMayCallIt) {
  const auto routes = RouteTable();
  ASSERT_TRUE(Router::Build(routes).ok());
  std::set<std::string> public_routes;
  for (const Route& route : routes) {
    const std::string pattern = route.pattern;
    SCOPED_TRACE(std::string(route.method) + " " + pattern);
    // Determined's CLI downloads a checkpoint through the master at /checkpoints/{uuid}, and
    // reads its CSV usage reports at /resources/allocation/ and a GC policy's preview at
    // /experiments/{id}/preview_gc;
    // Prometheus scrapes /metrics; the web UI is "/" and its files under /ui/; notebooks,
    // shells and TensorBoards are at Determined's /proxy/{id}/, and its CLI opens them at
    // /det/interactive/.
    const bool web_ui = pattern == "/" || pattern.rfind("/ui/", 0) == 0 ||
                        pattern.rfind("/det/interactive/", 0) == 0;
    const bool proxy = pattern.rfind("/proxy/{id}", 0) == 0;
    // OpenPAI's REST API is also served under /pai, where Determined's paths cannot collide.
    const bool openpai = pattern.rfind("/pai/api/v1/", 0) == 0;
    if (openpai) {
      EXPECT_EQ(route.errors, ErrorShape::kOpenPai);
    }
    const bool usage_csv = pattern.rfind("/resources/allocation/", 0) == 0 ||
                           pattern == "/experiments/{id}/preview_gc";
    EXPECT_EQ(pattern.rfind("/api/v1/", 0) == 0 || pattern == "/info" || openpai ||
                  pattern == "/checkpoints/{uuid}" || pattern == "/metrics" || web_ui || proxy ||
                  usage_csv,
              true);
    if (proxy) {
      EXPECT_EQ(route.access, Access::kProxyUserOrSshTunnel);
    }
    // A browser loads the UI before anyone has logged in; its data comes from the API.
    if (web_ui) {
      EXPECT_EQ(route.access, Access::kPublic);
      EXPECT_EQ(std::string(route.method), "GET");
    }
    if (route.access == Access::kPublic) public_routes.insert(pattern);
    const bool harness = pattern.rfind("/api/v1/allocations/{id}/", 0) == 0 &&
                         pattern != "/api/v1/allocations/{id}/started" &&
                         pattern != "/api/v1/allocations/{id}/exited" &&
                         pattern != "/api/v1/allocations/{id}/ready";
    // Determined's package signals through its task's session token (determined_trials.h).
    const bool determined_signal = pattern.rfind("/api/v1/allocations/{id}/signals/", 0) == 0;
    if (harness) {
      EXPECT_EQ(route.access, determined_signal ? Access::kTask : Access::kAllocation);
    }
    if (pattern.find("/register") != std::string::npos ||
        pattern.find("/heartbeat") != std::string::npos || pattern == "/api/v1/task/logs") {
      EXPECT_EQ(route.access, Access::kAgent);
    }
  }
  // What the CLI reads before it logs in (its version check), the logins (Determined's and
  // OpenPAI's), and the web UI's page and files.
  EXPECT_EQ(public_routes,
            (std::set<std::string>{"/info", "/api/v1/master", "/api/v1/auth/login", "/api/v1/token",
                                   "/pai/api/v1/token",  // OpenPAI's
                                   "/", "/ui/{rest...}", "/ui/vendor/chart.js",
                                   "/det/interactive/{rest...}"}));
}

}  // namespace
}  // namespace cairn::api
