#include "agent/report_queue.h"

#include <utility>

namespace cairn::agent {

ReportQueue::ReportQueue(Options options) : options_(options) {}

bool ReportQueue::AddLine(TaskLogLine line, Clock::time_point now) {
  if (queued_lines_ >= options_.max_queued_lines) return false;
  entries_.emplace_back(QueuedLine{std::move(line), now});
  ++queued_lines_;
  return true;
}

void ReportQueue::AddStarted(StartedReport report) { entries_.emplace_back(std::move(report)); }

void ReportQueue::AddExited(ExitedReport report) { entries_.emplace_back(std::move(report)); }

size_t ReportQueue::LeadingLines() const {
  size_t count = 0;
  while (count < entries_.size() && count < options_.max_batch_lines &&
         std::holds_alternative<QueuedLine>(entries_[count])) {
    ++count;
  }
  return count;
}

std::optional<ReportQueue::Clock::time_point> ReportQueue::NextDue() const {
  if (entries_.empty()) return std::nullopt;
  size_t lines = LeadingLines();
  if (lines == 0 || lines == options_.max_batch_lines || lines < entries_.size()) {
    return Clock::time_point::min();
  }
  return std::get<QueuedLine>(entries_.front()).queued_at + options_.max_line_delay;
}

std::optional<ReportItem> ReportQueue::TakeDue(Clock::time_point now, bool flush) {
  std::optional<Clock::time_point> due = NextDue();
  if (!due || (!flush && now < *due)) return std::nullopt;
  size_t lines = LeadingLines();
  if (lines == 0) {
    Entry entry = std::move(entries_.front());
    entries_.pop_front();
    if (auto* started = std::get_if<StartedReport>(&entry)) return ReportItem(std::move(*started));
    return ReportItem(std::move(std::get<ExitedReport>(entry)));
  }
  LogBatch batch;
  batch.reserve(lines);
  for (size_t i = 0; i < lines; ++i) {
    batch.push_back(std::move(std::get<QueuedLine>(entries_.front()).line));
    entries_.pop_front();
  }
  queued_lines_ -= lines;
  return ReportItem(std::move(batch));
}

}  // namespace cairn::agent
