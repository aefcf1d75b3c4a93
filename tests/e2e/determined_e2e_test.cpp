// Determined's own training code on Cairn (issue 42): the tutorials of Determined 0.38.1, run
// unchanged by its own Python package inside Cairn's trials, on a real master and real agents.
//
// The package and tutorials are a test dependency outside the repository
// (tests/e2e/determined_cli.h); the tests skip, saying so, where it or Debian's python3 packages it
// needs are absent. Debian has no `tensorboard` package, which Determined's package imports (its
// pip install brings it), and Debian's torch 1.13 trips over its Python 3.11 in torchrun's option
// parsing, and Segment's `analytics` client (which the legacy harness imports, and which sends
// nothing with Segment disabled) is not packaged either: the agents' trials get
// tests/tools/trial_site on their PYTHONPATH, with stand-ins that accept and discard TensorBoard
// writes and analytics, and a mend for torchrun. Everything else is real: Debian's python3 and
// torch, the package's own launchers, HTTP to the master, mount namespaces for Determined's fixed
// paths.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/e2e/determined_cli.h"
#include "tests/e2e/experiment_fixture.h"
#include "tests/support/webhook_receiver.h"

namespace cairn::testing {
namespace {

using experiment_e2e::Find;
using experiment_e2e::Found;
using experiment_e2e::Int;
using experiment_e2e::OfExperiment;
using experiment_e2e::OfTrial;
using experiment_e2e::ReachedState;
namespace fs = std::filesystem;

class DeterminedTrialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string missing = MissingDependency();
    if (!missing.empty()) GTEST_SKIP() << missing;
    cluster_.StartMaster();
  }

