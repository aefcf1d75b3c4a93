#include "events/kafka/kafka_client.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

namespace cairn::kafka {
namespace {

struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* metadata) const {
    rd_kafka_metadata_destroy(metadata);
  }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
struct NewTopicDeleter {
  void operator()(rd_kafka_NewTopic_t* topic) const { rd_kafka_NewTopic_destroy(topic); }
};
struct AdminOptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* options) const {
    rd_kafka_AdminOptions_destroy(options);
  }
};

struct ConfigResourceDeleter {
  void operator()(rd_kafka_ConfigResource_t* resource) const {
    rd_kafka_ConfigResource_destroy(resource);
  }
};

int TimeoutMs(std::chrono::milliseconds timeout) { return static_cast<int>(timeout.count()); }

}  // namespace

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
          .count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, std::numeric_limits<int>::max()));
}

Settings CommonSettings(const std::string& brokers) {
  return {{"bootstrap.servers", brokers},
          {"client.id", "cairn"},
          // A request whose answer was lost (a broker that went away mid-request without
          // closing the connection) would otherwise hold a reader or the producer for 60 s.
          // Fetches are answered within fetch.wait.max.ms, so 10 s is generous.
          {"socket.timeout.ms", "10000"}};
}

Settings IdempotentProducerSettings(const std::string& brokers) {
  Settings settings = CommonSettings(brokers);
  settings.insert(settings.end(), {
                                      // A producer's metadata request would otherwise let the
                                      // broker create a topic with its default partition count
                                      // (consumers default to false already).
                                      {"allow.auto.create.topics", "false"},
                                      {"enable.idempotence", "true"},
                                      // A message that fails for good makes the producer
                                      // fail fatally rather than send what follows it, so a
                                      // failed append leaves a prefix (EventLog::Append).
                                      {"enable.gapless.guarantee", "true"},
                                      {"acks", "all"},
                                      {"linger.ms", "1"},
                                      {"message.timeout.ms", "60000"},
                                  });
  return settings;
}

Settings ConsumerSettings(const std::string& brokers) {
  Settings settings = CommonSettings(brokers);
  settings.insert(settings.end(), {
                                      {"enable.auto.commit", "false"},
                                      {"enable.auto.offset.store", "false"},
                                      {"enable.partition.eof", "false"},
                                      // Bounds how long a tailing consumer lags a produce
                                      // when the broker holds fetches for the full wait
                                      // (librdkafka's mock does; a real broker answers as
                                      // soon as data arrives). Placements cross two such
                                      // hops (relay, agent), so this is kept small.
                                      {"fetch.wait.max.ms", "10"},
                                  });
  return settings;
}

Result<Config> NewConfig(const Settings& settings) {
  Config config(rd_kafka_conf_new());
  char error[512];
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(config.get(), name.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      return Status::InvalidArgument("kafka setting " + name + "=" + value + ": " + error);
    }
  }
  return config;
}

Result<Client> NewConsumer(const Settings& settings) {
  CAIRN_ASSIGN_OR_RETURN(Config config, NewConfig(settings));
  CAIRN_ASSIGN_OR_RETURN(Client consumer, NewClient(RD_KAFKA_CONSUMER, std::move(config)));
  rd_kafka_poll_set_consumer(consumer.get());
  return consumer;
}

Result<Client> NewClient(rd_kafka_type_t type, Config config) {
  char error[512];
  rd_kafka_t* client = rd_kafka_new(type, config.get(), error, sizeof error);
  if (client == nullptr) {
    return Status::InvalidArgument(std::string("kafka client: ") + error);
  }
  config.release();  // rd_kafka_new took ownership.
  return Client(client);
}

std::string ErrorText(rd_kafka_resp_err_t error) {
  return std::string(rd_kafka_err2name(error)) + " (" + rd_kafka_err2str(error) + ")";
}

