// `cairn experiment create CONFIG CONTEXT [--package FILE]...`: PEDL's `pedl experiment create`
// with local packages. It sends what Determined's CLI sends to POST /api/v1/experiments (the
// configuration's text and every file under CONTEXT as `modelDefinition`) plus Cairn's `packages`
// (each FILE's name and bytes), which the master keeps beside the model definition and every trial
// installs into its prepared environment. The model definition and the packages together may total
// 96 MiB (checked here before anything is sent, and again by the master). The user's token comes
// from CAIRN_TOKEN or Determined's login cache, as for `cairn shell`.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

// The body of POST /api/v1/experiments for CONFIG's text, the directory `context` and the
// package files. InvalidArgument for an unreadable file, a context that is no directory, or a
// package that is not a regular file; ResourceExhausted over the 96 MiB cap, naming the sizes.
// Files under `context` are sent in path order, without __pycache__ directories.
Result<nlohmann::json> ExperimentCreateBody(const std::string& config_file,
                                            const std::string& context,
                                            const std::vector<std::string>& packages);

class ExperimentCommand {
 public:
  explicit ExperimentCommand(CLI::App& cairn);
  bool chosen() const;
  // Runs the chosen subcommand; the process's exit code.
  int Run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* experiment_ = nullptr;
  CLI::App* create_ = nullptr;
  std::string master_;
  std::string config_file_;
  std::string context_;
  std::vector<std::string> packages_;
};

}  // namespace cairn::cli
