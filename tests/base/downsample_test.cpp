#include "base/downsample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

namespace cairn {
namespace {

std::vector<SeriesPoint> Downsample(const std::vector<SeriesPoint>& series, size_t max_points) {
  ExtremaDownsampler downsampler(series.front().x, series.back().x, max_points);
  for (const SeriesPoint& point : series) downsampler.Add(point);
  return downsampler.Finish();
}

// Every bucket of the chart's resolution (max_points / 2 - 1 equal spans of x) must keep its
// lowest and highest value, wherever in the bucket they fall.
void ExpectExtremaKept(const std::vector<SeriesPoint>& series, const std::vector<SeriesPoint>& kept,
                       size_t max_points) {
  ASSERT_LE(kept.size(), max_points);
  for (size_t i = 1; i < kept.size(); ++i) ASSERT_LE(kept[i - 1].x, kept[i].x) << i;
  std::set<int64_t> kept_tags;
  for (const SeriesPoint& point : kept) kept_tags.insert(point.tag);
  EXPECT_TRUE(kept_tags.count(series.front().tag));
  EXPECT_TRUE(kept_tags.count(series.back().tag));
  const size_t buckets = (max_points - 2) / 2;
  const double first = series.front().x, width = series.back().x - first;
  struct Extremes {
    double low = std::numeric_limits<double>::infinity();
    double high = -std::numeric_limits<double>::infinity();
    bool low_kept = false, high_kept = false;
  };
  std::vector<Extremes> expected(buckets);
  auto bucket_of = [&](double x) {
    return std::min(buckets - 1, static_cast<size_t>((x - first) / width * buckets));
  };
  for (const SeriesPoint& point : series) {
    Extremes& bucket = expected[bucket_of(point.x)];
    bucket.low = std::min(bucket.low, point.y);
    bucket.high = std::max(bucket.high, point.y);
  }
  for (const SeriesPoint& point : kept) {
    Extremes& bucket = expected[bucket_of(point.x)];
    if (point.y == bucket.low) bucket.low_kept = true;
    if (point.y == bucket.high) bucket.high_kept = true;
  }
  for (size_t b = 0; b < buckets; ++b) {
    if (std::isinf(expected[b].low)) continue;  // no point fell in it
    EXPECT_TRUE(expected[b].low_kept) << "bucket " << b << " lost its minimum " << expected[b].low;
    EXPECT_TRUE(expected[b].high_kept)
        << "bucket " << b << " lost its maximum " << expected[b].high;
  }
}

TEST(ExtremaDownsamplerTest, KeepsEveryBucketsMinimumAndMaximumOfANoisySeries) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> noise(0, 1);
  std::vector<SeriesPoint> series;
  double loss = 10;
  for (int64_t i = 0; i < 200'000; ++i) {
    loss = loss * 0.99999 + 0.01 * noise(random);
    series.push_back({static_cast<double>(i * 8), loss, i});
  }
  for (size_t max_points : {4u, 10u, 101u, 1000u, 4096u}) {
    SCOPED_TRACE(max_points);
    ExpectExtremaKept(series, Downsample(series, max_points), max_points);
  }
}

TEST(ExtremaDownsamplerTest, ALoneSpikeInAMillionPointsSurvives) {
  std::vector<SeriesPoint> series;
  for (int64_t i = 0; i < 1'000'000; ++i) {
    series.push_back({static_cast<double>(i), 1.0 + 1e-3 * std::sin(i * 0.001), i});
  }
  series[654'321].y = 1e6;   // a loss that exploded for one step
  series[123'457].y = -1e6;  // and a dip
  const auto kept = Downsample(series, 1000);
  ExpectExtremaKept(series, kept, 1000);
  auto has = [&](int64_t tag) {
    return std::any_of(kept.begin(), kept.end(),
                       [&](const SeriesPoint& p) { return p.tag == tag; });
  };
  EXPECT_TRUE(has(654'321));
  EXPECT_TRUE(has(123'457));
}

TEST(ExtremaDownsamplerTest, UnevenXAndRepeatedXKeepTheirExtremes) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> gap(0, 50), value(-5, 5);
  std::vector<SeriesPoint> series;
  double x = 100;
  for (int64_t i = 0; i < 50'000; ++i) {
    if (i % 3 != 0) x += gap(random);  // a third of the points repeat the x before them
    series.push_back({x, value(random), i});
  }
  ExpectExtremaKept(series, Downsample(series, 300), 300);
}

TEST(ExtremaDownsamplerTest, ASeriesThatFitsIsReturnedWhole) {
  std::vector<SeriesPoint> series;
  for (int64_t i = 0; i < 500; ++i) series.push_back({static_cast<double>(i), i % 7 * 1.5, i});
  const auto kept = Downsample(series, 500);
  ASSERT_EQ(kept.size(), series.size());
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].tag, series[i].tag);
}

TEST(ExtremaDownsamplerTest, UndrawableValuesAreSkippedAndTinyBudgetsKeepTheExtremes) {
  std::vector<SeriesPoint> series = {{0, 3, 0},  {1, std::numeric_limits<double>::quiet_NaN(), 1},
                                     {2, -2, 2}, {3, std::numeric_limits<double>::infinity(), 3},
                                     {4, 9, 4},  {5, 1, 5}};
  const auto whole = Downsample(series, 10);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[1].tag, 2);
  const auto two = Downsample(series, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].tag, 2);  // the lowest, then the highest, in x order
  EXPECT_EQ(two[1].tag, 4);
  // A flat series over one x: one bucket, its extremes, nothing twice.
  std::vector<SeriesPoint> flat;
  for (int64_t i = 0; i < 100; ++i) flat.push_back({5, 1, i});
  const auto one = Downsample(flat, 10);
  EXPECT_EQ(one.size(), 2u);  // the first (also the bucket's extremes) and the last
}

}  // namespace
}  // namespace cairn
