// Writes a realistic cluster history to an event log, for the history benchmarks: thousands of
// users in workspaces submitting commands and grid experiments to three pools (one of them a
// priority pool with preemption that high-priority bursts contend for), agents joining, leaving
// and coming back, trial processes reporting training, validations and checkpoints.
//
// The events are the real decider's: each simulated request (a user's submission, an agent's
// report, a harness's workload) is a command decided against the decision state exactly as the
// master's writer decides it, with the scheduler's follow-ups, so the log is one a master could
// have written and replays to the same state. Simulated time, ids and choices come from `seed`:
// the same options write the same events.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "events/event_log.h"

namespace cairn::bench {

struct HistoryOptions {
  uint64_t events = 1'000'000;  // stop once the log holds at least this many
  uint64_t seed = 42;
  int users = 2000;
  int workspaces = 20;
  int agents_per_pool = 40;  // three pools of 8-slot agents
  // One submission in this many is a grid experiment (four trials), the rest commands.
  int experiment_every = 12;
};

struct HistorySummary {
  uint64_t events = 0;
  int64_t commands = 0;
  int64_t experiments = 0;
  int64_t preemptions = 0;  // kills the scheduler asked for to free slots
  int64_t agent_departures = 0;
  int64_t refusals = 0;  // commands the decider refused (a report about an allocation that ended)
  int64_t first_time_unix_micros = 0;
  int64_t last_time_unix_micros = 0;
};

// Appends the history to `log`, which should be empty (a log with events is refused).
Result<HistorySummary> GenerateHistory(EventLog& log, const HistoryOptions& options);

}  // namespace cairn::bench