Result<int> PartitionCount(rd_kafka_t* client, const std::string& topic) {
  // All topics rather than this one: a request naming the topic could make the broker
  // create it.
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t error =
      rd_kafka_metadata(client, 1, nullptr, &raw, TimeoutMs(kRequestTimeout));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("kafka: cannot read cluster metadata: " + ErrorText(error));
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> metadata(raw);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& entry = metadata->topics[i];
    if (topic != entry.topic) continue;
    if (entry.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) break;
    if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("kafka: topic " + topic + ": " + ErrorText(entry.err));
    }
    return entry.partition_cnt;
  }
  return Status::NotFound("kafka: topic " + topic + " does not exist");
}

// The number of brokers when the cluster's controller is one of them, 0 when it names none that
// is live (Admin requests would then only wait out their timeouts), or why it cannot be asked.
Result<int> LiveControllerBrokers(rd_kafka_t* client, const std::string& what) {
  const int32_t controller = rd_kafka_controllerid(client, TimeoutMs(kRequestTimeout));
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t metadata_error =
      rd_kafka_metadata(client, 0, nullptr, &raw, TimeoutMs(kRequestTimeout));
  if (metadata_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(what + "cannot read cluster metadata: " + ErrorText(metadata_error));
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> metadata(raw);
  for (int i = 0; i < metadata->broker_cnt; ++i) {
    if (metadata->brokers[i].id == controller) return metadata->broker_cnt;
  }
  return 0;
}

Status CreateTopic(rd_kafka_t* client, const std::string& topic, int partitions) {
  const std::string what = "kafka: cannot create topic " + topic + ": ";
  // Without a live controller the Admin request would only wait out its timeout. Some clusters
  // never have one (librdkafka's mock names broker 0, which does not exist).
  CAIRN_ASSIGN_OR_RETURN(int brokers, LiveControllerBrokers(client, what));
  if (brokers == 0) {
    return Status::Unavailable(what +
                               "the cluster names no live controller; create the topic "
                               "beforehand");
  }
  char error[512];
  // Replicated as widely as the cluster allows (up to 3); with 3 or more brokers an acks=all
  // write needs two replicas, so one lost broker loses no acknowledged event.
  const int replication = std::min(3, brokers);
  std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDeleter> new_topic(rd_kafka_NewTopic_new(
      topic.c_str(), partitions, std::max(1, replication), error, sizeof error));
  if (!new_topic) return Status::InvalidArgument("kafka: topic " + topic + ": " + error);
  if (replication >= 3 && rd_kafka_NewTopic_set_config(new_topic.get(), "min.insync.replicas",
                                                       "2") != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Internal("kafka: topic " + topic + ": cannot set min.insync.replicas");
  }
  // Cairn's topics are logs of record: nothing is deleted by age or size, nothing compacted.
  for (const auto& [name, value] :
       {std::pair{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"}}) {
    if (rd_kafka_NewTopic_set_config(new_topic.get(), name, value) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Internal("kafka: topic " + topic + ": cannot set " + name);
    }
  }
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options(
      rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), TimeoutMs(kRequestTimeout), error,
                                                sizeof error) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      rd_kafka_AdminOptions_set_operation_timeout(options.get(), TimeoutMs(kRequestTimeout), error,
                                                  sizeof error) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Internal(std::string("kafka admin options: ") + error);
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(client));
  rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
  rd_kafka_CreateTopics(client, topics, 1, options.get(), queue.get());
  // The admin request carries its own timeouts; the margin only guards against a lost result.
  std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), TimeoutMs(3 * kRequestTimeout)));
  if (!event) return Status::Unavailable(what + "no answer from the cluster");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(what + rd_kafka_event_error_string(event.get()));
  }
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  if (result == nullptr) return Status::Internal(what + "unexpected admin result type");
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
  for (size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t topic_error = rd_kafka_topic_result_error(results[i]);
    if (topic_error == RD_KAFKA_RESP_ERR_NO_ERROR ||
        topic_error == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      continue;
    }
    const char* message = rd_kafka_topic_result_error_string(results[i]);
    return Status::Unavailable(what + ErrorText(topic_error) +
                               (message != nullptr ? std::string(": ") + message : ""));
  }
  return Status::Ok();
}

