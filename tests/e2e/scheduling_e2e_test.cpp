// The seeds' seven-step priority-scheduler example, end to end: a real cairn-master configured
// with the priority scheduler and preemption, a real cairn-agent with 8 slots, and real
// processes. The ASHA and distributed-training experiments are played by commands that opted in
// to preemption (Slurm-style requeue: SIGTERM, release, back in the queue); the notebook by a
// command, which like a notebook is not preemptible. Every step is checked in the event log,
// and the end of the story is replayed and compared with the live projections.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

bool IsFor(const json& event, const char* type, const std::string& task_id) {
  return event.contains(type) && event[type].value("taskId", "") == task_id;
}

int Count(const std::vector<json>& events, const char* type, const std::string& task_id) {
  int count = 0;
  for (const auto& event : events) count += IsFor(event, type, task_id);
  return count;
}

// Tasks of `ids` whose latest allocation event is an assignment (they hold slots now).
std::set<std::string> Holding(const std::vector<json>& events,
                              const std::vector<std::string>& ids) {
  std::set<std::string> holding;
  for (const auto& event : events) {
    for (const auto& id : ids) {
      if (IsFor(event, "allocationAssigned", id)) holding.insert(id);
      if (IsFor(event, "allocationReleased", id) || IsFor(event, "taskExited", id)) {
        holding.erase(id);
      }
    }
  }
  return holding;
}

class SevenStepExample : public ::testing::Test {
 protected:
  SevenStepExample() : cluster_(kPriorityWithPreemption) {}

  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("agent-8", 8);
  }

  // A worker that blocks until the test releases its group's lock (no polling: flock waits in
  // the kernel); SIGTERM (a preemption) ends it with 0 at once, so the master releases and
  // re-queues it. A worker that starts after the release finishes at once.
  std::string Submit(const std::string& group, int slots, int priority, bool preemptible) {
    const std::string lock = LockFor(group);
    json config = {
        {"entrypoint", "trap 'exit 0' TERM; flock -s " + lock + " true & wait $!"},
        {"resources", {{"slots", slots}, {"priority", priority}, {"preemptible", preemptible}}},
        {"description", group}};
    return cluster_.Submit(config);
  }

  // The group's lock file, held exclusively by the test until Finish(group).
  std::string LockFor(const std::string& group) {
    auto [it, inserted] = locks_.try_emplace(group, -1);
    if (inserted) {
      it->second =
          open(cluster_.dir().Sub("lock-" + group).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
      EXPECT_GE(it->second, 0);
      EXPECT_EQ(flock(it->second, LOCK_EX), 0);
    }
    return cluster_.dir().Sub("lock-" + group);
  }

  void Finish(const std::string& group) {
    auto it = locks_.find(group);
    ASSERT_NE(it, locks_.end());
    close(it->second);  // releases the lock: every worker of the group ends
    locks_.erase(it);
  }

  void TearDown() override {
    for (const auto& [group, fd] : locks_) close(fd);
  }

  // Follows the log from its start until `done` holds for everything read so far.
  std::vector<json> Until(const std::function<bool(const std::vector<json>&)>& done) {
    std::vector<json> events;
    auto client = cluster_.Client();
    auto status =
        client.StreamLines("GET", "/api/v1/events?from=0&follow=true", [&](std::string_view line) {
          if (line.empty()) return true;
          events.push_back(json::parse(line));
          return !done(events);
        });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return events;
  }

  Cluster cluster_;
  std::map<std::string, int> locks_;  // group -> the held lock's file descriptor
};

