// log_policies as Determined 0.38 reads them: the current form and the legacy one, Determined's
// two defaults under the user's, the merge by name, RE2 patterns checked when read, and lines
// matched anywhere (a line printing a configuration with log_policies skipped).
#include "commands/experiments/log_policies.h"

#include <gtest/gtest.h>

#include "base/yaml_json.h"

namespace cairn::experiments {
namespace {

Result<std::vector<LogPolicy>> Read(const std::string& yaml) {
  CAIRN_ASSIGN_OR_RETURN(YAML::Node node, LoadYaml(yaml, "config"));
  const YAML::Node policies = node["log_policies"];
  return ReadLogPolicies(fields::Field{policies, "log_policies", 1, "config"});
}

TEST(LogPolicies, TheCurrentAndTheLegacyFormsAreRead) {
  auto policies = Read(R"(
log_policies:
  - name: NCCL
    pattern: ".*NCCL WARN.*"
    action: exclude_node
  - pattern: "exit code 7"
    action: {type: cancel_retries}
  - name: Slow disk
    pattern: "disk is slow"
)");
  ASSERT_TRUE(policies.ok()) << policies.status().ToString();
  ASSERT_EQ(policies->size(), 3u);
  EXPECT_EQ((*policies)[0], (LogPolicy{"NCCL", ".*NCCL WARN.*", kLogActionExcludeNode}));
  EXPECT_EQ((*policies)[1], (LogPolicy{"", "exit code 7", kLogActionCancelRetries}));
  EXPECT_EQ((*policies)[2], (LogPolicy{"Slow disk", "disk is slow", ""}));
  EXPECT_EQ(LogPoliciesJson(*policies)[1].dump(),
            R"({"action":"cancel_retries","pattern":"exit code 7"})");
}

TEST(LogPolicies, BadPoliciesAreRefusedByEntry) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  for (const Case& c : {
           Case{"log_policies: [{name: a, pattern: '(unclosed'}]",
                "log_policies[0].pattern: not a regular expression"},
           Case{"log_policies: [{name: a, pattern: x}, {name: a, pattern: y}]",
                "log_policies[1].name: another policy is named 'a'"},
           Case{"log_policies: [{pattern: x}]", "log_policies[0]: needs a name"},
           Case{"log_policies: [{name: a, pattern: x, action: reboot}]", "log_policies[0].action"},
           Case{"log_policies: [{name: a, action: cancel_retries}]",
                "log_policies[0]: an action needs a pattern"},
           Case{"log_policies: [{name: a, pattern: x, when: always}]", "when"},
           Case{"log_policies: {name: a}", "expected a list of policies"},
       }) {
    auto read = Read(c.yaml);
    ASSERT_FALSE(read.ok()) << c.yaml;
    EXPECT_NE(read.status().message().find(c.message), std::string::npos)
        << c.yaml << " -> " << read.status().ToString();
  }
}

TEST(LogPolicies, DeterminedsDefaultsGoUnderTheUsersAndANameAloneTurnsOneOff) {
  auto policies = WithDefaultLogPolicies({{"CUDA OOM", "", ""}, {"Mine", "boom", ""}});
  ASSERT_EQ(policies.size(), 3u);
  EXPECT_EQ(policies[0], (LogPolicy{"CUDA OOM", "", ""}));
  EXPECT_EQ(policies[2].name, "ECC Error");
  CompiledLogPolicies compiled(policies);
  EXPECT_TRUE(compiled.Matches("RuntimeError: CUDA out of memory. Tried to allocate").empty());
  EXPECT_EQ(compiled.Matches("boom"), std::vector<size_t>{1});
  EXPECT_EQ(compiled.Matches("uncorrectable ECC error encountered on GPU 0"),
            std::vector<size_t>{2});
}

TEST(LogPolicies, MergingKeepsTheUpperByNameAndUnnamedOnesByActionAndPattern) {
  std::vector<LogPolicy> upper = {{"A", "a", ""}, {"", "x", kLogActionCancelRetries}};
  std::vector<LogPolicy> lower = {{"A", "other", kLogActionExcludeNode},
                                  {"B", "b", ""},
                                  {"", "x", kLogActionCancelRetries},
                                  {"", "x", kLogActionExcludeNode}};
  auto merged = MergeLogPolicies(upper, lower);
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged[0], upper[0]);
  EXPECT_EQ(merged[2], lower[1]);
  EXPECT_EQ(merged[3], lower[3]);
}

TEST(LogPolicies, LinesMatchAnywhereAndAConfigurationLineIsSkipped) {
  CompiledLogPolicies compiled(
      {{"Exit", R"(exit.*code\s+7)", kLogActionCancelRetries}, {"Never", "^never$", ""}});
  EXPECT_EQ(compiled.Matches("[rank=0] process exited with code 7 (oops)"), std::vector<size_t>{0});
  EXPECT_TRUE(compiled.Matches("exit code 8").empty());
  EXPECT_TRUE(
      compiled.Matches(R"(config: {"log_policies": [{"pattern": "exit code 7"}]})").empty());
}

}  // namespace
}  // namespace cairn::experiments
