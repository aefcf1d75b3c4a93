// The task-log topic: a producer that waits for each request's records to be acknowledged, and
// an assign()ed reader over every partition.
#include "events/kafka/task_log_topic.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "base/log.h"
#include "events/kafka/kafka_client.h"

namespace cairn {
namespace {

using std::chrono::milliseconds;

// One Publish call's records in flight.
struct PublishTally {
  std::mutex mutex;
  std::condition_variable done;
  size_t outstanding = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
};

class KafkaTaskLogPublisher final : public TaskLogPublisher {
 public:
  static Result<std::unique_ptr<TaskLogPublisher>> Open(const std::string& brokers,
                                                        const std::string& topic_prefix);
  ~KafkaTaskLogPublisher() override {
    stopping_ = true;
    if (poller_.joinable()) poller_.join();
    // Every Publish waited for its reports, so nothing is outstanding; flush is a safeguard.
    if (producer_) {
      rd_kafka_flush(producer_.get(), static_cast<int>(kafka::kRequestTimeout.count()));
    }
  }

  Status Publish(const std::vector<events::TaskLogRecord>& records) override;

 private:
  explicit KafkaTaskLogPublisher(std::string topic) : topic_(std::move(topic)) {}
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque);
  Status Enqueue(const std::string& key, const std::string& value, PublishTally* tally);

  const std::string topic_;
  kafka::Client producer_;
  std::atomic<bool> stopping_{false};
  // Serves delivery reports.
  std::thread poller_;
  // Wakes a publisher that found the producer's queue full.
  std::mutex delivered_mutex_;
  std::condition_variable delivered_;
};

Result<std::unique_ptr<TaskLogPublisher>> KafkaTaskLogPublisher::Open(
    const std::string& brokers, const std::string& topic_prefix) {
  if (brokers.empty()) return Status::InvalidArgument("task-log topic: no brokers given");
  if (topic_prefix.empty()) return Status::InvalidArgument("task-log topic: empty topic prefix");
  std::unique_ptr<KafkaTaskLogPublisher> publisher(
      new KafkaTaskLogPublisher(TaskLogTopicName(topic_prefix)));
  kafka::Settings settings = kafka::CommonSettings(brokers);
  settings.insert(settings.end(), {
                                      // Never a broker-made topic with a default layout.
                                      {"allow.auto.create.topics", "false"},
                                      {"acks", "all"},
                                      // Not idempotent: a line is named by (task, allocation,
                                      // seq), so a duplicate or a reordering costs nothing,
                                      // and there is no fatal state to recover from.
                                      {"enable.idempotence", "false"},
                                      {"linger.ms", "5"},
                                      {"message.timeout.ms", "60000"},
                                      // The Java client's key hashing, so that any Kafka tool
                                      // agrees on a task's partition.
                                      {"partitioner", "murmur2_random"},
                                  });
  CAIRN_ASSIGN_OR_RETURN(kafka::Config config, kafka::NewConfig(settings));
  rd_kafka_conf_set_dr_msg_cb(config.get(), &KafkaTaskLogPublisher::OnDelivery);
  CAIRN_ASSIGN_OR_RETURN(publisher->producer_,
                         kafka::NewClient(RD_KAFKA_PRODUCER, std::move(config)));
  CAIRN_RETURN_IF_ERROR(kafka::EnsureTopic(publisher->producer_.get(), publisher->topic_,
                                           kDefaultTaskLogPartitions, /*may_create=*/true)
                            .status());
  KafkaTaskLogPublisher* self = publisher.get();
  publisher->poller_ = std::thread([self] {
    while (!self->stopping_.load()) {
      rd_kafka_poll(self->producer_.get(), 100);
      self->delivered_.notify_all();
    }
  });
  return std::unique_ptr<TaskLogPublisher>(std::move(publisher));
}

void KafkaTaskLogPublisher::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* tally = static_cast<PublishTally*>(message->_private);
  std::lock_guard lock(tally->mutex);
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR &&
      tally->first_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
    tally->first_error = message->err;
  }
  // Notified under the lock: once it is released, the publisher may free the tally.
  if (--tally->outstanding == 0) tally->done.notify_all();
}