Result<int> EnsureTopic(rd_kafka_t* client, const std::string& topic, int partitions_if_created,
                        bool may_create) {
  Result<int> count = PartitionCount(client, topic);
  if (count.ok() || count.status().code() != StatusCode::kNotFound || !may_create) return count;
  CAIRN_RETURN_IF_ERROR(CreateTopic(client, topic, partitions_if_created));
  return PartitionCount(client, topic);
}

Result<std::map<std::string, std::string>> DescribeTopicConfig(
    rd_kafka_t* client, const std::string& topic, const std::vector<std::string>& names) {
  const std::string what = "kafka: cannot read the settings of topic " + topic + ": ";
  CAIRN_ASSIGN_OR_RETURN(int brokers, LiveControllerBrokers(client, what));
  if (brokers == 0) {
    return Status::NotSupported(what + "the cluster names no live controller to ask");
  }
  char error[512];
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options(
      rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), TimeoutMs(kRequestTimeout), error,
                                                sizeof error) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Internal(std::string("kafka admin options: ") + error);
  }
  std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDeleter> resource(
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str()));
  for (const auto& name : names) {
    // Asking for the names keeps the answer small; unknown names are simply absent.
    rd_kafka_ConfigResource_set_config(resource.get(), name.c_str(), nullptr);
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(client));
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  rd_kafka_DescribeConfigs(client, resources, 1, options.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), TimeoutMs(3 * kRequestTimeout)));
  if (!event) return Status::Unavailable(what + "no answer from the cluster");
  const rd_kafka_resp_err_t event_error = rd_kafka_event_error(event.get());
  if (event_error == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE) {
    return Status::NotSupported(what + "the cluster does not support DescribeConfigs");
  }
  if (event_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(what + rd_kafka_event_error_string(event.get()));
  }
  const rd_kafka_DescribeConfigs_result_t* result =
      rd_kafka_event_DescribeConfigs_result(event.get());
  if (result == nullptr) return Status::Internal(what + "unexpected admin result type");
  size_t count = 0;
  const rd_kafka_ConfigResource_t** described =
      rd_kafka_DescribeConfigs_result_resources(result, &count);
  std::map<std::string, std::string> values;
  for (size_t i = 0; i < count; ++i) {
    const rd_kafka_resp_err_t resource_error = rd_kafka_ConfigResource_error(described[i]);
    if (resource_error == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE ||
        resource_error == RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION) {
      return Status::NotSupported(what + ErrorText(resource_error));
    }
    if (resource_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(what + ErrorText(resource_error));
    }
    size_t entry_count = 0;
    const rd_kafka_ConfigEntry_t** entries =
        rd_kafka_ConfigResource_configs(described[i], &entry_count);
    for (size_t k = 0; k < entry_count; ++k) {
      const char* value = rd_kafka_ConfigEntry_value(entries[k]);
      values[rd_kafka_ConfigEntry_name(entries[k])] = value != nullptr ? value : "";
    }
  }
  return values;
}

bool IsPermanentConsumerError(rd_kafka_resp_err_t error) {
  switch (error) {
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return true;
    default:
      return false;
  }
}

void PollBatch(rd_kafka_t* consumer, size_t max_taken, std::chrono::milliseconds wait,
               const std::function<Polled(const rd_kafka_message_t& message)>& take) {
  const auto deadline = std::chrono::steady_clock::now() + std::min(wait, kLongestWait);
  size_t taken = 0;
  while (taken < max_taken) {
    // Wait only for the first message taken; then take what has already been fetched.
    const int timeout_ms = taken == 0 ? RemainingMs(deadline) : 0;
    Message message(rd_kafka_consumer_poll(consumer, timeout_ms));
    if (!message) {
      if (timeout_ms == 0) return;
      continue;
    }
    // Transport errors and leader changes are retried by librdkafka itself.
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR && !IsPermanentConsumerError(message->err)) {
      continue;
    }
    switch (take(*message)) {
      case Polled::kTaken:
        ++taken;
        break;
      case Polled::kSkipped:
        break;
      case Polled::kStop:
        return;
    }
  }
}

}  // namespace cairn::kafka
