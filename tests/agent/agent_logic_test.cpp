// The agent's pure parts with plain values: which orders run, report ordering and batching, and
// the environment a task gets.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "agent/master_client.h"
#include "agent/order_book.h"
#include "agent/report_queue.h"
#include "agent/task_plan.h"
#include "base/password.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using Clock = ReportQueue::Clock;

events::Envelope Assigned(const std::string& allocation_id, const std::string& incarnation,
                          const std::string& agent_id = "agent-1") {
  events::Envelope order;
  auto* assigned = order.mutable_allocation_assigned();
  assigned->set_task_id("task-" + allocation_id);
  assigned->set_allocation_id(allocation_id);
  assigned->set_agent_id(agent_id);
  assigned->set_agent_incarnation(incarnation);
  return order;
}

events::Envelope KillOrder(const std::string& allocation_id, const std::string& incarnation) {
  events::Envelope order;
  auto* kill = order.mutable_kill_requested();
  kill->set_allocation_id(allocation_id);
  kill->set_agent_id("agent-1");
  kill->set_agent_incarnation(incarnation);
  return order;
}

TEST(ParseRegistrationTest, NullOrAbsentPlacementFieldsTakeDefaults) {
  Result<Registration> parsed = ParseRegistration(
      R"({"offset":1,"resumeFrom":"2","placements":{"transport":null,"topicPrefix":null}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->transport, "http");
  EXPECT_EQ(parsed->brokers, "");
  EXPECT_EQ(parsed->topic_prefix, "cairn");
}

TEST(ParseRegistrationTest, WrongPlacementFieldTypesAreInvalidArgumentNotAThrow) {
  for (const char* body : {R"({"offset":1,"resumeFrom":1,"placements":{"transport":7}})",
                           R"({"offset":1,"resumeFrom":1,"placements":{"brokers":["a"]}})",
                           R"({"offset":1,"resumeFrom":1,"placements":{"topicPrefix":{"x":1}}})"}) {
    Result<Registration> parsed = ParseRegistration(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << body;
  }
}

TEST(OrderBookTest, RunsEachAllocationOnce) {
  OrderBook book("agent-1", "inc-1");
  EXPECT_EQ(book.Decide(Assigned("a", "inc-1")).action, OrderBook::Action::kRun);
  EXPECT_EQ(book.Decide(Assigned("a", "inc-1")).action, OrderBook::Action::kIgnore);
  EXPECT_EQ(book.Decide(Assigned("b", "inc-1")).action, OrderBook::Action::kRun);
}

TEST(OrderBookTest, IgnoresOrdersForOtherIncarnationsAndAgents) {
  OrderBook book("agent-1", "inc-1");
  OrderBook::Decision decision = book.Decide(Assigned("a", "inc-0"));
  EXPECT_EQ(decision.action, OrderBook::Action::kIgnore);
  EXPECT_NE(decision.why.find("inc-0"), std::string::npos);
  EXPECT_EQ(book.Decide(Assigned("a", "inc-1", "agent-2")).action, OrderBook::Action::kIgnore);
  EXPECT_EQ(book.Decide(KillOrder("a", "inc-0")).action, OrderBook::Action::kIgnore);
  // Ignoring them did not use the id up.
  EXPECT_EQ(book.Decide(Assigned("a", "inc-1")).action, OrderBook::Action::kRun);
}

TEST(OrderBookTest, KillsOnlyStartedAllocationsAndRetiresUnseenOnes) {
  OrderBook book("agent-1", "inc-1");
  EXPECT_EQ(book.Decide(Assigned("a", "inc-1")).action, OrderBook::Action::kRun);
  EXPECT_EQ(book.Decide(KillOrder("a", "inc-1")).action, OrderBook::Action::kKill);
  EXPECT_EQ(book.Decide(KillOrder("b", "inc-1")).action, OrderBook::Action::kIgnore);
  EXPECT_EQ(book.Decide(Assigned("b", "inc-1")).action, OrderBook::Action::kIgnore);
  EXPECT_EQ(book.Decide(events::Envelope()).action, OrderBook::Action::kIgnore);
}

TaskLogLine Line(const std::string& allocation_id, uint64_t seq) {
  TaskLogLine line;
  line.allocation_id = allocation_id;
  line.seq = seq;
  line.text = "line\n";
  return line;
}

// One lane: the order of everything added.
ReportQueue::Options QueueOptions() {
  ReportQueue::Options options;
  options.max_batch_lines = 3;
  options.max_line_delay = 100ms;
  options.max_queued_lines = 5;
  options.lanes = 1;
  return options;
}

ReportQueue::Options LaneOptions() {
  ReportQueue::Options options = QueueOptions();
  options.max_queued_lines = 1000;
  options.lanes = 8;
  return options;
}

TEST(ReportQueueTest, HoldsLinesUntilTheDelayPasses) {
  ReportQueue queue(QueueOptions());
  Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(queue.NextDue(0).has_value());
  ASSERT_TRUE(queue.AddLine(Line("a", 0), t0));
  ASSERT_TRUE(queue.AddLine(Line("a", 1), t0 + 50ms));
  EXPECT_EQ(queue.NextDue(0), t0 + 100ms);
  EXPECT_FALSE(queue.TakeDue(0, t0 + 99ms, false).has_value());
  auto item = queue.TakeDue(0, t0 + 100ms, false);
  ASSERT_TRUE(item.has_value());
  ASSERT_TRUE(std::holds_alternative<LogBatch>(*item));
  EXPECT_EQ(std::get<LogBatch>(*item).size(), 2u);
  EXPECT_TRUE(queue.empty());
}

TEST(ReportQueueTest, SendsAFullBatchAtOnce) {
  ReportQueue queue(QueueOptions());
  Clock::time_point t0 = Clock::now();
  for (uint64_t seq = 0; seq < 4; ++seq) ASSERT_TRUE(queue.AddLine(Line("a", seq), t0));
  auto item = queue.TakeDue(0, t0, false);
  ASSERT_TRUE(item.has_value());
  const LogBatch& batch = std::get<LogBatch>(*item);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[0].seq, 0u);
  EXPECT_EQ(batch[2].seq, 2u);
  EXPECT_FALSE(queue.TakeDue(0, t0, false).has_value());  // one line left, not due yet
  EXPECT_EQ(queue.queued_lines(), 1u);
}

TEST(ReportQueueTest, AnExitWaitsForTheLinesBeforeIt) {
  ReportQueue queue(QueueOptions());
  Clock::time_point t0 = Clock::now();
  queue.AddStarted({"a", "task-a", 42});
  ASSERT_TRUE(queue.AddLine(Line("a", 0), t0));
  queue.AddExited({"a", "task-a", 0, std::nullopt, ""});
  // Everything is due at once: the exit flushes the line ahead of it.
  auto first = queue.TakeDue(0, t0, false);
  ASSERT_TRUE(first && std::holds_alternative<StartedReport>(*first));
  auto second = queue.TakeDue(0, t0, false);
  ASSERT_TRUE(second && std::holds_alternative<LogBatch>(*second));
  auto third = queue.TakeDue(0, t0, false);
  ASSERT_TRUE(third && std::holds_alternative<ExitedReport>(*third));
  EXPECT_TRUE(queue.empty());
}

TEST(ReportQueueTest, FlushIgnoresTheDelayAndAFullQueueDropsLines) {
  ReportQueue queue(QueueOptions());
  Clock::time_point t0 = Clock::now();
  for (uint64_t seq = 0; seq < 5; ++seq) ASSERT_TRUE(queue.AddLine(Line("a", seq), t0));
  EXPECT_FALSE(queue.AddLine(Line("a", 5), t0));
  EXPECT_EQ(std::get<LogBatch>(*queue.TakeDue(0, t0, true)).size(), 3u);
  EXPECT_EQ(std::get<LogBatch>(*queue.TakeDue(0, t0, true)).size(), 2u);
  EXPECT_TRUE(queue.AddLine(Line("a", 6), t0));
}

TEST(ReportQueueTest, KeepsEachAllocationsOrderInItsOwnLane) {
  ReportQueue queue(LaneOptions());
  Clock::time_point t0 = Clock::now();
  std::vector<std::string> ids;
  for (int i = 0; i < 32; ++i) ids.push_back("alloc-" + std::to_string(i));
  // Interleaved across allocations, as concurrent tasks would report.
  for (const auto& id : ids) queue.AddStarted({id, "task-" + id, 1});
  for (const auto& id : ids) ASSERT_TRUE(queue.AddLine(Line(id, 0), t0));
  for (const auto& id : ids) queue.AddExited({id, "task-" + id, 0, std::nullopt, ""});

  std::map<std::string, std::string> kinds;  // allocation -> "S", "L", "E" in the order taken
  std::set<size_t> used_lanes;
  for (size_t lane = 0; lane < queue.lanes(); ++lane) {
    while (auto item = queue.TakeDue(lane, t0, false)) {
      used_lanes.insert(lane);
      if (auto* batch = std::get_if<LogBatch>(&*item)) {
        for (const auto& line : *batch) {
          EXPECT_EQ(queue.LaneOf(line.allocation_id), lane) << line.allocation_id;
          kinds[line.allocation_id] += "L";
        }
      } else if (auto* started = std::get_if<StartedReport>(&*item)) {
        EXPECT_EQ(queue.LaneOf(started->allocation_id), lane) << started->allocation_id;
        kinds[started->allocation_id] += "S";
      } else {
        const auto& exited = std::get<ExitedReport>(*item);
        EXPECT_EQ(queue.LaneOf(exited.allocation_id), lane) << exited.allocation_id;
        kinds[exited.allocation_id] += "E";
      }
    }
    EXPECT_TRUE(queue.empty(lane));
  }
  EXPECT_TRUE(queue.empty());
  ASSERT_EQ(kinds.size(), ids.size());
  for (const auto& id : ids) EXPECT_EQ(kinds[id], "SLE") << id;
  // 32 ids over 8 lanes: a hash that put them all in one lane would send nothing in parallel.
  EXPECT_GT(used_lanes.size(), 1u);
}

TEST(ReportQueueTest, ALanesWaitingLinesDoNotHoldUpAnotherLanesReport) {
  ReportQueue queue(LaneOptions());
  Clock::time_point t0 = Clock::now();
  std::string quiet = "a";
  std::string busy = "b";
  for (int i = 0; i < 100 && queue.LaneOf(busy) == queue.LaneOf(quiet); ++i) busy += "b";
  ASSERT_NE(queue.LaneOf(busy), queue.LaneOf(quiet)) << "the hash puts every id in one lane";
  ASSERT_TRUE(queue.AddLine(Line(quiet, 0), t0));
  queue.AddExited({busy, "task-b", 0, std::nullopt, ""});
  EXPECT_FALSE(queue.TakeDue(queue.LaneOf(quiet), t0, false).has_value());
  auto item = queue.TakeDue(queue.LaneOf(busy), t0, false);
  ASSERT_TRUE(item && std::holds_alternative<ExitedReport>(*item));
  EXPECT_EQ(queue.NextDue(queue.LaneOf(quiet)), t0 + 100ms);
}

TEST(ReportQueueTest, TheLineLimitCountsEveryLane) {
  ReportQueue::Options options = LaneOptions();
  options.max_queued_lines = 4;
  ReportQueue queue(options);
  Clock::time_point t0 = Clock::now();
  std::set<size_t> lanes;
  for (int i = 0; i < 4; ++i) {
    std::string id = "alloc-" + std::to_string(i);
    lanes.insert(queue.LaneOf(id));
    ASSERT_TRUE(queue.AddLine(Line(id, 0), t0));
  }
  EXPECT_FALSE(queue.AddLine(Line("alloc-4", 0), t0));
  EXPECT_EQ(queue.queued_lines(), 4u);
  size_t first = *lanes.begin();
  ASSERT_TRUE(queue.TakeDue(first, t0, true).has_value());
  EXPECT_TRUE(queue.AddLine(Line("alloc-4", 0), t0));
}

TaskLaunchSettings Settings() {
  TaskLaunchSettings settings;
  settings.master_url = "http://master:8080";
  settings.agent_id = "agent-1";
  settings.resource_pool = "default";
  settings.work_root = "/work";
  settings.devices = {{0, "Artificial", "", "cpu"}, {1, "Artificial", "", "cpu"}};
  settings.base_env = {"PATH=/bin", "DET_TASK_ID=stale", "KEEP=1"};
  return settings;
}

events::AllocationAssigned Order() {
  events::AllocationAssigned order;
  order.set_task_id("task-1");
  order.set_allocation_id("task-1.alloc/0");
  order.set_agent_id("agent-1");
  order.set_resource_pool("gpus");
  order.add_slot_ids(0);
  order.add_slot_ids(1);
  order.mutable_spec()->set_task_type(events::TASK_TYPE_TRIAL);
  order.mutable_spec()->add_entrypoint("python3");
  order.mutable_spec()->add_entrypoint("train.py");
  order.mutable_spec()->add_environment_variables("KEEP=2");
  order.mutable_spec()->add_environment_variables("EXTRA=a=b");
  return order;
}

std::map<std::string, std::string> EnvMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> values;
  for (const auto& entry : env) {
    size_t equals = entry.find('=');
    EXPECT_EQ(values.count(entry.substr(0, equals)), 0u) << "duplicate " << entry;
    values[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  return values;
}

TEST(TaskPlanTest, BuildsTheProtocolEnvironment) {
  Result<ProcessSpec> plan = PlanTask(Order(), Settings());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(plan->work_dir, "/work/task-1.alloc_0");
  auto env = EnvMap(plan->env);
  for (const std::string prefix : {"DET_", "CAIRN_"}) {
    EXPECT_EQ(env[prefix + "MASTER"], "http://master:8080");
    EXPECT_EQ(env[prefix + "TASK_ID"], "task-1");
    EXPECT_EQ(env[prefix + "ALLOCATION_ID"], "task-1.alloc/0");
    EXPECT_EQ(env[prefix + "AGENT_ID"], "agent-1");
    EXPECT_EQ(env[prefix + "TASK_TYPE"], "TRIAL");
    EXPECT_EQ(env[prefix + "SLOT_IDS"], "[0,1]");
    EXPECT_EQ(env[prefix + "RESOURCE_POOL"], "gpus");
  }
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["KEEP"], "2");  // the spec's variables come last and win
  EXPECT_EQ(env["EXTRA"], "a=b");
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);  // CPU slots
}

