// History at scale (issue 18): over a realistic log of 1,000,000 events (ops/bench/
// history_generator.h), on this machine, prints
//   * the full rebuild of every projection from offset 0 (events/s; target >= 200,000/s), the
//     live projections' first start on the whole log (in bulk) beside the same a batch at a
//     time (the way before bulk loading), and the fold with snapshots taken along the way,
//     each snapshot's time and size;
//   * the write side's own fold of the whole log (what every master start does);
//   * cairn-master start time to its first answer: without a write-side snapshot (the whole log
//     folded), then restarts from it with the projections current, and with them lost (restored
//     from the newest snapshot) (target <= 2 s);
//   * the state at random past moments (offsets and times): from the nearest snapshot plus the
//     tail, beside a fold from offset 0 of the same moments (target p95 <= 1 s);
//   * disk bytes per event of the log, the projections and the snapshots.
// Usage: cairn-bench-history [--data DIR] [--events N] [--samples N] [--only PHASE ...] [--kafka]
//   --data DIR: a master data directory whose log cairn-generate-history wrote (kept, so a
//   second run skips generation); without it a temporary one is generated and removed.
//   --kafka: the log on librdkafka's mock cluster (started in this process, generated each run).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/command_line.h"
#include "base/files.h"
#include "commands/decision_snapshot.h"
#include "commands/decision_state.h"
#include "master/data_dir.h"
#include "master/decision_snapshots.h"
#include "master/master_config.h"
#include "net/http_client.h"
#include "ops/bench/history_generator.h"
#include "projections/projections.h"
#include "projections/snapshots.h"
#include "replay/state_format.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/support/test_support.h"

