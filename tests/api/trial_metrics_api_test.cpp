// Trial metrics through Determined's routes: reported by the trial's own process
// (POST /api/v1/trials/{id}/metrics with its DET_SESSION_TOKEN) and read back for charts by
// CompareTrials (GET /api/v1/trials/time-series), downsampled so that spikes survive.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/password.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

class TrialMetricsApiTest : public ApiTest {
 protected:
  // A running trial of a one-trial experiment; its run's allocation id in `allocation_`.
  int64_t StartTrial() {
    RegisterAgent("a1", 1, "inc-1");
    CallJson("POST", "/api/v1/experiments", CreateExperimentBody(/*activate=*/true).dump());
    std::string task;
    for (const auto& event : Events()) {
      if (event.contains("allocationAssigned")) {
        allocation_ = event["allocationAssigned"]["allocationId"];
        task = event["allocationAssigned"]["taskId"];
      }
    }
    EXPECT_FALSE(allocation_.empty()) << "the trial's run was not placed";
    task_ = task;
    CallJson("POST", "/api/v1/allocations/" + allocation_ + "/started",
             json{{"taskId", task}, {"agentId", "a1"}, {"pid", 7}}.dump());
    json trials = CallJson("GET", "/api/v1/experiments/1/trials");
    return trials["trials"][0]["id"].get<int64_t>();
  }

  // What Determined's core.train.report_training_metrics sends.
  void ReportMetrics(int64_t trial, const std::string& group, int64_t batches, const json& values) {
    json body = {{"group", group},
                 {"metrics",
                  {{"trialId", trial},
                   {"trialRunId", 1},
                   {"stepsCompleted", batches},
                   {"metrics", {{"avgMetrics", values}}}}}};
    auto response =
        Call("POST", "/api/v1/trials/" + std::to_string(trial) + "/metrics", body.dump(),
             {{"Authorization", "Bearer " + TaskSessionToken(agent_token_, allocation_)}});
    ASSERT_EQ(response.status, 200) << response.body;
  }

  std::string allocation_;
  std::string task_;  // the run's task
};

