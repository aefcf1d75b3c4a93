// Behaviour of the embedded EventLog in one process: append and read back, tailing, group commit
// under concurrent appenders, segment rolls, torn-tail recovery, corruption detection, read-only
// followers and the single-writer lock.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <random>
#include <thread>

#include "events/embedded/segment_file.h"
#include "tests/events_embedded/log_test_util.h"
#include "tests/support/test_support.h"

namespace cairn::testing {
namespace {

// The format's CRC is zlib's CRC-32 (LOG_FORMAT.md): a log written by any Cairn reads back in any
// other, whichever implementation computes it. Lengths around the vector widths and records'.
TEST(RecordCrcTest, IsZlibsCrc32OfThePayloadThenTheHeaderTail) {
  std::mt19937 random(38);
  std::string bytes(70000, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  for (size_t length : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{63}, size_t{64},
                        size_t{65}, size_t{284}, size_t{4096}, size_t{65537}}) {
    const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
    const uint32_t zlib_payload = static_cast<uint32_t>(crc32_z(0, data, length));
    EXPECT_EQ(embedded::PayloadCrc(bytes.data(), length), zlib_payload) << length;
    const char* header = bytes.data() + 100;
    const uint32_t zlib_record =
        static_cast<uint32_t>(crc32_z(zlib_payload, data + 100 + embedded::kCrcCoveredHeaderStart,
                                      embedded::kHeaderBytes - embedded::kCrcCoveredHeaderStart));
    EXPECT_EQ(embedded::RecordCrc(zlib_payload, header), zlib_record) << length;
  }
}

using std::chrono::milliseconds;

class EmbeddedLogTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventLog> Open(const EmbeddedLogOptions& options = {}) {
    return OpenOrDie(log_dir_, options);
  }
  static EmbeddedLogOptions SmallSegments(uint64_t bytes = 4096) {
    EmbeddedLogOptions options;
    options.segment_bytes = bytes;
    return options;
  }

  TempDir temp_;
  std::string log_dir_ = temp_.Sub("log");
};

TEST_F(EmbeddedLogTest, AppendsAndReadsBackInOrder) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(*log->EndOffset(), 0u);
  auto first = log->Append(TestEvents(0, 1));
  auto second = log->Append(TestEvents(1, 5));
  auto third = log->Append(TestEvents(6, 20));
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  EXPECT_EQ(first->first, 0u);
  EXPECT_EQ(first->last, 0u);
  EXPECT_EQ(second->first, 1u);
  EXPECT_EQ(second->last, 5u);
  EXPECT_EQ(third->first, 6u);
  EXPECT_EQ(third->last, 25u);
  ExpectLogHoldsTestEvents(*log, 26);

  auto reader = log->OpenReader(7);
  ASSERT_TRUE(reader.ok());
  auto some = (*reader)->Next(3, milliseconds(0));
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some->size(), 3u);
  ExpectTestEvents(*some, 7);
  EXPECT_EQ((*reader)->position(), 10u);
  auto rest = (*reader)->Next(100, milliseconds(0));
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 16u);
  ExpectTestEvents(*rest, 10);
  EXPECT_EQ(log->Describe(), "embedded:" + log_dir_);
}

TEST_F(EmbeddedLogTest, RejectsEmptyAndOversizedBatches) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto empty = log->Append({});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);

  std::vector<Envelope> huge = TestEvents(0, 2);
  huge[1].mutable_task_submitted()->set_config_json(
      std::string(kEmbeddedLogMaxEventBytes + 1, 'x'));
  EXPECT_EQ(log->Append(huge).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(*log->EndOffset(), 0u);

  AppendTestEvents(*log, 3);
  ExpectLogHoldsTestEvents(*log, 3);
}

TEST_F(EmbeddedLogTest, AssignsOffsetsWhateverTheInputSays) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  std::vector<Envelope> batch = TestEvents(0, 4);
  for (auto& event : batch) event.set_offset(999);
  auto range = log->Append(batch);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->first, 0u);
  ExpectLogHoldsTestEvents(*log, 4);
}

