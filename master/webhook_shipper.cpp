#include "master/webhook_shipper.h"

#include <algorithm>
#include <vector>

#include "base/clock.h"
#include "base/http_url.h"
#include "base/ids.h"
#include "base/log.h"
#include "commands/webhooks/webhook_payload.h"
#include "events/redaction.h"
#include "events/sealing.h"
#include "net/http_client.h"

namespace cairn {

namespace {

// Deliveries a webhook sends in one pass at most: its queue is read again on the next.
constexpr size_t kDeliveriesPerPass = 64;

struct Answer {
  int status = 0;     // 0: none came
  std::string error;  // why not, when no answer came
};

// One POST of `body` to `sealed_url` (as the log keeps it, opened here), with `headers`. Never
// logs or returns the URL's path or query.
Answer Post(const SecretSealer& sealer, const std::string& sealed_url, const std::string& body,
            const std::map<std::string, std::string>& headers, const std::string& ca_file,
            std::chrono::milliseconds timeout) {
  auto url = UnsealWebhookUrl(sealed_url, sealer);
  if (!url.ok()) return {0, url.status().message()};
  auto parsed = ParseHttpUrl(*url);
  if (!parsed.ok()) return {0, parsed.status().message()};
  // What an endpoint answers is never read beyond its status: a body that would fill memory is
  // refused, and the path never appears in an error.
  constexpr uint64_t kMaxAnswerBytes = 64 * 1024;
  net::ClientOptions options;
  options.tls = parsed->tls;
  options.ca_file = ca_file;
  options.target_in_errors = false;
  options.max_response_bytes = kMaxAnswerBytes;
  net::Client client(parsed->host, parsed->port, options);
  auto response = client.Request("POST", parsed->target, body, headers, timeout);
  if (!response.ok()) return {0, response.status().message()};
  return {response->status, ""};
}

// 1xx and 2xx. A redirect is not followed (the client does not), so nothing arrived: the
// endpoint's owner must give the webhook its final URL.
bool Accepted(int status) { return status >= 100 && status < 300; }
bool Refused(int status) { return status >= 300 && status < 500; }

std::map<std::string, std::string> SignedHeaders(const std::string& signing_key,
                                                 const std::string& body) {
  const int64_t now = NowUnixMicros() / 1'000'000;
  return {{"Content-Type", "application/json; charset=UTF-8"},
          {commands::kSignatureTimestampHeader, std::to_string(now)},
          {commands::kSignatureHeader, commands::WebhookSignature(signing_key, now, body)}};
}

}  // namespace

WebhookShipper::WebhookShipper(EventLog* log, DecisionLoop* loop, Options options)
    : log_(log), loop_(loop), options_(std::move(options)) {}

bool WebhookShipper::stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

bool WebhookShipper::Record(const std::vector<events::WebhookDelivery>& ended) {
  commands::CommandMeta meta{"system:webhooks", NewUuid(), "", NowUnixMicros()};
  auto recorded = loop_->Execute(commands::RecordWebhookDeliveries{ended}, meta);
  if (recorded.ok()) return true;
  log::Warn("webhooks", "could not record {} webhook deliveries (sending none until it can): {}",
            ended.size(), recorded.status());
  return false;
}

WebhookShipper::~WebhookShipper() { Stop(); }

void WebhookShipper::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      ShipDue();
      lock.lock();
      wakeup_.wait_for(lock, options_.poll_period, [this] { return stopping_; });
    }
  });
}

void WebhookShipper::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status WebhookShipper::SendTest(const events::WebhookCreated& webhook) const {
  const std::string event_id = NewUuid();
  Answer answer;
  if (webhook.type() == events::WEBHOOK_TYPE_SLACK) {
    answer = Post(options_.sealer, webhook.url(), commands::SlackTestPayload(),
                  {{"Content-Type", "application/json; charset=UTF-8"}}, options_.ca_file,
                  options_.timeout);
  } else {
    const std::string body = commands::TestPayload(event_id, NowUnixMicros() / 1'000'000);
    answer = Post(options_.sealer, webhook.url(), body, SignedHeaders(options_.signing_key, body),
                  options_.ca_file, options_.timeout);
  }
  if (answer.status == 0) {
    return Status::InvalidArgument("error sending webhook request for event " + event_id + ": " +
                                   answer.error);
  }
  if (!Accepted(answer.status)) {
    return Status::InvalidArgument("received error from webhook server for event " + event_id +
                                   ": HTTP " + std::to_string(answer.status));
  }
  return Status::Ok();
}

