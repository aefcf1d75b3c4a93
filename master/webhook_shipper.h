// Sends the deliveries webhooks owe (commands/webhooks/webhook_records.h) and records how each
// ended (RecordWebhookDeliveries, actor system:webhooks), so that a delivery recorded once is
// never sent again, also after a restart; one not recorded yet (the master died while sending)
// is sent again with the same event_id, for the receiver to drop.
//
// Each webhook's deliveries go in log order, one at a time: a 1xx/2xx answer delivers, a 3xx
// (redirects are not followed) or 4xx gives up at once, a 5xx or no answer is retried after a
// back-off that doubles from first_retry up to max_retry, until max_attempts; then it gives up. A
// failing endpoint holds only its own webhook's queue from then on (deliveries go out one at a
// time, so a slow one delays the others by up to its timeout); the writer never waits for an
// endpoint. Only deliveries of events already durable are sent. Bodies are signed
// (X-Determined-AI-Signature, webhook_payload.h) under the signing key, which never reaches a log
// line or an event; nor does a webhook's URL beyond its scheme and host.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/sealed_secrets.h"
#include "base/status.h"
#include "master/decision_loop.h"

namespace cairn {

class WebhookShipper {
 public:
  struct Options {
    std::string signing_key;  // a secret
    std::string base_url;     // links in Slack messages ("" = none)
    int max_attempts = 5;
    std::chrono::milliseconds first_retry{1000};
    std::chrono::milliseconds max_retry{60'000};
    std::chrono::milliseconds timeout{10'000};   // each of a request's write and read
    std::chrono::milliseconds poll_period{200};  // how soon new deliveries are seen
    std::string ca_file;                         // for https endpoints; "" = the system's CAs
    SecretSealer sealer;  // opens the URLs, which the log keeps sealed (events/sealing.h)
  };

  // `log` and `loop` must outlive the shipper.
  WebhookShipper(EventLog* log, DecisionLoop* loop, Options options);
  ~WebhookShipper();

  void Start();
  void Stop();

  // POST /api/v1/webhooks/{id}/test: one signed test payload (Slack's test message, unsigned as
  // Determined sends it), no retry. OK for a 1xx-3xx answer; otherwise why not. Thread-safe.
  Status SendTest(const events::WebhookCreated& webhook) const;

 private:
  struct Attempts {
    int made = 0;
    std::chrono::steady_clock::time_point next{};
    int last_status = 0;
    std::string last_error;
  };
  // One pass: every webhook whose next delivery is due sends until one fails or its queue is
  // empty, and what ended is recorded. Returns how many ended.
  size_t ShipDue();
  // Records how `ended` deliveries ended; false (logged) when the writer refused.
  bool Record(const std::vector<events::WebhookDelivery>& ended);
  bool stopping();

  EventLog* log_;
  DecisionLoop* loop_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  // The owed delivery each webhook is retrying, by webhook id; only the shipper thread's.
  std::map<int64_t, std::pair<commands::WebhookDeliveryKey, Attempts>> retrying_;
  // Deliveries that ended but whose record the writer refused; only the shipper thread's.
  std::vector<events::WebhookDelivery> unrecorded_;
  std::thread thread_;
};

}  // namespace cairn
