// OpenPAI jobs on the write side: the job JSON's validation (every row of the seed's table), the
// PAI_* variables each task sees (computed by hand below from the seed's definitions), gang
// placement, killAllOnCompletedTaskNumber, retryCount and stop.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "command_builders.h"
#include "commands/pai/pai_job.h"

namespace cairn::commands {
namespace {

using nlohmann::json;
using testing::Agent;
using testing::Cluster;

json WorkerRole(int tasks = 2, int gpus = 1) {
  return {{"name", "worker"},
          {"taskNumber", tasks},
          {"cpuNumber", 2},
          {"memoryMB", 200},
          {"gpuNumber", gpus},
          {"portList",
           {{{"label", "http"}, {"beginAt", 0}, {"portNumber", 1}},
            {{"label", "ssh"}, {"beginAt", 0}, {"portNumber", 2}}}},
          {"command", "python3 worker.py"}};
}

json PsRole() {
  return {{"name", "ps"},
          {"taskNumber", 1},
          {"cpuNumber", 1},
          {"memoryMB", 100},
          {"gpuNumber", 0},
          {"portList", {{{"label", "http"}, {"beginAt", 0}, {"portNumber", 1}}}},
          {"command", "python3 ps.py"}};
}

json TwoRoleJob() {
  return {{"jobName", "dist"},
          {"image", "cairn/base"},
          {"dataDir", "$PAI_DEFAULT_FS_URI/data/$PAI_JOB_NAME"},
          {"taskRoles", {PsRole(), WorkerRole()}}};
}

pai::JobContext Context(const std::string& user = "test") { return {user, "file:///fs"}; }

Result<events::PaiJobSubmitted> Parse(const json& job) {
  return pai::ParseJob(job.dump(), Context());
}

// The error a job gets after `change` edits the valid two-role job.
template <typename Change>
std::string ErrorAfter(Change&& change) {
  json job = TwoRoleJob();
  change(job);
  auto parsed = Parse(job);
  if (parsed.ok()) return "(accepted)";
  // Every refusal is InvalidArgument but the unsupported authFile's.
  if (parsed.status().code() != StatusCode::kNotSupported) {
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << parsed.status().message();
  }
  return parsed.status().message();
}

TEST(PaiJobTest, EveryFieldOfTheSeedsTableIsCheckedAndNamed) {
  struct Case {
    const char* expected;
    std::function<void(json&)> change;
  };
  const std::vector<Case> cases = {
      {"jobName is required", [](json& j) { j.erase("jobName"); }},
      {"jobName must match", [](json& j) { j["jobName"] = "a b"; }},
      {"jobName must be a string", [](json& j) { j["jobName"] = 7; }},
      {"image is required", [](json& j) { j.erase("image"); }},
      {"authFile must be a string", [](json& j) { j["authFile"] = 1; }},
      {"authFile is not supported", [](json& j) { j["authFile"] = "hdfs://nn/auth"; }},
      {"virtualCluster must be a string", [](json& j) { j["virtualCluster"] = json::array(); }},
      {"taskRoles is required", [](json& j) { j.erase("taskRoles"); }},
      {"taskRoles must have at least one task role",
       [](json& j) { j["taskRoles"] = json::array(); }},
      {"taskRoles[0].name must match", [](json& j) { j["taskRoles"][0]["name"] = "p-s"; }},
      {"taskRoles[1].name 'ps' is the name of another task role",
       [](json& j) { j["taskRoles"][1]["name"] = "ps"; }},
      {"taskRoles[1].taskNumber must be at least 1",
       [](json& j) { j["taskRoles"][1]["taskNumber"] = 0; }},
      {"taskRoles[1].taskNumber must be an integer",
       [](json& j) { j["taskRoles"][1]["taskNumber"] = "2"; }},
      {"taskRoles[0].cpuNumber must be at least 1",
       [](json& j) { j["taskRoles"][0]["cpuNumber"] = 0; }},
      {"taskRoles[0].memoryMB must be at least 100",
       [](json& j) { j["taskRoles"][0]["memoryMB"] = 99; }},
      {"taskRoles[0].gpuNumber must be at least 0",
       [](json& j) { j["taskRoles"][0]["gpuNumber"] = -1; }},
      {"taskRoles[0].gpuNumber is required", [](json& j) { j["taskRoles"][0].erase("gpuNumber"); }},
      {"taskRoles[0].command must not be empty",
       [](json& j) { j["taskRoles"][0]["command"] = ""; }},
      {"taskRoles[0].command is required", [](json& j) { j["taskRoles"][0].erase("command"); }},
      {"taskRoles[0].portList[0].label must match",
       [](json& j) { j["taskRoles"][0]["portList"][0]["label"] = "a b"; }},
      {"taskRoles[0].portList[0].beginAt must be at least 0",
       [](json& j) { j["taskRoles"][0]["portList"][0]["beginAt"] = -1; }},
      {"taskRoles[0].portList[0].portNumber is required",
       [](json& j) { j["taskRoles"][0]["portList"][0].erase("portNumber"); }},
      {"taskRoles[1].portList[1].label 'http' is used twice",
       [](json& j) { j["taskRoles"][1]["portList"][1]["label"] = "http"; }},
      {"killAllOnCompletedTaskNumber must be at least 0",
       [](json& j) { j["killAllOnCompletedTaskNumber"] = -1; }},
      {"killAllOnCompletedTaskNumber is 4 but the job has only 3 tasks",
       [](json& j) { j["killAllOnCompletedTaskNumber"] = 4; }},
      {"retryCount must be at least 0", [](json& j) { j["retryCount"] = -1; }},
      {"gpuType must be a string", [](json& j) { j["gpuType"] = 3; }},
      {"jobEnvs is not a field of an OpenPAI job", [](json& j) { j["jobEnvs"] = json::object(); }},
  };
  for (const auto& c : cases) {
    const std::string error = ErrorAfter(c.change);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "', got '" << error << "'";
  }
  json with_auth = TwoRoleJob();
  with_auth["authFile"] = "hdfs://nn/auth";
  EXPECT_EQ(Parse(with_auth).status().code(), StatusCode::kNotSupported);
  auto not_json = pai::ParseJob("{\"jobName\": ", Context());
  EXPECT_EQ(not_json.status().code(), StatusCode::kInvalidArgument);
}

TEST(PaiJobTest, PaiReferencesInTheJobsOwnFieldsAreExpanded) {
  auto job = Parse(TwoRoleJob());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->data_dir(), "file:///fs/data/dist");
  EXPECT_EQ(job->output_dir(), "file:///fs/Output/dist");  // the seed's default
  EXPECT_EQ(job->virtual_cluster(), "default");
  EXPECT_EQ(job->username(), "test");
  EXPECT_EQ(pai::ExpandVariables("${A}x$A $B $", {{"A", "1"}}), "1x1 $B $");
}

// A cluster with the default pool and agents at known addresses.
class PaiJobs : public ::testing::Test {
 protected:
  void AddAgent(const std::string& id, int slots, const std::string& address) {
    auto agent = Agent(id, slots);
    agent.registration.set_address(address);
    ASSERT_TRUE(cluster.Run(agent).ok());
  }

