// Deterministic events for the embedded log's tests and crash writer: the event for offset n is
// always the same, so a reader can check every event it gets back against its offset.
#pragma once

#include <cstdint>
#include <string>

#include "events/event_log.h"

namespace cairn::testing {

// A TaskSubmitted envelope of a few hundred bytes whose event_id is "evt-<n>"; its size varies
// with n so torn tails land at varied places. The offset field is left unset.
inline Envelope MakeTestEvent(uint64_t n) {
  std::string number = std::to_string(n);
  Envelope event;
  event.set_event_id("evt-" + number);
  event.set_time_unix_micros(1'700'000'000'000'000 + static_cast<int64_t>(n));
  event.set_actor("user:alice");
  event.set_correlation_id("req-" + std::to_string(n / 10));
  event.set_idempotency_key("idem-" + number);
  event.set_writer_epoch(1);
  event.set_schema_version(1);
  auto* task = event.mutable_task_submitted();
  task->set_task_id("task-" + number);
  task->set_job_id("job-" + std::to_string(n % 97));
  auto* spec = task->mutable_spec();
  spec->set_task_type(events::TASK_TYPE_COMMAND);
  for (const char* arg : {"python3", "train.py", "--seed"}) spec->add_entrypoint(arg);
  spec->add_entrypoint(number);
  spec->set_user("alice");
  auto* resources = task->mutable_resources();
  resources->set_slots(static_cast<int32_t>(1 + n % 8));
  resources->set_resource_pool("default");
  resources->set_priority(42);
  resources->set_weight(1.0);
  task->set_config_json("{\"pad\":\"" + std::string(n * 37 % 257, static_cast<char>('a' + n % 26)) +
                        "\"}");
  return event;
}

// MakeTestEvent(n) as the log returns it: with its offset set.
inline Envelope ExpectedTestEvent(uint64_t n) {
  Envelope event = MakeTestEvent(n);
  event.set_offset(n);
  return event;
}

}  // namespace cairn::testing
