// Population-based training: its configuration, rounds, exploit and explore steps, early exits
// and preview.
#include <gtest/gtest.h>

#include <cmath>

#include "commands/experiments/hyperparameters.h"
#include "commands/experiments/searcher.h"
#include "tests/experiments/search_run.h"

namespace cairn::experiments {
namespace {

std::string PbtConfig(int population, int rounds, double truncate, double resample = 0,
                      const std::string& extra = "") {
  return R"(entrypoint: model_def:Trial
hyperparameters:
  lr: {type: double, minval: 0.001, maxval: 1}
  layers: {type: int, minval: 1, maxval: 10}
  act: {type: categorical, vals: [relu, tanh, gelu]}
  width: 32
searcher:
  name: pbt
  metric: loss
  population_size: )" +
         std::to_string(population) + "\n  num_rounds: " + std::to_string(rounds) +
         "\n  length_per_round: {batches: 100}\n  replace_function: {truncate_fraction: " +
         std::to_string(truncate) +
         "}\n  explore_function: {resample_probability: " + std::to_string(resample) +
         ", perturb_factor: 0.2}\n" + extra;
}

const SearcherOp* FindOp(const std::vector<SearcherOp>& ops, SearcherOp::Kind kind, int id) {
  for (const auto& op : ops) {
    if (op.kind == kind && op.request_id == id) return &op;
  }
  return nullptr;
}

TEST(PbtSearcherTest, EachRoundClosesTheWorstAndClonesTheBestFromTheirRoundsCheckpoint) {
  auto searcher = SearcherOf(PbtConfig(4, 3, 0.5));
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  EXPECT_EQ(Brief(run.log),
            (std::vector<std::string>{"create 1", "train_to 1 100", "create 2", "train_to 2 100",
                                      "create 3", "train_to 3 100", "create 4", "train_to 4 100"}));
  // The round waits for the whole population.
  const std::map<int, double> round1 = {{1, 0.1}, {2, 0.4}, {3, 0.2}, {4, 0.3}};
  for (int id : {1, 2, 3}) {
    EXPECT_TRUE(searcher->OnValidation(id, 100, round1.at(id)).empty()) << id;
    run.outstanding.erase(id);
    run.trained[id] = 100;
  }
  run.outstanding.erase(4);
  run.trained[4] = 100;
  const auto ops = searcher->OnValidation(4, 100, round1.at(4));
  run.Apply(ops);
  EXPECT_EQ(Brief(ops), (std::vector<std::string>{"close 4", "close 2", "create 5",
                                                  "train_to 5 100", "create 6", "train_to 6 100",
                                                  "train_to 1 200", "train_to 3 200"}));
  // The clones: of the best two, from their checkpoints of round 1, with explored values.
  const SearcherOp* clone1 = FindOp(ops, SearcherOp::Kind::kCreateTrial, 5);
  const SearcherOp* clone3 = FindOp(ops, SearcherOp::Kind::kCreateTrial, 6);
  ASSERT_TRUE(clone1 && clone3);
  EXPECT_EQ(clone1->clone_of, 1);
  EXPECT_EQ(clone3->clone_of, 3);
  EXPECT_EQ(clone1->clone_at_batches, 100);
  EXPECT_NE(clone1->reason.find("clone of trial request 1 (loss=0.1, rank 1 of 4)"),
            std::string::npos)
      << clone1->reason;
  for (const auto& [clone, parent] : {std::pair{clone1, 1}, std::pair{clone3, 3}}) {
    const nlohmann::json& before = run.hparams[parent];
    const nlohmann::json& after = clone->hparams;
    const double lr = before["lr"].get<double>();
    EXPECT_TRUE(std::abs(after["lr"].get<double>() - std::min(lr * 1.2, 1.0)) < 1e-12 ||
                std::abs(after["lr"].get<double>() - std::max(lr * 0.8, 0.001)) < 1e-12)
        << before << " -> " << after;
    const int64_t layers = before["layers"].get<int64_t>();
    EXPECT_TRUE(after["layers"] == std::clamp<int64_t>(std::ceil(layers * 1.2), 1, 10) ||
                after["layers"] == std::clamp<int64_t>(std::floor(layers * 0.8), 1, 10))
        << before << " -> " << after;
    EXPECT_EQ(after["act"], before["act"]);  // categorical: kept
    EXPECT_EQ(after["width"], 32);
  }
  const SearcherOp* close2 = FindOp(ops, SearcherOp::Kind::kCloseTrial, 2);
  ASSERT_NE(close2, nullptr);
  EXPECT_NE(close2->reason.find("round 1: among the worst 2 of 4 (loss=0.4, rank 4)"),
            std::string::npos)
      << close2->reason;

  // Two more rounds: the clones count their own rounds from 0; after the last, all close.
  int guard = 0;
  while (!run.outstanding.empty() && ++guard < 100) {
    run.ReportNext(*searcher, [](const nlohmann::json& hparams, int64_t length) {
      return hparams["lr"].get<double>() + 1.0 / static_cast<double>(length);
    });
  }
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.hparams.size(), 8u);  // 4, then 2 clones after each of rounds 1 and 2
  EXPECT_EQ(run.closed.size(), 8u);
  EXPECT_DOUBLE_EQ(searcher->Progress(), 1.0);
  int clones = 0;
  for (const auto& op : run.log) {
    if (op.kind == SearcherOp::Kind::kCreateTrial && op.clone_of != 0) {
      ++clones;
      EXPECT_LT(op.clone_of, op.request_id);
    }
  }
  EXPECT_EQ(clones, 4);
}

