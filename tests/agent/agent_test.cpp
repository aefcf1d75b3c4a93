// The Agent end to end against FakeMaster: orders in over the event stream, real processes,
// reports out over HTTP.
#include "agent/agent.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "events/sealing.h"
#include "tests/agent/fake_master.h"
#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using testing::CountCalls;
using testing::FakeMaster;
using Calls = std::vector<FakeMaster::Call>;

constexpr auto kTimeout = 15s;
const std::string kAgentId = "agent-1";

class AgentTest : public ::testing::Test {
 protected:
  AgentOptions Options() {
    AgentOptions options;
    options.agent_id = kAgentId;
    options.master_url = master_.url();
    options.devices = ArtificialCpuSlots(2);
    options.work_root = dir_.Sub("work");
    options.kill_grace = 5s;
    options.heartbeat_interval = 50ms;
    options.retry.initial_backoff = 10ms;
    options.retry.max_backoff = 100ms;
    options.stream.initial_backoff = 10ms;
    options.stream.max_backoff = 100ms;
    options.shutdown_report_budget = 5s;
    return options;
  }

  void StartAgent(AgentOptions options) {
    Result<std::unique_ptr<Agent>> created = Agent::Create(std::move(options));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    agent_ = std::move(created).value();
    Result<Registration> registration = agent_->Start();
    ASSERT_TRUE(registration.ok()) << registration.status().ToString();
    EXPECT_EQ(registration->resume_from, 10u);
  }
  void StartAgent() { StartAgent(Options()); }

  events::Envelope Assign(const std::string& allocation_id, std::vector<std::string> argv,
                          std::string incarnation = "") {
    events::Envelope order;
    auto* assigned = order.mutable_allocation_assigned();
    assigned->set_task_id("task-" + allocation_id);
    assigned->set_allocation_id(allocation_id);
    assigned->set_agent_id(kAgentId);
    assigned->set_agent_incarnation(incarnation.empty() ? agent_->incarnation() : incarnation);
    assigned->add_slot_ids(0);
    assigned->set_resource_pool("default");
    assigned->mutable_spec()->set_task_type(events::TASK_TYPE_COMMAND);
    for (auto& arg : argv) assigned->mutable_spec()->add_entrypoint(std::move(arg));
    return order;
  }

  events::Envelope Kill(const std::string& allocation_id, const std::string& reason) {
    events::Envelope order;
    auto* kill = order.mutable_kill_requested();
    kill->set_task_id("task-" + allocation_id);
    kill->set_allocation_id(allocation_id);
    kill->set_agent_id(kAgentId);
    kill->set_agent_incarnation(agent_->incarnation());
    kill->set_reason(reason);
    return order;
  }

  // Waits until the master has taken an exited report of `allocation_id`; returns its body.
  nlohmann::json WaitExited(const std::string& allocation_id) {
    bool done = master_.WaitFor(
        [&](const Calls& calls) {
          return CountCalls(calls, testing::AllocationPath(allocation_id, "exited"), "", 200) > 0;
        },
        kTimeout);
    EXPECT_TRUE(done) << "no exited report of " << allocation_id;
    for (const auto& call : master_.CallsTo(testing::AllocationPath(allocation_id, "exited"))) {
      if (call.status == 200) return call.body;
    }
    return nullptr;
  }

  bool WaitStarted(const std::string& allocation_id) {
    return master_.WaitFor(
        [&](const Calls& calls) {
          return CountCalls(calls, testing::AllocationPath(allocation_id, "started")) > 0;
        },
        kTimeout);
  }

  // Every log line the master got for `allocation_id`, by seq.
  std::map<uint64_t, nlohmann::json> LogLines(const std::string& allocation_id) {
    std::map<uint64_t, nlohmann::json> lines;
    for (const auto& call : master_.CallsTo("/api/v1/task/logs")) {
      for (const auto& line : call.body["logs"]) {
        if (line["allocationId"] != allocation_id) continue;
        EXPECT_EQ(lines.count(line["seq"].get<uint64_t>()), 0u) << "seq shipped twice";
        lines[line["seq"].get<uint64_t>()] = line;
      }
    }
    return lines;
  }

