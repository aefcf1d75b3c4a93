// Notebooks, shells and TensorBoards over REST, and the master's proxy to them: a real master,
// an in-test agent speaking the agent protocol, and an in-test upstream service on loopback.
#include <gtest/gtest.h>

#include <mutex>

#include "api/handlers/interactive.h"
#include "base/ssh_keys.h"
#include "base/task_secrets.h"
#include "net/http_server.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

// A service standing in for Jupyter: it answers every request with what it was sent.
class EchoService {
 public:
  EchoService()
      : server_({}, [this](const net::Request& request) {
          std::lock_guard lock(mutex_);
          seen_.push_back(request);
          net::Response response;
          response.body = json{{"path", request.path},
                               {"method", request.method},
                               {"body", request.body},
                               {"authorization", request.Header("authorization")},
                               {"cookie", request.Header("cookie")}}
                              .dump();
          return response;
        }) {
    EXPECT_TRUE(server_.Start().ok());
  }
  int port() const { return server_.port(); }
  size_t requests() {
    std::lock_guard lock(mutex_);
    return seen_.size();
  }

 private:
  std::mutex mutex_;
  std::vector<net::Request> seen_;
  net::Server server_;
};

class InteractiveApiTest : public ApiTest {
 protected:
  // Launches a `kind` ("notebooks", ...) and returns what the master answered.
  json Launch(const std::string& kind, const json& body = json::object()) {
    return CallJson("POST", "/api/v1/" + kind, body.dump());
  }

  std::string AllocationOf(const std::string& task_id) {
    json task = CallJson("GET", "/api/v1/tasks/" + task_id);
    EXPECT_FALSE(task["task"]["allocations"].empty()) << task.dump();
    return task["task"]["allocations"][0]["allocationId"];
  }

  // The agent starts the task and reports its service at 127.0.0.1:port.
  void ReportReady(const std::string& task_id, int port, const std::string& user = "alice") {
    const std::string allocation = AllocationOf(task_id);
    CallJson("POST", "/api/v1/allocations/" + allocation + "/started",
             json{{"taskId", task_id}, {"agentId", "a1"}, {"pid", 7}}.dump());
    json ready = CallJson("POST", "/api/v1/allocations/" + allocation + "/ready",
                          json{{"taskId", task_id},
                               {"agentId", "a1"},
                               {"serviceHost", "127.0.0.1"},
                               {"servicePort", port},
                               {"serviceUser", user}}
                              .dump());
    CallJson("GET",
             "/api/v1/tasks/" + task_id + "?minOffset=" + ready["offset"].get<std::string>());
  }