TEST(PbtSearcherTest, ATrialThatExitsEarlyRanksWorstAndIsNeverCloned) {
  auto searcher = SearcherOf(PbtConfig(4, 2, 0.25));
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  run.Exit(*searcher, 1);  // the best by hparams would not matter: it is gone
  for (int id : {2, 3}) {
    run.outstanding.erase(id);
    run.trained[id] = 100;
    EXPECT_TRUE(searcher->OnValidation(id, 100, 0.5 - id * 0.1).empty());
  }
  run.outstanding.erase(4);
  run.trained[4] = 100;
  const auto ops = searcher->OnValidation(4, 100, 0.9);
  run.Apply(ops);
  // Trial 1 is the worst (exited): dropped, not closed. Trial 3 (0.2) is cloned.
  EXPECT_EQ(Brief(ops), (std::vector<std::string>{"create 5", "train_to 5 100", "train_to 3 200",
                                                  "train_to 2 200", "train_to 4 200"}));
  EXPECT_EQ(FindOp(ops, SearcherOp::Kind::kCreateTrial, 5)->clone_of, 3);
  int guard = 0;
  while (!run.outstanding.empty() && ++guard < 100) {
    run.ReportNext(*searcher, [](const nlohmann::json&, int64_t) { return 0.5; });
  }
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.closed.size(), 4u);  // 2, 3, 4 and the clone
}

TEST(PbtSearcherTest, APopulationThatAllExitsEndsTheSearch) {
  auto searcher = SearcherOf(PbtConfig(2, 3, 0.5));
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  run.Exit(*searcher, 1);
  run.Exit(*searcher, 2);
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.hparams.size(), 2u);
}

TEST(PbtSearcherTest, LargerIsBetterRanksTheOtherWayAndReplayGivesTheSameOps) {
  const std::string yaml = PbtConfig(6, 3, 0.34, 0.5, "  smaller_is_better: false\n");
  auto metric = [](const nlohmann::json& hparams, int64_t length) {
    return hparams["lr"].get<double>() * static_cast<double>(length);
  };
  auto first = SearcherOf(yaml, 9);
  auto second = SearcherOf(yaml, 9);
  ASSERT_TRUE(first && second);
  const SearchRun a = RunToEnd(*first, metric);
  const SearchRun b = RunToEnd(*second, metric);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.shutdowns, 1);
  // Larger is better: each clone's parent had the largest lr of its round among those left.
  for (const auto& op : a.log) {
    if (op.kind != SearcherOp::Kind::kCreateTrial || op.clone_of == 0) continue;
    EXPECT_NE(op.reason.find("rank 1 of 6"), std::string::npos)
        << "the first clone of a round is of the best: " << op.reason;
    break;
  }
}