  // An agent whose trials find Debian's python3 first and Determined's package by its flag.
  void StartAgent(const std::string& id, int slots) {
    cluster_.StartAgent(id, slots, {"--determined-package-dir", DeterminedDir() + "/harness"},
                        {"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                         "PYTHONPATH=" + SourcePath("tests/tools/trial_site")});
  }

  int64_t Create(const std::string& yaml, const std::string& context) {
    auto reply = cluster_.CreateExperiment(yaml, context);
    EXPECT_EQ(reply.status, 200) << reply.body.dump();
    return reply.body.is_object() ? Int(reply.body["experiment"]["id"]) : 0;
  }

  std::vector<json> UntilState(int64_t experiment_id, const std::string& state,
                               std::chrono::seconds timeout = std::chrono::seconds(120)) {
    return cluster_.FollowEventsUntil(
        [&](const std::vector<json>& events) {
          for (const char* end : {"EXPERIMENT_STATE_COMPLETED", "EXPERIMENT_STATE_CANCELED",
                                  "EXPERIMENT_STATE_ERROR"}) {
            if (ReachedState(events, experiment_id, end)) return true;
          }
          return ReachedState(events, experiment_id, state);
        },
        timeout);
  }

  // A model directory `name` under the test's directory, holding `file` with `text`.
  std::string ModelDir(const std::string& name, const std::string& file, const std::string& text) {
    const std::string dir = cluster_.dir().Sub(name);
    fs::create_directories(dir);
    std::ofstream(dir + "/" + file) << text;
    return dir;
  }

  std::string PythonAsDetermined() { return DeterminedCli(cluster_).PythonAsDetermined(); }
  std::string Det(const std::string& arguments, int expected_status = 0, bool stdout_only = false) {
    return DeterminedCli(cluster_).Det(arguments, expected_status, stdout_only);
  }

  // The trial's logs, every run's, as `det trial logs` prints them.
  std::string TrialLogs(int64_t trial_id) {
    std::string text;
    auto client = cluster_.Client();
    auto status = client.StreamLines("GET", "/api/v1/trials/" + std::to_string(trial_id) + "/logs",
                                     [&](std::string_view line) {
                                       auto record = json::parse(line, nullptr, false);
                                       if (record.is_object() && record.contains("result")) {
                                         text += record["result"].value("message", "");
                                       }
                                       return true;
                                     });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return text;
  }

  // The steps of the trial's reports of `group`, in log order.
  static std::vector<int64_t> ReportedSteps(const std::vector<json>& events, int64_t trial_id,
                                            const std::string& group) {
    std::vector<int64_t> steps;
    for (const auto& report : Find(events, "trialMetricsReported", OfTrial(trial_id))) {
      if (report.payload.value("group", "") == group) {
        steps.push_back(Int(report.payload["stepsCompleted"]));
      }
    }
    return steps;
  }

  static std::vector<int64_t> Tens() {
    std::vector<int64_t> steps;
    for (int64_t s = 10; s <= 100; s += 10) steps.push_back(s);
    return steps;
  }

  Cluster cluster_;
};

std::string Stage(int stage) {
  static const char* const kNames[] = {"0_start", "1_metrics", "2_checkpoints", "3_hpsearch",
                                       "4_distributed"};
  return experiment_e2e::ReadFile(Tutorials() + "/" + kNames[stage] + ".yaml");
}

TEST_F(DeterminedTrialsTest, CoreApiStagesZeroToTwoCompleteWithMetricsAndCheckpoints) {
  StartAgent("det-a", 2);
  const int64_t stage0 = Create(Stage(0), Tutorials());
  const int64_t stage1 = Create(Stage(1), Tutorials());
  const int64_t stage2 = Create(Stage(2), Tutorials());
  auto events = cluster_.FollowEventsUntil(
      [&](const std::vector<json>& seen) {
        int done = 0;
        for (int64_t id : {stage0, stage1, stage2}) {
          done += ReachedState(seen, id, "EXPERIMENT_STATE_COMPLETED") ||
                  ReachedState(seen, id, "EXPERIMENT_STATE_ERROR");
        }
        return done == 3;
      },
      std::chrono::seconds(150));
  for (int64_t id : {stage0, stage1, stage2}) {
    ASSERT_TRUE(ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED"))
        << "experiment " << id << " did not complete; its trial's logs:\n"
        << TrialLogs(experiment_e2e::FirstTrial(events, id));
  }

  // Stage 0 is a plain script: it ran under Determined's launcher and printed its lines.
  const int64_t trial0 = experiment_e2e::FirstTrial(events, stage0);
  EXPECT_NE(TrialLogs(trial0).find("x is now 100"), std::string::npos) << TrialLogs(trial0);

  // Stage 1 reports training metrics every 10 batches and one validation, each once.
  const int64_t trial1 = experiment_e2e::FirstTrial(events, stage1);
  EXPECT_EQ(ReportedSteps(events, trial1, "training"), Tens());
  EXPECT_EQ(ReportedSteps(events, trial1, "validation"), std::vector<int64_t>{100});
  json trial = cluster_.Get("/api/v1/trials/" + std::to_string(trial1))["trial"];
  EXPECT_EQ(trial["state"], "STATE_COMPLETED") << trial.dump();
  EXPECT_EQ(trial["latestValidation"]["metrics"]["avgMetrics"]["x"], 100) << trial.dump();
  EXPECT_EQ(Int(trial["latestValidation"]["totalBatches"]), 100) << trial.dump();
  EXPECT_EQ(trial["cairn"]["progress"], 1.0) << trial.dump();  // its last report_progress
  EXPECT_EQ(trial["cairn"]["endReason"].get<std::string>().find("its code finished"), 0u)
      << trial.dump();
  json workloads =
      cluster_.Get("/api/v1/trials/" + std::to_string(trial1) + "/workloads")["workloads"];
  ASSERT_EQ(workloads.size(), 11u) << workloads.dump();
  // What the web UI's learning curves plot: batches against each metric.
  EXPECT_EQ(workloads[0]["training"]["metrics"]["avgMetrics"]["x"], 10) << workloads.dump();
  EXPECT_EQ(Int(workloads[0]["training"]["totalBatches"]), 10) << workloads.dump();

  // Stage 2 checkpoints every 10 batches: ten first-class checkpoints, the latest kept.
  const int64_t trial2 = experiment_e2e::FirstTrial(events, stage2);
  auto saved = Find(events, "checkpointSaved", OfTrial(trial2));
  ASSERT_EQ(saved.size(), 10u);
  EXPECT_EQ(Int(saved.back().payload["totalBatches"]), 100);
  const std::string latest = saved.back().payload["uuid"];
  json checkpoint = cluster_.Get("/api/v1/checkpoints/" + latest)["checkpoint"];
  EXPECT_EQ(checkpoint["state"], "STATE_COMPLETED") << checkpoint.dump();
  EXPECT_EQ(Int(checkpoint["metadata"]["steps_completed"]), 100) << checkpoint.dump();
  EXPECT_TRUE(checkpoint["resources"].contains("state")) << checkpoint.dump();
  // The file the tutorial wrote is where the experiment's checkpoint storage is.
  json experiment = cluster_.Get("/api/v1/experiments/" + std::to_string(stage2))["experiment"];
  const std::string host_path = experiment["config"]["checkpoint_storage"]["host_path"];
  EXPECT_EQ(experiment_e2e::ReadFile(host_path + "/" + latest + "/state"),
            "100,100," + std::to_string(trial2));
}

TEST_F(DeterminedTrialsTest, PauseAndActivateResumeStageTwoFromItsCheckpoint) {
  StartAgent("det-a", 1);
  const int64_t experiment = Create(Stage(2), Tutorials());
  // Pause once the trial has saved its second checkpoint.
  auto events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    return Find(seen, "checkpointSaved", OfExperiment(experiment)).size() >= 2;
  });
  ASSERT_EQ(
      cluster_.Call("POST", "/api/v1/experiments/" + std::to_string(experiment) + "/pause").status,
      200);
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  // The package sees its preemption signal, checkpoints, acknowledges and exits 0.
  events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    return !Find(seen, "trialPreemptionAcknowledged", OfTrial(trial)).empty() &&
           !Find(seen, "taskExited").empty();
  });
  const auto first_run = experiment_e2e::RunsOf(events, trial);
  ASSERT_EQ(first_run.size(), 1u);
  ASSERT_EQ(cluster_.Call("POST", "/api/v1/experiments/" + std::to_string(experiment) + "/activate")
                .status,
            200);
  events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  EXPECT_EQ(experiment_e2e::RunsOf(events, trial).size(), 2u);
  // The second run started from the first's last checkpoint: every ten batches were reported
  // once, and x (one per batch) reached 100 across the two runs.
  EXPECT_EQ(ReportedSteps(events, trial, "training"), Tens());
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  std::set<int64_t> steps;
  for (const auto& checkpoint : saved) steps.insert(Int(checkpoint.payload["totalBatches"]));
  EXPECT_EQ(steps.size(), saved.size()) << "a step was checkpointed twice";
  const std::string latest = saved.back().payload["uuid"];
  json stored = cluster_.Get("/api/v1/experiments/" + std::to_string(experiment))["experiment"];
  EXPECT_EQ(experiment_e2e::ReadFile(
                stored["config"]["checkpoint_storage"]["host_path"].get<std::string>() + "/" +
                latest + "/state"),
            "100,100," + std::to_string(trial));
}

