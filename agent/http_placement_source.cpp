#include "agent/http_placement_source.h"

#include "base/log.h"
#include "events/envelope_util.h"
#include "net/http_types.h"

namespace cairn::agent {
namespace {

using Clock = std::chrono::steady_clock;

// A stream that lasted this long was a working connection: the next reconnect starts over with
// the initial back-off.
constexpr std::chrono::seconds kHealthyStream(5);
// net::Client::Cancel() only reaches a call that has begun; Stop() repeats it this often until
// Run() has returned.
constexpr std::chrono::milliseconds kCancelRepeat(50);
// The master writes a keep-alive line on an idle stream every 15 s; three missed mean the
// connection is dead even if no FIN arrived (a crashed host, a dropped NAT entry).
constexpr std::chrono::milliseconds kStreamIdleTimeout(45000);

}  // namespace

HttpPlacementSource::HttpPlacementSource(net::Client client, std::string agent_id, uint64_t from,
                                         Options options)
    : client_(std::move(client)),
      agent_id_(std::move(agent_id)),
      options_(options),
      next_offset_(from) {}

std::string HttpPlacementSource::Describe() const {
  return "event stream of http://" + client_.host() + ":" + std::to_string(client_.port());
}

void HttpPlacementSource::Run(const OrderHandler& handler) {
  {
    std::lock_guard lock(mutex_);
    running_ = true;
  }
  std::chrono::milliseconds backoff = options_.initial_backoff;
  int failures = 0;
  while (!stopped_) {
    uint64_t from = next_offset_;
    std::string target = "/api/v1/events?from=" + std::to_string(from) +
                         "&follow=true&agent=" + net::PercentEncode(agent_id_);
    Clock::time_point connected_at = Clock::now();
    bool got_order = false;
    Status status = client_.StreamLines(
        "GET", target,
        [&](std::string_view line) {
          if (stopped_) return false;
          if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
          Result<events::Envelope> order = EnvelopeFromJson(std::string(line));
          if (!order.ok()) {
            log::Warn("placements", "skipping a line of the event stream: {}", order.status());
            return true;
          }
          // A master may resend what this agent already handled; offsets say so.
          if (order->offset() < next_offset_) return true;
          got_order = true;
          handler(*order);
          next_offset_ = order->offset() + 1;
          return true;
        },
        {}, kStreamIdleTimeout);
    if (stopped_) break;
    if (got_order || Clock::now() - connected_at >= kHealthyStream) {
      backoff = options_.initial_backoff;
      failures = 0;
    }
    if (failures++ % 20 == 0) {
      log::Warn("placements", "event stream from offset {} ended ({}); reconnecting from {}", from,
                status, next_offset_.load());
    }
    std::unique_lock lock(mutex_);
    if (changed_.wait_for(lock, backoff, [&] { return stopped_.load(); })) break;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
  std::lock_guard lock(mutex_);
  running_ = false;
  changed_.notify_all();
}

void HttpPlacementSource::Stop() {
  std::unique_lock lock(mutex_);
  stopped_ = true;
  changed_.notify_all();
  while (running_) {
    client_.Cancel();
    changed_.wait_for(lock, kCancelRepeat, [&] { return !running_; });
  }
}

void HttpPlacementSource::Reconnect() { client_.Cancel(); }

}  // namespace cairn::agent
