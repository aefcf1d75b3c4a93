// A stand-in for the Cairn master in agent tests: serves PROTOCOL.md's endpoints on
// 127.0.0.1 (port 0) with net::Server, records every call, and lets a test publish orders,
// drop event streams, make reports fail or hold them unanswered, forget registrations and restart.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "events.pb.h"
#include "net/http_server.h"

namespace cairn::agent::testing {

// The agent protocol's path for `action` ("started", "exited") of an allocation.
inline std::string AllocationPath(const std::string& allocation_id, const std::string& action) {
  return "/api/v1/allocations/" + allocation_id + "/" + action;
}

class FakeMaster {
 public:
  struct Call {
    std::string method;
    std::string path;
    std::map<std::string, std::string> query;
    nlohmann::json body;  // null when the body is not JSON
    int status = 0;       // what the fake answered
    // Ticks of one counter over all calls: when the call came in and when it was answered, so
    // a test can tell whether one call arrived after another was answered.
    uint64_t arrived = 0;
    uint64_t answered = 0;
  };

  // Orders get offsets from `first_offset` on; registrations answer resumeFrom = first_offset.
  explicit FakeMaster(uint64_t first_offset = 10);
  ~FakeMaster();
  FakeMaster(const FakeMaster&) = delete;
  FakeMaster& operator=(const FakeMaster&) = delete;

  std::string url() const;

  // Appends an order at the next offset (returned) and hands it to open streams.
  uint64_t Publish(events::Envelope order);
  // Leaves `count` offsets unused, as events for other agents would.
  void SkipOffsets(uint64_t count);
  // Ends every open event stream (the connection closes).
  void DropStreams();
  // Heartbeats of every agent get 409 until it registers again.
  void ForgetAgents();
  // Stops serving (every connection drops), forgets agents, and serves again on the same port.
  void Restart();
  // What registrations answer as "placements" (default {"transport": "http"}).
  void SetPlacements(nlohmann::json placements);
  // Answers the next `count` calls whose path ends with `path_suffix` with `status`.
  void FailNext(const std::string& path_suffix, int status, int count);
  // Holds every call whose path ends with `path_suffix` unanswered until ReleaseHeld() (or
  // until the fake stops or restarts).
  void HoldCalls(const std::string& path_suffix);
  // Waits until `count` held calls wait at the same time; false at the timeout.
  bool WaitForHeld(size_t count, std::chrono::milliseconds timeout) const;
  // Lets the held calls be answered and holds no more.
  void ReleaseHeld();

  std::vector<Call> Calls() const;
  // The calls whose path ends with `path_suffix` (and, when given, whose path contains
  // `path_part`), in arrival order.
  std::vector<Call> CallsTo(const std::string& path_suffix,
                            const std::string& path_part = "") const;
  // Waits until `done` holds over the calls so far; false at the timeout.
  bool WaitFor(const std::function<bool(const std::vector<Call>&)>& done,
               std::chrono::milliseconds timeout) const;

 private:
  net::Response Handle(const net::Request& request);
  // Stamps the call's arrival and holds it while HoldCalls() asks for that.
  void Arrive(Call& call);
  net::Response StreamEvents(const net::Request& request);
  Status Serve(uint16_t port);
  bool IsDown() const;

  const uint64_t first_offset_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::unique_ptr<net::Server> server_;
  uint16_t port_ = 0;
  std::vector<Call> calls_;
  std::map<uint64_t, std::string> orders_;  // offset -> JSON line
  uint64_t next_offset_;
  uint64_t stream_generation_ = 0;  // bumped to end every open stream
  bool closing_ = false;
  bool down_ = false;  // during Restart(): every call gets 503 and streams end
  nlohmann::json placements_ = {{"transport", "http"}};
  std::set<std::string> connected_;  // "agent/incarnation" pairs that heartbeats accept
  struct Failure {
    std::string path_suffix;
    int status;
    int remaining;
  };
  std::vector<Failure> failures_;
  uint64_t ticks_ = 0;
  std::string hold_suffix_;  // empty: nothing is held
  size_t held_ = 0;          // calls waiting in Arrive() now
};

// Convenience predicates over recorded calls.
size_t CountCalls(const std::vector<FakeMaster::Call>& calls, const std::string& path_suffix,
                  const std::string& path_part = "", int status = 0);

}  // namespace cairn::agent::testing