// searcher.source_trial_id: the new experiment's trial begins from the source trial's latest
// checkpoint at batch 0 (the tutorial keeps the "weight" x and restarts its batch count).
TEST_F(DeterminedTrialsTest, AWarmStartedTrialBeginsFromItsSourceTrialsCheckpoint) {
  StartAgent("det-a", 1);
  const int64_t source = Create(Stage(2), Tutorials());
  auto events = UntilState(source, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, source, "EXPERIMENT_STATE_COMPLETED"));
  const int64_t source_trial = experiment_e2e::FirstTrial(events, source);
  const std::string source_checkpoint =
      Find(events, "checkpointSaved", OfTrial(source_trial)).back().payload["uuid"];

  std::string yaml = Stage(2);
  const size_t metric = yaml.find("metric: x");
  ASSERT_NE(metric, std::string::npos);
  yaml.insert(metric + 9, "\n   source_trial_id: " + std::to_string(source_trial));
  const int64_t warm = Create(yaml, Tutorials());
  events = UntilState(warm, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, warm, "EXPERIMENT_STATE_COMPLETED"));
  const int64_t trial = experiment_e2e::FirstTrial(events, warm);
  EXPECT_EQ(ReportedSteps(events, trial, "training"), Tens()) << "batch 0 on, not 100";
  const std::string latest = Find(events, "checkpointSaved", OfTrial(trial)).back().payload["uuid"];
  json stored = cluster_.Get("/api/v1/experiments/" + std::to_string(warm))["experiment"];
  EXPECT_EQ(experiment_e2e::ReadFile(
                stored["config"]["checkpoint_storage"]["host_path"].get<std::string>() + "/" +
                latest + "/state"),
            "200,100," + std::to_string(trial))
      << "x went on from the source's 100";
  EXPECT_EQ(
      cluster_.Get("/api/v1/trials/" + std::to_string(trial))["trial"]["warmStartCheckpointUuid"],
      source_checkpoint);
  // An unknown source refuses the experiment.
  yaml = Stage(2);
  yaml.insert(metric + 9, "\n   source_trial_id: 999");
  EXPECT_EQ(cluster_.CreateExperiment(yaml, Tutorials()).status, 404);
}

// Determined's system-metrics profiler in a Core API trial: it samples every 0.1 s and reports
// each group every two samples, until the test has seen them and lets the trial end.
constexpr char kProfiledTrain[] = R"(import os

import determined as det

with det.core.init() as core:
    core.profiler.on(sampling_interval=0.1, samples_per_report=2)
    while not os.path.exists("release"):
        sum(i * i for i in range(100000))  # work for the profiler to watch
    core.profiler.off()
    core.train.report_training_metrics(steps_completed=1, metrics={"loss": 1.0})
)";

TEST_F(DeterminedTrialsTest, AProfiledTrialsSystemMetricsReadBackAsTheWebUisSeries) {
  StartAgent("det-a", 1);
  const std::string context = ModelDir("profiled", "train.py", kProfiledTrain);
  const int64_t experiment = Create(
      "name: profiled\n"
      "entrypoint: python3 train.py\n"
      "profiling: {enabled: true}\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
      "max_restarts: 0\n",
      context);
  ASSERT_GT(experiment, 0);
  const std::set<std::string> groups = {"cpu", "memory", "disk", "network"};
  auto reported = [&](const std::vector<json>& seen) {
    std::set<std::string> found;
    for (const auto& report : Find(seen, "trialMetricsReported", OfExperiment(experiment))) {
      found.insert(report.payload.value("group", ""));
    }
    return found;
  };
  auto events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    auto found = reported(seen);
    return std::includes(found.begin(), found.end(), groups.begin(), groups.end());
  });
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  auto found = reported(events);
  ASSERT_TRUE(std::includes(found.begin(), found.end(), groups.begin(), groups.end()))
      << ::testing::PrintToString(found) << TrialLogs(trial);
  // The trial's work directory is under its agent's; the trial waits for "release" there.
  bool released = false;
  for (const auto& entry : fs::directory_iterator(cluster_.dir().Sub("agent-det-a"))) {
    if (!fs::exists(entry.path() / "train.py")) continue;
    std::ofstream(entry.path() / "release") << "go";
    released = true;
  }
  ASSERT_TRUE(released) << "no work directory with train.py under agent-det-a";
  events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  // Every cpu report, as recorded: {agent: {cpu_util_simple: value}}.
  std::vector<double> cpu;
  std::string agent;
  for (const auto& report : Find(events, "trialMetricsReported", OfTrial(trial))) {
    if (report.payload.value("group", "") != "cpu") continue;
    json metrics = json::parse(report.payload["metricsJson"].get<std::string>());
    ASSERT_EQ(metrics.size(), 1u) << metrics;
    agent = metrics.begin().key();
    cpu.push_back(metrics.begin().value()["cpu_util_simple"].get<double>());
  }
  ASSERT_FALSE(cpu.empty());

  // What the web UI reads, through Determined's own bindings: the series, then the CPU's points.
  const std::string sdk =
      PythonAsDetermined() + " -c '" +
      "from determined.common.api import bindings\n"
      "from determined.experimental import client\n"
      "client.login(\"" +
      cluster_.url() +
      "\")\n"
      "s = client._determined._session\n"
      "for r in bindings.get_GetTrialProfilerAvailableSeries(s, trialId=" +
      std::to_string(trial) +
      ", follow=True):\n"
      "    print(\"series\", sorted(set(l.name for l in r.labels)), sorted(set(l.agentId for l in "
      "r.labels)))\n"
      "for r in bindings.get_GetTrialProfilerMetrics(s, labels_trialId=" +
      std::to_string(trial) + ", labels_name=\"cpu_util_simple\", labels_agentId=\"" + agent +
      "\", labels_metricType=bindings.TrialProfilerMetricLabelsProfilerMetricType.SYSTEM, "
      "follow=True):\n"
      "    print(\"point\", repr(r.batch.values[0]), r.batch.labels.agentId, "
      "len(r.batch.timestamps))\n"
      "print(\"cpu reports\", len(list(client.get_trial(" +
      std::to_string(trial) + ").iter_metrics(\"cpu\"))))'";
  auto [status, printed] = RunShell(sdk);
  ASSERT_EQ(status, 0) << printed;
  // follow=True streams ended: the trial has. Each series once, the agent's own id.
  EXPECT_NE(printed.find("series ['cpu_util_simple', 'disk_iops', 'disk_throughput_read', "
                         "'disk_throughput_write', 'memory_free', 'net_throughput_recv', "
                         "'net_throughput_sent'] ['" +
                         agent + "']"),
            std::string::npos)
      << printed;
  std::vector<double> points;
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("point ", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    double value = 0;
    std::string point_agent;
    int timestamps = 0;
    fields >> value >> point_agent >> timestamps;
    points.push_back(value);
    EXPECT_EQ(point_agent, agent) << line;
    EXPECT_EQ(timestamps, 1) << line;
  }
  ASSERT_EQ(points.size(), cpu.size()) << printed;
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(points[i], cpu[i], 1e-3 * (1 + cpu[i]));
  EXPECT_NE(printed.find("cpu reports " + std::to_string(cpu.size())), std::string::npos)
      << printed;
  // A name that is no system metric is refused, naming the prefixes.
  auto refused = cluster_.Call(
      "GET", "/api/v1/trials/" + std::to_string(trial) + "/profiler/metrics?labels.name=loss");
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.dump().find("cpu_*"), std::string::npos) << refused.body.dump();
}