TEST_F(EmbeddedLogTest, ReaderBlockedInNextWakesOnAppend) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto reader = log->OpenReader(0);
  ASSERT_TRUE(reader.ok());
  Result<std::vector<Envelope>> got = Status::Internal("reader did not run");
  milliseconds waited{0};
  std::thread tail([&] {
    auto start = std::chrono::steady_clock::now();
    got = (*reader)->Next(10, milliseconds(30'000));
    waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  });
  AppendTestEvents(*log, 2);
  tail.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_FALSE(got->empty());
  ExpectTestEvents(*got, 0);
  EXPECT_LT(waited, milliseconds(10'000)) << "the reader was not woken by the append";
}

TEST_F(EmbeddedLogTest, NextWaitsThenReturnsNothingWhenNoAppendComes) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  AppendTestEvents(*log, 1);
  auto reader = log->OpenReader(1);
  ASSERT_TRUE(reader.ok());
  auto start = std::chrono::steady_clock::now();
  auto got = (*reader)->Next(10, milliseconds(60));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(60));
  EXPECT_EQ((*reader)->position(), 1u);
}

TEST_F(EmbeddedLogTest, OpenReaderPastTheEndFails) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  AppendTestEvents(*log, 3);
  EXPECT_TRUE(log->OpenReader(3).ok());
  EXPECT_EQ(log->OpenReader(4).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EmbeddedLogTest, OpenReaderAtAnyOffsetOfALargeSegment) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 20; ++i) AppendTestEvents(*log, 100);  // ~600 KiB: many index entries
  ASSERT_EQ(SegmentFiles(log_dir_).size(), 1u);
  for (uint64_t from : {0, 1, 99, 100, 777, 1024, 1500, 1998, 1999}) {
    auto reader = log->OpenReader(from);
    ASSERT_TRUE(reader.ok());
    auto got = (*reader)->Next(2, milliseconds(0));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), std::min<size_t>(2, 2000 - from)) << "from " << from;
    ExpectTestEvents(*got, from);
  }
}

TEST_F(EmbeddedLogTest, ReopenContinuesOffsets) {
  {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    AppendTestEvents(*log, 10);
  }
  auto log = Open();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(*log->EndOffset(), 10u);
  auto range = log->Append(TestEvents(10, 5));
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->first, 10u);
  EXPECT_EQ(range->last, 14u);
  ExpectLogHoldsTestEvents(*log, 15);
}

// The segments are scanned side by side at open; a sealed one's file is closed once scanned, so
// opening a log of many segments never holds a file per segment: it opens under a file limit
// far below its segment count.
TEST_F(EmbeddedLogTest, ALogOfManySegmentsOpensUnderALowFileLimit) {
  {
    auto log = Open(SmallSegments());
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(log->Append(TestEvents(i * 5, 5)).ok());
  }
  const size_t segments = SegmentFiles(log_dir_).size();
  ASSERT_GE(segments, 20u);
  const auto open_files = static_cast<rlim_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator()));
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = open_files + 8;  // the LOCK, the last segment, a few scans at a time
  ASSERT_LT(low.rlim_cur, open_files + segments);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  auto log = OpenEmbeddedLog(log_dir_, SmallSegments());
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ExpectLogHoldsTestEvents(**log, 200);
}