Status KafkaTaskLogPublisher::Enqueue(const std::string& key, const std::string& value,
                                      PublishTally* tally) {
  for (;;) {
    rd_kafka_resp_err_t error = rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()),
        RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(tally), RD_KAFKA_V_END);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
    if (error == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
      return Status::ResourceExhausted(
          "task-log topic " + topic_ +
          ": a line is too large for the brokers: " + kafka::ErrorText(error));
    }
    if (error != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Status::Unavailable("task-log topic " + topic_ +
                                 ": cannot enqueue: " + kafka::ErrorText(error));
    }
    // Full: deliveries make room (they time out at message.timeout.ms at worst).
    std::unique_lock lock(delivered_mutex_);
    delivered_.wait_for(lock, milliseconds(100));
  }
}

Status KafkaTaskLogPublisher::Publish(const std::vector<events::TaskLogRecord>& records) {
  if (records.empty()) return Status::Ok();
  PublishTally tally;
  tally.outstanding = records.size();
  size_t enqueued = 0;
  Status enqueue_status;
  for (; enqueued < records.size(); ++enqueued) {
    enqueue_status =
        Enqueue(records[enqueued].task_id(), records[enqueued].SerializeAsString(), &tally);
    if (!enqueue_status.ok()) break;
  }
  {
    // Every enqueued record gets exactly one delivery report (message.timeout.ms bounds it).
    std::unique_lock lock(tally.mutex);
    tally.outstanding -= records.size() - enqueued;
    tally.done.wait(lock, [&] { return tally.outstanding == 0; });
  }
  if (tally.first_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("task-log topic " + topic_ + ": a line was not acknowledged: " +
                               kafka::ErrorText(tally.first_error));
  }
  return enqueue_status;
}

class KafkaTaskLogTopicReader final : public TaskLogTopicReader {
 public:
  static Result<std::unique_ptr<TaskLogTopicReader>> Open(const std::string& brokers,
                                                          const std::string& topic_prefix,
                                                          const TopicPositions& from);
  ~KafkaTaskLogTopicReader() override { rd_kafka_consumer_close(consumer_.get()); }

  Result<std::vector<events::TaskLogRecord>> Next(size_t max_records, milliseconds wait) override;
  const TopicPositions& positions() const override { return positions_; }
  bool ReachedEndsAtOpen() const override {
    return std::all_of(ends_at_open_.begin(), ends_at_open_.end(),
                       [&](const auto& end) { return positions_.at(end.first) >= end.second; });
  }
  const std::map<int32_t, int64_t>& skipped() const override { return skipped_; }

 private:
  explicit KafkaTaskLogTopicReader(std::string topic) : topic_(std::move(topic)) {}

  const std::string topic_;
  kafka::Client consumer_;
  TopicPositions positions_;
  TopicPositions ends_at_open_;
  std::map<int32_t, int64_t> skipped_;
  Status deferred_error_;  // met after some records were taken; returned by the next Next
};

