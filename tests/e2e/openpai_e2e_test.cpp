// OpenPAI jobs on a real master and agent, through OpenPAI's own REST API: the two-role example
// (examples/openpai-ps-workers) runs to SUCCEEDED, and every PAI_* variable its tasks saw agrees
// with the seed's definition and with the job's status (addresses, ports, host lists, output
// directory); a failing job is retried retryCount times; STOP ends a running job; refusals come in
// OpenPAI's {code, message} shape; the projections rebuilt from the log equal the live ones.
#include <filesystem>
#include <fstream>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

class OpenPaiEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    // A process agent: OpenPAI jobs always name an image, which it runs on the host.
    cluster_.StartAgent("agent-1", 4, {"--allow-images-on-host"});
    // The code on the cluster's default file system, as OpenPAI keeps it on HDFS.
    const std::filesystem::path code = cluster_.data_dir() + "/pai-fs/code/ps-workers";
    std::filesystem::create_directories(code);
    std::filesystem::copy_file(ExamplePath("openpai-ps-workers") + "/ps_workers.py",
                               code / "ps_workers.py");
    Reply token =
        Request("POST", "/api/v1/token", "", json{{"username", "determined"}, {"password", ""}});
    EXPECT_EQ(token.status, 200) << token.body.dump();
    EXPECT_EQ(token.body.value("user", ""), "determined");
    token_ = token.body.value("token", "");
  }

  Reply Request(const std::string& method, const std::string& target, const std::string& token,
                const json& body = nullptr) {
    const std::string url = cluster_.url();
    net::Client client("127.0.0.1",
                       static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1))));
    std::map<std::string, std::string> headers{{"Content-Type", "application/json"}};
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    // Reads see the events the test has read from the log (Cluster::Client does the same).
    if (std::string seen = cluster_.SeenOffset(); !seen.empty()) {
      headers["Cairn-Min-Offset"] = seen;
    }
    auto response = client.Request(method, target, body.is_null() ? "" : body.dump(), headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return {};
    return {response->status, json::parse(response->body, nullptr, false)};
  }

  Reply Submit(const json& job) {
    return Request("POST", "/api/v1/user/determined/jobs", token_, job);
  }

  // Waits for the job's last attempt to end (no retry after it); returns that event.
  json WaitForEnd(const std::string& job_name) {
    return cluster_.WaitForEvent([&](const json& event) {
      if (!event.contains("paiJobAttemptEnded") ||
          event["paiJobAttemptEnded"].value("retrying", false))
        return false;
      return JobId(job_name) == event["paiJobAttemptEnded"].value("jobId", "");
    });
  }

  std::string JobId(const std::string& job_name) {
    for (const auto& event : cluster_.AllEvents()) {
      if (event.contains("paiJobSubmitted") &&
          event["paiJobSubmitted"].value("jobName", "") == job_name) {
        return event["paiJobSubmitted"].value("jobId", "");
      }
    }
    return "";
  }

  json Status(const std::string& job_name) {
    Reply status = Request("GET", "/api/v1/user/determined/jobs/" + job_name, token_);
    EXPECT_EQ(status.status, 200) << status.body.dump();
    return status.body;
  }

  json ExampleJob() {
    std::ifstream in(ExamplePath("openpai-ps-workers") + "/job.json");
    return json::parse(in);
  }

  Cluster cluster_;
  std::string token_;
};

