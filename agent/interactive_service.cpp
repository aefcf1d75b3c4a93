#include "agent/interactive_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/ssh_keys.h"
#include "base/task_secrets.h"
#include "events/envelope_util.h"
#include "net/http_client.h"

namespace cairn::agent {

namespace {

std::vector<std::string> SplitCommand(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

Result<SshKeyPair> TaskKey(const std::string& agent_token, std::string_view purpose,
                           const std::string& task_id) {
  if (agent_token.empty()) {
    return Status::InvalidArgument(
        "this agent has no agent token (--agent-token-file), so it cannot make the shell's keys");
  }
  return TaskSshKeyPair(agent_token, purpose, task_id);
}

// `address` (IPv4 or IPv6) and `port` as a socket address; false when it is not an IP address.
bool SocketAddress(const std::string& address, int port, sockaddr_storage& out, socklen_t& length) {
  out = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    length = sizeof *v4;
    return true;
  }
  if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    length = sizeof *v6;
    return true;
  }
  return false;
}

// A socket connected to address:port, or -1.
int Connect(const std::string& address, int port) {
  sockaddr_storage target;
  socklen_t length = 0;
  if (!SocketAddress(address, port, target, length)) return -1;
  int fd = ::socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&target), length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads the first line the peer sends within `timeout_ms` (at most 4 KiB).
std::string FirstLine(int fd, int timeout_ms) {
  std::string received;
  char buffer[1024];
  pollfd readable{fd, POLLIN, 0};
  while (received.size() < 4096 && received.find('\n') == std::string::npos &&
         ::poll(&readable, 1, timeout_ms) > 0) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    received.append(buffer, static_cast<size_t>(n));
  }
  return received;
}

// One probe: does the service answer?
bool Answers(const ServicePlan& plan, const std::string& address, int port) {
  if (plan.probe == ServicePlan::Probe::kHttp) {
    // Any status below 400: a redirect to a login page is an answer too.
    net::Client client(address, static_cast<uint16_t>(port));
    auto answer = client.Request("GET", plan.probe_path, "", {}, std::chrono::seconds(5));
    return answer.ok() && answer->status > 0 && answer->status < 400;
  }
  int fd = Connect(address, port);
  if (fd < 0) return false;
  const bool ready = FirstLine(fd, 2000).rfind("SSH-", 0) == 0;
  ::close(fd);
  return ready;
}

}  // namespace

