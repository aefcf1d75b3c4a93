// Consumers without Cairn code, as docs/events.md tells them to read: a record of the events topic
// and of the task-log topic read by kcat and decoded by protoc with the schema `cairn replay
// schema` writes (the same bytes the build installs), and the example Python consumer
// (examples/gpu_hours) whose GPU-hours must equal `cairn replay usage`'s and a count by hand.
// Real processes (cairn, kcat, protoc, python3) against librdkafka's mock cluster on loopback.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "base/files.h"
#include "events/event_schema.h"
#include "events/kafka/kafka_log.h"
#include "events/kafka/task_log_topic.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/replay/usage_events.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FinishedProcess;
using testing::RunToEnd;
using testing::TempDir;

// Single quotes for a shell word.
std::string Quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

FinishedProcess Shell(const std::string& command) {
  return RunToEnd({"/bin/bash", "-o", "pipefail", "-c", command}, 60s);
}

std::string ReadFileOrFail(const std::string& path) {
  auto content = ReadWholeFile(path);
  EXPECT_TRUE(content.ok()) << content.status().ToString();
  return content.ok() ? *content : std::string();
}

// Writes the schema as a consumer gets it: `cairn replay schema > FILE`.
std::string WriteSchemaWithCairn(const TempDir& dir) {
  const std::string path = dir.Sub("events.desc");
  FinishedProcess run =
      Shell(Quoted(testing::BinaryPath("cairn")) + " replay schema > " + Quoted(path));
  EXPECT_EQ(run.exit_code, 0) << run.Text();
  return path;
}

// kcat reading `topic` to its end, quiet: append the offset and format options.
std::string Kcat(const testing::MockKafkaCluster& kafka, const std::string& topic) {
  return std::string(CAIRN_KCAT) + " -q -C -b " + kafka.bootstraps() + " -t " + topic + " -e";
}

// `kcat` (with its options) piping one record's bare value into protoc, which decodes it as
// cairn.events.`message` with the descriptor set at `schema`: what docs/events.md shows.
FinishedProcess DecodeWithProtoc(const std::string& kcat, const std::string& message,
                                 const std::string& schema) {
  return Shell(kcat + " -c 1 -D '' | " + CAIRN_PROTOC + " --decode=cairn.events." + message +
               " --descriptor_set_in=" + Quoted(schema));
}

std::unique_ptr<testing::MockKafkaCluster> StartKafka(const std::string& topic_prefix) {
  auto kafka = testing::MockKafkaCluster::Start(3);
  EXPECT_TRUE(kafka.ok()) << kafka.status().ToString();
  if (!kafka.ok()) return nullptr;
  Status topics = (*kafka)->CreateCairnTopics(topic_prefix);
  EXPECT_TRUE(topics.ok()) << topics.ToString();
  return std::move(*kafka);
}

TEST(EventSchemaTest, CairnWritesTheInstalledDescriptorSet) {
  TempDir dir;
  const std::string written = ReadFileOrFail(WriteSchemaWithCairn(dir));
  const std::string built = ReadFileOrFail(CAIRN_EVENTS_DESCRIPTOR_SET);
  ASSERT_FALSE(built.empty());
  EXPECT_EQ(written, built) << "cairn replay schema differs from the installed events.desc";
  EXPECT_EQ(std::string(EventSchemaDescriptorSet()), built);
}

TEST(EventSchemaTest, TheDescriptorSetDescribesEveryEventThisBuildWrites) {
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(std::string(EventSchemaDescriptorSet())));
  google::protobuf::DescriptorPool pool;
  for (const auto& file : set.file()) ASSERT_NE(pool.BuildFile(file), nullptr) << file.name();
  const auto* shipped = pool.FindMessageTypeByName("cairn.events.Envelope");
  ASSERT_NE(shipped, nullptr);
  const auto* compiled = events::Envelope::descriptor();
  ASSERT_EQ(shipped->field_count(), compiled->field_count());
  for (int i = 0; i < compiled->field_count(); ++i) {
    const auto* field = compiled->field(i);
    const auto* same = shipped->FindFieldByNumber(field->number());
    ASSERT_NE(same, nullptr) << field->name();
    EXPECT_EQ(same->name(), field->name());
    EXPECT_EQ(same->type(), field->type()) << field->name();
  }
  EXPECT_NE(pool.FindMessageTypeByName("cairn.events.TaskLogRecord"), nullptr);
}

