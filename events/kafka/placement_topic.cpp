// The placement topic: a relay thread on the master that copies placement events from the event
// log to "<prefix>.placements" (key: agent id), and the agent's group consumer that reads them.
#include "events/kafka/placement_topic.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "base/files.h"
#include "events/envelope_util.h"
#include "events/epoch_fence.h"
#include "events/kafka/kafka_client.h"

namespace cairn {
namespace {

using kafka::kLongestWait;
using kafka::RemainingMs;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr size_t kRelayBatchEvents = 512;
constexpr milliseconds kRelayPollWait{200};
constexpr milliseconds kRelayRetryDelay{500};
// At most this many records per Poll, so an agent never holds a huge batch uncommitted.
constexpr size_t kConsumerPollRecords = 1024;
// The relay's progress: the event-log offset below which every placement was delivered, and the
// newest WriterEpochClaimed epoch below that offset (placements of older writers are fenced).
struct RelayPosition {
  uint64_t offset = 0;
  uint64_t epoch = 0;
  bool has_epoch = false;  // false for a file written before the epoch was stored
};

// The relay's offset file holds "<offset> <epoch>" (older files: "<offset>" alone). A missing
// file means "from the start".
Result<RelayPosition> ReadOffsetFile(const std::string& path) {
  auto read = ReadWholeFile(path);
  if (read.status().code() == StatusCode::kNotFound) return RelayPosition{0, 0, true};
  CAIRN_ASSIGN_OR_RETURN(std::string text, std::move(read));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  RelayPosition position;
  const char* const text_end = text.data() + text.size();
  auto [end, error] = std::from_chars(text.data(), text_end, position.offset);
  if (error == std::errc() && end != text_end && *end == ' ') {
    auto [epoch_end, epoch_error] = std::from_chars(end + 1, text_end, position.epoch);
    position.has_epoch = epoch_error == std::errc() && epoch_end != end + 1;
    end = position.has_epoch ? epoch_end : end;
  }
  if (text.empty() || error != std::errc() || end != text_end) {
    return Status::Corruption("relay offset file " + path + " does not hold an offset: '" +
                              text.substr(0, 100) + "'");
  }
  return position;
}

// Replaces the offset file atomically: a crash leaves the old number or the new, never a mix.
Status StoreOffsetFile(const std::string& path, uint64_t offset, uint64_t epoch) {
  return WriteFileAtomically(path, std::to_string(offset) + " " + std::to_string(epoch) + "\n");
}

// The newest WriterEpochClaimed epoch in the log below `end` (for an offset file that predates
// the stored epoch).
Result<uint64_t> NewestEpochBefore(EventLog* log, uint64_t end) {
  EpochFence fence;
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<LogReader> reader, log->OpenReader(0));
  while (reader->position() < end) {
    CAIRN_ASSIGN_OR_RETURN(std::vector<Envelope> events,
                           reader->Next(kRelayBatchEvents, kRelayPollWait));
    for (const Envelope& event : events) {
      if (event.offset() >= end) break;
      fence.Admit(event);
    }
  }
  return fence.newest_epoch();
}

// Delivery errors no retry can fix: the relay reports the order instead of hiding the cause.
bool NeverDeliverable(rd_kafka_resp_err_t code) {
  return code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
         code == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE || code == RD_KAFKA_RESP_ERR_INVALID_MSG ||
         code == RD_KAFKA_RESP_ERR__INVALID_ARG;
}

class KafkaPlacementRelay final : public PlacementRelay {
 public:
  static Result<std::unique_ptr<PlacementRelay>> Start(EventLog* log, const std::string& brokers,
                                                       const std::string& topic_prefix,
                                                       const std::string& offset_file);
  ~KafkaPlacementRelay() override {
    Stop();
    producer_.reset();  // While the delivery tally it may still report into is alive.
  }

