// The command-line conventions every Cairn binary shares, on CLI11: --help lists every option of
// the command and of the commands below it, --version, --log-level, exit code 2 for a usage error
// and one shape for its message ("cairn replay dump: <what>" and where to find the help).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"

namespace cairn::command_line {

inline constexpr int kExitUsage = 2;

// Gives `app` Cairn's help layout and --version ("NAME VERSION"), and lets the options of a
// command follow its subcommands' names (`cairn replay dump --log-level debug`). Call it before
// adding subcommands: they inherit it.
void Configure(CLI::App& app);

// --log-level trace|debug|info|warn|error|off; without it $CAIRN_LOG_LEVEL, else `level` as is.
CLI::Option* AddLogLevelOption(CLI::App& app, log::Level& level);

// Why a parse ends the program before it runs.
struct Stop {
  enum class Kind { kHelp, kVersion, kUsageError };
  Kind kind;
  std::string command;  // the command reached, e.g. "cairn replay dump"
  std::string text;     // the help or version text, or what is wrong with the command line
};

// Parses `args` (the words after the program's name) into `app`. nullopt: go on and run. A
// command whose subcommands are its only work needs one of them.
std::optional<Stop> Parse(CLI::App& app, const std::vector<std::string>& args);

// Prints the help or version on stdout and returns 0, or a usage error on stderr and returns 2.
int Finish(const Stop& stop);

// Prints "<command>: <message>" and where to find the help on stderr; returns 2.
int UsageError(std::string_view command, std::string_view message);

}  // namespace cairn::command_line
