// `cairn shell ssh ID` and `cairn shell tunnel ID`: SSH into a shell task through the master,
// as Determined's `det shell start/open` does (its tunnel needs the lomond package, which Debian
// lacks). The tunnel is ssh's ProxyCommand: stdin and stdout carried in a WebSocket to the
// master's /proxy/ID/, which the master unwraps into the task's sshd. The user's token comes from
// CAIRN_TOKEN, or from Determined's CLI login cache (det user login).
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

class ShellCommand {
 public:
  explicit ShellCommand(CLI::App& cairn);
  bool chosen() const;
  // Runs the chosen subcommand; the process's exit code.
  int Run(std::ostream& out, std::ostream& err);

 private:
  int Ssh(std::ostream& err);
  int Tunnel(std::ostream& err);

  CLI::App* shell_ = nullptr;
  CLI::App* ssh_ = nullptr;
  CLI::App* tunnel_ = nullptr;
  std::string master_;
  std::string task_id_;
  std::vector<std::string> ssh_arguments_;
};

// Adds --master/-m, whose value MasterUrl() reads.
void AddMasterOption(CLI::App& command, std::string& master);
// The master's URL: --master, else CAIRN_MASTER, else DET_MASTER, else http://127.0.0.1:8080;
// "host:port" gets http://.
std::string MasterUrl(const std::string& flag);
// The user's session token for `master_url`: CAIRN_TOKEN, else the active user's token in
// Determined's login cache ($DET_DEBUG_CONFIG_PATH, $XDG_CONFIG_HOME or ~/.config,
// determined/auth.json): its active user's, else $DET_USER's, else its only user's.
// Unauthenticated when there is none.
Result<std::string> SessionToken(const std::string& master_url);

}  // namespace cairn::cli
