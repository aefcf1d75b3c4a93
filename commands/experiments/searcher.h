// The searchers: pure deciders that turn an experiment's configuration and its trials' results
// into trial operations. A searcher is replayable: a new instance built from the same
// configuration and seed and fed the same calls in the same order returns the same operations,
// so the decider can rebuild one from the log. No I/O, no clock; randomness only from the seed.
// Not thread-safe: one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::experiments {

// One decision. kCreateTrial(id, hparams) is always followed (in the same or a later batch) by
// kTrainTo(id, L): train that trial until it has done L batches in total, then validate and report
// with Searcher::OnValidation. After that report the trial waits: a later kTrainTo (ASHA promotes
// it) or kCloseTrial (it is done: stop it, it will not get more work) follows. kShutdown comes
// once, last, when every trial is closed or has exited: the search is over.
struct SearcherOp {
  enum class Kind { kCreateTrial, kTrainTo, kCloseTrial, kShutdown };
  Kind kind = Kind::kCreateTrial;
  int request_id = 0;          // 1, 2, 3... in creation order; 0 for kShutdown
  nlohmann::json hparams;      // kCreateTrial: the trial's hyperparameters (nested maps as objects)
  int64_t length_batches = 0;  // kTrainTo: total batches the trial must have trained
  std::string reason;          // why, for people: "grid point 3 of 9: lr=0.01, layers=2"
  // kCreateTrial of a clone (pbt): the trial begins, at batch 0, from trial `clone_of`'s
  // checkpoint of `clone_at_batches` batches (its first saved at or after that count).
  int clone_of = 0;
  int64_t clone_at_batches = 0;

  bool operator==(const SearcherOp& other) const = default;
};

// "create", "train_to", "close", "shutdown".
const char* SearcherOpKindName(SearcherOp::Kind kind);
// "train_to 3 1000 (rung 1 -> 2: ...)", for logs and test failure messages.
std::string ToString(const SearcherOp& op);

// Bumped whenever a searcher could decide differently for the same configuration, seed and inputs.
// Recorded with each experiment (ExperimentCreated.searcher_version).
// 2: adaptive_asha's stopping rule for max_time + time_metric, open-ended lengths.
inline constexpr uint32_t kSearcherVersion = 2;

class Searcher {
 public:
  virtual ~Searcher();
  // The first operations. Call once, first.
  virtual std::vector<SearcherOp> Start() = 0;
  // `request_id` validated after `length_batches` batches in total with searcher.metric = `metric`
  // (NaN counts as the worst possible value). A report below the length of the trial's current
  // kTrainTo (a validation the trial made on its own, e.g. min_validation_period) or for a trial
  // without one is ignored and returns nothing.
  virtual std::vector<SearcherOp> OnValidation(int request_id, int64_t length_batches,
                                               double metric) = 0;
  // `request_id` exited without finishing its work (errored past max_restarts, killed, invalid
  // hyperparameters). It is done: its slot may go to another trial, it gets no more operations, and
  // the searchers count it as finished with the worst metric. Unknown or done trials are ignored.
  virtual std::vector<SearcherOp> OnTrialExitedEarly(int request_id) = 0;
  // `request_id` has trained `total_batches` in all (a TRAIN workload's result). It decides
  // nothing; it lets Progress() count work in flight, so that an experiment stopped half way
  // shows how far it came.
  virtual void OnTrained(int request_id, int64_t total_batches) = 0;
  // 0..1, how far the search has come; 1 once kShutdown was emitted.
  virtual double Progress() const = 0;
};

// The searcher that `config.searcher` names: single, grid, random, adaptive_asha (legacy,
// promotion-based) or pbt. `seed` drives random sampling (random, adaptive_asha); record it with
// the experiment. Lengths are converted to batches with LengthInBatches. InvalidArgument when the
// configuration cannot be searched (a grid without counts, more ASHA brackets than trials).
Result<std::unique_ptr<Searcher>> NewSearcher(const ExperimentConfig& config, uint64_t seed);

// The plan adaptive_asha follows, exposed so that tests and previews can check it: one bracket per
// entry, most aggressive (most rungs) first.
struct AshaBracketPlan {
  int num_rungs = 1;
  int max_trials = 1;
  int max_concurrent_trials = 1;
  std::vector<int64_t> rung_lengths_batches;  // one per rung, increasing; the last is max_length
  std::vector<int64_t> rung_lengths_units;    // the same in the searcher's unit
};
Result<std::vector<AshaBracketPlan>> PlanAdaptiveAsha(const ExperimentConfig& config);

// What a search will do, as Determined's preview-hp-search tells it before it runs: how many
// trials train how far. `length_unit` is max_length's unit, or time_metric under max_time.
struct SearchPreviewEntry {
  int count = 0;
  bool to_completion = false;  // trained to max_length (single, grid, random)
  int64_t length = 0;          // otherwise: the length those trials stop at
};
struct SearchPreview {
  std::string length_unit;
  std::vector<SearchPreviewEntry> entries;  // adaptive_asha: by length, shortest first
};
// InvalidArgument for a search whose trials cannot be counted (a grid without values).
Result<SearchPreview> PreviewSearch(const ExperimentConfig& config);

}  // namespace cairn::experiments
