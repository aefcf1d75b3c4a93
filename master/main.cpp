// cairn-master: serves Cairn's REST API over a log. `cairn-master --config FILE`. Exit codes: 0
// after a clean stop (SIGTERM/SIGINT), 1 when it cannot start, 2 for a usage error or a bad
// configuration.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/log.h"
#include "base/memory.h"
#include "master/master.h"

int main(int argc, char** argv) {
  using namespace cairn;

  CLI::App app(
      "Cairn's master: folds the event log into its decision state and projections, then serves "
      "the REST API and the agent protocol. It prints 'cairn-master listening on URL' once it "
      "serves; SIGTERM or SIGINT stops it cleanly.",
      "cairn-master");
  command_line::Configure(app);
  std::string config_path;
  app.add_option("--config", config_path,
                 "the master's configuration (port, data_dir, log backend, resource pools); see "
                 "ops/master.example.yaml")
      ->required()
      ->type_name("FILE");
  log::Level log_level = log::Level::kInfo;
  command_line::AddLogLevelOption(app, log_level);
  if (auto stop = command_line::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return command_line::Finish(*stop);
  }
  log::Init("cairn-master", log_level);
  KeepLargeAllocationsReturnable();
  // Everything the master writes (log segments, RocksDB, contexts, the agent token) is its own:
  // 0600 files in 0700 directories, whatever the caller's umask.
  umask(077);

  auto config = LoadMasterConfig(config_path);
  if (!config.ok()) {
    log::Error("master", "{}", config.status());
    return command_line::kExitUsage;
  }
  // Block the stop signals before any thread starts so only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Every agent and client connection holds a descriptor: use all the process may have.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  auto master = Master::Start(*config);
  if (!master.ok()) {
    log::Error("master", "cannot start: {}", master.status());
    return 1;
  }
  std::printf("cairn-master listening on %s\n", (*master)->url().c_str());
  std::fflush(stdout);
  int received = 0;
  sigwait(&stop_signals, &received);
  log::Info("master", "{} received, stopping", strsignal(received));
  (*master)->Stop();
  return 0;
}
