// Measures the master exposes at GET /metrics in Prometheus's text format: a lock-free latency
// histogram and the text rendering of histograms, counters and gauges.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cairn::metrics {

// Durations in seconds into fixed buckets. Observe is thread-safe and lock-free.
class LatencyHistogram {
 public:
  // Upper bounds in seconds, increasing; +Inf is implied.
  explicit LatencyHistogram(std::vector<double> upper_bounds);
  LatencyHistogram();  // 100 µs to 10 s, about three buckets per decade

  void Observe(double seconds);
  // `name`_bucket{le=...}, `name`_sum and `name`_count, with HELP and TYPE lines.
  void Render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // one per bound, and +Inf last
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// A counter or gauge family: values by one label's value ("" = no label).
void RenderFamily(std::string& out, const std::string& name, const std::string& type,
                  const std::string& help, const std::string& label,
                  const std::map<std::string, double>& values);
// One sample without labels.
void RenderValue(std::string& out, const std::string& name, const std::string& type,
                 const std::string& help, double value);

}  // namespace cairn::metrics
