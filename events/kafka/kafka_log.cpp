// The Kafka EventLog: one idempotent producer writing partition 0 of "<prefix>.events", and one
// assign()ed consumer (no group, no commits) per reader.
#include "events/kafka/kafka_log.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "base/log.h"
#include "events/kafka/kafka_client.h"

namespace cairn {
namespace {

using std::chrono::milliseconds;

constexpr int32_t kPartition = 0;
// How long a new reader waits for its partition's leader before assign(): no longer than the
// metadata tick it saves (then assign() looks on that tick, as before).
constexpr int kReaderMetadataTimeoutMs = 1000;

// How to make a topic keep every event, for the refusals below.
std::string KeepEverythingAdvice(const std::string& topic) {
  return "keep every event with retention.ms=-1, retention.bytes=-1 and cleanup.policy=delete "
         "(kafka-configs.sh --alter --entity-type topics --entity-name " +
         topic + " --add-config retention.ms=-1,retention.bytes=-1,cleanup.policy=delete)";
}

// The log is replayed from offset 0 at every start (there are no snapshots yet), so a topic that
// dropped its oldest events cannot rebuild the cluster, and one set up to drop them will lose
// history silently: both are refused with what to do. `strict` = also refuse settings that could
// lose events later (a writer); a reader only needs what is there now.
Status CheckTopicKeepsEveryEvent(rd_kafka_t* client, const std::string& topic, bool strict) {
  int64_t low = 0;
  int64_t high = 0;
  rd_kafka_resp_err_t error =
      rd_kafka_query_watermark_offsets(client, topic.c_str(), kPartition, &low, &high,
                                       static_cast<int>(kafka::kRequestTimeout.count()));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("kafka log " + topic +
                               ": cannot read its offsets: " + kafka::ErrorText(error));
  }
  if (low > 0) {
    return Status::FailedPrecondition(
        "kafka log " + topic + ": the brokers no longer hold offsets 0 to " +
        std::to_string(low - 1) + " (the first available offset is " + std::to_string(low) +
        ", the end " + std::to_string(high) +
        "): the topic's retention deleted them. Cairn rebuilds every state from offset 0, so it "
        "cannot run on (or rebuild from) this log: restore the missing events, or start on a new "
        "topic prefix, and " +
        KeepEverythingAdvice(topic));
  }
  auto settings = kafka::DescribeTopicConfig(client, topic,
                                             {"retention.ms", "retention.bytes", "cleanup.policy"});
  if (!settings.ok()) {
    // librdkafka's mock has no DescribeConfigs; the watermark check above still guards replay.
    log::Warn("kafka", "cannot verify that topic {} keeps every event ({}); {}", topic,
              settings.status().message(), KeepEverythingAdvice(topic));
    return Status::Ok();
  }
  std::string problems;
  for (const char* name : {"retention.ms", "retention.bytes"}) {
    auto value = settings->find(name);
    if (value != settings->end() && value->second != "-1") {
      problems += std::string(problems.empty() ? "" : ", ") + name + "=" + value->second;
    }
  }
  auto policy = settings->find("cleanup.policy");
  if (policy != settings->end() && policy->second.find("compact") != std::string::npos) {
    problems += std::string(problems.empty() ? "" : ", ") + "cleanup.policy=" + policy->second;
  }
  if (problems.empty()) return Status::Ok();
  const std::string message =
      "kafka log " + topic + " can lose events (" + problems + "): " + KeepEverythingAdvice(topic);
  if (!strict) {
    log::Warn("kafka", "{}", message);
    return Status::Ok();
  }
  return Status::FailedPrecondition(message);
}
class KafkaLogReader final : public LogReader {
 public:
  KafkaLogReader(kafka::Client consumer, std::string topic, uint64_t from)
      : consumer_(std::move(consumer)), topic_(std::move(topic)), position_(from) {}
  ~KafkaLogReader() override { rd_kafka_consumer_close(consumer_.get()); }

