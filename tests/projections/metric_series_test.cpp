// The metric-series projection (projections/metric_series_projector.h): every numeric metric a
// trial reported, as a series per (group, name), read whole or downsampled for a chart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "base/downsample.h"
#include "projections/projections.h"

namespace cairn {
namespace {

using events::Envelope;
using projections::MetricPoint;
using projections::MetricSeriesName;

constexpr int64_t kStart = 1'700'000'000'000'000;
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();

class MetricSeriesTest : public ::testing::Test {
 protected:
  void Report(int64_t trial_id, const std::string& group, int64_t batches,
              const nlohmann::json& metrics) {
    Envelope event = Next();
    auto* reported = event.mutable_trial_metrics_reported();
    reported->set_experiment_id(1);
    reported->set_trial_id(trial_id);
    reported->set_group(group);
    reported->set_steps_completed(batches);
    reported->set_metrics_json(metrics.dump());
    Apply(event);
  }

  void Workload(int64_t trial_id, events::WorkloadKind kind, int64_t batches,
                const nlohmann::json& metrics) {
    Envelope event = Next();
    auto* reported = event.mutable_trial_workload_reported();
    reported->set_experiment_id(1);
    reported->set_trial_id(trial_id);
    reported->set_sequence(static_cast<int32_t>(state_.next_offset() + 1));
    reported->set_completed(kind);
    reported->set_total_batches(batches);
    reported->set_metrics_json(metrics.dump());
    Apply(event);
  }

  std::vector<MetricPoint> Read(int64_t trial_id, const MetricSeriesName& series, int64_t start = 0,
                                int64_t end = kNoEnd, size_t max_points = 1'000'000,
                                uint64_t* total = nullptr) {
    auto read = state_.ReadMetricSeries(trial_id, series, start, end, max_points);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    if (!read.ok()) return {};
    if (total != nullptr) *total = read->total;
    return read->points;
  }

  std::vector<std::string> Names(int64_t trial_id, const std::string& group) {
    auto names = state_.ListMetricSeries(trial_id, group);
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    std::vector<std::string> out;
    if (names.ok()) {
      for (const auto& name : *names) out.push_back(name.group + "." + name.name);
    }
    return out;
  }

  int64_t TimeOf(uint64_t offset) const { return kStart + static_cast<int64_t>(offset) * 1000; }

  ProjectionState state_;

 private:
  Envelope Next() {
    Envelope event;
    event.set_offset(state_.next_offset());
    event.set_time_unix_micros(TimeOf(event.offset()));
    return event;
  }
  void Apply(const Envelope& event) {
    Status status = state_.Apply(event);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
};

TEST_F(MetricSeriesTest, EachNumericMetricOfEachGroupIsASeriesInBatchOrder) {
  Report(7, "training", 100, {{"loss", 2.5}, {"accuracy", 0.1}, {"note", "warming up"}});
  Report(7, "validation", 100, {{"loss", 2.75}});
  Report(8, "training", 50, {{"loss", 9.0}});  // another trial's
  Report(7, "training", 300, {{"loss", 1.5}, {"accuracy", 0.3}, {"flag", true}});
  Report(7, "training", 200, {{"loss", 2.0}, {"accuracy", 0.2}});  // out of order: sorted
  Report(7, "inference", 300, {{"latency_ms", 12}});               // a group of the trial's own
  Report(7, "training", 400, nlohmann::json::array({1, 2}));       // not an object: nothing

  EXPECT_EQ(Names(7, ""), (std::vector<std::string>{"inference.latency_ms", "training.accuracy",
                                                    "training.loss", "validation.loss"}));
  EXPECT_EQ(Names(7, "training"), (std::vector<std::string>{"training.accuracy", "training.loss"}));
  EXPECT_EQ(Names(8, ""), std::vector<std::string>{"training.loss"});
  EXPECT_TRUE(Names(9, "").empty());

  const auto loss = Read(7, {"training", "loss"});
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[0].batches, 100);
  EXPECT_EQ(loss[0].value, 2.5);
  EXPECT_EQ(loss[0].time_unix_micros, TimeOf(0));
  EXPECT_EQ(loss[1].batches, 200);
  EXPECT_EQ(loss[1].value, 2.0);
  EXPECT_EQ(loss[1].time_unix_micros, TimeOf(4));
  EXPECT_EQ(loss[2].batches, 300);
  EXPECT_EQ(loss[2].value, 1.5);
  EXPECT_EQ(Read(7, {"validation", "loss"}).at(0).value, 2.75);
  EXPECT_EQ(Read(7, {"inference", "latency_ms"}).at(0).value, 12.0);
  EXPECT_TRUE(Read(7, {"training", "note"}).empty());
  EXPECT_TRUE(Read(7, {"training", "flag"}).empty());

