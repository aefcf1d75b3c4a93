// single, grid and random searchers, and the contract every searcher keeps.
#include "commands/experiments/searcher.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/experiments/search_run.h"

namespace cairn::experiments {
namespace {

const char* kSingle = R"(entrypoint: model_def:Trial
hyperparameters:
  lr: {type: double, minval: 0.001, maxval: 0.1}
  layers: 2
searcher:
  name: single
  metric: loss
  max_length: {batches: 300}
)";

std::string GridConfig(int max_concurrent_trials) {
  return R"(entrypoint: model_def:Trial
hyperparameters:
  layers: {type: int, minval: 1, maxval: 3, count: 3}
  act: {type: categorical, vals: [relu, tanh]}
  width: 32
searcher:
  name: grid
  metric: loss
  max_length: {batches: 100}
  max_concurrent_trials: )" +
         std::to_string(max_concurrent_trials) + "\n";
}

std::string RandomConfig(int max_trials, int max_concurrent_trials) {
  return R"(entrypoint: model_def:Trial
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
  layers: {type: int, minval: 1, maxval: 8}
  act: {type: categorical, vals: [relu, tanh, gelu]}
searcher:
  name: random
  metric: accuracy
  smaller_is_better: false
  max_length: {batches: 50}
  max_trials: )" +
         std::to_string(max_trials) +
         "\n  max_concurrent_trials: " + std::to_string(max_concurrent_trials) + "\n";
}

double LossOf(const nlohmann::json& hparams, int64_t length) {
  return hparams.dump().size() % 7 / 10.0 + 1.0 / static_cast<double>(length);
}

TEST(SingleSearcherTest, OneTrialToMaxLengthThenShutdown) {
  auto searcher = SearcherOf(kSingle);
  ASSERT_NE(searcher, nullptr);
  const auto start = searcher->Start();
  EXPECT_EQ(Brief(start), (std::vector<std::string>{"create 1", "train_to 1 300"}));
  EXPECT_EQ(start[0].hparams["layers"], 2);
  EXPECT_EQ(start[0].reason.rfind("single trial: ", 0), 0u) << start[0].reason;
  EXPECT_EQ(searcher->Progress(), 0.0);
  // A validation the trial made on its own before max_length changes nothing.
  EXPECT_TRUE(searcher->OnValidation(1, 100, 0.5).empty());
  const auto end = searcher->OnValidation(1, 300, 0.25);
  EXPECT_EQ(Brief(end), (std::vector<std::string>{"close 1", "shutdown"}));
  EXPECT_NE(end[0].reason.find("loss=0.25"), std::string::npos) << end[0].reason;
  EXPECT_EQ(searcher->Progress(), 1.0);
  // After the end, nothing more.
  EXPECT_TRUE(searcher->OnValidation(1, 300, 0.25).empty());
  EXPECT_TRUE(searcher->OnTrialExitedEarly(1).empty());
}

TEST(SingleSearcherTest, AnEarlyExitEndsTheSearch) {
  auto searcher = SearcherOf(kSingle);
  ASSERT_NE(searcher, nullptr);
  (void)searcher->Start();
  EXPECT_EQ(Brief(searcher->OnTrialExitedEarly(1)), (std::vector<std::string>{"shutdown"}));
}

TEST(SingleSearcherTest, MaxLengthInEpochsIsConvertedToBatches) {
  auto searcher = SearcherOf(R"(entrypoint: model_def:Trial
hyperparameters:
  global_batch_size: 32
records_per_epoch: 1000
searcher:
  name: single
  metric: loss
  max_length: {epochs: 2}
)");
  ASSERT_NE(searcher, nullptr);
  // 2 epochs of 1000 records in batches of 32 is 62.5 batches: 63.
  EXPECT_EQ(Brief(searcher->Start()), (std::vector<std::string>{"create 1", "train_to 1 63"}));
}

TEST(GridSearcherTest, OneTrialPerGridPoint) {
  auto searcher = SearcherOf(GridConfig(0));
  ASSERT_NE(searcher, nullptr);
  const auto run = RunToEnd(*searcher, LossOf);
  // int count 3 x categorical 2 = 6 trials, every point once, all at once with no limit.
  ASSERT_EQ(run.hparams.size(), 6u);
  std::set<std::string> points;
  for (const auto& [id, hparams] : run.hparams) {
    EXPECT_EQ(hparams["width"], 32);
    points.insert(hparams["act"].get<std::string>() + std::to_string(hparams["layers"].get<int>()));
  }
  EXPECT_EQ(points, (std::set<std::string>{"relu1", "relu2", "relu3", "tanh1", "tanh2", "tanh3"}));
  EXPECT_EQ(run.max_outstanding, 6u);
  EXPECT_EQ(run.closed.size(), 6u);
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.log.back().kind, SearcherOp::Kind::kShutdown);
  EXPECT_EQ(run.log[0].reason, "grid point 1 of 6: act=relu, layers=1, width=32");
  for (const auto& [id, batches] : run.trained) EXPECT_EQ(batches, 100);
}