TEST_F(TrialMetricsApiTest, AnExperimentsLogsAreSearchedAcrossItsTrials) {
  const int64_t trial = StartTrial();
  json batch = json::array();
  for (int seq = 0; seq < 50; ++seq) {
    batch.push_back({{"taskId", task_},
                     {"allocationId", allocation_},
                     {"agentId", "a1"},
                     {"seq", seq},
                     {"log", seq % 20 == 3 ? "RuntimeError: CUDA out of memory\n" : "step ok\n"}});
  }
  CallJson("POST", "/api/v1/task/logs", json{{"logs", batch}}.dump());
  auto found = Call("GET", "/api/v1/experiments/1/logs?searchText=Out%20Of%20Memory");
  ASSERT_EQ(found.status, 200) << found.body;
  std::vector<json> lines;
  for (size_t at = 0, end; (end = found.body.find('\n', at)) != std::string::npos; at = end + 1) {
    lines.push_back(json::parse(found.body.substr(at, end - at))["result"]);
  }
  ASSERT_EQ(lines.size(), 3u) << found.body;
  EXPECT_EQ(lines[0]["trialId"], trial);
  EXPECT_EQ(lines[0]["message"], "RuntimeError: CUDA out of memory\n");
  EXPECT_EQ(lines[2]["rankId"], 0);
  auto limited = Call("GET", "/api/v1/experiments/1/logs?searchText=memory&limit=1");
  EXPECT_EQ(std::count(limited.body.begin(), limited.body.end(), '\n'), 1) << limited.body;
  EXPECT_EQ(Call("GET", "/api/v1/experiments/1/logs").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/experiments/9/logs?searchText=x").status, 404);
}

TEST_F(TrialMetricsApiTest, TimeSeriesDownsamplesEachMetricAndKeepsItsSpikes) {
  const int64_t trial = StartTrial();
  constexpr int kReports = 240;
  for (int i = 1; i <= kReports; ++i) {
    const double loss = i == 123 ? 1000.0 : 10.0 / i;
    ReportMetrics(trial, "training", i * 10, {{"loss", loss}, {"accuracy", i / 240.0}});
    if (i % 80 == 0) ReportMetrics(trial, "validation", i * 10, {{"loss", 5.0 / i}});
  }
  const std::string id = std::to_string(trial);

  // Every series of every group, whole.
  json all = CallJson("GET", "/api/v1/trials/time-series?trialIds=" + id);
  ASSERT_EQ(all["trials"].size(), 1u) << all.dump();
  EXPECT_EQ(all["trials"][0]["trial"]["id"], trial);
  const json& groups = all["trials"][0]["metrics"];
  ASSERT_EQ(groups.size(), 2u) << groups.dump();
  EXPECT_EQ(groups[0]["group"], "training");
  EXPECT_EQ(groups[0]["type"], "METRIC_TYPE_TRAINING");
  ASSERT_EQ(groups[0]["data"].size(), static_cast<size_t>(kReports));
  const json& tenth = groups[0]["data"][9];
  EXPECT_EQ(tenth["batches"], 100);
  EXPECT_EQ(tenth["values"]["loss"], 1.0);
  EXPECT_DOUBLE_EQ(tenth["values"]["accuracy"].get<double>(), 10 / 240.0);
  EXPECT_TRUE(tenth["time"].is_string());
  EXPECT_EQ(groups[1]["group"], "validation");
  EXPECT_EQ(groups[1]["type"], "METRIC_TYPE_VALIDATION");
  ASSERT_EQ(groups[1]["data"].size(), 3u);
  EXPECT_EQ(groups[1]["data"][2]["values"]["loss"], 5.0 / 240);

  // One metric for a chart of 20 points: the spike at batch 1230 is among them.
  json chart = CallJson("GET", "/api/v1/trials/time-series?trialIds=" + id +
                                   "&metricType=METRIC_TYPE_TRAINING&metricNames=loss"
                                   "&maxDatapoints=20");
  const json& data = chart["trials"][0]["metrics"][0]["data"];
  ASSERT_LE(data.size(), 20u);
  ASSERT_GE(data.size(), 10u);
  std::set<int64_t> batches;
  for (const auto& point : data) {
    batches.insert(point["batches"].get<int64_t>());
    EXPECT_FALSE(point["values"].contains("accuracy")) << point.dump();
  }
  EXPECT_TRUE(batches.count(1230)) << data.dump();
  EXPECT_TRUE(batches.count(10));
  EXPECT_TRUE(batches.count(kReports * 10));

  // The names Determined's metric-names stream gives, here in one line.
  auto names = Call("GET", "/api/v1/experiments/metrics-stream/metric-names?ids=1");
  ASSERT_EQ(names.status, 200) << names.body;
  const json result = json::parse(names.body)["result"];
  EXPECT_EQ(result["trainingMetrics"], json({"accuracy", "loss"}));
  EXPECT_EQ(result["validationMetrics"], json({"loss"}));
  EXPECT_EQ(result["searcherMetrics"], json({"loss"}));
  EXPECT_EQ(result["metricNames"].size(), 3u);
  EXPECT_EQ(Call("GET", "/api/v1/experiments/metrics-stream/metric-names?ids=9").status, 404);

  // metricIds and a batch window.
  json window = CallJson("GET", "/api/v1/trials/time-series?trialIds=" + id +
                                    "&metricIds=validation.loss&startBatches=1000&endBatches=1600");
  ASSERT_EQ(window["trials"][0]["metrics"].size(), 1u);
  ASSERT_EQ(window["trials"][0]["metrics"][0]["data"].size(), 1u);
  EXPECT_EQ(window["trials"][0]["metrics"][0]["data"][0]["batches"], 1600);
}

TEST_F(TrialMetricsApiTest, TimeSeriesRefusesWhatItCannotAnswerByName) {
  const int64_t trial = StartTrial();
  const std::string base = "/api/v1/trials/time-series?trialIds=" + std::to_string(trial);
  struct Case {
    std::string query;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/api/v1/trials/time-series", 400, "trialIds is required"},
      {base + "&metricNames=loss", 400, "metricNames needs group or metricType"},
      {base + "&metricType=METRIC_TYPE_SOMETHING", 400, "metricType 'METRIC_TYPE_SOMETHING'"},
      {base + "&group=validation&metricType=METRIC_TYPE_TRAINING", 400, "disagree"},
      {base + "&metricIds=loss", 400, "is not group.metric_name"},
      {base + "&maxDatapoints=-3", 400, "maxDatapoints"},
      {base + "&timeSeriesFilter.name=loss", 400, "timeSeriesFilter is not supported"},
      {"/api/v1/trials/time-series?trialIds=999", 404, "trial 999"},
  };
  for (const auto& c : cases) {
    auto response = Call("GET", c.query);
    EXPECT_EQ(response.status, c.status) << c.query << ": " << response.body;
    EXPECT_NE(response.body.find(c.says), std::string::npos) << c.query << ": " << response.body;
  }
  token_.clear();
  EXPECT_EQ(Call("GET", base).status, 401);
}

}  // namespace
}  // namespace cairn::api_testing
