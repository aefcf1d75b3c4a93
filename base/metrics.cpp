#include "base/metrics.h"

#include <algorithm>
#include <cstdio>

namespace cairn::metrics {

namespace {

std::string Number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Label values are pool and projection names; Prometheus escapes \, " and newlines.
std::string Escaped(const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return escaped;
}

void Header(std::string& out, const std::string& name, const std::string& type,
            const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

LatencyHistogram::LatencyHistogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

LatencyHistogram::LatencyHistogram()
    : LatencyHistogram({0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                        0.5, 1, 2.5, 5, 10}) {}

void LatencyHistogram::Observe(double seconds) {
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(seconds, std::memory_order_relaxed);
}

void LatencyHistogram::Render(std::string& out, const std::string& name,
                              const std::string& help) const {
  Header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? Number(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + Number(sum_.load(std::memory_order_relaxed)) + "\n";
  out += name + "_count " + std::to_string(count_.load(std::memory_order_relaxed)) + "\n";
}

void RenderFamily(std::string& out, const std::string& name, const std::string& type,
                  const std::string& help, const std::string& label,
                  const std::map<std::string, double>& values) {
  Header(out, name, type, help);
  for (const auto& [key, value] : values) {
    out += name;
    if (!label.empty()) out += "{" + label + "=\"" + Escaped(key) + "\"}";
    out += " " + Number(value) + "\n";
  }
}

void RenderValue(std::string& out, const std::string& name, const std::string& type,
                 const std::string& help, double value) {
  RenderFamily(out, name, type, help, "", {{"", value}});
}

}  // namespace cairn::metrics
