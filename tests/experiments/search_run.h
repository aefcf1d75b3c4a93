// Test support for the searchers: plays the decider's part (runs every kTrainTo it is given and
// reports a metric), checks the protocol of the ops on the way, and records what happened.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"

namespace cairn::experiments {

inline ExperimentConfig ConfigOf(const std::string& yaml) {
  auto parsed = ParseExperimentConfig(yaml);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : ExperimentConfig{};
}

inline std::unique_ptr<Searcher> SearcherOf(const std::string& yaml, uint64_t seed = 1) {
  auto searcher = NewSearcher(ConfigOf(yaml), seed);
  EXPECT_TRUE(searcher.ok()) << searcher.status().ToString();
  return searcher.ok() ? std::move(*searcher) : nullptr;
}

// "create 1", "train_to 1 100", "close 1", "shutdown": ops without hparams and reasons.
inline std::string Brief(const SearcherOp& op) {
  std::string out = SearcherOpKindName(op.kind);
  if (op.kind != SearcherOp::Kind::kShutdown) out += " " + std::to_string(op.request_id);
  if (op.kind == SearcherOp::Kind::kTrainTo) out += " " + std::to_string(op.length_batches);
  return out;
}

inline std::vector<std::string> Brief(const std::vector<SearcherOp>& ops) {
  std::vector<std::string> out;
  for (const auto& op : ops) out.push_back(Brief(op));
  return out;
}

// What a run did, checked op by op against the contract in searcher.h.
struct SearchRun {
  std::vector<SearcherOp> log;
  std::map<int, nlohmann::json> hparams;  // every created trial
  std::map<int, int64_t> outstanding;     // trials with an unanswered kTrainTo
  std::map<int, int64_t> trained;         // batches each trial has trained
  std::set<int> closed;
  std::set<int> exited;
  size_t max_outstanding = 0;
  int shutdowns = 0;

  void Apply(const std::vector<SearcherOp>& ops) {
    for (const auto& op : ops) {
      SCOPED_TRACE(ToString(op));
      EXPECT_EQ(shutdowns, 0) << "an op after kShutdown";
      EXPECT_FALSE(op.reason.empty());
      log.push_back(op);
      switch (op.kind) {
        case SearcherOp::Kind::kCreateTrial:
          EXPECT_EQ(op.request_id, static_cast<int>(hparams.size()) + 1);
          hparams[op.request_id] = op.hparams;
          break;
        case SearcherOp::Kind::kTrainTo:
          EXPECT_TRUE(hparams.count(op.request_id));
          EXPECT_FALSE(closed.count(op.request_id) || exited.count(op.request_id));
          EXPECT_FALSE(outstanding.count(op.request_id));
          EXPECT_GT(op.length_batches, trained[op.request_id]);
          outstanding[op.request_id] = op.length_batches;
          break;
        case SearcherOp::Kind::kCloseTrial:
          EXPECT_TRUE(hparams.count(op.request_id));
          EXPECT_FALSE(outstanding.count(op.request_id)) << "closed while training";
          EXPECT_TRUE(closed.insert(op.request_id).second) << "closed twice";
          break;
        case SearcherOp::Kind::kShutdown:
          ++shutdowns;
          EXPECT_TRUE(outstanding.empty());
          EXPECT_EQ(closed.size() + exited.size(), hparams.size());
          break;
      }
      max_outstanding = std::max(max_outstanding, outstanding.size());
    }
  }

  // Reports the lowest-numbered outstanding trial with metric(hparams, length).
  void ReportNext(Searcher& searcher,
                  const std::function<double(const nlohmann::json&, int64_t)>& metric) {
    const auto [id, length] = *outstanding.begin();
    outstanding.erase(id);
    trained[id] = length;
    Apply(searcher.OnValidation(id, length, metric(hparams[id], length)));
  }

  void Exit(Searcher& searcher, int id) {
    outstanding.erase(id);
    exited.insert(id);
    Apply(searcher.OnTrialExitedEarly(id));
  }
};

// Starts `searcher` and reports every kTrainTo until nothing is outstanding.
inline SearchRun RunToEnd(Searcher& searcher,
                          const std::function<double(const nlohmann::json&, int64_t)>& metric) {
  SearchRun run;
  run.Apply(searcher.Start());
  int guard = 0;
  while (!run.outstanding.empty() && ++guard < 100000) run.ReportNext(searcher, metric);
  return run;
}

}  // namespace cairn::experiments
