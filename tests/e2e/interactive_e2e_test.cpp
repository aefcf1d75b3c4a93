// Notebooks, shells and TensorBoards on a real cluster: Jupyter (Debian's jupyter-notebook) and
// sshd (openssh-server) started by a real agent, reached only through the master's proxy; a
// kernel executing code over the proxied WebSocket; SSH through `cairn shell ssh`; the idle
// watch; a master killed with -9 while a notebook runs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <random>

#include "base/encoding.h"
#include "net/websocket.h"
#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

bool Installed(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Waits for the task's TaskReady in the log; returns the event.
json WaitForReady(Cluster& cluster, const std::string& task_id) {
  return cluster.WaitForEvent([&](const json& event) {
    return event.contains("taskReady") && event["taskReady"]["taskId"] == task_id;
  });
}

json WaitForExit(Cluster& cluster, const std::string& task_id) {
  return cluster.WaitForEvent([&](const json& event) {
    return event.contains("taskExited") && event["taskExited"]["taskId"] == task_id;
  });
}

net::ClientResponse Request(Cluster& cluster, const std::string& method, const std::string& target,
                            const std::string& token, const std::string& body = "") {
  net::Client client(
      "127.0.0.1",
      static_cast<uint16_t>(std::stoi(cluster.url().substr(cluster.url().rfind(':') + 1))));
  std::map<std::string, std::string> headers;
  if (!token.empty()) headers["Authorization"] = "Bearer " + token;
  auto response = client.Request(method, target, body, headers);
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  return response.ok() ? *response : net::ClientResponse{};
}

// A user of the cluster other than the notebook's owner; returns its session token.
std::string OtherUser(Cluster& cluster, const std::string& name) {
  auto client = cluster.Client();
  auto admin = client.Request("POST", "/api/v1/auth/login",
                              json{{"username", "admin"}, {"password", ""}}.dump());
  EXPECT_TRUE(admin.ok() && admin->status == 200);
  const std::string admin_token = json::parse(admin->body)["token"];
  EXPECT_EQ(Request(cluster, "POST", "/api/v1/users", admin_token,
                    json{{"user", {{"username", name}, {"active", true}}}, {"password", ""}}.dump())
                .status,
            200);
  auto login = client.Request("POST", "/api/v1/auth/login",
                              json{{"username", name}, {"password", ""}}.dump());
  EXPECT_TRUE(login.ok() && login->status == 200);
  return json::parse(login->body)["token"];
}

// A WebSocket client of text messages over a plain socket, for Jupyter's kernel channels.
class TextWebSocket {
 public:
  // Opens `path` on the master; the HTTP status of the answer (101 when it opened).
  int Open(int port, const std::string& path, const std::string& token) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return 0;
    const std::string request = "GET " + path +
                                " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " +
                                token + "\r\n\r\n";
    ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos) {
      std::string more = Receive(30000);
      if (more.empty()) return 0;
      head += more;
    }
    decoder_.Feed(head.substr(head.find("\r\n\r\n") + 4));
    return std::stoi(head.substr(9, 3));
  }
  ~TextWebSocket() {
    if (fd_ >= 0) ::close(fd_);
  }

  void Send(const std::string& text) {
    const std::string frame = net::EncodeMaskedWebSocketFrame(net::WebSocketOpcode::kText, text,
                                                              {0x12, 0x34, 0x56, 0x78});
    ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL);
  }

  // The next text message, or "" when none comes within the deadline.
  std::string NextText(std::chrono::steady_clock::time_point deadline) {
    while (std::chrono::steady_clock::now() < deadline) {
      auto frame = decoder_.Next();
      if (!frame.ok()) return "";
      if (*frame) {
        if ((*frame)->opcode == net::WebSocketOpcode::kText) return (*frame)->payload;
        continue;
      }
      std::string more = Receive(1000);
      if (!more.empty()) decoder_.Feed(more);
    }
    return "";
  }

 private:
  std::string Receive(int timeout_ms) {
    pollfd readable{fd_, POLLIN, 0};
    if (::poll(&readable, 1, timeout_ms) <= 0) return "";
    char buffer[65536];
    ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    return n <= 0 ? "" : std::string(buffer, static_cast<size_t>(n));
  }

  int fd_ = -1;
  net::WebSocketDecoder decoder_{net::WebSocketDecoder::Peer::kServer, 16u << 20};
};

int PortOf(const Cluster& cluster) {
  return std::stoi(cluster.url().substr(cluster.url().rfind(':') + 1));
}

