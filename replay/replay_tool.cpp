#include "replay/replay_tool.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>

#include "base/clock.h"
#include "base/encoding.h"
#include "base/files.h"
#include "base/log.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_state.h"
#include "commands/scheduler/explain.h"
#include "events/envelope_util.h"
#include "events/event_log.h"
#include "events/event_schema.h"
#include "projections/allocation_reports.h"
#include "projections/projections.h"
#include "projections/snapshots.h"
#include "replay/state_format.h"
#include "replay/usage.h"
#include "replay/whatif.h"
#include "replay/whatif_format.h"

namespace cairn::replay {

namespace {

constexpr size_t kReadBatch = 1000;
// Events below EndOffset() are durable, so reads of them return at once; this bounds a stuck
// backend.
constexpr auto kReadWait = std::chrono::seconds(10);

// Kafka when --kafka is given (digest may name a data directory as well, for its projections).
LogConfig LogConfigFrom(const ReplayOptions& options) {
  LogConfig config;
  config.read_only = true;
  if (options.brokers) {
    config.backend = "kafka";
    config.brokers = *options.brokers;
    config.topic_prefix = options.topic_prefix;
  } else {
    config.backend = "embedded";
    config.data_dir = options.data_dir.value_or("");
  }
  return config;
}

// The projections asked for; an empty list means every one.
std::vector<std::string> ProjectionNames(const ReplayOptions& options) {
  if (options.projection == "all") return {};
  return {options.projection};
}

// Reads events [from, stop) in order, handing each to `visit` until it returns false.
Status ReadLog(EventLog& log, uint64_t from, uint64_t stop,
               const std::function<bool(const events::Envelope&)>& visit) {
  if (from >= stop) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto reader, log.OpenReader(from));
  while (reader->position() < stop) {
    size_t wanted = std::min<uint64_t>(kReadBatch, stop - reader->position());
    CAIRN_ASSIGN_OR_RETURN(auto batch, reader->Next(wanted, kReadWait));
    if (batch.empty()) {
      return Status::Unavailable(log.Describe() + " returned nothing at offset " +
                                 std::to_string(reader->position()) + " below its end " +
                                 std::to_string(stop));
    }
    for (const auto& event : batch) {
      if (!visit(event)) return Status::Ok();
    }
  }
  return Status::Ok();
}

void PrintSummaries(const std::vector<projections::ProjectionSummary>& summaries,
                    std::ostream& out) {
  out << "projection applied_offset digest\n";
  for (const auto& summary : summaries) {
    out << summary.name << " " << summary.next_offset << " " << summary.digest << "\n";
  }
}

Status CheckOffsetInLog(uint64_t offset, uint64_t end) {
  if (offset < end) return Status::Ok();
  return Status::InvalidArgument("offset " + std::to_string(offset) + " is past the log's end (" +
                                 (end == 0 ? std::string("the log is empty")
                                           : "its last offset is " + std::to_string(end - 1)) +
                                 ")");
}

// The part of the log a command looks at: everything, or up to --at-offset N (inclusive), or
// the events up to --at-time T.
struct LogWindow {
  std::unique_ptr<EventLog> log;
  uint64_t stop = 0;               // read offsets below this
  std::optional<int64_t> at_time;  // and stop at the first event after this time
};

Result<LogWindow> OpenLogWindow(const ReplayOptions& options) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  LogWindow window{std::move(log), end, options.at_time};
  if (options.at_offset) {
    CAIRN_RETURN_IF_ERROR(CheckOffsetInLog(*options.at_offset, end));
    window.stop = *options.at_offset + 1;
  }
  return window;
}