  uint64_t delivered_offset() const override {
    std::lock_guard lock(mutex_);
    return delivered_;
  }
  bool WaitDelivered(uint64_t offset, milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return delivered_ >= offset; });
  }
  Status last_status() const override {
    std::lock_guard lock(mutex_);
    return last_status_;
  }
  void Stop() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  KafkaPlacementRelay(EventLog* log, std::string brokers, std::string topic,
                      std::string offset_file, uint64_t start, uint64_t start_epoch)
      : log_(log),
        brokers_(std::move(brokers)),
        topic_(std::move(topic)),
        offset_file_(std::move(offset_file)),
        delivered_(start),
        delivered_epoch_(start_epoch) {}

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque);
  // (Re)creates producer_; on the relay thread once Run has started.
  Status NewProducer();
  void Run();
  // Publishes the placements of `events` not fenced off by a newer writer epoch; `epoch` is the
  // newest epoch before the batch and becomes the newest one through it.
  Status Publish(const std::vector<Envelope>& events, uint64_t& epoch);
  bool stopping() const {
    std::lock_guard lock(mutex_);
    return stopping_;
  }
  // Records a failure and waits a little (or until Stop) before the next attempt.
  void Fail(Status status) {
    std::unique_lock lock(mutex_);
    last_status_ = std::move(status);
    changed_.wait_for(lock, kRelayRetryDelay, [&] { return stopping_; });
  }

  EventLog* const log_;
  const std::string brokers_;
  const std::string topic_;
  const std::string offset_file_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // delivered_ advanced, or Stop was called
  uint64_t delivered_;
  uint64_t delivered_epoch_;  // the newest writer epoch below delivered_
  bool stopping_ = false;
  Status last_status_;

  // The batch in flight. Delivery reports are served on the relay thread (rd_kafka_flush), so
  // only that thread touches these.
  size_t undelivered_ = 0;
  rd_kafka_resp_err_t first_delivery_error_ = RD_KAFKA_RESP_ERR_NO_ERROR;
  uint64_t first_failed_offset_ = 0;  // the event-log offset of that failed order

  kafka::Client producer_;
  std::thread thread_;
};

Result<std::unique_ptr<PlacementRelay>> KafkaPlacementRelay::Start(EventLog* log,
                                                                   const std::string& brokers,
                                                                   const std::string& topic_prefix,
                                                                   const std::string& offset_file) {
  if (log == nullptr) return Status::InvalidArgument("placement relay: no event log");
  if (brokers.empty()) return Status::InvalidArgument("placement relay: no brokers given");
  if (topic_prefix.empty()) return Status::InvalidArgument("placement relay: empty topic prefix");
  if (offset_file.empty()) return Status::InvalidArgument("placement relay: no offset file");
  CAIRN_ASSIGN_OR_RETURN(RelayPosition position, ReadOffsetFile(offset_file));
  const uint64_t start = position.offset;
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  if (start > end) {
    return Status::FailedPrecondition("placement relay: " + offset_file + " says offset " +
                                      std::to_string(start) + " but the event log ends at " +
                                      std::to_string(end) + "; is it the file of another log?");
  }
  if (!position.has_epoch) {
    CAIRN_ASSIGN_OR_RETURN(position.epoch, NewestEpochBefore(log, start));
  }
  std::unique_ptr<KafkaPlacementRelay> relay(new KafkaPlacementRelay(
      log, brokers, PlacementTopicName(topic_prefix), offset_file, start, position.epoch));
  CAIRN_RETURN_IF_ERROR(relay->NewProducer());
  // Any partition count works: an agent's orders share a key, hence a partition.
  CAIRN_RETURN_IF_ERROR(kafka::EnsureTopic(relay->producer_.get(), relay->topic_,
                                           kDefaultPlacementPartitions, /*may_create=*/true)
                            .status());
  KafkaPlacementRelay* self = relay.get();
  relay->thread_ = std::thread([self] { self->Run(); });
  return std::unique_ptr<PlacementRelay>(std::move(relay));
}

