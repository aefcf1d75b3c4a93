// Population-based training (Jaderberg et al. 2017, as Determined ran it before 0.18): the
// population trains a round at a time; when every member has reported the round, the worst
// truncate_fraction are closed, as many clones of the best begin from their parents' checkpoints
// of that round with explored hyperparameters, and the rest (the parents too) train another round.
// After num_rounds rounds every member is closed. A member that exits early counts as the worst
// result from then on; it is never cloned and, once among the worst, is dropped.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

class PbtSearch final : public SearchMethod {
 public:
  PbtSearch(const SearchContext& context, int64_t round_batches)
      : context_(context), round_batches_(round_batches), rng_(context.seed) {}

  void Start(SearchActions& actions) override {
    const int population = Config().population_size;
    for (int i = 1; i <= population; ++i) {
      nlohmann::json hparams = SampleSpace(context_.config.hyperparameters, rng_);
      const int id = actions.CreateTrial(hparams, "population member " + std::to_string(i) +
                                                      " of " + std::to_string(population) + ": " +
                                                      DescribePoint(hparams));
      members_[id].hparams = std::move(hparams);
      actions.TrainTo(id, round_batches_, RoundText(1));
    }
    population_ = population;
  }

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    auto member = members_.find(request_id);
    if (member == members_.end()) return;
    ++member->second.rounds;
    // Ranked smallest first; NaN is the worst result.
    double ranked = Config().smaller_is_better ? metric : -metric;
    if (std::isnan(ranked)) ranked = kWorst;
    results_[request_id] = {ranked, metric};
    EndRoundIfComplete(actions);
  }

  void OnTrialExitedEarly(int request_id, SearchActions& actions) override {
    auto member = members_.find(request_id);
    if (member == members_.end() || member->second.exited) return;
    member->second.exited = true;
    results_[request_id] = {kWorst, std::numeric_limits<double>::quiet_NaN()};
    EndRoundIfComplete(actions);
  }

  void OnTrained(int request_id, int64_t total_batches) override {
    auto member = members_.find(request_id);
    if (member != members_.end()) member->second.trained = total_batches;
  }

  // Batches trained by every member there has been, of the population's rounds in all.
  double Progress() const override {
    const double expected =
        static_cast<double>(round_batches_) * Config().population_size * Config().num_rounds;
    double trained = 0;
    for (const auto& [id, member] : members_) trained += static_cast<double>(member.trained);
    return expected <= 0 ? 1.0 : trained / expected;
  }

 private:
  static constexpr double kWorst = std::numeric_limits<double>::max();

  struct Member {
    nlohmann::json hparams;
    int rounds = 0;       // rounds it completed
    bool exited = false;  // exited early: counts as the worst result from then on
    int64_t trained = 0;  // batches, for progress
  };
  struct Result {
    double ranked = 0;  // smaller is better; kWorst for an early exit
    double metric = 0;  // as reported
  };

  const SearcherConfig& Config() const { return context_.config.searcher; }

  std::string RoundText(int round) const {
    return "round " + std::to_string(round) + " of " + std::to_string(Config().num_rounds) +
           ": train to " + std::to_string(round_batches_ * round) + " batches";
  }

  std::string ResultText(const Result& result) const {
    if (result.ranked == kWorst && std::isnan(result.metric)) return "exited early";
    return Config().metric + "=" + FormatMetric(result.metric);
  }

  void EndRoundIfComplete(SearchActions& actions) {
    if (static_cast<int>(results_.size()) < population_) return;
    ++rounds_completed_;
    std::vector<std::pair<int, Result>> ranking(results_.begin(), results_.end());
    results_.clear();
    // Best first; ties go to the older trial.
    std::stable_sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
      return a.second.ranked < b.second.ranked;
    });
    const int size = static_cast<int>(ranking.size());
    const std::string round = std::to_string(rounds_completed_);
    if (rounds_completed_ >= Config().num_rounds) {
      for (int i = 0; i < size; ++i) {
        const auto& [id, result] = ranking[static_cast<size_t>(i)];
        if (members_[id].exited) continue;
        actions.CloseTrial(id, "the last round is done: " + ResultText(result) + ", rank " +
                                   std::to_string(i + 1) + " of " + std::to_string(size));
      }
      population_ = 0;
      return;
    }
    const int truncate = PbtReplaced(Config(), size);
    int next_population = 0;
    // Exploit: the worst `truncate` make way.
    for (int i = size - truncate; i < size; ++i) {
      const auto& [id, result] = ranking[static_cast<size_t>(i)];
      if (members_[id].exited) continue;
      actions.CloseTrial(id, "round " + round + ": among the worst " + std::to_string(truncate) +
                                 " of " + std::to_string(size) + " (" + ResultText(result) +
                                 ", rank " + std::to_string(i + 1) + ")");
    }
    // Explore: a clone of each of the best `truncate`, from its checkpoint of this round.
    for (int i = 0; i < truncate && i < size - truncate; ++i) {
      const auto& [parent, result] = ranking[static_cast<size_t>(i)];
      const Member& source = members_[parent];
      if (source.exited) continue;
      nlohmann::json hparams =
          ExplorePoint(context_.config.hyperparameters, source.hparams,
                       Config().resample_probability, Config().perturb_factor, rng_);
      const std::string reason =
          "round " + round + ": clone of trial request " + std::to_string(parent) + " (" +
          ResultText(result) + ", rank " + std::to_string(i + 1) + " of " + std::to_string(size) +
          ") from its checkpoint at " + std::to_string(round_batches_ * source.rounds) +
          " batches, explored: " + DescribePoint(hparams);
      Member clone;
      clone.hparams = hparams;
      const int id =
          actions.CloneTrial(parent, round_batches_ * source.rounds, std::move(hparams), reason);
      members_[id] = std::move(clone);
      actions.TrainTo(id, round_batches_, RoundText(1) + " of its own");
      ++next_population;
    }
    // The rest train another round; an exited one stays in the ranking as the worst.
    for (int i = 0; i < size - truncate; ++i) {
      const int id = ranking[static_cast<size_t>(i)].first;
      Member& member = members_[id];
      ++next_population;
      if (member.exited) {
        results_[id] = {kWorst, std::numeric_limits<double>::quiet_NaN()};
        continue;
      }
      actions.TrainTo(id, round_batches_ * (member.rounds + 1), RoundText(member.rounds + 1));
    }
    population_ = next_population;
    // Every member left has exited: nothing more will report.
    if (population_ > 0 && static_cast<int>(results_.size()) == population_) {
      EndRoundIfComplete(actions);
    }
  }

  SearchContext context_;
  const int64_t round_batches_;
  Rng rng_;
  std::map<int, Member> members_;  // request id -> member
  std::map<int, Result> results_;  // this round's, by request id
  int population_ = 0;             // members this round waits for
  int rounds_completed_ = 0;
};

}  // namespace

std::unique_ptr<SearchMethod> NewPbtSearch(const SearchContext& context, int64_t round_batches) {
  return std::make_unique<PbtSearch>(context, round_batches);
}

// As if every trial scored the same: ties go to the older trial, so each round the newest
// `replaced` are closed and the oldest `replaced` cloned. The counts hold whatever the metrics;
// which trials live longest is the metrics' to say. So the population's oldest size - replaced
// train every round; the rest of the population, and every clone, one round each.
SearchPreview PreviewPbt(const SearcherConfig& searcher) {
  SearchPreview preview;
  preview.length_unit = LengthUnitName(searcher.length_per_round.unit);
  const int size = searcher.population_size;
  const int replaced = PbtReplaced(searcher, size);
  const int64_t round = searcher.length_per_round.value;
  std::map<int64_t, int> stopped_at;
  stopped_at[round] += replaced * searcher.num_rounds;
  stopped_at[round * searcher.num_rounds] += size - replaced;
  for (const auto& [length, count] : stopped_at) {
    if (count > 0) preview.entries.push_back({count, false, length});
  }
  return preview;
}

}  // namespace cairn::experiments