// Runs `code` in a new kernel of the notebook through the master; returns what it printed.
std::string RunInKernel(Cluster& cluster, const std::string& notebook, const std::string& code) {
  auto kernel = Request(cluster, "POST", "/proxy/" + notebook + "/api/kernels", cluster.token());
  EXPECT_EQ(kernel.status, 201) << kernel.body;
  const std::string kernel_id = json::parse(kernel.body, nullptr, false).value("id", "");
  TextWebSocket socket;
  EXPECT_EQ(
      socket.Open(PortOf(cluster),
                  "/proxy/" + notebook + "/api/kernels/" + kernel_id + "/channels?session_id=e2e",
                  cluster.token()),
      101);
  json request = {{"header",
                   {{"msg_id", "e2e-1"},
                    {"username", "e2e"},
                    {"session", "e2e"},
                    {"msg_type", "execute_request"},
                    {"version", "5.3"}}},
                  {"parent_header", json::object()},
                  {"metadata", json::object()},
                  {"content",
                   {{"code", code},
                    {"silent", false},
                    {"store_history", false},
                    {"user_expressions", json::object()},
                    {"allow_stdin", false},
                    {"stop_on_error", true}}},
                  {"channel", "shell"},
                  {"buffers", json::array()}};
  socket.Send(request.dump());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // The kernel may send a print's output in several stream messages; it is whole once the
  // kernel reports itself idle after the request (iopub keeps that order).
  std::string printed;
  while (true) {
    std::string text = socket.NextText(deadline);
    if (text.empty()) return printed;
    json message = json::parse(text, nullptr, false);
    if (!message.is_object() || !message["parent_header"].is_object() ||
        message["parent_header"].value("msg_id", "") != "e2e-1") {
      continue;
    }
    if (message["msg_type"] == "stream") printed += message["content"].value("text", "");
    if (message["msg_type"] == "status" &&
        message["content"].value("execution_state", "") == "idle") {
      return printed;
    }
  }
}

TEST(InteractiveE2eTest, ANotebookRunsCodeThroughTheProxyAndSurvivesAMasterKill) {
  if (!Installed("/usr/bin/jupyter-notebook")) {
    GTEST_FAIL() << "jupyter-notebook is not installed: run ops/install-deps.sh";
  }
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  auto launched = Request(cluster, "POST", "/api/v1/notebooks", cluster.token(),
                          json{{"config", json::object()}}.dump());
  ASSERT_EQ(launched.status, 200) << launched.body;
  const std::string id = json::parse(launched.body)["notebook"]["id"];
  json ready = WaitForReady(cluster, id);
  EXPECT_EQ(ready["taskReady"]["serviceHost"], "127.0.0.1");

  // The Jupyter API answers the owner through the master; nobody else gets through, and the
  // service itself answers no one who does not hold the task's token.
  auto status = Request(cluster, "GET", "/proxy/" + id + "/api/status", cluster.token());
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_TRUE(json::parse(status.body).contains("kernels"));
  EXPECT_EQ(Request(cluster, "GET", "/proxy/" + id + "/api/status", "").status, 401);
  const std::string bob = OtherUser(cluster, "bob");
  EXPECT_EQ(Request(cluster, "GET", "/proxy/" + id + "/api/status", bob).status, 403);
  net::Client direct("127.0.0.1", static_cast<uint16_t>(ready["taskReady"]["servicePort"]));
  auto around = direct.Request("GET", "/proxy/" + id + "/api/status");
  ASSERT_TRUE(around.ok());
  EXPECT_EQ(around->status, 403) << "Jupyter must refuse a request without the task's token";

  // A kernel executes code over the proxied WebSocket.
  EXPECT_EQ(RunInKernel(cluster, id, "print(6 * 7)"), "42\n");

  // kill -9 the master while the notebook runs: after the restart the proxy reaches it again.
  cluster.StopMaster(SIGKILL);
  cluster.StartMaster();
  auto again = Request(cluster, "GET", "/proxy/" + id + "/api/status", cluster.token());
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body)["kernels"], 1) << "the kernel started before the kill lives";
  EXPECT_EQ(RunInKernel(cluster, id, "print('after', 1 + 1)"), "after 2\n");

  // det notebook kill.
  auto killed = Request(cluster, "POST", "/api/v1/notebooks/" + id + "/kill", cluster.token());
  ASSERT_EQ(killed.status, 200) << killed.body;
  WaitForExit(cluster, id);
  EXPECT_EQ(Request(cluster, "GET", "/proxy/" + id + "/api/status", cluster.token()).status, 404);
  // The log carries the readiness line Determined's images print and its tools match
  // ('^.*Jupyter Server .* is running.*$'), then the master's closing lines.
  std::vector<std::string> master_lines;
  for (const auto& line : cluster.FollowLogLines(id)) {
    if (line["source"] == "master") master_lines.push_back(line["message"]);
  }
  ASSERT_GE(master_lines.size(), 3u);
  EXPECT_NE(master_lines[0].find("Jupyter Server (Notebook) is running at: /proxy/" + id + "/"),
            std::string::npos)
      << master_lines[0];
  EXPECT_EQ(master_lines[1], "Service of Notebook is available\n");
  EXPECT_EQ(master_lines[2].rfind("killed: ", 0), 0u) << master_lines[2];
  cluster.ExpectRebuiltProjectionsEqualLive();
}

