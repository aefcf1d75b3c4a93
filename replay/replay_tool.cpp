#include "replay/replay_tool.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <variant>

#include "base/clock.h"
#include "base/encoding.h"
#include "commands/decision_state.h"
#include "commands/experiment_state.h"
#include "commands/scheduler/explain.h"
#include "events/envelope_util.h"
#include "events/event_log.h"
#include "projections/projections.h"
#include "replay/event_filter.h"
#include "replay/flags.h"
#include "replay/state_format.h"

namespace cairn::replay {

namespace {

constexpr size_t kReadBatch = 1000;
// Events below EndOffset() are durable, so reads of them return at once; this bounds a stuck
// backend.
constexpr auto kReadWait = std::chrono::seconds(10);

const std::set<std::string> kLogFlags = {"data", "kafka", "topic-prefix"};

std::set<std::string> WithLogFlags(std::set<std::string> flags) {
  flags.insert(kLogFlags.begin(), kLogFlags.end());
  return flags;
}

// A usage mistake (exit 2) as opposed to a failure of the work (exit 1).
struct Outcome {
  int code = 0;
  Status status;
  static Outcome Usage(Status status) { return {2, std::move(status)}; }
  static Outcome Failed(Status status) { return {1, std::move(status)}; }
};

// Validates the log flags; the log itself is opened later, as part of the work.
Result<LogConfig> LogConfigFromFlags(const Flags& flags, bool data_names_projections) {
  LogConfig config;
  config.read_only = true;
  if (flags.has("kafka")) {
    if (flags.has("data") && !data_names_projections) {
      return Status::InvalidArgument("give either --data DIR or --kafka BROKERS, not both");
    }
    config.backend = "kafka";
    config.brokers = *flags.Get("kafka");
    if (auto prefix = flags.Get("topic-prefix")) config.topic_prefix = *prefix;
    return config;
  }
  if (flags.has("topic-prefix")) return Status::InvalidArgument("--topic-prefix needs --kafka");
  if (!flags.has("data")) return Status::InvalidArgument("give --data DIR or --kafka BROKERS");
  config.backend = "embedded";
  config.data_dir = *flags.Get("data");
  return config;
}

Result<std::vector<std::string>> ProjectionNamesFromFlags(const Flags& flags) {
  auto name = flags.Get("projection");
  if (!name || *name == "all") return std::vector<std::string>();
  const auto& known = projections::ProjectorNames();
  if (std::find(known.begin(), known.end(), *name) == known.end()) {
    return Status::InvalidArgument("unknown projection '" + *name +
                                   "' (known: tasks, agents, job_queue, experiments, all)");
  }
  return std::vector<std::string>{*name};
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

Outcome Dump(const Flags& flags, std::ostream& out) {
  EventFilter filter;
  auto config = LogConfigFromFlags(flags, false);
  if (!config.ok()) return Outcome::Usage(config.status());
  if (auto types = flags.Get("type")) {
    auto parsed = ParseEventTypes(*types);
    if (!parsed.ok()) return Outcome::Usage(parsed.status());
    filter.types = *parsed;
  }
  filter.entity = flags.Get("entity").value_or("");
  auto from = flags.GetUint("from-offset");
  auto to = flags.GetUint("to-offset");
  auto since = flags.GetTime("since");
  auto until = flags.GetTime("until");
  for (const Status* status : {&from.status(), &to.status(), &since.status(), &until.status()}) {
    if (!status->ok()) return Outcome::Usage(*status);
  }
  filter.from_offset = from->value_or(0);
  filter.to_offset = *to;
  filter.since_micros = *since;
  filter.until_micros = *until;
  if (filter.to_offset && *filter.to_offset < filter.from_offset) {
    return Outcome::Usage(Status::InvalidArgument("--to-offset is before --from-offset"));
  }

  auto log = OpenEventLog(*config);
  if (!log.ok()) return Outcome::Failed(log.status());
  auto end = (*log)->EndOffset();
  if (!end.ok()) return Outcome::Failed(end.status());
  uint64_t stop = filter.to_offset ? std::min(*end, *filter.to_offset + 1) : *end;
  Status status = ReadLog(**log, filter.from_offset, stop, [&](const events::Envelope& event) {
    if (filter.Matches(event)) out << EnvelopeToJson(event) << "\n";
    return true;
  });
  out.flush();
  return Outcome::Failed(status);
}

Outcome Rebuild(const Flags& flags, std::ostream& out) {
  auto config = LogConfigFromFlags(flags, false);
  if (!config.ok()) return Outcome::Usage(config.status());
  auto names = ProjectionNamesFromFlags(flags);
  if (!names.ok()) return Outcome::Usage(names.status());
  auto to = flags.GetUint("to-offset");
  if (!to.ok()) return Outcome::Usage(to.status());
  auto out_dir = flags.Get("out");
  if (!out_dir) return Outcome::Usage(Status::InvalidArgument("rebuild needs --out DIR"));

  auto log = OpenEventLog(*config);
  if (!log.ok()) return Outcome::Failed(log.status());
  if (*to) {
    auto end = (*log)->EndOffset();
    if (!end.ok()) return Outcome::Failed(end.status());
    Status in_log = CheckOffsetInLog(**to, *end);
    if (!in_log.ok()) return Outcome::Failed(in_log);
  }
  auto summaries = RebuildProjections(*out_dir, log->get(), *names, *to);
  if (!summaries.ok()) return Outcome::Failed(summaries.status());
  PrintSummaries(*summaries, out);
  return {};
}

Outcome Digest(const Flags& flags, std::ostream& out) {
  auto names = ProjectionNamesFromFlags(flags);
  if (!names.ok()) return Outcome::Usage(names.status());
  auto data_dir = flags.Get("data");
  if (!data_dir) {
    return Outcome::Usage(
        Status::InvalidArgument("digest needs --data DIR (it reads DIR/projections)"));
  }
  auto config = LogConfigFromFlags(flags, true);
  if (!config.ok()) return Outcome::Usage(config.status());

  auto summaries = projections::SummarizeProjectionDir(*data_dir + "/projections", *names);
  if (!summaries.ok()) return Outcome::Failed(summaries.status());
  PrintSummaries(*summaries, out);
  // The log's end tells whether the projections had caught up; a data dir without its log (a
  // copy of the projections alone) is still worth a digest.
  std::error_code error;
  if (config->backend == "kafka" || std::filesystem::exists(*data_dir + "/log", error)) {
    auto log = OpenEventLog(*config);
    if (!log.ok()) return Outcome::Failed(log.status());
    auto end = (*log)->EndOffset();
    if (!end.ok()) return Outcome::Failed(end.status());
    out << "log_end " << *end << "\n";
  }
  return {};
}

// The part of the log a command looks at: everything, or up to --at-offset N (inclusive), or
// the events up to --at-time T. Bad flags are usage mistakes; a log that cannot be read is a
// failure of the work.
struct LogWindow {
  std::unique_ptr<EventLog> log;
  uint64_t stop = 0;               // read offsets below this
  std::optional<int64_t> at_time;  // and stop at the first event after this time
};

std::variant<LogWindow, Outcome> OpenLogWindow(const Flags& flags, bool require_one_bound) {
  auto config = LogConfigFromFlags(flags, false);
  if (!config.ok()) return Outcome::Usage(config.status());
  auto at_offset = flags.GetUint("at-offset");
  if (!at_offset.ok()) return Outcome::Usage(at_offset.status());
  auto at_time = flags.GetTime("at-time");
  if (!at_time.ok()) return Outcome::Usage(at_time.status());
  if (require_one_bound && at_offset->has_value() == at_time->has_value()) {
    return Outcome::Usage(
        Status::InvalidArgument("give exactly one of --at-offset N, --at-time T"));
  }
  if (at_offset->has_value() && at_time->has_value()) {
    return Outcome::Usage(Status::InvalidArgument("give at most one of --at-offset, --at-time"));
  }
  auto log = OpenEventLog(*config);
  if (!log.ok()) return Outcome::Failed(log.status());
  auto end = (*log)->EndOffset();
  if (!end.ok()) return Outcome::Failed(end.status());
  LogWindow window{std::move(*log), *end, *at_time};
  if (*at_offset) {
    Status in_log = CheckOffsetInLog(**at_offset, *end);
    if (!in_log.ok()) return Outcome::Failed(in_log);
    window.stop = **at_offset + 1;
  }
  return window;
}

Outcome State(const Flags& flags, std::ostream& out) {
  const std::string format = flags.Get("format").value_or("table");
  if (format != "table" && format != "json") {
    return Outcome::Usage(
        Status::InvalidArgument("--format is 'json' or 'table', not '" + format + "'"));
  }
  auto opened = OpenLogWindow(flags, true);
  if (auto* failed = std::get_if<Outcome>(&opened)) return *failed;
  auto& window = std::get<LogWindow>(opened);
  auto& log = window.log;
  const uint64_t stop = window.stop;
  const auto& at_time = window.at_time;
  ProjectionState state;
  Status apply_status;
  // --at-time folds the longest prefix of the log whose events are all at or before T: a state
  // the cluster was really in, even if a writer's clock stepped back later.
  Status status = ReadLog(*log, 0, stop, [&](const events::Envelope& event) {
    if (at_time && event.time_unix_micros() > *at_time) return false;
    apply_status = state.Apply(event);
    return apply_status.ok();
  });
  if (status.ok()) status = apply_status;
  if (status.ok()) {
    status = format == "json" ? PrintStateJson(state, out) : PrintStateTable(state, out);
  }
  return Outcome::Failed(status);
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
    default:
      break;
  }
  return "  " + std::to_string(event.offset()) + "  " + FormatRfc3339(event.time_unix_micros()) +
         "  " + what + " by " + event.actor() + (detail.empty() ? "" : ": " + detail);
}

Outcome Explain(const Flags& flags, std::ostream& out) {
  const auto task_id = flags.Get("task");
  if (!task_id || task_id->empty()) {
    return Outcome::Usage(Status::InvalidArgument("explain needs a task id"));
  }
  auto opened = OpenLogWindow(flags, false);
  if (auto* failed = std::get_if<Outcome>(&opened)) return *failed;
  auto& window = std::get<LogWindow>(opened);
  auto& log = window.log;
  const uint64_t stop = window.stop;
  const auto& at_time = window.at_time;
  // The write side's own state, folded exactly as the master folds it: the answer comes from
  // the recorded events and the same pure scheduler, never from a live process.
  commands::DecisionState state;
  std::vector<std::string> history;
  std::string job_id;
  int64_t as_of_time = 0;
  uint64_t as_of_offset = 0;
  Status status = ReadLog(*log, 0, stop, [&](const events::Envelope& event) {
    if (at_time && event.time_unix_micros() > *at_time) return false;
    commands::Apply(state, event);
    as_of_time = event.time_unix_micros();
    as_of_offset = event.offset();
    if (event.has_task_submitted() && event.task_submitted().task_id() == *task_id) {
      job_id = event.task_submitted().job_id();
    }
    bool about_task = TaskIdOf(event) == *task_id;
    bool about_job = !job_id.empty() && event.has_job_queue_changed() &&
                     event.job_queue_changed().job_id() == job_id;
    if (about_task || about_job) history.push_back(HistoryLine(event));
    return true;
  });
  if (!status.ok()) return Outcome::Failed(status);
  auto explanation = commands::ExplainTask(state, *task_id, as_of_time);
  if (!explanation.ok()) {
    return Outcome::Failed(Status::NotFound(
        "task " + *task_id + " is not in the log up to offset " + std::to_string(as_of_offset)));
  }
  out << "task " << *task_id << " as of offset " << as_of_offset << " ("
      << FormatRfc3339(as_of_time) << ")\n"
      << explanation->reason << "\n\nhistory:\n";
  for (const auto& line : history) out << line << "\n";
  return {};
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
    default:
      return 0;
  }
}

// The searcher's story: the experiment and its trials as the write side had them after offset
// N (folded from the log like the master folds it), then every decision with its reason.
Outcome ExplainExperiment(const Flags& flags, std::ostream& out) {
  const auto id_text = flags.Get("experiment");
  int64_t experiment_id = 0;
  if (!id_text || id_text->empty() ||
      std::from_chars(id_text->data(), id_text->data() + id_text->size(), experiment_id).ec !=
          std::errc() ||
      experiment_id <= 0) {
    return Outcome::Usage(Status::InvalidArgument("experiment needs an experiment id (a number)"));
  }
  auto opened = OpenLogWindow(flags, false);
  if (auto* failed = std::get_if<Outcome>(&opened)) return *failed;
  auto& window = std::get<LogWindow>(opened);
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
  if (!status.ok()) return Outcome::Failed(status);
  const commands::ExperimentRecord* experiment = state.FindExperiment(experiment_id);
  if (experiment == nullptr) {
    return Outcome::Failed(Status::NotFound("experiment " + std::to_string(experiment_id) +
                                            " is not in the log up to offset " +
                                            std::to_string(as_of_offset)));
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
  return {};
}

struct Subcommand {
  std::set<std::string> flags;
  std::function<Outcome(const Flags&, std::ostream&)> run;
};

const std::map<std::string, Subcommand>& Subcommands() {
  static const std::map<std::string, Subcommand> kSubcommands = {
      {"dump",
       {WithLogFlags({"type", "entity", "from-offset", "to-offset", "since", "until"}), Dump}},
      {"rebuild", {WithLogFlags({"out", "projection", "to-offset"}), Rebuild}},
      {"digest", {WithLogFlags({"projection"}), Digest}},
      {"state", {WithLogFlags({"at-offset", "at-time", "format"}), State}},
      {"explain", {WithLogFlags({"task", "at-offset", "at-time"}), Explain}},
      {"experiment", {WithLogFlags({"experiment", "at-offset", "at-time"}), ExplainExperiment}},
  };
  return kSubcommands;
}

}  // namespace

const std::string& ReplayUsage() {
  static const std::string kUsage = R"(usage: cairn replay <command> [flags]

Tools over Cairn's event log. The log is read from DIR/log (--data DIR, the master's data
directory) or from Kafka (--kafka BROKERS [--topic-prefix P], default prefix "cairn"), always
read-only, so they are safe beside a running master.

commands:
  dump      print events as JSON lines, oldest first
              (--data DIR | --kafka BROKERS) [--type TaskSubmitted,TaskExited,...]
              [--entity ID] [--from-offset N] [--to-offset N] [--since T] [--until T]
            --entity keeps events about that task, job, agent or allocation id; bounds are
            inclusive; T is RFC 3339 (2025-03-20T12:00:00Z) or unix seconds
  rebuild   build fresh projections from offset 0 into an empty directory; prints each
            projection's applied offset and digest
              (--data DIR | --kafka BROKERS) --out DIR [--projection NAME|all] [--to-offset N]
  digest    print applied offset and digest of the live projections in DIR/projections
            (opened as a RocksDB secondary, so the master may be running), and the log's end
              --data DIR [--kafka BROKERS] [--projection NAME|all]
  state     print tasks, agents and the job queue as they were after offset N, or after the
            events up to time T
              (--data DIR | --kafka BROKERS) (--at-offset N | --at-time T)
              [--format table|json]
  explain   why a task is pending, placed where it is, preempted or ended — now, or as of
            offset N or time T — and every decision about it with its recorded reason
              TASK (--data DIR | --kafka BROKERS) [--at-offset N | --at-time T]
  experiment an experiment's searcher story: its trials (target, trained, checkpoint,
            validations, restarts) as of offset N or time T, and every searcher decision,
            restart, end and checkpoint collection with its recorded reason
              ID (--data DIR | --kafka BROKERS) [--at-offset N | --at-time T]