  Result<std::vector<Envelope>> Next(size_t max_events, milliseconds wait) override {
    // A broken reader stays broken: its consumer no longer fetches.
    if (!broken_.ok()) return broken_;
    std::vector<Envelope> events;
    kafka::PollBatch(consumer_.get(), max_events, wait, [&](const rd_kafka_message_t& message) {
      if (message.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const std::string what = "kafka log " + topic_ + ": reader at offset " +
                                 std::to_string(position_) + ": " + kafka::ErrorText(message.err) +
                                 ": " + rd_kafka_message_errstr(&message);
        bool out_of_range = message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
                            message.err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE;
        broken_ = out_of_range ? Status::NotFound(what +
                                                  " (before the oldest retained event, or "
                                                  "past the end)")
                               : Status::Unavailable(what);
        return kafka::Polled::kStop;
      }
      if (message.offset < static_cast<int64_t>(position_)) return kafka::Polled::kSkipped;
      if (message.offset > static_cast<int64_t>(position_)) {
        broken_ = Status::Corruption("kafka log " + topic_ + ": expected offset " +
                                     std::to_string(position_) + ", the topic gave " +
                                     std::to_string(message.offset));
        return kafka::Polled::kStop;
      }
      Envelope event;
      if (!event.ParseFromArray(message.payload, static_cast<int>(message.len))) {
        broken_ = Status::Corruption("kafka log " + topic_ + ": the record at offset " +
                                     std::to_string(position_) + " is not an Envelope");
        return kafka::Polled::kStop;
      }
      event.set_offset(position_++);
      events.push_back(std::move(event));
      return kafka::Polled::kTaken;
    });
    // Events already taken are returned; the error comes with the next call.
    if (events.empty() && !broken_.ok()) return broken_;
    return events;
  }

  uint64_t position() const override { return position_; }

 private:
  kafka::Client consumer_;
  const std::string topic_;
  uint64_t position_;
  Status broken_;
};

class KafkaEventLog final : public EventLog {
 public:
  static Result<std::unique_ptr<EventLog>> Open(const std::string& brokers,
                                                const std::string& topic_prefix, bool read_only);
  ~KafkaEventLog() override;

  Result<OffsetRange> Append(const std::vector<Envelope>& batch) override;
  Result<uint64_t> EndOffset() override;
  Result<std::unique_ptr<LogReader>> OpenReader(uint64_t from) override;
  std::string Describe() const override { return "kafka:" + brokers_ + "/" + topic_; }

  Status InjectFatalError(const std::string& reason);

 private:
  struct PendingAppend;
  // The per-message opaque of a produced event: which batch, which position in it.
  struct MessageTag {
    PendingAppend* append = nullptr;
    size_t index = 0;
  };

  KafkaEventLog(std::string brokers, std::string topic, bool read_only)
      : brokers_(std::move(brokers)), topic_(std::move(topic)), read_only_(read_only) {}

  static void OnDelivery(rd_kafka_t* client, const rd_kafka_message_t* message, void* opaque);
  void RecordDelivery(const rd_kafka_message_t& message);
  Status Enqueue(const std::string& value, MessageTag* tag);
  Status FatalError();

