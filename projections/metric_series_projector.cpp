#include "projections/metric_series_projector.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/downsample.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kNamesPrefix = "names/";
constexpr std::string_view kSeriesPrefix = "series/";
constexpr std::string_view kOpenPrefix = "open/";
constexpr std::string_view kBlockPrefix = "block/";
constexpr std::string_view kUnorderedPrefix = "unordered/";
constexpr uint64_t kSignBit = uint64_t{1} << 63;
// Points a block summary stands for; a read uses summaries only for a series of more than this
// many times its budget of points.
constexpr uint64_t kBlockPoints = 64;
constexpr uint64_t kBlocksOnlyPast = 4;

// One point with its place: batches and offset make its key.
struct Point {
  int64_t batches = 0;
  uint64_t offset = 0;
  int64_t time = 0;
  double value = 0;
};

// A run of consecutive points of a series (in key order): how many, the first and last, and the
// lowest and highest finite value. Fixed width, big-endian.
struct BlockSummary {
  uint64_t count = 0;
  Point first, last, low, high;
  bool has_extremes = false;
};

void AppendPoint(std::string* out, const Point& point) {
  AppendBigEndian64(out, static_cast<uint64_t>(point.batches));
  AppendBigEndian64(out, point.offset);
  AppendBigEndian64(out, static_cast<uint64_t>(point.time));
  AppendBigEndian64(out, std::bit_cast<uint64_t>(point.value));
}

Point ReadPoint(std::string_view bytes) {
  return {static_cast<int64_t>(DecodeBigEndian64(bytes)), DecodeBigEndian64(bytes.substr(8)),
          static_cast<int64_t>(DecodeBigEndian64(bytes.substr(16))),
          std::bit_cast<double>(DecodeBigEndian64(bytes.substr(24)))};
}

constexpr size_t kSummaryBytes = 8 + 4 * 32 + 1;

std::string EncodeSummary(const BlockSummary& summary) {
  std::string out;
  AppendBigEndian64(&out, summary.count);
  for (const Point* point : {&summary.first, &summary.last, &summary.low, &summary.high}) {
    AppendPoint(&out, *point);
  }
  out.push_back(summary.has_extremes ? '\1' : '\0');
  return out;
}

std::optional<BlockSummary> DecodeSummary(std::string_view bytes) {
  if (bytes.size() != kSummaryBytes) return std::nullopt;
  BlockSummary summary;
  summary.count = DecodeBigEndian64(bytes);
  Point* points[] = {&summary.first, &summary.last, &summary.low, &summary.high};
  for (size_t i = 0; i < 4; ++i) *points[i] = ReadPoint(bytes.substr(8 + 32 * i, 32));
  summary.has_extremes = bytes[8 + 128] != '\0';
  return summary;
}

void AppendSeriesId(std::string* key, int64_t trial_id, std::string_view group,
                    std::string_view name) {
  AppendBigEndian64(key, static_cast<uint64_t>(trial_id));
  key->append(group);
  key->push_back('\0');
  key->append(name);
  key->push_back('\0');
}

std::string SeriesKey(std::string_view prefix, int64_t trial_id, std::string_view group,
                      std::string_view name) {
  std::string key(prefix);
  AppendSeriesId(&key, trial_id, group, name);
  return key;
}

std::string SeriesPrefix(int64_t trial_id, std::string_view group, std::string_view name) {
  return SeriesKey(kSeriesPrefix, trial_id, group, name);
}

std::string NamesPrefix(int64_t trial_id) {
  std::string key(kNamesPrefix);
  AppendBigEndian64(&key, static_cast<uint64_t>(trial_id));
  return key;
}

void AppendBatches(std::string* key, int64_t batches) {
  AppendBigEndian64(key, static_cast<uint64_t>(batches) ^ kSignBit);
}

// "<prefix><batches:8><offset:8>": a point's key, or a block's (by its first point).
std::string PlaceKey(const std::string& prefix, int64_t batches, uint64_t offset) {
  std::string key = prefix;
  AppendBatches(&key, batches);
  AppendBigEndian64(&key, offset);
  return key;
}