  // A batch range is inclusive at both ends.
  const auto middle = Read(7, {"training", "accuracy"}, 200, 300);
  ASSERT_EQ(middle.size(), 2u);
  EXPECT_EQ(middle[0].value, 0.2);
  EXPECT_EQ(middle[1].value, 0.3);
  EXPECT_TRUE(Read(7, {"training", "accuracy"}, 301, 1000).empty());
  EXPECT_TRUE(Read(7, {"training", "accuracy"}, 300, 200).empty());
}

TEST_F(MetricSeriesTest, ThePedlHarnesssWorkloadsAreTrainingAndValidationSeries) {
  Workload(3, events::WORKLOAD_KIND_TRAIN, 10, {{"loss", 1.0}});
  Workload(3, events::WORKLOAD_KIND_VALIDATE, 10, {{"val_loss", 1.25}});
  Workload(3, events::WORKLOAD_KIND_CHECKPOINT, 10, nlohmann::json::object());
  EXPECT_EQ(Names(3, ""), (std::vector<std::string>{"training.loss", "validation.val_loss"}));
  EXPECT_EQ(Read(3, {"validation", "val_loss"}).at(0).batches, 10);
}

TEST_F(MetricSeriesTest, AChartsReadOfALongSeriesKeepsItsSpikesWithinItsBudget) {
  constexpr int kReports = 20'000;
  for (int i = 0; i < kReports; ++i) {
    const double loss = i == 12'345 ? 1e9 : i == 777 ? -5.0 : 1.0 / (1 + i * 0.01);
    Report(5, "training", int64_t{i} * 32, {{"loss", loss}, {"lr", 0.1}});
  }
  uint64_t total = 0;
  const auto chart = Read(5, {"training", "loss"}, 0, kNoEnd, 200, &total);
  EXPECT_EQ(total, static_cast<uint64_t>(kReports));
  ASSERT_LE(chart.size(), 200u);
  ASSERT_GE(chart.size(), 150u);
  EXPECT_EQ(chart.front().batches, 0);
  EXPECT_EQ(chart.back().batches, int64_t{kReports - 1} * 32);
  for (size_t i = 1; i < chart.size(); ++i) EXPECT_LT(chart[i - 1].batches, chart[i].batches);
  auto has = [&](int64_t batches, double value) {
    for (const auto& point : chart) {
      if (point.batches == batches && point.value == value) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(int64_t{12'345} * 32, 1e9));
  EXPECT_TRUE(has(int64_t{777} * 32, -5.0));
  // A window of the series is downsampled within itself.
  const auto window = Read(5, {"training", "loss"}, 100 * 32, 199 * 32, 1000, &total);
  EXPECT_EQ(total, 100u);
  EXPECT_EQ(window.size(), 100u);
}

// A long series is read through its block summaries where a block lies in one bucket: the chart
// must be the one a walk of every point gives, for an ordered series and for one that went back
// in batches (a trial resumed from a checkpoint), which is walked point by point.
TEST_F(MetricSeriesTest, BlockSummariesGiveTheChartEveryPointGives) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> noise(0, 0.2);
  std::vector<std::pair<int64_t, double>> ordered, resumed;
  for (int i = 0; i < 40'000; ++i) {
    double loss = 5.0 / (1 + i * 0.001) + noise(random);
    if (i % 9'973 == 0) loss *= 40;  // spikes
    ordered.emplace_back(int64_t{i} * 16, loss);
  }
  for (int i = 0; i < 20'000; ++i) resumed.emplace_back(int64_t{i} * 16, noise(random));
  for (int i = 15'000; i < 25'000; ++i) resumed.emplace_back(int64_t{i} * 16, 1 + noise(random));
  for (const auto& [batches, loss] : ordered) Report(11, "training", batches, {{"loss", loss}});
  for (const auto& [batches, loss] : resumed) Report(12, "training", batches, {{"loss", loss}});

  for (auto [trial, series] :
       {std::pair{int64_t{11}, &ordered}, std::pair{int64_t{12}, &resumed}}) {
    // The same points in key order: by batches, then by report (offset).
    std::vector<std::pair<int64_t, double>> sorted = *series;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto [start, end] : {std::pair<int64_t, int64_t>{0, kNoEnd}, {20'000, 400'000}}) {
      for (size_t budget : {100u, 1000u}) {
        SCOPED_TRACE(::testing::Message()
                     << "trial " << trial << " [" << start << ", " << end << "] budget " << budget);
        std::vector<std::pair<int64_t, double>> inside;
        for (const auto& point : sorted) {
          if (point.first >= start && point.first <= end) inside.push_back(point);
        }
        ExtremaDownsampler expected_sampler(static_cast<double>(inside.front().first),
                                            static_cast<double>(inside.back().first), budget);
        for (const auto& [batches, loss] : inside) {
          expected_sampler.Add({static_cast<double>(batches), loss, 0});
        }
        std::vector<std::pair<int64_t, double>> expected;
        for (const auto& point : expected_sampler.Finish()) {
          expected.emplace_back(static_cast<int64_t>(point.x), point.y);
        }
        uint64_t total = 0;
        std::vector<std::pair<int64_t, double>> got;
        for (const auto& point : Read(trial, {"training", "loss"}, start, end, budget, &total)) {
          got.emplace_back(point.batches, point.value);
        }
        EXPECT_EQ(total, inside.size());
        EXPECT_EQ(got, expected);
      }
    }
  }
}

}  // namespace
}  // namespace cairn