// docs/events.md promises a row for every event type: "| NUMBER | `Name` | ...".
TEST(EventSchemaTest, DocsListEveryEventTypeWithItsFieldNumber) {
  const std::string docs = ReadFileOrFail(std::string(CAIRN_SOURCE_DIR) + "/docs/events.md");
  std::set<std::pair<int, std::string>> listed;
  static const std::regex kRow(R"(^\| (\d{3}) \| `([A-Za-z]+)` \|)");
  std::istringstream lines(docs);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, kRow)) listed.emplace(std::stoi(match[1]), match[2]);
  }
  const auto* payload = events::Envelope::descriptor()->FindOneofByName("payload");
  ASSERT_NE(payload, nullptr);
  std::set<std::pair<int, std::string>> expected;
  for (int i = 0; i < payload->field_count(); ++i) {
    expected.emplace(payload->field(i)->number(), payload->field(i)->message_type()->name());
  }
  EXPECT_EQ(listed, expected);
}

TEST(KafkaRecordDecodingTest, AnEventReadByKcatDecodesWithTheShippedSchema) {
  ASSERT_STRNE(CAIRN_KCAT, "") << "kcat is missing: install it (ops/install-deps.sh)";
  auto kafka = StartKafka("decode");
  ASSERT_NE(kafka, nullptr);
  auto log = OpenKafkaLog(kafka->bootstraps(), "decode", /*read_only=*/false);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  testing::UsageHistory history;
  history.Claim(0, 3).Submit(1, "kcat-task-7f3a", "alice", 2, 4);
  ASSERT_TRUE((*log)->Append(history.events()).ok());
  TempDir dir;
  const std::string schema = WriteSchemaWithCairn(dir);
  const std::string kcat = Kcat(*kafka, "decode.events");

  // Records have no key and all sit in partition 0, one per offset.
  FinishedProcess layout = Shell(kcat + " -o beginning -f '%p %o key=%k\\n'");
  ASSERT_EQ(layout.exit_code, 0) << layout.Text();
  EXPECT_EQ(layout.lines, (std::vector<std::string>{"0 0 key=", "0 1 key="}));

  // The value is a bare Envelope: the second record is the TaskSubmitted.
  FinishedProcess decoded = DecodeWithProtoc(kcat + " -o 1", "Envelope", schema);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.Text();
  const std::string text = decoded.Text();
  EXPECT_NE(text.find("event_id: \"usage-1\""), std::string::npos) << text;
  EXPECT_NE(text.find("writer_epoch: 3"), std::string::npos) << text;
  EXPECT_NE(text.find("task_submitted {"), std::string::npos) << text;
  EXPECT_NE(text.find("task_id: \"kcat-task-7f3a\""), std::string::npos) << text;
  EXPECT_NE(text.find("user: \"alice\""), std::string::npos) << text;
  EXPECT_NE(text.find("workspace_id: 2"), std::string::npos) << text;
  // The log assigns offsets; the record does not carry its own.
  EXPECT_EQ(text.find("offset:"), std::string::npos) << text;
}

