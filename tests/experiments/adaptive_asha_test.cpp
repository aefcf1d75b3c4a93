// adaptive_asha, legacy promotion-based rules (shared/reference/determined.md §b.5 brackets and
// §b.6 promotions). Expected numbers are worked out by hand from those formulas in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "commands/experiments/searcher.h"
#include "tests/experiments/search_run.h"

namespace cairn::experiments {
namespace {

std::string AshaConfig(const std::string& searcher_fields, const std::string& extra = "") {
  return "entrypoint: model_def:Trial\n"
         "hyperparameters:\n"
         "  lr: {type: log, minval: -4, maxval: -1}\n"
         "  layers: {type: int, minval: 1, maxval: 4}\n" +
         extra +
         "searcher:\n"
         "  name: adaptive_asha\n"
         "  metric: val_loss\n" +
         searcher_fields;
}

std::vector<AshaBracketPlan> Plan(const std::string& yaml) {
  auto plan = PlanAdaptiveAsha(ConfigOf(yaml));
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : std::vector<AshaBracketPlan>{};
}

TEST(AshaPlanTest, StandardModeBracketsTrialsAndRungLengths) {
  // max_rungs = min(5, floor(log4 1000) + 1 = 5, floor(log4 16) + 1 = 3) = 3; standard mode
  // takes rung counts (3-1)/2+1 = 2 .. 3, most rungs first: [3, 2]. Weights 4^2/3 and 4/2 share
  // 16 trials as floor(11.6) = 11 and floor(4.4) = 4, the leftover 1 to the first: [12, 4].
  // max_concurrent_trials 16 split evenly: 8 and 8. Rungs: 1000/16 = 62, 1000/4 = 250, 1000.
  const auto plan = Plan(AshaConfig("  max_length: {batches: 1000}\n  max_trials: 16\n"));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].num_rungs, 3);
  EXPECT_EQ(plan[0].max_trials, 12);
  EXPECT_EQ(plan[0].max_concurrent_trials, 8);
  EXPECT_EQ(plan[0].rung_lengths_batches, (std::vector<int64_t>{62, 250, 1000}));
  EXPECT_EQ(plan[1].num_rungs, 2);
  EXPECT_EQ(plan[1].max_trials, 4);
  EXPECT_EQ(plan[1].max_concurrent_trials, 8);
  EXPECT_EQ(plan[1].rung_lengths_batches, (std::vector<int64_t>{250, 1000}));
}

TEST(AshaPlanTest, RungCountsUseExactPowersOfTheDivisor) {
  // log(9)/log(3) must count as 2, giving 3 rungs: 1, 3, 9.
  auto plan = Plan(AshaConfig(
      "  max_length: {batches: 9}\n  max_trials: 9\n  divisor: 3\n  mode: aggressive\n"));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].rung_lengths_batches, (std::vector<int64_t>{1, 3, 9}));
  EXPECT_EQ(plan[0].max_trials, 9);
  // 10 batches, divisor 2, 4 rungs: 10/8, 10/4, 10/2 rounded down: 1, 2, 5, 10.
  plan =
      Plan(AshaConfig("  max_length: {batches: 10}\n  max_trials: 16\n  divisor: 2\n"
                      "  max_rungs: 4\n  mode: aggressive\n"));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].rung_lengths_batches, (std::vector<int64_t>{1, 2, 5, 10}));
}

TEST(AshaPlanTest, ConservativeModeWithoutAConcurrencyLimit) {
  // max_rungs = min(5, floor(log3 900) + 1 = 7, floor(log3 27) + 1 = 4) = 4: brackets [4,3,2,1]
  // with weights 27/4, 9/3, 3/2, 1/1 (sum 12.25) of 27 trials: 14, 6, 3, 2, plus 2 to the
  // first. Unlimited concurrency: each bracket max(2, divisor 3) = 3.
  const auto plan =
      Plan(AshaConfig("  max_length: {batches: 900}\n  max_trials: 27\n"
                      "  divisor: 3\n  mode: conservative\n"
                      "  max_concurrent_trials: 0\n"));
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].max_trials, 16);
  EXPECT_EQ(plan[1].max_trials, 6);
  EXPECT_EQ(plan[2].max_trials, 3);
  EXPECT_EQ(plan[3].max_trials, 2);
  for (const auto& bracket : plan) EXPECT_EQ(bracket.max_concurrent_trials, 3);
  EXPECT_EQ(plan[0].rung_lengths_batches, (std::vector<int64_t>{33, 100, 300, 900}));
  EXPECT_EQ(plan[3].rung_lengths_batches, (std::vector<int64_t>{900}));
}