// One line of a task's history: the decision and its reason, from the event alone.
std::string HistoryLine(const events::Envelope& event) {
  std::string what = PayloadTypeName(event);
  std::string detail;
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted: {
      const auto& resources = event.task_submitted().resources();
      detail = "pool " + resources.resource_pool() + ", " + std::to_string(resources.slots()) +
               " slot(s), priority " + std::to_string(resources.priority());
      break;
    }
    case events::Envelope::kAllocationAssigned:
      detail =
          event.allocation_assigned().allocation_id() + ": " + event.allocation_assigned().reason();
      break;
    case events::Envelope::kPreemptionRequested:
      detail = event.preemption_requested().reason();
      break;
    case events::Envelope::kAllocationReleased:
      detail = event.allocation_released().reason();
      break;
    case events::Envelope::kKillRequested:
      detail = event.kill_requested().reason();
      break;
    case events::Envelope::kTaskExited:
      detail = event.task_exited().reason();
      break;
    case events::Envelope::kTaskStarted:
      detail = "on agent " + event.task_started().agent_id();
      break;
    case events::Envelope::kJobQueueChanged:
      detail =
          "job " + event.job_queue_changed().job_id() + ": " + event.job_queue_changed().reason();
      break;
    case events::Envelope::kTrialCreated:
      detail = "trial " + std::to_string(event.trial_created().trial_id()) + " " +
               event.trial_created().hparams_json() + ": " + event.trial_created().reason();
      break;
    case events::Envelope::kTrialTrainTo:
      detail = "trial " + std::to_string(event.trial_train_to().trial_id()) + " to " +
               std::to_string(event.trial_train_to().length_batches()) +
               " batches: " + event.trial_train_to().reason();
      break;
    case events::Envelope::kTrialClosed:
      detail = "trial " + std::to_string(event.trial_closed().trial_id()) + ": " +
               event.trial_closed().reason();
      break;
    case events::Envelope::kTrialLogPolicyMatched: {
      const auto& matched = event.trial_log_policy_matched();
      detail = "trial " + std::to_string(matched.trial_id()) + ": its log matched policy " +
               (matched.policy_name().empty() ? "(unnamed)" : "'" + matched.policy_name() + "'") +
               " (" + matched.pattern() + ")" +
               (matched.action().empty() ? std::string() : ", action " + matched.action()) +
               " on agent " + matched.agent_id();
      break;
    }
    case events::Envelope::kTrialRestarted:
      detail = "trial " + std::to_string(event.trial_restarted().trial_id()) + ": " +
               event.trial_restarted().reason();
      break;
    case events::Envelope::kTrialEnded:
      detail = "trial " + std::to_string(event.trial_ended().trial_id()) + " " +
               commands::ExperimentStateText(event.trial_ended().state()) + ": " +
               event.trial_ended().reason();
      break;
    case events::Envelope::kExperimentStateChanged:
      detail =
          std::string(commands::ExperimentStateText(event.experiment_state_changed().state())) +
          ": " + event.experiment_state_changed().reason();
      break;
    case events::Envelope::kCheckpointsDeleted:
      detail = std::to_string(event.checkpoints_deleted().uuids_size()) +
               " checkpoint(s): " + event.checkpoints_deleted().reason();
      break;
    case events::Envelope::kExperimentUpdated:
      if (event.experiment_updated().has_name()) {
        detail = "renamed " + event.experiment_updated().name();
      }
      break;
    case events::Envelope::kExperimentArchived:
      detail = event.experiment_archived().archived() ? "archived" : "unarchived";
      break;
    case events::Envelope::kTrialKillRequested:
      detail = "trial " + std::to_string(event.trial_kill_requested().trial_id());
      break;
    case events::Envelope::kExperimentContinued:
      detail = "trial " + std::to_string(event.experiment_continued().trial_id()) +
               " trains on: " + event.experiment_continued().override_yaml();
      break;
    default:
      break;
  }
  return "  " + std::to_string(event.offset()) + "  " + FormatRfc3339(event.time_unix_micros()) +
         "  " + what + " by " + event.actor() + (detail.empty() ? "" : ": " + detail);
}

// The experiment's id in an experiment-level event, or 0.
int64_t ExperimentIdOf(const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kExperimentCreated:
      return event.experiment_created().experiment_id();
    case events::Envelope::kTrialCreated:
      return event.trial_created().experiment_id();
    case events::Envelope::kTrialTrainTo:
      return event.trial_train_to().experiment_id();
    case events::Envelope::kTrialClosed:
      return event.trial_closed().experiment_id();
    case events::Envelope::kTrialRestarted:
      return event.trial_restarted().experiment_id();
    case events::Envelope::kTrialEnded:
      return event.trial_ended().experiment_id();
    case events::Envelope::kExperimentStateChanged:
      return event.experiment_state_changed().experiment_id();
    case events::Envelope::kCheckpointsDeleted:
      return event.checkpoints_deleted().experiment_id();
    case events::Envelope::kExperimentUpdated:
      return event.experiment_updated().experiment_id();
    case events::Envelope::kExperimentArchived:
      return event.experiment_archived().experiment_id();
    case events::Envelope::kExperimentDeleted:
      return event.experiment_deleted().experiment_id();
    case events::Envelope::kTrialKillRequested:
      return event.trial_kill_requested().experiment_id();
    case events::Envelope::kExperimentContinued:
      return event.experiment_continued().experiment_id();
    default:
      return 0;
  }
}

}  // namespace

