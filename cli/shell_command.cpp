#include "cli/shell_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "base/command_line.h"
#include "net/http_client.h"
#include "net/websocket_client.h"

namespace cairn::cli {

using nlohmann::json;

namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// A private directory for the key and the known host, removed when the session ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (Env("TMPDIR").empty() ? std::string("/tmp") : Env("TMPDIR")) + "/cairn-shell-XXXXXX";
    if (char* made = ::mkdtemp(pattern.data())) path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Status WritePrivate(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  file << content;
  file.close();
  if (!file) return Status::IOError("cannot write " + path);
  return Status::Ok();
}

}  // namespace

void AddMasterOption(CLI::App& command, std::string& master) {
  command.add_option("--master,-m", master,
                     "the master's URL (default $CAIRN_MASTER, $DET_MASTER, "
                     "http://127.0.0.1:8080)");
}

std::string MasterUrl(const std::string& flag) {
  std::string url = flag;
  if (url.empty()) url = Env("CAIRN_MASTER");
  if (url.empty()) url = Env("DET_MASTER");
  if (url.empty()) url = "http://127.0.0.1:8080";
  if (url.find("://") == std::string::npos) url = "http://" + url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Result<std::string> SessionToken(const std::string& master_url) {
  if (std::string token = Env("CAIRN_TOKEN"); !token.empty()) return token;
  std::string path = Env("DET_DEBUG_CONFIG_PATH");
  if (path.empty()) {
    std::string config = Env("XDG_CONFIG_HOME");
    if (config.empty()) config = Env("HOME") + "/.config";
    path = config + "/determined";
  }
  path += "/auth.json";
  std::ifstream file(path);
  json store = file ? json::parse(file, nullptr, false) : json();
  const json* master = nullptr;
  if (store.is_object() && store.contains("masters") && store["masters"].is_object() &&
      store["masters"].contains(master_url)) {
    master = &store["masters"][master_url];
  }
  if (master != nullptr && master->is_object() && master->contains("tokens") &&
      (*master)["tokens"].is_object()) {
    const json& tokens = (*master)["tokens"];
    // The user det acts as: its active user, else $DET_USER, else the only one it has a token of.
    std::string user = master->contains("active_user") && (*master)["active_user"].is_string()
                           ? (*master)["active_user"].get<std::string>()
                           : Env("DET_USER");
    if (user.empty() && tokens.size() == 1) user = tokens.begin().key();
    if (tokens.contains(user) && tokens[user].is_string()) return tokens[user].get<std::string>();
  }
  return Status::Unauthenticated("not logged in to " + master_url +
                                 ": set CAIRN_TOKEN or run 'det -m " + master_url + " user login'");
}

ShellCommand::ShellCommand(CLI::App& cairn) {
  shell_ = cairn.add_subcommand("shell", "SSH into a shell task through the master");
  shell_->require_subcommand(1);
  ssh_ = shell_->add_subcommand(
      "ssh",
      "log in to shell ID over SSH through the master (its key comes from the master, only to "
      "the shell's owner); arguments after -- go to ssh (a command to run, or ssh options)");
  tunnel_ = shell_->add_subcommand(
      "tunnel", "carry stdin/stdout to shell ID's sshd through the master (ssh's ProxyCommand)");
  for (CLI::App* command : {ssh_, tunnel_}) {
    command->add_option("id", task_id_, "the shell's id")->required();
    AddMasterOption(*command, master_);
  }
  ssh_->add_option("ssh_arguments", ssh_arguments_, "for ssh, after --");
}

bool ShellCommand::chosen() const { return shell_->parsed(); }

int ShellCommand::Run(std::ostream&, std::ostream& err) {
  return ssh_->parsed() ? Ssh(err) : Tunnel(err);
}

int ShellCommand::Tunnel(std::ostream& err) {
  const std::string url = MasterUrl(master_);
  auto token = SessionToken(url);
  if (!token.ok()) {
    err << "cairn shell tunnel: " << token.status().message() << "\n";
    return 1;
  }
  auto target =
      net::WebSocketTarget::FromUrl(url, "/proxy/" + task_id_ + "/", Env("DET_MASTER_CERT_FILE"));
  if (!target.ok()) {
    err << "cairn shell tunnel: " << target.status().message() << "\n";
    return 1;
  }
  target->headers["Authorization"] = "Bearer " + *token;
  Status piped = net::PipeWebSocket(*target, STDIN_FILENO, STDOUT_FILENO);
  if (!piped.ok()) {
    err << "cairn shell tunnel: " << piped.message() << "\n";
    return 1;
  }
  return 0;
}

int ShellCommand::Ssh(std::ostream& err) {
  const std::string url = MasterUrl(master_);
  auto token = SessionToken(url);
  if (!token.ok()) {
    err << "cairn shell ssh: " << token.status().message() << "\n";
    return 1;
  }
  auto client = net::Client::FromUrl(url, Env("DET_MASTER_CERT_FILE"));
  if (!client.ok()) {
    err << "cairn shell ssh: " << client.status().message() << "\n";
    return 1;
  }
  auto answer = client->Request("GET", "/api/v1/shells/" + task_id_, "",
                                {{"Authorization", "Bearer " + *token}});
  if (!answer.ok()) {
    err << "cairn shell ssh: " << answer.status().message() << "\n";
    return 1;
  }
  json body = json::parse(answer->body, nullptr, false);
  if (answer->status != 200 || !body.is_object() || !body.contains("shell")) {
    err << "cairn shell ssh: the master answered " << answer->status << ": "
        << (body.is_object() ? body.value("message", answer->body) : answer->body) << "\n";
    return 1;
  }
  const json& shell = body["shell"];
  if (!shell.contains("privateKey") || !shell["privateKey"].is_string()) {
    err << "cairn shell ssh: the master gave no key for shell " << task_id_
        << ": only its owner may log in\n";
    return 1;
  }
  if (!shell.value("cairn", json::object()).value("ready", false)) {
    err << "cairn shell ssh: shell " << task_id_ << " is not ready yet ("
        << shell.value("state", "") << ")\n";
    return 1;
  }
  TempDir dir;
  if (dir.path().empty()) {
    err << "cairn shell ssh: cannot make a temporary directory\n";
    return 1;
  }
  const std::string alias = "cairn-shell-" + task_id_;
  const std::string key_file = dir.path() + "/key";
  const std::string known_hosts = dir.path() + "/known_hosts";
  Status written = WritePrivate(key_file, shell["privateKey"].get<std::string>());
  // The host key is the task's own, derived as the agent derives it: ssh checks it strictly.
  std::string host_key = shell.value("cairn", json::object()).value("hostPublicKey", "");
  if (written.ok()) written = WritePrivate(known_hosts, alias + " " + host_key + "\n");
  if (!written.ok()) {
    err << "cairn shell ssh: " << written.message() << "\n";
    return 1;
  }
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  const std::string user = shell["agentUserGroup"].value("user", "root");
  std::vector<std::string> argv = {
      "ssh",
      "-o",
      "ProxyCommand=" + self + " shell tunnel --master " + url + " " + task_id_,
      "-o",
      "HostKeyAlias=" + alias,
      "-o",
      "UserKnownHostsFile=" + known_hosts,
      "-o",
      std::string("StrictHostKeyChecking=") + (host_key.empty() ? "no" : "yes"),
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "LogLevel=ERROR",
      "-i",
      key_file,
      user + "@" + alias};
  argv.insert(argv.end(), ssh_arguments_.begin(), ssh_arguments_.end());
  // The tunnel (ssh's child) finds the token in its environment, never on a command line.
  ::setenv("CAIRN_TOKEN", token->c_str(), 1);
  pid_t child = ::fork();
  if (child == 0) {
    std::vector<char*> args;
    for (auto& argument : argv) args.push_back(argument.data());
    args.push_back(nullptr);
    ::execvp("ssh", args.data());
    ::_exit(127);
  }
  if (child < 0) {
    err << "cairn shell ssh: cannot start ssh\n";
    return 1;
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 127)
      err << "cairn shell ssh: ssh is not installed (openssh-client)\n";
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace cairn::cli
