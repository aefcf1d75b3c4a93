// The embedded EventLog over its engine (log_core.h): readers that only ever see records the log
// has made durable, and opening the log. Format and recovery rules: LOG_FORMAT.md in this folder.
#include "events/embedded/embedded_log.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "events/embedded/log_core.h"

namespace cairn {
namespace {

using namespace embedded;

class EmbeddedLogReader : public LogReader {
 public:
  EmbeddedLogReader(std::shared_ptr<LogCore> core, uint64_t from)
      : core_(std::move(core)), position_(from) {}

  Result<std::vector<Envelope>> Next(size_t max_events, std::chrono::milliseconds wait) override {
    std::vector<Envelope> out;
    if (max_events == 0) return out;
    // Clamped so that a huge `wait` cannot overflow the clock.
    auto deadline = std::chrono::steady_clock::now() +
                    std::min<std::chrono::milliseconds>(wait, std::chrono::hours(24 * 365));
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, core_->WaitBeyond(position_, deadline));
    if (end <= position_) return out;
    uint64_t target = position_ + std::min<uint64_t>(max_events, end - position_);
    out.reserve(static_cast<size_t>(std::min<uint64_t>(target - position_, 4096)));
    while (position_ < target) {
      CAIRN_RETURN_IF_ERROR(PlaceCursor());
      CAIRN_RETURN_IF_ERROR(ReadRecordAtCursor(&out));
    }
    return out;
  }

  uint64_t position() const override { return position_; }

 private:
  // Makes the cursor point at a durable record at or before position_, in the right segment.
  Status PlaceCursor() {
    if (positioned_ && cursor_offset_ < segment_end_offset_) return Status::Ok();
    if (positioned_) {
      core_->Bounds(segment_index_, &segment_end_offset_, &segment_bytes_);
      if (cursor_offset_ < segment_end_offset_) return Status::Ok();
    }
    CAIRN_ASSIGN_OR_RETURN(LogCore::SegmentView view, core_->Locate(position_));
    if (!positioned_ || view.index != segment_index_) {
      CAIRN_ASSIGN_OR_RETURN(fd_, OpenFile(view.path, O_RDONLY));
      path_ = view.path;
      segment_index_ = view.index;
      buffer_length_ = 0;
      cursor_offset_ = view.hint.offset;
      cursor_position_ = view.hint.position;
    }
    segment_end_offset_ = view.end_offset;
    segment_bytes_ = view.bytes;
    positioned_ = true;
    return Status::Ok();
  }

  // Makes [position, position + length) of the segment available in buffer_.
  Result<const char*> Buffered(uint64_t position, size_t length) {
    if (position + length > segment_bytes_) {
      return Status::Corruption("embedded log: record at " + path_ + " byte " +
                                std::to_string(position) + " runs past the durable end");
    }
    if (position >= buffer_position_ && position + length <= buffer_position_ + buffer_length_) {
      return buffer_.data() + (position - buffer_position_);
    }
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(std::max(length, kReadAheadBytes), segment_bytes_ - position));
    if (buffer_.size() < want) buffer_.resize(want);
    CAIRN_ASSIGN_OR_RETURN(size_t got, PreadFull(fd_.get(), buffer_.data(), want, position, path_));
    buffer_position_ = position;
    buffer_length_ = got;
    if (got < length) {
      return Status::Corruption("embedded log: " + path_ + " is shorter than its durable end");
    }
    return buffer_.data();
  }

  Status ReadRecordAtCursor(std::vector<Envelope>* out) {
    auto damaged = [&](const std::string& what) {
      return Status::Corruption("embedded log: record at " + path_ + " byte " +
                                std::to_string(cursor_position_) + " (offset " +
                                std::to_string(cursor_offset_) + "): " + what);
    };
    CAIRN_ASSIGN_OR_RETURN(const char* header_bytes, Buffered(cursor_position_, kHeaderBytes));
    RecordHeader header;
    if (!DecodeHeader(header_bytes, &header)) return damaged("bad header");
    CAIRN_ASSIGN_OR_RETURN(const char* record,
                           Buffered(cursor_position_, kHeaderBytes + header.length));
    if (!CrcMatches(record, header)) return damaged("checksum mismatch");
    if (header.offset != cursor_offset_) return damaged("unexpected offset");
    if (cursor_offset_ == position_) {
      Envelope& event = out->emplace_back();
      if (!event.ParseFromArray(record + kHeaderBytes, static_cast<int>(header.length))) {
        out->pop_back();
        return damaged("payload is not an Envelope");
      }
      event.set_offset(cursor_offset_);
      ++position_;
    }
    cursor_position_ += kHeaderBytes + header.length;
    ++cursor_offset_;
    return Status::Ok();
  }

  std::shared_ptr<LogCore> core_;
  uint64_t position_;

  bool positioned_ = false;
  size_t segment_index_ = 0;
  std::string path_;
  Fd fd_;
  uint64_t segment_end_offset_ = 0;
  uint64_t segment_bytes_ = 0;
  uint64_t cursor_offset_ = 0;
  uint64_t cursor_position_ = 0;

  std::vector<char> buffer_;
  uint64_t buffer_position_ = 0;
  size_t buffer_length_ = 0;
};

class EmbeddedEventLog : public EventLog {
 public:
  explicit EmbeddedEventLog(std::shared_ptr<LogCore> core) : core_(std::move(core)) {}
  ~EmbeddedEventLog() override { core_->Close(); }

  Result<OffsetRange> Append(const std::vector<Envelope>& batch) override {
    return core_->Append(batch);
  }
  Result<uint64_t> EndOffset() override { return core_->EndOffset(); }
  Result<std::unique_ptr<LogReader>> OpenReader(uint64_t from) override {
    CAIRN_RETURN_IF_ERROR(core_->CheckReaderStart(from).status());
    return std::unique_ptr<LogReader>(std::make_unique<EmbeddedLogReader>(core_, from));
  }
  std::string Describe() const override {
    return "embedded:" + core_->dir() + (core_->read_only() ? " (read-only)" : "");
  }

 private:
  std::shared_ptr<LogCore> core_;
};

}  // namespace

Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir,
                                                  const EmbeddedLogOptions& options) {
  if (dir.empty()) return Status::InvalidArgument("embedded log: empty directory");
  if (options.segment_bytes == 0) {
    return Status::InvalidArgument("embedded log: segment_bytes must be positive");
  }
  auto core = std::make_shared<LogCore>(dir, options);
  Status status = core->Open();
  if (!status.ok()) {
    core->Close();
    return status;
  }
  return std::unique_ptr<EventLog>(std::make_unique<EmbeddedEventLog>(std::move(core)));
}

Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir, bool read_only) {
  EmbeddedLogOptions options;
  options.read_only = read_only;
  return OpenEmbeddedLog(dir, options);
}

}  // namespace cairn
