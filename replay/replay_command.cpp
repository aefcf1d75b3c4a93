#include "replay/replay_command.h"

#include <cassert>
#include <regex>

#include "base/clock.h"
#include "base/command_line.h"
#include "projections/projections.h"

namespace cairn::replay {
namespace {

const char kReplayDescription[] =
    "Tools over Cairn's event log. The log is read from DIR/log (--data DIR, the master's data "
    "directory) or from Kafka (--kafka BROKERS [--topic-prefix P]), always read-only, so they "
    "are safe beside a running master.";

const char kReplayFooter[] =
    "projections: tasks, agents, job_queue, experiments. A digest is the hex SHA-256 of a "
    "projection's views; equal digests at equal offsets mean byte-identical projections.\n"
    "exit codes: 0 done, 1 the work failed, 2 bad usage.";

const char kTimeHelp[] = "RFC 3339 (2025-03-20T12:00:00Z) or unix seconds";

// A value as an error message shows it: a flag's value may be any length.
std::string Shown(const std::string& text) {
  constexpr size_t kMaxShown = 40;
  if (text.size() <= kMaxShown) return "'" + text + "'";
  return "a " + std::to_string(text.size()) + "-character value";
}

// Plain decimal digits, `positive` or not: CLI11 alone would take "-3" as a huge unsigned
// number, and "0x10" or " 5" as numbers too.
CLI::Validator Number(bool positive) {
  return CLI::Validator(
      [positive](const std::string& text) -> std::string {
        bool digits = !text.empty() && text.size() <= 18 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
        bool zero = digits && text.find_first_not_of('0') == std::string::npos;
        if (digits && !(positive && zero)) return "";
        return std::string("expected a ") + (positive ? "positive" : "non-negative") +
               " integer, got " + Shown(text);
      },
      "");
}

// Turns the text of a time into unix microseconds, which the option then reads as a number.
CLI::Validator TimeToMicros() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Result<int64_t> micros = ParseTimeArgument(text);
        if (!micros.ok()) return micros.status().message();
        text = std::to_string(*micros);
        return "";
      },
      "");
}

// Inclusive bounds on times: --since and --until on the events' times, --from and --until on
// the submissions' (whatif).
void AddTimeRange(CLI::App* command, const std::string& start_flag, std::optional<int64_t>& start,
                  const std::string& end_flag, std::optional<int64_t>& end,
                  const std::string& what = "") {
  const std::string of = what.empty() ? "" : " " + what;
  command->add_option(start_flag, start, "the earliest" + of + " time, " + kTimeHelp)
      ->type_name("TIME")
      ->transform(TimeToMicros());
  command->add_option(end_flag, end, "the latest" + of + " time, " + kTimeHelp)
      ->type_name("TIME")
      ->transform(TimeToMicros());
}

}  // namespace

Result<int64_t> ParseTimeArgument(const std::string& text) {
  // std::regex recurses per character: an unbounded value would exhaust the stack. No valid time
  // is near this long.
  constexpr size_t kMaxTimeChars = 64;
  // Checked here first: the shared parser expects a well-formed zone offset.
  static const std::regex kShape(
      R"(\d+|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?)");
  if (text.size() > kMaxTimeChars || !std::regex_match(text, kShape)) {
    return Status::InvalidArgument(std::string("expected ") + kTimeHelp + ", got " + Shown(text));
  }
  return ParseTimeToUnixMicros(text);
}

