// The agent's command line, config file and slot discovery.
#include "agent/agent_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "agent/slot_discovery.h"
#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;

Result<CommandLine> Parse(std::vector<std::string> args) { return ParseCommandLine(args); }

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream out(path);
  out << text;
  out.close();
  chmod(path.c_str(), mode);
}

TEST(AgentConfigTest, ParsesEveryFlag) {
  Result<CommandLine> parsed =
      Parse({"--master", "http://127.0.0.1:8080", "--id", "node-1", "--slots=4", "--pool", "gpus",
             "--work-root", "/w", "--kill-grace", "2.5", "--heartbeat-interval=0.5", "--trace-file",
             "/t", "--log-level", "debug"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const AgentConfig& config = parsed->config;
  EXPECT_FALSE(parsed->exit_text);
  EXPECT_EQ(parsed->log_level, log::Level::kDebug);
  EXPECT_EQ(config.master_url, "http://127.0.0.1:8080");
  EXPECT_EQ(config.agent_id, "node-1");
  EXPECT_EQ(config.slots, 4);
  EXPECT_EQ(config.resource_pool, "gpus");
  EXPECT_EQ(config.work_root, "/w");
  EXPECT_EQ(config.kill_grace, 2500ms);
  EXPECT_EQ(config.heartbeat_interval, 500ms);
  EXPECT_EQ(config.trace_file, "/t");
}

TEST(AgentConfigTest, AnHttpsMasterTakesTheCaFileByFlagOrKey) {
  Result<CommandLine> by_flag = Parse({"--master", "https://master.example:8443", "--id", "a",
                                       "--security-tls-master-cert", "/etc/cairn/ca.crt"});
  ASSERT_TRUE(by_flag.ok()) << by_flag.status().ToString();
  EXPECT_EQ(by_flag->config.master_url, "https://master.example:8443");
  EXPECT_EQ(by_flag->config.master_cert_file, "/etc/cairn/ca.crt");
  AgentConfig from_yaml;
  ASSERT_TRUE(
      ApplyConfigYaml("master: https://m:1\nmaster_cert_file: /ca.pem\n", "agent.yaml", from_yaml)
          .ok());
  EXPECT_EQ(from_yaml.master_cert_file, "/ca.pem");
  // Without a CA file an https master is verified against the system's CAs.
  EXPECT_TRUE(Parse({"--master", "https://m:1", "--id", "a"}).ok());
  // A CA file for a plain-HTTP master is a mistake worth naming.
  Result<CommandLine> plain = Parse(
      {"--master", "http://m:1", "--id", "a", "--security-tls-master-cert", "/etc/cairn/ca.crt"});
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("https://"), std::string::npos)
      << plain.status().message();
}

TEST(AgentConfigTest, TakesThePreparedEnvironmentSettingsByFlagOrKey) {
  Result<CommandLine> by_flag = Parse({"--master", "http://m:1", "--id", "a", "--env-cache-dir",
                                       "/cache", "--pip-index-url", "https://pypi.internal/simple",
                                       "--pip-find-links", "/w1 /w2", "--pip-no-index", "true"});
  ASSERT_TRUE(by_flag.ok()) << by_flag.status().ToString();
  EXPECT_EQ(by_flag->config.env_cache_dir, "/cache");
  EXPECT_EQ(EffectiveEnvCacheDir(by_flag->config), "/cache");
  EXPECT_EQ(by_flag->config.pip_index_url, "https://pypi.internal/simple");
  EXPECT_EQ(by_flag->config.pip_find_links, "/w1 /w2");
  EXPECT_TRUE(by_flag->config.pip_no_index);

  AgentConfig from_yaml;
  ASSERT_TRUE(ApplyConfigYaml("env_cache_dir: /c\npip_find_links: /wheels\npip_no_index: false\n",
                              "agent.yaml", from_yaml)
                  .ok());
  EXPECT_EQ(from_yaml.env_cache_dir, "/c");
  EXPECT_EQ(from_yaml.pip_find_links, "/wheels");
  EXPECT_FALSE(from_yaml.pip_no_index);

  // The default cache is under the work root.
  Result<CommandLine> defaults =
      Parse({"--master", "http://m:1", "--id", "a", "--work-root", "/w"});
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(EffectiveEnvCacheDir(defaults->config), "/w/env-cache");
  EXPECT_FALSE(defaults->config.pip_no_index);

  Result<CommandLine> bad = Parse({"--master", "http://m:1", "--id", "a", "--pip-no-index", "yes"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--pip-no-index: expected true or false, got 'yes'");
}

TEST(AgentConfigTest, HasDefaults) {
  Result<CommandLine> parsed = Parse({"--master", "http://m:1/", "--id", "a"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->config.slots.has_value());
  EXPECT_EQ(parsed->config.resource_pool, "default");
  EXPECT_EQ(parsed->config.kill_grace, 10s);
  EXPECT_EQ(parsed->config.heartbeat_interval, 2s);
  EXPECT_EQ(parsed->log_level, log::Level::kInfo);
  EXPECT_NE(EffectiveWorkRoot(parsed->config).find("cairn-agent-a"), std::string::npos);
}

TEST(AgentConfigTest, HelpAndVersionNeedNothingElse) {
  Result<CommandLine> help = Parse({"--help"});
  ASSERT_TRUE(help.ok()) << help.status().ToString();
  ASSERT_TRUE(help->exit_text);
  EXPECT_NE(help->exit_text->find("--master URL"), std::string::npos) << *help->exit_text;
  Result<CommandLine> version = Parse({"--version"});
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  ASSERT_TRUE(version->exit_text);
  EXPECT_EQ(version->exit_text->rfind("cairn-agent ", 0), 0u) << *version->exit_text;
}

TEST(AgentConfigTest, RejectsBadFlagsAndValues) {
  const std::vector<std::vector<std::string>> bad = {
      {"--master", "http://m:1", "--id", "a", "--bogus", "1"},
      {"--master", "http://m:1", "--id", "a", "stray"},
      {"--master", "http://m:1", "--id"},
      {"--master", "http://m:1", "--id", "a", "--slots", "0"},
      {"--master", "http://m:1", "--id", "a", "--slots", "two"},
      {"--master", "http://m:1", "--id", "a", "--slots", "-1"},
      {"--master", "http://m:1", "--id", "a", "--kill-grace", "-1"},
      {"--master", "http://m:1", "--id", "a", "--kill-grace", "soon"},
      {"--master", "http://m:1", "--id", "a", "--heartbeat-interval", "0"},
      {"--master", "http://m:1", "--id", "a", "--heartbeat-interval", "nan"},
      {"--master", "http://m:1", "--id", "a", "--id", "b"},
      {"--master", "ftp://m:1", "--id", "a"},
      {"--master", "http://m", "--id", "a"},
      {"--master", "http://m:99999", "--id", "a"},
      {"--master", "http://m:1", "--id", "a b"},
      {"--master", "http://m:1", "--id", "a", "--pool", ""},
      {"--id", "a"},
      {"--master", "http://m:1"},
      {"--master", "http://m:1", "--id", "a", "--config", "/nonexistent/agent.yaml"},
      {"--master", "http://m:1", "--id", "a", "--log-level", "loud"},
  };
  for (const auto& args : bad) {
    Result<CommandLine> parsed = Parse(args);
    std::string joined;
    for (const auto& arg : args) joined += arg + " ";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << joined;
    EXPECT_FALSE(parsed.status().message().empty()) << joined;
  }
  // The message names what is wrong.
  EXPECT_NE(Parse({"--id", "a"}).status().message().find("--master"), std::string::npos);
  EXPECT_NE(Parse({"--master", "http://m:1"}).status().message().find("--id"), std::string::npos);
  EXPECT_NE(Parse({"--master", "http://m:1", "--id", "a", "--bogus", "1"})
                .status()
                .message()
                .find("--bogus"),
            std::string::npos);
}

TEST(AgentConfigTest, ReadsTheConfigFileAndFlagsOverrideIt) {
  cairn::testing::TempDir dir;
  WriteFile(dir.Sub("agent.yaml"),
            "master: http://10.0.0.1:8080\n"
            "id: from-file\n"
            "slots: 3\n"
            "resource_pool: file-pool\n"
            "work_root: /file/work\n"
            "kill_grace_seconds: 1\n"
            "heartbeat_interval_seconds: 0.25\n");
  Result<CommandLine> parsed = Parse({"--pool", "flag-pool", "--config", dir.Sub("agent.yaml")});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const AgentConfig& config = parsed->config;
  EXPECT_EQ(config.master_url, "http://10.0.0.1:8080");
  EXPECT_EQ(config.agent_id, "from-file");
  EXPECT_EQ(config.slots, 3);
  EXPECT_EQ(config.resource_pool, "flag-pool");
  EXPECT_EQ(config.work_root, "/file/work");
  EXPECT_EQ(config.kill_grace, 1s);
  EXPECT_EQ(config.heartbeat_interval, 250ms);
}

TEST(AgentConfigTest, TheRuntimeIsAProcessUnlessAContainerIsAsked) {
  const std::vector<std::string> base = {"--master", "http://127.0.0.1:8080", "--id", "n"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return Parse(args);
  };
  Result<CommandLine> defaults = with({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->config.runtime, "process");
  EXPECT_FALSE(defaults->config.allow_images_on_host);
  EXPECT_EQ(defaults->config.gpu_device_dir, "/dev");

  Result<CommandLine> allowing = with({"--allow-images-on-host"});
  ASSERT_TRUE(allowing.ok()) << allowing.status().ToString();
  EXPECT_TRUE(allowing->config.allow_images_on_host);

  Result<CommandLine> container =
      with({"--runtime", "container", "--image-dir", "/images", "--default-image", "base",
            "--artificial-gpus", "2", "--gpu-device-dir", "/fake/dev"});
  ASSERT_TRUE(container.ok()) << container.status().ToString();
  EXPECT_EQ(container->config.runtime, "container");
  EXPECT_EQ(container->config.image_dir, "/images");
  EXPECT_EQ(container->config.default_image, "base");
  EXPECT_EQ(container->config.artificial_gpus, 2);
  EXPECT_EQ(container->config.gpu_device_dir, "/fake/dev");

  cairn::testing::TempDir dir;
  WriteFile(dir.Sub("agent.yaml"), "runtime: container\nimage_dir: /from-file\n");
  Result<CommandLine> from_file = with({"--config", dir.Sub("agent.yaml")});
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_EQ(from_file->config.runtime, "container");
  EXPECT_EQ(from_file->config.image_dir, "/from-file");

  for (const auto& [extra, expected] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--runtime", "docker"}, "must be process or container"},
           {{"--image-dir", "/images"}, "--image-dir is for --runtime container"},
           {{"--runtime", "container", "--allow-images-on-host"}, "--allow-images-on-host"},
           {{"--slots", "2", "--artificial-gpus", "2"}, "not both"}}) {
    Result<CommandLine> refused = with(extra);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << expected;
    EXPECT_NE(refused.status().message().find(expected), std::string::npos)
        << refused.status().message();
  }
}

TEST(AgentConfigTest, RejectsBadConfigFiles) {
  const std::vector<std::string> bad = {
      "master: http://m:1\nid: a\ncolour: blue\n",   // unknown key
      "master: http://m:1\nid: a\nslots: many\n",    // bad value
      "master: http://m:1\nid: a\nslots: [1, 2]\n",  // not a scalar
      "- master\n- id\n",                            // not a mapping
      "master: http://m:1\nid: [unclosed\n",         // not YAML
      "master: http://m:1\nid: a\nkill_grace_seconds: -3\n",
  };
  for (const auto& text : bad) {
    AgentConfig config;
    Status applied = ApplyConfigYaml(text, "agent.yaml", config);
    EXPECT_EQ(applied.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(applied.message().rfind("agent.yaml:", 0), 0u) << applied.message();
  }
  AgentConfig unknown;
  EXPECT_EQ(ApplyConfigYaml("master: http://m:1\ncolour: blue\n", "agent.yaml", unknown)
                .message()
                .rfind("agent.yaml:2: colour: unknown field", 0),
            0u);
  AgentConfig config;
  EXPECT_TRUE(ApplyConfigYaml("", "agent.yaml", config).ok());
}

TEST(SlotDiscoveryTest, MakesArtificialCpuSlots) {
  std::vector<SlotDevice> slots = ArtificialCpuSlots(3);
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[2].id, 2);
  EXPECT_EQ(slots[2].type, "cpu");
  EXPECT_EQ(slots[2].brand, "Artificial");
}

TEST(SlotDiscoveryTest, MakesArtificialGpuSlots) {
  auto slots = ArtificialGpuSlots(2);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[1].id, 1);
  EXPECT_EQ(slots[1].type, "cuda");
  EXPECT_EQ(slots[1].uuid, "GPU-artificial-1");
}

TEST(SlotDiscoveryTest, ParsesNvidiaSmiOutput) {
  Result<std::vector<SlotDevice>> gpus = ParseNvidiaSmiCsv(
      "0, GPU-3f2a, NVIDIA A100-SXM4-40GB\n1, GPU-77b1, NVIDIA A100-SXM4-40GB\n\n");
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].id, 1);
  EXPECT_EQ((*gpus)[1].uuid, "GPU-77b1");
  EXPECT_EQ((*gpus)[1].brand, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpus)[1].type, "cuda");
  EXPECT_FALSE(ParseNvidiaSmiCsv("No devices were found\n").ok());
  EXPECT_FALSE(ParseNvidiaSmiCsv("x, GPU-1, T4\n").ok());
}

TEST(SlotDiscoveryTest, RunsNvidiaSmiFromThePath) {
  cairn::testing::TempDir dir;
  EXPECT_EQ(DiscoverGpus(dir.path()).status().code(), StatusCode::kNotFound);

  WriteFile(dir.Sub("nvidia-smi"),
            "#!/bin/sh\n"
            "[ \"$1\" = --query-gpu=index,uuid,name ] || exit 9\n"
            "echo '0, GPU-aaa, Tesla T4'\n"
            "echo '1, GPU-bbb, Tesla T4'\n",
            0755);
  Result<std::vector<SlotDevice>> gpus = DiscoverGpus(dir.path());
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-aaa");

  WriteFile(dir.Sub("nvidia-smi"), "#!/bin/sh\necho 'driver not loaded' >&2\nexit 1\n", 0755);
  Result<std::vector<SlotDevice>> failed = DiscoverGpus(dir.path());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("driver not loaded"), std::string::npos);
}

}  // namespace
}  // namespace cairn::agent
