// Downsampling a series for a chart: at most `max_points` of it, chosen so that every spike and
// dip the chart can show survives. The x range is cut into equal buckets (the chart's
// resolution); each bucket keeps its lowest and its highest point, and the series keeps its first
// and last. So every local minimum and maximum that is the extreme of its bucket is kept, which
// largest-triangle-three-buckets does not promise. Pure; points arrive in x order, one at a time,
// so a million-point series is never held whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace cairn {

struct SeriesPoint {
  double x = 0;
  double y = 0;
  int64_t tag = 0;  // the caller's (a time, an offset), carried through untouched
};

class ExtremaDownsampler {
 public:
  // The series spans [first_x, last_x]. max_points below 4 keeps only the lowest and highest
  // points.
  ExtremaDownsampler(double first_x, double last_x, size_t max_points);

  // Points must come in non-decreasing x inside the span; a point with a non-finite y is skipped
  // (a chart cannot draw it).
  void Add(const SeriesPoint& point);

  // The kept points in x order: every point when there were at most max_points, otherwise the
  // first, each bucket's lowest and highest (in their own order) and the last.
  std::vector<SeriesPoint> Finish();

  // How many buckets the chart's x range is cut into.
  size_t buckets() const { return buckets_; }
  // Whether x values `a` and `b` fall in the same bucket: a run of points between them may then
  // be fed as its lowest and highest point alone, with the same result, once StandFor counts
  // the run's other points.
  bool SameBucket(double a, double b) const { return BucketOf(a) == BucketOf(b); }
  void StandFor(uint64_t points) { seen_ += points; }

 private:
  size_t BucketOf(double x) const;
  void CloseBucket();

  double first_x_;
  double width_;
  size_t max_points_;
  size_t buckets_;
  size_t seen_ = 0;
  std::vector<SeriesPoint> all_;  // while the series still fits whole
  std::vector<SeriesPoint> kept_;
  std::optional<SeriesPoint> first_, last_;
  size_t bucket_ = 0;
  std::optional<SeriesPoint> low_, high_;
};

}  // namespace cairn
