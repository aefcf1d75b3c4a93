// History at the scale of a real master: snapshots taken while it serves, a kill -9 in the middle
// of one, a master that then starts from the previous snapshot with identical digests, and time
// travel over REST from the nearest snapshot.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "net/session_login.h"
#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

using namespace std::chrono_literals;

const json kCommand = {{"config", {{"entrypoint", {"true"}}}}};

// Submits commands until `count` were accepted or the master stops answering; returns how many.
int SubmitCommands(Cluster& cluster, int count) {
  auto client = cluster.Client();
  int accepted = 0;
  for (int i = 0; i < count; ++i) {
    auto response = client.Request("POST", "/api/v1/commands", kCommand.dump(),
                                   {{"Content-Type", "application/json"}});
    if (!response.ok() || response->status != 200) break;
    ++accepted;
  }
  return accepted;
}

std::vector<std::string> EntriesOf(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Contains(const std::string& line, const std::string& part) {
  return line.find(part) != std::string::npos;
}

TEST(HistoryE2eTest, AKillNineDuringASnapshotLeavesThePreviousOneToStartFromWithEqualDigests) {
  Cluster cluster("snapshots:\n  every_events: 100\n  keep: 4\n");
  const std::string snapshots = cluster.data_dir() + "/snapshots";

  // A first snapshot, published.
  cluster.StartMaster({}, /*with_stderr=*/true);
  ASSERT_EQ(SubmitCommands(cluster, 110), 110);
  auto published = cluster.master().WaitForLine(
      [](const std::string& line) { return Contains(line, "published in"); }, 60s);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  cluster.StopMaster(SIGTERM);
  const std::vector<std::string> before = EntriesOf(snapshots, "snap-");
  ASSERT_EQ(before.size(), 1u);

  // The next one is interrupted by SIGKILL between its checkpoint and its publication.
  cluster.StartMaster({"CAIRN_CRASH_AT=snapshot-publish"}, /*with_stderr=*/true);
  SubmitCommands(cluster, 400);
  auto killed = cluster.master().Wait(60s);
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  ASSERT_TRUE(WIFSIGNALED(*killed) && WTERMSIG(*killed) == SIGKILL)
      << "the master should have died at the crash point";
  EXPECT_EQ(EntriesOf(snapshots, "snap-"), before) << "no half-made snapshot is published";
  const std::vector<std::string> interrupted = EntriesOf(snapshots, "tmp-");
  EXPECT_EQ(interrupted.size(), 1u) << "the interrupted one is left as tmp-";

  // The projection DB is lost too: the master starts from the previous snapshot plus the tail.
  std::filesystem::remove_all(cluster.data_dir() + "/projections");
  cluster.StartMaster({}, /*with_stderr=*/true);
  auto restored = cluster.master().WaitForLine(
      [&](const std::string& line) {
        return Contains(line, "started the projections from snapshot") &&
               Contains(line, before.front());
      },
      10s);
  EXPECT_TRUE(restored.ok()) << "the master names the snapshot it started from";
  for (const auto& name : interrupted) {
    EXPECT_FALSE(std::filesystem::exists(snapshots + "/" + name))
        << "the crash's leftover " << name;
  }

  // Time travel over REST, for admins only: the state after the first snapshot's last event.
  const uint64_t snapshot_offset = std::stoull(before.front().substr(5));
  auto reply = cluster.Call("GET", "/api/v1/history/state?at=" + std::to_string(snapshot_offset));
  EXPECT_EQ(reply.status, 403) << "determined is not an admin";
  auto admin = cluster.Client();
  ASSERT_TRUE(net::LogIn(admin, "admin").ok());
  auto past =
      admin.Request("GET", "/api/v1/history/state?limit=0&at=" + std::to_string(snapshot_offset));
  ASSERT_TRUE(past.ok());
  ASSERT_EQ(past->status, 200) << past->body;
  json state = json::parse(past->body);
  EXPECT_EQ(state["snapshot"]["nextOffset"], std::to_string(snapshot_offset));
  EXPECT_EQ(state["asOf"]["nextOffset"], std::to_string(snapshot_offset + 1));
  // The same moment folded from offset 0 by the operator's tool, over a copy of the log that
  // has no snapshots beside it.
  const std::string copy = cluster.dir().Sub("log-copy");
  std::filesystem::create_directories(copy);
  std::filesystem::copy(cluster.data_dir() + "/log", copy + "/log",
                        std::filesystem::copy_options::recursive);
  auto lines = cluster.RunCairn({"replay", "state", "--data", copy, "--at-offset",
                                 std::to_string(snapshot_offset), "--format", "json"});
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  json folded = json::parse(text, nullptr, false);
  ASSERT_TRUE(folded.is_object()) << text;
  EXPECT_EQ(folded["nextOffset"], state["asOf"]["nextOffset"]);
  EXPECT_EQ(folded["jobQueue"], state["jobQueue"]);
  EXPECT_EQ(folded["agents"], state["agents"]);
  EXPECT_GT(state["jobQueue"].size(), 50u) << "the queue holds the first master's commands";
  // Bad requests say what is wrong.
  for (const std::string query :
       {"", "at=1&time=2026-01-01T00:00:00Z", "at=99999999", "at=1&limit=-1", "time=yesterday"}) {
    auto bad = admin.Request("GET", "/api/v1/history/state?" + query);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->status, 400) << query << ": " << bad->body;
  }
  // A page of it: the head of the same queue, and the total.
  auto page =
      admin.Request("GET", "/api/v1/history/state?limit=10&at=" + std::to_string(snapshot_offset));
  ASSERT_TRUE(page.ok());
  json paged = json::parse(page->body);
  ASSERT_EQ(paged["jobQueue"].size(), 10u);
  EXPECT_EQ(paged["jobQueueTotal"], state["jobQueue"].size());
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(paged["jobQueue"][i], state["jobQueue"][i]);

  // The measures: the queue as the job-queue API counts it, each projection's lag, the snapshot.
  auto anonymous = net::Client::FromUrl(cluster.url(), "");
  ASSERT_TRUE(anonymous.ok());
  auto refused = anonymous->Request("GET", "/metrics", "", {});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 401);
  auto queue = cluster.Get("/api/v1/job-queues-v2?limit=1&offset=0&resourcePool=default");
  auto measures = cluster.Client().Request("GET", "/metrics", "", {});
  ASSERT_TRUE(measures.ok());
  ASSERT_EQ(measures->status, 200);
  const std::string& exposition = measures->body;
  EXPECT_TRUE(Contains(exposition, "cairn_job_queue_jobs{pool=\"default\"} " +
                                       std::to_string(queue["pagination"]["total"].get<int>()) +
                                       "\n"))
      << exposition;
  EXPECT_TRUE(Contains(exposition, "cairn_projection_lag_events{projection=\"tasks\"} "))
      << exposition;
  EXPECT_TRUE(Contains(exposition, "cairn_snapshot_offset ")) << exposition;
  EXPECT_TRUE(Contains(exposition, "cairn_log_append_seconds_bucket{le=\"+Inf\"} ")) << exposition;
  EXPECT_TRUE(Contains(exposition, "cairn_agents{state=\"connected\"} 0\n")) << exposition;
  // Where the memory is: the kernel's count, jemalloc's (the master runs on it), RocksDB's.
  auto memory = [&](const std::string& part) {
    return cairn::testing::PrometheusSample(exposition, "cairn_memory_bytes{part=\"" + part + "\"}")
        .value_or(-1.0);
  };
  EXPECT_GT(memory("resident"), 1 << 20) << exposition;
  EXPECT_GT(memory("heap_allocated"), 0) << exposition;
  EXPECT_LE(memory("heap_allocated"), memory("heap_resident")) << exposition;
  EXPECT_GT(memory("rocksdb_memtables"), 0) << exposition;
  EXPECT_GE(memory("rocksdb_block_cache"), 0) << exposition;
  // The master runs without transparent huge pages (base/memory.h, EndHugePages). A
  // kernel reports THP_enabled for every process or for none: this one's says which.
  auto thp_line = [](const std::string& status_path) {
    std::ifstream status(status_path);
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("THP_enabled:", 0) == 0) return line;
    }
    return std::string();
  };
  const std::string master_thp =
      thp_line("/proc/" + std::to_string(cluster.master_pid()) + "/status");
  if (!thp_line("/proc/self/status").empty()) {
    ASSERT_FALSE(master_thp.empty());
    EXPECT_EQ(master_thp.back(), '0') << master_thp;
  }

  cluster.ExpectRebuiltProjectionsEqualLive();
}