TEST(AshaPlanTest, RungsInEpochsAreComputedInEpochsThenConverted) {
  // Rungs of 1, 2 and 4 epochs of 100 records in batches of 32: 4, 7 and 13 batches (rounded up).
  const auto plan = Plan(
      AshaConfig("  max_length: {epochs: 4}\n  max_trials: 4\n  divisor: 2\n  mode: aggressive\n",
                 "  global_batch_size: 32\nrecords_per_epoch: 100\n"));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].rung_lengths_batches, (std::vector<int64_t>{4, 7, 13}));
}

// One bracket of 3 rungs (1, 2, 4 batches), divisor 2, 4 trials all started at once.
std::string SmallAsha(bool smaller_is_better, int max_concurrent_trials = 4) {
  return AshaConfig(
      "  max_length: {batches: 4}\n  max_trials: 4\n  divisor: 2\n"
      "  mode: aggressive\n  max_rungs: 3\n  smaller_is_better: " +
      std::string(smaller_is_better ? "true" : "false") +
      "\n  max_concurrent_trials: " + std::to_string(max_concurrent_trials) + "\n");
}

using Ops = std::vector<std::string>;

// Metric sequences in which trials 2 and 4 are the better half at rung 0 and trial 4 is the better
// of the two at rung 1, given in the direction `smaller_is_better` ranks them.
void ExpectPromotionsAndStops(bool smaller_is_better) {
  const double sign = smaller_is_better ? 1 : -1;
  auto searcher = SearcherOf(SmallAsha(smaller_is_better));
  ASSERT_NE(searcher, nullptr);
  EXPECT_EQ(Brief(searcher->Start()),
            (Ops{"create 1", "train_to 1 1", "create 2", "train_to 2 1", "create 3", "train_to 3 1",
                 "create 4", "train_to 4 1"}));
  // Rung 0, divisor 2: with k results the top floor(k/2) move on.
  EXPECT_EQ(Brief(searcher->OnValidation(1, 1, sign * 0.5)), Ops{});  // 1 result: none
  auto ops = searcher->OnValidation(2, 1, sign * 0.3);  // 2 results: trial 2 is the top 1
  EXPECT_EQ(Brief(ops), (Ops{"train_to 2 2"}));
  EXPECT_EQ(ops[0].reason.rfind("rung 0 -> 1: top 1/2 of 2 by val_loss", 0), 0u) << ops[0].reason;
  EXPECT_EQ(Brief(searcher->OnValidation(3, 1, sign * 0.9)), Ops{});  // 3 results: still 1
  // 4 results: top 2; trial 4 is best. Rung 0 is complete, so trials 1 and 3 are closed.
  ops = searcher->OnValidation(4, 1, sign * 0.1);
  EXPECT_EQ(Brief(ops), (Ops{"train_to 4 2", "close 1", "close 3"}));
  EXPECT_EQ(ops[1].reason.rfind("stopped: below the rung 0 cutoff", 0), 0u) << ops[1].reason;
  // Rung 1: trial 2 first (alone: none promoted), then trial 4, better, goes to the top rung
  // and trial 2 is closed since nothing else can reach rung 1.
  EXPECT_EQ(Brief(searcher->OnValidation(2, 2, sign * 0.25)), Ops{});
  EXPECT_EQ(Brief(searcher->OnValidation(4, 2, sign * 0.2)), (Ops{"train_to 4 4", "close 2"}));
  EXPECT_EQ(Brief(searcher->OnValidation(4, 4, sign * 0.15)), (Ops{"close 4", "shutdown"}));
  EXPECT_EQ(searcher->Progress(), 1.0);
}

