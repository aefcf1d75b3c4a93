// `cairn replay`'s work: dump events, rebuild projections, digest the live projections, show the
// cluster state as of an offset or a time, tell a task's or an experiment's story, count
// GPU-hours, hand out the event schema, and replay the submissions under another scheduler
// configuration (whatif). The
// command line that fills ReplayOptions and checks it is replay_command.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "base/status.h"
#include "events/event_log.h"
#include "replay/audit.h"
#include "replay/event_filter.h"

namespace cairn::replay {

// Every value a replay subcommand takes; each reads the ones its own flags set.
struct ReplayOptions {
  // The log: DIR/log (the master's data directory), or Kafka when brokers are given. Digest
  // reads DIR/projections, and the log from Kafka when brokers are given too.
  std::optional<std::string> data_dir;
  std::optional<std::string> brokers;
  std::string topic_prefix = "cairn";

  EventFilter filter;  // dump
  // dump, audit: values shown as an admin sees them (all but the variables marked secret);
  // without it, as everyone else does (`NAME=********`).
  bool reveal = false;
  std::string out_dir;                // rebuild
  std::string projection = "all";     // rebuild, digest: a projector's name or "all"
  std::optional<uint64_t> to_offset;  // rebuild
  // digest: the snapshot published at this offset (DIR/snapshots/snap-<N, 20 digits>) instead of
  // the live DB.
  std::optional<uint64_t> snapshot_offset;
  // state, explain, experiment, usage: after offset N (inclusive), or after the events up to
  // time T.
  std::optional<uint64_t> at_offset;
  std::optional<int64_t> at_time;  // unix micros
  std::string format = "table";    // state, audit, usage: "table" (audit: lines) or "json"
  std::string task_id;             // explain
  int64_t experiment_id = 0;       // experiment
  AuditQuery audit;                // audit
  std::string config_path;         // whatif: the configuration to simulate under
  std::optional<int64_t> from;     // whatif: the window's submissions, unix micros, inclusive
  std::optional<int64_t> until;
  bool json = false;       // whatif
  std::string start_date;  // allocations: the report's days (months with `monthly`)
  std::string end_date;
  bool monthly = false;
};

// Each writes its output to `out`. An error means the work failed: the log or the projections
// could not be read or written, an offset is past the log's end, the task is not in the log.
Status Dump(const ReplayOptions& options, std::ostream& out);
Status Rebuild(const ReplayOptions& options, std::ostream& out);
Status Digest(const ReplayOptions& options, std::ostream& out);
Status State(const ReplayOptions& options, std::ostream& out);
Status ExplainTask(const ReplayOptions& options, std::ostream& out);
Status ExplainExperiment(const ReplayOptions& options, std::ostream& out);
// Who did what, when (replay/audit.h): one line per record, or JSON lines with the event.
Status Audit(const ReplayOptions& options, std::ostream& out);
// GPU-hours per user and per workspace (replay/usage.h), as a table or one JSON document.
Status Usage(const ReplayOptions& options, std::ostream& out);
// Determined's aggregated allocation report (projections/allocation_reports.h) as of the moment,
// as CSV ("table") or JSON.
Status Allocations(const ReplayOptions& options, std::ostream& out);
// The event schema's FileDescriptorSet (events/event_schema.h), binary; reads no log.
Status Schema(const ReplayOptions& options, std::ostream& out);
// The log's submissions under the configuration in options.config_path, beside what happened
// (replay/whatif.h).
Status WhatIf(const ReplayOptions& options, std::ostream& out);

// Reads `log` from its start to its current end, handing each record `query` keeps (and its
// event) to `visit`, oldest first, until `visit` returns false. For GET /api/v1/audit too.
Status ScanAudit(EventLog& log, const AuditQuery& query,
                 const std::function<bool(const AuditRecord&, const events::Envelope&)>& visit);

}  // namespace cairn::replay