  Result<Decision> Submit(json job, const std::string& job_id = "pai-1",
                          const std::string& user = "test") {
    auto parsed = pai::ParseJob(job.dump(), Context(user));
    if (!parsed.ok()) return parsed.status();
    parsed->set_job_id(job_id);
    parsed->set_workspace_id(1);
    return cluster.Run(SubmitPaiJob{*parsed}, "", "user:" + user);
  }

  // The variables of a task's placement, by name.
  std::map<std::string, std::string> Variables(const std::string& task_id) {
    std::map<std::string, std::string> variables;
    for (const auto& event : cluster.all_events) {
      if (!event.has_allocation_assigned() || event.allocation_assigned().task_id() != task_id) {
        continue;
      }
      for (const auto& entry : event.allocation_assigned().spec().environment_variables()) {
        const auto equals = entry.find('=');
        variables[entry.substr(0, equals)] = entry.substr(equals + 1);
      }
    }
    return variables;
  }

  const PaiJobRecord& Job(const std::string& job_id = "pai-1") {
    return cluster.state.pai_jobs.at(job_id);
  }

  Cluster cluster;
};

TEST_F(PaiJobs, EveryPaiVariableIsInTheSeedsFormat) {
  AddAgent("a1", 4, "10.0.0.1");
  json job = TwoRoleJob();
  job["killAllOnCompletedTaskNumber"] = 2;
  ASSERT_TRUE(Submit(job).ok());
  // One pass placed the whole gang: ps (no GPU) and both workers.
  EXPECT_EQ(cluster.Assigned(),
            (std::vector<std::string>{"pai-1.0.ps.0", "pai-1.0.worker.0", "pai-1.0.worker.1"}));
  // Ports from 20000 on the agent, in task order: ps http 20000; worker 0 http 20001, ssh
  // 20002-20003; worker 1 http 20004, ssh 20005-20006.
  auto w1 = Variables("pai-1.0.worker.1");
  const std::map<std::string, std::string> expected = {
      {"PAI_DEFAULT_FS_URI", "file:///fs"},
      {"PAI_JOB_NAME", "dist"},
      {"PAI_JOB_VC_NAME", "default"},
      {"PAI_USER_NAME", "test"},
      {"PAI_DATA_DIR", "file:///fs/data/dist"},
      {"PAI_OUTPUT_DIR", "file:///fs/Output/dist"},
      {"PAI_CODE_DIR", ""},
      {"PAI_CURRENT_TASK_ROLE_NAME", "worker"},
      {"PAI_CURRENT_TASK_ROLE_TASK_COUNT", "2"},
      {"PAI_CURRENT_TASK_ROLE_CPU_COUNT", "2"},
      {"PAI_CURRENT_TASK_ROLE_MEM_MB", "200"},
      {"PAI_CURRENT_TASK_ROLE_GPU_COUNT", "1"},
      {"PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX", "1"},
      {"PAI_JOB_TASK_COUNT", "3"},
      {"PAI_JOB_TASK_ROLE_COUNT", "2"},
      {"PAI_JOB_TASK_ROLE_LIST", "ps,worker"},
      {"PAI_KILL_ALL_ON_COMPLETED_TASK_NUM", "2"},
      {"PAI_CONTAINER_HOST_IP", "10.0.0.1"},
      {"PAI_CONTAINER_HOST_PORT_LIST", "http:20004;ssh:20005,20006"},
      {"PAI_CONTAINER_HOST_http_PORT_LIST", "20004"},
      {"PAI_CONTAINER_HOST_ssh_PORT_LIST", "20005,20006"},
      {"PAI_TASK_ROLE_ps_HOST_LIST", "10.0.0.1:20000"},
      {"PAI_TASK_ROLE_worker_HOST_LIST", "10.0.0.1:20001,10.0.0.1:20004"},
  };
  for (const auto& [name, value] : expected) {
    ASSERT_TRUE(w1.count(name)) << name << " is missing";
    EXPECT_EQ(w1[name], value) << name;
  }
  size_t pai_variables = 0;
  for (const auto& [name, value] : w1) pai_variables += name.rfind("PAI_", 0) == 0;
  EXPECT_EQ(pai_variables, expected.size()) << "a PAI_ variable the seed does not define";
  auto ps = Variables("pai-1.0.ps.0");
  EXPECT_EQ(ps["PAI_CONTAINER_HOST_PORT_LIST"], "http:20000");
  EXPECT_EQ(ps["PAI_CURRENT_TASK_ROLE_GPU_COUNT"], "0");
  EXPECT_EQ(ps["PAI_TASK_ROLE_worker_HOST_LIST"], w1["PAI_TASK_ROLE_worker_HOST_LIST"]);
  // Limits travel with the task for a container agent to enforce.
  const TaskRecord& worker = cluster.Task("pai-1.0.worker.1");
  const events::TaskSpec spec = worker.Spec();
  EXPECT_EQ(spec.cpus(), 2);
  EXPECT_EQ(spec.memory_mb(), 200);
  EXPECT_EQ(spec.image_gpu(), "cairn/base");  // the job's image, for a container agent
  EXPECT_EQ(spec.image_cpu(), "cairn/base");
  EXPECT_EQ(worker.resources.slots(), 1);
}

TEST_F(PaiJobs, HostListsFollowTaskIndexAcrossAgentsAndPortsNeverCollide) {
  AddAgent("a1", 1, "10.0.0.1");
  AddAgent("a2", 1, "10.0.0.2");
  json job = {{"jobName", "w"}, {"image", "i"}, {"taskRoles", {WorkerRole()}}};
  ASSERT_TRUE(Submit(job).ok());
  auto w0 = Variables("pai-1.0.worker.0");
  auto w1 = Variables("pai-1.0.worker.1");
  EXPECT_NE(w0["PAI_CONTAINER_HOST_IP"], w1["PAI_CONTAINER_HOST_IP"]);
  const std::string expected =
      w0["PAI_CONTAINER_HOST_IP"] + ":20000," + w1["PAI_CONTAINER_HOST_IP"] + ":20000";
  EXPECT_EQ(w0["PAI_TASK_ROLE_worker_HOST_LIST"], expected);
  EXPECT_EQ(w1["PAI_TASK_ROLE_worker_HOST_LIST"], expected);

  // A fixed port taken on every agent: the second job's gang waits, whole, and says nothing
  // placed; it runs once the first job's tasks have ended.
  json fixed = {{"jobName", "fixed"}, {"image", "i"}, {"taskRoles", {WorkerRole(1, 0)}}};
  fixed["taskRoles"][0]["portList"] = {{{"label", "http"}, {"beginAt", 20000}, {"portNumber", 1}}};
  fixed["taskRoles"][0]["taskNumber"] = 2;
  ASSERT_TRUE(Submit(fixed, "pai-2").ok());
  EXPECT_TRUE(cluster.Assigned().empty());
  ASSERT_TRUE(cluster.Run(testing::Exit("pai-1.0.worker.0")).ok());
  EXPECT_TRUE(cluster.Assigned().empty()) << "port 20000 is still taken on the other agent";
  ASSERT_TRUE(cluster.Run(testing::Exit("pai-1.0.worker.1")).ok());
  EXPECT_EQ(cluster.Assigned(), (std::vector<std::string>{"pai-2.0.worker.0", "pai-2.0.worker.1"}));
}

TEST_F(PaiJobs, AGangIsPlacedWholeOrNotAtAll) {
  AddAgent("a1", 1, "10.0.0.1");
  AddAgent("a2", 1, "10.0.0.2");
  ASSERT_TRUE(cluster.Run(testing::OneSlotSubmit("busy")).ok());
  ASSERT_EQ(cluster.Assigned(), std::vector<std::string>{"busy"});
  json job = {{"jobName", "w"}, {"image", "i"}, {"taskRoles", {WorkerRole()}}};
  ASSERT_TRUE(Submit(job).ok());
  EXPECT_TRUE(cluster.Assigned().empty()) << "one worker would fit, but not both";
  EXPECT_EQ(cluster.Task("pai-1.0.worker.0").state, TaskState::kQueued);
  ASSERT_TRUE(cluster.Run(testing::Exit("busy")).ok());
  EXPECT_EQ(cluster.Assigned(), (std::vector<std::string>{"pai-1.0.worker.0", "pai-1.0.worker.1"}));
  // A job that could never fit is refused at submission.
  json huge = {{"jobName", "huge"}, {"image", "i"}, {"taskRoles", {WorkerRole(3)}}};
  auto refused = Submit(huge, "pai-2");
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  json wide = {{"jobName", "wide"}, {"image", "i"}, {"taskRoles", {WorkerRole(1, 2)}}};
  EXPECT_EQ(Submit(wide, "pai-3").status().code(), StatusCode::kFailedPrecondition)
      << "a task of 2 GPUs fits on no one-slot agent";
}

TEST_F(PaiJobs, KillAllOnCompletedTaskNumberEndsTheJobWhenEnoughTasksSucceeded) {
  AddAgent("a1", 4, "10.0.0.1");
  json job = {{"jobName", "k"},
              {"image", "i"},
              {"taskRoles", {PsRole(), WorkerRole()}},
              {"killAllOnCompletedTaskNumber", 1}};
  ASSERT_TRUE(Submit(job).ok());
  ASSERT_TRUE(cluster.Run(testing::Exit("pai-1.0.worker.0", 0)).ok());
  auto kills = cluster.Last(events::Envelope::kKillRequested);
  ASSERT_EQ(kills.size(), 2u);  // the ps and the other worker
  EXPECT_NE(kills[0].kill_requested().reason().find("killAllOnCompletedTaskNumber"),
            std::string::npos);
  EXPECT_TRUE(Job().final_state.empty()) << "not until every task has ended";
  ReportTaskExited killed{"", "pai-1.0.ps.0", "", std::nullopt, 9, ""};
  ASSERT_TRUE(cluster.Run(killed).ok());
  killed.task_id = "pai-1.0.worker.1";
  killed.allocation_id.clear();
  ASSERT_TRUE(cluster.Run(killed).ok());
  auto ended = cluster.Last(events::Envelope::kPaiJobAttemptEnded);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].pai_job_attempt_ended().state(), "SUCCEEDED");
  EXPECT_FALSE(ended[0].pai_job_attempt_ended().retrying());
  EXPECT_EQ(ended[0].pai_job_attempt_ended().trigger_task_role(), "worker");
  EXPECT_EQ(Job().final_state, "SUCCEEDED");
}