Status KafkaPlacementRelay::NewProducer() {
  producer_ = kafka::Client();
  kafka::Settings settings = kafka::IdempotentProducerSettings(brokers_);
  // The Java client's key hashing, so that any Kafka tool agrees on a key's partition.
  settings.emplace_back("partitioner", "murmur2_random");
  CAIRN_ASSIGN_OR_RETURN(kafka::Config config, kafka::NewConfig(settings));
  rd_kafka_conf_set_dr_msg_cb(config.get(), &KafkaPlacementRelay::OnDelivery);
  rd_kafka_conf_set_opaque(config.get(), this);
  CAIRN_ASSIGN_OR_RETURN(producer_, kafka::NewClient(RD_KAFKA_PRODUCER, std::move(config)));
  return Status::Ok();
}

void KafkaPlacementRelay::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* self = static_cast<KafkaPlacementRelay*>(opaque);
  --self->undelivered_;
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR &&
      self->first_delivery_error_ == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->first_delivery_error_ = message->err;
    self->first_failed_offset_ =
        static_cast<uint64_t>(reinterpret_cast<uintptr_t>(message->_private));
  }
}

void KafkaPlacementRelay::Run() {
  std::unique_ptr<LogReader> reader;
  while (!stopping()) {
    if (!producer_) {
      Status created = NewProducer();
      if (!created.ok()) {
        Fail(std::move(created));
        continue;
      }
    }
    if (!reader) {
      Result<std::unique_ptr<LogReader>> opened = log_->OpenReader(delivered_offset());
      if (!opened.ok()) {
        Fail(opened.status());
        continue;
      }
      reader = std::move(opened).value();
    }
    Result<std::vector<Envelope>> events = reader->Next(kRelayBatchEvents, kRelayPollWait);
    if (!events.ok()) {
      reader.reset();
      Fail(events.status());
      continue;
    }
    if (events->empty()) continue;
    uint64_t epoch;
    {
      std::lock_guard lock(mutex_);
      epoch = delivered_epoch_;
    }
    Status published = Publish(*events, epoch);
    if (!published.ok()) {
      // Start over from the last delivered offset: orders may go out twice, never zero times.
      reader.reset();
      char reason[512] = {};
      if (rd_kafka_fatal_error(producer_.get(), reason, sizeof reason) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        // An idempotent producer that hit a fatal error fails every later message: start a new
        // one (a new producer id) at the next attempt.
        published = Status::Unavailable(published.message() + " (fatal producer error: " + reason +
                                        "; recreating the producer)");
        rd_kafka_purge(producer_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_flush(producer_.get(), 0);
        producer_.reset();
      }
      Fail(published);
      continue;
    }
    const uint64_t end = reader->position();
    Status stored = StoreOffsetFile(offset_file_, end, epoch);
    {
      std::lock_guard lock(mutex_);
      delivered_ = end;
      delivered_epoch_ = epoch;
      last_status_ = std::move(stored);
    }
    changed_.notify_all();
  }
}

Status KafkaPlacementRelay::Publish(const std::vector<Envelope>& events, uint64_t& epoch) {
  undelivered_ = 0;
  first_delivery_error_ = RD_KAFKA_RESP_ERR_NO_ERROR;
  first_failed_offset_ = 0;
  Status enqueue_status;
  for (const Envelope& event : events) {
    // Read-side fencing, as the projections do: a writer fenced off by a newer master may still
    // have appended; its orders never happened.
    EpochFence fence(epoch);
    const EpochFence::Verdict verdict = fence.Admit(event);
    epoch = fence.newest_epoch();
    if (verdict != EpochFence::Verdict::kFact) continue;
    const std::vector<std::string> agent_ids = PlacementAgentsOf(event);
    if (agent_ids.empty()) continue;
    const std::string value = event.SerializeAsString();
    // A gang's order goes to each of its agents, keyed by that agent.
    for (const std::string& agent_id : agent_ids) {
      rd_kafka_vu_t fields[5];
      fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
      fields[0].u.cstr = topic_.c_str();
      fields[1].vtype = RD_KAFKA_VTYPE_KEY;
      fields[1].u.mem.ptr = const_cast<char*>(agent_id.data());
      fields[1].u.mem.size = agent_id.size();
      fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
      fields[2].u.mem.ptr = const_cast<char*>(value.data());
      fields[2].u.mem.size = value.size();
      fields[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
      fields[3].u.i = RD_KAFKA_MSG_F_COPY;
      fields[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
      // Comes back in the delivery report, to name the order that failed.
      fields[4].u.ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(event.offset()));
      rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
      for (;;) {
        rd_kafka_error_t* error = rd_kafka_produceva(producer_.get(), fields, 5);
        if (error == nullptr) break;
        code = rd_kafka_error_code(error);
        rd_kafka_error_destroy(error);
        if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL || stopping()) break;
        rd_kafka_poll(producer_.get(), 100);  // Serves delivery reports, making room.
        code = RD_KAFKA_RESP_ERR_NO_ERROR;
      }
      if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        enqueue_status = Status::Unavailable(
            "placement relay: cannot enqueue the order at offset " +
            std::to_string(event.offset()) +
            (NeverDeliverable(code) ? " (it can never be delivered; the relay is stuck on it)"
                                    : "") +
            ": " + kafka::ErrorText(code));
        break;
      }
      ++undelivered_;
    }
    if (!enqueue_status.ok()) break;
  }
  while (undelivered_ > 0 && !stopping()) rd_kafka_flush(producer_.get(), 200);
  if (undelivered_ > 0) {
    // Stopping: drop what is still queued; its delivery reports arrive as purge errors.
    rd_kafka_purge(producer_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(producer_.get(), static_cast<int>(kafka::kRequestTimeout.count()));
    return Status::Unavailable("placement relay: stopped before every order was delivered");
  }
  if (first_delivery_error_ != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(
        "placement relay: the order at offset " + std::to_string(first_failed_offset_) +
        " was not delivered to " + topic_ +
        (NeverDeliverable(first_delivery_error_) ? " and can never be (the relay is stuck on it)"
                                                 : "") +
        ": " + kafka::ErrorText(first_delivery_error_));
  }
  return enqueue_status;
}

class KafkaPlacementConsumer final : public PlacementConsumer {
 public:
  KafkaPlacementConsumer(kafka::Client consumer, std::string topic, std::string agent_id)
      : consumer_(std::move(consumer)), topic_(std::move(topic)), agent_id_(std::move(agent_id)) {}
  // Leaves the group, so that the next consumer of this agent joins without waiting for a
  // session timeout.
  ~KafkaPlacementConsumer() override { rd_kafka_consumer_close(consumer_.get()); }

  Result<std::vector<Envelope>> Poll(milliseconds wait) override;
  Status Commit() override;

 private:
  kafka::Client consumer_;
  const std::string topic_;
  const std::string agent_id_;
  // Per partition, the offset after the last record Poll went past (ours or another agent's).
  std::map<int32_t, int64_t> next_offsets_;
  bool uncommitted_ = false;
  // An error met after some orders were taken; returned by the next Poll.
  Status deferred_error_;
};

Result<std::vector<Envelope>> KafkaPlacementConsumer::Poll(milliseconds wait) {
  if (!deferred_error_.ok()) return std::exchange(deferred_error_, Status::Ok());
  std::vector<Envelope> orders;
  Status error;
  const steady_clock::time_point deadline = steady_clock::now() + std::min(wait, kLongestWait);
  for (size_t records = 0; records < kConsumerPollRecords && error.ok(); ++records) {
    // Wait only until the first order; then take what has already been fetched.
    const int timeout_ms = orders.empty() ? RemainingMs(deadline) : 0;
    kafka::Message message(rd_kafka_consumer_poll(consumer_.get(), timeout_ms));
    if (!message) {
      if (timeout_ms == 0) break;
      continue;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (kafka::IsPermanentConsumerError(message->err)) {
        error = Status::Unavailable("placement consumer of " + agent_id_ + ": " +
                                    kafka::ErrorText(message->err) + ": " +
                                    rd_kafka_message_errstr(message.get()));
      }
      continue;
    }
    next_offsets_[message->partition] = message->offset + 1;
    uncommitted_ = true;
    const std::string_view key(static_cast<const char*>(message->key), message->key_len);
    if (message->key == nullptr || key != agent_id_) continue;
    Envelope order;
    if (!order.ParseFromArray(message->payload, static_cast<int>(message->len))) {
      // Skipped (the position moved past it) but reported.
      error = Status::Corruption("placement consumer of " + agent_id_ + ": the record at " +
                                 topic_ + "/" + std::to_string(message->partition) + "@" +
                                 std::to_string(message->offset) + " is not an Envelope");
      continue;
    }
    orders.push_back(std::move(order));
  }
  if (!error.ok()) {
    if (orders.empty()) return error;
    deferred_error_ = std::move(error);
  }
  return orders;
}

Status KafkaPlacementConsumer::Commit() {
  if (!uncommitted_) return Status::Ok();
  kafka::PartitionList offsets(rd_kafka_topic_partition_list_new(next_offsets_.size()));
  for (const auto& [partition, offset] : next_offsets_) {
    rd_kafka_topic_partition_list_add(offsets.get(), topic_.c_str(), partition)->offset = offset;
  }
  rd_kafka_resp_err_t error = rd_kafka_commit(consumer_.get(), offsets.get(), 0);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("placement consumer of " + agent_id_ +
                               ": commit failed: " + kafka::ErrorText(error));
  }
  uncommitted_ = false;
  return Status::Ok();
}

}  // namespace