// Whom the output is for: an admin who asked to see values (--reveal), else anyone.
Audience AudienceOf(const ReplayOptions& options) {
  return options.reveal ? Audience::kOwner : Audience::kOthers;
}

Status Dump(const ReplayOptions& options, std::ostream& out) {
  const EventFilter& filter = options.filter;
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  uint64_t stop = filter.to_offset ? std::min(end, *filter.to_offset + 1) : end;
  Status status = ReadLog(*log, filter.from_offset, stop, [&](const events::Envelope& event) {
    if (filter.Matches(event)) out << EnvelopeToJson(event, AudienceOf(options)) << "\n";
    return true;
  });
  out.flush();
  return status;
}

Status ScanAudit(EventLog& log, const AuditQuery& query,
                 const std::function<bool(const AuditRecord&, const events::Envelope&)>& visit) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log.EndOffset());
  AuditTrail trail(query);
  return ReadLog(log, 0, end, [&](const events::Envelope& event) {
    std::optional<AuditRecord> record = trail.Add(event);
    return !record || visit(*record, event);
  });
}

Status Audit(const ReplayOptions& options, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
  Status status =
      ScanAudit(*log, options.audit, [&](const AuditRecord& record, const events::Envelope& event) {
        if (options.format == "json") {
          out << AuditRecordJson(record, event, AudienceOf(options)).dump() << "\n";
        } else {
          out << AuditLine(record) << "\n";
        }
        return true;
      });
  out.flush();
  return status;
}

Status Rebuild(const ReplayOptions& options, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
  if (options.to_offset) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
    CAIRN_RETURN_IF_ERROR(CheckOffsetInLog(*options.to_offset, end));
  }
  CAIRN_ASSIGN_OR_RETURN(
      auto summaries,
      RebuildProjections(options.out_dir, log.get(), ProjectionNames(options), options.to_offset));
  PrintSummaries(summaries, out);
  return Status::Ok();
}

