// The metric-series projection: every numeric metric a trial reported, one series per (group,
// name), in the shape a chart reads. A metrics report (TrialMetricsReported, or the PEDL
// harness's TrialWorkloadReported for training and validation) becomes one point per metric.
// Keys:
//   "names/<trial:8><group>\0<name>"                        -> "" (the trial's series)
//   "series/<trial:8><group>\0<name>\0<batches:8><offset:8>" -> <time micros:8><value bits:8>
// (batches with the sign bit flipped, so byte order is batch order; group and name are kept apart
// by NUL, which a JSON key cannot hide because a name holding one is not stored). A read for a
// chart walks one series in batch order through ExtremaDownsampler (base/downsample.h) and never
// holds the whole of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kMetricSeriesProjector = "metric_series";

class MetricSeriesProjector : public Projector {
 public:
  const std::string& name() const override { return kMetricSeriesProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

struct MetricSeriesName {
  std::string group;  // "training", "validation", or a group of the trial's own
  std::string name;
};

struct MetricPoint {
  int64_t batches = 0;
  int64_t time_unix_micros = 0;
  double value = 0;
};

struct MetricSeriesRead {
  std::vector<MetricPoint> points;  // in batch order
  uint64_t total = 0;               // points in the asked range before downsampling
};

// The trial's series, sorted by group then name; only `group`'s when it is not empty.
Result<std::vector<MetricSeriesName>> ListMetricSeries(ViewReader& reader, int64_t trial_id,
                                                       const std::string& group);

// One series' points with batches in [start_batches, end_batches], at most `max_points` of them
// (ExtremaDownsampler's choice when there are more).
Result<MetricSeriesRead> ReadMetricSeries(ViewReader& reader, int64_t trial_id,
                                          const MetricSeriesName& series, int64_t start_batches,
                                          int64_t end_batches, size_t max_points);

}  // namespace cairn::projections