Result<ServicePlan> PlanService(const events::TaskSpec& spec, const std::string& task_id,
                                const ServiceSettings& settings, const std::string& agent_token,
                                int port, const std::string& work_dir,
                                const std::string& login_user) {
  ServicePlan plan;
  const std::string port_text = std::to_string(port);
  switch (spec.task_type()) {
    case events::TASK_TYPE_NOTEBOOK: {
      if (agent_token.empty()) {
        return Status::InvalidArgument(
            "this agent has no agent token (--agent-token-file), so it cannot make the notebook's "
            "token");
      }
      plan.argv = SplitCommand(settings.notebook_command);
      const std::vector<std::string> arguments = {
          "--no-browser", "--ip=" + settings.address, "--port=" + port_text, "--port-retries=0",
          "--NotebookApp.base_url=" + ServicePath(task_id),
          // The master's proxy presents the master's Host; Jupyter would refuse it otherwise.
          "--NotebookApp.allow_remote_access=True", "--notebook-dir=" + work_dir, "--allow-root"};
      plan.argv.insert(plan.argv.end(), arguments.begin(), arguments.end());
      // In the environment, not on the command line where every local user could read it.
      plan.env.push_back("JUPYTER_TOKEN=" +
                         DeriveTaskToken(agent_token, kJupyterTokenPurpose, task_id));
      plan.probe_path = ServicePath(task_id) + "api";
      break;
    }
    case events::TASK_TYPE_TENSORBOARD: {
      if (spec.tensorboard_logdirs().empty()) {
        return Status::InvalidArgument("the TensorBoard names no event directories");
      }
      std::string logdirs;
      for (const auto& entry : spec.tensorboard_logdirs()) {
        logdirs += (logdirs.empty() ? "" : ",") + entry;
      }
      plan.argv = SplitCommand(settings.tensorboard_command);
      // TensorBoard's prefix has no trailing slash.
      const std::string path_prefix =
          ServicePath(task_id).substr(0, ServicePath(task_id).size() - 1);
      const std::vector<std::string> arguments = {"--logdir_spec",  logdirs,    "--host",
                                                  settings.address, "--port",   port_text,
                                                  "--path_prefix",  path_prefix};
      plan.argv.insert(plan.argv.end(), arguments.begin(), arguments.end());
      for (const auto& argument : spec.tensorboard_args()) plan.argv.push_back(argument);
      plan.probe_path = ServicePath(task_id);
      break;
    }
    case events::TASK_TYPE_SHELL: {
      CAIRN_ASSIGN_OR_RETURN(SshKeyPair host_key,
                             TaskKey(agent_token, kShellHostKeyPurpose, task_id));
      CAIRN_ASSIGN_OR_RETURN(SshKeyPair user_key,
                             TaskKey(agent_token, kShellUserKeyPurpose, task_id));
      const std::string dir = work_dir + "/.cairn-sshd";
      plan.dirs.push_back(dir);
      plan.files.push_back({dir + "/host_key", host_key.private_key, 0600});
      plan.files.push_back({dir + "/authorized_keys", user_key.public_key + "\n", 0600});
      // Run by the agent's account on a port of its own: no privileged port, no PAM, only the
      // task's key, only that account.
      std::string config = "Port " + port_text + "\nListenAddress " + settings.address +
                           "\nHostKey " + dir + "/host_key\nAuthorizedKeysFile " + dir +
                           "/authorized_keys\nAllowUsers " + login_user +
                           "\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
                           "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                           "PermitRootLogin prohibit-password\nX11Forwarding no\n"
                           "PrintMotd no\nPidFile none\n";
      plan.files.push_back({dir + "/sshd_config", config, 0600});
      plan.argv = SplitCommand(settings.sshd_command);
      const std::vector<std::string> arguments = {"-D", "-e", "-f", dir + "/sshd_config"};
      plan.argv.insert(plan.argv.end(), arguments.begin(), arguments.end());
      plan.probe = ServicePlan::Probe::kSshBanner;
      plan.login_user = login_user;
      break;
    }
    default:
      return Status::InvalidArgument("a " + events::TaskType_Name(spec.task_type()) +
                                     " task has no service to start");
  }
  if (plan.argv.empty()) return Status::InvalidArgument("the service's command is empty");
  return plan;
}

Result<int> FreePort(const std::string& address) {
  sockaddr_storage bound;
  socklen_t length = 0;
  if (!SocketAddress(address, 0, bound, length)) {
    return Status::InvalidArgument("service address '" + address + "' is not an IP address");
  }
  int fd = ::socket(bound.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&bound), length) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Status::IOError("no free port on " + address + ": " + error);
  }
  ::close(fd);
  const uint16_t port = bound.ss_family == AF_INET
                            ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                            : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port;
  return static_cast<int>(ntohs(port));
}

Status WriteServiceFiles(const ServicePlan& plan) {
  for (const auto& dir : plan.dirs) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) return Status::IOError("cannot create " + dir + ": " + error.message());
    ::chmod(dir.c_str(), 0700);
  }
  for (const auto& file : plan.files) {
    // Created with its mode, so a key is never readable by others, not even for a moment.
    ::unlink(file.path.c_str());
    int fd = ::open(file.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, file.mode);
    if (fd < 0) return Status::IOError("cannot write " + file.path + ": " + std::strerror(errno));
    size_t written = 0;
    while (written < file.content.size()) {
      ssize_t n = ::write(fd, file.content.data() + written, file.content.size() - written);
      if (n <= 0) {
        ::close(fd);
        return Status::IOError("cannot write " + file.path + ": " + std::strerror(errno));
      }
      written += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  return Status::Ok();
}

Status AwaitService(const ServicePlan& plan, const std::string& address, int port,
                    const std::function<bool()>& gave_up,
                    std::chrono::steady_clock::time_point deadline,
                    std::chrono::milliseconds interval) {
  while (true) {
    if (gave_up()) return Status::Unavailable("the task ended before its service answered");
    if (Answers(plan, address, port)) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded("the service did not answer on " + address + ":" +
                                      std::to_string(port));
    }
    // Polling is the only way to learn that a program we do not control listens.
    std::this_thread::sleep_for(interval);
  }
}

std::string CurrentUserName() {
  if (const passwd* entry = ::getpwuid(::geteuid()); entry != nullptr && entry->pw_name) {
    return entry->pw_name;
  }
  return "root";
}

}  // namespace cairn::agent