TEST(InteractiveE2eTest, AnIdleNotebookIsEndedWithReasonIdle) {
  if (!Installed("/usr/bin/jupyter-notebook")) GTEST_FAIL() << "jupyter-notebook is not installed";
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  auto launched = Request(cluster, "POST", "/api/v1/notebooks", cluster.token(),
                          json{{"config", {{"idle_timeout", "2s"}}}}.dump());
  ASSERT_EQ(launched.status, 200) << launched.body;
  const std::string id = json::parse(launched.body)["notebook"]["id"];
  WaitForReady(cluster, id);
  json kill = cluster.WaitForEvent([&](const json& event) {
    return event.contains("killRequested") && event["killRequested"]["taskId"] == id;
  });
  EXPECT_EQ(kill["killRequested"]["reason"], "idle: no activity for 2 s (idle_timeout)");
  EXPECT_EQ(kill["actor"], "system:idle-watch");
  WaitForExit(cluster, id);
  bool explained = false;
  for (const auto& line :
       cluster.RunCairn({"replay", "explain", id, "--data", cluster.data_dir()})) {
    explained = explained || line.find("idle: no activity for 2 s") != std::string::npos;
  }
  EXPECT_TRUE(explained) << "cairn replay explain shows why the notebook ended";
}

TEST(InteractiveE2eTest, SshThroughTheMasterRunsACommandOnTheAgent) {
  if (!Installed("/usr/sbin/sshd") || !Installed("/usr/bin/ssh")) {
    GTEST_FAIL() << "openssh-server and openssh-client are not installed: run ops/install-deps.sh";
  }
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  auto launched = Request(cluster, "POST", "/api/v1/shells", cluster.token(),
                          json{{"config", json::object()}}.dump());
  ASSERT_EQ(launched.status, 200) << launched.body;
  const std::string id = json::parse(launched.body)["shell"]["id"];
  WaitForReady(cluster, id);
  char hostname[256] = {};
  ::gethostname(hostname, sizeof hostname - 1);

  auto cairn_shell = [&](const std::string& token, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BinaryPath("cairn"), "shell"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto process = ChildProcess::Start(
        argv, {"CAIRN_TOKEN=" + token, "CAIRN_MASTER=" + cluster.url()}, /*with_stderr=*/true);
    EXPECT_TRUE(process.ok());
    auto status = (*process)->Wait(std::chrono::seconds(60));
    EXPECT_TRUE(status.ok());
    (void)(*process)->WaitForLine([](const std::string&) { return false; },
                                  std::chrono::seconds(2));
    return std::make_pair(status.ok() && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1,
                          (*process)->Lines());
  };
  auto [code, lines] = cairn_shell(cluster.token(), {"ssh", id, "--", "hostname"});
  EXPECT_EQ(code, 0);
  EXPECT_EQ(lines, std::vector<std::string>{hostname});

  // Another user gets neither the key nor the tunnel.
  const std::string bob = OtherUser(cluster, "bob");
  auto [refused_code, refused] = cairn_shell(bob, {"ssh", id, "--", "hostname"});
  EXPECT_EQ(refused_code, 1);
  ASSERT_FALSE(refused.empty());
  EXPECT_NE(refused.back().find("only its owner"), std::string::npos) << refused.back();
  auto [tunnel_code, tunnel] = cairn_shell(bob, {"tunnel", id});
  EXPECT_EQ(tunnel_code, 1);
  ASSERT_FALSE(tunnel.empty());
  EXPECT_NE(tunnel.back().find("403"), std::string::npos) << tunnel.back();

  auto killed = Request(cluster, "POST", "/api/v1/shells/" + id + "/kill", cluster.token());
  EXPECT_EQ(killed.status, 200) << killed.body;
  WaitForExit(cluster, id);
}

}  // namespace
}  // namespace cairn::testing