std::string PlacementTopicName(const std::string& topic_prefix) {
  return topic_prefix + ".placements";
}

Result<std::unique_ptr<PlacementConsumer>> PlacementConsumer::Open(const std::string& brokers,
                                                                   const std::string& topic_prefix,
                                                                   const std::string& agent_id) {
  if (brokers.empty()) return Status::InvalidArgument("placement consumer: no brokers given");
  if (agent_id.empty()) return Status::InvalidArgument("placement consumer: empty agent id");
  const std::string topic = PlacementTopicName(topic_prefix);
  kafka::Settings settings = kafka::ConsumerSettings(brokers);
  settings.insert(settings.end(), {
                                      {"group.id", "cairn-agent-" + agent_id},
                                      {"auto.offset.reset", "earliest"},
                                      // Short enough that a dead agent's group is freed soon;
                                      // also avoids the mock cluster's 45 s first rebalance.
                                      {"session.timeout.ms", "6000"},
                                      {"heartbeat.interval.ms", "500"},
                                  });
  CAIRN_ASSIGN_OR_RETURN(kafka::Client consumer, kafka::NewConsumer(settings));
  CAIRN_RETURN_IF_ERROR(kafka::PartitionCount(consumer.get(), topic).status());
  kafka::PartitionList subscription(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(subscription.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t error = rd_kafka_subscribe(consumer.get(), subscription.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("placement consumer: cannot subscribe to " + topic + ": " +
                               kafka::ErrorText(error));
  }
  return std::unique_ptr<PlacementConsumer>(
      std::make_unique<KafkaPlacementConsumer>(std::move(consumer), topic, agent_id));
}

Result<std::unique_ptr<PlacementRelay>> PlacementRelay::Start(EventLog* log,
                                                              const std::string& brokers,
                                                              const std::string& topic_prefix,
                                                              const std::string& offset_file) {
  return KafkaPlacementRelay::Start(log, brokers, topic_prefix, offset_file);
}

}  // namespace cairn