TEST(TaskPlanTest, GivesTheTaskItsAllocationsOwnTokenWhichItCannotReplace) {
  TaskLaunchSettings settings = Settings();
  settings.agent_token = "cairn-agent-secret-0123456789";
  events::AllocationAssigned order = Order();
  order.mutable_spec()->add_environment_variables("CAIRN_ALLOCATION_TOKEN=forged");
  Result<ProcessSpec> plan = PlanTask(order, settings);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto env = EnvMap(plan->env);
  const std::string token = env["CAIRN_ALLOCATION_TOKEN"];
  EXPECT_EQ(token, AllocationToken(settings.agent_token, "task-1.alloc/0"));
  EXPECT_EQ(token.rfind("cairn-alloc-", 0), 0u) << token;
  EXPECT_EQ(token.size(), std::string("cairn-alloc-").size() + 64);
  // Another allocation, or the same one under another agent token, has another token; the agent
  // token itself is not in the task's environment.
  EXPECT_NE(token, AllocationToken(settings.agent_token, "task-1.alloc/1"));
  EXPECT_NE(token, AllocationToken("another-agent-token-0123456", "task-1.alloc/0"));
  for (const auto& [name, value] : env) {
    EXPECT_EQ(value.find(settings.agent_token), std::string::npos) << name;
  }
  // Without an agent token (a test agent), there is nothing to derive.
  settings.agent_token.clear();
  EXPECT_EQ(EnvMap(PlanTask(Order(), settings)->env).count("CAIRN_ALLOCATION_TOKEN"), 0u);
}