  // The position of the first call matching, in arrival order; -1 when none.
  static int IndexOf(const Calls& calls,
                     const std::function<bool(const FakeMaster::Call&)>& match) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (match(calls[i])) return static_cast<int>(i);
    }
    return -1;
  }

  FakeMaster master_;
  cairn::testing::TempDir dir_;
  std::unique_ptr<Agent> agent_;  // destroyed before the master and the directory
};

TEST_F(AgentTest, RegistersWithItsSlotsAndHeartbeats) {
  StartAgent();
  auto registers = master_.CallsTo("/api/v1/agents/agent-1/register");
  ASSERT_EQ(registers.size(), 1u);
  const nlohmann::json& body = registers[0].body;
  EXPECT_EQ(body["incarnation"], agent_->incarnation());
  EXPECT_EQ(body["resourcePool"], "default");
  EXPECT_EQ(body["slots"], 2);
  ASSERT_EQ(body["devices"].size(), 2u);
  EXPECT_EQ(body["devices"][1]["id"], 1);
  EXPECT_EQ(body["devices"][1]["type"], "cpu");
  EXPECT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/api/v1/agents/agent-1/heartbeat", "", 200) >= 2;
      },
      kTimeout));
  auto streams = master_.CallsTo("/api/v1/events");
  ASSERT_GE(streams.size(), 1u);
  EXPECT_EQ(streams[0].query["from"], "10");
  EXPECT_EQ(streams[0].query["follow"], "true");
  EXPECT_EQ(streams[0].query["agent"], "agent-1");
}

TEST_F(AgentTest, RunsAPlacementAndReportsItsLogsAndExit) {
  StartAgent();
  master_.Publish(Assign("alloc-1", {"sh", "-c", "echo hello; echo oops >&2; exit 3"}));
  nlohmann::json exited = WaitExited("alloc-1");
  EXPECT_EQ(exited["exitCode"], 3);
  EXPECT_EQ(exited["taskId"], "task-alloc-1");
  EXPECT_EQ(exited["agentId"], "agent-1");
  EXPECT_FALSE(exited.contains("signal"));

  auto started = master_.CallsTo(testing::AllocationPath("alloc-1", "started"));
  ASSERT_EQ(started.size(), 1u);
  EXPECT_GT(started[0].body["pid"].get<int>(), 0);
  EXPECT_EQ(started[0].body["taskId"], "task-alloc-1");

  auto lines = LogLines("alloc-1");
  ASSERT_EQ(lines.size(), 2u);
  std::map<std::string, std::string> by_stream;
  for (const auto& [seq, line] : lines) {
    EXPECT_LT(seq, 2u);
    EXPECT_EQ(line["taskId"], "task-alloc-1");
    EXPECT_EQ(line["agentId"], "agent-1");
    EXPECT_EQ(line["timestamp"].get<std::string>().back(), 'Z');
    by_stream[line["stdtype"]] = line["log"];
  }
  EXPECT_EQ(by_stream["stdout"], "hello\n");
  EXPECT_EQ(by_stream["stderr"], "oops\n");

  // Started first, the exit only after the last log line.
  Calls calls = master_.Calls();
  int started_at = IndexOf(
      calls, [](const auto& c) { return c.path == testing::AllocationPath("alloc-1", "started"); });
  int exited_at = IndexOf(
      calls, [](const auto& c) { return c.path == testing::AllocationPath("alloc-1", "exited"); });
  int last_log = -1;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].path == "/api/v1/task/logs") last_log = static_cast<int>(i);
  }
  EXPECT_LT(started_at, last_log);
  EXPECT_LT(last_log, exited_at);
}

TEST_F(AgentTest, GivesTheTaskItsEnvironmentAndWorkDir) {
  StartAgent();
  master_.Publish(Assign("alloc-env", {"sh", "-c",
                                       "echo \"$DET_ALLOCATION_ID $CAIRN_TASK_ID $DET_SLOT_IDS "
                                       "$DET_TASK_TYPE $DET_MASTER\"; pwd"}));
  WaitExited("alloc-env");
  auto lines = LogLines("alloc-env");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["log"], "alloc-env task-alloc-env [0] COMMAND " + master_.url() + "\n");
  EXPECT_EQ(lines[1]["log"], dir_.Sub("work") + "/alloc-env\n");
}