TEST(AshaSearchTest, PromotesTheTopFractionAndStopsTheRestSmallerIsBetter) {
  ExpectPromotionsAndStops(true);
}

TEST(AshaSearchTest, PromotesTheTopFractionAndStopsTheRestLargerIsBetter) {
  ExpectPromotionsAndStops(false);
}

TEST(AshaSearchTest, AWaitingTrialIsPromotedWhenTheRungGrows) {
  auto searcher = SearcherOf(SmallAsha(true));
  ASSERT_NE(searcher, nullptr);
  (void)searcher->Start();
  EXPECT_EQ(Brief(searcher->OnValidation(1, 1, 0.1)), Ops{});
  // Trial 2 is worse, but with 2 results the top 1 (trial 1, waiting) now moves on.
  const auto ops = searcher->OnValidation(2, 1, 0.5);
  EXPECT_EQ(Brief(ops), (Ops{"train_to 1 2"}));
  EXPECT_NE(ops[0].reason.find("as the rung grew"), std::string::npos) << ops[0].reason;
}

TEST(AshaSearchTest, EqualResultsRankInArrivalOrder) {
  auto searcher = SearcherOf(SmallAsha(true));
  ASSERT_NE(searcher, nullptr);
  (void)searcher->Start();
  EXPECT_EQ(Brief(searcher->OnValidation(1, 1, 0.3)), Ops{});
  // A tie goes after the earlier result, so trial 1 keeps the only promotion.
  EXPECT_EQ(Brief(searcher->OnValidation(2, 1, 0.3)), (Ops{"train_to 1 2"}));
}

TEST(AshaSearchTest, AnEarlyExitIsTheWorstResultAndFreesItsSlot) {
  // One trial at a time: trial 1's exit counts as a result and trial 2 takes its slot.
  auto searcher = SearcherOf(SmallAsha(true, 1));
  ASSERT_NE(searcher, nullptr);
  EXPECT_EQ(Brief(searcher->Start()), (Ops{"create 1", "train_to 1 1"}));
  EXPECT_EQ(Brief(searcher->OnTrialExitedEarly(1)), (Ops{"create 2", "train_to 2 1"}));
  // Trial 2 beats the exited trial 1 and is promoted at once.
  EXPECT_EQ(Brief(searcher->OnValidation(2, 1, 9.0)), (Ops{"train_to 2 2"}));
}

TEST(AshaSearchTest, AnExitedTrialThatWouldBePromotedFailsTheNextRung) {
  auto searcher = SearcherOf(SmallAsha(true));
  ASSERT_NE(searcher, nullptr);
  (void)searcher->Start();
  EXPECT_EQ(Brief(searcher->OnValidation(1, 1, 0.1)), Ops{});
  // Trial 1 waits for a promotion and exits meanwhile.
  EXPECT_EQ(Brief(searcher->OnTrialExitedEarly(1)), Ops{});
  // Trial 2's result would promote trial 1, which cannot train: no work for anyone.
  EXPECT_EQ(Brief(searcher->OnValidation(2, 1, 0.5)), Ops{});
  EXPECT_EQ(Brief(searcher->OnValidation(3, 1, 0.6)), Ops{});
  // Trial 4 completes rung 0 with 4 results: the top 2 are trial 4 and trial 1 (gone); rung 0
  // can get no more results, so the rest, trials 2 and 3, are closed.
  EXPECT_EQ(Brief(searcher->OnValidation(4, 1, 0.05)), (Ops{"train_to 4 2", "close 2", "close 3"}));
  // Trial 4 alone at rung 1 beside the failed trial 1 goes on: top 1 of 2.
  EXPECT_EQ(Brief(searcher->OnValidation(4, 2, 0.04)), (Ops{"train_to 4 4"}));
  EXPECT_EQ(Brief(searcher->OnValidation(4, 4, 0.03)), (Ops{"close 4", "shutdown"}));
}

