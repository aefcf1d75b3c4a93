// What an agent starts for a notebook, shell or TensorBoard (agent/interactive_service.h), and
// its readiness probe against real loopback services.
#include "agent/interactive_service.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "base/ssh_keys.h"
#include "base/task_secrets.h"

namespace cairn::agent {
namespace {

events::TaskSpec SpecOf(events::TaskType type) {
  events::TaskSpec spec;
  spec.set_task_type(type);
  return spec;
}

bool Has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(InteractiveServiceTest, ANotebookRunsJupyterUnderTheProxysPathWithItsTokenInTheEnvironment) {
  ServiceSettings settings;
  settings.notebook_command = "/usr/bin/jupyter-notebook --debug";
  auto plan = PlanService(SpecOf(events::TASK_TYPE_NOTEBOOK), "nb-1", settings, "agent-secret",
                          4321, "/work/nb", "alice");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv[0], "/usr/bin/jupyter-notebook");
  EXPECT_EQ(plan->argv[1], "--debug");
  EXPECT_TRUE(Has(plan->argv, "--port=4321"));
  EXPECT_TRUE(Has(plan->argv, "--ip=127.0.0.1"));
  EXPECT_TRUE(Has(plan->argv, "--NotebookApp.base_url=/proxy/nb-1/"));
  EXPECT_TRUE(Has(plan->argv, "--notebook-dir=/work/nb"));
  const std::string token = DeriveTaskToken("agent-secret", kJupyterTokenPurpose, "nb-1");
  ASSERT_EQ(token.size(), 32u);
  // The token is in the environment, never on the command line (which every user can read).
  EXPECT_TRUE(Has(plan->env, "JUPYTER_TOKEN=" + token));
  for (const auto& argument : plan->argv) EXPECT_EQ(argument.find(token), std::string::npos);
  EXPECT_EQ(plan->probe, ServicePlan::Probe::kHttp);
  EXPECT_EQ(plan->probe_path, "/proxy/nb-1/api");
  // Without the agent token there is no secret to derive: refused, not started unguarded.
  EXPECT_EQ(PlanService(SpecOf(events::TASK_TYPE_NOTEBOOK), "nb-1", settings, "", 4321, "/w", "a")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(InteractiveServiceTest, AShellRunsItsOwnSshdWithTheTasksKeysOnly) {
  ServiceSettings settings;
  settings.address = "10.1.2.3";
  auto plan = PlanService(SpecOf(events::TASK_TYPE_SHELL), "sh-1", settings, "agent-secret", 2222,
                          "/work/sh", "alice");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"/usr/sbin/sshd", "-D", "-e", "-f",
                                                  "/work/sh/.cairn-sshd/sshd_config"}));
  EXPECT_EQ(plan->probe, ServicePlan::Probe::kSshBanner);
  EXPECT_EQ(plan->login_user, "alice");
  ASSERT_EQ(plan->files.size(), 3u);
  std::map<std::string, std::string> files;
  for (const auto& file : plan->files) {
    EXPECT_EQ(file.mode, 0600) << file.path;
    files[file.path] = file.content;
  }
  auto user_key = SshKeyPairFromSeed(DeriveTaskSecret("agent-secret", kShellUserKeyPurpose, "sh-1"),
                                     "cairn-shell-sh-1");
  auto host_key = SshKeyPairFromSeed(DeriveTaskSecret("agent-secret", kShellHostKeyPurpose, "sh-1"),
                                     "cairn-host-sh-1");
  ASSERT_TRUE(user_key.ok() && host_key.ok());
  EXPECT_EQ(files["/work/sh/.cairn-sshd/authorized_keys"], user_key->public_key + "\n");
  EXPECT_EQ(files["/work/sh/.cairn-sshd/host_key"], host_key->private_key);
  const std::string& config = files["/work/sh/.cairn-sshd/sshd_config"];
  for (const char* line : {"Port 2222\n", "ListenAddress 10.1.2.3\n", "AllowUsers alice\n",
                           "PasswordAuthentication no\n", "UsePAM no\n"}) {
    EXPECT_NE(config.find(line), std::string::npos) << line;
  }
  // Another task gets other keys.
  auto other = PlanService(SpecOf(events::TASK_TYPE_SHELL), "sh-2", settings, "agent-secret", 2222,
                           "/work/sh", "alice");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->files[1].content, plan->files[1].content);
}