  const std::string brokers_;
  const std::string topic_;
  const bool read_only_;
  // The idempotent producer; when read-only, a bare consumer used for metadata and watermarks.
  kafka::Client client_;
  // Held while one batch is enqueued, so concurrent batches never interleave.
  std::mutex produce_mutex_;
  // Wakes an enqueuer that found the producer queue full.
  std::mutex delivered_mutex_;
  std::condition_variable delivered_;
  std::atomic<bool> stopping_{false};
  // Serves delivery reports, which therefore arrive one at a time in production order.
  std::thread poller_;
  // The offset the next delivered event gets, or -1 when unknown. librdkafka reports no offset
  // for a retried batch that the broker had already written; with one writer and in-order
  // delivery reports, it follows from the previous one. Touched by poller_ only (after Open).
  int64_t next_offset_ = -1;
};

struct KafkaEventLog::PendingAppend {
  explicit PendingAppend(size_t size)
      : tags(size),
        offsets(size, -1),
        errors(size, RD_KAFKA_RESP_ERR_NO_ERROR),
        outstanding(size) {}
  std::vector<MessageTag> tags;
  std::mutex mutex;
  std::condition_variable done;
  std::vector<int64_t> offsets;
  std::vector<rd_kafka_resp_err_t> errors;
  size_t outstanding;
};

Result<std::unique_ptr<EventLog>> KafkaEventLog::Open(const std::string& brokers,
                                                      const std::string& topic_prefix,
                                                      bool read_only) {
  if (brokers.empty()) return Status::InvalidArgument("kafka log: no brokers given");
  if (topic_prefix.empty()) return Status::InvalidArgument("kafka log: empty topic prefix");
  std::unique_ptr<KafkaEventLog> log(
      new KafkaEventLog(brokers, EventsTopicName(topic_prefix), read_only));
  if (read_only) {
    CAIRN_ASSIGN_OR_RETURN(kafka::Config config, kafka::NewConfig(kafka::CommonSettings(brokers)));
    CAIRN_ASSIGN_OR_RETURN(log->client_, kafka::NewClient(RD_KAFKA_CONSUMER, std::move(config)));
  } else {
    CAIRN_ASSIGN_OR_RETURN(kafka::Config config,
                           kafka::NewConfig(kafka::IdempotentProducerSettings(brokers)));
    rd_kafka_conf_set_dr_msg_cb(config.get(), &KafkaEventLog::OnDelivery);
    rd_kafka_conf_set_opaque(config.get(), log.get());
    CAIRN_ASSIGN_OR_RETURN(log->client_, kafka::NewClient(RD_KAFKA_PRODUCER, std::move(config)));
  }
  CAIRN_ASSIGN_OR_RETURN(int partitions,
                         kafka::EnsureTopic(log->client_.get(), log->topic_, 1, !read_only));
  if (partitions != 1) {
    return Status::InvalidArgument("kafka log: topic " + log->topic_ + " has " +
                                   std::to_string(partitions) +
                                   " partitions; the event log needs exactly one (total order)");
  }
  CAIRN_RETURN_IF_ERROR(CheckTopicKeepsEveryEvent(log->client_.get(), log->topic_, !read_only));
  if (!read_only) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
    log->next_offset_ = static_cast<int64_t>(end);
    KafkaEventLog* self = log.get();
    log->poller_ = std::thread([self] {
      while (!self->stopping_.load()) rd_kafka_poll(self->client_.get(), 100);
    });
  }
  return std::unique_ptr<EventLog>(std::move(log));
}

KafkaEventLog::~KafkaEventLog() {
  if (poller_.joinable()) {
    stopping_ = true;
    rd_kafka_yield(client_.get());
    poller_.join();
    // Every Append waited for its reports, so nothing is outstanding; flush is a safeguard.
    rd_kafka_flush(client_.get(), static_cast<int>(kafka::kRequestTimeout.count()));
  }
}

void KafkaEventLog::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  static_cast<KafkaEventLog*>(opaque)->RecordDelivery(*message);
}

void KafkaEventLog::RecordDelivery(const rd_kafka_message_t& message) {
  int64_t offset = -1;
  if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    offset = message.offset >= 0 ? message.offset : next_offset_;
    next_offset_ = offset >= 0 ? offset + 1 : -1;
  } else {
    next_offset_ = -1;  // A failed message may or may not have been written.
  }
  auto* tag = static_cast<MessageTag*>(message._private);
  {
    std::lock_guard lock(tag->append->mutex);
    tag->append->offsets[tag->index] = offset;
    tag->append->errors[tag->index] = message.err;
    // Notified under the lock: once it is released, the appender may free the batch.
    if (--tag->append->outstanding == 0) tag->append->done.notify_all();
  }
  delivered_.notify_all();
}

