// Internal to the searchers: a search method decides what to do; the driver (searcher.cpp) turns
// its actions into SearcherOps, numbers trials, holds back work beyond a concurrency cap, ignores
// reports that do not complete a kTrainTo, and emits kShutdown when every trial is done.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"

namespace cairn::experiments {

class SearchActions {
 public:
  virtual ~SearchActions() = default;
  // A new trial; returns its request id. The method must give it a TrainTo in the same call.
  virtual int CreateTrial(nlohmann::json hparams, std::string reason) = 0;
  // A new trial that begins from trial `parent`'s checkpoint of `parent_batches` (see
  // SearcherOp::clone_of); returns its request id. It too needs a TrainTo in the same call.
  virtual int CloneTrial(int parent, int64_t parent_batches, nlohmann::json hparams,
                         std::string reason) = 0;
  virtual void TrainTo(int request_id, int64_t length_batches, std::string reason) = 0;
  // Ignored for a trial that already exited.
  virtual void CloseTrial(int request_id, std::string reason) = 0;
};

class SearchMethod {
 public:
  virtual ~SearchMethod() = default;
  virtual void Start(SearchActions& actions) = 0;
  // The trial completed its TrainTo with `metric` (raw, as reported; may be NaN).
  virtual void OnValidation(int request_id, double metric, SearchActions& actions) = 0;
  // The trial exited early, whether it was training or waiting.
  virtual void OnTrialExitedEarly(int request_id, SearchActions& actions) = 0;
  // The trial has trained `total_batches` so far; only progress may change, never a decision.
  virtual void OnTrained(int /*request_id*/, int64_t /*total_batches*/) {}
  virtual double Progress() const = 0;
};

// Everything a method needs from the configuration, lengths already in batches.
struct SearchContext {
  ExperimentConfig config;  // a copy: a searcher outlives the caller's value
  int64_t max_length_batches = 0;
  uint64_t seed = 0;
};

std::unique_ptr<SearchMethod> NewGridSearch(const SearchContext& context,
                                            std::vector<nlohmann::json> points);
// single is random search with one trial.
std::unique_ptr<SearchMethod> NewRandomSearch(const SearchContext& context);
std::unique_ptr<SearchMethod> NewAdaptiveAshaSearch(const SearchContext& context,
                                                    std::vector<AshaBracketPlan> plan);
// Population-based training; lengths from config.searcher.length_per_round in batches.
std::unique_ptr<SearchMethod> NewPbtSearch(const SearchContext& context, int64_t round_batches);
// PreviewSearch's answer for pbt.
SearchPreview PreviewPbt(const SearcherConfig& searcher);

// "validation_loss=0.21" style formatting of a metric for reasons.
std::string FormatMetric(double value);

}  // namespace cairn::experiments
