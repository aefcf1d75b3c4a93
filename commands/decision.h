// The bottom of the write side: what every domain's decider takes (the command's meta) and
// gives (a Decision). Each domain (commands/<domain>/) decides its own commands into a Decision;
// the dispatcher (commands/decider.h) routes a command to its domain. Pure data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "events.pb.h"

namespace cairn::commands {

// Who asked, when, and how to recognise a retry. Filled by the edge (api/), recorded in every
// event the command produces.
struct CommandMeta {
  std::string actor;            // "user:admin", "agent:a1", "system:heartbeat-monitor"
  std::string correlation_id;   // the request id
  std::string idempotency_key;  // "" = none; a repeat of a key produces no new events
  int64_t time_unix_micros = 0;
  // The request the key came with (hex SHA-256 of method, path and body); "" = not compared.
  std::string request_fingerprint{};
};

struct Decision {
  std::vector<events::Envelope> events;  // payloads only; the writer fills the envelope
  std::string entity_id;                 // the task, agent, experiment, ... the command was about
};

// The decision of a command that changes nothing (a retry, a kill of an ended task).
inline Decision NoChange(std::string entity_id) { return Decision{{}, std::move(entity_id)}; }

}  // namespace cairn::commands