Status KafkaEventLog::FatalError() {
  char reason[512];
  rd_kafka_resp_err_t error = rd_kafka_fatal_error(client_.get(), reason, sizeof reason);
  if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  return Status::Unavailable("kafka log " + topic_ + ": the idempotent producer failed fatally (" +
                             kafka::ErrorText(error) + ": " + reason +
                             "); ordering can no longer be guaranteed, so it accepts no more "
                             "appends until the log is reopened");
}

Status KafkaEventLog::Enqueue(const std::string& value, MessageTag* tag) {
  rd_kafka_vu_t fields[5];
  fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  fields[0].u.cstr = topic_.c_str();
  fields[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  fields[1].u.i32 = kPartition;
  fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
  fields[2].u.mem.ptr = const_cast<char*>(value.data());
  fields[2].u.mem.size = value.size();
  fields[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  fields[3].u.i = RD_KAFKA_MSG_F_COPY;
  fields[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
  fields[4].u.ptr = tag;
  for (;;) {
    rd_kafka_error_t* error = rd_kafka_produceva(client_.get(), fields, 5);
    if (error == nullptr) return Status::Ok();
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    const std::string text = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    if (code == RD_KAFKA_RESP_ERR__FATAL) return FatalError();
    if (code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
      return Status::ResourceExhausted("kafka log " + topic_ + ": event too large: " + text);
    }
    if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Status::Unavailable("kafka log " + topic_ + ": cannot enqueue: " + text);
    }
    // Full: wait for deliveries to make room (they time out at message.timeout.ms at worst).
    std::unique_lock lock(delivered_mutex_);
    delivered_.wait_for(lock, milliseconds(100));
  }
}

Result<OffsetRange> KafkaEventLog::Append(const std::vector<Envelope>& batch) {
  if (read_only_) {
    return Status::FailedPrecondition("kafka log " + topic_ + " is open read-only");
  }
  if (batch.empty()) return Status::InvalidArgument("empty batch");
  CAIRN_RETURN_IF_ERROR(FatalError());

  std::vector<std::string> values(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    Envelope event = batch[i];
    event.clear_offset();
    if (!event.SerializeToString(&values[i])) {
      return Status::InvalidArgument("kafka log: event " + event.event_id() +
                                     " does not serialize");
    }
  }

  auto pending = std::make_unique<PendingAppend>(batch.size());
  size_t enqueued = 0;
  Status enqueue_status;
  {
    std::lock_guard lock(produce_mutex_);
    for (; enqueued < batch.size(); ++enqueued) {
      pending->tags[enqueued] = MessageTag{pending.get(), enqueued};
      enqueue_status = Enqueue(values[enqueued], &pending->tags[enqueued]);
      if (!enqueue_status.ok()) break;
    }
  }
  {
    // Every enqueued message gets exactly one delivery report (message.timeout.ms bounds it).
    std::unique_lock lock(pending->mutex);
    pending->outstanding -= batch.size() - enqueued;
    pending->done.wait(lock, [&] { return pending->outstanding == 0; });
  }

  for (size_t i = 0; i < enqueued; ++i) {
    const rd_kafka_resp_err_t error = pending->errors[i];
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (error == RD_KAFKA_RESP_ERR__FATAL) return FatalError();
    return Status::Unavailable("kafka log " + topic_ + ": event " + std::to_string(i + 1) + " of " +
                               std::to_string(batch.size()) +
                               " was not delivered: " + kafka::ErrorText(error) +
                               "; earlier events of the batch may have been written");
  }
  if (!enqueue_status.ok()) return enqueue_status;

  const std::vector<int64_t>& offsets = pending->offsets;
  auto known = std::find_if(offsets.begin(), offsets.end(), [](int64_t o) { return o >= 0; });
  if (known == offsets.end()) {
    return Status::Unavailable("kafka log " + topic_ +
                               ": the batch was written but the broker reported no offsets; "
                               "re-read from EndOffset()");
  }
  const int64_t first = *known - (known - offsets.begin());
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] >= 0 && offsets[i] != first + static_cast<int64_t>(i)) {
      return Status::FailedPrecondition(
          "kafka log " + topic_ + ": the batch landed at non-contiguous offsets (" +
          std::to_string(first) + " then " + std::to_string(offsets[i]) + " for event " +
          std::to_string(i + 1) + "); is another process writing the topic?");
    }
  }
  return OffsetRange{static_cast<uint64_t>(first), static_cast<uint64_t>(first) + batch.size() - 1};
}