TEST(TaskPlanTest, HandsTheMastersCaFileToTheTask) {
  TaskLaunchSettings settings = Settings();
  EXPECT_EQ(EnvMap(PlanTask(Order(), settings)->env).count("CAIRN_MASTER_CERT_FILE"), 0u);
  settings.master_cert_file = "/etc/cairn/ca.crt";
  auto env = EnvMap(PlanTask(Order(), settings)->env);
  EXPECT_EQ(env["CAIRN_MASTER_CERT_FILE"], "/etc/cairn/ca.crt");
  EXPECT_EQ(env["DET_MASTER_CERT_FILE"], "/etc/cairn/ca.crt");
}

TEST(TaskPlanTest, SetsCudaVisibleDevicesForGpuSlots) {
  TaskLaunchSettings settings = Settings();
  settings.devices = {
      {0, "A100", "GPU-aaa", "cuda"}, {1, "A100", "GPU-bbb", "cuda"}, {2, "A100", "", "cuda"}};
  events::AllocationAssigned order = Order();
  order.clear_slot_ids();
  order.add_slot_ids(2);
  order.add_slot_ids(1);
  order.mutable_spec()->set_work_dir("/data/run");
  Result<ProcessSpec> plan = PlanTask(order, settings);
  ASSERT_TRUE(plan.ok());
  auto env = EnvMap(plan->env);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2,GPU-bbb");
  EXPECT_EQ(env["DET_SLOT_IDS"], "[2,1]");
  EXPECT_EQ(plan->work_dir, "/data/run");
}

