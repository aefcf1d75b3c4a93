#include "tests/support/webhook_receiver.h"

#include <gtest/gtest.h>

namespace cairn::testing {

WebhookReceiver::WebhookReceiver() {
  server_ = std::make_unique<net::Server>(
      net::Server::Options{}, [this](const net::Request& request) { return Handle(request); });
  Status started = server_->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
}

WebhookReceiver::~WebhookReceiver() {
  Release();
  server_->Stop();
}

std::string WebhookReceiver::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
}

void WebhookReceiver::Script(std::vector<int> statuses) {
  std::lock_guard lock(mutex_);
  script_.assign(statuses.begin(), statuses.end());
}

void WebhookReceiver::HoldFrom(size_t index) {
  std::lock_guard lock(mutex_);
  hold_from_ = index;
  released_ = false;
}

void WebhookReceiver::Release() {
  {
    std::lock_guard lock(mutex_);
    released_ = true;
  }
  changed_.notify_all();
}

bool WebhookReceiver::WaitFor(size_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return received_.size() >= count; });
}

std::vector<WebhookReceiver::Received> WebhookReceiver::received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

net::Response WebhookReceiver::Handle(const net::Request& request) {
  std::unique_lock lock(mutex_);
  const size_t index = received_.size();
  received_.push_back({request.target, request.headers, request.body});
  changed_.notify_all();
  if (index >= hold_from_) changed_.wait(lock, [&] { return released_; });
  int status = 200;
  if (!script_.empty()) {
    status = script_.front();
    script_.pop_front();
  }
  net::Response response;
  response.status = status;
  response.body = "{}";
  return response;
}

}  // namespace cairn::testing