// core_context.alert() in a Core API trial, to a Slack webhook made with Determined's own
// bindings that names the experiment: its alert and its completion arrive as Slack messages.
constexpr char kAlertingTrain[] = R"(import determined as det

with det.core.init() as core:
    core.alert(title="diverged", description="loss is nan", level="warn")
    core.train.report_training_metrics(steps_completed=1, metrics={"loss": 1.0})
)";

TEST_F(DeterminedTrialsTest, ACoreApiAlertAndTheEndReachASlackWebhookMadeWithTheBindings) {
  WebhookReceiver receiver;
  const std::string made =
      PythonAsDetermined() + " -c '" +
      "from determined.common.api import bindings as b\n"
      "from determined.experimental import client\n"
      "client.login(\"" +
      cluster_.url() +
      "\")\n"
      "s = client._determined._session\n"
      "t = [b.v1Trigger(triggerType=b.v1TriggerType.CUSTOM, condition={}),\n"
      "     b.v1Trigger(triggerType=b.v1TriggerType.EXPERIMENT_STATE_CHANGE,\n"
      "                 condition={\"state\": \"COMPLETED\"})]\n"
      "w = b.post_PostWebhook(s, body=b.v1Webhook(mode=b.v1WebhookMode.SPECIFIC, name=\"alerts\",\n"
      "    url=\"" +
      receiver.Url("/slack") +
      "\", webhookType=b.v1WebhookType.SLACK,\n"
      "    triggers=t, workspaceId=1)).webhook\n"
      "print(\"made\", w.id, [x.triggerType.value for x in w.triggers])\n"
      "print(\"listed\", [x.name for x in b.get_GetWebhooks(s).webhooks])'";
  auto [status, printed] = RunShell(made);
  ASSERT_EQ(status, 0) << printed;
  EXPECT_NE(printed.find("made 1 ['TRIGGER_TYPE_CUSTOM', 'TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE']"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("listed ['alerts']"), std::string::npos) << printed;

  StartAgent("det-a", 1);
  const int64_t experiment = Create(
      "name: alerting\n"
      "entrypoint: python3 train.py\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
      "integrations: {webhooks: {webhook_name: [alerts]}}\n"
      "max_restarts: 0\n",
      ModelDir("alerting", "train.py", kAlertingTrain));
  ASSERT_GT(experiment, 0);
  auto events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED"));
  ASSERT_TRUE(receiver.WaitFor(2)) << "got " << receiver.received().size();
  const auto received = receiver.received();
  json alert = json::parse(received[0].body);
  EXPECT_EQ(alert["blocks"][0]["fields"][0]["text"], "*Level*: WARNING") << alert.dump();
  EXPECT_EQ(alert["blocks"][0]["fields"][1]["text"], "*Title*: diverged");
  EXPECT_EQ(alert["blocks"][0]["fields"][2]["text"], "*Description*: loss is nan");
  json done = json::parse(received[1].body);
  EXPECT_EQ(done["blocks"][0]["text"]["text"],
            "Your experiment completed successfully \xF0\x9F\x8E\x89");
  EXPECT_EQ(done["attachments"][0]["blocks"][0]["text"]["text"],
            "\xE2\x9C\x85 alerting (#" + std::to_string(experiment) + ")");
  EXPECT_EQ(received[1].target, "/slack");
}

// Determined's own e2e test of log policies, here: a trial whose logs match a cancel_retries
// policy is not restarted and carries the policy's name; one whose logs do not match is.
TEST_F(DeterminedTrialsTest, ALogPolicyCancelsTheRetryOfAMatchingFailureAndLabelsTheTrial) {
  StartAgent("det-a", 1);
  const std::string context =
      ModelDir("exit7", "train.py",
               "import sys\nprint('executing action exit code 7', flush=True)\nsys.exit(7)\n");
  auto config = [](const std::string& pattern) {
    return "entrypoint: python3 train.py\n"
           "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
           "max_restarts: 1\n"
           "log_policies:\n"
           "  - {name: Exit7, pattern: '" +
           pattern + "', action: cancel_retries}\n";
  };
  auto only_trial = [&](int64_t experiment) {
    json trials =
        cluster_.Get("/api/v1/experiments/" + std::to_string(experiment) + "/trials")["trials"];
    EXPECT_EQ(trials.size(), 1u) << trials.dump();
    return trials.empty() ? json::object() : trials[0];
  };
  const int64_t matched = Create(config("executing.*action.*exit.*code.*7"), context);
  ASSERT_GT(matched, 0);
  UntilState(matched, "EXPERIMENT_STATE_ERROR");
  json trial = only_trial(matched);
  EXPECT_EQ(trial["state"], "STATE_ERROR");
  EXPECT_EQ(trial["restarts"], 0);
  EXPECT_EQ(trial.value("logPolicyMatched", ""), "Exit7");
  EXPECT_NE(trial["cairn"].value("endReason", "").find("don't retry policy"), std::string::npos)
      << trial.dump();

  const int64_t unmatched = Create(config("(.*) this should not match (.*)"), context);
  ASSERT_GT(unmatched, 0);
  UntilState(unmatched, "EXPERIMENT_STATE_ERROR");
  trial = only_trial(unmatched);
  EXPECT_EQ(trial["restarts"], 1);
  EXPECT_FALSE(trial.contains("logPolicyMatched")) << trial.dump();
  // Its CLI's log filters reach the master: the line went to stdout, not stderr.
  const std::string trial_id = std::to_string(only_trial(matched)["id"].get<int64_t>());
  EXPECT_NE(Det("trial logs " + trial_id + " --stdtype stdout").find("executing action exit"),
            std::string::npos);
  EXPECT_EQ(Det("trial logs " + trial_id + " --stdtype stderr").find("executing action exit"),
            std::string::npos);
  // Determined's CLI shows the policies as stored: the experiment's, then Determined's defaults.
  const std::string shown = Det("experiment config " + std::to_string(matched));
  EXPECT_NE(shown.find("Exit7"), std::string::npos) << shown;
  EXPECT_NE(shown.find("CUDA OOM"), std::string::npos) << shown;
}

TEST_F(DeterminedTrialsTest, StageThreeAdaptiveAshaStopsTrialsOnItsTimeMetric) {
  StartAgent("det-a", 4);
  const int64_t experiment = Create(Stage(3), Tutorials());
  auto events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED", std::chrono::seconds(240));
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED"));
  auto created = Find(events, "trialCreated", OfExperiment(experiment));
  EXPECT_EQ(created.size(), 10u);
  // Trials the searcher stopped ended before max_time; at least one went all the way.
  auto stopped = Find(events, "trialClosed", [&](const json& p) {
    return OfExperiment(experiment)(p) && p.value("reason", "").find("stopped at rung") == 0;
  });
  EXPECT_FALSE(stopped.empty());
  int64_t longest = 0;
  int stopped_early = 0;
  for (const auto& trial : created) {
    const int64_t id = Int(trial.payload["trialId"]);
    auto validations = ReportedSteps(events, id, "validation");
    ASSERT_FALSE(validations.empty()) << "trial " << id << " reported no validation";
    longest = std::max(longest, validations.back());
    stopped_early += validations.back() < 100;
  }
  EXPECT_EQ(longest, 100);
  EXPECT_GT(stopped_early, 0) << "no trial was stopped before max_time";
}

TEST_F(DeterminedTrialsTest, StageFourRunsEightRanksOverTwoFourSlotAgents) {
  StartAgent("four-a", 4);
  StartAgent("four-b", 4);
  const int64_t experiment = Create(Stage(4), Tutorials());
  auto events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED", std::chrono::seconds(240));
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  auto assigned = Find(events, "allocationAssigned", [&](const json& p) {
    return p.value("taskId", "") == experiment_e2e::RunsOf(events, trial).front();
  });
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_EQ(assigned[0].payload["parts"].size(), 2u);
  // Every one of the eight workers started, each labelled with its rank by wrap_rank.
  const std::string logs = TrialLogs(trial);
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_NE(logs.find("[rank=" + std::to_string(rank) + "] "), std::string::npos)
        << "rank " << rank << " did not run:\n"
        << logs;
  }
  // The chief reported once per ten batches; x summed all eight ranks' increments each batch.
  EXPECT_EQ(ReportedSteps(events, trial, "training"), Tens());
  auto reports = Find(events, "trialMetricsReported", OfTrial(trial));
  ASSERT_FALSE(reports.empty());
  auto hparams = json::parse(
      Find(events, "trialCreated", OfTrial(trial))[0].payload["hparamsJson"].get<std::string>());
  const int64_t increment = hparams["increment_by"];
  EXPECT_EQ(json::parse(reports.back().payload["metricsJson"].get<std::string>())["x"],
            100 * 8 * increment);
}