double MetricOf(const nlohmann::json& hparams, int64_t length) {
  // Better with more training, and depending on the hyperparameters so that rungs disagree.
  const double lr = hparams["lr"].get<double>();
  return std::abs(std::log10(lr) + 2.5) + hparams["layers"].get<int>() * 0.1 +
         1.0 / static_cast<double>(length);
}

TEST(AshaSearchTest, MaxConcurrentTrialsIsHonouredAndEveryTrialEnds) {
  for (int limit : {1, 2, 3, 5}) {
    SCOPED_TRACE("max_concurrent_trials " + std::to_string(limit));
    // Standard mode, 2 brackets (3 and 2 rungs); 1 is fewer than the brackets.
    auto searcher = SearcherOf(AshaConfig("  max_length: {batches: 160}\n  max_trials: 20\n"
                                          "  max_concurrent_trials: " +
                                          std::to_string(limit) + "\n"),
                               3);
    ASSERT_NE(searcher, nullptr);
    const auto run = RunToEnd(*searcher, MetricOf);
    EXPECT_LE(run.max_outstanding, static_cast<size_t>(limit));
    EXPECT_EQ(run.max_outstanding, static_cast<size_t>(limit));
    EXPECT_EQ(run.hparams.size(), 20u);
    EXPECT_EQ(run.closed.size(), 20u);
    EXPECT_EQ(run.shutdowns, 1);
    EXPECT_EQ(run.log.back().kind, SearcherOp::Kind::kShutdown);
    EXPECT_EQ(searcher->Progress(), 1.0);
    // Some trial reached max_length, and not every trial did: ASHA stopped the bad ones.
    int full = 0;
    for (const auto& [id, batches] : run.trained) full += batches == 160 ? 1 : 0;
    EXPECT_GE(full, 1);
    EXPECT_LT(full, 20);
  }
}

TEST(AshaSearchTest, EarlyExitsEverywhereStillEndTheSearch) {
  auto searcher = SearcherOf(AshaConfig("  max_length: {batches: 64}\n  max_trials: 12\n"
                                        "  max_concurrent_trials: 3\n"),
                             9);
  ASSERT_NE(searcher, nullptr);
  SearchRun run;
  run.Apply(searcher->Start());
  int step = 0;
  while (!run.outstanding.empty() && step < 10000) {
    // Every third piece of work fails.
    if (++step % 3 == 0) {
      run.Exit(*searcher, run.outstanding.begin()->first);
    } else {
      run.ReportNext(*searcher, MetricOf);
    }
  }
  EXPECT_EQ(run.hparams.size(), 12u);
  EXPECT_EQ(run.closed.size() + run.exited.size(), 12u);
  EXPECT_LE(run.max_outstanding, 3u);
  EXPECT_EQ(run.shutdowns, 1);
}

TEST(AshaSearchTest, ReplayingTheSameInputsGivesTheSameOps) {
  const std::string yaml = AshaConfig(
      "  max_length: {batches: 256}\n  max_trials: 30\n  max_concurrent_trials: 4\n"
      "  mode: conservative\n");
  auto first = SearcherOf(yaml, 77);
  auto second = SearcherOf(yaml, 77);
  auto other = SearcherOf(yaml, 78);
  ASSERT_TRUE(first && second && other);
  const auto a = RunToEnd(*first, MetricOf);
  const auto b = RunToEnd(*second, MetricOf);
  const auto c = RunToEnd(*other, MetricOf);
  ASSERT_EQ(a.log.size(), b.log.size());
  for (size_t i = 0; i < a.log.size(); ++i) EXPECT_EQ(a.log[i], b.log[i]) << ToString(a.log[i]);
  EXPECT_NE(a.hparams, c.hparams);
}

TEST(AshaPlanTest, MoreBracketsThanTrialsIsRefused) {
  auto plan = PlanAdaptiveAsha(ConfigOf(
      AshaConfig("  max_length: {batches: 100}\n  max_trials: 2\n  bracket_rungs: [3, 2, 1]\n")));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::experiments