// The log keeps a variable marked secret sealed (events/sealing.h): the agent opens it with the
// cluster secret for the task alone; one sealed under another cluster's secret fails the task
// without naming the value.
TEST_F(AgentTest, OpensSealedVariablesWithTheClusterSecret) {
  AgentOptions options = Options();
  options.agent_token = "agent-token-of-this-cluster-0123";
  StartAgent(options);
  events::Envelope order = Assign("alloc-sealed", {"sh", "-c", "echo \"$API_KEY $PLAIN\""});
  auto* spec = order.mutable_allocation_assigned()->mutable_spec();
  spec->add_environment_variables("API_KEY=planted-secret-77");
  spec->add_environment_variables("PLAIN=visible");
  spec->add_secret_variable_names("API_KEY");
  SealSecrets(order, SecretSealer(options.agent_token));
  ASSERT_EQ(order.SerializeAsString().find("planted-secret-77"), std::string::npos);
  master_.Publish(order);
  EXPECT_EQ(WaitExited("alloc-sealed")["exitCode"], 0);
  auto lines = LogLines("alloc-sealed");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["log"], "planted-secret-77 visible\n");

  events::Envelope foreign = Assign("alloc-foreign", {"true"});
  foreign.mutable_allocation_assigned()->mutable_spec()->add_environment_variables(
      "API_KEY=planted-secret-77");
  foreign.mutable_allocation_assigned()->mutable_spec()->add_secret_variable_names("API_KEY");
  SealSecrets(foreign, SecretSealer("another-cluster-agent-token-9999"));
  master_.Publish(foreign);
  nlohmann::json exited = WaitExited("alloc-foreign");
  EXPECT_NE(exited["exitCode"], 0);
  const std::string reason = exited["reason"];
  EXPECT_NE(reason.find("another agent token"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("planted-secret-77"), std::string::npos) << reason;
}

TEST_F(AgentTest, ADuplicatePlacementRunsOnce) {
  StartAgent();
  std::string marker = dir_.Sub("runs");
  master_.Publish(Assign("alloc-dup", {"sh", "-c", "echo run >> " + marker}));
  master_.Publish(Assign("alloc-dup", {"sh", "-c", "echo run >> " + marker}));
  // Orders are handled in order: once the next one has run, the duplicate was seen.
  master_.Publish(Assign("alloc-next", {"true"}));
  WaitExited("alloc-next");
  WaitExited("alloc-dup");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-dup", "started")).size(), 1u);
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-dup", "exited")).size(), 1u);
  std::ifstream runs(marker);
  std::string content((std::istreambuf_iterator<char>(runs)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "run\n");
}

TEST_F(AgentTest, IgnoresAnOrderForAnotherIncarnation) {
  StartAgent();
  master_.Publish(Assign("alloc-old", {"true"}, "an-earlier-incarnation"));
  master_.Publish(Assign("alloc-next", {"true"}));
  WaitExited("alloc-next");
  EXPECT_EQ(master_.CallsTo("", "/alloc-old/").size(), 0u);
}

TEST_F(AgentTest, AKillOrderStopsARunningTask) {
  StartAgent();
  master_.Publish(Assign("alloc-long", {"sleep", "30"}));
  ASSERT_TRUE(WaitStarted("alloc-long"));
  EXPECT_EQ(agent_->RunningTasks(), 1u);
  master_.Publish(Kill("alloc-long", "user asked"));
  nlohmann::json exited = WaitExited("alloc-long");
  EXPECT_EQ(exited["signal"], SIGTERM);
  EXPECT_EQ(exited["reason"], "user asked");
  EXPECT_FALSE(exited.contains("exitCode"));
}

TEST_F(AgentTest, ReRegistersWithTheSameIncarnationOn409) {
  StartAgent();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/heartbeat", "", 200) > 0; }, kTimeout));
  master_.ForgetAgents();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/register") == 2; }, kTimeout));
  auto registers = master_.CallsTo("/register");
  EXPECT_EQ(registers[1].body["incarnation"], agent_->incarnation());
  EXPECT_GE(CountCalls(master_.Calls(), "/heartbeat", "", 409), 1u);
  // Heartbeats are accepted again afterwards.
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        for (size_t i = calls.size(); i-- > 0;) {
          if (calls[i].path.find("/register") != std::string::npos) return false;
          if (calls[i].path.find("/heartbeat") != std::string::npos && calls[i].status == 200) {
            return true;
          }
        }
        return false;
      },
      kTimeout));
}

