// A command's configuration (commands/command_config.h) as `det cmd run` sends it.
#include "commands/command_config.h"

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

}  // namespace
}  // namespace cairn::commands