TEST_F(EmbeddedLogTest, ConcurrentAppendersGetContiguousBatchesAndAllLand) {
  constexpr int kThreads = 8;
  constexpr int kBatchesPerThread = 60;
  auto log = Open(SmallSegments(64 << 10));
  ASSERT_NE(log, nullptr);
  struct Appended {
    OffsetRange range;
    std::string first_id;
    size_t size;
  };
  std::vector<std::vector<Appended>> appended(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatchesPerThread; ++b) {
        size_t size = 1 + static_cast<size_t>((t * 7 + b * 3) % 10);
        std::vector<Envelope> batch(size);
        for (size_t i = 0; i < size; ++i) {
          batch[i].set_event_id("t" + std::to_string(t) + "-b" + std::to_string(b) + "-i" +
                                std::to_string(i));
        }
        auto range = log->Append(batch);
        if (!range.ok()) {
          ++failures;
          return;
        }
        appended[t].push_back({*range, batch[0].event_id(), size});
      }
    });
  }
  // A tailing reader sees every event exactly once, in order, while the appends happen.
  auto reader = log->OpenReader(0);
  ASSERT_TRUE(reader.ok());
  std::vector<Envelope> tailed;
  size_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int b = 0; b < kBatchesPerThread; ++b)
      total += 1 + static_cast<size_t>((t * 7 + b * 3) % 10);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (tailed.size() < total && std::chrono::steady_clock::now() < deadline) {
    auto got = (*reader)->Next(500, milliseconds(200));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (auto& event : *got) {
      ASSERT_EQ(event.offset(), tailed.size());
      tailed.push_back(std::move(event));
    }
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(tailed.size(), total);
  EXPECT_EQ(*log->EndOffset(), total);

  std::vector<OffsetRange> ranges;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(appended[t].size(), static_cast<size_t>(kBatchesPerThread));
    for (const Appended& batch : appended[t]) {
      ASSERT_EQ(batch.range.last - batch.range.first + 1, batch.size);
      for (size_t i = 0; i < batch.size; ++i) {
        std::string prefix = batch.first_id.substr(0, batch.first_id.size() - 1);
        EXPECT_EQ(tailed[batch.range.first + i].event_id(), prefix + std::to_string(i));
      }
      ranges.push_back(batch.range);
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const OffsetRange& a, const OffsetRange& b) { return a.first < b.first; });
  uint64_t next = 0;
  for (const OffsetRange& range : ranges) {
    ASSERT_EQ(range.first, next);
    next = range.last + 1;
  }
  EXPECT_EQ(next, total);
}

TEST_F(EmbeddedLogTest, RollsSegmentsAndReadsAcrossThem) {
  constexpr uint64_t kSegmentBytes = 4096;
  {
    auto log = Open(SmallSegments(kSegmentBytes));
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 40; ++i) AppendTestEvents(*log, 7);
    ExpectLogHoldsTestEvents(*log, 280);
  }
  std::vector<std::string> files = SegmentFiles(log_dir_);
  ASSERT_GT(files.size(), 5u);
  EXPECT_EQ(std::filesystem::path(files[0]).filename(), "00000000000000000000.log");
  auto log = Open(SmallSegments(kSegmentBytes));
  ASSERT_NE(log, nullptr);
  ExpectLogHoldsTestEvents(*log, 280);
  for (const std::string& file : files) {
    EXPECT_LE(FileSize(file), kSegmentBytes) << file;
    EXPECT_GT(FileSize(file), 0u) << file;
    uint64_t base = std::stoull(std::filesystem::path(file).stem().string());
    // A reader opened at a segment's first offset, and one just before it, read on correctly.
    for (uint64_t from : {base, base == 0 ? 0 : base - 1}) {
      auto reader = log->OpenReader(from);
      ASSERT_TRUE(reader.ok());
      auto got = (*reader)->Next(3, milliseconds(0));
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ASSERT_FALSE(got->empty());
      ExpectTestEvents(*got, from);
    }
  }
  AppendTestEvents(*log, 30);
  ExpectLogHoldsTestEvents(*log, 310);
}

TEST_F(EmbeddedLogTest, ReaderOutlivesTheLog) {
  std::unique_ptr<LogReader> reader;
  {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    AppendTestEvents(*log, 5);
    auto opened = log->OpenReader(1);
    ASSERT_TRUE(opened.ok());
    reader = std::move(opened).value();
  }
  auto got = reader->Next(10, milliseconds(0));
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 4u);
  ExpectTestEvents(*got, 1);
}

// --- torn tails and corruption --------------------------------------------------------------

enum class TailDamage {
  kTruncateMidHeader,
  kTruncateMidPayload,
  kGarbageAppended,
  kZerosAppended,
  kBadCrcOfLastRecord,
  kWrongOffsetOfLastRecord,
  kTornMiddleOfLastGroup,
};

struct TailCase {
  TailDamage damage;
  uint64_t expected_end;  // the log holds 25 events (last group: offsets 20..24) before damage
  const char* name;
};