// Prepared environments: the slot type picks the experiment's variants, the cache and the
// cluster's package index come from the agent's flags (nothing when they are not given).
TEST(TaskPlanTest, TellsTheTaskItsSlotTypeTheEnvironmentCacheAndThePackageIndex) {
  TaskLaunchSettings settings = Settings();
  settings.base_env.push_back("PIP_INDEX_URL=https://from-the-agents-own-environment");
  auto plain = EnvMap(PlanTask(Order(), settings)->env);
  EXPECT_EQ(plain["CAIRN_SLOT_TYPE"], "cpu");
  EXPECT_EQ(plain.count("CAIRN_ENV_CACHE"), 0u);
  EXPECT_EQ(plain["PIP_INDEX_URL"], "https://from-the-agents-own-environment");
  EXPECT_EQ(plain.count("PIP_FIND_LINKS") + plain.count("PIP_NO_INDEX"), 0u);

  settings.environments = {"/var/cache/cairn-env", "https://pypi.internal/simple",
                           "/srv/wheels /srv/more-wheels", true};
  settings.devices = {{0, "A100", "GPU-aaa", "cuda"}, {1, "A100", "GPU-bbb", "cuda"}};
  auto env = EnvMap(PlanTask(Order(), settings)->env);
  EXPECT_EQ(env["CAIRN_SLOT_TYPE"], "cuda");
  EXPECT_EQ(env["CAIRN_ENV_CACHE"], "/var/cache/cairn-env");
  EXPECT_EQ(env["PIP_INDEX_URL"], "https://pypi.internal/simple");
  EXPECT_EQ(env["PIP_FIND_LINKS"], "/srv/wheels /srv/more-wheels");
  EXPECT_EQ(env["PIP_NO_INDEX"], "1");
}