size_t WebhookShipper::ShipDue() {
  struct Owed {
    commands::WebhookDeliveryKey key;
    std::string body;
  };
  struct Target {
    events::WebhookCreated webhook;
    std::vector<Owed> owed;
  };
  // What ended before and could not be recorded is recorded first, and nothing is sent until it
  // is: sending again would repeat deliveries the endpoints took (a fenced master stops here).
  if (!unrecorded_.empty()) {
    if (!Record(unrecorded_)) return 0;
    unrecorded_.clear();
  }
  // Only deliveries of durable events: the writer folds a batch before its append, and an append
  // that fails takes the batch back.
  auto durable_end = log_->EndOffset();
  if (!durable_end.ok()) return 0;
  std::map<int64_t, Target> targets;
  loop_->Read([&](const commands::DecisionState& state) {
    for (const auto& [key, delivery] : state.webhooks.pending) {
      if (key.first >= *durable_end) continue;
      Target& target = targets[delivery.webhook_id];
      if (target.owed.size() >= kDeliveriesPerPass) continue;
      if (target.owed.empty()) {
        const events::WebhookCreated* webhook = state.webhooks.Find(delivery.webhook_id);
        if (webhook == nullptr) continue;
        target.webhook = *webhook;
      }
      target.owed.push_back({key, delivery.body_json});
    }
  });
  std::erase_if(retrying_, [&](const auto& entry) { return targets.count(entry.first) == 0; });
  size_t ended_total = 0;
  for (auto& [webhook_id, target] : targets) {
    if (stopping()) break;
    const events::WebhookCreated& webhook = target.webhook;
    std::vector<events::WebhookDelivery> ended;
    for (const Owed& owed : target.owed) {
      if (stopping()) break;
      auto& [retried_key, attempts] = retrying_[webhook_id];
      if (retried_key != owed.key) {
        retried_key = owed.key;
        attempts = Attempts{};
      }
      const auto now = std::chrono::steady_clock::now();
      if (now < attempts.next) break;  // this webhook's queue waits for its back-off
      std::string body = owed.body;
      if (webhook.type() == events::WEBHOOK_TYPE_SLACK) {
        auto slack = commands::SlackPayload(owed.body, options_.base_url);
        if (slack.ok()) body = std::move(*slack);
      }
      const Answer answer =
          Post(options_.sealer, webhook.url(), body, SignedHeaders(options_.signing_key, body),
               options_.ca_file, options_.timeout);
      ++attempts.made;
      events::WebhookDelivery delivery;
      delivery.set_source_offset(owed.key.first);
      delivery.set_trigger_id(owed.key.second);
      delivery.set_webhook_id(webhook_id);
      delivery.set_http_status(answer.status);
      delivery.set_attempts(attempts.made);
      if (Accepted(answer.status)) {
        delivery.set_outcome(events::WEBHOOK_DELIVERY_OUTCOME_DELIVERED);
      } else if (Refused(answer.status)) {
        delivery.set_outcome(events::WEBHOOK_DELIVERY_OUTCOME_GAVE_UP);
        delivery.set_detail(answer.status < 400
                                ? "the endpoint redirected it (HTTP " +
                                      std::to_string(answer.status) +
                                      "), which is not followed: give the webhook its final URL"
                                : "the endpoint refused it: HTTP " + std::to_string(answer.status));
      } else if (attempts.made >= options_.max_attempts) {
        delivery.set_outcome(events::WEBHOOK_DELIVERY_OUTCOME_GAVE_UP);
        delivery.set_detail(
            "not delivered after " + std::to_string(attempts.made) + " attempts; the last: " +
            (answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.error));
      } else {
        auto wait = options_.first_retry * (int64_t{1} << std::min(attempts.made - 1, 20));
        attempts.next = now + std::min<std::chrono::milliseconds>(wait, options_.max_retry);
        log::Info("webhooks", "webhook {} ({}): attempt {} failed ({}); retrying in {} ms",
                  webhook_id, RedactedWebhookUrl(webhook.url()), attempts.made,
                  answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.error,
                  std::min<std::chrono::milliseconds>(wait, options_.max_retry).count());
        break;
      }
      if (delivery.outcome() == events::WEBHOOK_DELIVERY_OUTCOME_GAVE_UP) {
        log::Warn("webhooks", "webhook {} ({}): gave up a delivery: {}", webhook_id,
                  RedactedWebhookUrl(webhook.url()), delivery.detail());
      }
      ended.push_back(std::move(delivery));
      retrying_.erase(webhook_id);
    }
    if (ended.empty()) continue;
    if (!Record(ended)) {
      unrecorded_ = std::move(ended);
      return ended_total;
    }
    ended_total += ended.size();
  }
  return ended_total;
}

}  // namespace cairn