void PrintTo(const TailCase& tail_case, std::ostream* out) { *out << tail_case.name; }

class EmbeddedLogTornTailTest : public EmbeddedLogTest,
                                public ::testing::WithParamInterface<TailCase> {};

TEST_P(EmbeddedLogTornTailTest, IsCutOnOpenAndAppendsContinue) {
  {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    AppendTestEvents(*log, 20);
    AppendTestEvents(*log, 5);
  }
  std::string segment = SegmentFiles(log_dir_).back();
  std::string bytes = ReadFileBytes(segment);
  std::vector<size_t> records = RecordPositions(bytes);
  ASSERT_EQ(records.size(), 25u);
  const size_t last = records[24];
  const size_t original_size = bytes.size();
  switch (GetParam().damage) {
    case TailDamage::kTruncateMidHeader:
      bytes.resize(last + 10);
      break;
    case TailDamage::kTruncateMidPayload:
      bytes.resize(last + kRecordHeaderBytes + 5);
      break;
    case TailDamage::kGarbageAppended:
      bytes += std::string(100, '\xAB') + "CRNL" + std::string(40, '\x01');
      break;
    case TailDamage::kZerosAppended:
      bytes += std::string(4096, '\0');
      break;
    case TailDamage::kBadCrcOfLastRecord:
      bytes[last + kRecordHeaderBytes + 3] ^= 0x40;
      break;
    case TailDamage::kWrongOffsetOfLastRecord:
      ForgeRecordOffset(bytes, last, 99);
      break;
    case TailDamage::kTornMiddleOfLastGroup:
      // The middle of the last commit group never reached the disk; what follows did.
      bytes[records[22] + kRecordHeaderBytes + 1] ^= 0x01;
      break;
  }
  WriteFileBytes(segment, bytes);
  const uint64_t expected_end = GetParam().expected_end;

  {
    // Read-only: the tail is ignored, never served, and the file is left alone.
    auto reader_log = Open(ReadOnly());
    ASSERT_NE(reader_log, nullptr);
    ExpectLogHoldsTestEvents(*reader_log, expected_end);
    EXPECT_EQ(FileSize(segment), bytes.size());
  }

  ::testing::internal::CaptureStderr();
  auto log = Open();
  std::string stderr_text = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(log, nullptr);
  EXPECT_NE(stderr_text.find("cut"), std::string::npos) << stderr_text;
  ExpectLogHoldsTestEvents(*log, expected_end);
  EXPECT_EQ(FileSize(segment), expected_end == 25 ? original_size : records[expected_end]);

  AppendTestEvents(*log, 4);
  ExpectLogHoldsTestEvents(*log, expected_end + 4);
  log.reset();
  log = Open();
  ASSERT_NE(log, nullptr);
  ExpectLogHoldsTestEvents(*log, expected_end + 4);
}

INSTANTIATE_TEST_SUITE_P(
    Damage, EmbeddedLogTornTailTest,
    ::testing::Values(TailCase{TailDamage::kTruncateMidHeader, 24, "TruncateMidHeader"},
                      TailCase{TailDamage::kTruncateMidPayload, 24, "TruncateMidPayload"},
                      TailCase{TailDamage::kGarbageAppended, 25, "GarbageAppended"},
                      TailCase{TailDamage::kZerosAppended, 25, "ZerosAppended"},
                      TailCase{TailDamage::kBadCrcOfLastRecord, 24, "BadCrcOfLastRecord"},
                      TailCase{TailDamage::kWrongOffsetOfLastRecord, 24, "WrongOffsetOfLastRecord"},
                      TailCase{TailDamage::kTornMiddleOfLastGroup, 22, "TornMiddleOfLastGroup"}),
    [](const ::testing::TestParamInfo<TailCase>& info) { return std::string(info.param.name); });

