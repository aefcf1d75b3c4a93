// An in-process Kafka cluster for tests and local runs: librdkafka's mock brokers speak the real
// protocol on 127.0.0.1 (ports chosen by the OS) and take injected faults. Limits (librdkafka
// 2.0.2): no Admin API (create topics here), about 5 MiB kept per partition (older data is
// dropped silently), no transactional isolation or fencing.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::testing {

// Kafka protocol request types, for the request-error helpers.
inline constexpr int16_t kProduceApiKey = 0;
inline constexpr int16_t kFetchApiKey = 1;

// Driven from one thread (the test's); the brokers run on librdkafka's own threads.
class MockKafkaCluster {
 public:
  // Starts `broker_count` brokers, with ids 1..broker_count.
  static Result<std::unique_ptr<MockKafkaCluster>> Start(int broker_count = 3);
  ~MockKafkaCluster();
  MockKafkaCluster(const MockKafkaCluster&) = delete;
  MockKafkaCluster& operator=(const MockKafkaCluster&) = delete;

  // "127.0.0.1:PORT,..." for bootstrap.servers.
  const std::string& bootstraps() const { return bootstraps_; }
  int broker_count() const { return broker_count_; }

  // Creates a topic; `replication_factor` 0 means min(3, broker_count()).
  Status CreateTopic(const std::string& name, int partitions, int replication_factor = 0);
  // Cairn's topics for `topic_prefix`: "<prefix>.events" (1 partition), "<prefix>.placements"
  // (`placement_partitions`) and "<prefix>.tasklogs" (`task_log_partitions`).
  Status CreateCairnTopics(const std::string& topic_prefix, int placement_partitions = 4,
                           int task_log_partitions = 4);

  // The next requests of type `api_key`, on any broker, fail with `errors` in turn.
  // RD_KAFKA_RESP_ERR__TRANSPORT makes the broker drop the connection instead.
  void PushRequestErrors(int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors);
  void PushProduceErrors(const std::vector<rd_kafka_resp_err_t>& errors) {
    PushRequestErrors(kProduceApiKey, errors);
  }
  void PushFetchErrors(const std::vector<rd_kafka_resp_err_t>& errors) {
    PushRequestErrors(kFetchApiKey, errors);
  }
  // The same on one broker only, whose stack can then be watched until it drains. Each answer
  // is also held back `delay_ms`: with RD_KAFKA_RESP_ERR_NO_ERROR, the request is served (a
  // produce is written) but its answer comes late, or never if the broker goes down meanwhile.
  Status PushBrokerRequestErrors(int32_t broker_id, int16_t api_key,
                                 const std::vector<rd_kafka_resp_err_t>& errors, int delay_ms = 0);
  Result<size_t> BrokerRequestErrorsLeft(int32_t broker_id, int16_t api_key);
  void ClearRequestErrors(int16_t api_key);

  // A down broker drops its connections and refuses new ones; its partitions keep their leader
  // (the mock elects none), so they are unavailable until SetBrokerUp.
  Status SetBrokerDown(int32_t broker_id);
  Status SetBrokerUp(int32_t broker_id);
  // Moves a partition's leadership (its data stays: the mock keeps one log per partition).
  Status SetPartitionLeader(const std::string& topic, int32_t partition, int32_t broker_id);
  // The leader the cluster's metadata names for a partition.
  Result<int32_t> PartitionLeader(const std::string& topic, int32_t partition);

  // For any fault the helpers above do not cover.
  rd_kafka_mock_cluster_t* raw() { return cluster_; }

 private:
  MockKafkaCluster() = default;

  int broker_count_ = 0;
  rd_kafka_t* host_ = nullptr;  // the client instance that runs the mock brokers
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstraps_;
  rd_kafka_t* metadata_client_ = nullptr;  // created on first PartitionLeader
};

}  // namespace cairn::testing
