// Users and sessions over REST, as Determined's CLI drives them, against a real master: the
// built-in users, creating users, logging in and out, password changes and deactivation ending
// sessions at once, the login throttle, the anonymous fallback, and a restart keeping it all.
#include <fstream>
#include <sstream>

#include "base/password.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

class UsersTest : public ApiTest {
 protected:
  // Logs in; returns the token ("" and the response's status in `status` when refused).
  std::string Login(const std::string& user, const std::string& password, bool hashed,
                    int* status = nullptr) {
    std::string sent = hashed ? CliPasswordHash(password) : password;
    if (hashed && password.empty()) sent = "";  // what the CLI sends for a blank password
    auto response = Call("POST", "/api/v1/auth/login",
                         json{{"username", user}, {"password", sent}, {"isHashed", hashed}}.dump(),
                         {{"Authorization", ""}});
    if (status != nullptr) *status = response.status;
    if (response.status != 200) return "";
    return json::parse(response.body)["token"];
  }
  int StatusWith(const std::string& token, const std::string& method, const std::string& target,
                 const std::string& body = "") {
    return Call(method, target, body, {{"Authorization", token.empty() ? "" : "Bearer " + token}})
        .status;
  }
  json CreateUser(const std::string& name, const std::string& password, bool admin = false) {
    return CallJson("POST", "/api/v1/users",
                    json{{"user", {{"username", name}, {"admin", admin}, {"active", true}}},
                         {"password", password},
                         {"isHashed", false}}
                        .dump());
  }
};

TEST_F(UsersTest, TheBuiltInUsersExistAndAnonymousCallsActAsDetermined) {
  json users = CallJson("GET", "/api/v1/users");
  ASSERT_EQ(users["users"].size(), 2u) << users;
  EXPECT_EQ(users["users"][0]["username"], "admin");
  EXPECT_EQ(users["users"][0]["admin"], true);
  EXPECT_EQ(users["users"][1]["username"], "determined");
  EXPECT_EQ(CallJson("GET", "/api/v1/me")["user"]["username"], "determined");
  EXPECT_EQ(CallJson("GET", "/api/v1/users/admin/by-username")["user"]["id"], 1);
  EXPECT_EQ(CallJson("GET", "/api/v1/users/2")["user"]["username"], "determined");
  CallJson("GET", "/api/v1/users/99", "", 404);
  CallJson("GET", "/api/v1/users/abc", "", 400);
}

TEST_F(UsersTest, AnAdminCreatesAUserWhoLogsInWithEitherPasswordForm) {
  LoginAs("admin");
  json created = CreateUser("alice", "s3cret");
  EXPECT_EQ(created["user"]["username"], "alice");
  EXPECT_EQ(created["user"]["id"], 3);
  EXPECT_EQ(Call("POST", "/api/v1/users", json{{"user", {{"username", "alice"}}}}.dump()).status,
            409);

  int status = 0;
  std::string hashed = Login("alice", "s3cret", true, &status);
  EXPECT_EQ(status, 200);
  std::string plain = Login("alice", "s3cret", false, &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(hashed, plain) << "each login is its own session";
  Login("alice", "wrong", true, &status);
  EXPECT_EQ(status, 401);
  Login("nobody", "s3cret", true, &status);
  EXPECT_EQ(status, 401) << "the same refusal whether or not the user exists";

  token_ = hashed;
  EXPECT_EQ(CallJson("GET", "/api/v1/me")["user"]["username"], "alice");
  // Not an admin: alice may not create users or change others.
  auto refused = Call("POST", "/api/v1/users", json{{"user", {{"username", "eve"}}}}.dump());
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("only an admin may create users"), std::string::npos) << refused.body;
  EXPECT_EQ(Call("PATCH", "/api/v1/users/1", R"({"active":false})").status, 403);
  EXPECT_EQ(Call("PATCH", "/api/v1/users/3", R"({"admin":true})").status, 403);
  EXPECT_EQ(
      CallJson("PATCH", "/api/v1/users/3", R"({"displayName":"Alice"})")["user"]["displayName"],
      "Alice");
}

