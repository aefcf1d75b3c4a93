#include "tests/events_kafka/kafka_test_util.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>

#include "events/envelope_util.h"

namespace cairn::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct ClientDeleter {
  void operator()(rd_kafka_t* client) const {
    rd_kafka_consumer_close(client);
    rd_kafka_destroy(client);
  }
};

}  // namespace

Envelope MakeEvent(const std::string& event_id) {
  Envelope event;
  event.set_event_id(event_id);
  event.set_time_unix_micros(1'700'000'000'000'000);
  event.set_actor("system:kafka-test");
  event.set_correlation_id("correlation-" + event_id);
  event.set_writer_epoch(1);
  event.set_schema_version(kSchemaVersion);
  event.mutable_agent_enabled()->set_agent_id("agent-for-" + event_id);
  return event;
}

Envelope MakeOrder(const std::string& event_id, const std::string& agent_id, bool kill) {
  Envelope event = MakeEvent(event_id);
  if (kill) {
    auto* order = event.mutable_kill_requested();
    order->set_task_id("task-" + event_id);
    order->set_allocation_id("allocation-" + event_id);
    order->set_agent_id(agent_id);
    order->set_reason("test kill");
  } else {
    auto* order = event.mutable_allocation_assigned();
    order->set_task_id("task-" + event_id);
    order->set_allocation_id("allocation-" + event_id);
    order->set_agent_id(agent_id);
    order->add_slot_ids(0);
    order->set_reason("test placement");
  }
  return event;
}

Result<std::vector<Envelope>> ReadRange(EventLog& log, uint64_t from, uint64_t end,
                                        milliseconds timeout) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<LogReader> reader, log.OpenReader(from));
  std::vector<Envelope> events;
  const steady_clock::time_point deadline = steady_clock::now() + timeout;
  while (reader->position() < end) {
    if (steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded("read " + std::to_string(events.size()) + " of " +
                                      std::to_string(end - from) + " events");
    }
    CAIRN_ASSIGN_OR_RETURN(std::vector<Envelope> more,
                           reader->Next(end - reader->position(), milliseconds(500)));
    for (Envelope& event : more) events.push_back(std::move(event));
  }
  return events;
}

std::vector<std::string> IdsOf(const std::vector<Envelope>& events) {
  std::vector<std::string> ids;
  for (const Envelope& event : events) ids.push_back(event.event_id());
  return ids;
}

Result<std::vector<std::pair<std::string, Envelope>>> ReadWholeTopic(const std::string& brokers,
                                                                     const std::string& topic,
                                                                     milliseconds timeout) {
  char error[512];
  rd_kafka_conf_t* config = rd_kafka_conf_new();
  const std::pair<const char*, const char*> settings[] = {
      {"bootstrap.servers", brokers.c_str()},
      {"group.id", "cairn-test-topic-reader"},
      {"enable.auto.commit", "false"},
      {"allow.auto.create.topics", "false"},
  };
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(config, name, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(config);
      return Status::InvalidArgument(error);
    }
  }
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_CONSUMER, config, error, sizeof error);
  if (raw == nullptr) {
    rd_kafka_conf_destroy(config);
    return Status::Internal(error);
  }
  std::unique_ptr<rd_kafka_t, ClientDeleter> consumer(raw);
  rd_kafka_poll_set_consumer(raw);

  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(raw, 1, nullptr, &metadata, 10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("no metadata");
  }
  std::vector<int32_t> partitions;
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    if (topic != metadata->topics[t].topic) continue;
    for (int p = 0; p < metadata->topics[t].partition_cnt; ++p) {
      partitions.push_back(metadata->topics[t].partitions[p].id);
    }
  }
  rd_kafka_metadata_destroy(metadata);
  if (partitions.empty()) return Status::NotFound("no topic " + topic);

  // Per partition, the end offset to read up to.
  std::map<int32_t, int64_t> end_of;
  size_t unfinished = 0;
  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(8);
  for (int32_t partition : partitions) {
    int64_t low = 0;
    int64_t high = 0;
    if (rd_kafka_query_watermark_offsets(raw, topic.c_str(), partition, &low, &high, 10'000) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_partition_list_destroy(assignment);
      return Status::Unavailable("no watermarks");
    }
    end_of[partition] = high;
    if (high > low) ++unfinished;
    rd_kafka_topic_partition_list_add(assignment, topic.c_str(), partition)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_resp_err_t assigned = rd_kafka_assign(raw, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Unavailable("assign failed");

  std::map<int32_t, std::vector<std::pair<std::string, Envelope>>> by_partition;
  const steady_clock::time_point deadline = steady_clock::now() + timeout;
  while (unfinished > 0) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) {
      return Status::DeadlineExceeded(std::to_string(unfinished) + " partitions of " + topic +
                                      " not read to their end");
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(raw, static_cast<int>(left.count()));
    if (message == nullptr) continue;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
        message->offset < end_of[message->partition]) {
      Envelope value;
      if (!value.ParseFromArray(message->payload, static_cast<int>(message->len))) {
        rd_kafka_message_destroy(message);
        return Status::Corruption("a record of " + topic + " is not an Envelope");
      }
      std::string key = message->key == nullptr
                            ? std::string()
                            : std::string(static_cast<const char*>(message->key), message->key_len);
      by_partition[message->partition].emplace_back(std::move(key), std::move(value));
      if (message->offset + 1 == end_of[message->partition]) --unfinished;
    }
    rd_kafka_message_destroy(message);
  }
  std::vector<std::pair<std::string, Envelope>> records;
  for (auto& [partition, partition_records] : by_partition) {
    for (auto& record : partition_records) records.push_back(std::move(record));
  }
  return records;
}

}  // namespace cairn::testing