// Builds a log of several commit groups spread over several segments (about 4 KiB each).
class EmbeddedLogCorruptionTest : public EmbeddedLogTest {
 protected:
  void SetUp() override {
    auto log = Open(SmallSegments());
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 30; ++i) AppendTestEvents(*log, 3);
    files_ = SegmentFiles(log_dir_);
    ASSERT_GE(files_.size(), 3u);
  }
  void ExpectCorruptionOnEveryOpen() {
    std::vector<uint64_t> sizes;
    for (const auto& file : SegmentFiles(log_dir_)) sizes.push_back(FileSize(file));
    for (const EmbeddedLogOptions& options : {ReadOnly(), SmallSegments()}) {
      auto log = OpenEmbeddedLog(log_dir_, options);
      ASSERT_FALSE(log.ok()) << (options.read_only ? "read-only" : "read-write");
      EXPECT_EQ(log.status().code(), StatusCode::kCorruption) << log.status().ToString();
    }
    std::vector<uint64_t> after;
    for (const auto& file : SegmentFiles(log_dir_)) after.push_back(FileSize(file));
    EXPECT_EQ(after, sizes) << "a corrupt log must not be cut";
  }
  std::vector<std::string> files_;
};

TEST_F(EmbeddedLogCorruptionTest, DamagedRecordInASealedSegment) {
  std::string bytes = ReadFileBytes(files_[1]);
  bytes[RecordPositions(bytes)[1] + kRecordHeaderBytes + 2] ^= 0x10;
  WriteFileBytes(files_[1], bytes);
  ExpectCorruptionOnEveryOpen();
}

// The segments are scanned side by side, but the last one's torn tail is only cut once every
// segment before it checked out: an open that fails changes nothing.
TEST_F(EmbeddedLogCorruptionTest, DamageInASealedSegmentLeavesTheTornTailUncut) {
  std::string sealed = ReadFileBytes(files_[0]);
  sealed[RecordPositions(sealed)[0] + kRecordHeaderBytes] ^= 0x01;
  WriteFileBytes(files_[0], sealed);
  std::string last = ReadFileBytes(files_.back());
  WriteFileBytes(files_.back(), last + std::string(11, '\x7f'));  // a torn append after it
  ExpectCorruptionOnEveryOpen();
}

TEST_F(EmbeddedLogCorruptionTest, TruncatedSealedSegment) {
  std::string bytes = ReadFileBytes(files_[0]);
  bytes.resize(bytes.size() - 7);
  WriteFileBytes(files_[0], bytes);
  ExpectCorruptionOnEveryOpen();
}

TEST_F(EmbeddedLogCorruptionTest, MissingSegment) {
  std::filesystem::remove(files_[1]);
  ExpectCorruptionOnEveryOpen();
}

TEST_F(EmbeddedLogCorruptionTest, DamagedEarlierGroupInTheLastSegment) {
  {
    // Make sure the last segment holds at least two commit groups of 3 events.
    auto log = Open(SmallSegments());
    ASSERT_NE(log, nullptr);
    while (RecordPositions(ReadFileBytes(SegmentFiles(log_dir_).back())).size() < 6) {
      AppendTestEvents(*log, 3);
    }
  }
  std::string last = SegmentFiles(log_dir_).back();
  std::string bytes = ReadFileBytes(last);
  std::vector<size_t> records = RecordPositions(bytes);
  bytes[records[0] + 1] ^= 0x01;  // the magic of the first record of an earlier group
  WriteFileBytes(last, bytes);
  ExpectCorruptionOnEveryOpen();
}

TEST_F(EmbeddedLogCorruptionTest, ReaderReportsDamageThatAppearsAfterOpen) {
  auto log = Open(SmallSegments());
  ASSERT_NE(log, nullptr);
  std::string bytes = ReadFileBytes(files_[0]);
  bytes[RecordPositions(bytes)[2] + kRecordHeaderBytes + 4] ^= 0x08;
  WriteFileBytes(files_[0], bytes);
  auto all = ReadAll(*log);
  EXPECT_EQ(all.status().code(), StatusCode::kCorruption);
}

// --- single writer, read-only followers -----------------------------------------------------

TEST_F(EmbeddedLogTest, SecondWriterIsRefused) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto second = OpenEmbeddedLog(log_dir_, false);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("LOCK"), std::string::npos)
      << second.status().ToString();
  EXPECT_TRUE(OpenEmbeddedLog(log_dir_, true).ok()) << "a read-only open needs no lock";
  log.reset();
  EXPECT_TRUE(OpenEmbeddedLog(log_dir_, false).ok()) << "closing releases the lock";
}

