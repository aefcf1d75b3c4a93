// Real cairn-master and cairn-agent processes on loopback for end-to-end tests, plus the waits
// they need (on streams and lines, never on sleeps).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_support.h"

namespace cairn::testing {

using nlohmann::json;

// One REST answer: the HTTP status (0 when the request never got one) and the body as JSON
// (discarded when it is not JSON).
// A master.yaml fragment: the priority scheduler with preemption, a minute's grace.
inline constexpr char kPriorityWithPreemption[] =
    "resource_manager:\n"
    "  scheduler:\n"
    "    type: priority\n"
    "    preemption: true\n"
    "task_container_defaults:\n"
    "  preemption_timeout: 60\n";

struct Reply {
  int status = 0;
  json body;
};

// The source directory of an example, e.g. ExamplePath("spiral-mlp").
std::string ExamplePath(const std::string& name);
// A path in the source tree, e.g. SourcePath("tests/tools/fake_tensorboard.py").
std::string SourcePath(const std::string& relative);
// Determined's `modelDefinition`: every file under `directory` (without __pycache__) as
// {path, type, content (base64), mode}, in path order, the way the CLI sends a context.
json ModelDefinition(const std::string& directory);

class Cluster {
 public:
  explicit Cluster(std::string extra_master_config = "");
  ~Cluster();

  // From now on the master serves HTTPS with a certificate for 127.0.0.1 made here, by a CA
  // that this fixture's clients and its agents (--security-tls-master-cert) trust. Call before
  // StartMaster.
  void ServeHttps();
  // The CA and certificate of ServeHttps (empty before).
  const TestCertificates& certificates() const { return certificates_; }
  // security.authz.type of the master: "rbac" (the default of these tests, which check roles)
  // or "basic" (the master's own default). Call before StartMaster.
  void SetAuthz(std::string type) { authz_ = std::move(type); }

  // Starts the master (port 0 the first time, the same port on a restart). With `with_stderr`
  // its log lines are among master_lines() too; `extra_env` adds to its environment.
  void StartMaster(const std::vector<std::string>& extra_env = {}, bool with_stderr = false);
  ChildProcess& master() { return *master_; }
  void StopMaster(int signal_number);
  // `extra_args` go to cairn-agent after the fixture's own (e.g. --tensorboard-command);
  // `extra_env` adds to its environment (and so to its tasks').
  void StartAgent(const std::string& id, int slots, const std::vector<std::string>& extra_args = {},
                  const std::vector<std::string>& extra_env = {});
  ChildProcess& agent(size_t index) { return *agents_[index]; }
  pid_t master_pid() const { return master_->pid(); }
  uint16_t port() const { return port_; }

  std::string url() const {
    return (certificates_.ca_file.empty() ? "http" : "https") + std::string("://127.0.0.1:") +
           std::to_string(port_);
  }
  const std::string& data_dir() const { return data_dir_; }
  const TempDir& dir() const { return dir_; }
  // A client logged in as Determined's default user, and that user's session token. Its reads
  // see every event this fixture has read from the log (it sends Cairn-Min-Offset): the log runs
  // ahead of the projections, so a read right after an event was seen would otherwise race them.
  net::Client Client() const;
  // The Cairn-Min-Offset value for that: the newest offset read from the log, "" before any.
  std::string SeenOffset() const;
  const std::string& token() const { return token_; }

  // POSTs a command and returns its id.
  std::string Submit(const json& config);
  json Get(const std::string& target);
  // Follows the task's logs until the master ends the stream (the task ended); returns the text
  // of the task's own lines (source "task").
  std::string FollowLogs(const std::string& task_id);
  // ...or every line's `result`, the master's lines (source "master") among them.
  std::vector<json> FollowLogLines(const std::string& task_id);
  // Streams the log from offset 0 until `predicate` holds for an event; returns that event.
  json WaitForEvent(const std::function<bool(const json&)>& predicate);
  std::vector<json> AllEvents();
  // Follows the log from offset 0 until `done` holds for everything read so far; returns what it
  // read. When `timeout` passes first, the test fails and what was read is returned.
  std::vector<json> FollowEventsUntil(const std::function<bool(const std::vector<json>&)>& done,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Any request, with `body` as JSON unless it is null.
  Reply Call(const std::string& method, const std::string& target, const json& body = nullptr);
  // POST /api/v1/experiments as Determined's CLI sends it: the YAML text and the context.
  Reply CreateExperiment(const std::string& config_yaml, const std::string& context_directory,
                         bool activate = true);
  // Stops the master, then checks that projections rebuilt from the log are byte-identical
  // (equal digests at equal offsets) to the live ones.
  void ExpectRebuiltProjectionsEqualLive();
  // Runs the `cairn` tool and returns its stdout lines (asserting exit status 0).
  std::vector<std::string> RunCairn(const std::vector<std::string>& args);

 private:
  TempDir dir_;
  std::string data_dir_;
  std::string extra_master_config_;
  std::string authz_ = "rbac";
  uint16_t port_ = 0;
  TestCertificates certificates_;  // set by ServeHttps
  std::string token_;              // determined's session, from the master's latest start
  std::unique_ptr<ChildProcess> master_;
  // One past the newest offset read from the log through the event stream (0: none yet).
  mutable std::atomic<uint64_t> seen_end_{0};
  void NoteSeen(const json& event);
  std::vector<std::unique_ptr<ChildProcess>> agents_;
};

}  // namespace cairn::testing
