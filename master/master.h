// The master process, assembled: the event log, the single writer, the projections, task logs,
// the heartbeat monitor, the Kafka placement relay (Kafka mode) and the HTTP server. Startup is
// replay: the writer folds the log before anything is served.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "base/status.h"
#include "master/data_dir.h"
#include "master/master_config.h"

namespace cairn {

class Master {
 public:
  // Opens everything under config.data_dir and starts serving.
  static Result<std::unique_ptr<Master>> Start(const MasterConfig& config);
  ~Master();  // stops

  uint16_t port() const;
  std::string url() const;
  // Stops serving (open streams end), finishes queued commands, closes the log. Idempotent.
  void Stop();

  // The master's parts, in the order Start brings them up (master.cpp).
  struct Parts;

 private:
  explicit Master(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace cairn
