// PEDL's custom trial environments end to end (examples/prepared-env): a real master and agent,
// the example's wheel built offline into a directory the agent gives pip (--pip-find-links,
// --pip-no-index), runtime_commands and runtime_packages in a prepared environment the first trial
// builds and the second reuses, startup-hook.sh sourced inside it; and a local package uploaded
// with the experiment (`cairn experiment create --package`, which sends POST /api/v1/experiments
// `packages`), installed into an environment of its own hash.
#include <sys/wait.h>

#include <regex>

#include "base/encoding.h"
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing::experiment_e2e {
namespace {

constexpr auto kExperimentTimeout = std::chrono::seconds(360);

struct EnvironmentLines {
  std::string built_hash;
  double build_seconds = -1;
  std::string reused_hash;
  double reuse_ms = -1;
  bool hook_ran_inside = false;
};

// What a trial run's logs say about its prepared environment.
EnvironmentLines ReadEnvironmentLines(const std::string& logs, const std::string& cache) {
  EnvironmentLines lines;
  std::smatch match;
  static const std::regex built("built prepared environment ([0-9a-f]+) in ([0-9.]+)s");
  static const std::regex reused(
      "reusing prepared environment ([0-9a-f]+) built [^ ]+ \\(the build took [0-9.]+s; ready "
      "now in ([0-9.]+) ms\\)");
  if (std::regex_search(logs, match, built)) {
    lines.built_hash = match[1].str();
    lines.build_seconds = std::stod(match[2].str());
  }
  if (std::regex_search(logs, match, reused)) {
    lines.reused_hash = match[1].str();
    lines.reuse_ms = std::stod(match[2].str());
  }
  const std::string hash = lines.built_hash.empty() ? lines.reused_hash : lines.built_hash;
  lines.hook_ran_inside =
      !hash.empty() && logs.find("startup-hook.sh: python3 is " + cache + "/" + hash +
                                 "/bin/python3, prepared_features imports") != std::string::npos;
  return lines;
}

// The directories of the cache that hold a finished environment.
std::vector<std::string> ReadyEnvironments(const std::string& cache) {
  std::vector<std::string> ready;
  for (const auto& entry : fs::directory_iterator(cache)) {
    if (fs::exists(entry.path() / "cairn-ready.json")) {
      ready.push_back(entry.path().filename().string());
    }
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

class PreparedEnvEndToEnd : public ExperimentEndToEnd {
 protected:
  std::string Wheels() const { return cluster_->dir().Sub("wheels"); }
  std::string Cache() const { return cluster_->dir().Sub("env-cache"); }

  // The example's wheel (build-wheel.sh), and an agent that installs from it and nowhere else.
  void StartClusterWithWheels() {
    StartMaster();  // makes the cluster's directory, where the wheels go
    FinishedProcess built =
        RunToEnd({"bash", ExamplePath("prepared-env") + "/build-wheel.sh", Wheels()},
                 std::chrono::seconds(60));
    ASSERT_EQ(built.exit_code, 0) << built.Text();
    ASSERT_TRUE(fs::exists(Wheels() + "/prepared_features-1.0-py3-none-any.whl")) << built.Text();
    cluster_->StartAgent(
        "agent-1", 2,
        {"--pip-find-links", Wheels(), "--pip-no-index", "true", "--env-cache-dir", Cache()});
  }

  std::string ExampleConfig() {
    std::string config = ReadFile(ExamplePath("prepared-env") + "/experiment.yaml");
    ReplaceOnce(config, "host_path: /tmp", "host_path: " + CheckpointRoot());
    return config;
  }

  // The experiment's trials, by id, once it completed; each with the logs of its one run.
  std::vector<std::pair<json, std::string>> CompletedTrialsWithLogs(int64_t id) {
    auto events = cluster_->FollowEventsUntil(
        [&](const std::vector<json>& read) {
          return ReachedState(read, id, "EXPERIMENT_STATE_COMPLETED") ||
                 ReachedState(read, id, "EXPERIMENT_STATE_ERROR");
        },
        kExperimentTimeout);
    std::vector<std::pair<json, std::string>> trials;
    for (const auto& trial : Trials(id)) {
      auto runs = RunsOf(events, Int(trial["id"]));
      EXPECT_EQ(runs.size(), 1u) << trial.dump();
      trials.emplace_back(trial, runs.empty() ? "" : cluster_->FollowLogs(runs[0]));
    }
    std::sort(trials.begin(), trials.end(),
              [](const auto& a, const auto& b) { return Int(a.first["id"]) < Int(b.first["id"]); });
    return trials;
  }

  // The features_version the trial's validations reported (the package it imported).
  double FeaturesVersion(const json& trial) {
    double version = -1;
    for (const auto& workload : Workloads(Int(trial["id"]))) {
      if (workload.contains("validation")) {
        version = workload["validation"]["metrics"]["avgMetrics"]["features_version"];
      }
    }
    return version;
  }
};

// The example as its README runs it: two trials, one after the other, on one agent.
TEST_F(PreparedEnvEndToEnd, TheFirstTrialBuildsTheEnvironmentAndTheSecondReusesIt) {
  StartClusterWithWheels();
  const int64_t id = Create(ExampleConfig(), ExamplePath("prepared-env") + "/context");
  ASSERT_GT(id, 0);
  auto trials = CompletedTrialsWithLogs(id);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(Experiment(id)["state"], "STATE_COMPLETED");

  const std::string cache = fs::absolute(Cache()).string();
  EnvironmentLines first = ReadEnvironmentLines(trials[0].second, cache);
  EnvironmentLines second = ReadEnvironmentLines(trials[1].second, cache);
  for (const auto& [trial, logs] : trials) {
    EXPECT_EQ(trial["state"], "STATE_COMPLETED") << logs;
    EXPECT_EQ(FeaturesVersion(trial), 1.0);
  }
  ASSERT_FALSE(first.built_hash.empty()) << trials[0].second;
  EXPECT_TRUE(first.reused_hash.empty()) << trials[0].second;
  EXPECT_EQ(second.reused_hash, first.built_hash) << trials[1].second;
  EXPECT_TRUE(second.built_hash.empty()) << trials[1].second;
  EXPECT_EQ(trials[1].second.find("building prepared environment"), std::string::npos)
      << trials[1].second;
  // The build's steps are in the first trial's logs: its runtime command and pip's own output.
  EXPECT_NE(trials[0].second.find("runtime command 1: echo cpu > slot-type.txt"),
            std::string::npos);
  EXPECT_NE(trials[0].second.find("Successfully installed prepared-features-1.0"),
            std::string::npos);
  EXPECT_TRUE(first.hook_ran_inside) << trials[0].second;
  EXPECT_TRUE(second.hook_ran_inside) << trials[1].second;
  EXPECT_EQ(ReadyEnvironments(Cache()), std::vector<std::string>{first.built_hash});

  RecordProperty("build_seconds", std::to_string(first.build_seconds));
  RecordProperty("reuse_ms", std::to_string(second.reuse_ms));
  std::cout << "prepared environment " << first.built_hash << ": built in " << first.build_seconds
            << " s by the first trial, reused in " << second.reuse_ms << " ms by the second\n";
  EXPECT_GE(second.reuse_ms, 0);
  EXPECT_LT(second.reuse_ms, first.build_seconds * 1000);
}

// A wheel uploaded with the experiment (PEDL's --package): a version the agent's wheel directory
// does not have, so only the upload can satisfy runtime_packages; its digest makes a new hash.
TEST_F(PreparedEnvEndToEnd, AnUploadedPackageIsInstalledIntoAnEnvironmentOfItsOwn) {
  StartClusterWithWheels();
  const std::string source = cluster_->dir().Sub("features-2");
  fs::copy(ExamplePath("prepared-env") + "/wheel-src", source, fs::copy_options::recursive);
  std::string init = ReadFile(source + "/prepared_features/__init__.py");
  ReplaceOnce(init, "VERSION = \"1.0\"", "VERSION = \"2.0\"");
  std::ofstream(source + "/prepared_features/__init__.py") << init;
  FinishedProcess built =
      RunToEnd({"python3", ExamplePath("prepared-env") + "/make_wheel.py", source,
                cluster_->dir().Sub("upload"), "prepared-features", "2.0"},
               std::chrono::seconds(60));
  ASSERT_EQ(built.exit_code, 0) << built.Text();
  const std::string wheel_name = "prepared_features-2.0-py3-none-any.whl";
  const std::string wheel = ReadFile(cluster_->dir().Sub("upload") + "/" + wheel_name);
  ASSERT_FALSE(wheel.empty());

  std::string config = ExampleConfig();
  ReplaceOnce(config, "- prepared-features==1.0", "- prepared-features==2.0");
  json body = {{"config", config},
               {"modelDefinition", ModelDefinition(ExamplePath("prepared-env") + "/context")},
               {"activate", true}};

  // A package that is no wheel or source distribution is refused, naming it.
  body["packages"] = json::array({{{"path", "notes.txt"}, {"content", Base64Encode("x")}}});
  Reply refused = cluster_->Call("POST", "/api/v1/experiments", body);
  EXPECT_EQ(refused.status, 400) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("notes.txt"), std::string::npos) << refused.body.dump();

  // PEDL's way: `cairn experiment create CONFIG CONTEXT --package FILE`.
  const std::string config_file = cluster_->dir().Sub("experiment-2.yaml");
  std::ofstream(config_file) << config;
  auto cli = ChildProcess::Start(
      {BinaryPath("cairn"), "experiment", "create", config_file,
       ExamplePath("prepared-env") + "/context", "--package",
       cluster_->dir().Sub("upload") + "/" + wheel_name, "--master", cluster_->url()},
      {"CAIRN_TOKEN=" + cluster_->token()}, /*with_stderr=*/true);
  ASSERT_TRUE(cli.ok()) << cli.status().ToString();
  auto line = (*cli)->WaitForLine(
      [](const std::string& l) { return l.rfind("Created experiment ", 0) == 0; },
      std::chrono::seconds(60));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  const int64_t id = std::stoll(line->substr(std::string("Created experiment ").size()));
  auto exited = (*cli)->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(exited.ok() && WIFEXITED(*exited) && WEXITSTATUS(*exited) == 0);
  auto trials = CompletedTrialsWithLogs(id);
  ASSERT_EQ(trials.size(), 2u);
  const std::string cache = fs::absolute(Cache()).string();
  EnvironmentLines first = ReadEnvironmentLines(trials[0].second, cache);
  EnvironmentLines second = ReadEnvironmentLines(trials[1].second, cache);
  for (const auto& [trial, logs] : trials) {
    EXPECT_EQ(trial["state"], "STATE_COMPLETED") << logs;
    EXPECT_EQ(FeaturesVersion(trial), 2.0) << logs;
  }
  EXPECT_NE(trials[0].second.find("1 local packages"), std::string::npos) << trials[0].second;
  EXPECT_FALSE(first.built_hash.empty()) << trials[0].second;
  EXPECT_EQ(second.reused_hash, first.built_hash) << trials[1].second;
  EXPECT_EQ(ReadyEnvironments(Cache()), std::vector<std::string>{first.built_hash});
}

}  // namespace
}  // namespace cairn::testing::experiment_e2e
