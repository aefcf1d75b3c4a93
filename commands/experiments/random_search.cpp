// The random searcher (and single, which is random search with one trial): max_trials trials
// with hyperparameters sampled from the seeded Rng, each trained to max_length, at most
// max_concurrent_trials at a time (0 = all at once). A trial that exits early counts against
// max_trials, and its slot goes to the next sample.
#include <algorithm>

#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

class RandomSearch final : public SearchMethod {
 public:
  explicit RandomSearch(const SearchContext& context) : context_(context), rng_(context.seed) {}

  void Start(SearchActions& actions) override {
    const auto& searcher = context_.config.searcher;
    const int limit = searcher.max_concurrent_trials;
    const int initial = limit == 0 ? searcher.max_trials : std::min(searcher.max_trials, limit);
    for (int i = 0; i < initial; ++i) LaunchNext(actions);
  }

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    ++finished_;
    actions.CloseTrial(request_id, "reached max_length (" +
                                       std::to_string(context_.max_length_batches) +
                                       " batches): " + context_.config.searcher.metric + "=" +
                                       FormatMetric(metric));
    LaunchNext(actions);
  }

  void OnTrialExitedEarly(int, SearchActions& actions) override {
    ++finished_;
    LaunchNext(actions);
  }

  double Progress() const override {
    return static_cast<double>(finished_) / context_.config.searcher.max_trials;
  }

 private:
  void LaunchNext(SearchActions& actions) {
    const auto& searcher = context_.config.searcher;
    if (created_ >= searcher.max_trials) return;
    ++created_;
    nlohmann::json hparams = SampleSpace(context_.config.hyperparameters, rng_);
    const std::string what = searcher.name == SearcherName::kSingle
                                 ? std::string("single trial: ")
                                 : "random sample " + std::to_string(created_) + " of " +
                                       std::to_string(searcher.max_trials) + ": ";
    const int id = actions.CreateTrial(hparams, what + DescribePoint(hparams));
    actions.TrainTo(
        id, context_.max_length_batches,
        "train to max_length: " + std::to_string(context_.max_length_batches) + " batches");
  }

  SearchContext context_;
  Rng rng_;
  int created_ = 0;
  int finished_ = 0;
};

}  // namespace

std::unique_ptr<SearchMethod> NewRandomSearch(const SearchContext& context) {
  return std::make_unique<RandomSearch>(context);
}

}  // namespace cairn::experiments