Result<std::unique_ptr<TaskLogTopicReader>> KafkaTaskLogTopicReader::Open(
    const std::string& brokers, const std::string& topic_prefix, const TopicPositions& from) {
  if (brokers.empty()) return Status::InvalidArgument("task-log topic: no brokers given");
  std::unique_ptr<KafkaTaskLogTopicReader> reader(
      new KafkaTaskLogTopicReader(TaskLogTopicName(topic_prefix)));
  const std::string& topic = reader->topic_;
  kafka::Settings settings = kafka::ConsumerSettings(brokers);
  settings.insert(settings.end(), {
                                      // assign() needs a group handle; nothing joins or commits.
                                      {"group.id", "cairn-task-log-reader"},
                                      // A position retention deleted: the oldest retained.
                                      {"auto.offset.reset", "earliest"},
                                  });
  CAIRN_ASSIGN_OR_RETURN(reader->consumer_, kafka::NewConsumer(settings));
  CAIRN_ASSIGN_OR_RETURN(int partitions, kafka::PartitionCount(reader->consumer_.get(), topic));
  kafka::PartitionList assignment(rd_kafka_topic_partition_list_new(partitions));
  for (int32_t partition = 0; partition < partitions; ++partition) {
    int64_t low = 0;
    int64_t high = 0;
    rd_kafka_resp_err_t error =
        rd_kafka_query_watermark_offsets(reader->consumer_.get(), topic.c_str(), partition, &low,
                                         &high, static_cast<int>(kafka::kRequestTimeout.count()));
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("task-log topic " + topic +
                                 ": cannot read the offsets of "
                                 "partition " +
                                 std::to_string(partition) + ": " + kafka::ErrorText(error));
    }
    auto stored = from.find(partition);
    int64_t start = stored == from.end() ? low : stored->second;
    if (start > high) {
      // Past the end: the topic is not the one the positions were read from (it was recreated).
      log::Warn("task_logs",
                "{} partition {} ends at {} but the stored position is {}; reading "
                "it again from its oldest record",
                topic, partition, high, start);
      start = low;
    }
    if (start < low) {
      reader->skipped_[partition] = low - start;
      start = low;
    }
    reader->positions_[partition] = start;
    reader->ends_at_open_[partition] = high;
    rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), partition)->offset = start;
  }
  rd_kafka_resp_err_t error = rd_kafka_assign(reader->consumer_.get(), assignment.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("task-log topic " + topic +
                               ": cannot assign a reader: " + kafka::ErrorText(error));
  }
  return std::unique_ptr<TaskLogTopicReader>(std::move(reader));
}

Result<std::vector<events::TaskLogRecord>> KafkaTaskLogTopicReader::Next(size_t max_records,
                                                                         milliseconds wait) {
  if (!deferred_error_.ok()) return std::exchange(deferred_error_, Status::Ok());
  std::vector<events::TaskLogRecord> records;
  Status error;
  kafka::PollBatch(consumer_.get(), max_records, wait, [&](const rd_kafka_message_t& message) {
    if (message.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      error =
          Status::Unavailable("task-log topic " + topic_ + ": " + kafka::ErrorText(message.err) +
                              ": " + rd_kafka_message_errstr(&message));
      return kafka::Polled::kStop;
    }
    int64_t& position = positions_[message.partition];
    if (message.offset < position) return kafka::Polled::kSkipped;
    position = message.offset + 1;
    events::TaskLogRecord record;
    if (!record.ParseFromArray(message.payload, static_cast<int>(message.len))) {
      log::Warn("task_logs", "skipping the record at {}/{}@{}: it is not a TaskLogRecord", topic_,
                message.partition, message.offset);
      return kafka::Polled::kSkipped;
    }
    records.push_back(std::move(record));
    return kafka::Polled::kTaken;
  });
  if (!error.ok()) {
    if (records.empty()) return error;
    deferred_error_ = std::move(error);  // After the records already taken.
  }
  return records;
}

}  // namespace

std::string TaskLogTopicName(const std::string& topic_prefix) { return topic_prefix + ".tasklogs"; }

Result<std::unique_ptr<TaskLogPublisher>> TaskLogPublisher::Open(const std::string& brokers,
                                                                 const std::string& topic_prefix) {
  return KafkaTaskLogPublisher::Open(brokers, topic_prefix);
}

Result<std::unique_ptr<TaskLogTopicReader>> TaskLogTopicReader::Open(
    const std::string& brokers, const std::string& topic_prefix, const TopicPositions& from) {
  return KafkaTaskLogTopicReader::Open(brokers, topic_prefix, from);
}

}  // namespace cairn
