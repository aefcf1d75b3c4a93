#include "tests/agent/fake_master.h"

#include <cstdlib>

#include "events/envelope_util.h"

namespace cairn::agent::testing {
namespace {

using nlohmann::json;

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool Matches(const FakeMaster::Call& call, const std::string& path_suffix,
             const std::string& path_part) {
  return EndsWith(call.path, path_suffix) &&
         (path_part.empty() || call.path.find(path_part) != std::string::npos);
}

net::Response JsonResponse(int status, const json& body) {
  net::Response response;
  response.status = status;
  response.body = body.dump();
  return response;
}

net::Response ErrorResponse(int status, int code, const std::string& message) {
  return JsonResponse(status, {{"code", code}, {"message", message}, {"details", json::array()}});
}

// "/api/v1/agents/ID/heartbeat" -> "ID"
std::string PathSegment(const std::string& path, size_t index) {
  size_t start = 0;
  for (size_t i = 0; i <= index; ++i) {
    start = path.find('/', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = path.find('/', start);
  return path.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

size_t CountCalls(const std::vector<FakeMaster::Call>& calls, const std::string& path_suffix,
                  const std::string& path_part, int status) {
  size_t count = 0;
  for (const auto& call : calls) {
    if (Matches(call, path_suffix, path_part) && (status == 0 || call.status == status)) ++count;
  }
  return count;
}

FakeMaster::FakeMaster(uint64_t first_offset)
    : first_offset_(first_offset), next_offset_(first_offset) {
  Status started = Serve(0);
  if (!started.ok()) std::abort();
}

FakeMaster::~FakeMaster() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  server_->Stop();
}

Status FakeMaster::Serve(uint16_t port) {
  net::Server::Options options;
  options.port = port;
  auto server = std::make_unique<net::Server>(
      options, [this](const net::Request& request) { return Handle(request); });
  CAIRN_RETURN_IF_ERROR(server->Start());
  std::lock_guard lock(mutex_);
  port_ = server->port();
  server_ = std::move(server);
  return Status::Ok();
}

std::string FakeMaster::url() const {
  std::lock_guard lock(mutex_);
  return "http://127.0.0.1:" + std::to_string(port_);
}

uint64_t FakeMaster::Publish(events::Envelope order) {
  std::lock_guard lock(mutex_);
  uint64_t offset = next_offset_++;
  order.set_offset(offset);
  orders_[offset] = EnvelopeToJson(order, Audience::kMachine);
  changed_.notify_all();
  return offset;
}

void FakeMaster::SkipOffsets(uint64_t count) {
  std::lock_guard lock(mutex_);
  next_offset_ += count;
}

void FakeMaster::DropStreams() {
  std::lock_guard lock(mutex_);
  ++stream_generation_;
  changed_.notify_all();
}

void FakeMaster::ForgetAgents() {
  std::lock_guard lock(mutex_);
  connected_.clear();
}

void FakeMaster::Restart() {
  std::unique_ptr<net::Server> old;
  uint16_t port;
  {
    std::lock_guard lock(mutex_);
    down_ = true;
    changed_.notify_all();
    old = std::move(server_);
    port = port_;
    connected_.clear();
  }
  // Not under mutex_: stopping waits for handler threads, which take it.
  old->Stop();
  old.reset();
  Status started = Serve(port);
  if (!started.ok()) std::abort();
  std::lock_guard lock(mutex_);
  down_ = false;
}

void FakeMaster::SetPlacements(nlohmann::json placements) {
  std::lock_guard lock(mutex_);
  placements_ = std::move(placements);
}

void FakeMaster::FailNext(const std::string& path_suffix, int status, int count) {
  std::lock_guard lock(mutex_);
  failures_.push_back({path_suffix, status, count});
}

void FakeMaster::HoldCalls(const std::string& path_suffix) {
  std::lock_guard lock(mutex_);
  hold_suffix_ = path_suffix;
}

bool FakeMaster::WaitForHeld(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return held_ >= count; });
}

void FakeMaster::ReleaseHeld() {
  std::lock_guard lock(mutex_);
  hold_suffix_.clear();
  changed_.notify_all();
}

void FakeMaster::Arrive(Call& call) {
  std::unique_lock lock(mutex_);
  call.arrived = ++ticks_;
  if (hold_suffix_.empty() || !EndsWith(call.path, hold_suffix_)) return;
  ++held_;
  changed_.notify_all();
  changed_.wait(lock, [&] { return hold_suffix_.empty() || closing_ || down_; });
  --held_;
}

std::vector<FakeMaster::Call> FakeMaster::Calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::vector<FakeMaster::Call> FakeMaster::CallsTo(const std::string& path_suffix,
                                                  const std::string& path_part) const {
  std::lock_guard lock(mutex_);
  std::vector<Call> matching;
  for (const auto& call : calls_) {
    if (Matches(call, path_suffix, path_part)) matching.push_back(call);
  }
  return matching;
}

bool FakeMaster::WaitFor(const std::function<bool(const std::vector<Call>&)>& done,
                         std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return done(calls_); });
}