TEST_F(AgentTest, ResumesTheEventStreamFromTheLastOffsetPlusOne) {
  StartAgent();
  master_.SkipOffsets(5);  // orders of other agents
  uint64_t offset = master_.Publish(Assign("alloc-a", {"true"}));
  WaitExited("alloc-a");
  master_.DropStreams();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/api/v1/events") >= 2; }, kTimeout));
  auto streams = master_.CallsTo("/api/v1/events");
  EXPECT_EQ(streams[1].query["from"], std::to_string(offset + 1));
  master_.Publish(Assign("alloc-b", {"true"}));
  WaitExited("alloc-b");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-a", "started")).size(), 1u);
}

TEST_F(AgentTest, ResumesAfterAMasterRestartWithoutRunningAnythingTwice) {
  StartAgent();
  uint64_t offset = master_.Publish(Assign("alloc-a", {"sh", "-c", "echo once"}));
  WaitExited("alloc-a");
  master_.Restart();
  // The agent registers again with the same incarnation and reconnects after its last order.
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/register") >= 2 && CountCalls(calls, "/api/v1/events") >= 2;
      },
      kTimeout));
  auto registers = master_.CallsTo("/register");
  EXPECT_EQ(registers.back().body["incarnation"], agent_->incarnation());
  auto streams = master_.CallsTo("/api/v1/events");
  EXPECT_EQ(streams.back().query["from"], std::to_string(offset + 1));
  master_.Publish(Assign("alloc-b", {"true"}));
  WaitExited("alloc-b");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-a", "started")).size(), 1u);
  EXPECT_EQ(LogLines("alloc-a").size(), 1u);
}

TEST_F(AgentTest, RetriesReportsOn5xxButNotOn4xx) {
  master_.FailNext("/started", 404, 1);
  master_.FailNext("/exited", 503, 2);
  StartAgent();
  master_.Publish(Assign("alloc-r", {"true"}));
  WaitExited("alloc-r");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-r", "started")).size(), 1u);
  auto exited = master_.CallsTo(testing::AllocationPath("alloc-r", "exited"));
  ASSERT_EQ(exited.size(), 3u);
  EXPECT_EQ(exited[0].status, 503);
  EXPECT_EQ(exited[2].status, 200);
}

TEST_F(AgentTest, ShipsManyLinesInBatchesBeforeTheExit) {
  StartAgent();
  master_.Publish(Assign("alloc-many", {"seq", "1", "2500"}));
  WaitExited("alloc-many");
  auto lines = LogLines("alloc-many");
  ASSERT_EQ(lines.size(), 2500u);
  EXPECT_EQ(lines.begin()->first, 0u);
  EXPECT_EQ(lines.rbegin()->first, 2499u);
  EXPECT_EQ(lines[2499]["log"], "2500\n");
  for (const auto& call : master_.CallsTo("/api/v1/task/logs")) {
    EXPECT_LE(call.body["logs"].size(), 1000u);
  }
}

TEST_F(AgentTest, ReportsAnEntrypointThatCannotStart) {
  StartAgent();
  master_.Publish(Assign("alloc-bad", {dir_.Sub("no-such-program")}));
  nlohmann::json exited = WaitExited("alloc-bad");
  EXPECT_EQ(exited["exitCode"], 127);
  EXPECT_NE(exited["reason"].get<std::string>().find("could not start"), std::string::npos);
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-bad", "started")).size(), 0u);
}

TEST_F(AgentTest, ShutdownStopsTasksAndReportsTheirExits) {
  StartAgent();
  master_.Publish(Assign("alloc-s", {"sleep", "30"}));
  ASSERT_TRUE(WaitStarted("alloc-s"));
  agent_->Shutdown();
  EXPECT_EQ(agent_->RunningTasks(), 0u);
  auto exited = master_.CallsTo(testing::AllocationPath("alloc-s", "exited"));
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0].body["signal"], SIGTERM);
  EXPECT_EQ(exited[0].body["reason"], "agent shutting down");
}

TEST_F(AgentTest, WritesTheTraceFile) {
  AgentOptions options = Options();
  options.trace_file = dir_.Sub("trace");
  StartAgent(options);
  master_.Publish(Assign("alloc-t", {"true"}));
  WaitExited("alloc-t");
  std::ifstream trace(dir_.Sub("trace"));
  std::string allocation_id;
  long long micros = 0;
  ASSERT_TRUE(trace >> allocation_id >> micros);
  EXPECT_EQ(allocation_id, "alloc-t");
  EXPECT_GT(micros, 1700000000LL * 1000000);
}