TEST_F(SevenStepExample, PlaysOutAsTheSeedsDescribe) {
  // 1. A priority-2 ASHA search with more trials than slots: 8 trials run on all 8 slots.
  std::vector<std::string> asha;
  for (int i = 0; i < 12; ++i) asha.push_back(Submit("asha", 1, 2, true));
  auto events = Until([&](const auto& e) { return Holding(e, asha).size() == 8; });
  EXPECT_EQ(Holding(events, asha).size(), 8u);

  // 2. A priority-1 distributed job with 4 slots: 4 ASHA trials are preempted — the newest of
  //    the running ones — and the job runs once they released their slots.
  const std::string distributed = Submit("distributed-1", 4, 1, true);
  events = Until([&](const auto& e) { return Count(e, "taskStarted", distributed) == 1; });
  std::vector<std::string> preempted;
  for (const auto& id : asha) {
    if (Count(events, "preemptionRequested", id) > 0) preempted.push_back(id);
  }
  ASSERT_EQ(preempted.size(), 4u);
  // The 8 that ran were the first 8 submitted; the newest 4 of them (4..7) yield.
  EXPECT_EQ(preempted, (std::vector<std::string>{asha[4], asha[5], asha[6], asha[7]}));
  for (const auto& id : preempted) EXPECT_EQ(Count(events, "allocationReleased", id), 1) << id;
  EXPECT_EQ(Holding(events, asha).size(), 4u);
  EXPECT_EQ(Holding(events, {distributed}).size(), 1u);

  // 3. A priority-3 notebook (1 slot, not preemptible) waits: the experiments need all 8.
  const std::string notebook = Submit("notebook", 1, 3, false);
  json task = cluster_.Get("/api/v1/tasks/" + notebook + "?explain=true");
  EXPECT_EQ(Count(cluster_.AllEvents(), "allocationAssigned", notebook), 0);
  EXPECT_NE(task.dump().find("waiting because"), std::string::npos) << task.dump();

  // 4. Both experiments complete; the notebook runs after them.
  Finish("asha");
  Finish("distributed-1");
  events = Until([&](const auto& e) {
    int exited = Count(e, "taskExited", distributed);
    for (const auto& id : asha) exited += Count(e, "taskExited", id);
    return Count(e, "taskStarted", notebook) == 1 && exited == 13;
  });
  // While ASHA still wanted slots, the notebook never got one: every ASHA trial had its last
  // allocation before the notebook got its first.
  size_t notebook_assigned = 0;
  size_t last_asha_assigned = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (IsFor(events[i], "allocationAssigned", notebook)) notebook_assigned = i;
    for (const auto& id : asha) {
      if (IsFor(events[i], "allocationAssigned", id)) last_asha_assigned = i;
    }
  }
  EXPECT_GT(notebook_assigned, last_asha_assigned);

  // 5. A priority-1 job needing all 8 slots cannot start: the notebook holds one and is not
  //    preemptible, so nothing is preempted for it.
  const std::string big = Submit("distributed-8", 8, 1, true);
  // 6. A priority-2 job with 4 slots is backfilled onto the 7 idle slots.
  const std::string backfill = Submit("distributed-2", 4, 2, true);
  events = Until([&](const auto& e) { return Count(e, "taskStarted", backfill) == 1; });
  EXPECT_EQ(Count(events, "allocationAssigned", big), 0);
  EXPECT_EQ(Count(events, "preemptionRequested", notebook), 0);
  for (const auto& event : events) {
    if (IsFor(event, "allocationAssigned", backfill)) {
      EXPECT_TRUE(event["allocationAssigned"].value("backfilled", false)) << event.dump();
    }
  }

  // 7. The notebook is killed; the backfilled priority-2 job is preempted and the priority-1
  //    job starts. Once that completes, the priority-2 job runs again.
  auto client = cluster_.Client();
  auto killed = client.Request("POST", "/api/v1/commands/" + notebook + "/kill");
  ASSERT_TRUE(killed.ok());
  ASSERT_EQ(killed->status, 200);
  events = Until([&](const auto& e) { return Count(e, "taskStarted", big) == 1; });
  EXPECT_EQ(Count(events, "preemptionRequested", backfill), 1);
  EXPECT_EQ(Count(events, "allocationReleased", backfill), 1);
  Finish("distributed-8");
  events = Until([&](const auto& e) { return Count(e, "taskStarted", backfill) == 2; });
  EXPECT_EQ(Count(events, "taskExited", big), 1);
  EXPECT_EQ(Count(events, "allocationAssigned", backfill), 2);

  // Every decision above is explained from the log alone, and the replayed projections equal
  // the live ones byte for byte.
  auto explained =
      cluster_.RunCairn({"replay", "explain", preempted[0], "--data", cluster_.data_dir()});
  std::string text;
  for (const auto& line : explained) text += line + "\n";
  EXPECT_NE(text.find("PreemptionRequested"), std::string::npos) << text;
  EXPECT_NE(text.find("priority scheduler"), std::string::npos) << text;
  EXPECT_NE(text.find("AllocationReleased"), std::string::npos) << text;
  Finish("distributed-2");
  events = Until([&](const auto& e) { return Count(e, "taskExited", backfill) == 1; });
  // Let the live projections reach the end of the log before the master stops.
  cluster_.Get("/api/v1/tasks/" + backfill +
               "?minOffset=" + events.back()["offset"].get<std::string>());
  cluster_.ExpectRebuiltProjectionsEqualLive();
}

}  // namespace
}  // namespace cairn::testing