// The write side's snapshots (master/decision_snapshots.h), forked (the copy that writes deltas;
// the default folds): after a kill -9 the master decodes the newest one (a whole snapshot and the
// delta on it) and folds only the events after it, and decides as if it had folded the whole log:
// the same queue, the same idempotency keys, the same tasks to kill. A snapshot damaged on disk is
// passed over for the one before it.
TEST(HistoryE2eTest, AMasterRestartsFromTheWriteSidesSnapshotAndDecidesAsIfItFoldedTheLog) {
  Cluster cluster("snapshots:\n  write_side_every_events: 100\n  write_side_copy: fork\n");
  const std::string snapshots = cluster.data_dir() + "/decision-snapshots";
  cluster.StartMaster({}, /*with_stderr=*/true);
  auto client = cluster.Client();
  auto submit_with_key = [&](const std::string& key) {
    auto response =
        client.Request("POST", "/api/v1/commands", kCommand.dump(),
                       {{"Content-Type", "application/json"}, {"Idempotency-Key", key}});
    EXPECT_TRUE(response.ok() && response->status == 200);
    return response.ok() ? json::parse(response->body, nullptr, false)["command"].value("id", "")
                         : std::string();
  };
  const std::string keyed = submit_with_key("before-the-snapshot");
  ASSERT_FALSE(keyed.empty());
  ASSERT_EQ(SubmitCommands(cluster, 230), 230);
  // The first snapshot is whole, the next a delta on it (the commands submitted since).
  auto taken = cluster.master().WaitForLine(
      [](const std::string& line) {
        return Contains(line, "took the write side's snapshot at") && Contains(line, "a delta of");
      },
      60s);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  const json queue_before = cluster.Get("/api/v1/job-queues-v2?limit=1000&offset=0");
  cluster.StopMaster(SIGKILL);
  const std::vector<std::string> written = EntriesOf(snapshots, "decision-");
  ASSERT_GE(written.size(), 2u);
  EXPECT_TRUE(written.back().ends_with(".delta")) << written.back();

  auto restart_and_expect_the_same = [&](const std::string& expected_line) {
    cluster.StartMaster({}, /*with_stderr=*/true);
    auto folded = cluster.master().WaitForLine(
        [&](const std::string& line) { return Contains(line, expected_line); }, 30s);
    EXPECT_TRUE(folded.ok()) << "expected a line with: " << expected_line;
    EXPECT_EQ(cluster.Get("/api/v1/job-queues-v2?limit=1000&offset=0")["jobs"],
              queue_before["jobs"]);
    EXPECT_EQ(submit_with_key("before-the-snapshot"), keyed) << "the key is still known";
  };
  restart_and_expect_the_same("deltas after it)");  // the whole snapshot and its delta

  // The newest snapshot damaged: the one before it serves (or the whole log, when it is the only
  // one), with a line saying so.
  const std::string newest = snapshots + "/" + EntriesOf(snapshots, "decision-").back();
  cluster.StopMaster(SIGKILL);
  {
    std::fstream file(newest, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-5, std::ios::end);
    file.put('\x7f');
  }
  restart_and_expect_the_same("passing over " + newest);

  // Decisions about work from before the snapshot: a queued command is killed.
  const std::string first = queue_before["jobs"][0]["full"]["entityId"].get<std::string>();
  EXPECT_EQ(cluster.Call("POST", "/api/v1/commands/" + first + "/kill").status, 200);
  cluster.ExpectRebuiltProjectionsEqualLive();
}

