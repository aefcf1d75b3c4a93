// A TensorBoard over a finished experiment, through the master's proxy: the trial harness wrote
// event files for every training and validation report; the agent serves them with its
// --tensorboard-command (here tests/tools/fake_tensorboard.py, which answers TensorBoard's own
// routes from the files, since TensorBoard is not a Debian package); the scalars it serves are
// the metrics the trial reported. Without the program the task fails saying so.
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing::experiment_e2e {
namespace {

class TensorboardEndToEnd : public ExperimentEndToEnd {
 protected:
  net::ClientResponse Get(const std::string& target) {
    auto client = cluster_->Client();
    auto response = client.Request("GET", target);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::ClientResponse{};
  }

  // Launches a TensorBoard over `experiment`; returns its id.
  std::string Launch(int64_t experiment) {
    Reply launched =
        cluster_->Call("POST", "/api/v1/tensorboards", json{{"experimentIds", {experiment}}});
    EXPECT_EQ(launched.status, 200) << launched.body.dump();
    return launched.body["tensorboard"].value("id", "");
  }
};

TEST_F(TensorboardEndToEnd, ServesTheMetricsTheTrialReported) {
  StartMaster();
  cluster_->StartAgent(
      "agent-1", 1,
      {"--tensorboard-command", "python3 " + SourcePath("tests/tools/fake_tensorboard.py")});
  TrialOptions options;
  options.max_length = 200;
  const int64_t experiment = Create(SingleTrialConfig(options), Context());
  ASSERT_GT(experiment, 0);
  WaitForState(experiment, "EXPERIMENT_STATE_COMPLETED");
  const int64_t trial = Int(Trials(experiment)[0]["id"]);

  const std::string id = Launch(experiment);
  ASSERT_FALSE(id.empty());
  cluster_->WaitForEvent([&](const json& event) {
    return event.contains("taskReady") && event["taskReady"]["taskId"] == id;
  });
  const std::string prefix = "/proxy/" + id;
  const std::string run =
      "experiment_" + std::to_string(experiment) + "/trial/" + std::to_string(trial);
  auto runs = Get(prefix + "/data/runs");
  ASSERT_EQ(runs.status, 200) << runs.body;
  EXPECT_EQ(json::parse(runs.body), json::array({run}));

  // Every reported metric, at its batch, is a point of its tag's series.
  std::map<std::string, std::map<int64_t, double>> reported;
  for (const auto& workload : Workloads(trial)) {
    for (const char* group : {"training", "validation"}) {
      if (!workload.contains(group)) continue;
      const int64_t step = Int(workload[group]["totalBatches"]);
      for (const auto& [name, value] : workload[group]["metrics"]["avgMetrics"].items()) {
        if (value.is_number())
          reported[std::string(group) + "/" + name][step] = value.get<double>();
      }
    }
  }
  ASSERT_TRUE(reported.count("validation/validation_loss")) << "the example reports it";
  for (const auto& [tag, points] : reported) {
    auto scalars = Get(prefix + "/data/plugin/scalars/scalars?run=" + net::PercentEncode(run) +
                       "&tag=" + net::PercentEncode(tag));
    ASSERT_EQ(scalars.status, 200) << tag << ": " << scalars.body;
    std::map<int64_t, double> served;
    for (const auto& point : json::parse(scalars.body)) {
      served[point[1].get<int64_t>()] = point[2].get<double>();
    }
    ASSERT_EQ(served.size(), points.size()) << tag;
    for (const auto& [step, value] : points) {
      // Event files hold float32: equal to the reported value within float precision.
      EXPECT_NEAR(served[step], value, std::abs(value) * 1e-6 + 1e-12) << tag << " at " << step;
    }
  }
  Reply killed = cluster_->Call("POST", "/api/v1/tensorboards/" + id + "/kill");
  EXPECT_EQ(killed.status, 200) << killed.body.dump();
}

TEST_F(TensorboardEndToEnd, WithoutTensorboardTheTaskFailsSayingSo) {
  StartMaster();
  cluster_->StartAgent("agent-1", 1, {"--tensorboard-command", "no-such-tensorboard --flag"});
  Reply created =
      cluster_->CreateExperiment(SingleTrialConfig(TrialOptions()), Context(), /*activate=*/false);
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string id = Launch(Int(created.body["experiment"]["id"]));
  json exited = cluster_->WaitForEvent([&](const json& event) {
    return event.contains("taskExited") && event["taskExited"]["taskId"] == id;
  });
  const std::string reason = exited["taskExited"]["reason"];
  EXPECT_NE(reason.find("no-such-tensorboard is not installed on agent agent-1"), std::string::npos)
      << reason;
}

}  // namespace
}  // namespace cairn::testing::experiment_e2e