net::Response FakeMaster::Handle(const net::Request& request) {
  Call call;
  call.method = request.method;
  call.path = request.path;
  for (const auto& [name, value] : request.query) call.query[name] = value;
  call.body = json::parse(request.body, nullptr, false);
  if (call.body.is_discarded()) call.body = nullptr;
  Arrive(call);

  if (request.method == "GET" && request.path == "/api/v1/events" && !IsDown()) {
    call.status = 200;
    {
      std::lock_guard lock(mutex_);
      call.answered = ++ticks_;
      calls_.push_back(call);
      changed_.notify_all();
    }
    return StreamEvents(request);
  }

  std::lock_guard lock(mutex_);
  net::Response response = JsonResponse(200, json::object());
  bool failed = false;
  if (down_) {
    response = ErrorResponse(503, 14, "restarting");
    failed = true;
  }
  for (auto& failure : failures_) {
    if (failed) break;
    if (failure.remaining > 0 && EndsWith(request.path, failure.path_suffix)) {
      --failure.remaining;
      response = ErrorResponse(failure.status, failure.status >= 500 ? 14 : 5, "injected failure");
      failed = true;
      break;
    }
  }
  if (!failed) {
    std::string agent = PathSegment(request.path, 3);
    std::string incarnation =
        call.body.is_object() ? call.body.value("incarnation", std::string()) : "";
    if (EndsWith(request.path, "/register")) {
      connected_.insert(agent + "/" + incarnation);
      response = JsonResponse(200, {{"offset", std::to_string(next_offset_)},
                                    {"resumeFrom", std::to_string(first_offset_)},
                                    {"placements", placements_}});
    } else if (EndsWith(request.path, "/heartbeat")) {
      if (connected_.count(agent + "/" + incarnation) == 0) {
        response = ErrorResponse(409, 9, "agent is not connected");
      }
    } else if (EndsWith(request.path, "/started") || EndsWith(request.path, "/exited")) {
      response = JsonResponse(200, {{"offset", std::to_string(next_offset_)}});
    } else if (request.path != "/api/v1/task/logs") {
      response = ErrorResponse(404, 5, "no such endpoint");
    }
  }
  call.status = response.status;
  call.answered = ++ticks_;
  calls_.push_back(std::move(call));
  changed_.notify_all();
  return response;
}

bool FakeMaster::IsDown() const {
  std::lock_guard lock(mutex_);
  return down_;
}

net::Response FakeMaster::StreamEvents(const net::Request& request) {
  uint64_t from = std::strtoull(request.QueryParam("from").c_str(), nullptr, 10);
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [this, from](const net::ChunkWriter& write) {
    std::unique_lock lock(mutex_);
    const uint64_t generation = stream_generation_;
    uint64_t next = from;
    while (!closing_ && !down_ && stream_generation_ == generation) {
      auto pending = orders_.lower_bound(next);
      if (pending != orders_.end()) {
        std::string line = pending->second + "\n";
        next = pending->first + 1;
        lock.unlock();
        if (!write(line)) return;
        lock.lock();
        continue;
      }
      changed_.wait(lock, [&] {
        return closing_ || down_ || stream_generation_ != generation ||
               orders_.lower_bound(next) != orders_.end();
      });
    }
  };
  return response;
}

}  // namespace cairn::agent::testing
