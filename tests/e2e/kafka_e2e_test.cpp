// End to end on the Kafka backend: librdkafka's mock cluster (real protocol over loopback) in
// this process, cairn-master and cairn-agent as real child processes. Agents get their orders
// from the placements topic. With injected faults, no event is lost or duplicated.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "tests/e2e/cluster_fixture.h"
#include "tests/events_kafka/mock_cluster.h"

namespace cairn::testing {
namespace {

std::unique_ptr<MockKafkaCluster> StartKafka() {
  auto kafka = MockKafkaCluster::Start(3);
  EXPECT_TRUE(kafka.ok()) << kafka.status().ToString();
  EXPECT_TRUE((*kafka)->CreateCairnTopics("cairn", 4).ok());
  return std::move(*kafka);
}

std::string KafkaConfig(const MockKafkaCluster& kafka) {
  return "log:\n  backend: kafka\n  brokers: " + kafka.bootstraps() + "\n  topic_prefix: cairn\n";
}

std::map<std::string, int> CountPerTask(const std::vector<json>& events, const char* type) {
  std::map<std::string, int> counts;
  for (const auto& e : events) {
    if (e.contains(type)) counts[e[type]["taskId"]]++;
  }
  return counts;
}

// The log's invariants: contiguous offsets from 0 and every event id once.
void ExpectWholeLog(const std::vector<json>& events) {
  std::set<std::string> ids;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["offset"], std::to_string(i));
    EXPECT_TRUE(ids.insert(events[i]["eventId"]).second) << "duplicate " << events[i].dump();
  }
}

TEST(KafkaEndToEnd, CommandsRunWithTheLogAndPlacementsOnKafka) {
  auto kafka = StartKafka();
  Cluster cluster(KafkaConfig(*kafka));
  cluster.StartMaster();
  cluster.StartAgent("kafka-agent", 2);
  json master = cluster.Get("/api/v1/master");
  EXPECT_NE(master["cairn"]["log"].get<std::string>().find("kafka"), std::string::npos);

  std::string echo = cluster.Submit({{"entrypoint", {"echo", "hi"}}});
  EXPECT_EQ(cluster.FollowLogs(echo), "hi\n");
  std::string failing = cluster.Submit({{"entrypoint", "exit 4"}});
  cluster.FollowLogs(failing);
  EXPECT_EQ(cluster.Get("/api/v1/tasks/" + failing)["task"]["cairn"]["exitCode"], 4);
  std::string sleeper = cluster.Submit({{"entrypoint", {"sleep", "600"}}});
  cluster.WaitForEvent([&](const json& e) {
    return e.contains("taskStarted") && e["taskStarted"]["taskId"] == sleeper;
  });
  auto client = cluster.Client();
  ASSERT_EQ(client.Request("POST", "/api/v1/commands/" + sleeper + "/kill")->status, 200);
  cluster.FollowLogs(sleeper);
  EXPECT_EQ(cluster.Get("/api/v1/tasks/" + sleeper)["task"]["cairn"]["signal"], 15);

  auto events = cluster.AllEvents();
  ExpectWholeLog(events);
  for (const auto& id : {echo, failing, sleeper}) {
    EXPECT_EQ(CountPerTask(events, "taskStarted")[id], 1);
    EXPECT_EQ(CountPerTask(events, "taskExited")[id], 1);
  }
}

TEST(KafkaEndToEnd, AnExperimentRunsWithItsLogOnKafka) {
  auto kafka = StartKafka();
  Cluster cluster(KafkaConfig(*kafka));
  cluster.StartMaster();
  cluster.StartAgent("kafka-agent", 2);
  const std::string config =
      "name: on-kafka\n"
      "entrypoint: model_def:SpiralTrial\n"
      "hyperparameters:\n"
      "  global_batch_size: 32\n"
      "  learning_rate: {type: categorical, vals: [0.1, 0.3]}\n"
      "  hidden_size: 8\n"
      "  l2: 0.0001\n"
      "  momentum: 0.9\n"
      "searcher: {name: grid, metric: validation_loss, max_length: {batches: 200}}\n"
      "checkpoint_storage: {type: shared_fs, host_path: " +
      cluster.dir().Sub("checkpoints") + "}\n";
  Reply created = cluster.CreateExperiment(config, ExamplePath("spiral-mlp"));
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const int64_t id = created.body["experiment"]["id"];
  cluster.WaitForEvent([&](const json& e) {
    return e.contains("experimentStateChanged") &&
           e["experimentStateChanged"]["experimentId"] == std::to_string(id) &&
           e["experimentStateChanged"]["state"] == "EXPERIMENT_STATE_COMPLETED";
  });
  auto events = cluster.AllEvents();
  ExpectWholeLog(events);
  json trials = cluster.Get("/api/v1/experiments/" + std::to_string(id) +
                            "/trials?minOffset=" + std::to_string(events.size() - 1))["trials"];
  ASSERT_EQ(trials.size(), 2u);
  for (const auto& trial : trials) {
    EXPECT_EQ(trial["state"], "STATE_COMPLETED") << trial.dump();
    EXPECT_EQ(trial["totalBatchesProcessed"], 200) << trial.dump();
  }
}

