// A command's configuration (commands/tasks/command_config.h) as `det cmd run` sends it.
#include "commands/tasks/command_config.h"

#include <gtest/gtest.h>

namespace cairn::commands {
namespace {

// Found by fuzzing (tests/fuzz/corpus/command_config/regression-description-cut-in-character.json):
// the default description cut a long entrypoint at byte 57, inside a character, and the
// configuration then could not be stored (its JSON dump threw: a 500 for a valid command).
TEST(CommandConfigTest, ALongEntrypointIsDescribedWithWholeCharacters) {
  std::string argument = "\xC3\xA9t\xC3\xA9";
  for (int i = 0; i < 20; ++i) argument += "\xE2\x82\xAC";  // 3 bytes each
  auto config = ParseCommandConfig({{"entrypoint", nlohmann::json::array({argument})}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const std::string& description = config->spec.description();
  EXPECT_EQ(description, "Command (" + argument.substr(0, 56) + "...)");
  EXPECT_NO_THROW((void)config->effective.dump());
  events::TaskSpec read_back;
  EXPECT_TRUE(read_back.ParseFromString(config->spec.SerializeAsString()));
}

TEST(CommandConfigTest, ReadsEntrypointResourcesAndEnvironment) {
  auto config = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "echo hi", "resources": {"slots": 2, "priority": 5},
          "environment": {"environment_variables": ["A=1"]}, "work_dir": "/tmp"})"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->spec.entrypoint_size(), 3);  // /bin/sh -c "echo hi"
  EXPECT_EQ(config->spec.description(), "Command (echo hi)");
  EXPECT_EQ(config->resources.slots(), 2);
  EXPECT_EQ(config->resources.priority(), 5);
  EXPECT_EQ(config->spec.work_dir(), "/tmp");
  EXPECT_FALSE(ParseCommandConfig({{"entrypoint", nlohmann::json::array()}}).ok());
}

TEST(CommandConfigTest, NotebooksShellsAndTensorboardsNeedNoEntrypoint) {
  auto notebook = ParseTaskConfig(nlohmann::json::parse(R"({"idle_timeout": "10m"})"),
                                  events::TASK_TYPE_NOTEBOOK);
  ASSERT_TRUE(notebook.ok()) << notebook.status().ToString();
  EXPECT_EQ(notebook->spec.task_type(), events::TASK_TYPE_NOTEBOOK);
  EXPECT_EQ(notebook->spec.entrypoint_size(), 0);
  EXPECT_EQ(notebook->spec.idle_timeout_seconds(), 600);
  EXPECT_EQ(notebook->spec.description(), "Notebook");
  EXPECT_EQ(notebook->resources.slots(), 1);  // Determined's default
  EXPECT_EQ(notebook->effective["idle_timeout"], "10m");

  auto tensorboard = ParseTaskConfig(
      nlohmann::json::parse(R"({"tensorboard_args": ["--samples_per_plugin", "scalars=100"]})"),
      events::TASK_TYPE_TENSORBOARD);
  ASSERT_TRUE(tensorboard.ok()) << tensorboard.status().ToString();
  EXPECT_EQ(tensorboard->resources.slots(), 0);  // a TensorBoard takes no slot by default
  ASSERT_EQ(tensorboard->spec.tensorboard_args_size(), 2);
  EXPECT_EQ(tensorboard->spec.tensorboard_args(1), "scalars=100");

  auto shell = ParseTaskConfig(nlohmann::json::object(), events::TASK_TYPE_SHELL);
  ASSERT_TRUE(shell.ok());
  EXPECT_EQ(shell->spec.idle_timeout_seconds(), 0);  // never, unless asked

  // Each refusal names the field.
  auto with_entrypoint =
      ParseTaskConfig({{"entrypoint", "jupyter lab"}}, events::TASK_TYPE_NOTEBOOK);
  EXPECT_EQ(with_entrypoint.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(with_entrypoint.status().message().find("config.entrypoint"), std::string::npos);
  auto args_on_a_shell = ParseTaskConfig({{"tensorboard_args", {"x"}}}, events::TASK_TYPE_SHELL);
  EXPECT_NE(args_on_a_shell.status().message().find("tensorboard_args"), std::string::npos);
  auto bad_timeout = ParseTaskConfig({{"idle_timeout", "soon"}}, events::TASK_TYPE_NOTEBOOK);
  EXPECT_EQ(bad_timeout.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_timeout.status().message().find("config.idle_timeout"), std::string::npos);
  EXPECT_FALSE(ParseTaskConfig(nlohmann::json::object(), events::TASK_TYPE_COMMAND).ok());
}

TEST(CommandConfigTest, IdleTimeoutsAreDurationsInWholeSeconds) {
  EXPECT_EQ(*ParseIdleTimeout("45"), 45);
  EXPECT_EQ(*ParseIdleTimeout("30s"), 30);
  EXPECT_EQ(*ParseIdleTimeout("10m"), 600);
  EXPECT_EQ(*ParseIdleTimeout("2h"), 7200);
  EXPECT_EQ(*ParseIdleTimeout("1d"), 86400);
  EXPECT_EQ(*ParseIdleTimeout("0"), 0);
  for (const char* bad : {"", "-5", "5x", "m", "1.5h", "400d", "99999999999"}) {
    EXPECT_EQ(ParseIdleTimeout(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(CommandConfigTest, ImagesAreOneNameOrOnePerDeviceType) {
  auto one = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "environment": {"image": "oci-archive:/images/a.tar"}})"));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->spec.image_cpu(), "oci-archive:/images/a.tar");
  EXPECT_EQ(one->spec.image_gpu(), "oci-archive:/images/a.tar");
  EXPECT_EQ(one->effective["environment"]["image"], "oci-archive:/images/a.tar");

  auto variants = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "environment": {"image": {"cpu": "team/cpu:1", "gpu": "team/gpu:1"},
          "force_pull_image": true}})"));
  ASSERT_TRUE(variants.ok()) << variants.status().ToString();
  EXPECT_EQ(variants->spec.image_cpu(), "team/cpu:1");
  EXPECT_EQ(variants->spec.image_gpu(), "team/gpu:1");
  EXPECT_TRUE(variants->spec.force_pull_image());

  for (const char* bad : {R"({"image": {"cpu": "a", "cuda": "b", "gpu": "c"}})",
                          R"({"image": "two words"})", R"({"image": ""})", R"({"image": 3})"}) {
    auto config =
        ParseCommandConfig({{"entrypoint", "true"}, {"environment", nlohmann::json::parse(bad)}});
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(config.status().message().find("config.environment.image"), std::string::npos)
        << config.status().message();
  }
  auto rocm = ParseCommandConfig(
      nlohmann::json::parse(R"({"entrypoint": "true", "environment": {"image": {"rocm": "r"}}})"));
  EXPECT_EQ(rocm.status().code(), StatusCode::kNotSupported);
}

TEST(CommandConfigTest, BindMountsNeedAbsolutePaths) {
  auto config = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "bind_mounts": [
            {"host_path": "/srv/data", "container_path": "/data", "read_only": true},
            {"host_path": "/scratch", "container_path": "/scratch"}]})"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->spec.bind_mounts_size(), 2);
  EXPECT_EQ(config->spec.bind_mounts(0).host_path(), "/srv/data");
  EXPECT_EQ(config->spec.bind_mounts(0).container_path(), "/data");
  EXPECT_TRUE(config->spec.bind_mounts(0).read_only());
  EXPECT_FALSE(config->spec.bind_mounts(1).read_only());
  EXPECT_EQ(config->effective["bind_mounts"].size(), 2u);