TEST(GridSearcherTest, MaxConcurrentTrialsIsHonoured) {
  auto searcher = SearcherOf(GridConfig(2));
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  EXPECT_EQ(Brief(run.log),
            (std::vector<std::string>{"create 1", "train_to 1 100", "create 2", "train_to 2 100"}));
  // Each finished trial makes room for the next point.
  run.ReportNext(*searcher, LossOf);
  EXPECT_EQ(Brief(std::vector<SearcherOp>(run.log.begin() + 4, run.log.end())),
            (std::vector<std::string>{"close 1", "create 3", "train_to 3 100"}));
  // An early exit frees its slot too.
  run.Exit(*searcher, 2);
  EXPECT_EQ(run.log.back().request_id, 4);
  while (!run.outstanding.empty()) run.ReportNext(*searcher, LossOf);
  EXPECT_EQ(run.hparams.size(), 6u);
  EXPECT_EQ(run.max_outstanding, 2u);
  EXPECT_EQ(run.shutdowns, 1);
}

TEST(RandomSearcherTest, MaxTrialsWithinMaxConcurrentTrials) {
  auto searcher = SearcherOf(RandomConfig(7, 3));
  ASSERT_NE(searcher, nullptr);
  const auto run = RunToEnd(*searcher, LossOf);
  EXPECT_EQ(run.hparams.size(), 7u);
  EXPECT_EQ(run.max_outstanding, 3u);
  EXPECT_EQ(run.closed.size(), 7u);
  EXPECT_EQ(run.shutdowns, 1);
  for (const auto& [id, hparams] : run.hparams) {
    EXPECT_GE(hparams["layers"].get<int>(), 1);
    EXPECT_LE(hparams["layers"].get<int>(), 8);
  }
  EXPECT_EQ(searcher->Progress(), 1.0);
}

TEST(RandomSearcherTest, EarlyExitsCountAgainstMaxTrials) {
  auto searcher = SearcherOf(RandomConfig(3, 1));
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  run.Exit(*searcher, 1);
  EXPECT_EQ(Brief(run.log).back(), "train_to 2 50");
  run.Exit(*searcher, 2);
  run.Exit(*searcher, 3);
  EXPECT_EQ(run.hparams.size(), 3u);
  EXPECT_EQ(run.log.back().kind, SearcherOp::Kind::kShutdown);
}

TEST(RandomSearcherTest, SameSeedSameTrialsDifferentSeedDifferentTrials) {
  auto first = NewSearcher(ConfigOf(RandomConfig(5, 0)), 11);
  auto again = NewSearcher(ConfigOf(RandomConfig(5, 0)), 11);
  auto other = NewSearcher(ConfigOf(RandomConfig(5, 0)), 12);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  const auto a = (*first)->Start();
  const auto b = (*again)->Start();
  const auto c = (*other)->Start();
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a[0].hparams, c[0].hparams);
}

TEST(SearcherContractTest, ReplayingTheSameInputsGivesTheSameOps) {
  for (const std::string& yaml : {std::string(kSingle), GridConfig(2), RandomConfig(6, 2)}) {
    auto first = SearcherOf(yaml, 5);
    auto second = SearcherOf(yaml, 5);
    ASSERT_TRUE(first && second);
    const auto a = RunToEnd(*first, LossOf);
    const auto b = RunToEnd(*second, LossOf);
    EXPECT_EQ(a.log, b.log) << yaml;
  }
}

TEST(SearcherContractTest, ReportsThatDoNotCompleteAnOpAreIgnored) {
  auto searcher = SearcherOf(GridConfig(1));
  ASSERT_NE(searcher, nullptr);
  (void)searcher->Start();
  EXPECT_TRUE(searcher->OnValidation(1, 99, 0.1).empty());   // below the target
  EXPECT_TRUE(searcher->OnValidation(2, 100, 0.1).empty());  // not created yet
  EXPECT_TRUE(searcher->OnValidation(0, 100, 0.1).empty());  // no such trial
  EXPECT_TRUE(searcher->OnTrialExitedEarly(7).empty());
  EXPECT_EQ(Brief(searcher->OnValidation(1, 100, 0.1)),
            (std::vector<std::string>{"close 1", "create 2", "train_to 2 100"}));
  // A second report of the same work is a duplicate.
  EXPECT_TRUE(searcher->OnValidation(1, 100, 0.1).empty());
}

TEST(SearcherContractTest, SearchersThatCannotRunAreRefused) {
  // No counts: the parser refuses a grid; a hand-built config reaches NewSearcher.
  ExperimentConfig config = ConfigOf(GridConfig(1));
  config.hyperparameters[1].count.reset();
  auto searcher = NewSearcher(config, 1);
  ASSERT_FALSE(searcher.ok());
  EXPECT_EQ(searcher.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::experiments