TEST_F(EmbeddedLogTest, ReadOnlyOpenNeedsAnExistingLogAndCannotAppend) {
  EXPECT_EQ(OpenEmbeddedLog(log_dir_, true).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(log_dir_));
  Open().reset();
  auto reader_log = Open(ReadOnly());
  ASSERT_NE(reader_log, nullptr);
  EXPECT_EQ(reader_log->Append(TestEvents(0, 1)).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(EmbeddedLogTest, ReadOnlyLogFollowsTheWriterAcrossSegments) {
  auto writer = Open(SmallSegments());
  ASSERT_NE(writer, nullptr);
  AppendTestEvents(*writer, 5);
  EmbeddedLogOptions follow = ReadOnly();
  follow.poll_interval = milliseconds(5);
  auto follower = Open(follow);
  ASSERT_NE(follower, nullptr);
  EXPECT_EQ(*follower->EndOffset(), 5u);
  auto reader = follower->OpenReader(5);
  ASSERT_TRUE(reader.ok());

  std::thread appender([&] {
    for (int i = 0; i < 30; ++i) AppendTestEvents(*writer, 4);
  });
  std::vector<Envelope> seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (seen.size() < 120 && std::chrono::steady_clock::now() < deadline) {
    auto got = (*reader)->Next(50, milliseconds(500));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (auto& event : *got) seen.push_back(std::move(event));
  }
  appender.join();
  ASSERT_EQ(seen.size(), 120u);
  ExpectTestEvents(seen, 5);
  EXPECT_GT(SegmentFiles(log_dir_).size(), 3u) << "the test should cross segment rolls";
  EXPECT_EQ(*follower->EndOffset(), 125u);
}

TEST_F(EmbeddedLogTest, ReadOnlyLogOpenedBeforeTheFirstSegmentExists) {
  std::filesystem::create_directories(log_dir_);
  EmbeddedLogOptions follow = ReadOnly();
  follow.poll_interval = milliseconds(5);
  auto follower = Open(follow);
  ASSERT_NE(follower, nullptr);
  EXPECT_EQ(*follower->EndOffset(), 0u);
  auto reader = follower->OpenReader(0);
  ASSERT_TRUE(reader.ok());
  auto writer = Open();
  ASSERT_NE(writer, nullptr);
  AppendTestEvents(*writer, 3);
  std::vector<Envelope> seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    auto got = (*reader)->Next(10, milliseconds(500));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (auto& event : *got) seen.push_back(std::move(event));
  }
  ASSERT_EQ(seen.size(), 3u);
  ExpectTestEvents(seen, 0);
}

TEST_F(EmbeddedLogTest, FollowerNeverServesATornTailAndPicksUpAfterTheWriterCutsIt) {
  {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    AppendTestEvents(*log, 10);
  }
  std::string segment = SegmentFiles(log_dir_).back();
  std::string bytes = ReadFileBytes(segment);
  bytes.resize(RecordPositions(bytes)[9] + kRecordHeaderBytes + 3);  // offset 9 is torn
  WriteFileBytes(segment, bytes);

  EmbeddedLogOptions follow = ReadOnly();
  follow.poll_interval = milliseconds(5);
  auto follower = Open(follow);
  ASSERT_NE(follower, nullptr);
  EXPECT_EQ(*follower->EndOffset(), 9u);
  auto reader = follower->OpenReader(9);
  ASSERT_TRUE(reader.ok());
  auto nothing = (*reader)->Next(10, milliseconds(30));
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->empty()) << "a torn record was served";

  auto writer = Open();  // cuts the torn record; offset 9 is written again
  ASSERT_NE(writer, nullptr);
  AppendTestEvents(*writer, 3);
  std::vector<Envelope> seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    auto got = (*reader)->Next(10, milliseconds(500));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (auto& event : *got) seen.push_back(std::move(event));
  }
  ASSERT_EQ(seen.size(), 3u);
  ExpectTestEvents(seen, 9);
}

}  // namespace
}  // namespace cairn::testing