TEST_F(AgentTest, AProcessAgentRefusesATaskThatNamesAnImage) {
  StartAgent();
  events::Envelope order = Assign("alloc-image", {"true"});
  order.mutable_allocation_assigned()->mutable_spec()->set_image_cpu("team/trainer:1");
  master_.Publish(order);
  nlohmann::json exited = WaitExited("alloc-image");
  EXPECT_EQ(exited["exitCode"], 127);
  const std::string reason = exited["reason"];
  EXPECT_NE(reason.find("image team/trainer:1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("--allow-images-on-host"), std::string::npos) << reason;
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-image", "started")).size(), 0u);
}

// The batch the agent writes as text is JSON the master reads back whole: quotes, backslashes,
// control characters and UTF-8 as printed, a byte that is no UTF-8 replaced by U+FFFD.
TEST_F(AgentTest, LogLinesWithAnyBytesReachTheMasterAsJson) {
  StartAgent();
  master_.Publish(Assign(
      "alloc-1", {"sh", "-c", R"(printf 'q"uo\\te\t\001 caf\303\251 bad\377\n'; echo two)"}));
  WaitExited("alloc-1");
  auto lines = LogLines("alloc-1");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.begin()->second["log"], "q\"uo\\te\t\x01 caf\xC3\xA9 bad\xEF\xBF\xBD\n");
  EXPECT_EQ(std::next(lines.begin())->second["log"], "two\n");
  EXPECT_EQ(std::next(lines.begin())->second["taskId"], "task-alloc-1");
}

TEST_F(AgentTest, AllowedImagesRunOnTheHostWithAWarningFirstInTheLog) {
  AgentOptions options = Options();
  options.allow_images_on_host = true;
  StartAgent(options);
  events::Envelope order = Assign("alloc-host", {"sh", "-c", "echo ran"});
  order.mutable_allocation_assigned()->mutable_spec()->set_image_cpu("team/trainer:1");
  master_.Publish(order);
  nlohmann::json exited = WaitExited("alloc-host");
  EXPECT_EQ(exited["exitCode"], 0);
  auto lines = LogLines("alloc-host");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["stdtype"], "stderr");
  EXPECT_NE(lines[0]["log"].get<std::string>().find("WARNING"), std::string::npos);
  EXPECT_NE(lines[0]["log"].get<std::string>().find("team/trainer:1"), std::string::npos);
  EXPECT_EQ(lines[1]["log"], "ran\n");
}

// A container agent with runc, against an image built here from busybox-static (an OCI archive
// made with umoci): no registry, no network.
class ContainerAgentTest : public AgentTest {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    image_dir_ = new cairn::testing::TempDir();
    Status built =
        cairn::testing::BuildBusyboxImage(image_dir_->Sub("busybox.tar"), image_dir_->path());
    ASSERT_TRUE(built.ok()) << built.ToString();
  }
  static void TearDownTestSuite() {
    delete image_dir_;
    image_dir_ = nullptr;
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "runc, overlay mounts and cgroups need root";
  }

  AgentOptions ContainerOptions() {
    AgentOptions options = Options();
    options.container_runtime = true;
    options.image_dir = image_dir_->path();
    return options;
  }

  events::Envelope AssignInImage(const std::string& allocation_id, std::vector<std::string> argv) {
    events::Envelope order = Assign(allocation_id, std::move(argv));
    order.mutable_allocation_assigned()->mutable_spec()->set_image_cpu("busybox");
    order.mutable_allocation_assigned()->mutable_spec()->set_image_gpu("busybox");
    return order;
  }

  static void AddMount(events::Envelope& order, const std::string& host, const std::string& inside,
                       bool read_only) {
    auto* mount = order.mutable_allocation_assigned()->mutable_spec()->add_bind_mounts();
    mount->set_host_path(host);
    mount->set_container_path(inside);
    mount->set_read_only(read_only);
  }

  // The task's output after the agent's own first line.
  std::vector<std::string> TaskOutput(const std::string& allocation_id) {
    std::vector<std::string> output;
    for (const auto& [seq, line] : LogLines(allocation_id)) {
      std::string text = line["log"];
      if (text.rfind("cairn-agent:", 0) == 0) continue;
      output.push_back(text);
    }
    return output;
  }

  static cairn::testing::TempDir* image_dir_;
};

cairn::testing::TempDir* ContainerAgentTest::image_dir_ = nullptr;

TEST_F(ContainerAgentTest, RunsTheTaskInItsImageWithTheImagesEnvironmentAndItsWorkDir) {
  StartAgent(ContainerOptions());
  master_.Publish(
      AssignInImage("c-image", {"sh", "-c",
                                "cat /marker; echo $IMAGE_VARIABLE $DET_ALLOCATION_ID; pwd; "
                                "echo written > out.txt"}));
  nlohmann::json exited = WaitExited("c-image");
  EXPECT_EQ(exited["exitCode"], 0);
  auto lines = LogLines("c-image");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0]["log"].get<std::string>().find("image busybox from " +
                                                    image_dir_->Sub("busybox.tar")),
            std::string::npos)
      << lines[0]["log"];
  const std::string work_dir = dir_.Sub("work") + "/c-image";
  EXPECT_EQ(TaskOutput("c-image"),
            (std::vector<std::string>{"image-marker\n", "from-image c-image\n", work_dir + "\n"}));
  std::ifstream written(work_dir + "/out.txt");
  std::string content;
  EXPECT_TRUE(std::getline(written, content));
  EXPECT_EQ(content, "written");
}

