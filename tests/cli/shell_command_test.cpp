// Where `cairn shell` finds the master and the user's session (cli/shell_command.h): flags and
// environment first, then Determined's own login cache, as `det user login` writes it.
#include "cli/shell_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "tests/support/test_support.h"

namespace cairn::cli {
namespace {

// Sets an environment variable for the test's length, and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value.empty()) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ShellCommandTest, TheMasterComesFromTheFlagThenTheEnvironment) {
  ScopedEnv cairn("CAIRN_MASTER", "");
  ScopedEnv det("DET_MASTER", "");
  EXPECT_EQ(MasterUrl(""), "http://127.0.0.1:8080");
  EXPECT_EQ(MasterUrl("master:9000/"), "http://master:9000");
  ScopedEnv det_set("DET_MASTER", "https://det:443");
  EXPECT_EQ(MasterUrl(""), "https://det:443");
  ScopedEnv cairn_set("CAIRN_MASTER", "http://cairn:1");
  EXPECT_EQ(MasterUrl(""), "http://cairn:1");
  EXPECT_EQ(MasterUrl("http://flag:2"), "http://flag:2");
}

TEST(ShellCommandTest, TheSessionComesFromCairnTokenOrDeterminedsLoginCache) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.Sub("determined"));
  ScopedEnv config("XDG_CONFIG_HOME", dir.path());
  ScopedEnv debug("DET_DEBUG_CONFIG_PATH", "");
  ScopedEnv token("CAIRN_TOKEN", "");
  ScopedEnv user("DET_USER", "");
  const std::string master = "http://127.0.0.1:8080";
  EXPECT_EQ(SessionToken(master).status().code(), StatusCode::kUnauthenticated);
  auto write = [&](const nlohmann::json& entry) {
    std::ofstream(dir.Sub("determined/auth.json"))
        << nlohmann::json{{"version", 2}, {"masters", {{master, entry}}}}.dump();
  };
  // det's active user, else $DET_USER, else its only user.
  write({{"active_user", "alice"}, {"tokens", {{"alice", "t-alice"}, {"bob", "t-bob"}}}});
  EXPECT_EQ(*SessionToken(master), "t-alice");
  write({{"tokens", {{"alice", "t-alice"}, {"bob", "t-bob"}}}});
  EXPECT_EQ(SessionToken(master).status().code(), StatusCode::kUnauthenticated);
  {
    ScopedEnv bob("DET_USER", "bob");
    EXPECT_EQ(*SessionToken(master), "t-bob");
  }
  write({{"tokens", {{"carol", "t-carol"}}}});
  EXPECT_EQ(*SessionToken(master), "t-carol");
  EXPECT_EQ(SessionToken("http://another:1").status().code(), StatusCode::kUnauthenticated);
  ScopedEnv explicit_token("CAIRN_TOKEN", "t-env");
  EXPECT_EQ(*SessionToken(master), "t-env");
}

}  // namespace
}  // namespace cairn::cli