ReplayCommand::ReplayCommand(CLI::App& cairn) {
  CLI::App* replay = cairn.add_subcommand("replay", kReplayDescription);
  replay->footer(kReplayFooter);

  CLI::App* dump = AddSubcommand(
      replay, "dump",
      "Print events as JSON lines, oldest first. Bounds are inclusive; --entity keeps the events "
      "about that task, job, agent or allocation id.",
      Dump);
  AddLogSource(dump);
  EventFilter& filter = options_.filter;
  dump->add_option_function<std::string>(
          "--type",
          [&filter](const std::string& list) {
            Result<std::set<std::string>> types = ParseEventTypes(list);
            if (!types.ok()) throw CLI::ValidationError("--type", types.status().message());
            filter.types = *types;
          },
          "only these event types, e.g. TaskSubmitted,TaskExited")
      ->type_name("TYPE,...");
  dump->add_option("--entity", filter.entity, "only events about this id")->type_name("ID");
  dump->add_option("--from-offset", filter.from_offset, "the first offset")
      ->type_name("N")
      ->check(Number(false));
  dump->add_option("--to-offset", filter.to_offset, "the last offset")
      ->type_name("N")
      ->check(Number(false));
  AddTimeRange(dump, "--since", filter.since_micros, "--until", filter.until_micros);
  dump->add_flag("--reveal", options_.reveal,
                 "show environment values and credentials as an admin sees them (variables "
                 "marked secret stay hidden); without it they are NAME=********");
  dump->callback([&filter] {
    if (filter.to_offset && *filter.to_offset < filter.from_offset) {
      throw CLI::ValidationError("--to-offset", "is before --from-offset");
    }
  });

  std::vector<std::string> projections = projections::ProjectorNames();
  projections.push_back("all");
  CLI::App* rebuild = AddSubcommand(
      replay, "rebuild",
      "Build fresh projections from offset 0 into an empty directory; prints each projection's "
      "applied offset and digest.",
      Rebuild);
  AddLogSource(rebuild);
  rebuild->add_option("--out", options_.out_dir, "the new projections' directory (empty or new)")
      ->required()
      ->type_name("DIR");
  rebuild->add_option("--projection", options_.projection, "the projection to build")
      ->type_name("NAME")
      ->check(CLI::IsMember(projections))
      ->capture_default_str();
  rebuild->add_option("--to-offset", options_.to_offset, "stop after this offset")
      ->type_name("N")
      ->check(Number(false));

  CLI::App* digest = AddSubcommand(
      replay, "digest",
      "Print the applied offset and digest of the live projections in DIR/projections (opened "
      "as a RocksDB secondary, so the master may be running), or of the snapshot published at "
      "offset N (--snapshot), and the log's end.",
      Digest);
  digest->add_option("--data", options_.data_dir, "the master's data directory")
      ->required()
      ->type_name("DIR");
  CLI::Option* kafka =
      digest->add_option("--kafka", options_.brokers, "read the log's end from Kafka")
          ->type_name("BROKERS");
  digest->add_option("--topic-prefix", options_.topic_prefix, "the Kafka topics' prefix")
      ->type_name("P")
      ->needs(kafka)
      ->capture_default_str();
  digest
      ->add_option("--snapshot", options_.snapshot_offset,
                   "the snapshot published at offset N (DIR/snapshots/snap-<N in 20 digits>) "
                   "instead")
      ->type_name("N")
      ->check(Number(true));
  digest->add_option("--projection", options_.projection, "the projection to digest")
      ->type_name("NAME")
      ->check(CLI::IsMember(projections))
      ->capture_default_str();

  CLI::App* state = AddSubcommand(
      replay, "state",
      "Print tasks, agents and the job queue as they were after offset N, or after the events up "
      "to time T.",
      State);
  AddLogSource(state);
  AddMoment(state, true);
  state->add_option("--format", options_.format, "how to print it")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  CLI::App* explain = AddSubcommand(
      replay, "explain",
      "Why a task is pending, placed where it is, preempted or ended (now, or as of offset N or "
      "time T), and every decision about it with its recorded reason.",
      ExplainTask);
  explain->add_option("TASK,--task", options_.task_id, "the task's id")->required();
  AddLogSource(explain);
  AddMoment(explain, false);

  CLI::App* audit = AddSubcommand(
      replay, "audit",
      "Who did what, when: the events users and agents caused (refused logins included), oldest "
      "first, with the actor, the action and what it was about. --include-system adds the "
      "master's own decisions.",
      Audit);
  AddLogSource(audit);
  AuditQuery& query = options_.audit;
  audit
      ->add_option("--actor", query.actor,
                   "a user's name, or an actor as recorded: agent:ID, "
                   "system:COMPONENT")
      ->type_name("WHO");
  audit
      ->add_option("--entity", query.entity,
                   "experiment/N, trial/N, task/ID, agent/ID, user/NAME, template/NAME, "
                   "model/N, checkpoint/UUID, or a task, job, agent or allocation id")
      ->type_name("WHAT");
  AddTimeRange(audit, "--since", query.since_micros, "--until", query.until_micros);
  audit->add_flag("--include-system", query.include_system, "also the master's own decisions");
  audit->add_flag("--reveal", options_.reveal,
                  "JSON events with environment values and credentials as an admin sees them");
  audit->add_option("--format", options_.format, "lines of text, or JSON lines with each event")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  CLI::App* experiment = AddSubcommand(
      replay, "experiment",
      "An experiment's searcher story: its trials (target, trained, checkpoint, validations, "
      "restarts) as of offset N or time T, and every searcher decision, restart, end and "
      "checkpoint collection with its recorded reason.",
      ExplainExperiment);
  experiment->add_option("ID,--experiment", options_.experiment_id, "the experiment's id")
      ->required()
      ->check(Number(true));
  AddLogSource(experiment);
  AddMoment(experiment, false);

  CLI::App* usage = AddSubcommand(
      replay, "usage",
      "GPU-hours per user and per workspace: each allocation that ended, charged its slots times "
      "the time from its placement to its end (the events' times), to the user and workspace of "
      "its task when it was placed (definition: docs/events.md). Allocations still running are "
      "counted, not charged.",
      Usage);
  AddLogSource(usage);
  AddMoment(usage, false);
  usage->add_option("--format", options_.format, "a table, or one JSON document")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  CLI::App* allocations = AddSubcommand(
      replay, "allocations",
      "Determined's aggregated allocation report (det resources aggregated) as the cluster "
      "would have answered it at offset N or time T: slot-seconds per day (or month) from "
      "--start-date to --end-date, by user, experiment label and resource pool. Allocations "
      "held at that moment count up to its last event.",
      Allocations);
  AddLogSource(allocations);
  AddMoment(allocations, false);
  allocations
      ->add_option("--start-date", options_.start_date,
                   "the first day, YYYY-MM-DD (YYYY-MM with --monthly)")
      ->required();
  allocations
      ->add_option("--end-date", options_.end_date,
                   "the last day, YYYY-MM-DD (YYYY-MM with --monthly)")
      ->required();
  allocations->add_flag("--monthly", options_.monthly, "one entry per month, not per day");
  allocations
      ->add_option("--format", options_.format,
                   "table: the CSV Determined's CLI prints; json: its --json document")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  AddSubcommand(replay, "schema",
                "Write the event schema, a binary FileDescriptorSet of events.proto (the same "
                "bytes as the installed share/cairn/events.desc), to standard output, for "
                "consumers without Cairn code: cairn replay schema > events.desc; kcat -C -b "
                "BROKERS -t cairn.events -o beginning -e -c 1 -D '' | protoc "
                "--decode=cairn.events.Envelope --descriptor_set_in=events.desc",
                Schema);

  CLI::App* whatif = AddSubcommand(
      replay, "whatif",
      "Replay the recorded submissions, agent changes and run times through the scheduler under "
      "another configuration (a master.yaml's pools and schedulers, and optional whatif.jobs "
      "priorities and weights), and print waits per pool, user and workspace, makespan, slot "
      "utilization and preemptions beside what really happened.",
      WhatIf);
  AddLogSource(whatif);
  whatif->add_option("--config", options_.config_path, "the configuration to simulate under")
      ->required()
      ->type_name("FILE");
  AddTimeRange(whatif, "--from", options_.from, "--until", options_.until, "submission");
  whatif->add_flag("--json", options_.json, "print JSON instead of a table");
  whatif->callback([&options = options_] {
    if (options.from && options.until && *options.until < *options.from) {
      throw CLI::ValidationError("--until", "is before --from");
    }
  });
}