TEST(TaskPlanTest, RejectsBadOrders) {
  events::AllocationAssigned unknown_slot = Order();
  unknown_slot.add_slot_ids(7);
  EXPECT_EQ(PlanTask(unknown_slot, Settings()).status().code(), StatusCode::kInvalidArgument);
  events::AllocationAssigned no_entrypoint = Order();
  no_entrypoint.mutable_spec()->clear_entrypoint();
  EXPECT_EQ(PlanTask(no_entrypoint, Settings()).status().code(), StatusCode::kInvalidArgument);
  events::AllocationAssigned bad_env = Order();
  bad_env.mutable_spec()->add_environment_variables("=VALUE");
  EXPECT_EQ(PlanTask(bad_env, Settings()).status().code(), StatusCode::kInvalidArgument);
}

// Determined's entry without '=' (Docker unsets the variable): the agent's own value and an
// earlier one of the spec's are gone, a later one sets it again.
TEST(TaskPlanTest, AVariableWithoutAValueIsUnset) {
  events::AllocationAssigned order = Order();
  order.mutable_spec()->add_environment_variables("PATH");
  order.mutable_spec()->add_environment_variables("KEEP");
  order.mutable_spec()->add_environment_variables("EXTRA");
  order.mutable_spec()->add_environment_variables("EXTRA=again");
  Result<ProcessSpec> plan = PlanTask(order, Settings());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto env = EnvMap(plan->env);
  EXPECT_EQ(env.count("PATH"), 0u);
  EXPECT_EQ(env.count("KEEP"), 0u);
  EXPECT_EQ(env["EXTRA"], "again");
  EXPECT_EQ(env["DET_TASK_ID"], "task-1") << "the rest stays";
}

