// A webhook endpoint for tests: a real HTTP server on 127.0.0.1 (port 0) that keeps every request
// it gets and answers each with the next status of a script (then 200). It can hold the answer to
// a request until the test releases it, for killing a master while a delivery is in flight.
// Waits are on a condition variable, never a sleep.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_server.h"

namespace cairn::testing {

class WebhookReceiver {
 public:
  struct Received {
    std::string target;
    std::map<std::string, std::string> headers;  // lower-cased names
    std::string body;
  };

  WebhookReceiver();
  ~WebhookReceiver();

  // "http://127.0.0.1:<port><path>".
  std::string Url(const std::string& path = "/hook") const;
  // The statuses the next requests get, in order (after them: 200).
  void Script(std::vector<int> statuses);
  // Requests from the `index`-th on (0-based) are held unanswered until Release().
  void HoldFrom(size_t index);
  void Release();
  // Waits until `count` requests arrived (held ones count); false after `timeout`.
  bool WaitFor(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  std::vector<Received> received() const;

 private:
  net::Response Handle(const net::Request& request);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Received> received_;
  std::deque<int> script_;
  size_t hold_from_ = SIZE_MAX;
  bool released_ = false;
  std::unique_ptr<net::Server> server_;
};

}  // namespace cairn::testing
