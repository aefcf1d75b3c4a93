// The grid searcher: one trial per grid point, each trained to max_length, at most
// max_concurrent_trials at a time (0 = all at once). A trial that exits early is not retried.
#include <algorithm>

#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

class GridSearch final : public SearchMethod {
 public:
  GridSearch(const SearchContext& context, std::vector<nlohmann::json> points)
      : context_(context), points_(std::move(points)) {}

  void Start(SearchActions& actions) override {
    const int limit = context_.config.searcher.max_concurrent_trials;
    const size_t initial =
        limit == 0 ? points_.size() : std::min(points_.size(), static_cast<size_t>(limit));
    for (size_t i = 0; i < initial; ++i) LaunchNext(actions);
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
    return points_.empty() ? 1.0 : static_cast<double>(finished_) / points_.size();
  }

 private:
  void LaunchNext(SearchActions& actions) {
    if (next_ >= points_.size()) return;
    const auto& point = points_[next_];
    ++next_;
    const int id = actions.CreateTrial(point, "grid point " + std::to_string(next_) + " of " +
                                                  std::to_string(points_.size()) + ": " +
                                                  DescribePoint(point));
    actions.TrainTo(
        id, context_.max_length_batches,
        "train to max_length: " + std::to_string(context_.max_length_batches) + " batches");
  }

  SearchContext context_;
  std::vector<nlohmann::json> points_;
  size_t next_ = 0;
  size_t finished_ = 0;
};

}  // namespace

std::unique_ptr<SearchMethod> NewGridSearch(const SearchContext& context,
                                            std::vector<nlohmann::json> points) {
  return std::make_unique<GridSearch>(context, std::move(points));
}

}  // namespace cairn::experiments
