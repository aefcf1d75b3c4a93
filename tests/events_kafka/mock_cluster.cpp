#include "tests/events_kafka/mock_cluster.h"

#include <algorithm>
#include <utility>

namespace cairn::testing {
namespace {

constexpr int kMetadataTimeoutMs = 10'000;

std::string ErrorText(rd_kafka_resp_err_t error) {
  return std::string(rd_kafka_err2name(error)) + " (" + rd_kafka_err2str(error) + ")";
}

Status FromMockError(rd_kafka_resp_err_t error, const std::string& what) {
  if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  return Status::InvalidArgument("kafka mock: " + what + ": " + ErrorText(error));
}

// A client of `type` with `settings`, or nullptr with the reason in `error`.
rd_kafka_t* NewClient(rd_kafka_type_t type,
                      const std::vector<std::pair<std::string, std::string>>& settings,
                      std::string* error) {
  char message[512];
  rd_kafka_conf_t* config = rd_kafka_conf_new();
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(config, name.c_str(), value.c_str(), message, sizeof message) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(config);
      *error = message;
      return nullptr;
    }
  }
  rd_kafka_t* client = rd_kafka_new(type, config, message, sizeof message);
  if (client == nullptr) {
    rd_kafka_conf_destroy(config);
    *error = message;
  }
  return client;
}

}  // namespace

Result<std::unique_ptr<MockKafkaCluster>> MockKafkaCluster::Start(int broker_count) {
  if (broker_count < 1) return Status::InvalidArgument("kafka mock: needs at least one broker");
  std::unique_ptr<MockKafkaCluster> mock(new MockKafkaCluster());
  mock->broker_count_ = broker_count;
  std::string error;
  // log_level 0 silences the host's "No bootstrap.servers configured" warning.
  mock->host_ = NewClient(RD_KAFKA_PRODUCER, {{"log_level", "0"}}, &error);
  if (mock->host_ == nullptr) return Status::Internal("kafka mock: host client: " + error);
  mock->cluster_ = rd_kafka_mock_cluster_new(mock->host_, broker_count);
  if (mock->cluster_ == nullptr) return Status::Internal("kafka mock: cannot start the brokers");
  mock->bootstraps_ = rd_kafka_mock_cluster_bootstraps(mock->cluster_);
  return mock;
}

MockKafkaCluster::~MockKafkaCluster() {
  if (metadata_client_ != nullptr) rd_kafka_destroy(metadata_client_);
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (host_ != nullptr) rd_kafka_destroy(host_);
}

Status MockKafkaCluster::CreateTopic(const std::string& name, int partitions,
                                     int replication_factor) {
  if (replication_factor == 0) replication_factor = std::min(3, broker_count_);
  return FromMockError(
      rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, replication_factor),
      "create topic " + name);
}

Status MockKafkaCluster::CreateCairnTopics(const std::string& topic_prefix,
                                           int placement_partitions, int task_log_partitions) {
  CAIRN_RETURN_IF_ERROR(CreateTopic(topic_prefix + ".events", 1));
  CAIRN_RETURN_IF_ERROR(CreateTopic(topic_prefix + ".placements", placement_partitions));
  return CreateTopic(topic_prefix + ".tasklogs", task_log_partitions);
}

void MockKafkaCluster::PushRequestErrors(int16_t api_key,
                                         const std::vector<rd_kafka_resp_err_t>& errors) {
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
}

Status MockKafkaCluster::PushBrokerRequestErrors(int32_t broker_id, int16_t api_key,
                                                 const std::vector<rd_kafka_resp_err_t>& errors,
                                                 int delay_ms) {
  // The C API takes (error, rtt) pairs as varargs; push them one at a time.
  for (rd_kafka_resp_err_t error : errors) {
    CAIRN_RETURN_IF_ERROR(FromMockError(rd_kafka_mock_broker_push_request_error_rtts(
                                            cluster_, broker_id, api_key, 1, error, delay_ms),
                                        "push an error on broker " + std::to_string(broker_id)));
  }
  return Status::Ok();
}

Result<size_t> MockKafkaCluster::BrokerRequestErrorsLeft(int32_t broker_id, int16_t api_key) {
  size_t count = 0;
  CAIRN_RETURN_IF_ERROR(
      FromMockError(rd_kafka_mock_broker_error_stack_cnt(cluster_, broker_id, api_key, &count),
                    "error stack of broker " + std::to_string(broker_id)));
  return count;
}

void MockKafkaCluster::ClearRequestErrors(int16_t api_key) {
  rd_kafka_mock_clear_request_errors(cluster_, api_key);
}

Status MockKafkaCluster::SetBrokerDown(int32_t broker_id) {
  return FromMockError(rd_kafka_mock_broker_set_down(cluster_, broker_id),
                       "set broker " + std::to_string(broker_id) + " down");
}

Status MockKafkaCluster::SetBrokerUp(int32_t broker_id) {
  return FromMockError(rd_kafka_mock_broker_set_up(cluster_, broker_id),
                       "set broker " + std::to_string(broker_id) + " up");
}

Status MockKafkaCluster::SetPartitionLeader(const std::string& topic, int32_t partition,
                                            int32_t broker_id) {
  return FromMockError(
      rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker_id),
      "move the leader of " + topic + "/" + std::to_string(partition));
}

Result<int32_t> MockKafkaCluster::PartitionLeader(const std::string& topic, int32_t partition) {
  if (metadata_client_ == nullptr) {
    std::string error;
    metadata_client_ = NewClient(RD_KAFKA_PRODUCER,
                                 {{"bootstrap.servers", bootstraps_},
                                  {"allow.auto.create.topics", "false"},
                                  {"log_level", "0"}},
                                 &error);
    if (metadata_client_ == nullptr) return Status::Internal("kafka mock: " + error);
  }
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t error =
      rd_kafka_metadata(metadata_client_, 1, nullptr, &metadata, kMetadataTimeoutMs);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("kafka mock: metadata: " + ErrorText(error));
  }
  Result<int32_t> leader =
      Status::NotFound("kafka mock: no partition " + topic + "/" + std::to_string(partition));
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    if (topic != metadata->topics[t].topic) continue;
    for (int p = 0; p < metadata->topics[t].partition_cnt; ++p) {
      if (metadata->topics[t].partitions[p].id == partition) {
        leader = metadata->topics[t].partitions[p].leader;
      }
    }
  }
  rd_kafka_metadata_destroy(metadata);
  return leader;
}

}  // namespace cairn::testing