  for (const char* bad : {R"([{"host_path": "data", "container_path": "/data"}])",
                          R"([{"host_path": "/data", "container_path": "/"}])",
                          R"([{"host_path": "/data/../etc", "container_path": "/x"}])",
                          R"([{"container_path": "/data"}])", R"({"host_path": "/a"})"}) {
    auto refused =
        ParseCommandConfig({{"entrypoint", "true"}, {"bind_mounts", nlohmann::json::parse(bad)}});
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("config.bind_mounts"), std::string::npos)
        << refused.status().message();
  }
  auto propagation = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "bind_mounts": [
            {"host_path": "/a", "container_path": "/a", "propagation": "shared"}]})"));
  EXPECT_EQ(propagation.status().code(), StatusCode::kNotSupported);
}

// Determined joins a relative container_path onto the working directory.
TEST(CommandConfigTest, ARelativeContainerPathIsUnderTheWorkingDirectory) {
  auto config = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "bind_mounts": [{"host_path": "/srv/data", "container_path": "data"}]})"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->spec.bind_mounts(0).container_path(), "data");
  for (const char* bad : {".", "..", "../etc", "a/../../b"}) {
    auto refused =
        ParseCommandConfig({{"entrypoint", "true"},
                            {"bind_mounts", {{{"host_path", "/srv"}, {"container_path", bad}}}}});
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// `det cmd run 'a | b'` sends a list of one string: Determined's command-entrypoint.sh runs it
// with /bin/sh -c; two or more are a program and its arguments.
TEST(CommandConfigTest, AListOfOneIsACommandLine) {
  auto one = ParseCommandConfig({{"entrypoint", {"env | grep -q TEST=TEST"}}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->spec.entrypoint_size(), 3);
  EXPECT_EQ(one->spec.entrypoint(0), "/bin/sh");
  EXPECT_EQ(one->spec.entrypoint(2), "env | grep -q TEST=TEST");
  EXPECT_EQ(one->effective["entrypoint"], nlohmann::json::array({"env | grep -q TEST=TEST"}));
  auto two = ParseCommandConfig({{"entrypoint", {"echo", "a | b"}}});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->spec.entrypoint_size(), 2);
  EXPECT_EQ(two->spec.entrypoint(0), "echo");
}

TEST(CommandConfigTest, ShmSizeIsBytesOrASizeWithBinaryUnits) {
  for (const auto& [given, bytes] :
       std::vector<std::pair<nlohmann::json, int64_t>>{{4294967296, int64_t{4} << 30},
                                                       {"4G", int64_t{4} << 30},
                                                       {"512Mi", int64_t{512} << 20},
                                                       {"1.5gb", int64_t{3} << 29},
                                                       {"2048 MB", int64_t{2} << 30}}) {
    auto config =
        ParseCommandConfig({{"entrypoint", "true"}, {"resources", {{"shm_size", given}}}});
    ASSERT_TRUE(config.ok()) << given << ": " << config.status().ToString();
    EXPECT_EQ(config->spec.shm_size_bytes(), bytes) << given;
  }
  for (const nlohmann::json& bad : {nlohmann::json("lots"), nlohmann::json("4X"),
                                    nlohmann::json(-1), nlohmann::json(12), nlohmann::json("2P")}) {
    auto refused = ParseCommandConfig({{"entrypoint", "true"}, {"resources", {{"shm_size", bad}}}});
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("shm_size"), std::string::npos)
        << refused.status().message();
  }
}