// The default copy folds a second state on a thread (nothing forked, no delta): its snapshot is
// whole, and a master killed after it restarts from it, folding only the events after it, to the
// same queue.
TEST(HistoryE2eTest, AMasterRestartsFromAFoldedWriteSideSnapshot) {
  Cluster cluster("snapshots:\n  write_side_every_events: 100\n");
  cluster.StartMaster({}, /*with_stderr=*/true);
  ASSERT_EQ(SubmitCommands(cluster, 150), 150);
  auto taken = cluster.master().WaitForLine(
      [](const std::string& line) {
        return Contains(line, "took the write side's snapshot at") &&
               Contains(line, "folded on a second state");
      },
      60s);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  const json queue_before = cluster.Get("/api/v1/job-queues-v2?limit=1000&offset=0");
  ASSERT_EQ(queue_before["jobs"].size(), 150u);
  cluster.StopMaster(SIGKILL);
  const std::vector<std::string> written =
      EntriesOf(cluster.data_dir() + "/decision-snapshots", "decision-");
  ASSERT_FALSE(written.empty());
  EXPECT_TRUE(written.back().ends_with(".snap")) << written.back();

  cluster.StartMaster({}, /*with_stderr=*/true);
  auto folded = cluster.master().WaitForLine(
      [](const std::string& line) { return Contains(line, "a decision snapshot and the log's"); },
      30s);
  EXPECT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(cluster.Get("/api/v1/job-queues-v2?limit=1000&offset=0")["jobs"], queue_before["jobs"]);
}

}  // namespace
}  // namespace cairn::testing