CLI::App* ReplayCommand::AddSubcommand(CLI::App* replay, const std::string& name,
                                       const std::string& description,
                                       Status (*work)(const ReplayOptions&, std::ostream&)) {
  CLI::App* command = replay->add_subcommand(name, description);
  subcommands_.push_back({command, work});
  return command;
}

void ReplayCommand::AddLogSource(CLI::App* command) {
  CLI::App* source = command->add_option_group("log", "where the log is");
  source->add_option("--data", options_.data_dir, "the master's data directory; the log is DIR/log")
      ->type_name("DIR");
  CLI::Option* kafka =
      source->add_option("--kafka", options_.brokers, "Kafka's brokers, host:port,...")
          ->type_name("BROKERS");
  source->require_option(1);
  command
      ->add_option("--topic-prefix", options_.topic_prefix,
                   "the Kafka topics' prefix (P.events, P.placements)")
      ->type_name("P")
      ->needs(kafka)
      ->capture_default_str();
}

void ReplayCommand::AddMoment(CLI::App* command, bool required) {
  CLI::App* moment = command->add_option_group(
      "moment", required ? "as of when" : "as of when (default: the whole log)");
  moment->add_option("--at-offset", options_.at_offset, "after offset N")
      ->type_name("N")
      ->check(Number(false));
  moment
      ->add_option("--at-time", options_.at_time,
                   std::string("after the events up to time T, ") + kTimeHelp)
      ->type_name("TIME")
      ->transform(TimeToMicros());
  moment->require_option(required ? 1 : 0, 1);
}

int ReplayCommand::Run(std::ostream& out, std::ostream& err) const {
  for (const Subcommand& subcommand : subcommands_) {
    if (!subcommand.app->parsed()) continue;
    Status status = subcommand.work(options_, out);
    out.flush();
    if (status.ok()) return 0;
    err << "cairn replay " << subcommand.app->get_name() << ": " << status.message() << "\n";
    return 1;
  }
  assert(false && "command_line::Parse lets no command line through without a replay subcommand");
  return command_line::kExitUsage;
}

}  // namespace cairn::replay
