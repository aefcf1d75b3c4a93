// Internal to events/kafka: RAII handles, configuration and topic checks over librdkafka's C API,
// shared by the Kafka event log and the placement topic. Not part of Cairn's public surface.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::kafka {

struct ConfigDeleter {
  void operator()(rd_kafka_conf_t* config) const { rd_kafka_conf_destroy(config); }
};
struct ClientDeleter {
  void operator()(rd_kafka_t* client) const { rd_kafka_destroy(client); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using Config = std::unique_ptr<rd_kafka_conf_t, ConfigDeleter>;
using Client = std::unique_ptr<rd_kafka_t, ClientDeleter>;
using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

using Settings = std::vector<std::pair<std::string, std::string>>;

// How long topic look-ups, creations and watermark queries may take before Unavailable.
inline constexpr std::chrono::milliseconds kRequestTimeout{10'000};

// Caps a caller's wait so that now() + wait cannot overflow.
inline constexpr std::chrono::milliseconds kLongestWait{24 * 3600 * 1000};

// Milliseconds until `deadline`, as librdkafka's int timeouts take them (0 once it passed).
int RemainingMs(std::chrono::steady_clock::time_point deadline);

// Settings every Cairn client shares.
Settings CommonSettings(const std::string& brokers);

// The producer settings of both writers: idempotent, acks=all, a small linger, a message
// timeout long enough to ride out a broker restart or a leader election, and no broker-side
// topic auto-creation (the one-partition events topic must never get a default count).
Settings IdempotentProducerSettings(const std::string& brokers);

// Settings every Cairn consumer shares: manual offsets, no partition-EOF events, and a short
// fetch wait (see ConsumerSettings in kafka_client.cpp). Add group.id and offset reset.
Settings ConsumerSettings(const std::string& brokers);

// A configuration holding `settings`; InvalidArgument names the setting librdkafka refused.
Result<Config> NewConfig(const Settings& settings);

// A consumer from `settings`, with its errors routed through rd_kafka_consumer_poll (where the
// caller's poll loop sees them) instead of the main queue.
Result<Client> NewConsumer(const Settings& settings);

// A client of `type` built from `config` (consumed).
Result<Client> NewClient(rd_kafka_type_t type, Config config);

// "NAME (description)" for a librdkafka error code.
std::string ErrorText(rd_kafka_resp_err_t error);

// The number of partitions of `topic`: NotFound when it does not exist, Unavailable when the
// cluster cannot be asked.
Result<int> PartitionCount(rd_kafka_t* client, const std::string& topic);

// Creates `topic` through the Admin API (replication: the broker's default). An existing topic
// is not an error; a cluster without a live controller is Unavailable at once.
Status CreateTopic(rd_kafka_t* client, const std::string& topic, int partitions);

// The partition count of `topic`, creating it with `partitions_if_created` when it is missing
// and `may_create` holds.
Result<int> EnsureTopic(rd_kafka_t* client, const std::string& topic, int partitions_if_created,
                        bool may_create);

// The settings of `topic` named in `names` ("retention.ms", ...), as the brokers report them:
// NotSupported when the cluster has no DescribeConfigs (librdkafka's mock), Unavailable when it
// cannot be asked.
Result<std::map<std::string, std::string>> DescribeTopicConfig(
    rd_kafka_t* client, const std::string& topic, const std::vector<std::string>& names);

// True for consumer errors after which a reader cannot go on (unlike transport errors and
// leader changes, which librdkafka retries on its own).
bool IsPermanentConsumerError(rd_kafka_resp_err_t error);

// What a poll loop's handler made of a message.
enum class Polled { kTaken, kSkipped, kStop };

// The poll loop of the assign()ed readers: polls `consumer` until `take` took `max_taken`
// messages or says stop, waiting up to `wait` for the first message taken and then taking only
// what has already been fetched. Transient errors never reach `take`; messages and permanent
// errors (IsPermanentConsumerError: check `err`) do.
void PollBatch(rd_kafka_t* consumer, size_t max_taken, std::chrono::milliseconds wait,
               const std::function<Polled(const rd_kafka_message_t& message)>& take);

}  // namespace cairn::kafka