TEST_F(PaiJobs, AFailedTaskFailsTheAttemptAndTheJobIsRetriedRetryCountTimes) {
  AddAgent("a1", 2, "10.0.0.1");
  json job = {{"jobName", "r"}, {"image", "i"}, {"taskRoles", {WorkerRole()}}, {"retryCount", 1}};
  ASSERT_TRUE(Submit(job).ok());
  ASSERT_TRUE(cluster.Run(testing::Exit("pai-1.0.worker.0", 3)).ok());
  auto kills = cluster.Last(events::Envelope::kKillRequested);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].kill_requested().task_id(), "pai-1.0.worker.1");
  ReportTaskExited killed{"", "pai-1.0.worker.1", "", std::nullopt, 15, ""};
  ASSERT_TRUE(cluster.Run(killed).ok());
  auto ended = cluster.Last(events::Envelope::kPaiJobAttemptEnded);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].pai_job_attempt_ended().state(), "FAILED");
  EXPECT_TRUE(ended[0].pai_job_attempt_ended().retrying());
  EXPECT_EQ(ended[0].pai_job_attempt_ended().exit_code(), 3);
  // The next attempt, placed in the same batch on the freed slots.
  EXPECT_EQ(cluster.Assigned(), (std::vector<std::string>{"pai-1.1.worker.0", "pai-1.1.worker.1"}));
  EXPECT_EQ(Job().attempt, 1);
  EXPECT_EQ(Job().retries, 1);
  ASSERT_TRUE(cluster.Run(testing::Exit("pai-1.1.worker.1", 1)).ok());
  killed.task_id = "pai-1.1.worker.0";
  killed.allocation_id.clear();
  ASSERT_TRUE(cluster.Run(killed).ok());
  ended = cluster.Last(events::Envelope::kPaiJobAttemptEnded);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_FALSE(ended[0].pai_job_attempt_ended().retrying()) << "retryCount 1 is used up";
  EXPECT_EQ(Job().final_state, "FAILED");
  EXPECT_EQ(ended[0].pai_job_attempt_ended().trigger_task_index(), 1);
  EXPECT_TRUE(cluster.Last(events::Envelope::kTaskSubmitted).empty());
}