// Adds `point` to the series' open block; a block of kBlockPoints is closed under the key of its
// first point. A point below the series' latest marks the series unordered: its blocks overlap,
// and reads walk it point by point.
Status AddToBlock(ViewStore& store, int64_t trial_id, std::string_view group, std::string_view name,
                  const Point& point) {
  const std::string open_key = SeriesKey(kOpenPrefix, trial_id, group, name);
  CAIRN_ASSIGN_OR_RETURN(auto open_bytes, store.Get(open_key));
  BlockSummary open;
  bool known = false;
  if (open_bytes) {
    if (auto decoded = DecodeSummary(*open_bytes)) {
      open = *decoded;
      known = true;
    }
  }
  if (known && std::make_pair(point.batches, point.offset) <
                   std::make_pair(open.last.batches, open.last.offset)) {
    CAIRN_RETURN_IF_ERROR(store.Put(SeriesKey(kUnorderedPrefix, trial_id, group, name), ""));
  }
  if (open.count == 0) {
    open.first = point;
    open.has_extremes = false;
  }
  if (std::isfinite(point.value)) {
    if (!open.has_extremes || point.value < open.low.value) open.low = point;
    if (!open.has_extremes || point.value > open.high.value) open.high = point;
    open.has_extremes = true;
  }
  open.last = point;
  if (++open.count == kBlockPoints) {
    CAIRN_RETURN_IF_ERROR(store.Put(PlaceKey(SeriesKey(kBlockPrefix, trial_id, group, name),
                                             open.first.batches, open.first.offset),
                                    EncodeSummary(open)));
    open.count = 0;  // the last point stays: the next one is checked against it
  }
  return store.Put(open_key, EncodeSummary(open));
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
    const double number = metric.get<double>();
    AppendBigEndian64(&value, std::bit_cast<uint64_t>(number));
    CAIRN_RETURN_IF_ERROR(store.Put(key, value));
    CAIRN_RETURN_IF_ERROR(AddToBlock(store, trial_id, group, name,
                                     {batches, event.offset(), event.time_unix_micros(), number}));
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
  // [begin, end) of the range's keys under `under` (points' or blocks' prefix).
  auto range_of = [&](const std::string& under) {
    std::pair<std::string, std::string> range{under, under};
    AppendBatches(&range.first, start_batches);
    if (end_batches == std::numeric_limits<int64_t>::max()) {
      range.second.back() = '\x01';  // past every batch count of the series
    } else {
      AppendBatches(&range.second, end_batches + 1);
    }
    return range;
  };
  const auto [begin, end] = range_of(prefix);
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
  // Every point with a key in [from, to), one by one.
  auto walk = [&](const std::string& from, const std::string& to) -> Status {
    if (!(from < to)) return Status::Ok();
    return reader.ScanRange(from, to, false, [&](auto key, auto value) {
      if (value.size() == 16) {
        downsampler.Add(decode(key, value));
        ++read.total;
      }
      return true;
    });
  };

  // The blocks that start in the range, when the series is ordered and long enough for them.
  std::vector<BlockSummary> blocks;
  CAIRN_ASSIGN_OR_RETURN(
      auto unordered, reader.Get(SeriesKey(kUnorderedPrefix, trial_id, series.group, series.name)));
  if (!unordered) {
    const auto [block_begin, block_end] =
        range_of(SeriesKey(kBlockPrefix, trial_id, series.group, series.name));
    CAIRN_RETURN_IF_ERROR(
        reader.ScanRange(block_begin, block_end, false, [&](auto, std::string_view value) {
          if (auto summary = DecodeSummary(value)) blocks.push_back(*summary);
          return true;
        }));
  }
  std::string cursor = begin;
  if (blocks.size() * kBlockPoints > kBlocksOnlyPast * max_points) {
    // A block inside the range whose points all fall in one bucket is fed as its lowest and
    // highest point; the first and last blocks, and any that straddle buckets or the range's
    // end, are walked point by point, so the series' ends and every bucket's extremes are the
    // points themselves.
    for (size_t i = 1; i + 1 < blocks.size(); ++i) {
      const BlockSummary& block = blocks[i];
      if (block.last.batches > end_batches ||
          !downsampler.SameBucket(static_cast<double>(block.first.batches),
                                  static_cast<double>(block.last.batches))) {
        continue;
      }
      CAIRN_RETURN_IF_ERROR(
          walk(cursor, PlaceKey(prefix, block.first.batches, block.first.offset)));
      uint64_t fed = 0;
      if (block.has_extremes) {
        fed = 2;
        const bool low_first = std::make_pair(block.low.batches, block.low.offset) <=
                               std::make_pair(block.high.batches, block.high.offset);
        for (const Point* point : low_first ? std::array{&block.low, &block.high}
                                            : std::array{&block.high, &block.low}) {
          downsampler.Add({static_cast<double>(point->batches), point->value, point->time});
        }
      }
      downsampler.StandFor(block.count - std::min(block.count, fed));
      read.total += block.count;
      // Blocks are contiguous: the next point is the next block's first (no seek to find that
      // nothing lies between them).
      cursor = PlaceKey(prefix, blocks[i + 1].first.batches, blocks[i + 1].first.offset);
    }
  }
  CAIRN_RETURN_IF_ERROR(walk(cursor, end));
  for (const SeriesPoint& point : downsampler.Finish()) {
    read.points.push_back({static_cast<int64_t>(point.x), point.tag, point.y});
  }
  return read;
}

}  // namespace cairn::projections
