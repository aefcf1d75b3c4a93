#include "projections/metric_series_projector.h"

#include <bit>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/downsample.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kNamesPrefix = "names/";
constexpr std::string_view kSeriesPrefix = "series/";
constexpr uint64_t kSignBit = uint64_t{1} << 63;

void AppendSeriesId(std::string* key, int64_t trial_id, std::string_view group,
                    std::string_view name) {
  AppendBigEndian64(key, static_cast<uint64_t>(trial_id));
  key->append(group);
  key->push_back('\0');
  key->append(name);
  key->push_back('\0');
}

std::string SeriesPrefix(int64_t trial_id, std::string_view group, std::string_view name) {
  std::string key(kSeriesPrefix);
  AppendSeriesId(&key, trial_id, group, name);
  return key;
}

std::string NamesPrefix(int64_t trial_id) {
  std::string key(kNamesPrefix);
  AppendBigEndian64(&key, static_cast<uint64_t>(trial_id));
  return key;
}

void AppendBatches(std::string* key, int64_t batches) {
  AppendBigEndian64(key, static_cast<uint64_t>(batches) ^ kSignBit);
}

Status RecordReport(const Envelope& event, ViewStore& store, int64_t trial_id,
                    std::string_view group, int64_t batches, const std::string& metrics_json) {
  if (trial_id <= 0 || group.find('\0') != std::string_view::npos) return Status::Ok();
  const nlohmann::json metrics = nlohmann::json::parse(metrics_json, nullptr, false);
  if (!metrics.is_object()) return Status::Ok();
  std::string value;
  AppendBigEndian64(&value, static_cast<uint64_t>(event.time_unix_micros()));
  const size_t value_prefix = value.size();
  for (const auto& [name, metric] : metrics.items()) {
    if (!metric.is_number() || name.find('\0') != std::string::npos) continue;
    std::string names_key = NamesPrefix(trial_id);
    names_key.append(group);
    names_key.push_back('\0');
    names_key.append(name);
    CAIRN_RETURN_IF_ERROR(store.Put(names_key, ""));
    std::string key = SeriesPrefix(trial_id, group, name);
    AppendBatches(&key, batches);
    AppendBigEndian64(&key, event.offset());
    value.resize(value_prefix);
    AppendBigEndian64(&value, std::bit_cast<uint64_t>(metric.get<double>()));
    CAIRN_RETURN_IF_ERROR(store.Put(key, value));
  }
  return Status::Ok();
}

}  // namespace

Status MetricSeriesProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kTrialMetricsReported: {
      const auto& reported = event.trial_metrics_reported();
      return RecordReport(event, store, reported.trial_id(), reported.group(),
                          reported.steps_completed(), reported.metrics_json());
    }
    case Envelope::kTrialWorkloadReported: {
      const auto& reported = event.trial_workload_reported();
      // Sequence 0 reports nothing; checkpoints carry no metrics.
      if (reported.sequence() == 0) return Status::Ok();
      if (reported.completed() == events::WORKLOAD_KIND_TRAIN) {
        return RecordReport(event, store, reported.trial_id(), "training", reported.total_batches(),
                            reported.metrics_json());
      }
      if (reported.completed() == events::WORKLOAD_KIND_VALIDATE) {
        return RecordReport(event, store, reported.trial_id(), "validation",
                            reported.total_batches(), reported.metrics_json());
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

Result<std::vector<MetricSeriesName>> ListMetricSeries(ViewReader& reader, int64_t trial_id,
                                                       const std::string& group) {
  std::string prefix = NamesPrefix(trial_id);
  if (!group.empty()) {
    prefix.append(group);
    prefix.push_back('\0');
  }
  const size_t id_size = kNamesPrefix.size() + 8;
  std::vector<MetricSeriesName> names;
  CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view key, std::string_view) {
    const std::string_view rest = key.substr(id_size);
    const size_t split = rest.find('\0');
    if (split == std::string_view::npos) return true;
    names.push_back({std::string(rest.substr(0, split)), std::string(rest.substr(split + 1))});
    return true;
  }));
  return names;
}

Result<MetricSeriesRead> ReadMetricSeries(ViewReader& reader, int64_t trial_id,
                                          const MetricSeriesName& series, int64_t start_batches,
                                          int64_t end_batches, size_t max_points) {
  MetricSeriesRead read;
  if (start_batches > end_batches || max_points == 0) return read;
  const std::string prefix = SeriesPrefix(trial_id, series.group, series.name);
  std::string begin = prefix;
  AppendBatches(&begin, start_batches);
  std::string end = prefix;
  if (end_batches == std::numeric_limits<int64_t>::max()) {
    end.back() = '\x01';  // past every batch count of the series
  } else {
    AppendBatches(&end, end_batches + 1);
  }
  auto decode = [&](std::string_view key, std::string_view value) {
    return SeriesPoint{static_cast<double>(static_cast<int64_t>(
                           DecodeBigEndian64(key.substr(prefix.size())) ^ kSignBit)),
                       std::bit_cast<double>(DecodeBigEndian64(value.substr(8))),
                       static_cast<int64_t>(DecodeBigEndian64(value))};
  };
  // The series' first and last batches fix the chart's buckets before the walk.
  std::optional<SeriesPoint> first, last;
  CAIRN_RETURN_IF_ERROR(reader.ScanRange(begin, end, false, [&](auto key, auto value) {
    first = decode(key, value);
    return false;
  }));
  if (!first) return read;
  CAIRN_RETURN_IF_ERROR(reader.ScanRange(begin, end, true, [&](auto key, auto value) {
    last = decode(key, value);
    return false;
  }));
  ExtremaDownsampler downsampler(first->x, last->x, max_points);
  CAIRN_RETURN_IF_ERROR(reader.ScanRange(begin, end, false, [&](auto key, auto value) {
    if (value.size() == 16) {
      downsampler.Add(decode(key, value));
      ++read.total;
    }
    return true;
  }));
  for (const SeriesPoint& point : downsampler.Finish()) {
    read.points.push_back({static_cast<int64_t>(point.x), point.tag, point.y});
  }
  return read;
}

}  // namespace cairn::projections