projections: tasks, agents, job_queue, experiments. A digest is the hex SHA-256 of a projection's views;
equal digests at equal offsets mean byte-identical projections.

exit codes: 0 done, 1 the work failed, 2 bad usage.
)";
  return kUsage;
}

int RunReplay(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << ReplayUsage();
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << ReplayUsage();
    return 0;
  }
  auto subcommand = Subcommands().find(args[0]);
  if (subcommand == Subcommands().end()) {
    err << "cairn replay: unknown command '" << args[0] << "'\n\n" << ReplayUsage();
    return 2;
  }
  std::vector<std::string> words(args.begin() + 1, args.end());
  // `explain TASK`: the task id may come first, without a flag.
  if (args[0] == "explain" && !words.empty() && words[0].rfind("-", 0) != 0) {
    words.insert(words.begin(), "--task");
  }
  if (args[0] == "experiment" && !words.empty() && words[0].rfind("-", 0) != 0) {
    words.insert(words.begin(), "--experiment");
  }
  auto flags = Flags::Parse(words, subcommand->second.flags);
  if (flags.ok() && flags->help()) {
    out << ReplayUsage();
    return 0;
  }
  Outcome outcome =
      flags.ok() ? subcommand->second.run(*flags, out) : Outcome::Usage(flags.status());
  if (outcome.status.ok()) return 0;
  err << "cairn replay " << args[0] << ": " << outcome.status.message() << "\n";
  if (outcome.code == 2) err << "run 'cairn replay --help' for usage\n";
  return outcome.code == 0 ? 1 : outcome.code;
}

}  // namespace cairn::replay
