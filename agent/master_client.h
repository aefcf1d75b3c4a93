// The agent's calls to the master (PROTOCOL.md §1, §2, §4) over HTTP/JSON. Reports are retried
// with back-off on transport errors and 5xx answers until the master takes them or Cancel() is
// called; a 4xx answer is final and returned as its Status.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/report_queue.h"
#include "agent/slot_discovery.h"
#include "base/status.h"
#include "net/http_client.h"

namespace cairn::agent {

struct RetryPolicy {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::milliseconds request_timeout{10000};
  // A heartbeat is not retried (the next one follows soon), so it waits less.
  std::chrono::milliseconds heartbeat_timeout{2000};
};

struct RegisterRequest {
  std::string incarnation;
  std::string resource_pool;
  std::vector<SlotDevice> devices;
  std::string hostname;
  std::string version;
  std::string address;  // where other tasks reach this agent's tasks (--service-address)
  bool runs_containers = false;
};

// The master's answer to a registration.
struct Registration {
  uint64_t offset = 0;
  uint64_t resume_from = 0;
  std::string transport;  // "http" | "kafka"
  std::string brokers;    // kafka only
  std::string topic_prefix;
};

// The Status an HTTP answer maps to (net/http_client.h).
using net::StatusFromHttp;

// Parses a register answer; offsets may be JSON strings or numbers.
Result<Registration> ParseRegistration(const std::string& body);

// Not thread-safe, except Cancel(): give each thread its own MasterClient.
class MasterClient {
 public:
  // Every request carries `agent_token` as its bearer token (the master refuses agents without
  // it); "" sends none. An https:// master is verified with the CA in `master_cert_file` ("" =
  // the system's CAs).
  static Result<std::unique_ptr<MasterClient>> Create(const std::string& master_url,
                                                      std::string agent_id, RetryPolicy policy,
                                                      std::string agent_token = "",
                                                      const std::string& master_cert_file = "");
  MasterClient(net::Client client, std::string agent_id, RetryPolicy policy,
               std::string agent_token = "");

  // Another client to the same master, for the same agent and policy, with its own connection
  // (so that another thread can use it); not cancelled, whatever this one is.
  std::unique_ptr<MasterClient> Clone() const;

  // Retried until the master answers (a 4xx is returned, not retried).
  Result<Registration> Register(const RegisterRequest& request);
  // One attempt. FailedPrecondition (409) or NotFound when the master does not hold
  // `incarnation` as connected: the caller registers again.
  Status Heartbeat(const std::string& incarnation);
  Status ReportStarted(const StartedReport& report);
  // POST /api/v1/allocations/{id}/ready: the task's service answers.
  Status ReportReady(const ReadyReport& report);
  Status ReportExited(const ExitedReport& report);
  Status ShipLogs(const LogBatch& batch);
  // The files uploaded with the task `allocation_id` runs (det cmd run -c DIR), as the master
  // keeps them: {"files":[{"path","content" (base64),"mode"}]}. Retried like a report.
  Result<std::string> FetchTaskFiles(const std::string& allocation_id);

  // Thread-safe. Aborts the call in flight and makes every retry loop return Unavailable.
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }

 private:
  // One exchange; the HTTP answer mapped to a Status, with the body for 2xx.
  Result<std::string> Attempt(const std::string& method, const std::string& target,
                              const std::string& body, std::chrono::milliseconds timeout);
  // Attempts until success, a 4xx, or Cancel(); returns the 2xx body.
  Result<std::string> CallWithRetries(const std::string& what, const std::string& method,
                                      const std::string& target, const std::string& body);

  net::Client client_;
  const std::string agent_id_;
  const RetryPolicy policy_;
  const std::string agent_token_;  // a secret: never logged
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable cancel_signal_;
};

}  // namespace cairn::agent
