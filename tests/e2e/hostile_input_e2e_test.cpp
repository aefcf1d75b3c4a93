// Documents built to exhaust a parser (issue 16): each is refused with a 400 that names the limit
// it broke, nothing reaches the log, and the master's peak memory stays small throughout.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

// The master's peak resident set (VmHWM), in MiB.
int64_t PeakResidentMiB(pid_t pid) {
  std::optional<int64_t> kib = ProcStatusField(pid, "VmHWM");
  EXPECT_TRUE(kib.has_value()) << "no VmHWM for pid " << pid;
  return kib ? *kib / 1024 : -1;
}

// "billion laughs": level i is a list of nine aliases to level i-1; 13 KB of text that stands for
// 9^9 values.
std::string AliasBomb() {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string previous = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", " : "") + previous;
    text += "]\n";
  }
  return text + "entrypoint: python3 train.py\n";
}

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    baseline_events_ = cluster_.AllEvents().size();
  }

  // POSTs `body` raw and expects a `status` (400 unless said) whose message contains `limit`.
  void ExpectRefused(const std::string& what, const std::string& target, const std::string& body,
                     const std::string& limit, int status = 400) {
    auto client = cluster_.Client();
    const auto start = std::chrono::steady_clock::now();
    auto response = client.Request("POST", target, body, {{"Content-Type", "application/json"}},
                                   std::chrono::seconds(60));
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    ASSERT_TRUE(response.ok()) << what << ": " << response.status().ToString();
    EXPECT_EQ(response->status, status) << what << ": " << response->body.substr(0, 300);
    EXPECT_NE(response->body.find(limit), std::string::npos)
        << what << ": the refusal should name the limit '" << limit
        << "': " << response->body.substr(0, 300);
    // A figure for the closing note, not an assertion: timing belongs to benchmarks.
    std::printf("%-40s %6zu KiB  refused in %5lld ms\n", what.c_str(), body.size() / 1024,
                static_cast<long long>(elapsed.count()));
  }

  std::string ExperimentBody(const std::string& config_yaml) {
    return json{{"config", config_yaml}, {"modelDefinition", json::array()}, {"activate", false}}
        .dump();
  }

  Cluster cluster_;
  size_t baseline_events_ = 0;
};

TEST_F(HostileInputTest, HostileDocumentsAreRefusedCheaplyAndNothingIsStored) {
  const pid_t master = cluster_.master_pid();
  const int64_t peak_before = PeakResidentMiB(master);

  ExpectRefused("alias bomb (experiment config)", "/api/v1/experiments",
                ExperimentBody(AliasBomb()), "more than 100000 values");
  ExpectRefused("100k-deep YAML (experiment config)", "/api/v1/experiments",
                ExperimentBody(Nested(100'000)), "nested deeper than 64 levels");
  ExpectRefused("100k-deep JSON body (command)", "/api/v1/commands", Nested(100'000),
                "nested deeper than 64 levels");
  ExpectRefused("100k-deep JSON config (command)", "/api/v1/commands",
                "{\"config\":" + Nested(100'000) + "}", "nested deeper than 64 levels");
  const std::string huge(16u << 20, 'x');
  ExpectRefused("16 MiB scalar (experiment config)", "/api/v1/experiments",
                ExperimentBody("description: " + huge + "\nentrypoint: python3 train.py\n"),
                "larger than 1048576 bytes");
  ExpectRefused("16 MiB scalar (command config)", "/api/v1/commands",
                json{{"config", {{"description", huge}, {"entrypoint", {"true"}}}}}.dump(),
                "larger than 1048576 bytes");
  // A template's route takes no body that large at all (api/router.h, BodySize).
  ExpectRefused("16 MiB scalar (template)", "/api/v1/templates/huge",
                json{{"name", "huge"}, {"config", {{"description", huge}}}}.dump(),
                "request body too large", 413);

  const int64_t peak_after = PeakResidentMiB(master);
  std::printf("master peak RSS: %lld MiB before, %lld MiB after\n",
              static_cast<long long>(peak_before), static_cast<long long>(peak_after));
  EXPECT_LT(peak_after, 150) << "the master's peak resident memory, MiB";
  EXPECT_EQ(cluster_.AllEvents().size(), baseline_events_) << "a refused request was logged";

  // And the master still serves.
  EXPECT_FALSE(cluster_.Submit({{"entrypoint", {"true"}}}).empty());
}

// A client whose answer was lost retries with the same key; the master was killed in between and
// rebuilt its state from the log, and still knows the key.
TEST_F(HostileInputTest, RetryingWithTheSameKeyAcrossAKill9YieldsOneTask) {
  const std::string body = json{{"config", {{"entrypoint", {"true"}}}}, {"force", true}}.dump();
  auto submit = [&] {
    auto client = cluster_.Client();
    auto response =
        client.Request("POST", "/api/v1/commands", body,
                       {{"Content-Type", "application/json"}, {"Idempotency-Key", "retry-1"}});
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return std::string();
    EXPECT_EQ(response->status, 200) << response->body;
    return json::parse(response->body, nullptr, false)["command"].value("id", "");
  };
  const std::string first = submit();
  ASSERT_FALSE(first.empty());
  cluster_.StopMaster(SIGKILL);
  cluster_.StartMaster();
  EXPECT_EQ(submit(), first);
  size_t submitted = 0;
  for (const auto& event : cluster_.AllEvents()) submitted += event.contains("taskSubmitted");
  EXPECT_EQ(submitted, 1u);
}

}  // namespace
}  // namespace cairn::testing