TEST_F(UsersTest, LogoutPasswordChangeAndDeactivationRefuseTokensAtOnce) {
  LoginAs("admin");
  std::string admin = token_;
  CreateUser("alice", "one");
  std::string first = Login("alice", "one", true);
  std::string second = Login("alice", "one", true);
  ASSERT_FALSE(first.empty());

  // Logout ends that session only.
  EXPECT_EQ(StatusWith(first, "POST", "/api/v1/auth/logout"), 200);
  EXPECT_EQ(StatusWith(first, "GET", "/api/v1/me"), 401);
  EXPECT_EQ(StatusWith(second, "GET", "/api/v1/me"), 200);

  // Her own password change (as `det user change-password` sends it) ends all her sessions.
  EXPECT_EQ(StatusWith(second, "PATCH", "/api/v1/users/3",
                       json{{"password", CliPasswordHash("two")}, {"isHashed", true}}.dump()),
            200);
  EXPECT_EQ(StatusWith(second, "GET", "/api/v1/me"), 401);
  int status = 0;
  Login("alice", "one", true, &status);
  EXPECT_EQ(status, 401);
  std::string third = Login("alice", "two", true);
  ASSERT_FALSE(third.empty());

  // Deactivated by an admin: her session ends and she cannot log in.
  token_ = admin;
  EXPECT_EQ(CallJson("PATCH", "/api/v1/users/3", R"({"active":false})")["user"]["active"], false);
  EXPECT_EQ(StatusWith(third, "GET", "/api/v1/me"), 401);
  Login("alice", "two", true, &status);
  EXPECT_EQ(status, 403) << "Determined: user is not active";
  CallJson("PATCH", "/api/v1/users/3", R"({"active":true})");
  EXPECT_FALSE(Login("alice", "two", true).empty());
  // The last admin cannot be deactivated.
  EXPECT_EQ(Call("PATCH", "/api/v1/users/1", R"({"active":false})").status, 409);
}

TEST_F(UsersTest, RepeatedFailedLoginsAreThrottled) {
  LoginAs("admin");
  CreateUser("alice", "right");
  int status = 0;
  for (int i = 0; i < 5; ++i) {
    Login("alice", "wrong", true, &status);
    EXPECT_EQ(status, 401) << i;
  }
  Login("alice", "right", true, &status);
  EXPECT_EQ(status, 429) << "five failures within five minutes";
  // Other users are not affected.
  EXPECT_FALSE(Login("admin", "", true).empty());
  // Every attempt is in the log, for the audit trail; no password is.
  int failures = 0;
  for (const auto& event : Events()) failures += event.contains("loginFailed") ? 1 : 0;
  EXPECT_EQ(failures, 6);
}

TEST_F(UsersTest, AnonymousCallsAreRefusedEvenWhileDeterminedHasABlankPassword) {
  EXPECT_EQ(StatusWith("", "GET", "/api/v1/commands"), 401);
  EXPECT_EQ(StatusWith("", "GET", "/info"), 200) << "public routes stay public";
  EXPECT_EQ(StatusWith("", "GET", "/api/v1/master"), 200) << "the CLI's version check";
  EXPECT_EQ(StatusWith("not-a-token", "GET", "/api/v1/commands"), 401);
  // The CLI logs in as determined by itself, with the blank password, until it has one.
  EXPECT_FALSE(Login("determined", "", false).empty());
  LoginAs("admin");
  CallJson("POST", "/api/v1/users/2/password", json(CliPasswordHash("pw")).dump());
  int status = 0;
  Login("determined", "", false, &status);
  EXPECT_EQ(status, 401) << "the blank password no longer works (Determined: invalid credentials)";
  EXPECT_FALSE(Login("determined", "pw", false).empty());
}

TEST_F(UsersTest, ARestartKeepsUsersAndSessionsAndNoSecretReachesTheLogOrEvents) {
  LoginAs("admin");
  CreateUser("alice", "hunter2");
  std::string live = Login("alice", "hunter2", true);
  std::string ended = Login("alice", "hunter2", true);
  ASSERT_EQ(StatusWith(ended, "POST", "/api/v1/auth/logout"), 200);

  StartMaster();  // the same data directory: startup is replay
  EXPECT_EQ(StatusWith(live, "GET", "/api/v1/me"), 200);
  EXPECT_EQ(StatusWith(ended, "GET", "/api/v1/me"), 401);
  token_.clear();
  LoginAs("admin");
  EXPECT_EQ(CallJson("GET", "/api/v1/users")["users"].size(), 3u);

  // Neither the password, its hashes nor a token (a session's, the agent's) is in the event
  // stream or the log's bytes.
  RegisterAgent("a1", 1, "inc-1");
  std::stringstream events;
  for (const auto& event : Events()) events << event.dump() << "\n";
  std::stringstream log_bytes;
  for (const auto& file : std::filesystem::directory_iterator(dir_.Sub("data/log"))) {
    log_bytes << std::ifstream(file.path(), std::ios::binary).rdbuf();
  }
  for (const std::string& secret :
       {std::string("hunter2"), CliPasswordHash("hunter2"), live, agent_token_}) {
    EXPECT_EQ(events.str().find(secret), std::string::npos) << secret;
    EXPECT_EQ(log_bytes.str().find(secret), std::string::npos) << secret;
  }
  EXPECT_EQ(events.str().find("argon2id"), std::string::npos) << "a hash reached the stream";
}