namespace {

using namespace cairn;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kRebuildTarget = 200'000;
constexpr double kRestartTargetSeconds = 2;
constexpr double kPastStateTargetSeconds = 1;
// What GET /api/v1/history/state reads by default, and the web UI's history page asks for: the
// queue's first 100 jobs with their live tasks, the first 100 experiments not ended, the agents.
constexpr replay::StateJsonOptions kPastRead = {
    .live_tasks_only = true, .experiments = true, .queue_limit = 100, .experiment_limit = 100};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

double Percentile(std::vector<double> values, double quantile) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(quantile * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

std::string BinaryBeside(const std::string& self, const std::string& name) {
  return (fs::path(self).parent_path() / name).string();
}

// Starts cairn-master on `data_dir` and returns the seconds until GET /api/v1/master answers.
Result<double> TimeMasterStart(const std::string& self, const std::string& data_dir,
                               const LogConfig& log_config,
                               std::unique_ptr<testing::ChildProcess>* master) {
  const std::string config = data_dir + "/bench-master.yaml";
  const std::string kafka_log = log_config.backend != "kafka"
                                    ? ""
                                    : "log:\n  backend: kafka\n  brokers: " + log_config.brokers +
                                          "\n  topic_prefix: " + log_config.topic_prefix + "\n";
  // The generator's pools (ops/bench/history_generator.cpp), so the master keeps them.
  std::ofstream(config) << "port: 0\ndata_dir: " << data_dir
                        << "\nsnapshots:\n  every_events: " << MasterConfig().snapshots.every_events
                        << "\n  keep: " << MasterConfig().snapshots.keep
                        << "\n"
                           "resource_manager:\n  type: agent\n  scheduler:\n    type: fair_share\n"
                           "  default_compute_resource_pool: default\n"
                           "  default_aux_resource_pool: cpu\n"
                           "resource_pools:\n  - pool_name: default\n  - pool_name: a100\n"
                           "    scheduler:\n      type: priority\n      preemption: true\n"
                           "  - pool_name: cpu\n    max_aux_containers_per_agent: 32\n"
                           "task_container_defaults:\n  preemption_timeout: 30\n"
                        << kafka_log;
  const auto start = Clock::now();
  CAIRN_ASSIGN_OR_RETURN(*master, testing::ChildProcess::Start(
                                      {BinaryBeside(self, "cairn-master"), "--config", config}));
  CAIRN_ASSIGN_OR_RETURN(
      std::string line,
      (*master)->WaitForLine(
          [](const std::string& l) { return l.rfind("cairn-master listening on", 0) == 0; },
          std::chrono::minutes(5)));
  const std::string url = line.substr(line.rfind(' ') + 1);
  CAIRN_ASSIGN_OR_RETURN(auto client, net::Client::FromUrl(url, ""));
  // The master answers 503 while it replays; the first 200 is the end of its start. Asked every
  // 10 ms: often enough to measure, rarely enough not to take a core from the replay.
  while (true) {
    auto response = client.Request("GET", "/api/v1/master", "", {});
    if (response.ok() && response->status == 200) return Seconds(start);
    if (!(*master)->running()) return Status::Unavailable("the master exited while starting");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status StopMaster(std::unique_ptr<testing::ChildProcess>& master) {
  master->Signal(SIGTERM);
  CAIRN_ASSIGN_OR_RETURN(int status, master->Wait(std::chrono::minutes(2)));
  master.reset();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Internal("the master did not stop cleanly");
  }
  return Status::Ok();
}

struct Phases {
  bool rebuild = true, snapshots = true, fold = true, restart = true, past = true;
};

Status Run(const std::string& self, std::string data_dir, uint64_t events, int samples,
           Phases phases, bool kafka) {
  std::unique_ptr<testing::TempDir> temp;
  // On Kafka the log lives in librdkafka's mock cluster, in this process: generated each run.
  std::unique_ptr<testing::MockKafkaCluster> cluster;
  if (kafka) {
    CAIRN_ASSIGN_OR_RETURN(cluster, testing::MockKafkaCluster::Start(3));
    CAIRN_RETURN_IF_ERROR(cluster->CreateCairnTopics("cairn"));
    data_dir.clear();
  }
  if (data_dir.empty()) {
    temp = std::make_unique<testing::TempDir>();
    data_dir = temp->Sub("data");
  }
  fs::create_directories(data_dir);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  std::printf("machine: %u cores; data directory %s\n", std::thread::hardware_concurrency(),
              data_dir.c_str());
  LogConfig log_config;
  log_config.data_dir = data_dir;
  if (kafka) {
    log_config.backend = "kafka";
    log_config.brokers = cluster->bootstraps();
    std::printf("log: Kafka (librdkafka's mock cluster, 3 brokers, in this process)\n");
  }
  CAIRN_ASSIGN_OR_RETURN(auto log, OpenEventLog(log_config));
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log->EndOffset());
  if (end == 0) {
    bench::HistoryOptions options;
    options.events = events;
    const auto start = Clock::now();
    CAIRN_ASSIGN_OR_RETURN(auto summary, bench::GenerateHistory(*log, options));
    std::printf(
        "generated %llu events in %.1f s (%lld commands, %lld experiments, %lld preemptions, "
        "%lld agent departures)\n",
        static_cast<unsigned long long>(summary.events), Seconds(start),
        static_cast<long long>(summary.commands), static_cast<long long>(summary.experiments),
        static_cast<long long>(summary.preemptions),
        static_cast<long long>(summary.agent_departures));
    CAIRN_ASSIGN_OR_RETURN(end, log->EndOffset());
  }
  std::printf("log: %llu events, %.1f MiB, %.0f bytes/event\n\n",
              static_cast<unsigned long long>(end),
              static_cast<double>(DirectoryBytes(data_dir + "/log")) / (1 << 20),
              static_cast<double>(DirectoryBytes(data_dir + "/log")) / static_cast<double>(end));

  const std::string scratch = data_dir + "/bench-scratch";
  auto store = projections::SnapshotStore::OpenExisting(data_dir + "/snapshots");
  std::vector<projections::SnapshotInfo> snapshots = store->List();
  Clock::time_point start;
  if (phases.rebuild) {
    // 1. The full fold of the read side, without and with snapshots.
    fs::remove_all(scratch);
    start = Clock::now();
    CAIRN_RETURN_IF_ERROR(
        RebuildProjections(scratch + "/rebuilt", log.get(), {}, std::nullopt).status());
    const double rebuild_seconds = Seconds(start);
    std::printf("%-58s %8.2f s  %9.0f events/s  (target >= %.0f: %s)\n",
                "full rebuild of every projection from offset 0", rebuild_seconds,
                static_cast<double>(end) / rebuild_seconds, kRebuildTarget,
                static_cast<double>(end) / rebuild_seconds >= kRebuildTarget ? "met" : "NOT met");
    // The live projections' first start on the whole log, as a master's (also after an upgrade
    // that changes the views' layout): caught up in bulk, then following the log. Beside it, the
    // same a batch at a time through the memtables (bulk loading off), the way before.
    auto time_first_start = [&](const std::string& dir,
                                projections::EngineOptions options) -> Result<double> {
      const auto started = Clock::now();
      CAIRN_ASSIGN_OR_RETURN(auto live, Projections::Open(dir, log.get(), options));
      CAIRN_RETURN_IF_ERROR(live->WaitForOffset(end - 1, std::chrono::minutes(10)));
      return Seconds(started);
    };
    CAIRN_ASSIGN_OR_RETURN(double bulk_seconds,
                           time_first_start(scratch + "/first-start-bulk", {}));
    projections::EngineOptions batch_by_batch;
    batch_by_batch.bulk_load_bytes = 0;
    CAIRN_ASSIGN_OR_RETURN(double batch_seconds,
                           time_first_start(scratch + "/first-start-batches", batch_by_batch));
    std::printf("%-58s %8.2f s  %9.0f events/s\n",
                "live projections' first start, caught up in bulk", bulk_seconds,
                static_cast<double>(end) / bulk_seconds);
    std::printf("%-58s %8.2f s  %9.0f events/s  (bulk: %.1fx, rebuild: %.1fx this)\n",
                "the same a batch at a time (bulk loading off)", batch_seconds,
                static_cast<double>(end) / batch_seconds, batch_seconds / bulk_seconds,
                batch_seconds / rebuild_seconds);
  }
  if (phases.snapshots || snapshots.empty()) {
    // The master's projections and snapshots, as a first start builds them.
    fs::remove_all(data_dir + "/projections");
    fs::remove_all(data_dir + "/snapshots");
    // The master's snapshot policy (master/master_config.h).
    const auto& defaults = MasterConfig().snapshots;
    const projections::SnapshotPolicy policy{defaults.every_events,
                                             static_cast<size_t>(defaults.keep)};
    start = Clock::now();
    {
      // A batch at a time, as a master following the log live takes them: a catch-up in bulk
      // would take one snapshot at its end.
      projections::EngineOptions live_options;
      live_options.bulk_load_bytes = 0;
      CAIRN_ASSIGN_OR_RETURN(auto live,
                             Projections::Open(data_dir + "/projections", log.get(),
                                               data_dir + "/snapshots", policy, live_options));
      CAIRN_RETURN_IF_ERROR(live->WaitForOffset(end - 1, std::chrono::minutes(10)));
      const uint64_t last_multiple = end / policy.every_events * policy.every_events;
      if (last_multiple > 0) {
        CAIRN_RETURN_IF_ERROR(live->WaitForSnapshot(last_multiple, std::chrono::minutes(5)));
      }
    }
    const double snapshotted_seconds = Seconds(start);
    const std::string label =
        "the same fold with a snapshot every " + std::to_string(policy.every_events) + " events";
    std::printf("%-58s %8.2f s  %9.0f events/s\n", label.c_str(), snapshotted_seconds,
                static_cast<double>(end) / snapshotted_seconds);
    snapshots = store->List();
    std::vector<double> snapshot_seconds;
    for (const auto& snapshot : snapshots) snapshot_seconds.push_back(snapshot.seconds_to_take);
    if (!snapshots.empty()) {
      std::printf(
          "snapshots: %zu, each taken in p50 %.2f s / max %.2f s (checkpoint and "
          "publication; off the projections' thread but the checkpoint), newest %.1f MiB\n",
          snapshots.size(), Percentile(snapshot_seconds, 0.5), Percentile(snapshot_seconds, 1.0),
          static_cast<double>(snapshots.back().bytes) / (1 << 20));
    }
    std::printf(
        "disk: projections %.0f bytes/event, all snapshots %.0f bytes/event (shared tables "
        "linked)\n\n",
        static_cast<double>(DirectoryBytes(data_dir + "/projections")) / static_cast<double>(end),
        static_cast<double>(DirectoryBytes(data_dir + "/snapshots")) / static_cast<double>(end));
  }
  if (phases.fold) {
    // 2. The write side's fold, which a master start without a snapshot does before it serves,
    // and its snapshot (commands/decision_snapshot.h): encoded, and decoded as a restart does.
    start = Clock::now();
    commands::DecisionState state;
    CAIRN_RETURN_IF_ERROR(FoldLogInto(state, *log, end));
    const double fold_seconds = Seconds(start);
    std::printf("%-58s %8.2f s  %9.0f events/s\n",
                "write side: decision state folded from offset 0", fold_seconds,
                static_cast<double>(end) / fold_seconds);
    // Encoded three times, the fastest reported: on this VM one run swings by 20%.
    std::string bytes;
    double encode_seconds = 0;
    for (int run = 0; run < 3; ++run) {
      start = Clock::now();
      bytes = commands::EncodeDecisionState(state, {});
      const double seconds = Seconds(start);
      encode_seconds = run == 0 ? seconds : std::min(encode_seconds, seconds);
    }
    start = Clock::now();
    auto decoded = commands::DecodeDecisionState(bytes);
    const double decode_seconds = Seconds(start);  // a restart keeps it: its freeing not counted
    CAIRN_RETURN_IF_ERROR(decoded.status());
    std::printf(
        "write side's snapshot: %.1f MiB (%zu tasks, %zu experiments), encoded in %.2f s "
        "(fastest of 3), decoded in %.2f s (%.1fx faster than the fold)\n",
        static_cast<double>(bytes.size()) / (1 << 20), state.tasks.size(), state.experiments.size(),
        encode_seconds, decode_seconds, fold_seconds / decode_seconds);
  }
  if (phases.restart) {
    // 3. Master starts and restarts. The write side starts from its newest snapshot
    // (master/decision_snapshots.h) when there is one; a start without one folds the whole log
    // and leaves a snapshot of what it folded.
    log.reset();  // the master owns the log now
    std::unique_ptr<testing::ChildProcess> master;
    auto start_and_stop = [&](const char* what, bool against_target) -> Status {
      CAIRN_ASSIGN_OR_RETURN(double seconds, TimeMasterStart(self, data_dir, log_config, &master));
      CAIRN_RETURN_IF_ERROR(StopMaster(master));
      std::printf("%-58s %8.2f s", what, seconds);
      if (against_target) {
        std::printf("  (target <= %.0f s: %s)", kRestartTargetSeconds,
                    seconds <= kRestartTargetSeconds ? "met" : "NOT met");
      }
      std::printf("\n");
      return Status::Ok();
    };
    fs::remove_all(DecisionSnapshotDir(data_dir));
    CAIRN_RETURN_IF_ERROR(
        start_and_stop("master start, no write-side snapshot: the whole log", false));
    CAIRN_RETURN_IF_ERROR(
        start_and_stop("master restart, write-side snapshot at the log's end", true));
    // A write-side snapshot `behind` events before the log's end, folded from the newest one at
    // or below that point (none: from offset 0).
    auto write_side_snapshot = [&](uint64_t behind) -> Status {
      CAIRN_ASSIGN_OR_RETURN(auto writable, OpenEventLog(log_config));
      CAIRN_ASSIGN_OR_RETURN(uint64_t now_end, writable->EndOffset());
      CAIRN_ASSIGN_OR_RETURN(auto store, DecisionSnapshotStore::Open(DecisionSnapshotDir(data_dir),
                                                                     kDecisionSnapshotsKept));
      auto restored = store->RestoreNewest(*writable, now_end - behind);
      auto state =
          restored.state ? std::move(restored.state) : std::make_unique<commands::DecisionState>();
      CAIRN_RETURN_IF_ERROR(FoldLogInto(*state, *writable, now_end - behind));
      return store->Write(*state, *writable);
    };
    // The longest tail a running master leaves: its last snapshot one interval back.
    const uint64_t interval = kafka ? MasterConfig::Snapshots::kKafkaWriteSideEveryEvents
                                    : MasterConfig().snapshots.write_side_every_events;
    fs::remove_all(DecisionSnapshotDir(data_dir));
    CAIRN_RETURN_IF_ERROR(write_side_snapshot(interval));
    char what[80];
    std::snprintf(what, sizeof what, "master restart, the longest tail (%llu events)",
                  static_cast<unsigned long long>(interval));
    CAIRN_RETURN_IF_ERROR(start_and_stop(what, true));
    // The longest chain a running master leaves (master/decision_snapshots.h): a whole snapshot,
    // then a delta at each interval, as many as a chain may hold (or until the deltas would hold
    // more records than the state), and the longest tail after the last.
    {
      CAIRN_ASSIGN_OR_RETURN(auto writable, OpenEventLog(log_config));
      CAIRN_ASSIGN_OR_RETURN(uint64_t now_end, writable->EndOffset());
      if (now_end < 2 * interval) {
        return Status::InvalidArgument("the restart phase needs a log of at least " +
                                       std::to_string(2 * interval) + " events");
      }
      fs::remove_all(DecisionSnapshotDir(data_dir));
      CAIRN_ASSIGN_OR_RETURN(auto store, DecisionSnapshotStore::Open(DecisionSnapshotDir(data_dir),
                                                                     kDecisionSnapshotsKept));
      // A log too short for a full chain (and a tail) gets as many links as it holds.
      const uint64_t links = std::min<uint64_t>(kMaxDeltasPerChain, now_end / interval - 1);
      const uint64_t base = now_end - (links + 1) * interval;
      commands::DecisionState state;
      CAIRN_RETURN_IF_ERROR(FoldLogInto(state, *writable, base));
      CAIRN_RETURN_IF_ERROR(store->Write(state, *writable));
      commands::StartCountingChanges(state);
      size_t deltas = 0, records = 0;
      for (uint64_t parent = base; deltas < links; parent += interval, ++deltas) {
        CAIRN_RETURN_IF_ERROR(FoldLogInto(state, *writable, parent + interval));
        const size_t changed = commands::CountedChanges(state).value_or(0);
        if (records + changed > state.tasks.size() + state.jobs.size()) break;
        CAIRN_RETURN_IF_ERROR(store->WriteDelta(state, *writable, base, parent));
        records += changed;
      }
      std::snprintf(what, sizeof what, "master restart, the longest chain (%zu deltas, %zuk recs)",
                    deltas, records / 1000);
    }
    CAIRN_RETURN_IF_ERROR(start_and_stop(what, true));
    // The projections' restore alone: the write side's snapshot at the log's end again (a master
    // takes none before its first write after starting, and that one wrote nothing).
    CAIRN_RETURN_IF_ERROR(write_side_snapshot(0));
    fs::remove_all(data_dir + "/projections");
    CAIRN_RETURN_IF_ERROR(
        start_and_stop("master restart, projections lost: newest snapshot + tail", true));
    std::printf("\n");
  }
  if (!phases.past) return Status::Ok();
  // 4. The past: random offsets and times, from snapshots, and a few folds from offset 0.
  log.reset();
  log_config.read_only = true;
  CAIRN_ASSIGN_OR_RETURN(log, OpenEventLog(log_config));
  CAIRN_ASSIGN_OR_RETURN(end, log->EndOffset());
  std::mt19937_64 random(7);
  std::vector<double> from_snapshots;
  std::vector<double> from_zero;
  std::vector<double> opening;  // the snapshot copied and the tail folded, before any read
  int64_t first_time = 0, last_time = 0;
  {
    CAIRN_ASSIGN_OR_RETURN(auto reader, log->OpenReader(0));
    CAIRN_ASSIGN_OR_RETURN(auto first, reader->Next(1, std::chrono::seconds(10)));
    first_time = first.at(0).time_unix_micros();
    last_time = snapshots.empty() ? first_time : snapshots.back().max_event_time_unix_micros;
  }
  for (int i = 0; i < samples; ++i) {
    // Half the moments by offset, half by time (then up to the first event after it).
    uint64_t offset = random() % end;
    std::optional<int64_t> time;
    if (i % 2 == 1) {
      offset = end - 1;
      time = first_time + static_cast<int64_t>(random() % static_cast<uint64_t>(std::max<int64_t>(
                                                              1, last_time - first_time)));
    }
    start = Clock::now();
    CAIRN_ASSIGN_OR_RETURN(auto past,
                           projections::PastProjections::Open(store.get(), log.get(), offset, time,
                                                              replay::StateProjections()));
    opening.push_back(Seconds(start));
    CAIRN_RETURN_IF_ERROR(replay::StateJson(*past, past->next_offset(), kPastRead).status());
    from_snapshots.push_back(Seconds(start));
    if (i < 4 && !time) {
      start = Clock::now();
      ProjectionState state;
      CAIRN_ASSIGN_OR_RETURN(auto reader, log->OpenReader(0));
      while (reader->position() <= offset) {
        CAIRN_ASSIGN_OR_RETURN(
            auto batch, reader->Next(std::min<uint64_t>(4096, offset + 1 - reader->position()),
                                     std::chrono::seconds(10)));
        for (const auto& event : batch) CAIRN_RETURN_IF_ERROR(state.Apply(event));
      }
      CAIRN_RETURN_IF_ERROR(replay::StateJson(state, state.next_offset(), kPastRead).status());
      from_zero.push_back(Seconds(start));
    }
  }
  std::printf(
      "state at %d random past offsets/times, nearest snapshot + tail:   p50 %.3f s  p95 %.3f s  "
      "max %.3f s  (target p95 <= %.0f s: %s)\n",
      samples, Percentile(from_snapshots, 0.5), Percentile(from_snapshots, 0.95),
      Percentile(from_snapshots, 1.0), kPastStateTargetSeconds,
      Percentile(from_snapshots, 0.95) <= kPastStateTargetSeconds ? "met" : "NOT met");
  std::printf("  of which the snapshot's copy and the tail's fold: p50 %.3f s  p95 %.3f s\n",
              Percentile(opening, 0.5), Percentile(opening, 0.95));
  std::printf(
      "state at the first %zu of them, folded from offset 0:        p50 %.3f s  max %.3f s "
      "(ratio p50 %.1fx)\n",
      from_zero.size(), Percentile(from_zero, 0.5), Percentile(from_zero, 1.0),
      Percentile(from_zero, 0.5) / std::max(1e-9, Percentile(from_snapshots, 0.5)));
  fs::remove_all(scratch);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Benchmarks Cairn's history at scale: rebuild, snapshots, restart, time travel.",
               "cairn-bench-history");
  command_line::Configure(app);
  std::string data_dir;
  uint64_t events = 1'000'000;
  int samples = 20;
  std::vector<std::string> only;
  app.add_option("--data", data_dir, "a data directory with a generated log (kept)");
  app.add_option("--events", events, "events to generate when the log is empty")
      ->capture_default_str();
  app.add_option("--samples", samples, "past moments to read")->capture_default_str();
  bool kafka = false;
  app.add_flag("--kafka", kafka,
               "the log on Kafka (librdkafka's mock cluster in this process; --data is ignored)");
  app.add_option("--only", only,
                 "only these measurements (rebuild, snapshots, fold, restart, past); the snapshots "
                 "are taken anyway when the data directory has none")
      ->check(CLI::IsMember({"rebuild", "snapshots", "fold", "restart", "past"}));
  if (auto stop = command_line::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return command_line::Finish(*stop);
  }
  Phases phases;
  if (!only.empty()) {
    auto chosen = [&](const char* name) {
      return std::find(only.begin(), only.end(), name) != only.end();
    };
    phases = {chosen("rebuild"), chosen("snapshots"), chosen("fold"), chosen("restart"),
              chosen("past")};
  }
  Status status = Run(argv[0], data_dir, events, samples, phases, kafka);
  if (!status.ok()) {
    std::fprintf(stderr, "cairn-bench-history: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