// Determined's commands refuse resources.agent_label (unknown since 0.20); an entry without '='
// unsets the variable.
TEST(CommandConfigTest, AgentLabelIsUnknownAndAVariableAloneIsKept) {
  auto label = ParseCommandConfig({{"entrypoint", "true"}, {"resources", {{"agent_label", "x"}}}});
  EXPECT_EQ(label.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(label.status().message().find("agent_label"), std::string::npos);
  auto unset = ParseCommandConfig(
      {{"entrypoint", "true"}, {"environment", {{"environment_variables", {"HOME", "A=1"}}}}});
  ASSERT_TRUE(unset.ok()) << unset.status().ToString();
  EXPECT_EQ(unset->spec.environment_variables(0), "HOME");
  auto empty = ParseCommandConfig(
      {{"entrypoint", "true"}, {"environment", {{"environment_variables", {"=1"}}}}});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

TEST(CommandConfigTest, TheRegistryPasswordGoesToTheSpecButNotIntoTheShownConfig) {
  auto config = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "environment": {"image": "registry.local:5000/team/a:1",
          "registry_auth": {"username": "alice", "password": "s3cret-pw",
                            "serveraddress": "registry.local:5000"}}})"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->spec.registry_auth().username(), "alice");
  EXPECT_EQ(config->spec.registry_auth().password(), "s3cret-pw");
  EXPECT_EQ(config->spec.registry_auth().server_address(), "registry.local:5000");
  EXPECT_EQ(config->effective.dump().find("s3cret-pw"), std::string::npos);
  EXPECT_EQ(config->effective["environment"]["registry_auth"]["username"], "alice");

  auto token = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "environment": {"registry_auth": {"auth": "YTpi"}}})"));
  EXPECT_EQ(token.status().code(), StatusCode::kNotSupported);
  auto no_password = ParseCommandConfig(nlohmann::json::parse(
      R"({"entrypoint": "true", "environment": {"registry_auth": {"username": "alice"}}})"));
  EXPECT_EQ(no_password.status().code(), StatusCode::kInvalidArgument);
}

TEST(CommandConfigTest, WhatContainersDoNotHaveIsStillRefusedByName) {
  for (const char* key : {"ports", "proxy_ports", "pod_spec", "add_capabilities"}) {
    auto config = ParseCommandConfig(
        {{"entrypoint", "true"}, {"environment", {{key, nlohmann::json::object()}}}});
    EXPECT_EQ(config.status().code(), StatusCode::kNotSupported) << key;
  }
}

TEST(CommandConfigTest, SetTaskImageReadsDeterminedsShapes) {
  events::TaskSpec spec;
  SetTaskImage(nlohmann::json::parse(R"({"cpu": "c", "cuda": "g", "rocm": "r"})"), spec);
  EXPECT_EQ(spec.image_cpu(), "c");
  EXPECT_EQ(spec.image_gpu(), "g");
  events::TaskSpec none;
  SetTaskImage(nullptr, none);
  EXPECT_EQ(none.image_cpu(), "");
  EXPECT_EQ(none.image_gpu(), "");
}

}  // namespace
}  // namespace cairn::commands
