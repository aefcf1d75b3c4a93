// Determined's own Python package and `det` CLI (0.38.1, unmodified) run against a test cluster:
// where the package is, whether Debian's python3 can run it, and the CLI run as a built-in user.
//
// The package is a test dependency outside the repository (CAIRN_DETERMINED_DIR, by default
// ../shared/third_party/determined-0.38.1 beside the project, or
// /work/shared/third_party/determined-0.38.1); tests skip, saying so, where it or Debian's python3
// packages it needs are absent.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "tests/e2e/cluster_fixture.h"
#include "tests/support/test_support.h"

namespace cairn::testing {

// CAIRN_DETERMINED_DIR, else the copy beside the project (../shared/third_party), else the one
// this project's machines keep at /work/shared (a clean clone may live elsewhere).
inline std::string DeterminedDir() {
  const char* configured = std::getenv("CAIRN_DETERMINED_DIR");
  if (configured != nullptr && *configured) return configured;
  for (const std::string& candidate : {SourcePath("../shared/third_party/determined-0.38.1"),
                                       std::string("/work/shared/third_party/determined-0.38.1")}) {
    if (std::filesystem::exists(candidate + "/harness/determined")) return candidate;
  }
  return SourcePath("../shared/third_party/determined-0.38.1");
}

inline std::string Tutorials() { return DeterminedDir() + "/examples/tutorials/core_api"; }

// Debian's interpreter, where python3-torch and the package's dependencies are.
inline constexpr char kPython[] = "/usr/bin/python3";

// Why the package cannot run here, or "" when it can.
inline std::string MissingDependency() {
  if (!std::filesystem::exists(DeterminedDir() + "/harness/determined/__init__.py")) {
    return "Determined's package is not at " + DeterminedDir() +
           " (set CAIRN_DETERMINED_DIR to a copy of determined-0.38.1)";
  }
  const std::string probe = std::string("PYTHONPATH=") + DeterminedDir() +
                            "/harness:" + SourcePath("tests/tools/trial_site") + " " + kPython +
                            " -c 'import determined.core, determined.exec.launch, torch' " +
                            ">/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    return "Debian's python3 cannot import Determined's package and torch (apt-get install "
           "python3-torch python3-requests python3-ruamel.yaml python3-termcolor "
           "python3-tabulate python3-filelock python3-pathspec)";
  }
  return "";
}

// `command` run by /bin/sh: its exit status and what it printed.
inline std::pair<int, std::string> RunShell(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, output};
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class DeterminedCli {
 public:
  // The CLI signed in as `user`, whose password is blank (the test clusters' built-in users).
  explicit DeterminedCli(const Cluster& cluster, std::string user = "determined")
      : cluster_(cluster), user_(std::move(user)) {}

  // A shell command's start that runs Python with Determined's package, signed in as
  // the user (its CLI and SDK keep their sessions under the test's own config directory).
  std::string PythonAsDetermined() const {
    const std::string config_home = cluster_.dir().Sub("det-config");
    std::filesystem::create_directories(config_home);
    // tests/tools/cli_site: the stand-in for lomond, which Debian does not package (its README).
    return "cd " + cluster_.dir().path() + " && PYTHONPATH=" + DeterminedDir() +
           "/harness:" + SourcePath("tests/tools/cli_site") + " XDG_CONFIG_HOME=" + config_home +
           " DET_USER=" + user_ + " DET_PASS= " + kPython;
  }

  // Determined's own CLI, run against the cluster as the user: its output (with stderr, where
  // it warns that Cairn's version is not its own, unless `stdout_only`), and its exit status
  // checked to be `expected_status`.
  std::string Det(const std::string& arguments, int expected_status = 0,
                  bool stdout_only = false) const {
    const std::string command = PythonAsDetermined() + " -m determined.cli -m " + cluster_.url() +
                                " " + arguments + (stdout_only ? " 2>/dev/null" : " 2>&1");
    auto [status, output] = RunShell(command);
    EXPECT_EQ(status, expected_status) << "det " << arguments << ":\n" << output;
    return output;
  }

 private:
  const Cluster& cluster_;
  std::string user_;
};

}  // namespace cairn::testing
