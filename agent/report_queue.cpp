#include "agent/report_queue.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace cairn::agent {
namespace {

// 64-bit FNV-1a: a fixed function (std::hash may differ between standard libraries), so an id's
// lane is the same in every run and on every build.
uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

ReportQueue::ReportQueue(Options options)
    : options_(options), lanes_(std::max<size_t>(options.lanes, 1)) {}

size_t ReportQueue::LaneOf(std::string_view allocation_id) const {
  return Fnv1a(allocation_id) % lanes_.size();
}

bool ReportQueue::AddLine(TaskLogLine line, Clock::time_point now) {
  if (queued_lines_ >= options_.max_queued_lines) return false;
  Lane& lane = lanes_[LaneOf(line.allocation_id)];
  lane.emplace_back(QueuedLine{std::move(line), now});
  ++queued_lines_;
  return true;
}

void ReportQueue::AddStarted(StartedReport report) {
  lanes_[LaneOf(report.allocation_id)].emplace_back(std::move(report));
}

void ReportQueue::AddReady(ReadyReport report) {
  lanes_[LaneOf(report.allocation_id)].emplace_back(std::move(report));
}

void ReportQueue::AddExited(ExitedReport report) {
  lanes_[LaneOf(report.allocation_id)].emplace_back(std::move(report));
}

bool ReportQueue::empty() const {
  return std::all_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return lane.empty(); });
}

size_t ReportQueue::LeadingLines(const Lane& lane) const {
  size_t count = 0;
  while (count < lane.size() && count < options_.max_batch_lines &&
         std::holds_alternative<QueuedLine>(lane[count])) {
    ++count;
  }
  return count;
}

std::optional<ReportQueue::Clock::time_point> ReportQueue::NextDue(size_t lane_index) const {
  const Lane& lane = lanes_[lane_index];
  if (lane.empty()) return std::nullopt;
  size_t lines = LeadingLines(lane);
  if (lines == 0 || lines == options_.max_batch_lines || lines < lane.size()) {
    return Clock::time_point::min();
  }
  return std::get<QueuedLine>(lane.front()).queued_at + options_.max_line_delay;
}

std::optional<ReportItem> ReportQueue::TakeDue(size_t lane_index, Clock::time_point now,
                                               bool flush) {
  std::optional<Clock::time_point> due = NextDue(lane_index);
  if (!due || (!flush && now < *due)) return std::nullopt;
  Lane& lane = lanes_[lane_index];
  size_t lines = LeadingLines(lane);
  if (lines == 0) {
    Entry entry = std::move(lane.front());
    lane.pop_front();
    // A report (LeadingLines found no line in front).
    return std::visit(
        [](auto&& report) -> ReportItem {
          if constexpr (std::is_same_v<std::decay_t<decltype(report)>, QueuedLine>) {
            return ReportItem(LogBatch{std::move(report.line)});
          } else {
            return ReportItem(std::move(report));
          }
        },
        std::move(entry));
  }
  LogBatch batch;
  batch.reserve(lines);
  for (size_t i = 0; i < lines; ++i) {
    batch.push_back(std::move(std::get<QueuedLine>(lane.front()).line));
    lane.pop_front();
  }
  queued_lines_ -= lines;
  return ReportItem(std::move(batch));
}

}  // namespace cairn::agent