TEST_F(ContainerAgentTest, ATaskSeesOnlyItsOwnGpus) {
  AgentOptions options = ContainerOptions();
  options.devices = ArtificialGpuSlots(4);
  // Fake GPUs: character devices with NVIDIA's major number, which no driver here serves.
  options.gpu_device_dir = dir_.Sub("dev");
  std::filesystem::create_directories(options.gpu_device_dir);
  for (int i = 0; i < 4; ++i) {
    std::string path = options.gpu_device_dir + "/nvidia" + std::to_string(i);
    ASSERT_EQ(mknod(path.c_str(), S_IFCHR | 0666, makedev(195, i)), 0) << path;
  }
  StartAgent(options);
  events::Envelope order = AssignInImage(
      "c-gpus", {"sh", "-c",
                 "ls /dev | grep nvidia; echo $CUDA_VISIBLE_DEVICES; "
                 "cat /dev/nvidia1 2>&1; mknod /dev/nvidia0 c 195 0; cat /dev/nvidia0 2>&1"});
  order.mutable_allocation_assigned()->clear_slot_ids();
  order.mutable_allocation_assigned()->add_slot_ids(1);
  order.mutable_allocation_assigned()->add_slot_ids(3);
  master_.Publish(order);
  WaitExited("c-gpus");
  // Its own device opens as far as the (absent) driver lets it (ENXIO); another GPU's node, made
  // by hand (runc lets containers mknod), cannot be opened: the device cgroup refuses (EPERM).
  EXPECT_EQ(
      TaskOutput("c-gpus"),
      (std::vector<std::string>{"nvidia1\n", "nvidia3\n", "GPU-artificial-1,GPU-artificial-3\n",
                                "cat: can't open '/dev/nvidia1': No such device or address\n",
                                "cat: can't open '/dev/nvidia0': Operation not permitted\n"}));
}

TEST_F(ContainerAgentTest, ATaskCannotWriteOutsideItsMounts) {
  StartAgent(ContainerOptions());
  const std::string writable = dir_.Sub("writable");
  const std::string read_only = dir_.Sub("read-only");
  const std::string unmounted = dir_.Sub("unmounted");
  for (const auto& dir : {writable, read_only, unmounted}) std::filesystem::create_directories(dir);
  events::Envelope order = AssignInImage(
      "c-mounts", {"sh", "-c",
                   "echo a > /data/a && echo wrote-data; echo b > /ro/b || echo refused-ro; "
                   "mkdir -p " +
                       unmounted + " && echo c > " + unmounted +
                       "/c && echo wrote-c; "
                       "echo d > /bin/d && echo wrote-image"});
  AddMount(order, writable, "/data", false);
  AddMount(order, read_only, "/ro", true);
  master_.Publish(order);
  EXPECT_EQ(WaitExited("c-mounts")["exitCode"], 0);
  auto output = TaskOutput("c-mounts");
  // What the task wrote outside its mounts went to its own copy of the image, not the host's.
  EXPECT_EQ(std::count(output.begin(), output.end(), "wrote-data\n"), 1);
  EXPECT_EQ(std::count(output.begin(), output.end(), "refused-ro\n"), 1);
  EXPECT_TRUE(std::filesystem::exists(writable + "/a"));
  EXPECT_FALSE(std::filesystem::exists(read_only + "/b"));
  EXPECT_FALSE(std::filesystem::exists(unmounted + "/c"));
  // Nor into the agent's unpacked image, which the next task starts from.
  master_.Publish(AssignInImage("c-mounts-next", {"sh", "-c", "ls /bin/d 2>&1 || echo clean"}));
  WaitExited("c-mounts-next");
  auto next = TaskOutput("c-mounts-next");
  EXPECT_EQ(std::count(next.begin(), next.end(), "clean\n"), 1);
}

