// Grid, random and single search: every trial is trained to max_length, at most
// max_concurrent_trials at a time (0 = all at once). They differ only in where a trial's
// hyperparameters come from: the next grid point, or the next sample of the seeded Rng (single
// is random search with one trial). A trial that exits early is not retried: it counts against
// the total, and its place goes to the next trial.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

class FixedLengthSearch final : public SearchMethod {
 public:
  // The n-th trial's hyperparameters (n from 1) and how they were chosen, in words.
  using NextTrial = std::function<std::pair<nlohmann::json, std::string>(int n)>;

  FixedLengthSearch(const SearchContext& context, int total, NextTrial next_trial)
      : context_(context), total_(total), next_trial_(std::move(next_trial)) {}

  void Start(SearchActions& actions) override {
    const int limit = context_.config.searcher.max_concurrent_trials;
    const int initial = limit == 0 ? total_ : std::min(total_, limit);
    for (int i = 0; i < initial; ++i) LaunchNext(actions);
  }

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    ++finished_;
    trained_.erase(request_id);
    actions.CloseTrial(request_id, LengthText("reached ") + ": " + context_.config.searcher.metric +
                                       "=" + FormatMetric(metric));
    LaunchNext(actions);
  }

  void OnTrialExitedEarly(int request_id, SearchActions& actions) override {
    ++finished_;
    trained_.erase(request_id);
    LaunchNext(actions);
  }

  void OnTrained(int request_id, int64_t total_batches) override {
    trained_[request_id] = std::min(total_batches, context_.max_length_batches);
  }

  // Finished trials count whole; trials in flight by the batches they trained.
  double Progress() const override {
    if (total_ == 0 || context_.max_length_batches <= 0) return 1.0;
    double done = finished_;
    for (const auto& [request_id, batches] : trained_) {
      done += static_cast<double>(batches) / static_cast<double>(context_.max_length_batches);
    }
    return done / total_;
  }

 private:
  std::string LengthText(const std::string& verb) const {
    const auto& searcher = context_.config.searcher;
    if (searcher.open_ended) return "no length: it runs until its code ends";
    if (!searcher.time_metric.empty()) {
      return verb + "max_time: " + searcher.time_metric + " " +
             std::to_string(context_.max_length_batches);
    }
    return verb + "max_length: " + std::to_string(context_.max_length_batches) + " batches";
  }

  void LaunchNext(SearchActions& actions) {
    if (created_ >= total_) return;
    ++created_;
    auto [hparams, why] = next_trial_(created_);
    const int id = actions.CreateTrial(hparams, why);
    actions.TrainTo(id, context_.max_length_batches, LengthText("train to "));
  }

  SearchContext context_;
  int total_;
  NextTrial next_trial_;
  int created_ = 0;
  int finished_ = 0;
  std::map<int, int64_t> trained_;  // trials in flight: request id -> batches trained, capped
};

}  // namespace

std::unique_ptr<SearchMethod> NewGridSearch(const SearchContext& context,
                                            std::vector<nlohmann::json> points) {
  const int total = static_cast<int>(points.size());
  auto shared = std::make_shared<const std::vector<nlohmann::json>>(std::move(points));
  return std::make_unique<FixedLengthSearch>(context, total, [shared, total](int n) {
    const auto& point = (*shared)[n - 1];
    return std::make_pair(point, "grid point " + std::to_string(n) + " of " +
                                     std::to_string(total) + ": " + DescribePoint(point));
  });
}

std::unique_ptr<SearchMethod> NewRandomSearch(const SearchContext& context) {
  const auto& searcher = context.config.searcher;
  const bool single = searcher.name == SearcherName::kSingle;
  const int total = searcher.max_trials;
  auto rng = std::make_shared<Rng>(context.seed);
  const HyperparameterSpace space = context.config.hyperparameters;
  return std::make_unique<FixedLengthSearch>(context, total, [rng, space, single, total](int n) {
    nlohmann::json hparams = SampleSpace(space, *rng);
    const std::string what =
        single ? std::string("single trial: ")
               : "random sample " + std::to_string(n) + " of " + std::to_string(total) + ": ";
    return std::make_pair(hparams, what + DescribePoint(hparams));
  });
}

}  // namespace cairn::experiments
