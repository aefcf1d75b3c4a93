#include "base/downsample.h"

#include <algorithm>
#include <cmath>

namespace cairn {

namespace {
bool SamePoint(const SeriesPoint& a, const SeriesPoint& b) {
  return a.x == b.x && a.y == b.y && a.tag == b.tag;
}
}  // namespace

ExtremaDownsampler::ExtremaDownsampler(double first_x, double last_x, size_t max_points)
    : first_x_(first_x),
      width_(std::max(0.0, last_x - first_x)),
      max_points_(max_points),
      // Two points a bucket, and two for the series' ends.
      buckets_(max_points < 4 ? 1 : (max_points - 2) / 2) {}

size_t ExtremaDownsampler::BucketOf(double x) const {
  if (width_ <= 0) return 0;
  const double at = (x - first_x_) / width_ * static_cast<double>(buckets_);
  if (!(at > 0)) return 0;
  return std::min(buckets_ - 1, static_cast<size_t>(at));
}

void ExtremaDownsampler::CloseBucket() {
  if (!low_) return;
  const bool low_first = low_->x < high_->x || (low_->x == high_->x && low_->tag <= high_->tag);
  const SeriesPoint& earlier = low_first ? *low_ : *high_;
  const SeriesPoint& later = low_first ? *high_ : *low_;
  kept_.push_back(earlier);
  if (!SamePoint(earlier, later)) kept_.push_back(later);
  low_.reset();
  high_.reset();
}

void ExtremaDownsampler::Add(const SeriesPoint& point) {
  if (!std::isfinite(point.y) || !std::isfinite(point.x)) return;
  ++seen_;
  if (seen_ <= max_points_) all_.push_back(point);
  if (!first_) first_ = point;
  last_ = point;
  const size_t bucket = BucketOf(point.x);
  if (bucket != bucket_) {
    CloseBucket();
    bucket_ = bucket;
  }
  if (!low_ || point.y < low_->y) low_ = point;
  if (!high_ || point.y > high_->y) high_ = point;
}

std::vector<SeriesPoint> ExtremaDownsampler::Finish() {
  if (seen_ <= max_points_) return std::move(all_);
  CloseBucket();
  std::vector<SeriesPoint> out;
  out.reserve(kept_.size() + 2);
  if (max_points_ >= 4 && !SamePoint(*first_, kept_.front())) out.push_back(*first_);
  out.insert(out.end(), kept_.begin(), kept_.end());
  if (max_points_ >= 4 && !SamePoint(*last_, out.back())) out.push_back(*last_);
  return out;
}

}  // namespace cairn