TEST(InteractiveServiceTest, ATensorboardServesTheExperimentsEventDirectories) {
  ServiceSettings settings;
  settings.tensorboard_command = "python3 fake_tensorboard.py";
  events::TaskSpec spec = SpecOf(events::TASK_TYPE_TENSORBOARD);
  EXPECT_EQ(PlanService(spec, "tb-1", settings, "", 80, "/w", "a").status().code(),
            StatusCode::kInvalidArgument);
  spec.add_tensorboard_logdirs("experiment_1:/ckpt/tensorboard/experiment/1");
  spec.add_tensorboard_logdirs("trial_7:/ckpt/tensorboard/experiment/2/trial/7");
  spec.add_tensorboard_args("--reload_interval=1");
  auto plan = PlanService(spec, "tb-1", settings, "", 6006, "/w", "alice");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv,
            (std::vector<std::string>{"python3", "fake_tensorboard.py", "--logdir_spec",
                                      "experiment_1:/ckpt/tensorboard/experiment/1,trial_7:/ckpt/"
                                      "tensorboard/experiment/2/trial/7",
                                      "--host", "127.0.0.1", "--port", "6006", "--path_prefix",
                                      "/proxy/tb-1", "--reload_interval=1"}));
  EXPECT_EQ(plan->probe_path, "/proxy/tb-1/");
  EXPECT_FALSE(
      PlanService(SpecOf(events::TASK_TYPE_COMMAND), "c", settings, "", 1, "/w", "a").ok());
}

// A listener that answers each connection with `answer` once, on its own thread: after the
// client's first bytes, or at once when it `speaks_first` (as sshd does).
class OneShotServer {
 public:
  explicit OneShotServer(std::string answer, bool speaks_first = false)
      : answer_(std::move(answer)), speaks_first_(speaks_first) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        char buffer[4096];
        if (!speaks_first_) (void)::recv(client, buffer, sizeof buffer, 0);
        (void)::send(client, answer_.data(), answer_.size(), MSG_NOSIGNAL);
        ::close(client);
      }
    });
  }
  ~OneShotServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::string answer_;
  bool speaks_first_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(InteractiveServiceTest, TheProbeWaitsForAnAnswerAndStopsWhenTheTaskEnds) {
  ServicePlan http;
  http.probe_path = "/proxy/x/api";
  OneShotServer ok("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  EXPECT_TRUE(AwaitService(
                  http, "127.0.0.1", ok.port(), [] { return false; }, soon)
                  .ok());
  OneShotServer refusing("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
  std::atomic<int> probes{0};
  // The task "ends" after three probes: the wait gives up with Unavailable.
  Status ended = AwaitService(
      http, "127.0.0.1", refusing.port(), [&] { return ++probes > 3; }, soon,
      std::chrono::milliseconds(1));
  EXPECT_EQ(ended.code(), StatusCode::kUnavailable);
  EXPECT_EQ(probes.load(), 4);

  ServicePlan ssh;
  ssh.probe = ServicePlan::Probe::kSshBanner;
  OneShotServer sshd("SSH-2.0-OpenSSH_9.2\r\n", /*speaks_first=*/true);
  EXPECT_TRUE(AwaitService(
                  ssh, "127.0.0.1", sshd.port(), [] { return false; }, soon)
                  .ok());
  // Something else that speaks first is not sshd: never ready, until the deadline.
  OneShotServer other("220 smtp ready\r\n", /*speaks_first=*/true);
  Status timed_out = AwaitService(
      ssh, "127.0.0.1", other.port(), [] { return false; }, std::chrono::steady_clock::now(),
      std::chrono::milliseconds(1));
  EXPECT_EQ(timed_out.code(), StatusCode::kDeadlineExceeded);
  auto port = FreePort("127.0.0.1");
  ASSERT_TRUE(port.ok());
  EXPECT_GT(*port, 0);
  EXPECT_FALSE(FreePort("not an address").ok());
}

}  // namespace
}  // namespace cairn::agent