// Determined's own CLI, unmodified, against the master: it creates the experiment from the
// tutorial's files, then reads its trial's metrics and checkpoints.
TEST_F(DeterminedTrialsTest, DeterminedsCliCreatesAndDescribesACoreApiExperiment) {
  StartAgent("det-a", 1);
  auto det = [&](const std::string& arguments) { return Det(arguments); };
  const std::string created =
      det("experiment create " + Tutorials() + "/2_checkpoints.yaml " + Tutorials());
  const size_t at = created.find("Created experiment ");
  ASSERT_NE(at, std::string::npos) << created;
  const int64_t experiment = std::stoll(created.substr(at + 19));
  auto events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED"));
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  const std::string described = det("trial describe " + std::to_string(trial) + " --metrics");
  EXPECT_NE(described.find("COMPLETED"), std::string::npos) << described;
  EXPECT_NE(described.find("100"), std::string::npos) << described;
  const std::string checkpoints = det("experiment list-checkpoints " + std::to_string(experiment));
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  ASSERT_FALSE(saved.empty());
  EXPECT_NE(checkpoints.find(saved.back().payload["uuid"].get<std::string>()), std::string::npos)
      << checkpoints;
  // The SDK's metric reads (GET /api/v1/trials/metrics/...).
  const std::string sdk = PythonAsDetermined() + " -c '" +
                          "from determined.experimental import client\n"
                          "client.login(\"" +
                          cluster_.url() +
                          "\")\n"
                          "t = client.get_trial(" +
                          std::to_string(trial) +
                          ")\n"
                          "print(sorted(m.steps_completed for m in t.iter_metrics(\"training\")))'";
  auto [status, printed] = RunShell(sdk);
  EXPECT_EQ(status, 0) << printed;
  EXPECT_NE(printed.find("[10, 20, 30, 40, 50, 60, 70, 80, 90, 100]"), std::string::npos)
      << printed;
}