// Access tokens as `det token` drives them: created for oneself (or by an admin for anyone),
// authenticating on every route, listed without their secret, revoked at once and for good (a
// restart too), outliving logout, and never in the event stream or the log's bytes.
TEST_F(UsersTest, AnAccessTokenWorksUntilRevokedAlsoAfterARestart) {
  LoginAs("admin");
  CreateUser("alice", "hunter2");
  token_ = Login("alice", "hunter2", true);
  // The CLI's body: lifespan from -e 2 as "48h"; tokenId comes back.
  json created = CallJson("POST", "/api/v1/tokens",
                          R"({"userId":3,"description":"ci token","lifespan":"48h"})");
  const std::string access = created["token"];
  EXPECT_EQ(created["tokenId"], 1);
  // Not for someone else, and not beyond the longest lifespan (30 days by default).
  EXPECT_EQ(Call("POST", "/api/v1/tokens", R"({"userId":1})").status, 403);
  auto too_long = Call("POST", "/api/v1/tokens", R"({"userId":3,"lifespan":"721h"})");
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  EXPECT_EQ(Call("POST", "/api/v1/tokens", R"({"userId":3,"lifespan":"2w"})").status, 400);
  // "-1": the longest allowed; null: the default.
  json longest =
      CallJson("POST", "/api/v1/tokens", R"({"userId":3,"lifespan":"-1","description":null})");

  // The token is alice, on any route, and survives her logging out of it.
  EXPECT_EQ(CallJson("GET", "/api/v1/me")["user"]["username"], "alice");
  auto as_token = [&](const std::string& method, const std::string& target,
                      const std::string& body = "") {
    return StatusWith(access, method, target, body);
  };
  EXPECT_EQ(as_token("GET", "/api/v1/me"), 200);
  EXPECT_EQ(as_token("GET", "/api/v1/commands"), 200);
  EXPECT_EQ(as_token("POST", "/api/v1/auth/logout"), 200);
  EXPECT_EQ(as_token("GET", "/api/v1/me"), 200) << "logging out does not end an access token";

  // Listed without its secret; alice sees her own, not others'.
  json listed = CallJson("GET", "/api/v1/tokens?showInactive=false");
  ASSERT_EQ(listed["tokenInfo"].size(), 2u) << listed;
  EXPECT_EQ(listed["tokenInfo"][0]["id"], 1);
  EXPECT_EQ(listed["tokenInfo"][0]["userId"], 3);
  EXPECT_EQ(listed["tokenInfo"][0]["description"], "ci token");
  EXPECT_EQ(listed["tokenInfo"][0]["tokenType"], "TOKEN_TYPE_ACCESS_TOKEN");
  EXPECT_EQ(listed.dump().find(access), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/tokens?username=admin").status, 403);
  json described =
      CallJson("GET", "/api/v1/tokens?tokenIds=" + std::to_string(longest["tokenId"].get<int>()));
  ASSERT_EQ(described["tokenInfo"].size(), 1u);

  // Edited with the CLI's string id, then revoked: refused at once, on every route.
  json edited = CallJson("PATCH", "/api/v1/tokens/1",
                         R"({"tokenId":"1","description":"nightly","setRevoked":false})");
  EXPECT_EQ(edited["tokenInfo"]["description"], "nightly");
  json revoked = CallJson("PATCH", "/api/v1/tokens/1",
                          R"({"tokenId":"1","description":null,"setRevoked":true})");
  EXPECT_EQ(revoked["tokenInfo"]["revoked"], true);
  for (const auto& [method, target] :
       {std::pair{"GET", "/api/v1/me"}, std::pair{"GET", "/api/v1/commands"},
        std::pair{"GET", "/api/v1/tokens"}, std::pair{"POST", "/api/v1/tokens"}}) {
    EXPECT_EQ(as_token(method, target, R"({"userId":3})"), 401) << method << " " << target;
  }
  auto twice = Call("PATCH", "/api/v1/tokens/1", R"({"tokenId":"1","setRevoked":true})");
  EXPECT_NE(twice.body.find("unable to update inactive token with ID 1"), std::string::npos)
      << twice.body;
  EXPECT_EQ(Call("PATCH", "/api/v1/tokens/99", R"({"tokenId":"99","setRevoked":true})").status,
            404);
  // Inactive ones only with showInactive; an admin sees everyone's.
  EXPECT_EQ(CallJson("GET", "/api/v1/tokens")["tokenInfo"].size(), 1u);
  EXPECT_EQ(CallJson("GET", "/api/v1/tokens?showInactive=true")["tokenInfo"].size(), 2u);

  StartMaster();  // startup is replay: the revocation holds, the other token still works
  EXPECT_EQ(as_token("GET", "/api/v1/me"), 401);
  EXPECT_EQ(StatusWith(longest["token"], "GET", "/api/v1/me"), 200);
  LoginAs("admin");
  json all = CallJson("GET", "/api/v1/tokens?showInactive=true");
  EXPECT_EQ(all["tokenInfo"].size(), 2u) << all;
  std::stringstream events;
  for (const auto& event : Events()) events << event.dump() << "\n";
  std::stringstream log_bytes;
  for (const auto& file : std::filesystem::directory_iterator(dir_.Sub("data/log"))) {
    log_bytes << std::ifstream(file.path(), std::ios::binary).rdbuf();
  }
  for (const std::string& secret : {access, longest["token"].get<std::string>()}) {
    EXPECT_EQ(events.str().find(secret), std::string::npos);
    EXPECT_EQ(log_bytes.str().find(secret), std::string::npos);
  }
  EXPECT_NE(events.str().find("accessTokenUpdated"), std::string::npos) << "the revocation";
}

// The bodies and queries Determined's CLI 0.38.1 sends for `det user create/list/deactivate/
// rename/edit` (its bindings serialize every v1User field, unset ones as null).
TEST_F(UsersTest, TheRequestsOfDeterminedsCliAreAccepted) {
  LoginAs("admin");
  json created =
      CallJson("POST", "/api/v1/users",
               R"({"user":{"active":true,"admin":false,"username":"alice","agentUserGroup":null,
          "displayName":null,"id":null,"lastAuthAt":null,"modifiedAt":null,"remote":false},
          "isHashed":true,"password":")" +
                   CliPasswordHash("Secret123") + R"("})");
  EXPECT_EQ(created["user"]["username"], "alice");
  CallJson("PATCH", "/api/v1/users/3", R"({"active":false})");
  json active = CallJson("GET", "/api/v1/users?active=true&limit=0&offset=0");
  EXPECT_EQ(active["users"].size(), 2u) << active;
  json everyone = CallJson("GET", "/api/v1/users?sortBy=SORT_BY_USER_NAME&orderBy=ORDER_BY_DESC");
  ASSERT_EQ(everyone["users"].size(), 3u);
  EXPECT_EQ(everyone["users"][0]["username"], "determined");
  EXPECT_EQ(CallJson("GET", "/api/v1/users?name=ali")["users"].size(), 1u);
  EXPECT_EQ(CallJson("PATCH", "/api/v1/users/3", R"({"username":"alicia"})")["user"]["username"],
            "alicia");
  // What Cairn does not have is refused as such, never ignored.
  auto remote = Call("POST", "/api/v1/users", R"({"user":{"username":"sso","remote":true}})");
  EXPECT_EQ(remote.status, 501) << remote.body;
  auto created_linked = Call("POST", "/api/v1/users",
                             R"({"user":{"username":"bo","agentUserGroup":{"agentUid":7}}})");
  EXPECT_EQ(created_linked.status, 501) << created_linked.body;
  // A link names all four parts; it is shown on the user once made.
  auto partial =
      Call("PATCH", "/api/v1/users/3", R"({"agentUserGroup":{"agentUid":1000,"agentGid":1000}})");
  EXPECT_EQ(partial.status, 400) << partial.body;
  json linked = CallJson("PATCH", "/api/v1/users/3",
                         R"({"agentUserGroup":{"agentUid":1000,"agentGid":1000,)"
                         R"("agentUser":"alicia","agentGroup":"lab"}})");
  EXPECT_EQ(linked["user"]["agentUserGroup"]["agentUid"], 1000) << linked;
  EXPECT_EQ(linked["user"]["agentUserGroup"]["agentGroup"], "lab") << linked;
  EXPECT_EQ(CallJson("GET", "/api/v1/master")["product"], "PRODUCT_UNSPECIFIED");
}

}  // namespace
}  // namespace cairn::api_testing

