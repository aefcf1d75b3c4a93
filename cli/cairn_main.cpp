// The `cairn` tool: `cairn replay` for operators, `cairn shell` for users of shell tasks,
// `cairn experiment create` for experiments with local packages.
#include <iostream>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/log.h"
#include "cli/experiment_command.h"
#include "cli/shell_command.h"
#include "replay/replay_command.h"

int main(int argc, char** argv) {
  using namespace cairn;

  CLI::App app("Cairn's command-line tool: replay for operators, shell and experiment for users.",
               "cairn");
  command_line::Configure(app);
  log::Level log_level = log::Level::kInfo;
  command_line::AddLogLevelOption(app, log_level);
  replay::ReplayCommand replay(app);
  cli::ShellCommand shell(app);
  cli::ExperimentCommand experiment(app);
  if (auto stop = command_line::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return command_line::Finish(*stop);
  }
  log::Init("cairn", log_level);
  if (shell.chosen()) return shell.Run(std::cout, std::cerr);
  if (experiment.chosen()) return experiment.Run(std::cout, std::cerr);
  return replay.Run(std::cout, std::cerr);
}