// `det cmd run` and `det task logs` as Determined's users run them: a one-string command under
// /bin/sh, the context's startup hook, the master's lifecycle line, the log's filter values and
// the login's answer to a wrong password.
TEST_F(DeterminedTrialsTest, DeterminedsCliRunsCommandsAsItsUsersExpect) {
  StartAgent("det-a", 1);
  {
    std::ofstream config(cluster_.dir().Sub("cmd.yaml"));
    config << "environment:\n  environment_variables:\n    - TEST=TEST\n";
  }
  const std::string ran = Det("cmd run --config-file cmd.yaml 'env | grep -q TEST=TEST'");
  EXPECT_NE(ran.find("resources exited successfully with a zero exit code"), std::string::npos)
      << ran;
  const std::string listed = Det("cmd list --json");
  EXPECT_NE(listed.find("Command (env | grep -q TEST=TEST)"), std::string::npos) << listed;

  fs::create_directories(cluster_.dir().Sub("ctx"));
  {
    std::ofstream hook(cluster_.dir().Sub("ctx/startup-hook.sh"));
    hook << "export HOOKED=from-the-hook\n";
  }
  const std::string hooked = Det("cmd run -d -c ctx 'echo $HOOKED'", 0, /*stdout_only=*/true);
  // Its last line (the upload's progress comes first, rewritten with carriage returns).
  std::string id = hooked.substr(0, hooked.find_last_not_of("\r\n") + 1);
  id = id.substr(id.find_last_of("\r\n") + 1);
  ASSERT_FALSE(id.empty()) << hooked;
  const std::string logs = Det("task logs -f " + id);
  EXPECT_NE(logs.find("from-the-hook"), std::string::npos) << logs;
  // --head and --tail (limit, orderBy) print only what they ask for.
  const std::string head = Det("task logs --head 1 " + id, 0, /*stdout_only=*/true);
  EXPECT_EQ(head.rfind("from-the-hook\n", 0), 0u) << head;
  EXPECT_EQ(head.find("resources exited"), std::string::npos) << "one line only: " << head;
  const std::string tail = Det("task logs --tail 1 " + id, 0, /*stdout_only=*/true);
  EXPECT_EQ(tail.find("from-the-hook"), std::string::npos) << tail;
  EXPECT_NE(tail.find("was terminated"), std::string::npos) << tail;
  // The fields `det task logs` offers as filters.
  const std::string sdk = PythonAsDetermined() +
                          " -c 'from determined.common.api import bindings\n"
                          "from determined.experimental import client\n"
                          "client.login(\"" +
                          cluster_.url() +
                          "\")\n"
                          "sess = client._get_singleton_session()\n"
                          "r = next(iter(bindings.get_TaskLogsFields(sess, taskId=\"" +
                          id + "\")))\nprint(r.agentIds, r.sources, r.stdtypes)' 2>&1";
  auto [status, printed] = RunShell(sdk);
  EXPECT_EQ(status, 0) << printed;
  EXPECT_NE(printed.find("['det-a'] ['master', 'task'] ['stdout']"), std::string::npos) << printed;
}

// An MNIST-format data set of `count` random 28x28 images in `directory`: what torchvision's
// MNIST dataset finds before it would download (data/MNIST/raw/*-ubyte).
void WriteMnist(const std::string& directory, const std::string& prefix, uint32_t count) {
  fs::create_directories(directory);
  auto big_endian = [](std::ofstream& out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out.put(static_cast<char>(value >> shift));
  };
  std::ofstream images(directory + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
  big_endian(images, 0x803);
  big_endian(images, count);
  big_endian(images, 28);
  big_endian(images, 28);
  std::ofstream labels(directory + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
  big_endian(labels, 0x801);
  big_endian(labels, count);
  uint32_t state = 12345;
  for (uint32_t i = 0; i < count; ++i) {
    const int label = static_cast<int>(i % 10);
    labels.put(static_cast<char>(label));
    // A digit's class shows as a bright band at its row, so there is something to learn.
    for (int pixel = 0; pixel < 28 * 28; ++pixel) {
      state = state * 1103515245u + 12345u;
      const bool band = pixel / 28 / 2 == label + 4;
      images.put(static_cast<char>(band ? 255 : (state >> 24) % 64));
    }
  }
}

// Determined's PyTorchTrial tutorial (mnist_pytorch), its code unchanged, on a local data set:
// it trains on CPU, is paused and resumed from its checkpoint, and the checkpoint `det
// checkpoint download` gives back holds a state dict its model loads.
TEST_F(DeterminedTrialsTest, PyTorchTrialTrainsPausesResumesAndItsCheckpointLoads) {
  StartAgent("det-a", 1);
  const std::string context = cluster_.dir().Sub("mnist_pytorch");
  fs::copy(DeterminedDir() + "/examples/tutorials/mnist_pytorch", context,
           fs::copy_options::recursive);
  WriteMnist(context + "/data/MNIST/raw", "train", 1280);
  WriteMnist(context + "/data/MNIST/raw", "t10k", 128);
  // The tutorial's const.yaml, trained for 200 batches: its Trainer reports (and looks at its
  // preemption signal) every 100, so the pause lands mid-run.
  std::string config = experiment_e2e::ReadFile(context + "/const.yaml");
  experiment_e2e::ReplaceOnce(config, "python3 train.py --epochs 1",
                              "python3 train.py --batches 200");
  config += "max_restarts: 0\n";
  const int64_t experiment = Create(config, context);
  auto events = cluster_.FollowEventsUntil(
      [&](const std::vector<json>& seen) {
        auto reports = Find(seen, "trialMetricsReported", OfExperiment(experiment));
        return !reports.empty();
      },
      std::chrono::seconds(120));
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  ASSERT_FALSE(Find(events, "trialMetricsReported", OfTrial(trial)).empty()) << TrialLogs(trial);
  ASSERT_EQ(
      cluster_.Call("POST", "/api/v1/experiments/" + std::to_string(experiment) + "/pause").status,
      200);
  events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    return !Find(seen, "trialPreemptionAcknowledged", OfTrial(trial)).empty() &&
           !Find(seen, "taskExited").empty();
  });
  auto paused_at = Find(events, "checkpointSaved", OfTrial(trial));
  ASSERT_FALSE(paused_at.empty()) << "the trial saved nothing when paused:\n" << TrialLogs(trial);
  const int64_t resumed_from = Int(paused_at.back().payload["totalBatches"]);
  EXPECT_GT(resumed_from, 0);
  EXPECT_LT(resumed_from, 200) << "the pause came after the last batch";
  RecordProperty("resumed_from", std::to_string(resumed_from));
  ASSERT_EQ(cluster_.Call("POST", "/api/v1/experiments/" + std::to_string(experiment) + "/activate")
                .status,
            200);
  events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED", std::chrono::seconds(180));
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  EXPECT_EQ(experiment_e2e::RunsOf(events, trial).size(), 2u);
  // The second run went on from the checkpoint: no step was trained twice.
  auto training = ReportedSteps(events, trial, "training");
  EXPECT_TRUE(std::is_sorted(training.begin(), training.end()) &&
              std::adjacent_find(training.begin(), training.end()) == training.end())
      << ::testing::PrintToString(training);
  EXPECT_EQ(training.back(), 200);
  EXPECT_EQ(ReportedSteps(events, trial, "validation").back(), 200);
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  const std::string latest = saved.back().payload["uuid"];
  EXPECT_EQ(Int(saved.back().payload["totalBatches"]), 200);

  // det checkpoint download, then the tutorial's model loads the state dict.
  const std::string download = cluster_.dir().Sub("downloaded");
  Det("checkpoint download " + latest + " -o " + download, 0, /*stdout_only=*/true);
  ASSERT_TRUE(fs::exists(download + "/state_dict.pth")) << "nothing downloaded to " << download;
  const std::string load =
      "cd " + context + " && PYTHONPATH=" + DeterminedDir() +
      "/harness:" + SourcePath("tests/tools/trial_site") + " " + kPython +
      " -c 'import torch, model\n"
      "hparams = dict(n_filters1=32, n_filters2=64, dropout1=0.25, dropout2=0.5)\n"
      "net = model.build_model(hparams)\n"
      "state = torch.load(\"" +
      download +
      "/state_dict.pth\")\n"
      "net.load_state_dict(state[\"models_state_dict\"][0])\n"
      "print(\"loaded\", sum(p.numel() for p in net.parameters()))' > " +
      cluster_.dir().Sub("load.out") + " 2>&1";
  EXPECT_EQ(std::system(load.c_str()), 0)
      << experiment_e2e::ReadFile(cluster_.dir().Sub("load.out"));
  EXPECT_EQ(experiment_e2e::ReadFile(cluster_.dir().Sub("load.out")).rfind("loaded ", 0), 0u)
      << experiment_e2e::ReadFile(cluster_.dir().Sub("load.out"));
}