TEST_F(PaiJobs, AStopKillsEveryTaskAndEndsTheJobStoppedWithoutRetry) {
  AddAgent("a1", 1, "10.0.0.1");
  json job = {{"jobName", "s"}, {"image", "i"}, {"taskRoles", {WorkerRole(1)}}, {"retryCount", 3}};
  ASSERT_TRUE(Submit(job).ok());
  json queued = {{"jobName", "q"}, {"image", "i"}, {"taskRoles", {WorkerRole(1)}}};
  ASSERT_TRUE(Submit(queued, "pai-2").ok());
  EXPECT_TRUE(cluster.Assigned().empty());
  // A queued job ends at once.
  ASSERT_TRUE(cluster.Run(StopPaiJob{"pai-2"}).ok());
  EXPECT_EQ(Job("pai-2").final_state, "STOPPED");
  // A running one when its task has gone.
  ASSERT_TRUE(cluster.Run(StopPaiJob{"pai-1"}).ok());
  auto kills = cluster.Last(events::Envelope::kKillRequested);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_TRUE(kills[0].kill_requested().by_user());
  EXPECT_TRUE(cluster.Run(StopPaiJob{"pai-1"})->events.empty()) << "a second stop is a no-op";
  ReportTaskExited killed{"", "pai-1.0.worker.0", "", std::nullopt, 15, ""};
  ASSERT_TRUE(cluster.Run(killed).ok());
  EXPECT_EQ(Job().final_state, "STOPPED");
  EXPECT_EQ(Job().retries, 0);
  EXPECT_EQ(cluster.Run(StopPaiJob{"pai-9"}).status().code(), StatusCode::kNotFound);
}

TEST_F(PaiJobs, NamesAreUniquePerUserAndVirtualClustersArePools) {
  AddAgent("a1", 2, "10.0.0.1");
  json job = {{"jobName", "n"}, {"image", "i"}, {"taskRoles", {WorkerRole(1)}}};
  ASSERT_TRUE(Submit(job).ok());
  EXPECT_EQ(Submit(job, "pai-2").status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Submit(job, "pai-3", "other").ok()) << "another user's job may share the name";
  job["jobName"] = "vc";
  job["virtualCluster"] = "nowhere";
  auto missing = Submit(job, "pai-4");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("virtual cluster nowhere"), std::string::npos);
  job["virtualCluster"] = "default";
  EXPECT_TRUE(Submit(job, "pai-5").ok());
  EXPECT_EQ(Submit(job, "not-pai").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::commands