TEST_F(OpenPaiEndToEnd, TheTwoRoleExampleSucceedsAndItsTasksSawTheSeedsVariables) {
  Reply submitted = Submit(ExampleJob());
  ASSERT_EQ(submitted.status, 202) << submitted.body.dump();
  EXPECT_EQ(submitted.body.value("message", ""), "update job ps-workers successfully");
  json ended = WaitForEnd("ps-workers");
  EXPECT_EQ(ended["paiJobAttemptEnded"].value("state", ""), "SUCCEEDED") << ended.dump();

  json status = Status("ps-workers");
  EXPECT_EQ(status["jobStatus"]["state"], "SUCCEEDED");
  EXPECT_EQ(status["jobStatus"]["retries"], 0);
  EXPECT_EQ(status["jobStatus"]["username"], "determined");
  EXPECT_EQ(status["jobStatus"]["virtualCluster"], "default");
  ASSERT_EQ(status["taskRoles"]["worker"]["taskStatuses"].size(), 2u);
  ASSERT_EQ(status["taskRoles"]["ps_server"]["taskStatuses"].size(), 1u);

  // What each task wrote to $PAI_OUTPUT_DIR, against the job's status.
  const std::string output = cluster_.data_dir() + "/pai-fs/Output/ps-workers";
  auto host_list = [&](const std::string& role) {
    std::string list;
    for (const auto& task : status["taskRoles"][role]["taskStatuses"]) {
      list += (list.empty() ? "" : ",") + task.value("containerIp", "") + ":" +
              task["containerPorts"].value("http", "");
    }
    return list;
  };
  const std::string code_dir = "file://" + cluster_.data_dir() + "/pai-fs/code/ps-workers";
  for (const auto& [role, count] : {std::pair{"ps_server", 1}, std::pair{"worker", 2}}) {
    for (int index = 0; index < count; ++index) {
      const json& task = status["taskRoles"][role]["taskStatuses"][index];
      EXPECT_EQ(task["taskIndex"], index);
      EXPECT_EQ(task["taskState"], "SUCCEEDED");
      std::ifstream in(output + "/" + role + "-" + std::to_string(index) + ".json");
      ASSERT_TRUE(in.good()) << role << "-" << index << " wrote no output";
      json seen = json::parse(in);
      EXPECT_EQ(seen["sum"], json({3.0, 6.0, 9.0, 12.0})) << "1·v + 2·v for v = (1, 2, 3, 4)";
      const json& env = seen["env"];
      const std::string port = task["containerPorts"].value("http", "");
      const std::map<std::string, std::string> expected = {
          {"PAI_WORK_DIR", seen.value("cwd", "?")},
          {"PAI_DEFAULT_FS_URI", "file://" + cluster_.data_dir() + "/pai-fs"},
          {"PAI_JOB_NAME", "ps-workers"},
          {"PAI_JOB_VC_NAME", "default"},
          {"PAI_USER_NAME", "determined"},
          {"PAI_DATA_DIR", ""},
          {"PAI_OUTPUT_DIR", "file://" + output},
          {"PAI_CODE_DIR", code_dir},
          {"PAI_CURRENT_TASK_ROLE_NAME", role},
          {"PAI_CURRENT_TASK_ROLE_TASK_COUNT", std::to_string(count)},
          {"PAI_CURRENT_TASK_ROLE_CPU_COUNT", "1"},
          {"PAI_CURRENT_TASK_ROLE_MEM_MB", "256"},
          {"PAI_CURRENT_TASK_ROLE_GPU_COUNT", role == std::string("worker") ? "1" : "0"},
          {"PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX", std::to_string(index)},
          {"PAI_JOB_TASK_COUNT", "3"},
          {"PAI_JOB_TASK_ROLE_COUNT", "2"},
          {"PAI_JOB_TASK_ROLE_LIST", "ps_server,worker"},
          {"PAI_KILL_ALL_ON_COMPLETED_TASK_NUM", "0"},
          {"PAI_CONTAINER_HOST_IP", task.value("containerIp", "?")},
          {"PAI_CONTAINER_HOST_PORT_LIST", "http:" + port},
          {"PAI_CONTAINER_HOST_http_PORT_LIST", port},
          {"PAI_TASK_ROLE_ps_server_HOST_LIST", host_list("ps_server")},
          {"PAI_TASK_ROLE_worker_HOST_LIST", host_list("worker")},
      };
      EXPECT_EQ(env.size(), expected.size()) << env.dump(2);
      for (const auto& [name, value] : expected) {
        EXPECT_EQ(env.value(name, "<unset>"), value) << role << "-" << index << " " << name;
      }
    }
  }
  EXPECT_NE(status["taskRoles"]["worker"]["taskStatuses"][0]["containerPorts"]["http"],
            status["taskRoles"]["worker"]["taskStatuses"][1]["containerPorts"]["http"])
      << "two tasks on one agent never share a port";

  // The job in the lists, the submitted config back, and the same under /pai.
  Reply list = Request("GET", "/api/v1/jobs", token_);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body.size(), 1u);
  EXPECT_EQ(list.body[0]["name"], "ps-workers");
  EXPECT_EQ(list.body[0]["totalTaskNumber"], 3);
  Reply config = Request("GET", "/pai/api/v1/user/determined/jobs/ps-workers/config", token_);
  ASSERT_EQ(config.status, 200);
  EXPECT_EQ(config.body, ExampleJob());
  cluster_.ExpectRebuiltProjectionsEqualLive();
}

