// Fuzz target: an experiment configuration as a user submits it (ParseExperimentConfig), then
// what the master does with one it accepts: its searcher is built and started, and its first
// trials report validations, so a configuration that parses can never crash the decider later.
// Also checks two of the header's promises: the effective configuration parses back to itself,
// and the configuration's lengths convert to batches.
#include <algorithm>
#include <cstdint>
#include <string>

#include "commands/experiments/experiment_config.h"
#include "commands/experiments/searcher.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using cairn::experiments::SearcherOp;

// Enough rounds of reports to reach ASHA's promotions; more only slows each input down.
constexpr int kMaxSearchRounds = 8;
constexpr size_t kMaxReportsPerRound = 32;

void Search(const cairn::experiments::ExperimentConfig& config, uint64_t seed) {
  auto searcher = cairn::experiments::NewSearcher(config, seed);
  if (!searcher.ok()) return;
  std::vector<SearcherOp> pending = (*searcher)->Start();
  for (int round = 0; round < kMaxSearchRounds && !pending.empty(); ++round) {
    std::vector<SearcherOp> next;
    size_t reports = 0;
    for (const SearcherOp& op : pending) {
      if (op.kind != SearcherOp::Kind::kTrainTo || reports == kMaxReportsPerRound) continue;
      ++reports;
      // Every other trial exits early; the rest report a metric that orders them by id.
      std::vector<SearcherOp> more =
          op.request_id % 2 == 0 ? (*searcher)->OnTrialExitedEarly(op.request_id)
                                 : (*searcher)->OnValidation(op.request_id, op.length_batches,
                                                             static_cast<double>(op.request_id));
      next.insert(next.end(), more.begin(), more.end());
    }
    pending = std::move(next);
    const double progress = (*searcher)->Progress();
    FUZZ_CHECK(progress >= 0 && progress <= 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The configuration arrives as a string of a JSON body.
  if (!IsValidUtf8(text)) return 0;
  auto config = cairn::experiments::ParseExperimentConfig(text);
  if (!config.ok()) return 0;

  auto reparsed = cairn::experiments::ParseExperimentConfig(config->effective.dump());
  FUZZ_CHECK(reparsed.ok());
  FUZZ_CHECK(reparsed->effective == config->effective);

  // "Never fails for a length of a config that ParseExperimentConfig returned."
  for (const auto& length : {config->searcher.max_length, config->min_validation_period,
                             config->min_checkpoint_period}) {
    FUZZ_CHECK(cairn::experiments::LengthInBatches(*config, length).ok());
  }
  (void)cairn::experiments::CheckpointDirectory(*config);
  Search(*config, config->experiment_seed.value_or(0));
  return 0;
}
