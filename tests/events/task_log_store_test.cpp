// The task-log store over a real RocksDB: alone (the embedded backend), and as a cache of the
// task-log topic on librdkafka's mock cluster (the Kafka backend), where a lost directory is
// rebuilt from the topic and a line the topic did not acknowledge is not stored.
#include "events/task_log_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>

#include "events/kafka/task_log_topic.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

TaskLogLine Line(const std::string& task_id, const std::string& allocation_id, int64_t seq,
                 const std::string& text, const std::string& stdtype = "stdout") {
  return TaskLogLine{task_id, allocation_id, "agent-1", seq, 1'700'000'000'000'000 + seq,
                     stdtype, text};
}

// Every line of `task_id`, as "allocation/seq/stdtype/agent/timestamp: text".
std::vector<std::string> ReadAll(TaskLogStore& store, const std::string& task_id) {
  std::vector<std::string> shown;
  std::string cursor;
  for (;;) {
    auto lines = store.Read(task_id, &cursor, 2);
    EXPECT_TRUE(lines.ok()) << lines.status().ToString();
    if (!lines.ok() || lines->empty()) return shown;
    for (const TaskLogLine& line : *lines) {
      shown.push_back(line.allocation_id + "/" + std::to_string(line.seq) + "/" + line.stdtype +
                      "/" + line.agent_id + "/" + std::to_string(line.timestamp_unix_micros) +
                      ": " + line.text);
    }
  }
}

const std::vector<TaskLogLine> kLines = {
    Line("train", "train.1", 1, "epoch 1\n"),
    Line("train", "train.1", 0, "starting\n"),
    Line("train", "train.1", 2, "loss nan\n", "stderr"),
    Line("train", "train.2", 0, "resumed\n"),
    Line("other", "other.1", 0, "hello\n"),
};

const std::vector<std::string> kTrainLines = {
    "train.1/0/stdout/agent-1/1700000000000000: starting\n",
    "train.1/1/stdout/agent-1/1700000000000001: epoch 1\n",
    "train.1/2/stderr/agent-1/1700000000000002: loss nan\n",
    "train.2/0/stdout/agent-1/1700000000000000: resumed\n",
};

TEST(TaskLogStoreTest, KeepsEachLineOnceInAllocationAndSeqOrderAcrossReopens) {
  TempDir dir;
  {
    auto store = TaskLogStore::Open(dir.Sub("tasklogs"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const uint64_t before = (*store)->version();
    ASSERT_TRUE((*store)->Append(kLines).ok());
    ASSERT_TRUE((*store)->Append({kLines[0], kLines[2]}).ok());  // an agent's retry
    EXPECT_EQ((*store)->version(), before + 2);
    EXPECT_EQ(ReadAll(**store, "train"), kTrainLines);
  }
  auto reopened = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(ReadAll(**reopened, "train"), kTrainLines);
  EXPECT_EQ(ReadAll(**reopened, "other").size(), 1u);
  EXPECT_TRUE(ReadAll(**reopened, "nobody").empty());
}

TEST(TaskLogStoreTest, DeleteRemovesOneTasksLinesAndCountsThem) {
  TempDir dir;
  auto store = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // A task whose id extends another's keeps its lines.
  ASSERT_TRUE((*store)->Append(kLines).ok());
  ASSERT_TRUE((*store)->Append({Line("train2", "train2.1", 0, "neighbour\n")}).ok());
  auto removed = (*store)->Delete("train");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 4u);
  EXPECT_TRUE(ReadAll(**store, "train").empty());
  EXPECT_EQ(ReadAll(**store, "train2").size(), 1u);
  EXPECT_EQ(ReadAll(**store, "other").size(), 1u);
  auto again = (*store)->Delete("train");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
}

// A store written before lines were kept in binary holds JSON values: they are still read, and
// counted in their task's usage when the store is first opened by this build.
TEST(TaskLogStoreTest, LinesStoredAsJsonByAnOlderBuildAreReadAndCounted) {
  TempDir dir;
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    std::unique_ptr<rocksdb::DB> db;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir.Sub("tasklogs"), &raw).ok());
    db.reset(raw);
    std::string key = std::string("old") + '\0' + "old.1" + '\0' + std::string(7, '\0') + '\x05';
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key,
                        R"({"agentId":"agent-9","timestamp":1700000000000005,)"
                        R"("stdtype":"stderr","log":"written as \"json\"\n"})")
                    .ok());
  }
  auto store = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(
      ReadAll(**store, "old"),
      std::vector<std::string>{"old.1/5/stderr/agent-9/1700000000000005: written as \"json\"\n"});
  EXPECT_EQ((*store)->TaskBytes("old"), 18u);
  ASSERT_TRUE((*store)->Append({Line("old", "old.1", 6, "binary\n")}).ok());
  EXPECT_EQ(ReadAll(**store, "old").size(), 2u);
  EXPECT_EQ((*store)->TotalBytes(), 25u);
}