// Determined's legacy form: `entrypoint: module:Class` names a PyTorchTrial, which Determined's
// launcher hands to its own harness (torch_distributed, then determined.exec.harness).
constexpr char kLegacyTrial[] = R"(import torch
from torch import nn

from determined import pytorch


class TinyTrial(pytorch.PyTorchTrial):
    def __init__(self, context):
        self.context = context
        self.model = context.wrap_model(nn.Linear(4, 1))
        self.optimizer = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.1))

    def _data(self):
        generator = torch.Generator().manual_seed(0)
        x = torch.randn(256, 4, generator=generator)
        y = x.sum(dim=1, keepdim=True)
        return torch.utils.data.TensorDataset(x, y)

    def build_training_data_loader(self):
        return pytorch.DataLoader(self._data(), batch_size=self.context.get_per_slot_batch_size())

    def build_validation_data_loader(self):
        return pytorch.DataLoader(self._data(), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch, epoch_idx, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        return {"loss": loss}

    def evaluate_batch(self, batch):
        x, y = batch
        return {"validation_loss": nn.functional.mse_loss(self.model(x), y)}
)";

TEST_F(DeterminedTrialsTest, ALegacyTrialClassRunsThroughDeterminedsHarness) {
  StartAgent("det-a", 1);
  const std::string context = ModelDir("legacy", "model_def.py", kLegacyTrial);
  const int64_t experiment = Create(
      "name: legacy\n"
      "entrypoint: model_def:TinyTrial\n"
      "hyperparameters: {global_batch_size: 16}\n"
      "searcher: {name: single, metric: validation_loss, max_length: {batches: 20}}\n"
      "scheduling_unit: 10\n"
      "max_restarts: 0\n",
      context);
  auto events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED", std::chrono::seconds(180));
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  EXPECT_EQ(ReportedSteps(events, trial, "training"), (std::vector<int64_t>{10, 20}))
      << TrialLogs(trial);
  EXPECT_EQ(ReportedSteps(events, trial, "validation"), std::vector<int64_t>{20});
  auto saved = Find(events, "checkpointSaved", OfTrial(trial));
  ASSERT_FALSE(saved.empty());
  EXPECT_EQ(Int(saved.back().payload["totalBatches"]), 20);
  // Determined's PyTorchTrial checkpoint: its state dict and a copy of the model definition.
  json checkpoint =
      cluster_.Get("/api/v1/checkpoints/" + saved.back().payload["uuid"].get<std::string>());
  EXPECT_TRUE(checkpoint["checkpoint"]["resources"].contains("state_dict.pth")) << checkpoint;
  EXPECT_TRUE(checkpoint["checkpoint"]["resources"].contains("code/model_def.py")) << checkpoint;
}

// Two ranks under Determined's torch_distributed launcher, one per agent: each joins torch's
// gloo group, all-reduces its rank + 1 each step, and rank 0 reports and checkpoints. In the
// first run, rank 1 writes its pid where the test finds it and waits at step 3 to be killed.
constexpr char kDistributedTrain[] = R"(import logging
import os
import threading

import torch
import torch.distributed as dist

import determined as det

logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
distributed = det.core.DistributedContext.from_torch_distributed()
info = det.get_cluster_info()
run_id = int(os.environ["DET_TRIAL_RUN_ID"])
with det.core.init(distributed=distributed) as core:
    start = 0
    if info.latest_checkpoint:
        with core.checkpoint.restore_path(info.latest_checkpoint) as path:
            start = int((path / "step").read_text())
    print(f"rank {rank} of {size}: run {run_id} starts after step {start}", flush=True)
    with open(f"pid-run{run_id}-rank{rank}", "w") as f:
        f.write(str(os.getpid()))
    for step in range(start + 1, 6):
        if run_id == 1 and rank == 1 and step == 3:
            threading.Event().wait()  # blocks until the test kills this rank
        total = torch.tensor([float(rank + 1)])
        dist.all_reduce(total)
        print(f"rank {rank} of {size}: step {step} all-reduce {total.item():.0f}", flush=True)
        if rank == 0:
            core.train.report_training_metrics(steps_completed=step,
                                               metrics={"sum": total.item()})
            with core.checkpoint.store_path({"steps_completed": step}) as (path, uuid):
                (path / "step").write_text(str(step))
        if core.preempt.should_preempt():
            break
)";