TEST_F(ContainerAgentTest, AKillEndsEveryProcessOfTheContainer) {
  StartAgent(ContainerOptions());
  const std::string work_dir = dir_.Sub("work") + "/c-kill";
  std::filesystem::create_directories(work_dir);
  const std::string fifo = work_dir + "/held";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A child in a session of its own holds the FIFO open: only its death closes it.
  master_.Publish(
      AssignInImage("c-kill", {"sh", "-c",
                               "setsid sh -c 'exec 3<>held; echo child-ready; sleep 1000' & "
                               "sleep 1000"}));
  ASSERT_TRUE(master_.WaitFor(
      [&](const Calls& calls) {
        for (const auto& call : calls) {
          if (call.path != "/api/v1/task/logs") continue;
          for (const auto& line : call.body["logs"]) {
            if (line["log"] == "child-ready\n") return true;
          }
        }
        return false;
      },
      kTimeout));
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  char byte;
  EXPECT_EQ(read(reader, &byte, 1), -1) << "the child does not hold the FIFO";
  master_.Publish(Kill("c-kill", "user asked"));
  nlohmann::json exited = WaitExited("c-kill");
  EXPECT_EQ(exited["reason"], "user asked");
  pollfd hangup = {reader, POLLIN, 0};
  ASSERT_EQ(poll(&hangup, 1, 10000), 1);
  EXPECT_EQ(read(reader, &byte, 1), 0) << "a process of the container still holds the FIFO";
  close(reader);
}

TEST_F(ContainerAgentTest, TheMemoryLimitIsEnforcedAndReportedAsOutOfMemory) {
  StartAgent(ContainerOptions());
  auto allocate = [&](const std::string& allocation_id, int megabytes) {
    events::Envelope order =
        AssignInImage(allocation_id, {"/usr/bin/python3", "-c",
                                      "b = bytearray(" + std::to_string(megabytes) +
                                          " * 1024 * 1024); print('allocated', len(b) >> 20)"});
    order.mutable_allocation_assigned()->mutable_spec()->set_memory_mb(64);
    AddMount(order, "/usr", "/usr", true);
    master_.Publish(order);
    return WaitExited(allocation_id);
  };
  nlohmann::json within = allocate("c-mem-16", 16);
  EXPECT_EQ(within["exitCode"], 0);
  EXPECT_FALSE(within.contains("reason"));
  EXPECT_EQ(TaskOutput("c-mem-16"), (std::vector<std::string>{"allocated 16\n"}));

  nlohmann::json beyond = allocate("c-mem-256", 256);
  EXPECT_NE(beyond["exitCode"], 0);
  EXPECT_EQ(beyond["reason"],
            "out of memory: the task reached its memory limit of 64 MB and was killed");
  EXPECT_TRUE(TaskOutput("c-mem-256").empty());
}

// The cgroup v1 hierarchy `controller` is mounted at ("" when it is not).
std::string CgroupMount(const std::string& controller) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, options, rest;
  while (mounts >> device >> mount_point >> type >> options && std::getline(mounts, rest)) {
    if (type != "cgroup") continue;
    std::stringstream split(options);
    for (std::string option; std::getline(split, option, ',');) {
      if (option == controller) return mount_point;
    }
  }
  return "";
}

