// What a container agent decides before it runs a task (agent/container_config.h): image
// references and the OCI runtime configuration runc gets.
#include "agent/container_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "agent/task_plan.h"

namespace cairn::agent {
namespace {

using nlohmann::json;

TEST(ContainerConfigTest, ImageReferencesAreArchivesOrNames) {
  auto archive = ParseImageReference("oci-archive:/images/trainer.tar");
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  EXPECT_EQ(archive->kind, ImageReference::Kind::kOciArchive);
  EXPECT_EQ(archive->path, "/images/trainer.tar");
  EXPECT_EQ(archive->tag, "");

  auto tagged = ParseImageReference("oci-archive:/images/trainer.tar:v2");
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(tagged->path, "/images/trainer.tar");
  EXPECT_EQ(tagged->tag, "v2");

  auto name = ParseImageReference("registry.local:5000/team/trainer:1");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->kind, ImageReference::Kind::kName);
  EXPECT_EQ(name->name, "registry.local:5000/team/trainer:1");

  for (const char* bad :
       {"", "oci-archive:images/a.tar", "oci-archive:/a/../etc/a.tar", "oci-archive:", "/abs/name",
        "-flag", "../up", "a/../b", "two words", "name;rm", "oci-archive:/a.tar:bad;tag"}) {
    EXPECT_EQ(ParseImageReference(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ContainerConfigTest, RegistryOfANameIsDockersReading) {
  EXPECT_EQ(RegistryOf("busybox"), "docker.io");
  EXPECT_EQ(RegistryOf("team/trainer:1"), "docker.io");
  EXPECT_EQ(RegistryOf("registry.local:5000/team/trainer"), "registry.local:5000");
  EXPECT_EQ(RegistryOf("ghcr.io/team/trainer"), "ghcr.io");
  EXPECT_EQ(RegistryOf("localhost/trainer"), "localhost");
}

TEST(ContainerConfigTest, ImageDefaultsComeFromUmocisProcessEnv) {
  auto defaults = ImageDefaultsOf(json::parse(R"({"process": {"env": ["PATH=/bin", "A=1"]}})"));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->env, (std::vector<std::string>{"PATH=/bin", "A=1"}));
  EXPECT_TRUE(ImageDefaultsOf(json::object())->env.empty());
  EXPECT_FALSE(ImageDefaultsOf(json::parse(R"({"process": {"env": "PATH=/bin"}})")).ok());
  EXPECT_FALSE(ImageDefaultsOf(json::parse(R"({"process": {"env": [1]}})")).ok());
}

TEST(ContainerConfigTest, TheOciConfigRunsTheTaskUnderInitWithItsMountsAndOnlyItsDevices) {
  ContainerPlan plan;
  plan.rootfs = "/state/containers/c1/rootfs";
  plan.argv = {"python3", "train.py"};
  plan.env = {"PATH=/bin", "CUDA_VISIBLE_DEVICES=GPU-b"};
  plan.work_dir = "/work/alloc-1";
  plan.init_path = "/.cairn-init";
  plan.hostname = "alloc-1";
  plan.mounts = {{"/work/alloc-1", "/work/alloc-1", false}, {"/srv/data", "/data", true}};
  plan.devices = {{"/dev/nvidia1", 195, 1}};
  plan.cgroups_path = "cairn-a/alloc-1/task";
  json config = OciConfig(plan);

  EXPECT_EQ(config["process"]["args"], json({"/.cairn-init", "-g", "--", "python3", "train.py"}));
  // tini's warnings silenced (they are not the task's output), unless the task asks for them.
  EXPECT_EQ(config["process"]["env"],
            json({"PATH=/bin", "CUDA_VISIBLE_DEVICES=GPU-b", "TINI_VERBOSITY=0"}));
  plan.env.push_back("TINI_VERBOSITY=2");
  EXPECT_EQ(OciConfig(plan)["process"]["env"], json(plan.env));
  EXPECT_EQ(config["process"]["cwd"], "/work/alloc-1");
  EXPECT_EQ(config["process"]["terminal"], false);
  EXPECT_EQ(config["root"]["path"], plan.rootfs);
  EXPECT_EQ(config["linux"]["cgroupsPath"], "cairn-a/alloc-1/task");

  // No network namespace: the host's network, so the master and services stay where they are.
  std::vector<std::string> namespaces;
  for (const auto& ns : config["linux"]["namespaces"]) namespaces.push_back(ns["type"]);
  std::sort(namespaces.begin(), namespaces.end());
  EXPECT_EQ(namespaces, (std::vector<std::string>{"ipc", "mount", "pid", "uts"}));

  // The plan's mounts come after the system's, in order, read-only where asked.
  const json& mounts = config["mounts"];
  ASSERT_GE(mounts.size(), 2u);
  const json& data = mounts[mounts.size() - 1];
  EXPECT_EQ(data["destination"], "/data");
  EXPECT_EQ(data["source"], "/srv/data");
  EXPECT_EQ(data["type"], "bind");
  EXPECT_NE(std::find(data["options"].begin(), data["options"].end(), "ro"), data["options"].end());
  const json& work = mounts[mounts.size() - 2];
  EXPECT_EQ(work["destination"], "/work/alloc-1");
  EXPECT_NE(std::find(work["options"].begin(), work["options"].end(), "rw"), work["options"].end());

  // Every device refused first, then its GPU allowed: nothing else.
  const json& rules = config["linux"]["resources"]["devices"];
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]["allow"], false);
  EXPECT_EQ(rules[0]["access"], "rwm");
  EXPECT_FALSE(rules[0].contains("major"));
  EXPECT_EQ(rules[1]["allow"], true);
  EXPECT_EQ(rules[1]["major"], 195);
  EXPECT_EQ(rules[1]["minor"], 1);
  ASSERT_EQ(config["linux"]["devices"].size(), 1u);
  EXPECT_EQ(config["linux"]["devices"][0]["path"], "/dev/nvidia1");
}

TEST(ContainerConfigTest, TheImageVariantFollowsTheSlotsType) {
  events::TaskSpec spec;
  spec.set_image_cpu("cpu-image");
  spec.set_image_gpu("gpu-image");
  EXPECT_EQ(ImageFor(spec, ArtificialCpuSlots(2)), "cpu-image");
  EXPECT_EQ(ImageFor(spec, ArtificialGpuSlots(1)), "gpu-image");
  EXPECT_EQ(ImageFor(events::TaskSpec(), ArtificialGpuSlots(1)), "");

  events::AllocationPart part;
  part.add_slot_ids(2);
  part.add_slot_ids(0);
  auto slots = SlotsOf(part, ArtificialGpuSlots(3));
  ASSERT_TRUE(slots.ok());
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[0].uuid, "GPU-artificial-2");
  EXPECT_EQ((*slots)[1].uuid, "GPU-artificial-0");
  part.add_slot_ids(7);
  EXPECT_EQ(SlotsOf(part, ArtificialGpuSlots(3)).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::agent
