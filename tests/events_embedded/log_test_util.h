// Helpers shared by the embedded log's test files: opening, reading everything back, checking
// events against their offsets, and poking at segment files the way a crash or bit rot would.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "events/embedded/embedded_log.h"
#include "tests/events_embedded/test_events.h"

namespace cairn::testing {

inline std::unique_ptr<EventLog> OpenOrDie(const std::string& dir,
                                           const EmbeddedLogOptions& options = {}) {
  auto log = OpenEmbeddedLog(dir, options);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  if (!log.ok()) return nullptr;
  return std::move(log).value();
}

inline EmbeddedLogOptions ReadOnly() {
  EmbeddedLogOptions options;
  options.read_only = true;
  return options;
}

inline std::vector<Envelope> TestEvents(uint64_t first, size_t count) {
  std::vector<Envelope> events;
  for (size_t i = 0; i < count; ++i) events.push_back(MakeTestEvent(first + i));
  return events;
}

// Appends MakeTestEvent(end), MakeTestEvent(end + 1), ... and checks the offsets it gets.
inline void AppendTestEvents(EventLog& log, size_t count) {
  auto end = log.EndOffset();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  auto range = log.Append(TestEvents(*end, count));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->first, *end);
  EXPECT_EQ(range->last, *end + count - 1);
}

// Every event from `from` to the log's current end, read without waiting.
inline Result<std::vector<Envelope>> ReadAll(EventLog& log, uint64_t from = 0) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log.EndOffset());
  CAIRN_ASSIGN_OR_RETURN(auto reader, log.OpenReader(from));
  std::vector<Envelope> all;
  while (reader->position() < end) {
    CAIRN_ASSIGN_OR_RETURN(auto some, reader->Next(1000, std::chrono::milliseconds(0)));
    if (some.empty()) return Status::Internal("reader stopped before the end offset");
    for (auto& event : some) all.push_back(std::move(event));
  }
  return all;
}

// Checks that `events` are exactly ExpectedTestEvent(first), ExpectedTestEvent(first + 1), ...
inline void ExpectTestEvents(const std::vector<Envelope>& events, uint64_t first) {
  for (size_t i = 0; i < events.size(); ++i) {
    Envelope expected = ExpectedTestEvent(first + i);
    ASSERT_EQ(events[i].offset(), first + i);
    ASSERT_EQ(events[i].SerializeAsString(), expected.SerializeAsString())
        << "event at offset " << first + i << " differs";
  }
}

// The whole log must be MakeTestEvent(0 .. end-1).
inline void ExpectLogHoldsTestEvents(EventLog& log, uint64_t expected_end) {
  auto end = log.EndOffset();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  ASSERT_EQ(*end, expected_end);
  auto all = ReadAll(log);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), expected_end);
  ExpectTestEvents(*all, 0);
}

// Segment files of the log in `dir`, in offset order.
inline std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline uint64_t FileSize(const std::string& path) { return std::filesystem::file_size(path); }

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The record format, restated from LOG_FORMAT.md so tests can forge and damage records.
inline constexpr size_t kRecordHeaderBytes = 32;

inline uint32_t RecordLengthAt(const std::string& bytes, size_t position) {
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) {
    length |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[position + 24 + i])) << (8 * i);
  }
  return length;
}

// Byte positions of the records in a segment file's bytes (which must be intact).
inline std::vector<size_t> RecordPositions(const std::string& bytes) {
  std::vector<size_t> positions;
  for (size_t position = 0; position + kRecordHeaderBytes <= bytes.size();) {
    positions.push_back(position);
    position += kRecordHeaderBytes + RecordLengthAt(bytes, position);
  }
  return positions;
}

// Rewrites the record at `position`'s offset field and gives it a matching CRC, as a writer bug
// that assigned the wrong offset would.
inline void ForgeRecordOffset(std::string& bytes, size_t position, uint64_t offset) {
  for (int i = 0; i < 8; ++i) bytes[position + 8 + i] = static_cast<char>(offset >> (8 * i));
  uint32_t length = RecordLengthAt(bytes, position);
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  uLong crc = crc32_z(0, data + position + kRecordHeaderBytes, length);
  crc = crc32_z(crc, data + position + 8, kRecordHeaderBytes - 8);
  for (int i = 0; i < 4; ++i) bytes[position + 4 + i] = static_cast<char>(crc >> (8 * i));
}

}  // namespace cairn::testing