TEST_F(ContainerAgentTest, TheCpuLimitIsAQuotaOnTheTasksCgroup) {
  StartAgent(ContainerOptions());
  const std::string work_dir = dir_.Sub("work") + "/c-cpu";
  std::filesystem::create_directories(work_dir);
  ASSERT_EQ(mkfifo((work_dir + "/release").c_str(), 0600), 0);
  // The task says where it is, then waits until the test has looked.
  events::Envelope order = AssignInImage(
      "c-cpu", {"sh", "-c", "grep :cpu: /proc/self/cgroup; read line < release; echo released"});
  order.mutable_allocation_assigned()->mutable_spec()->set_cpus(2);
  master_.Publish(order);
  std::string cgroup_line;
  ASSERT_TRUE(master_.WaitFor(
      [&](const Calls& calls) {
        for (const auto& call : calls) {
          if (call.path != "/api/v1/task/logs") continue;
          for (const auto& line : call.body["logs"]) {
            std::string text = line["log"];
            if (text.find(":cpu:/") != std::string::npos) cgroup_line = text;
          }
        }
        return !cgroup_line.empty();
      },
      kTimeout));
  // "1:cpu:/<agent's own>/cairn-agent-1/c-cpu/task": the limit is on the agent's level above.
  std::string path = cgroup_line.substr(cgroup_line.find(":cpu:") + 5);
  path.erase(path.find_last_not_of('\n') + 1);
  ASSERT_TRUE(path.ends_with("/cairn-agent-1/c-cpu/task")) << path;
  path.resize(path.size() - std::string("/task").size());
  std::ifstream quota(CgroupMount("cpu") + path + "/cpu.cfs_quota_us");
  std::ifstream period(CgroupMount("cpu") + path + "/cpu.cfs_period_us");
  int64_t quota_us = 0, period_us = 0;
  EXPECT_TRUE(quota >> quota_us);
  EXPECT_TRUE(period >> period_us);
  EXPECT_EQ(quota_us, 2 * period_us);
  std::ofstream(work_dir + "/release") << "go\n";
  EXPECT_EQ(WaitExited("c-cpu")["exitCode"], 0);
  // The agent's cgroup is gone with the task.
  EXPECT_FALSE(std::filesystem::exists(CgroupMount("cpu") + path));
}

TEST_F(ContainerAgentTest, ATaskWithoutAnImageFailsWithoutADefaultImage) {
  StartAgent(ContainerOptions());
  master_.Publish(Assign("c-none", {"true"}));
  nlohmann::json exited = WaitExited("c-none");
  EXPECT_EQ(exited["exitCode"], 127);
  EXPECT_NE(exited["reason"].get<std::string>().find("names no image"), std::string::npos);
}

TEST_F(ContainerAgentTest, AFailedPullSaysWhyWithoutThePassword) {
  StartAgent(ContainerOptions());
  events::Envelope order = Assign("c-pull", {"true"});
  auto* spec = order.mutable_allocation_assigned()->mutable_spec();
  // Nothing listens on port 1: skopeo's pull fails at once.
  spec->set_image_cpu("127.0.0.1:1/team/trainer:1");
  spec->mutable_registry_auth()->set_username("alice");
  spec->mutable_registry_auth()->set_password("registry-pw-1234");
  master_.Publish(order);
  nlohmann::json exited = WaitExited("c-pull");
  EXPECT_EQ(exited["exitCode"], 127);
  const std::string reason = exited["reason"];
  EXPECT_NE(reason.find("image 127.0.0.1:1/team/trainer:1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("skopeo copy failed"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("registry-pw-1234"), std::string::npos) << reason;
  // The credentials file skopeo read is gone with its pull directory.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.Sub("work"))) {
    EXPECT_NE(entry.path().filename(), "auth.json") << entry.path();
  }
}

TEST_F(ContainerAgentTest, AnArchiveThatIsNotAnImageFailsTheTaskSayingSo) {
  StartAgent(ContainerOptions());
  const std::string bogus = dir_.Sub("bogus.tar");
  std::ofstream(bogus) << "not a tar file";
  events::Envelope order = Assign("c-bogus", {"true"});
  order.mutable_allocation_assigned()->mutable_spec()->set_image_cpu("oci-archive:" + bogus);
  master_.Publish(order);
  nlohmann::json exited = WaitExited("c-bogus");
  EXPECT_EQ(exited["exitCode"], 127);
  EXPECT_NE(exited["reason"].get<std::string>().find(bogus), std::string::npos) << exited;
}

}  // namespace
}  // namespace cairn::agent