Status Digest(const ReplayOptions& options, std::ostream& out) {
  const std::string data_dir = options.data_dir.value_or("");
  std::string projection_dir = data_dir + "/projections";
  if (options.snapshot_offset) {
    // A snapshot's metadata records each projection's offset, not its digest: computed here.
    auto store = projections::SnapshotStore::OpenExisting(data_dir + "/snapshots");
    std::string offsets;
    projection_dir.clear();
    for (const auto& snapshot : store->List()) {
      if (snapshot.next_offset == *options.snapshot_offset) projection_dir = snapshot.path;
      offsets += (offsets.empty() ? "" : ", ") + std::to_string(snapshot.next_offset);
    }
    if (projection_dir.empty()) {
      return Status::NotFound(
          "no snapshot at offset " + std::to_string(*options.snapshot_offset) + " in " +
          store->dir() +
          (offsets.empty() ? " (it holds none that can be read)" : "; it holds: " + offsets));
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto summaries, projections::SummarizeProjectionDir(
                                             projection_dir, ProjectionNames(options)));
  PrintSummaries(summaries, out);
  // The log's end tells whether the projections had caught up; a data dir without its log (a
  // copy of the projections alone) is still worth a digest.
  std::error_code error;
  if (options.brokers || std::filesystem::exists(data_dir + "/log", error)) {
    CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
    out << "log_end " << end << "\n";
  }
  return Status::Ok();
}

Status State(const ReplayOptions& options, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(LogWindow window, OpenLogWindow(options));
  auto print = [&](Queries& state, uint64_t next_offset) {
    return options.format == "json" ? PrintStateJson(state, next_offset, out)
                                    : PrintStateTable(state, next_offset, out);
  };
  // A master's data directory with snapshots: the newest one before the moment, plus the tail.
  const std::string snapshot_dir = options.data_dir.value_or("") + "/snapshots";
  std::error_code error;
  if (options.data_dir && window.stop > 0 && std::filesystem::is_directory(snapshot_dir, error)) {
    auto store = projections::SnapshotStore::OpenExisting(snapshot_dir);
    CAIRN_ASSIGN_OR_RETURN(auto past, projections::PastProjections::Open(
                                          store.get(), window.log.get(), window.stop - 1,
                                          window.at_time, StateProjections()));
    if (past->base()) {
      log::Info("replay", "started from snapshot {} (offset {})", past->base()->path,
                past->base()->next_offset);
    }
    return print(*past, past->next_offset());
  }
  ProjectionState state;
  Status apply_status;
  // --at-time folds the longest prefix of the log whose events are all at or before T: a state
  // the cluster was really in, even if a writer's clock stepped back later.
  Status status = ReadLog(*window.log, 0, window.stop, [&](const events::Envelope& event) {
    if (window.at_time && event.time_unix_micros() > *window.at_time) return false;
    apply_status = state.Apply(event);
    return apply_status.ok();
  });
  CAIRN_RETURN_IF_ERROR(status);
  CAIRN_RETURN_IF_ERROR(apply_status);
  return print(state, state.next_offset());
}

Status ExplainTask(const ReplayOptions& options, std::ostream& out) {
  const std::string& task_id = options.task_id;
  CAIRN_ASSIGN_OR_RETURN(LogWindow window, OpenLogWindow(options));
  // The write side's own state, folded exactly as the master folds it: the answer comes from
  // the recorded events and the same pure scheduler, never from a live process.
  commands::DecisionState state;
  std::vector<std::string> history;
  std::string job_id;
  int64_t as_of_time = 0;
  uint64_t as_of_offset = 0;
  Status status = ReadLog(*window.log, 0, window.stop, [&](const events::Envelope& event) {
    if (window.at_time && event.time_unix_micros() > *window.at_time) return false;
    commands::Apply(state, event);
    as_of_time = event.time_unix_micros();
    as_of_offset = event.offset();
    if (event.has_task_submitted() && event.task_submitted().task_id() == task_id) {
      job_id = event.task_submitted().job_id();
    }
    bool about_task = TaskIdOf(event) == task_id;
    bool about_job = !job_id.empty() && event.has_job_queue_changed() &&
                     event.job_queue_changed().job_id() == job_id;
    if (about_task || about_job) history.push_back(HistoryLine(event));
    return true;
  });
  CAIRN_RETURN_IF_ERROR(status);
  auto explanation = commands::ExplainTask(state, task_id, as_of_time);
  if (!explanation.ok()) {
    return Status::NotFound("task " + task_id + " is not in the log up to offset " +
                            std::to_string(as_of_offset));
  }
  out << "task " << task_id << " as of offset " << as_of_offset << " (" << FormatRfc3339(as_of_time)
      << ")\n"
      << explanation->reason << "\n\nhistory:\n";
  for (const auto& line : history) out << line << "\n";
  return Status::Ok();
}

// The searcher's story: the experiment and its trials as the write side had them after offset
// N (folded from the log like the master folds it), then every decision with its reason.
Status ExplainExperiment(const ReplayOptions& options, std::ostream& out) {
  const int64_t experiment_id = options.experiment_id;
  CAIRN_ASSIGN_OR_RETURN(LogWindow window, OpenLogWindow(options));
  commands::DecisionState state;
  std::vector<std::string> history;
  uint64_t as_of_offset = 0;
  int64_t as_of_time = 0;
  Status status = ReadLog(*window.log, 0, window.stop, [&](const events::Envelope& event) {
    if (window.at_time && event.time_unix_micros() > *window.at_time) return false;
    commands::Apply(state, event);
    as_of_offset = event.offset();
    as_of_time = event.time_unix_micros();
    if (ExperimentIdOf(event) == experiment_id) history.push_back(HistoryLine(event));
    return true;
  });
  CAIRN_RETURN_IF_ERROR(status);
  const commands::ExperimentRecord* experiment = state.FindExperiment(experiment_id);
  if (experiment == nullptr) {
    return Status::NotFound("experiment " + std::to_string(experiment_id) +
                            " is not in the log up to offset " + std::to_string(as_of_offset));
  }
  out << "experiment " << experiment_id << " as of offset " << as_of_offset << " ("
      << FormatRfc3339(as_of_time) << "): " << commands::ExperimentStateText(experiment->state);
  if (experiment->searcher) {
    out << ", searcher " << experiment->config->effective["searcher"]["name"].get<std::string>()
        << " " << FormatNumber(100 * experiment->searcher->Progress()) << "% done";
  } else if (!experiment->config_error.empty()) {
    out << ", configuration unreadable: " << experiment->config_error;
  }
  out << "\n\ntrials:\n";
  for (int64_t trial_id : experiment->trial_ids) {
    const commands::TrialRecord& trial = state.trials.at(trial_id);
    std::string best;
    for (const auto& [batches, metric] : trial.searcher_metric) {
      best += (best.empty() ? "" : ", ") + std::to_string(batches) + ": " + FormatNumber(metric);
    }
    out << "  " << trial_id << "  " << commands::ExperimentStateText(trial.state) << "  target "
        << trial.train_to << " batches, trained " << trial.batches << ", checkpoint at "
        << trial.checkpoint_batches << ", restarts " << trial.restarts
        << (trial.closed ? ", closed" : "")
        << (trial.task_id.empty() ? "" : ", run " + trial.task_id) << "  validations {" << best
        << "}  hparams " << trial.hparams_json << "\n";
  }
  out << "\nhistory:\n";
  for (const auto& line : history) out << line << "\n";
  return Status::Ok();
}

Status Usage(const ReplayOptions& options, std::ostream& out) {
  CAIRN_ASSIGN_OR_RETURN(LogWindow window, OpenLogWindow(options));
  UsageLedger ledger;
  CAIRN_RETURN_IF_ERROR(ReadLog(*window.log, 0, window.stop, [&](const events::Envelope& event) {
    if (window.at_time && event.time_unix_micros() > *window.at_time) return false;
    ledger.Apply(event);
    return true;
  }));
  const UsageReport report = ledger.Report();
  if (options.format == "json") {
    out << UsageJson(report).dump() << "\n";
  } else {
    PrintUsageTable(report, out);
  }
  return Status::Ok();
}

Status Allocations(const ReplayOptions& options, std::ostream& out) {
  using projections::AggregationPeriod;
  const AggregationPeriod period =
      options.monthly ? AggregationPeriod::kMonthly : AggregationPeriod::kDaily;
  CAIRN_ASSIGN_OR_RETURN(
      projections::DateWindow dates,
      projections::ParseDateWindow(options.start_date, options.end_date, period));
  CAIRN_ASSIGN_OR_RETURN(LogWindow window, OpenLogWindow(options));
  std::vector<projections::AggregatedUsage> usage;
  if (window.stop > 0) {
    std::unique_ptr<projections::SnapshotStore> store;
    const std::string snapshot_dir = options.data_dir.value_or("") + "/snapshots";
    std::error_code error;
    if (options.data_dir && std::filesystem::is_directory(snapshot_dir, error)) {
      store = projections::SnapshotStore::OpenExisting(snapshot_dir);
    }
    CAIRN_ASSIGN_OR_RETURN(auto past, projections::PastProjections::Open(
                                          store.get(), window.log.get(), window.stop - 1,
                                          window.at_time, {projections::kAllocationsProjector}));
    CAIRN_ASSIGN_OR_RETURN(auto ledger,
                           past->AllocationLedger(dates.start_unix_micros, dates.end_unix_micros));
    // "Now" is the moment's: the last event folded.
    usage = projections::AggregateUsage(ledger, dates, period, ledger.folded_until_unix_micros);
  }
  if (options.format == "json") {
    out << projections::AggregatedUsageJson(usage, period).dump() << "\n";
  } else {
    out << projections::AggregatedUsageCsv(usage);
  }
  return Status::Ok();
}

Status Schema(const ReplayOptions&, std::ostream& out) {
  const std::string_view descriptor_set = EventSchemaDescriptorSet();
  out.write(descriptor_set.data(), static_cast<std::streamsize>(descriptor_set.size()));
  if (!out) return Status::IOError("cannot write the descriptor set to standard output");
  return Status::Ok();
}

Status WhatIf(const ReplayOptions& options, std::ostream& out) {
  Result<std::string> text = ReadWholeFile(options.config_path);
  if (!text.ok()) {
    return Status(text.status().code(), "--config: " + text.status().message());
  }
  CAIRN_ASSIGN_OR_RETURN(WhatIfConfig config, ParseWhatIfConfig(*text, options.config_path));
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<EventLog> log, OpenEventLog(LogConfigFrom(options)));
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  WhatIfSimulation simulation(std::move(config), WhatIfWindow{options.from, options.until});
  CAIRN_RETURN_IF_ERROR(ReadLog(*log, 0, end, [&](const events::Envelope& event) {
    simulation.Add(event);
    return true;
  }));
  CAIRN_ASSIGN_OR_RETURN(WhatIfReport report, simulation.Run());
  out << (options.json ? WhatIfJson(report) : WhatIfTable(report));
  return Status::Ok();
}

}  // namespace cairn::replay