  net::ClientResponse Proxy(const std::string& target, std::map<std::string, std::string> headers,
                            const std::string& method = "GET", const std::string& body = "") {
    net::Client client("127.0.0.1", master_->port());
    auto response = client.Request(method, target, body, headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::ClientResponse{};
  }

  std::string CreateUser(const std::string& name) {
    const std::string caller = token_;
    LoginAs("admin");
    CallJson(
        "POST", "/api/v1/users",
        json{{"user", {{"username", name}, {"active", true}}}, {"password", ""}, {"isHashed", true}}
            .dump());
    LoginAs(name);
    const std::string session = token_;
    token_ = caller;
    return session;
  }
};

TEST_F(InteractiveApiTest, ANotebookIsReachedOnlyThroughTheProxyByThoseAllowed) {
  RegisterAgent("a1", 1, "inc-1");
  json launched = Launch("notebooks", {{"config", {{"idle_timeout", "5m"}}}});
  const std::string id = launched["notebook"]["id"];
  EXPECT_EQ(launched["notebook"]["serviceAddress"], "/proxy/" + id + "/");
  EXPECT_EQ(launched["config"]["idle_timeout"], "5m");
  EXPECT_EQ(CallJson("GET", "/api/v1/notebooks/" + id)["notebook"]["id"], id);
  EXPECT_EQ(CallJson("GET", "/api/v1/notebooks")["notebooks"].size(), 1u);
  EXPECT_TRUE(CallJson("GET", "/api/v1/notebooks?users=nobody")["notebooks"].empty());
  EXPECT_TRUE(CallJson("GET", "/api/v1/shells")["shells"].empty());
  // Not yet answering: the proxy says so, and the task is not ready for det's polling.
  const std::map<std::string, std::string> owner = {{"Authorization", "Bearer " + token_}};
  EXPECT_EQ(Proxy("/proxy/" + id + "/api", owner).status, 503);
  EXPECT_FALSE(CallJson("GET", "/api/v1/tasks/" + id)["task"]["allocations"][0]["isReady"]);

  EchoService jupyter;
  ReportReady(id, jupyter.port());
  EXPECT_TRUE(CallJson("GET", "/api/v1/tasks/" + id)["task"]["allocations"][0]["isReady"]);
  auto answer = Proxy("/proxy/" + id + "/api/contents?type=directory", owner, "PUT", "{\"a\":1}");
  ASSERT_EQ(answer.status, 200) << answer.body;
  json seen = json::parse(answer.body);
  EXPECT_EQ(seen["path"], "/proxy/" + id + "/api/contents");
  EXPECT_EQ(seen["method"], "PUT");
  EXPECT_EQ(seen["body"], "{\"a\":1}");
  // Jupyter sees the task's own token, which only the master and the agent can derive, never
  // the user's session.
  EXPECT_EQ(seen["authorization"],
            "token " + DeriveTaskToken(agent_token_, kJupyterTokenPurpose, id));

  // Nobody, another user, and the agent token: refused before the service sees anything.
  const size_t served = jupyter.requests();
  EXPECT_EQ(Proxy("/proxy/" + id + "/api", {}).status, 401);
  const std::string bob = CreateUser("bob");
  auto refused = Proxy("/proxy/" + id + "/api", {{"Authorization", "Bearer " + bob}});
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(Proxy("/proxy/" + id + "/api", {{"Authorization", "Bearer " + agent_token_}}).status,
            401);
  // A WebSocket without a token reaches a shell's sshd only, never a notebook.
  auto tunnelled = Proxy("/proxy/" + id + "/api/kernels/k/channels", AnonymousWebSocketUpgrade());
  EXPECT_EQ(tunnelled.status, 401) << tunnelled.body;
  EXPECT_NE(tunnelled.body.find("only a shell's SSH tunnel needs no token"), std::string::npos)
      << tunnelled.body;
  EXPECT_EQ(jupyter.requests(), served);
  // A cluster admin gets through.
  LoginAs("admin");
  EXPECT_EQ(Proxy("/proxy/" + id + "/api", {{"Authorization", "Bearer " + token_}}).status, 200);
  LoginAs("determined");

  // A browser: the cookie for this proxy path only, then no Authorization header at all.
  auto cookie = Call("POST", "/api/v1/tasks/" + id + "/proxy-cookie");
  ASSERT_EQ(cookie.status, 200) << cookie.body;
  const std::string set_cookie = cookie.headers["set-cookie"];
  EXPECT_NE(set_cookie.find("Path=/proxy/" + id + "/"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("HttpOnly"), std::string::npos);
  const std::string value = set_cookie.substr(0, set_cookie.find(';'));
  auto by_cookie = Proxy("/proxy/" + id + "/tree", {{"Cookie", "_xsrf=abc; " + value}});
  ASSERT_EQ(by_cookie.status, 200) << by_cookie.body;
  // The service keeps its own cookies and never sees the session's.
  EXPECT_EQ(json::parse(by_cookie.body)["cookie"], "_xsrf=abc");
  EXPECT_EQ(Call("POST", "/api/v1/tasks/" + id + "/proxy-cookie", "",
                 {{"Authorization", "Bearer " + bob}})
                .status,
            403);

  // Killed, it is gone from the proxy.
  json killed = CallJson("POST", "/api/v1/notebooks/" + id + "/kill");
  EXPECT_EQ(killed["notebook"]["state"], "STATE_TERMINATING");
  json exited = CallJson("POST", "/api/v1/allocations/" + AllocationOf(id) + "/exited",
                         json{{"taskId", id}, {"agentId", "a1"}, {"signal", 15}}.dump());
  auto ended =
      Proxy("/proxy/" + id + "/api?minOffset=" + exited["offset"].get<std::string>(), owner);
  EXPECT_EQ(ended.status, 404) << ended.body;
  EXPECT_EQ(Proxy("/proxy/no-such-task/", owner).status, 404);
}

TEST_F(InteractiveApiTest, AShellsKeyGoesToItsOwnerAlone) {
  RegisterAgent("a1", 1, "inc-1");
  json launched = Launch("shells");
  const json& shell = launched["shell"];
  const std::string id = shell["id"];
  auto keys = SshKeyPairFromSeed(DeriveTaskSecret(agent_token_, kShellUserKeyPurpose, id),
                                 "cairn-shell-" + id);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(shell["privateKey"], keys->private_key);
  EXPECT_EQ(shell["agentUserGroup"]["user"], "root");  // Determined's default until it is ready
  EXPECT_FALSE(shell["cairn"]["hostPublicKey"].get<std::string>().empty());
  EchoService sshd;
  ReportReady(id, sshd.port(), "alice");
  json read = CallJson("GET", "/api/v1/shells/" + id);
  EXPECT_EQ(read["shell"]["agentUserGroup"]["user"], "alice");
  EXPECT_EQ(read["shell"]["privateKey"], keys->private_key);
  // An admin sees the shell, not its key.
  LoginAs("admin");
  json as_admin = CallJson("GET", "/api/v1/shells/" + id);
  EXPECT_FALSE(as_admin["shell"].contains("privateKey"));
  EXPECT_EQ(as_admin["shell"]["id"], id);
  // The shell's proxy speaks WebSocket only (SSH inside it): a plain request is refused.
  auto plain = Proxy("/proxy/" + id + "/", {{"Authorization", "Bearer " + token_}});
  EXPECT_EQ(plain.status, 400) << plain.body;
  // Without a token only a WebSocket gets through (to sshd, where the key is the credential).
  EXPECT_EQ(Proxy("/proxy/" + id + "/", {}).status, 401);
  // The task is in its owner's job queue like any other, as a shell.
  LoginAs("determined");
  bool listed = false;
  const json queue = CallJson("GET", "/api/v1/job-queues-v2");
  for (const auto& job : queue["jobs"]) {
    if (job["full"]["jobId"] == id) listed = job["full"]["type"] == "TYPE_SHELL";
  }
  EXPECT_TRUE(listed) << queue.dump();
}

TEST_F(InteractiveApiTest, ATensorboardNeedsExperimentsItCanSeeAndIsAnAuxTask) {
  auto none = Call("POST", "/api/v1/tensorboards", "{}");
  EXPECT_EQ(none.status, 400) << none.body;
  EXPECT_NE(none.body.find("experimentIds"), std::string::npos);
  auto unknown = Call("POST", "/api/v1/tensorboards", R"({"experimentIds": [999]})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  json created = CallJson("POST", "/api/v1/experiments", CreateExperimentBody(true).dump());
  const int64_t experiment = created["experiment"]["id"];
  json launched = Launch("tensorboards", {{"experimentIds", {experiment}}});
  const json& tensorboard = launched["tensorboard"];
  EXPECT_EQ(tensorboard["experimentIds"], json::array({experiment}));
  EXPECT_EQ(tensorboard["description"],
            "TensorBoard (Experiments " + std::to_string(experiment) + ")");
  EXPECT_EQ(launched["config"]["resources"]["slots"], 0);
  // Entrypoints are the agent's to choose.
  auto with_entrypoint =
      Call("POST", "/api/v1/notebooks", R"({"config": {"entrypoint": ["sh", "-c", "evil"]}})");
  EXPECT_EQ(with_entrypoint.status, 501) << with_entrypoint.body;
}

TEST(UpstreamRequestTest, PassesTheRequestOnWithoutTheCallersCredentials) {
  net::Request request;
  request.method = "POST";
  request.target = "/proxy/t1/api/kernels?x=1";
  request.headers = {{"authorization", "Bearer secret-session"},
                     {"cookie", "cairn_proxy_token=secret-session; _xsrf=k"},
                     {"connection", "keep-alive"},
                     {"transfer-encoding", "chunked"},
                     {"content-type", "application/json"},
                     {"host", "master:8080"}};
  request.body = "{}";
  request.remote_address = "10.0.0.9:5555";
  const std::string head = api::UpstreamRequest(request, "token jupyter");
  EXPECT_EQ(head.rfind("POST /proxy/t1/api/kernels?x=1 HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_EQ(head.find("secret-session"), std::string::npos) << head;
  EXPECT_EQ(head.find("chunked"), std::string::npos);
  for (const char* line :
       {"authorization: token jupyter\r\n", "cookie: _xsrf=k\r\n", "connection: close\r\n",
        "content-length: 2\r\n", "content-type: application/json\r\n", "host: master:8080\r\n",
        "x-forwarded-for: 10.0.0.9\r\n"}) {
    EXPECT_NE(head.find(line), std::string::npos) << line << " in " << head;
  }
  EXPECT_EQ(head.substr(head.size() - 6), "\r\n\r\n{}");
  // A WebSocket upgrade stays one.
  request.method = "GET";
  request.body.clear();
  request.headers["upgrade"] = "websocket";
  request.headers["connection"] = "Upgrade";
  const std::string upgrade = api::UpstreamRequest(request, "");
  EXPECT_NE(upgrade.find("connection: Upgrade\r\nupgrade: websocket\r\n"), std::string::npos);
  EXPECT_EQ(upgrade.find("content-length"), std::string::npos);
  EXPECT_EQ(upgrade.find("authorization"), std::string::npos);
}

}  // namespace
}  // namespace cairn::api_testing
