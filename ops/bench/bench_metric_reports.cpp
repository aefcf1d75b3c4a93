// Metric reports at cluster scale (issue 48): a real cairn-master (embedded log) and 50 running
// trials, each reporting ten training metrics as fast as its answers come back (Determined's
// POST /api/v1/trials/{id}/metrics with the trial's own DET_SESSION_TOKEN), while a client
// submits commands at a steady rate. The trials' agent is this process: it registers, heartbeats
// and starts the placed runs over the agent protocol but runs nothing, so the 2 cores go to the
// master and the reporters. Prints reports/s acknowledged (each is an event in the log, folded
// into the experiment and metric-series projections), report latency, and submission p99 under
// the reports against the same client's p99 on an idle master in the same run.
//   build/bin/cairn-bench-metric-reports [--trials N] [--seconds D] [--idle-seconds I]
//                                         [--submissions-per-second R] [--rate P]
// --rate P paces each trial at P reports a second, one in ten a validation (--rate 10 is the
// issue's mix: training every 100 ms, validation every second); without it the trials flood.
// Targets (2 cores): >= 10,000 reports/s from 50 trials; submission p99 <= 2x idle.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/password.h"
#include "master/data_dir.h"
#include "net/http_client.h"
#include "net/session_login.h"
#include "tests/support/test_support.h"

using cairn::testing::BinaryPath;
using cairn::testing::ChildProcess;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int trials = 50;
  int seconds = 20;
  int idle_seconds = 10;
  double submissions_per_second = 20;
  // Reports a second per trial, one in ten a validation (Determined's usual mix: training every
  // 100 ms, validation every second); 0: each trial reports as fast as it is answered.
  double rate = 0;
};

int Fail(const std::string& why) {
  std::fprintf(stderr, "bench_metric_reports: %s\n", why.c_str());
  return 1;
}

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(fraction * values.size()))];
}

double Millis(Clock::duration elapsed) {
  return std::chrono::duration<double, std::milli>(elapsed).count();
}