TEST(KafkaRecordDecodingTest, ATaskLogLineReadByKcatDecodesWithTheShippedSchema) {
  ASSERT_STRNE(CAIRN_KCAT, "") << "kcat is missing: install it (ops/install-deps.sh)";
  auto kafka = StartKafka("decode");
  ASSERT_NE(kafka, nullptr);
  auto publisher = TaskLogPublisher::Open(kafka->bootstraps(), "decode");
  ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
  std::vector<events::TaskLogRecord> lines(3);
  for (int seq = 0; seq < 3; ++seq) {
    lines[seq].set_task_id("logged-task");
    lines[seq].set_allocation_id("logged-task.1");
    lines[seq].set_agent_id("agent-9");
    lines[seq].set_seq(seq);
    lines[seq].set_timestamp_unix_micros(1'700'000'000'000'000 + seq);
    lines[seq].set_stdtype("stdout");
    lines[seq].set_log("line " + std::to_string(seq) + "\n");
  }
  ASSERT_TRUE((*publisher)->Publish(lines).ok());
  TempDir dir;
  const std::string schema = WriteSchemaWithCairn(dir);
  const std::string kcat = Kcat(*kafka, "decode.tasklogs");

  // Keyed by task: one task's lines share one partition, in order.
  FinishedProcess keys = Shell(kcat + " -o beginning -f '%p %k\\n'");
  ASSERT_EQ(keys.exit_code, 0) << keys.Text();
  ASSERT_EQ(keys.lines.size(), 3u) << keys.Text();
  const std::string partition = keys.lines[0].substr(0, keys.lines[0].find(' '));
  for (const auto& line : keys.lines) EXPECT_EQ(line, partition + " logged-task");

  FinishedProcess decoded =
      DecodeWithProtoc(kcat + " -p " + partition + " -o 2", "TaskLogRecord", schema);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.Text();
  const std::string text = decoded.Text();
  EXPECT_NE(text.find("task_id: \"logged-task\""), std::string::npos) << text;
  EXPECT_NE(text.find("seq: 2"), std::string::npos) << text;
  EXPECT_NE(text.find("log: \"line 2\\n\""), std::string::npos) << text;
}

// A history whose GPU-hours are counted by hand below: three users, three workspaces, a
// preempted trial whose experiment moves, a gang, a fenced master's work, an open allocation.
testing::UsageHistory HandCountedHistory() {
  testing::UsageHistory history;
  history.Claim(0, 1)
      .Workspace(1, 2, "vision")
      .Workspace(1, 3, "speech")
      .Submit(2, "cmd-a", "alice", 2, 2)
      .Assign(3, "cmd-a", "cmd-a.1", "agent-1", 2)
      .Start(4, "cmd-a", "cmd-a.1", "agent-1")
      .Submit(10, "trial-1-1", "bob", 3, 4, "experiment-1")
      .Assign(10, "trial-1-1", "trial-1-1.1", "agent-2", 4)
      .Submit(20, "gang", "alice", 3, 16)
      .AssignGang(20, "gang", "gang.1", {{"agent-3", 8}, {"agent-4", 8}})
      .PartExit(920, "gang", "gang.1", "agent-4")
      .Release(1810, "trial-1-1", "trial-1-1.1")
      .Exit(1820, "gang", "gang.1")
      .Assign(1900, "trial-1-1", "trial-1-1.2", "agent-2", 4)
      .Exit(2800, "trial-1-1", "trial-1-1.2")
      .Claim(3000, 2)
      .By(1)
      .Submit(3001, "ghost", "mallory", 2, 8)
      .Assign(3001, "ghost", "ghost.1", "agent-1", 8)
      .By(2)
      .Move(3100, "experiment-1", 2)
      .Submit(3200, "trial-1-2", "bob", 2, 1, "experiment-1")
      .Assign(3200, "trial-1-2", "trial-1-2.1", "agent-2", 1)
      .Exit(3603, "cmd-a", "cmd-a.1")
      .Submit(4000, "still-running", "carol", 0, 2)
      .Assign(4000, "still-running", "still-running.1", "agent-1", 2)
      .Submit(4100, "notebook", "carol", 0, 0)
      .Assign(4100, "notebook", "notebook.1", "agent-1", 0)
      .Exit(4200, "notebook", "notebook.1")
      .By(1)
      .Exit(6601, "ghost", "ghost.1")
      .By(2)
      .Exit(6800, "trial-1-2", "trial-1-2.1")
      .Other(6900);
  return history;
}

TEST(GpuHoursConsumerTest, ThePythonConsumerAgreesWithReplayAndWithACountByHand) {
  ASSERT_STRNE(CAIRN_CONSUMER_PYTHON, "")
      << "no python3 with confluent_kafka and google.protobuf was found at configure time: "
         "install python3-confluent-kafka and python3-protobuf (ops/install-deps.sh)";
  auto kafka = StartKafka("usage");
  ASSERT_NE(kafka, nullptr);
  const testing::UsageHistory history = HandCountedHistory();
  {
    auto log = OpenKafkaLog(kafka->bootstraps(), "usage", /*read_only=*/false);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE((*log)->Append(history.events()).ok());
  }
  TempDir dir;
  const std::string schema = WriteSchemaWithCairn(dir);

  FinishedProcess consumer = RunToEnd(
      {CAIRN_CONSUMER_PYTHON, std::string(CAIRN_SOURCE_DIR) + "/examples/gpu_hours/gpu_hours.py",
       "--brokers", kafka->bootstraps(), "--topic-prefix", "usage", "--descriptor-set", schema,
       "--format", "json"},
      60s);
  ASSERT_EQ(consumer.exit_code, 0) << consumer.Text();
  ASSERT_FALSE(consumer.lines.empty());
  const json from_consumer = json::parse(consumer.lines.back(), nullptr, false);
  ASSERT_FALSE(from_consumer.is_discarded()) << consumer.Text();

  FinishedProcess replay =
      RunToEnd({testing::BinaryPath("cairn"), "replay", "usage", "--kafka", kafka->bootstraps(),
                "--topic-prefix", "usage", "--format", "json"},
               60s);
  ASSERT_EQ(replay.exit_code, 0) << replay.Text();
  const json from_replay = json::parse(replay.lines.back(), nullptr, false);
  ASSERT_FALSE(from_replay.is_discarded()) << replay.Text();

  EXPECT_EQ(from_consumer, from_replay)
      << "consumer: " << from_consumer.dump(2) << "\nreplay: " << from_replay.dump(2);

  // By hand, in slot-seconds:
  //   alice: cmd-a 2 × (3603 − 3) = 7200 in vision; the gang, agent-4 8 × (920 − 20) = 7200
  //          and agent-3 8 × (1820 − 20) = 14400 in speech: 28800 s = 8 h, 2 allocations.
  //   bob:   trial-1-1 4 × (1810 − 10) = 7200 and 4 × (2800 − 1900) = 3600 in speech; after
  //          the move, trial-1-2 1 × (6800 − 3200) = 3600 in vision: 14400 s = 4 h, 3.
  //   carol: the notebook holds no slot: 0 h, 1 allocation; still-running is open.
  //   mallory: written by the fenced master of epoch 1 only: absent.
  auto user = [](const std::string& name, int64_t allocations, int64_t seconds) {
    return json{{"user", name},
                {"allocations", allocations},
                {"slotMicroseconds", seconds * 1'000'000},
                {"gpuHours", seconds / 3600.0}};
  };
  auto workspace = [](int32_t id, const std::string& name, int64_t allocations, int64_t seconds) {
    return json{{"workspaceId", id},
                {"name", name},
                {"allocations", allocations},
                {"slotMicroseconds", seconds * 1'000'000},
                {"gpuHours", seconds / 3600.0}};
  };
  const json expected = {
      {"logEnd", history.events().size()},
      {"users", {user("alice", 2, 28800), user("bob", 3, 14400), user("carol", 1, 0)}},
      {"workspaces",
       {workspace(1, "Uncategorized", 1, 0), workspace(2, "vision", 2, 10800),
        workspace(3, "speech", 3, 32400)}},
      {"openAllocations", 1}};
  EXPECT_EQ(from_replay, expected) << from_replay.dump(2);
  EXPECT_EQ(from_consumer, expected) << from_consumer.dump(2);

  // The table is the same figures for people.
  FinishedProcess table = RunToEnd(
      {CAIRN_CONSUMER_PYTHON, std::string(CAIRN_SOURCE_DIR) + "/examples/gpu_hours/gpu_hours.py",
       "--brokers", kafka->bootstraps(), "--topic-prefix", "usage", "--descriptor-set", schema},
      60s);
  ASSERT_EQ(table.exit_code, 0) << table.Text();
  EXPECT_NE(table.Text().find("8.000000"), std::string::npos) << table.Text();
  EXPECT_NE(table.Text().find("3 speech"), std::string::npos) << table.Text();
}

TEST(GpuHoursConsumerTest, AnEmptyLogHasNoUsageAndABadSchemaIsNamed) {
  ASSERT_STRNE(CAIRN_CONSUMER_PYTHON, "");
  auto kafka = StartKafka("usage");
  ASSERT_NE(kafka, nullptr);
  TempDir dir;
  const std::vector<std::string> consumer = {
      CAIRN_CONSUMER_PYTHON,
      std::string(CAIRN_SOURCE_DIR) + "/examples/gpu_hours/gpu_hours.py",
      "--brokers",
      kafka->bootstraps(),
      "--topic-prefix",
      "usage",
      "--format",
      "json",
      "--descriptor-set"};
  std::vector<std::string> argv = consumer;
  argv.push_back(WriteSchemaWithCairn(dir));
  FinishedProcess empty = RunToEnd(argv, 60s);
  ASSERT_EQ(empty.exit_code, 0) << empty.Text();
  EXPECT_EQ(json::parse(empty.lines.back(), nullptr, false), (json{{"logEnd", 0},
                                                                   {"users", json::array()},
                                                                   {"workspaces", json::array()},
                                                                   {"openAllocations", 0}}))
      << empty.Text();

  // A file that is not a descriptor set is a clear error, not a trace from deep inside.
  const std::string not_a_schema = dir.Sub("not.desc");
  ASSERT_TRUE(WriteFileAtomically(not_a_schema, "this is not a descriptor set").ok());
  argv = consumer;
  argv.push_back(not_a_schema);
  FinishedProcess bad = RunToEnd(argv, 60s);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.Text().find("is not a FileDescriptorSet"), std::string::npos) << bad.Text();
  EXPECT_EQ(bad.Text().find("Traceback"), std::string::npos) << bad.Text();
}

}  // namespace
}  // namespace cairn
