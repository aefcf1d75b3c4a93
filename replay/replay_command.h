// `cairn replay`'s command line, on CLI11: its subcommands with every option, and every check a
// command line must pass before any work starts (numbers, times, names, flags that exclude or
// need each other). What fails a check is a usage error (exit 2); the work is replay_tool.h.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "replay/replay_tool.h"

namespace cairn::replay {

class ReplayCommand {
 public:
  // Declares `replay` and its subcommands on the `cairn` app; the parse fills this object.
  explicit ReplayCommand(CLI::App& cairn);
  ReplayCommand(const ReplayCommand&) = delete;
  ReplayCommand& operator=(const ReplayCommand&) = delete;

  // Runs the subcommand the parse chose, its output on `out`. Returns the exit code: 0 done, 1
  // the work failed (why, on `err`).
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  struct Subcommand {
    CLI::App* app;
    Status (*work)(const ReplayOptions&, std::ostream&);
  };
  CLI::App* AddSubcommand(CLI::App* replay, const std::string& name, const std::string& description,
                          Status (*work)(const ReplayOptions&, std::ostream&));
  void AddLogSource(CLI::App* command);
  void AddMoment(CLI::App* command, bool required);

  ReplayOptions options_;
  std::vector<Subcommand> subcommands_;
};

// RFC 3339 ("2025-03-20T12:00:00Z", with an optional fraction and zone offset) or unix seconds,
// as unix microseconds. InvalidArgument says what was expected.
Result<int64_t> ParseTimeArgument(const std::string& text);

}  // namespace cairn::replay
