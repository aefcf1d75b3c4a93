// A trial's metric history read for a chart (issue 48): writes one trial's N metric reports (ten
// metrics each, a noisy falling loss) and a smaller trial's to an embedded log in a temp dir,
// lets the master's live projections fold them, then times the reads the web UI's experiment page
// makes: one metric, and all ten of its group, downsampled to a chart's 1,000 points (the
// metric_series projection through Queries, in process: the HTTP route adds its JSON). Prints
// p50/p95 against the targets (p95 <= 50 ms at 10k points, <= 300 ms at 1M) and how fast the
// projections folded the reports.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "events/event_log.h"
#include "projections/projections.h"
#include "tests/support/test_support.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChartPoints = 1000;
constexpr int kMetrics = 10;
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();

double Millis(Clock::duration elapsed) {
  return std::chrono::duration<double, std::milli>(elapsed).count();
}

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(fraction * values.size()))];
}

cairn::events::Envelope Report(int64_t trial_id, int64_t step, std::mt19937_64& random) {
  std::normal_distribution<double> noise(0, 0.05);
  std::string metrics = "{";
  for (int m = 0; m < kMetrics; ++m) {
    const double value = (m + 1) * 2.0 / (1.0 + 0.001 * static_cast<double>(step)) + noise(random);
    metrics += (m ? ",\"metric_" : "\"metric_") + std::to_string(m) + "\":" + std::to_string(value);
  }
  metrics += "}";
  cairn::events::Envelope event;
  event.set_time_unix_micros(1'700'000'000'000'000 + step * 100'000);
  auto* reported = event.mutable_trial_metrics_reported();
  reported->set_experiment_id(1);
  reported->set_trial_id(trial_id);
  reported->set_group("training");
  reported->set_steps_completed(step * 32);
  reported->set_metrics_json(metrics);
  return event;
}

struct Timing {
  double p50 = 0, p95 = 0;
  size_t points = 0;
  uint64_t total = 0;
};

// `runs` reads of `names` of `trial_id`, each downsampled to `max_points`.
Timing TimeReads(cairn::Projections& projections, int64_t trial_id, int names, size_t max_points,
                 int runs) {
  std::vector<double> millis;
  Timing timing;
  for (int run = 0; run < runs; ++run) {
    const auto start = Clock::now();
    timing.points = 0;
    for (int m = 0; m < names; ++m) {
      auto read = projections.ReadMetricSeries(
          trial_id, {"training", "metric_" + std::to_string(m)}, 0, kNoEnd, max_points);
      if (!read.ok()) {
        std::cerr << read.status().ToString() << std::endl;
        std::exit(1);
      }
      timing.points += read->points.size();
      timing.total = read->total;
    }
    millis.push_back(Millis(Clock::now() - start));
  }
  timing.p50 = Percentile(millis, 0.5);
  timing.p95 = Percentile(millis, 0.95);
  return timing;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t large = 1'000'000, small = 10'000;
  int runs = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--points") large = std::stoll(argv[i + 1]);
    if (flag == "--small-points") small = std::stoll(argv[i + 1]);
    if (flag == "--runs") runs = std::stoi(argv[i + 1]);
  }
  if (large < 1 || small < 1 || runs < 1) {
    std::cerr << "usage: cairn-bench-metric-reads [--points N] [--small-points N] [--runs N]\n";
    return 2;
  }
  cairn::testing::TempDir temp;  // removed with everything in it at the end
  const std::string dir = temp.path();

  cairn::LogConfig config;
  config.data_dir = dir + "/log";
  auto log = cairn::OpenEventLog(config);
  if (!log.ok()) {
    std::cerr << log.status().ToString() << std::endl;
    return 1;
  }
  std::mt19937_64 random(48);
  uint64_t written = 0;
  const auto write_start = Clock::now();
  for (const auto& [trial_id, reports] : {std::pair<int64_t, int64_t>{2, small}, {1, large}}) {
    std::vector<cairn::events::Envelope> batch;
    for (int64_t step = 0; step < reports; ++step) {
      batch.push_back(Report(trial_id, step, random));
      if (batch.size() == 1000 || step + 1 == reports) {
        auto appended = (*log)->Append(batch);
        if (!appended.ok()) {
          std::cerr << appended.status().ToString() << std::endl;
          return 1;
        }
        written += batch.size();
        batch.clear();
      }
    }
  }
  const double write_seconds = Millis(Clock::now() - write_start) / 1000;

  const auto fold_start = Clock::now();
  auto projections = cairn::Projections::Open(dir + "/views", log->get());
  if (!projections.ok()) {
    std::cerr << projections.status().ToString() << std::endl;
    return 1;
  }
  cairn::Status caught_up = (*projections)->WaitForOffset(written - 1, std::chrono::minutes(30));
  if (!caught_up.ok()) {
    std::cerr << caught_up.ToString() << std::endl;
    return 1;
  }
  const double fold_seconds = Millis(Clock::now() - fold_start) / 1000;

  const Timing small_one = TimeReads(**projections, 2, 1, small, runs);
  const Timing small_all = TimeReads(**projections, 2, kMetrics, small, runs);
  const Timing large_one = TimeReads(**projections, 1, 1, kChartPoints, runs);
  const Timing large_all = TimeReads(**projections, 1, kMetrics, kChartPoints, runs);

  std::printf("metric reads: one trial of %lld reports and one of %lld, %d metrics each, %d runs\n",
              static_cast<long long>(large), static_cast<long long>(small), kMetrics, runs);
  std::printf("machine: %ld cores (nproc), embedded log, the master's live projections\n",
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("  reports written to the log      %llu in %.1f s\n",
              static_cast<unsigned long long>(written), write_seconds);
  std::printf("  reports folded by the projections %.0f/s (%.1f s, all projections)\n",
              static_cast<double>(written) / fold_seconds, fold_seconds);
  auto row = [](const std::string& what, const Timing& timing, double target) {
    std::printf(
        "  %-44s p50 %7.1f ms  p95 %7.1f ms  (%zu points of %llu)  target p95 <= %.0f ms: %s\n",
        what.c_str(), timing.p50, timing.p95, timing.points,
        static_cast<unsigned long long>(timing.total), target,
        timing.p95 <= target ? "met" : "NOT MET");
  };
  const std::string small_points = std::to_string(small) + " points";
  const std::string large_points = std::to_string(large) + " points";
  row(small_points + ", one metric, whole", small_one, 50);
  row(small_points + ", all 10 metrics, whole", small_all, 50);
  row(large_points + ", one metric, to 1,000", large_one, 300);
  row(large_points + ", all 10 metrics, each to 1,000", large_all, 300);
  return 0;
}