namespace cairn::api_testing {
namespace {

// GET /api/v1/audit: "who killed that command, and when?", for admins only.
TEST_F(UsersTest, AnAdminAsksTheLogWhoKilledACommand) {
  RegisterDisabledAgent("a1", 1);  // the command stays queued
  LoginAs("admin");
  json created = CreateUser("alice", "pw");
  // Alice administers the Uncategorized workspace, so she may kill anyone's work there.
  CallJson("POST", "/api/v1/roles/add-assignments",
           json{{"userRoleAssignments",
                 {{{"userId", created["user"]["id"]},
                   {"roleAssignment", {{"role", {{"roleId", 3}}}, {"scopeWorkspaceId", 1}}}}}}}
               .dump());
  std::string alice = Login("alice", "pw", false);
  Login("alice", "wrong", false);  // a refused login is in the trail too
  LoginAs("determined");
  std::string id = SubmitForced({{"entrypoint", {"sleep", "60"}}});
  token_ = alice;
  CallJson("POST", "/api/v1/commands/" + id + "/kill");

  EXPECT_EQ(Call("GET", "/api/v1/audit").status, 403) << "alice is no admin";
  // A refused change is kept (as the only event it causes); a refused read is not.
  const size_t events_before = Events().size();
  EXPECT_EQ(Call("PATCH", "/api/v1/users/1", R"({"displayName":"pwned"})").status, 403);
  EXPECT_EQ(Events().size(), events_before + 1);
  LoginAs("admin");
  json trail = CallJson("GET", "/api/v1/audit?entity=task/" + id);
  // Submitted by determined; killed by alice, which ended it before it was ever scheduled.
  ASSERT_EQ(trail["records"].size(), 3u) << trail.dump();
  EXPECT_EQ(trail["records"][0]["actor"], "user:determined");
  EXPECT_EQ(trail["records"][0]["action"], "TaskSubmitted");
  EXPECT_EQ(trail["records"][1]["actor"], "user:alice");
  EXPECT_EQ(trail["records"][1]["action"], "KillRequested");
  EXPECT_EQ(trail["records"][2]["actor"], "user:alice");
  EXPECT_EQ(trail["records"][2]["action"], "TaskExited");
  EXPECT_FALSE(trail["records"][1]["time"].get<std::string>().empty());
  EXPECT_EQ(trail["truncated"], false);

  json denied = CallJson("GET", "/api/v1/audit?actor=alice&entity=user/1");
  ASSERT_EQ(denied["records"].size(), 1u) << denied.dump();
  EXPECT_EQ(denied["records"][0]["action"], "AccessDenied");
  EXPECT_EQ(denied["records"][0]["event"]["accessDenied"]["method"], "PATCH");
  EXPECT_NE(denied["records"][0]["event"]["accessDenied"]["reason"].get<std::string>().find(
                "only an admin"),
            std::string::npos);

  json logins = CallJson("GET", "/api/v1/audit?entity=user/alice");
  bool refused = false;
  for (const auto& record : logins["records"]) refused |= record["action"] == "LoginFailed";
  EXPECT_TRUE(refused) << logins.dump();
  EXPECT_EQ(logins.dump().find("argon2"), std::string::npos) << "no hash leaves the master";

  json first = CallJson("GET", "/api/v1/audit?limit=1");
  EXPECT_EQ(first["records"].size(), 1u);
  EXPECT_EQ(first["truncated"], true);
  EXPECT_EQ(Call("GET", "/api/v1/audit?since=yesterday").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/audit?limit=0").status, 400);
}

}  // namespace
}  // namespace cairn::api_testing