constexpr char kDistributedConfig[] = R"(name: two ranks
entrypoint: python3 -m determined.launch.torch_distributed python3 train.py
resources:
  slots_per_trial: 2
searcher:
  name: single
  metric: sum
max_restarts: 1
)";

TEST_F(DeterminedTrialsTest, TorchDistributedRunsEveryRankAndADeadRankRestartsThemAll) {
  StartAgent("rank-a", 1);
  StartAgent("rank-b", 1);
  const std::string context = ModelDir("two-ranks", "train.py", kDistributedTrain);
  const int64_t experiment = Create(kDistributedConfig, context);
  // Run 1 checkpoints step 2 on rank 0; its rank 1 then waits at step 3.
  auto events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    return !Find(seen, "checkpointSaved", [&](const json& p) {
              return OfExperiment(experiment)(p) && Int(p["totalBatches"]) == 2;
            }).empty();
  });
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  ASSERT_FALSE(Find(events, "checkpointSaved", OfExperiment(experiment)).empty())
      << TrialLogs(trial);
  auto assigned = Find(events, "allocationAssigned", [&](const json& p) {
    return p.value("taskId", "") == experiment_e2e::RunsOf(events, trial).front();
  });
  ASSERT_EQ(assigned.size(), 1u);
  ASSERT_EQ(assigned[0].payload["parts"].size(), 2u) << "the trial is not a gang of two agents";
  // Rank 1 runs on the second part's agent, in its allocation's work directory.
  const std::string allocation = assigned[0].payload["allocationId"];
  const std::string rank1_agent = assigned[0].payload["parts"][1]["agentId"];
  std::string work = cluster_.dir().Sub("agent-" + rank1_agent);
  std::string pid_file;
  for (const auto& entry : fs::directory_iterator(work)) {
    if (fs::exists(entry.path() / "pid-run1-rank1")) pid_file = entry.path() / "pid-run1-rank1";
  }
  ASSERT_FALSE(pid_file.empty()) << "rank 1 wrote no pid under " << work << ":\n"
                                 << TrialLogs(trial);
  const pid_t rank1 = std::stoi(experiment_e2e::ReadFile(pid_file));
  ASSERT_EQ(::kill(rank1, SIGKILL), 0);

  events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED")) << TrialLogs(trial);
  // The dead rank failed the attempt; the restart ran both ranks again from step 2's checkpoint.
  EXPECT_EQ(experiment_e2e::RunsOf(events, trial).size(), 2u);
  EXPECT_EQ(Find(events, "trialRestarted", OfTrial(trial)).size(), 1u);
  const std::string logs = TrialLogs(trial);
  for (int rank : {0, 1}) {
    const std::string prefix = "rank " + std::to_string(rank) + " of 2: ";
    EXPECT_NE(logs.find(prefix + "run 2 starts after step 2"), std::string::npos) << logs;
    // gloo's all-reduce of 1 + 2 on every rank.
    EXPECT_NE(logs.find(prefix + "step 5 all-reduce 3"), std::string::npos) << logs;
  }
  // Determined's launcher labels each worker's lines with its rank.
  EXPECT_NE(logs.find("[rank=1] "), std::string::npos) << logs;
  // Rank 0 reported each step once over both runs: steps 1-2, then 3-5 after the restart.
  EXPECT_EQ(ReportedSteps(events, trial, "training"), (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

// A launcher whose framework is not installed fails the trial, and its logs say which.
TEST_F(DeterminedTrialsTest, ADeepSpeedLauncherWithoutDeepSpeedFailsSayingSo) {
  StartAgent("det-a", 1);
  const std::string context = ModelDir("deepspeed", "train.py", "print('never runs')\n");
  const int64_t experiment = Create(
      "name: deepspeed\n"
      "entrypoint: python3 -m determined.launch.deepspeed python3 train.py\n"
      "searcher: {name: single, metric: loss}\n"
      "max_restarts: 0\n",
      context);
  auto events = UntilState(experiment, "EXPERIMENT_STATE_ERROR");
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  auto ended = Find(events, "trialEnded", OfTrial(trial));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].payload["state"], "EXPERIMENT_STATE_ERROR");
  // Its only trial failed, so the experiment did (Determined's rule).
  EXPECT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_ERROR"));
  const std::string logs = TrialLogs(trial);
  EXPECT_NE(logs.find("No module named 'deepspeed'"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("never runs"), std::string::npos) << logs;
}

// The master dies (kill -9) while a Core API trial reports; the package retries what it could
// not deliver, the restarted master takes it once, and the trial goes on to the end.
TEST_F(DeterminedTrialsTest, AMasterKilledDuringACoreApiTrialLosesAndDoublesNoReport) {
  StartAgent("det-a", 1);
  const int64_t experiment = Create(Stage(1), Tutorials());
  auto events = cluster_.FollowEventsUntil([&](const std::vector<json>& seen) {
    return Find(seen, "trialMetricsReported", OfExperiment(experiment)).size() >= 3;
  });
  cluster_.StopMaster(SIGKILL);
  cluster_.StartMaster();
  events = UntilState(experiment, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, experiment, "EXPERIMENT_STATE_COMPLETED"));
  const int64_t trial = experiment_e2e::FirstTrial(events, experiment);
  // Every report the tutorial sends (training every 10 batches, one validation), each once.
  EXPECT_EQ(ReportedSteps(events, trial, "training"), Tens());
  EXPECT_EQ(ReportedSteps(events, trial, "validation"), std::vector<int64_t>{100});
  EXPECT_EQ(experiment_e2e::RunsOf(events, trial).size(), 1u) << "the trial had to start again";
  cluster_.ExpectRebuiltProjectionsEqualLive();
}

}  // namespace
}  // namespace cairn::testing