TEST_F(OpenPaiEndToEnd, AFailingJobIsRetriedAndAStoppedOneEnds) {
  json failing = {{"jobName", "fails"},
                  {"image", "cairn/python3"},
                  {"retryCount", 1},
                  {"taskRoles",
                   {{{"name", "main"},
                     {"taskNumber", 1},
                     {"cpuNumber", 1},
                     {"memoryMB", 100},
                     {"gpuNumber", 1},
                     {"command", "echo attempt; exit 3"}}}}};
  ASSERT_EQ(Submit(failing).status, 202);
  json ended = WaitForEnd("fails");
  EXPECT_EQ(ended["paiJobAttemptEnded"]["state"], "FAILED");
  EXPECT_EQ(ended["paiJobAttemptEnded"]["attempt"], 1);
  json status = Status("fails");
  EXPECT_EQ(status["jobStatus"]["state"], "FAILED");
  EXPECT_EQ(status["jobStatus"]["retries"], 1);
  EXPECT_EQ(status["jobStatus"]["appExitCode"], 3);
  EXPECT_EQ(status["jobStatus"]["appExitTriggerTaskRoleName"], "main");

  json running = failing;
  running["jobName"] = "runs";
  running["taskRoles"][0]["command"] = "exec sleep 600";
  ASSERT_EQ(Submit(running).status, 202);
  const std::string task = JobId("runs") + ".0.main.0";
  cluster_.WaitForEvent([&](const json& event) {
    return event.contains("taskStarted") && event["taskStarted"]["taskId"] == task;
  });
  // It is in Determined's job queue under its name.
  Reply queue = Request("GET", "/api/v1/job-queues-v2", token_);
  EXPECT_NE(queue.body.dump().find("\"runs\""), std::string::npos) << queue.body.dump();
  Reply stop = Request("PUT", "/api/v1/user/determined/jobs/runs/executionType", token_,
                       json{{"value", "STOP"}});
  EXPECT_EQ(stop.status, 202) << stop.body.dump();
  json stop_ended = WaitForEnd("runs");
  EXPECT_EQ(stop_ended["paiJobAttemptEnded"]["state"], "STOPPED");
  json stopped = Status("runs");
  EXPECT_EQ(stopped["jobStatus"]["state"], "STOPPED");
  EXPECT_EQ(stopped["jobStatus"]["executionType"], "STOP");
  EXPECT_EQ(stopped["jobStatus"]["retries"], 0) << "a stop is not retried";
}

TEST_F(OpenPaiEndToEnd, RefusalsComeInOpenPaisShape) {
  json job = ExampleJob();
  ASSERT_EQ(Submit(job).status, 202);
  struct Case {
    Reply reply;
    int status;
    const char* code;
    const char* says;
  };
  json bad_vc = job;
  bad_vc["jobName"] = "elsewhere";
  bad_vc["virtualCluster"] = "nowhere";
  json bad_field = job;
  bad_field["jobName"] = "bad";
  bad_field["taskRoles"][1]["memoryMB"] = 50;
  const std::vector<Case> cases = {
      {Submit(job), 409, "ConflictJobError", "ps-workers already exists"},
      {Submit(bad_vc), 400, "NoVirtualClusterError", "virtual cluster nowhere"},
      {Submit(bad_field), 400, "InvalidParametersError",
       "taskRoles[1].memoryMB must be at least 100"},
      {Request("POST", "/api/v1/user/determined/jobs", "", job), 401, "UnauthorizedUserError", ""},
      {Request("POST", "/api/v1/user/admin/jobs", token_, job), 403, "ForbiddenUserError",
       "as determined only"},
      {Request("GET", "/api/v1/user/determined/jobs/none", token_), 404, "NoJobError", "none"},
      {Request("GET", "/pai/api/v1/user/determined/jobs/none", token_), 404, "NoJobError", "none"},
      {Request("GET", "/api/v1/user/determined/jobs/ps-workers/ssh", token_), 404,
       "NoJobSshInfoError", "no sshd"},
      {Request("POST", "/api/v1/token", "", json{{"username", "determined"}, {"password", "x"}}),
       400, "IncorrectPassworkError", "invalid credentials"},
      {Request("GET", "/api/v1/virtual-clusters/nowhere", token_), 404, "NoVirtualClusterError",
       "nowhere"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.reply.status, c.status) << c.reply.body.dump();
    EXPECT_EQ(c.reply.body.value("code", ""), c.code) << c.reply.body.dump();
    EXPECT_NE(c.reply.body.value("message", "").find(c.says), std::string::npos)
        << c.reply.body.dump();
  }
  Reply clusters = Request("GET", "/api/v1/virtual-clusters", token_);
  ASSERT_EQ(clusters.status, 200);
  EXPECT_EQ(clusters.body["default"]["resourcesTotal"]["GPUs"], 4);
}

}  // namespace
}  // namespace cairn::testing