TEST(PbtConfigTest, PbtsFieldsAreReadCheckedAndShownInTheEffectiveConfig) {
  auto parsed = ParseExperimentConfig(PbtConfig(8, 4, 0.25));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->searcher.name, SearcherName::kPbt);
  EXPECT_EQ(parsed->searcher.population_size, 8);
  EXPECT_EQ(parsed->searcher.num_rounds, 4);
  EXPECT_EQ(parsed->searcher.max_length.value, 400);
  const auto& searcher = parsed->effective["searcher"];
  EXPECT_EQ(searcher["length_per_round"]["batches"], 100);
  EXPECT_EQ(searcher["replace_function"]["truncate_fraction"], 0.25);
  EXPECT_EQ(searcher["explore_function"]["perturb_factor"], 0.2);
  // The effective form parses back to the same search.
  auto again = ParseExperimentConfig(parsed->effective.dump());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->effective["searcher"], searcher);

  auto error = [](const std::string& yaml) {
    auto result = ParseExperimentConfig(yaml);
    return result.ok() ? std::string("(parsed)") : result.status().message();
  };
  EXPECT_NE(error(PbtConfig(8, 4, 0.6)).find("truncate_fraction: must be between 0 and 0.5"),
            std::string::npos)
      << error(PbtConfig(8, 4, 0.6));
  std::string no_explore = PbtConfig(8, 4, 0.25);
  no_explore = no_explore.substr(0, no_explore.find("  explore_function"));
  EXPECT_NE(error(no_explore).find("explore_function"), std::string::npos) << error(no_explore);
  EXPECT_NE(error(PbtConfig(8, 4, 0.25, 0, "  max_length: {batches: 5}\n")).find("max_length"),
            std::string::npos);
  EXPECT_NE(error(PbtConfig(0, 4, 0.25)).find("population_size"), std::string::npos);
  // Every trial the search would make counts against the cap.
  EXPECT_NE(error(PbtConfig(1000, 500, 0.5)).find("makes more than 100000 trials"),
            std::string::npos)
      << error(PbtConfig(1000, 500, 0.5));
}

TEST(PbtConfigTest, ThePreviewCountsTrialsByHowFarTheyTrain) {
  // 4 members, 3 rounds, 2 replaced a round: 8 trials. With equal results the newest two stop
  // each round: after round 1 two at 100; after round 2 the two clones at 100; at the end two
  // originals at 300 and two clones at 100.
  auto preview = PreviewSearch(ConfigOf(PbtConfig(4, 3, 0.5)));
  ASSERT_TRUE(preview.ok()) << preview.status().ToString();
  EXPECT_EQ(preview->length_unit, "batches");
  int total = 0;
  std::map<int64_t, int> by_length;
  for (const auto& entry : preview->entries) {
    total += entry.count;
    by_length[entry.length] += entry.count;
  }
  EXPECT_EQ(total, 8);
  EXPECT_EQ(by_length, (std::map<int64_t, int>{{100, 6}, {300, 2}}));
}

TEST(ExplorePointTest, PerturbsNumbersWithinTheirRangesAndKeepsTheRest) {
  auto config = ConfigOf(PbtConfig(2, 2, 0.5));
  Rng rng(3);
  const nlohmann::json old = {{"lr", 0.9}, {"layers", 10}, {"act", "tanh"}, {"width", 32}};
  for (int i = 0; i < 50; ++i) {
    const nlohmann::json next = ExplorePoint(config.hyperparameters, old, 0, 0.5, rng);
    EXPECT_TRUE(next["lr"] == 1.0 || std::abs(next["lr"].get<double>() - 0.45) < 1e-12) << next;
    EXPECT_TRUE(next["layers"] == 10 || next["layers"] == 5) << next;
    EXPECT_EQ(next["act"], "tanh");
    EXPECT_EQ(next["width"], 32);
  }
  // Resampled every time: anywhere in the space.
  bool changed = false;
  for (int i = 0; i < 50; ++i) {
    const nlohmann::json next = ExplorePoint(config.hyperparameters, old, 1, 0.5, rng);
    const double lr = next["lr"].get<double>();
    EXPECT_TRUE(lr >= 0.001 && lr < 1) << next;
    changed |= next["act"] != "tanh";
  }
  EXPECT_TRUE(changed);
}

}  // namespace
}  // namespace cairn::experiments
