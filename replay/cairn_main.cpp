// The `cairn` operator tool. Today it has one command group: `cairn replay`.
#include <iostream>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/log.h"
#include "replay/replay_command.h"

int main(int argc, char** argv) {
  using namespace cairn;

  CLI::App app("Cairn's operator tool.", "cairn");
  cli::Configure(app);
  log::Level log_level = log::Level::kInfo;
  cli::AddLogLevelOption(app, log_level);
  replay::ReplayCommand replay(app);
  if (auto stop = cli::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return cli::Finish(*stop);
  }
  log::Init("cairn", log_level);
  return replay.Run(std::cout, std::cerr);
}