TEST(KafkaEndToEnd, BrokerFaultsLoseAndDuplicateNothing) {
  auto kafka = StartKafka();
  Cluster cluster(KafkaConfig(*kafka));
  cluster.StartMaster();
  cluster.StartAgent("kafka-agent", 4);
  auto leader = kafka->PartitionLeader("cairn.events", 0);
  ASSERT_TRUE(leader.ok());

  // Submits with an idempotency key and retries until the master answers 200: a write that
  // failed mid-flight may have landed, and the key makes the retry harmless.
  auto submit = [&](int n) {
    auto client = cluster.Client();
    std::string body = json{{"config", {{"entrypoint", "echo job " + std::to_string(n)}}}}.dump();
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto response = client.Request("POST", "/api/v1/commands", body,
                                     {{"Idempotency-Key", "job-" + std::to_string(n)}},
                                     std::chrono::seconds(90));
      if (response.ok() && response->status == 200) {
        return json::parse(response->body)["command"]["id"].get<std::string>();
      }
    }
    ADD_FAILURE() << "job " << n << " never accepted";
    return std::string();
  };

  std::vector<std::string> ids;
  for (int n = 0; n < 30; ++n) {
    if (n == 5) {
      kafka->PushProduceErrors({RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                                RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR__TRANSPORT,
                                RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION});
    }
    if (n == 12) {
      // The events partition's leader goes away while a submission is in flight.
      ASSERT_TRUE(kafka->SetBrokerDown(*leader).ok());
      std::string id;
      std::thread in_flight([&] { id = submit(n); });
      ASSERT_TRUE(kafka->SetBrokerUp(*leader).ok());
      in_flight.join();
      ids.push_back(id);
      continue;
    }
    if (n == 20) {
      kafka->PushFetchErrors(
          {RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION});
    }
    ids.push_back(submit(n));
  }
  std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), ids.size());
  for (size_t n = 0; n < ids.size(); ++n) {
    EXPECT_EQ(cluster.FollowLogs(ids[n]), "job " + std::to_string(n) + "\n");
  }
  auto events = cluster.AllEvents();
  ExpectWholeLog(events);
  auto submitted = CountPerTask(events, "taskSubmitted");
  auto started = CountPerTask(events, "taskStarted");
  auto exited = CountPerTask(events, "taskExited");
  EXPECT_EQ(submitted.size(), ids.size()) << "one submission per idempotency key";
  for (const auto& id : ids) {
    EXPECT_EQ(submitted[id], 1) << id;
    EXPECT_EQ(started[id], 1) << id;
    EXPECT_EQ(exited[id], 1) << id;
  }
}

TEST(KafkaEndToEnd, TaskLogsSurviveTheLossOfTheMastersDisk) {
  auto kafka = StartKafka();
  Cluster cluster(KafkaConfig(*kafka));
  cluster.StartMaster();
  cluster.StartAgent("kafka-agent", 2);
  const std::string chatty =
      cluster.Submit({{"entrypoint", "printf 'one\\ntwo\\n'; echo three >&2; echo four"}});
  const std::string quiet = cluster.Submit({{"entrypoint", {"echo", "alone"}}});
  const std::string chatty_logs = cluster.FollowLogs(chatty);
  for (const char* line : {"one\n", "two\n", "three\n", "four\n"}) {
    EXPECT_NE(chatty_logs.find(line), std::string::npos) << chatty_logs;
  }
  EXPECT_EQ(cluster.FollowLogs(quiet), "alone\n");

  // The master's task-log directory is lost: the lines come back from the topic.
  cluster.StopMaster(SIGTERM);
  std::filesystem::remove_all(cluster.data_dir() + "/tasklogs");
  cluster.StartMaster();
  EXPECT_EQ(cluster.FollowLogs(chatty), chatty_logs);
  EXPECT_EQ(cluster.FollowLogs(quiet), "alone\n");
}

TEST(KafkaEndToEnd, TheExampleConsumerCountsWhatReplayCounts) {
  ASSERT_STRNE(CAIRN_CONSUMER_PYTHON, "")
      << "install python3-confluent-kafka and python3-protobuf (ops/install-deps.sh)";
  auto kafka = StartKafka();
  Cluster cluster(KafkaConfig(*kafka));
  cluster.StartMaster();
  cluster.StartAgent("kafka-agent", 2);
  for (const std::string& id : {cluster.Submit({{"entrypoint", {"echo", "first"}}}),
                                cluster.Submit({{"entrypoint", {"echo", "second"}}})}) {
    cluster.FollowLogs(id);
  }
  cluster.StopMaster(SIGTERM);

  const std::string schema = cluster.dir().Sub("events.desc");
  FinishedProcess written =
      RunToEnd({"/bin/sh", "-c", "\"$0\" replay schema > \"$1\"", BinaryPath("cairn"), schema},
               std::chrono::seconds(60));
  ASSERT_EQ(written.exit_code, 0) << written.Text();
  FinishedProcess consumer =
      RunToEnd({CAIRN_CONSUMER_PYTHON, ExamplePath("gpu_hours") + "/gpu_hours.py", "--brokers",
                kafka->bootstraps(), "--descriptor-set", schema, "--format", "json"},
               std::chrono::seconds(60));
  ASSERT_EQ(consumer.exit_code, 0) << consumer.Text();
  auto replay =
      cluster.RunCairn({"replay", "usage", "--kafka", kafka->bootstraps(), "--format", "json"});
  ASSERT_FALSE(replay.empty());
  const json from_replay = json::parse(replay.back());
  EXPECT_EQ(json::parse(consumer.lines.back()), from_replay);
  // Both commands ran on one slot each, for the time between their placement and their exit.
  ASSERT_EQ(from_replay["users"].size(), 1u) << from_replay.dump();
  EXPECT_EQ(from_replay["users"][0]["user"], "determined");
  EXPECT_EQ(from_replay["users"][0]["allocations"], 2);
  EXPECT_GT(from_replay["users"][0]["slotMicroseconds"].get<int64_t>(), 0);
  EXPECT_EQ(from_replay["openAllocations"], 0);
}

}  // namespace
}  // namespace cairn::testing
