// Tasks that name an image, end to end: a process agent refuses them unless started with
// --allow-images-on-host, and a container agent (runc) runs them in the image, with their bind
// mounts, and kills the whole container.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

bool IsExitOf(const json& event, const std::string& task_id) {
  return event.contains("taskExited") && event["taskExited"].value("taskId", "") == task_id;
}

TEST(ContainerEndToEnd, AProcessAgentRefusesAnImageUnlessAllowedToRunItOnTheHost) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const json config = {{"entrypoint", "echo on-the-host"},
                       {"environment", {{"image", "team/trainer:1"}}}};
  std::string refused = cluster.Submit(config);
  json exited = cluster.WaitForEvent([&](const json& e) { return IsExitOf(e, refused); });
  EXPECT_EQ(exited["taskExited"]["exitCode"], 127);
  const std::string reason = exited["taskExited"]["reason"];
  EXPECT_NE(reason.find("image team/trainer:1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("--allow-images-on-host"), std::string::npos) << reason;

  Cluster allowing;
  allowing.StartMaster();
  allowing.StartAgent("agent-2", 1, {"--allow-images-on-host"});
  std::string ran = allowing.Submit(config);
  const std::string logs = allowing.FollowLogs(ran);
  EXPECT_EQ(logs.find("cairn-agent: WARNING: the task names image team/trainer:1"), 0u) << logs;
  EXPECT_NE(logs.find("on-the-host\n"), std::string::npos) << logs;
}

TEST(ContainerEndToEnd, AContainerAgentRunsTheImageWithItsMountsAndKillsItWhole) {
  if (geteuid() != 0) GTEST_SKIP() << "runc, overlay mounts and cgroups need root";
  Cluster cluster;
  const std::string images = cluster.dir().Sub("images");
  std::filesystem::create_directories(images);
  Status built = BuildBusyboxImage(images + "/busybox.tar", images);
  ASSERT_TRUE(built.ok()) << built.ToString();
  const std::string data = cluster.dir().Sub("data");
  std::filesystem::create_directories(data);
  std::ofstream(data + "/input.txt") << "from-the-host\n";

  cluster.StartMaster();
  cluster.StartAgent("agent-c", 1, {"--runtime", "container", "--image-dir", images});
  std::string task = cluster.Submit(
      {{"entrypoint",
        "cat /marker /data/input.txt; echo $IMAGE_VARIABLE; "
        "{ echo no > /data/written; } 2>/dev/null || echo read-only"},
       {"environment", {{"image", {{"cpu", "busybox"}, {"cuda", "no-such-gpu-image"}}}}},
       {"bind_mounts", {{{"host_path", data}, {"container_path", "/data"}, {"read_only", true}}}}});
  const std::string logs = cluster.FollowLogs(task);
  EXPECT_NE(logs.find("cairn-agent: running in image busybox from " + images + "/busybox.tar"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("image-marker\nfrom-the-host\nfrom-image\nread-only\n"), std::string::npos)
      << logs;
  EXPECT_FALSE(std::filesystem::exists(data + "/written"));
  json finished = cluster.Get("/api/v1/tasks/" + task);
  EXPECT_EQ(finished["task"]["cairn"]["exitCode"], 0) << finished;

  // A kill ends the task and the child it started in a session of its own, which holds a FIFO
  // of the host's open: only its death closes it.
  const std::string shared = cluster.dir().Sub("shared");
  std::filesystem::create_directories(shared);
  ASSERT_EQ(mkfifo((shared + "/held").c_str(), 0600), 0);
  std::string sleeper =
      cluster.Submit({{"entrypoint", "setsid sh -c 'exec 3<>/shared/held; sleep 600' & sleep 600"},
                      {"environment", {{"image", "busybox"}}},
                      {"bind_mounts", {{{"host_path", shared}, {"container_path", "/shared"}}}}});
  // Opening the read end waits for the child to open the write end.
  int reader = open((shared + "/held").c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);
  auto killed = cluster.Client().Request("POST", "/api/v1/commands/" + sleeper + "/kill");
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->status, 200);
  json exited = cluster.WaitForEvent([&](const json& e) { return IsExitOf(e, sleeper); });
  EXPECT_NE(exited["taskExited"].value("reason", ""), "");
  pollfd hangup = {reader, POLLIN, 0};
  ASSERT_EQ(poll(&hangup, 1, 30000), 1);
  char byte;
  EXPECT_EQ(read(reader, &byte, 1), 0) << "a process of the container still holds the FIFO";
  close(reader);
}

// master.yaml's task_container_defaults give a command that names no image the cluster's image,
// variables, mounts and startup hook (a pool's own over them); an experiment shows them merged in
// its config, the registry password masked even for its owner.
TEST(ContainerEndToEnd, TaskContainerDefaultsGiveWorkTheClustersImageMountsAndVariables) {
  if (geteuid() != 0) GTEST_SKIP() << "runc, overlay mounts and cgroups need root";
  TempDir shared;
  std::filesystem::create_directories(shared.Sub("data"));
  std::ofstream(shared.Sub("data") + "/input.txt") << "from-the-defaults\n";
  Cluster cluster(
      "task_container_defaults:\n"
      "  image: busybox\n"
      "  environment_variables: [TEAM=vision, LEVEL=cluster]\n"
      "  bind_mounts:\n"
      "    - {host_path: " +
      shared.Sub("data") +
      ", container_path: /data, read_only: true}\n"
      "  registry_auth: {username: robot, password: cluster-registry-pw}\n"
      "  startup_hook: |\n"
      "    export FROM_HOOK=hooked\n"
      "    echo hook-ran-in-$(pwd | cut -c1)\n"
      "resource_pools:\n"
      "  - pool_name: default\n"
      "    task_container_defaults:\n"
      "      environment_variables: [LEVEL=pool]\n");
  const std::string images = cluster.dir().Sub("images");
  std::filesystem::create_directories(images);
  Status built = BuildBusyboxImage(images + "/busybox.tar", images);
  ASSERT_TRUE(built.ok()) << built.ToString();
  cluster.StartMaster();
  cluster.StartAgent("agent-c", 1, {"--runtime", "container", "--image-dir", images});

  std::string task =
      cluster.Submit({{"entrypoint", "cat /marker /data/input.txt; echo $TEAM $LEVEL $FROM_HOOK"}});
  const std::string logs = cluster.FollowLogs(task);
  // The cluster's startup hook ran first, in the task's shell: what it exported is the task's.
  EXPECT_NE(logs.find("hook-ran-in-/\nimage-marker\nfrom-the-defaults\nvision pool hooked\n"),
            std::string::npos)
      << logs;
  // The password travelled to the agent only: no person's view of the task shows it.
  const json shown = cluster.Get("/api/v1/tasks/" + task);
  EXPECT_EQ(shown.dump().find("cluster-registry-pw"), std::string::npos);

  const std::string context = cluster.dir().Sub("model");
  std::filesystem::create_directories(context);
  std::ofstream(context + "/train.py") << "print('never runs')\n";
  auto created = cluster.CreateExperiment(
      "entrypoint: python3 train.py\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n",
      context, /*activate=*/false);
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const json config = created.body["config"];
  EXPECT_EQ(config["environment"]["image"], "busybox");
  EXPECT_EQ(config["environment"]["registry_auth"]["password"], "********");
  EXPECT_EQ(config["bind_mounts"][0]["container_path"], "/data");
  EXPECT_EQ(created.body.dump().find("cluster-registry-pw"), std::string::npos);
}

}  // namespace
}  // namespace cairn::testing