// A text search over several tasks (an experiment's trials): every line holding the text in
// either case, in the tasks' order then each task's own, the limit counting from the first task.
TEST(TaskLogStoreTest, SearchFindsTheLinesHoldingTheTextAcrossTasksInOrder) {
  TempDir dir;
  auto store = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(store.ok());
  std::vector<TaskLogLine> lines;
  for (int task = 0; task < 6; ++task) {
    for (int seq = 0; seq < 500; ++seq) {
      std::string text = "step " + std::to_string(seq) + " loss 0." + std::to_string(seq % 97);
      if (seq % 100 == 7) text += " CUDA Out Of Memory";
      if (seq == 250) text += " [42%]";
      lines.push_back(
          Line("t" + std::to_string(task), "a" + std::to_string(task) + ".1", seq, text + "\n"));
    }
  }
  ASSERT_TRUE((*store)->Append(lines).ok());
  const std::vector<std::string> tasks = {"t3", "t0", "t5", "t1", "t2", "t4", "missing"};
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(threads);
    auto found = (*store)->Search(tasks, "out of MEMORY", 0, threads);
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    ASSERT_EQ(found->size(), 30u);  // five a task
    EXPECT_EQ(found->front().task_id, "t3");
    EXPECT_EQ(found->front().seq, 7);
    EXPECT_EQ(found->at(5).task_id, "t0");
    EXPECT_EQ(found->back().task_id, "t4");
    EXPECT_EQ(found->back().seq, 407);
    for (const auto& line : *found) {
      EXPECT_NE(line.text.find("CUDA Out Of Memory"), std::string::npos) << line.text;
    }
    auto first = (*store)->Search(tasks, "out of memory", 7, threads);
    ASSERT_TRUE(first.ok());
    ASSERT_EQ(first->size(), 7u);
    EXPECT_EQ(first->at(6).task_id, "t0");
    EXPECT_EQ(first->at(6).seq, 107);
    auto symbols = (*store)->Search(tasks, "[42%]", 0, threads);  // no letters: bytes as they are
    ASSERT_TRUE(symbols.ok());
    EXPECT_EQ(symbols->size(), 6u);
    auto none = (*store)->Search(tasks, "no such text", 0, threads);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
  }
  // The text at a line's very start and end, overlapping near-misses, longer than the line.
  ASSERT_TRUE((*store)
                  ->Append({Line("edge", "e.1", 0, "AAAB"), Line("edge", "e.1", 1, "xaab"),
                            Line("edge", "e.1", 2, "aaa"), Line("edge", "e.1", 3, "ab"),
                            Line("edge", "e.1", 4, "b aAb")})
                  .ok());
  auto edges = (*store)->Search({"edge"}, "aab", 0);
  ASSERT_TRUE(edges.ok());
  std::vector<int64_t> seqs;
  for (const auto& line : *edges) seqs.push_back(line.seq);
  EXPECT_EQ(seqs, (std::vector<int64_t>{0, 1, 4}));
}

// A task printing without end: the store holds at most the bound of its text, whatever was
// printed, with a marker first that says how much went; the newest lines stay, in order.
TEST(TaskLogStoreTest, AnEndlessPrinterIsTrimmedToItsBoundWithAMarkerFirst) {
  TempDir dir;
  auto store = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  constexpr uint64_t kBound = 64 * 1024;
  (*store)->SetTaskByteLimit(kBound);
  const std::string text(99, 'x');  // 100 bytes a line with its newline
  int64_t seq = 0;
  uint64_t printed = 0, most_held = 0;
  for (int batch = 0; batch < 400; ++batch) {  // 4 MB printed, 64 times the bound
    std::vector<TaskLogLine> lines;
    for (int i = 0; i < 100; ++i, ++seq) lines.push_back(Line("loud", "loud.1", seq, text + "\n"));
    lines.push_back(Line("quiet", "quiet.1", batch, "tick\n"));
    ASSERT_TRUE((*store)->Append(lines).ok());
    printed += 100 * 100;
    const uint64_t held = (*store)->TaskBytes("loud");
    most_held = std::max(most_held, held);
    ASSERT_LE(held, kBound) << "after batch " << batch;
  }
  EXPECT_GT(most_held, kBound / 2);
  EXPECT_EQ((*store)->TaskBytes("quiet"), 400u * 5);  // another task keeps every line
  EXPECT_EQ((*store)->TotalBytes(), (*store)->TaskBytes("loud") + 400u * 5);

  // What a reader sees: the marker, then the newest lines, contiguous up to the last printed.
  std::string cursor;
  auto lines = (*store)->Read("loud", &cursor, 100'000);
  ASSERT_TRUE(lines.ok());
  ASSERT_GT(lines->size(), 2u);
  const TaskLogLine& marker = lines->front();
  EXPECT_EQ(marker.allocation_id, "");
  EXPECT_EQ(marker.stdtype, "stderr");
  EXPECT_NE(marker.text.find("oldest lines"), std::string::npos) << marker.text;
  EXPECT_NE(marker.text.find("retention_policy.log_max_task_bytes"), std::string::npos);
  uint64_t held_text = 0;
  for (size_t i = 1; i < lines->size(); ++i) {
    held_text += (*lines)[i].text.size();
    if (i > 1) {
      EXPECT_EQ((*lines)[i].seq, (*lines)[i - 1].seq + 1);
    }
  }
  EXPECT_EQ(lines->back().seq, seq - 1);
  EXPECT_EQ(held_text, (*store)->TaskBytes("loud"));
  const uint64_t removed = static_cast<uint64_t>(lines->at(1).seq);
  EXPECT_NE(marker.text.find("the " + std::to_string(removed / 1000) + ","), std::string::npos)
      << "the marker counts the " << removed << " removed lines: " << marker.text;
  EXPECT_EQ(held_text + removed * 100, printed);

  // The counts survive a reopen; a delete takes the task's bytes off the total.
  store->reset();
  store = TaskLogStore::Open(dir.Sub("tasklogs"));
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->TaskBytes("loud"), held_text);
  EXPECT_EQ((*store)->TotalBytes(), held_text + 400u * 5);
  ASSERT_TRUE((*store)->Delete("loud").ok());
  EXPECT_EQ((*store)->TaskBytes("loud"), 0u);
  EXPECT_EQ((*store)->TotalBytes(), 400u * 5);
}

class MirroredTaskLogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = testing::MockKafkaCluster::Start(3);
    ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateCairnTopics("logs").ok());
  }

  Result<std::unique_ptr<TaskLogStore>> OpenMirrored(const std::string& dir) {
    return TaskLogStore::OpenMirrored(dir, kafka_->bootstraps(), "logs", 20s);
  }

  // Every record on the topic, read as a consumer without Cairn's store would.
  std::vector<events::TaskLogRecord> TopicRecords() {
    auto reader = TaskLogTopicReader::Open(kafka_->bootstraps(), "logs", {});
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<events::TaskLogRecord> records;
    if (!reader.ok()) return records;
    for (int polls = 0; polls < 100 && !(*reader)->ReachedEndsAtOpen(); ++polls) {
      auto batch = (*reader)->Next(100, 200ms);
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok()) break;
      records.insert(records.end(), batch->begin(), batch->end());
    }
    EXPECT_TRUE((*reader)->ReachedEndsAtOpen());
    return records;
  }

  std::unique_ptr<testing::MockKafkaCluster> kafka_;
  TempDir dir_;
};

TEST_F(MirroredTaskLogStoreTest, ALostDirectoryIsRebuiltFromTheTopic) {
  const std::string data = dir_.Sub("tasklogs");
  {
    auto store = OpenMirrored(data);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Append(kLines).ok());
    ASSERT_TRUE((*store)->Append({kLines[1]}).ok());
    // Served from the local copy at once: an agent's lines are readable when its POST returns.
    EXPECT_EQ(ReadAll(**store, "train"), kTrainLines);
  }
  // The topic holds every accepted line, the retry included.
  std::vector<events::TaskLogRecord> records = TopicRecords();
  EXPECT_EQ(records.size(), kLines.size() + 1);

  std::filesystem::remove_all(data);
  auto rebuilt = OpenMirrored(data);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_EQ(ReadAll(**rebuilt, "train"), kTrainLines);
  EXPECT_EQ(ReadAll(**rebuilt, "other").size(), 1u);
}

TEST_F(MirroredTaskLogStoreTest, ACacheCatchesUpWithLinesAnotherMasterAccepted) {
  const std::string first = dir_.Sub("first");
  {
    auto store = OpenMirrored(first);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Append({kLines[0], kLines[1]}).ok());
  }
  {
    // Another master (its own directory) takes over and accepts more lines.
    auto other = OpenMirrored(dir_.Sub("second"));
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    EXPECT_EQ(ReadAll(**other, "train").size(), 2u);
    ASSERT_TRUE((*other)->Append({kLines[2], kLines[3]}).ok());
  }
  auto again = OpenMirrored(first);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ReadAll(**again, "train"), kTrainLines);
}

TEST_F(MirroredTaskLogStoreTest, ALineTheTopicRefusedIsNotStored) {
  auto store = OpenMirrored(dir_.Sub("tasklogs"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // A permanent refusal from the brokers (no retry can fix it).
  kafka_->PushProduceErrors(
      std::vector<rd_kafka_resp_err_t>(10, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
  Status appended = (*store)->Append({kLines[0]});
  EXPECT_EQ(appended.code(), StatusCode::kUnavailable) << appended.ToString();
  EXPECT_TRUE(ReadAll(**store, "train").empty());
  kafka_->ClearRequestErrors(testing::kProduceApiKey);
  // The agent sends the line again; now it is durable, then stored.
  ASSERT_TRUE((*store)->Append({kLines[0]}).ok());
  EXPECT_EQ(ReadAll(**store, "train").size(), 1u);
}

TEST_F(MirroredTaskLogStoreTest, AMissingTopicIsAClearError) {
  auto store = TaskLogStore::OpenMirrored(dir_.Sub("tasklogs"), kafka_->bootstraps(), "absent");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("absent.tasklogs"), std::string::npos)
      << store.status().ToString();
}

}  // namespace
}  // namespace cairn
