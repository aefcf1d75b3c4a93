// Prometheus rendering: cumulative buckets that count each observation once, the sum and count,
// and label values escaped.
#include "base/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace cairn::metrics {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricsTest, AHistogramsBucketsAreCumulativeAndCountEachObservationOnce) {
  LatencyHistogram histogram({0.001, 0.01, 0.1});
  for (double seconds : {0.0005, 0.001, 0.005, 0.05, 0.05, 3.0}) histogram.Observe(seconds);
  std::string text;
  histogram.Render(text, "x_seconds", "help text");
  EXPECT_TRUE(Has(text, "# HELP x_seconds help text"));
  EXPECT_TRUE(Has(text, "# TYPE x_seconds histogram"));
  EXPECT_TRUE(Has(text, "x_seconds_bucket{le=\"0.001\"} 2")) << text;  // le is inclusive
  EXPECT_TRUE(Has(text, "x_seconds_bucket{le=\"0.01\"} 3")) << text;
  EXPECT_TRUE(Has(text, "x_seconds_bucket{le=\"0.10000000000000001\"} 5")) << text;
  EXPECT_TRUE(Has(text, "x_seconds_bucket{le=\"+Inf\"} 6")) << text;
  EXPECT_TRUE(Has(text, "x_seconds_count 6")) << text;
  EXPECT_NE(text.find("x_seconds_sum 3.1065"), std::string::npos) << text;
}

TEST(MetricsTest, ConcurrentObservationsAreAllCounted) {
  LatencyHistogram histogram;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) histogram.Observe(0.002);
    });
  }
  for (auto& thread : threads) thread.join();
  std::string text;
  histogram.Render(text, "y", "h");
  EXPECT_TRUE(Has(text, "y_count 40000")) << text;
  EXPECT_TRUE(Has(text, "y_bucket{le=\"+Inf\"} 40000")) << text;
}

TEST(MetricsTest, FamiliesEscapeTheirLabelValues) {
  std::string text;
  RenderFamily(text, "cairn_slots", "gauge", "h", "pool", {{"a\"b\\c", 3}, {"gpu", 8}});
  EXPECT_TRUE(Has(text, "cairn_slots{pool=\"a\\\"b\\\\c\"} 3")) << text;
  EXPECT_TRUE(Has(text, "cairn_slots{pool=\"gpu\"} 8")) << text;
  RenderValue(text, "cairn_total", "counter", "h", 12);
  EXPECT_TRUE(Has(text, "cairn_total 12")) << text;
}

}  // namespace
}  // namespace cairn::metrics