TEST(TaskPlanTest, TheStartupHookWrapperSourcesItThenExecsTheTask) {
  auto argv = WithStartupHook({"echo", "a b"});
  ASSERT_EQ(argv.size(), 6u);
  EXPECT_EQ(argv[0], "/bin/sh");
  EXPECT_NE(argv[2].find(". ./startup-hook.sh"), std::string::npos);
  EXPECT_EQ(argv[4], "echo");
  EXPECT_EQ(argv[5], "a b");
}

TEST(TaskPlanTest, AGangPartRunsOnItsOwnSlotsWithItsRank) {
  events::AllocationAssigned order = Order();
  order.set_agent_id("agent-0");
  for (const auto& [agent, slot] : {std::pair{"agent-0", 0}, std::pair{"agent-1", 1}}) {
    auto* part = order.add_parts();
    part->set_agent_id(agent);
    part->add_slot_ids(slot);
  }
  TaskLaunchSettings settings = Settings();
  settings.harness_dir = "/opt/cairn/lib/python";
  settings.base_env.push_back("PYTHONPATH=/mine");
  Result<ProcessSpec> plan = PlanTask(order, settings);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto env = EnvMap(plan->env);
  EXPECT_EQ(env["CAIRN_SLOT_IDS"], "[1]");  // agent-1's part, not the first part's slots
  EXPECT_EQ(env["CAIRN_NUM_AGENTS"], "2");
  EXPECT_EQ(env["CAIRN_AGENT_RANK"], "1");
  EXPECT_EQ(env["PYTHONPATH"], "/opt/cairn/lib/python:/mine");  // a trial finds the harness

  settings.agent_id = "agent-9";
  EXPECT_EQ(PlanTask(order, settings).status().code(), StatusCode::kNotFound);
}

TEST(TaskPlanTest, DefaultWorkDirIsOneSafeName) {
  EXPECT_EQ(DefaultWorkDir("/w", "a/../b"), "/w/a_.._b");
  EXPECT_EQ(DefaultWorkDir("/w", ".."), "/w/_..");
  EXPECT_EQ(DefaultWorkDir("/w", ""), "/w/_");
  EXPECT_EQ(TaskTypeName(events::TASK_TYPE_COMMAND), "COMMAND");
  EXPECT_EQ(TaskTypeName(events::TASK_TYPE_UNSPECIFIED), "UNSPECIFIED");
}

}  // namespace
}  // namespace cairn::agent
