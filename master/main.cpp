// cairn-master: serves Cairn's REST API over a log. `cairn-master --config FILE`.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "master/master.h"

int main(int argc, char** argv) {
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: cairn-master --config FILE\n");
      return 0;
    } else {
      std::fprintf(stderr,
                   "cairn-master: unknown argument '%s'\nusage: cairn-master --config FILE\n",
                   arg.c_str());
      return 2;
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "usage: cairn-master --config FILE\n");
    return 2;
  }
  auto config = cairn::LoadMasterConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn-master: %s\n", config.status().ToString().c_str());
    return 2;
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

  auto master = cairn::Master::Start(*config);
  if (!master.ok()) {
    std::fprintf(stderr, "cairn-master: cannot start: %s\n", master.status().ToString().c_str());
    return 1;
  }
  std::printf("cairn-master listening on %s\n", (*master)->url().c_str());
  std::fflush(stdout);
  int received = 0;
  sigwait(&stop_signals, &received);
  std::fprintf(stderr, "cairn-master: %s received, stopping\n", strsignal(received));
  (*master)->Stop();
  return 0;
}