// Submits `true` at `per_second` until `stop`; each POST's latency in ms.
std::vector<double> SubmitStream(uint16_t port, const std::string& token, double per_second,
                                 const std::atomic<bool>& stop) {
  cairn::net::Client client("127.0.0.1", port);
  client.SetDefaultHeader("Authorization", "Bearer " + token);
  std::vector<double> millis;
  auto next = Clock::now();
  while (!stop.load()) {
    const auto start = Clock::now();
    auto answer = client.Request("POST", "/api/v1/commands",
                                 R"({"config":{"entrypoint":["true"],"resources":{"slots":0}}})");
    if (!answer.ok() || answer->status != 200) {
      std::fprintf(stderr, "a submission failed\n");
      std::exit(1);
    }
    millis.push_back(Millis(Clock::now() - start));
    next +=
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / per_second));
    std::this_thread::sleep_until(next);  // a benchmark's pacing, not a test's synchronisation
  }
  return millis;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--trials") options.trials = std::stoi(argv[i + 1]);
    if (flag == "--seconds") options.seconds = std::stoi(argv[i + 1]);
    if (flag == "--idle-seconds") options.idle_seconds = std::stoi(argv[i + 1]);
    if (flag == "--submissions-per-second") options.submissions_per_second = std::stod(argv[i + 1]);
    if (flag == "--rate") options.rate = std::stod(argv[i + 1]);
  }
  if (options.trials < 1 || options.seconds < 1 || options.idle_seconds < 1 ||
      options.submissions_per_second <= 0 || options.rate < 0) {
    return Fail("need --trials, --seconds, --idle-seconds and --submissions-per-second above 0");
  }
  cairn::testing::TempDir dir;
  {
    std::ofstream config(dir.Sub("master.yaml"));
    config << "port: 0\ndata_dir: " << dir.Sub("data") << "\n";
  }
  auto master = ChildProcess::Start(
      {BinaryPath("cairn-master"), "--config", dir.Sub("master.yaml"), "--log-level", "warn"});
  if (!master.ok()) return Fail(master.status().ToString());
  auto line = (*master)->WaitForLine(
      [](const std::string& l) { return l.rfind("cairn-master listening on", 0) == 0; },
      std::chrono::seconds(60));
  if (!line.ok()) return Fail("the master did not start");
  const std::string url = line->substr(line->rfind(' ') + 1);
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  auto agent_token = cairn::ReadTokenFile(cairn::AgentTokenPath(dir.Sub("data")));
  if (!agent_token.ok()) return Fail(agent_token.status().ToString());

  cairn::net::Client user("127.0.0.1", port);
  auto token = cairn::net::LogIn(user, "determined");
  if (!token.ok()) return Fail("login: " + token.status().ToString());
  user.SetDefaultHeader("Authorization", "Bearer " + *token);
  cairn::net::Client agent("127.0.0.1", port);
  agent.SetDefaultHeader("Authorization", "Bearer " + *agent_token);
  const std::string slots = std::to_string(options.trials);
  auto registered =
      agent.Request("POST", "/api/v1/agents/bench/register",
                    R"({"incarnation":"i1","hostname":"bench","slots":)" + slots + "}");
  if (!registered.ok() || registered->status != 200) return Fail("the agent did not register");
  std::atomic<bool> stop_heartbeats = false;
  std::thread heartbeats([&] {
    cairn::net::Client beat("127.0.0.1", port);
    beat.SetDefaultHeader("Authorization", "Bearer " + *agent_token);
    while (!stop_heartbeats.load()) {
      (void)beat.Request("POST", "/api/v1/agents/bench/heartbeat", R"({"incarnation":"i1"})");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  struct StopHeartbeats {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~StopHeartbeats() {
      stop = true;
      thread.join();
    }
  } stop_on_exit{stop_heartbeats, heartbeats};

  // Submissions on an idle master first.
  std::atomic<bool> stop = false;
  std::thread idle_timer([&] {
    std::this_thread::sleep_for(std::chrono::seconds(options.idle_seconds));
    stop = true;
  });
  const std::vector<double> idle = SubmitStream(port, *token, options.submissions_per_second, stop);
  idle_timer.join();

  // An experiment of `trials` one-slot trials, placed on the agent and started.
  std::string values;
  for (int i = 0; i < options.trials; ++i) values += (i ? "," : "") + std::to_string(i);
  const std::string config =
      "name: metric-flood\nentrypoint: python3 train.py\nresources: {slots_per_trial: 1}\n"
      "hyperparameters:\n  i: {type: categorical, vals: [" +
      values +
      "]}\n"
      "searcher: {name: grid, metric: loss, max_length: {batches: 1000000000}, "
      "max_concurrent_trials: " +
      std::to_string(options.trials) + "}\n";
  auto created = user.Request("POST", "/api/v1/experiments",
                              json{{"activate", true},
                                   {"config", config},
                                   // train.py: "pass\n"; nothing runs it.
                                   {"modelDefinition", json::array({{{"path", "train.py"},
                                                                     {"type", 48},
                                                                     {"content", "cGFzcwo="},
                                                                     {"mode", 33188},
                                                                     {"mtime", "1700000000"},
                                                                     {"uid", 0},
                                                                     {"gid", 0}}})}}
                                  .dump());
  if (!created.ok() || created->status != 200) {
    return Fail("the experiment was refused: " + (created.ok() ? created->body : ""));
  }
  struct Run {
    std::string allocation, task;
    int64_t trial = 0;
  };
  std::vector<Run> runs;
  for (int attempt = 0; attempt < 600 && static_cast<int>(runs.size()) < options.trials;
       ++attempt) {
    runs.clear();
    bool after_experiment = false;  // the idle phase's commands were placed before it
    cairn::net::Client events("127.0.0.1", port);
    auto status =
        events.StreamLines("GET", "/api/v1/events?from=0",
                           [&](std::string_view text) {
                             json event = json::parse(text, nullptr, false);
                             if (event.contains("experimentCreated")) after_experiment = true;
                             if (after_experiment && event.contains("allocationAssigned")) {
                               const json& assigned = event["allocationAssigned"];
                               runs.push_back({assigned["allocationId"], assigned["taskId"], 0});
                             }
                             return true;
                           },
                           {{"Authorization", "Bearer " + *token}});
    if (!status.ok()) return Fail(status.ToString());
    if (static_cast<int>(runs.size()) < options.trials) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // placement is asynchronous
    }
  }
  if (static_cast<int>(runs.size()) < options.trials) {
    return Fail("only " + std::to_string(runs.size()) + " of the trials were placed");
  }
  // Each run's trial, as the harness asks for it.
  std::vector<Run> trial_runs;
  for (Run& run : runs) {
    auto described = agent.Request(
        "GET", "/api/v1/allocations/" + run.allocation + "/trial", "",
        {{"Authorization", "Bearer " + cairn::AllocationToken(*agent_token, run.allocation)}});
    if (!described.ok()) return Fail(described.status().ToString());
    if (described->status != 200) continue;
    run.trial = json::parse(described->body, nullptr, false).value("trialId", int64_t{0});
    if (run.trial != 0) trial_runs.push_back(run);
  }
  runs = std::move(trial_runs);
  if (static_cast<int>(runs.size()) != options.trials) {
    return Fail(std::to_string(runs.size()) + " trial runs placed, not " +
                std::to_string(options.trials));
  }
  for (Run& run : runs) {
    auto started =
        agent.Request("POST", "/api/v1/allocations/" + run.allocation + "/started",
                      json{{"taskId", run.task}, {"agentId", "bench"}, {"pid", 1}}.dump());
    if (!started.ok() || started->status != 200) {
      return Fail("starting a run failed: " + (started.ok() ? started->body : ""));
    }
  }
  // The flood: each trial reports as fast as it is answered, while submissions go on.
  std::atomic<bool> stop_reports = false;
  std::vector<std::vector<double>> report_millis(runs.size());
  std::vector<std::thread> reporters;
  std::atomic<int> failures = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    reporters.emplace_back([&, i] {
      cairn::net::Client client("127.0.0.1", port);
      client.SetDefaultHeader(
          "Authorization", "Bearer " + cairn::TaskSessionToken(*agent_token, runs[i].allocation));
      const std::string target = "/api/v1/trials/" + std::to_string(runs[i].trial) + "/metrics";
      auto next = Clock::now();
      for (int64_t step = 1; !stop_reports.load(); ++step) {
        if (options.rate > 0) {
          next += std::chrono::duration_cast<Clock::duration>(
              std::chrono::duration<double>(1 / options.rate));
          std::this_thread::sleep_until(next);  // pacing
        }
        const bool validation = options.rate > 0 && step % 10 == 0;
        json metrics = json::object();
        for (int m = 0; m < 10; ++m) {
          metrics["metric_" + std::to_string(m)] = (m + 1.0) / static_cast<double>(step);
        }
        const json body = {{"group", validation ? "validation" : "training"},
                           {"metrics",
                            {{"trialId", runs[i].trial},
                             {"trialRunId", 1},
                             {"stepsCompleted", step * 100},
                             {"metrics", {{"avgMetrics", metrics}}}}}};
        const auto start = Clock::now();
        auto answer = client.Request("POST", target, body.dump());
        if (!answer.ok() || answer->status != 200) {
          if (failures++ == 0) {
            std::fprintf(stderr, "a report failed: %s\n",
                         answer.ok() ? answer->body.c_str() : answer.status().ToString().c_str());
          }
          continue;
        }
        report_millis[i].push_back(Millis(Clock::now() - start));
      }
    });
  }
  stop = false;
  const auto flood_start = Clock::now();
  std::thread loaded_timer([&] {
    std::this_thread::sleep_for(std::chrono::seconds(options.seconds));
    stop = true;
  });
  const std::vector<double> loaded =
      SubmitStream(port, *token, options.submissions_per_second, stop);
  loaded_timer.join();
  stop_reports = true;
  for (auto& thread : reporters) thread.join();
  const double flood_seconds = Millis(Clock::now() - flood_start) / 1000;
  std::vector<double> all_reports;
  for (const auto& one : report_millis)
    all_reports.insert(all_reports.end(), one.begin(), one.end());

  const double rate = static_cast<double>(all_reports.size()) / flood_seconds;
  const double idle_p99 = Percentile(idle, 0.99), loaded_p99 = Percentile(loaded, 0.99);
  if (options.rate > 0) {
    std::printf(
        "metric reports: %d trials reporting 10 metrics each %.0f times a second (one in "
        "ten a validation), %.0f s, with %.0f submissions/s\n",
        options.trials, options.rate, flood_seconds, options.submissions_per_second);
  } else {
    std::printf(
        "metric reports: %d trials reporting 10 metrics each as fast as answered, %.0f s, "
        "with %.0f submissions/s\n",
        options.trials, flood_seconds, options.submissions_per_second);
  }
  std::printf("machine: %ld cores (nproc), real master on loopback, embedded log\n",
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("  reports acknowledged/s        %.0f (%zu, %d failed)   target >= 10,000: %s\n",
              rate, all_reports.size(), failures.load(),
              options.rate > 0 ? "(paced: not a capacity figure)"
              : rate >= 10000  ? "met"
                               : "NOT MET");
  std::printf("  report latency p50 / p99      %.1f / %.1f ms\n", Percentile(all_reports, 0.5),
              Percentile(all_reports, 0.99));
  std::printf("  submission p50 / p99 idle     %.1f / %.1f ms (%zu)\n", Percentile(idle, 0.5),
              idle_p99, idle.size());
  std::printf(
      "  submission p50 / p99 loaded   %.1f / %.1f ms (%zu), %.2fx idle p99   target <= 2x: %s\n",
      Percentile(loaded, 0.5), loaded_p99, loaded.size(), loaded_p99 / idle_p99,
      loaded_p99 <= 2 * idle_p99 ? "met" : "NOT MET");
  return 0;
}