Result<uint64_t> KafkaEventLog::EndOffset() {
  int64_t low = 0;
  int64_t high = 0;
  rd_kafka_resp_err_t error =
      rd_kafka_query_watermark_offsets(client_.get(), topic_.c_str(), kPartition, &low, &high,
                                       static_cast<int>(kafka::kRequestTimeout.count()));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("kafka log " + topic_ +
                               ": cannot read the end offset: " + kafka::ErrorText(error));
  }
  return static_cast<uint64_t>(high);
}

Result<std::unique_ptr<LogReader>> KafkaEventLog::OpenReader(uint64_t from) {
  if (from > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::InvalidArgument("kafka log: offset " + std::to_string(from) + " out of range");
  }
  kafka::Settings settings = kafka::ConsumerSettings(brokers_);
  settings.insert(settings.end(), {
                                      // assign() needs a group handle; nothing joins or commits.
                                      {"group.id", "cairn-log-reader"},
                                      {"auto.offset.reset", "error"},
                                      // Prefetch per reader; 64 MiB by default, and a master
                                      // runs a reader per projector.
                                      {"queued.max.messages.kbytes", "16384"},
                                  });
  CAIRN_ASSIGN_OR_RETURN(kafka::Client consumer, kafka::NewConsumer(settings));
  // The partition's leader, known before assign(): a consumer assigned while it is unknown looks
  // it up on librdkafka's next one-second metadata tick, and a master's start opens several
  // readers. (Best effort: assign() finds the leader without it, only later.)
  if (rd_kafka_topic_t* topic = rd_kafka_topic_new(consumer.get(), topic_.c_str(), nullptr)) {
    const struct rd_kafka_metadata* metadata = nullptr;
    if (rd_kafka_metadata(consumer.get(), 0, topic, &metadata, kReaderMetadataTimeoutMs) ==
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(metadata);
    }
    rd_kafka_topic_destroy(topic);
  }
  kafka::PartitionList assignment(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(assignment.get(), topic_.c_str(), kPartition)->offset =
      static_cast<int64_t>(from);
  rd_kafka_resp_err_t error = rd_kafka_assign(consumer.get(), assignment.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("kafka log " + topic_ +
                               ": cannot assign a reader: " + kafka::ErrorText(error));
  }
  return std::unique_ptr<LogReader>(
      std::make_unique<KafkaLogReader>(std::move(consumer), topic_, from));
}

Status KafkaEventLog::InjectFatalError(const std::string& reason) {
  if (read_only_) return Status::InvalidArgument("a read-only kafka log has no producer");
  rd_kafka_resp_err_t error = rd_kafka_test_fatal_error(
      client_.get(), RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, reason.c_str());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::FailedPrecondition("kafka log: " + kafka::ErrorText(error));
  }
  return Status::Ok();
}

}  // namespace

std::string EventsTopicName(const std::string& topic_prefix) { return topic_prefix + ".events"; }

Result<std::unique_ptr<EventLog>> OpenKafkaLog(const std::string& brokers,
                                               const std::string& topic_prefix, bool read_only) {
  return KafkaEventLog::Open(brokers, topic_prefix, read_only);
}

Status InjectKafkaFatalErrorForTesting(EventLog* log, const std::string& reason) {
  auto* kafka_log = dynamic_cast<KafkaEventLog*>(log);
  if (kafka_log == nullptr) return Status::InvalidArgument("not a kafka event log");
  return kafka_log->InjectFatalError(reason);
}

}  // namespace cairn
