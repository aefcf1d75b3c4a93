// adaptive_asha: brackets chosen by mode, each an asynchronous successive halving search whose
// rungs train to max_length / divisor^k. Two rules, by how the configuration gives the length:
//  - max_length (Determined <= 0.37, shared/reference/determined.md §b.6): promotion. A rung
//    promotes the top 1/divisor of its results to the next rung as they arrive, and once every
//    trial has reported at rung 0, the trials no rung can promote any more are closed.
//  - max_time + time_metric (Determined 0.38, §b.4): stopping. A trial that reaches a rung goes on
//    while it ranks in the top 1/divisor of that rung's results so far, and is stopped (closed)
//    otherwise; every stop makes room for a new trial while max_trials lasts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "base/encoding.h"
#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

// An exited trial's result: worse than any real one.
constexpr double kWorst = std::numeric_limits<double>::infinity();

// The largest k with divisor^k <= x, by multiplication so that exact powers (log(9)/log(3)) are
// not lost to rounding.
int FloorLog(double x, double divisor) {
  int k = 0;
  double power = 1;
  while (power * divisor <= x && k < 64) {
    power *= divisor;
    ++k;
  }
  return k;
}

std::string FormatNumber(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return FormatMetric(value);
}

std::string FormatResult(double raw) { return std::isnan(raw) ? "exited" : FormatMetric(raw); }

// A result as the rungs rank it, smaller being better: a larger-is-better metric is negated, NaN
// is the worst.
double RankValue(const SearchContext& context, double metric) {
  const double value = context.config.searcher.smaller_is_better ? metric : -metric;
  return std::isnan(value) ? kWorst : value;
}

// What the tournament asks of a bracket: its own trials' results.
// Both rules share its plan, its budget and how it makes a trial.
class Bracket {
 public:
  Bracket(int index, int bracket_count, AshaBracketPlan plan, const SearchContext& context,
          Rng& rng)
      : index_(index),
        bracket_count_(bracket_count),
        plan_(std::move(plan)),
        context_(context),
        rng_(rng) {}
  virtual ~Bracket() = default;
  void Start(SearchActions& actions) {
    const int initial = std::min(plan_.max_concurrent_trials, plan_.max_trials);
    for (int i = 0; i < initial; ++i) CreateTrial(actions);
  }
  virtual void OnValidation(int request_id, double metric, SearchActions& actions) = 0;
  virtual void OnTrialExitedEarly(int request_id, SearchActions& actions) = 0;
  virtual double Progress() const = 0;

 protected:
  // A new trial with sampled hyperparameters; `rule` says which bracket made it, for its reason.
  virtual void CreateTrial(SearchActions& actions) = 0;
  int NewTrial(SearchActions& actions, const std::string& rule) {
    ++created_;
    nlohmann::json hparams = SampleSpace(context_.config.hyperparameters, rng_);
    const std::string reason = "bracket " + std::to_string(index_ + 1) + " of " +
                               std::to_string(bracket_count_) + " (" +
                               std::to_string(plan_.rung_lengths_batches.size()) + " rungs" + rule +
                               "), trial " + std::to_string(created_) + " of " +
                               std::to_string(plan_.max_trials) + ": " + DescribePoint(hparams);
    return actions.CreateTrial(std::move(hparams), reason);
  }

  const int index_;
  const int bracket_count_;
  const AshaBracketPlan plan_;
  const SearchContext& context_;
  Rng& rng_;
  int created_ = 0;
};

// One promotion bracket: an asynchronous successive halving search with its own rungs and budget.
class AshaBracket final : public Bracket {
 public:
  AshaBracket(int index, int bracket_count, AshaBracketPlan plan, const SearchContext& context,
              Rng& rng)
      : Bracket(index, bracket_count, std::move(plan), context, rng) {
    for (int64_t length : plan_.rung_lengths_batches) rungs_.push_back({length, {}, 0});
  }

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    Report(request_id, RankValue(context_, metric), metric, actions);
  }

  void OnTrialExitedEarly(int request_id, SearchActions& actions) override {
    Trial& trial = trials_.at(request_id);
    trial.exited = true;
    // A trial that was training counts as the worst result of its rung. A waiting one keeps its
    // result; if a rung promotes it later, it fails that rung at once (see Report).
    if (trial.training) Report(request_id, kWorst, std::nan(""), actions);
  }

  // Trials reported at rung 0 against max_trials, with 20% headroom for the later rungs; once
  // rung 0 is complete, at least the share of finished trials.
  double Progress() const override {
    const double max_trials = plan_.max_trials;
    double progress = rungs_[0].entries.size() / (1.2 * max_trials);
    if (rungs_[0].entries.size() >= static_cast<size_t>(plan_.max_trials)) {
      int finished = 0;
      for (const auto& [id, trial] : trials_) finished += trial.closed || trial.exited ? 1 : 0;
      progress = std::max(progress, finished / max_trials);
    }
    return std::min(progress, 1.0);
  }

 private:
  struct Entry {
    int request_id = 0;
    double value = 0;  // smaller is better
    double raw = 0;    // as reported, for reasons; NaN for an exited trial
    bool promoted = false;
  };
  struct Rung {
    int64_t length_batches = 0;
    std::vector<Entry> entries;  // sorted by value; equal values in arrival order
    int outstanding = 0;         // trials training towards this rung
  };
  struct Trial {
    int rung = 0;
    bool training = false;  // has a TrainTo outstanding
    bool exited = false;
    bool closed = false;
  };
  struct Promotion {
    int request_id = 0;
    std::string reason;
  };

  std::string RungName(size_t rung) const {
    return "rung " + std::to_string(rung) + " of " + std::to_string(rungs_.size());
  }

  std::string Fraction() const { return "1/" + FormatNumber(context_.config.searcher.divisor); }

  std::string Comparison(double raw, double cutoff_raw) const {
    const bool smaller = context_.config.searcher.smaller_is_better;
    return FormatResult(raw) + (smaller ? " <= " : " >= ") + "cutoff " + FormatResult(cutoff_raw);
  }

  int PromotedCount(size_t results) const {
    return static_cast<int>(std::floor(results / context_.config.searcher.divisor));
  }

  void CreateTrial(SearchActions& actions) override {
    const int id = NewTrial(actions, "");
    trials_[id] = Trial{0, true, false, false};
    ++rungs_[0].outstanding;
    actions.TrainTo(
        id, rungs_[0].length_batches,
        RungName(0) + ": train to " + std::to_string(rungs_[0].length_batches) + " batches");
  }

  // Records a result in `rung` and says which trial, if any, it promotes: the new one when it
  // ranks in the top 1/divisor, else the one that has just come within the top 1/divisor because
  // the rung grew.
  std::optional<Promotion> Insert(size_t rung_index, int request_id, double value, double raw) {
    auto& entries = rungs_[rung_index].entries;
    const size_t before = entries.size();
    const auto position =
        std::upper_bound(entries.begin(), entries.end(), value,
                         [](double v, const Entry& entry) { return v < entry.value; });
    const size_t rank = static_cast<size_t>(position - entries.begin());
    const int promote_count = PromotedCount(before + 1);
    const bool promote_now = rank < static_cast<size_t>(promote_count);
    entries.insert(position, Entry{request_id, value, raw, promote_now});
    const std::string by = " by " + context_.config.searcher.metric + " (";
    const std::string head = "rung " + std::to_string(rung_index) + " -> " +
                             std::to_string(rung_index + 1) + ": top " + Fraction() + " of " +
                             std::to_string(before + 1) + by;
    if (promote_now) {
      const double cutoff = entries[static_cast<size_t>(promote_count) - 1].raw;
      return Promotion{request_id, head + Comparison(raw, cutoff) + ")"};
    }
    if (promote_count != PromotedCount(before)) {
      Entry& entry = entries[static_cast<size_t>(promote_count) - 1];
      if (!entry.promoted) {
        entry.promoted = true;
        return Promotion{entry.request_id, head + Comparison(entry.raw, entry.raw) +
                                               ", now within the top as the rung grew)"};
      }
    }
    return std::nullopt;
  }

  void Report(int request_id, double value, double raw, SearchActions& actions) {
    Trial& trial = trials_.at(request_id);
    trial.training = false;
    const size_t rung_index = static_cast<size_t>(trial.rung);
    Rung& rung = rungs_[rung_index];
    --rung.outstanding;
    bool added_work = false;
    if (rung_index + 1 == rungs_.size()) {
      rung.entries.push_back(Entry{request_id, value, raw, false});
      if (!trial.exited) {
        trial.closed = true;
        actions.CloseTrial(request_id, "completed the top rung (" +
                                           std::to_string(rung.length_batches) +
                                           " batches): " + context_.config.searcher.metric + "=" +
                                           FormatResult(raw));
      }
    } else if (auto promotion = Insert(rung_index, request_id, value, raw)) {
      Trial& promoted = trials_.at(promotion->request_id);
      Rung& next = rungs_[rung_index + 1];
      promoted.rung = static_cast<int>(rung_index + 1);
      ++next.outstanding;
      if (promoted.exited) {
        // It cannot train any more: as if it had run the next rung and done worst of all.
        Report(promotion->request_id, kWorst, std::nan(""), actions);
        return;
      }
      promoted.training = true;
      actions.TrainTo(
          promotion->request_id, next.length_batches,
          promotion->reason + "; train to " + std::to_string(next.length_batches) + " batches");
      added_work = true;
    }
    // Keep the bracket's concurrency: a result that gave no trial more work makes room for a new
    // trial while the budget lasts.
    if (!added_work && created_ < plan_.max_trials) CreateTrial(actions);
    if (rungs_[0].entries.size() >= static_cast<size_t>(plan_.max_trials)) CloseOut(actions);
  }

  // Closes the unpromoted trials of every rung that can receive no more results: rung 0 once all
  // max_trials reported there, and each rung above once nothing below it is still training.
  void CloseOut(SearchActions& actions) {
    for (size_t r = 0; r < rungs_.size(); ++r) {
      const Rung& rung = rungs_[r];
      if (rung.outstanding > 0) break;
      const int promote_count = PromotedCount(rung.entries.size());
      for (const Entry& entry : rung.entries) {
        Trial& trial = trials_.at(entry.request_id);
        if (entry.promoted || trial.closed || trial.exited) continue;
        trial.closed = true;
        std::string reason =
            promote_count == 0
                ? "stopped: rung " + std::to_string(r) + " promotes none of its " +
                      std::to_string(rung.entries.size()) + " results (top " + Fraction() + ")"
                : "stopped: below the rung " + std::to_string(r) + " cutoff (" +
                      context_.config.searcher.metric + " " + FormatResult(entry.raw) +
                      " vs cutoff " +
                      FormatResult(rung.entries[static_cast<size_t>(promote_count) - 1].raw) +
                      "; top " + Fraction() + " of " + std::to_string(rung.entries.size()) +
                      " promoted)";
        actions.CloseTrial(entry.request_id, std::move(reason));
      }
    }
  }

  std::vector<Rung> rungs_;
  std::map<int, Trial> trials_;
};

// One stopping bracket (Determined 0.38's async_halving): trials train on; at each rung a trial
// continues while it ranks within the top max(1, floor(results / divisor)) of that rung's results
// so far (a new value goes before equal ones), and is closed otherwise or at the top rung. Each
// validation that completes a rung is judged at that rung only; the next rung takes the next one.
class StoppingBracket final : public Bracket {
 public:
  StoppingBracket(int index, int bracket_count, AshaBracketPlan plan, const SearchContext& context,
                  Rng& rng)
      : Bracket(index, bracket_count, std::move(plan), context, rng),
        rung_values_(plan_.rung_lengths_batches.size()) {}

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    const double value = RankValue(context_, metric);
    Trial& trial = trials_.at(request_id);
    const size_t rung = static_cast<size_t>(trial.rung);
    auto& values = rung_values_[rung];
    const auto position = std::lower_bound(values.begin(), values.end(), value);
    const size_t rank = static_cast<size_t>(position - values.begin());
    values.insert(position, value);
    const std::string& name = context_.config.searcher.metric;
    const std::string at = "rung " + std::to_string(rung) + " of " +
                           std::to_string(rung_values_.size()) + " (" + TimeMetric() + " " +
                           std::to_string(plan_.rung_lengths_batches[rung]) + ")";
    if (rung + 1 == rung_values_.size()) {
      Stop(request_id, "completed the top " + at + ": " + name + "=" + FormatResult(metric),
           actions);
      return;
    }
    const size_t keep = std::max<size_t>(
        1, static_cast<size_t>(std::floor(values.size() / context_.config.searcher.divisor)));
    if (rank >= keep) {
      Stop(request_id,
           "stopped at " + at + ": " + name + "=" + FormatResult(metric) + " ranks " +
               std::to_string(rank + 1) + " of " + std::to_string(values.size()) +
               ", outside the top " + std::to_string(keep),
           actions);
      return;
    }
    trial.rung = static_cast<int>(rung + 1);
    const int64_t next = plan_.rung_lengths_batches[rung + 1];
    actions.TrainTo(request_id, next,
                    "continues past " + at + ": " + name + "=" + FormatResult(metric) + " ranks " +
                        std::to_string(rank + 1) + " of " + std::to_string(values.size()) +
                        "; next rung at " + TimeMetric() + " " + std::to_string(next));
  }

  void OnTrialExitedEarly(int request_id, SearchActions& actions) override {
    Trial& trial = trials_.at(request_id);
    if (trial.done) return;
    auto& values = rung_values_[static_cast<size_t>(trial.rung)];
    values.insert(std::upper_bound(values.begin(), values.end(), kWorst), kWorst);
    trial.done = true;
    ++finished_;
    if (created_ < plan_.max_trials) CreateTrial(actions);
  }

  double Progress() const override {
    const double max_trials = plan_.max_trials;
    double progress = rung_values_[0].size() / (1.2 * max_trials);
    if (rung_values_[0].size() >= static_cast<size_t>(plan_.max_trials)) {
      progress = std::max(progress, finished_ / max_trials);
    }
    return std::min(progress, 1.0);
  }

 private:
  struct Trial {
    int rung = 0;
    bool done = false;
  };

  std::string TimeMetric() const {
    const auto& metric = context_.config.searcher.time_metric;
    return metric.empty() ? "batches" : metric;
  }

  void Stop(int request_id, std::string reason, SearchActions& actions) {
    Trial& trial = trials_.at(request_id);
    trial.done = true;
    ++finished_;
    actions.CloseTrial(request_id, std::move(reason));
    if (created_ < plan_.max_trials) CreateTrial(actions);
  }

  void CreateTrial(SearchActions& actions) override {
    const int id = NewTrial(actions, ", stopping");
    trials_[id] = Trial{};
    actions.TrainTo(
        id, plan_.rung_lengths_batches[0],
        "rung 0: reach " + TimeMetric() + " " + std::to_string(plan_.rung_lengths_batches[0]));
  }

  std::vector<std::vector<double>> rung_values_;  // per rung, ascending (smaller is better)
  std::map<int, Trial> trials_;
  int finished_ = 0;
};

class AdaptiveAshaSearch final : public SearchMethod {
 public:
  AdaptiveAshaSearch(const SearchContext& context, std::vector<AshaBracketPlan> plan)
      : context_(context), rng_(context.seed) {
    const int count = static_cast<int>(plan.size());
    // Determined 0.38's length form (max_time + time_metric) means its stopping rule.
    const bool stopping = !context_.config.searcher.time_metric.empty();
    for (int i = 0; i < count; ++i) {
      if (stopping) {
        brackets_.push_back(
            std::make_unique<StoppingBracket>(i, count, std::move(plan[i]), context_, rng_));
      } else {
        brackets_.push_back(
            std::make_unique<AshaBracket>(i, count, std::move(plan[i]), context_, rng_));
      }
    }
  }

  void Start(SearchActions& actions) override {
    for (size_t i = 0; i < brackets_.size(); ++i) {
      Recorder recorder(actions, owner_, i);
      brackets_[i]->Start(recorder);
    }
  }

  void OnValidation(int request_id, double metric, SearchActions& actions) override {
    const size_t bracket = owner_.at(request_id);
    Recorder recorder(actions, owner_, bracket);
    brackets_[bracket]->OnValidation(request_id, metric, recorder);
  }

  void OnTrialExitedEarly(int request_id, SearchActions& actions) override {
    const size_t bracket = owner_.at(request_id);
    Recorder recorder(actions, owner_, bracket);
    brackets_[bracket]->OnTrialExitedEarly(request_id, recorder);
  }

  double Progress() const override {
    double sum = 0;
    for (const auto& bracket : brackets_) sum += bracket->Progress();
    return brackets_.empty() ? 1.0 : sum / brackets_.size();
  }

 private:
  // Notes which bracket created each trial, so that its results go back to that bracket.
  class Recorder final : public SearchActions {
   public:
    Recorder(SearchActions& inner, std::map<int, size_t>& owner, size_t bracket)
        : inner_(inner), owner_(owner), bracket_(bracket) {}
    int CreateTrial(nlohmann::json hparams, std::string reason) override {
      const int id = inner_.CreateTrial(std::move(hparams), std::move(reason));
      owner_[id] = bracket_;
      return id;
    }
    int CloneTrial(int parent, int64_t parent_batches, nlohmann::json hparams,
                   std::string reason) override {
      const int id =
          inner_.CloneTrial(parent, parent_batches, std::move(hparams), std::move(reason));
      owner_[id] = bracket_;
      return id;
    }
    void TrainTo(int request_id, int64_t length_batches, std::string reason) override {
      inner_.TrainTo(request_id, length_batches, std::move(reason));
    }
    void CloseTrial(int request_id, std::string reason) override {
      inner_.CloseTrial(request_id, std::move(reason));
    }

   private:
    SearchActions& inner_;
    std::map<int, size_t>& owner_;
    size_t bracket_;
  };

  SearchContext context_;
  Rng rng_;
  std::vector<std::unique_ptr<Bracket>> brackets_;
  std::map<int, size_t> owner_;
};

}  // namespace

Result<std::vector<AshaBracketPlan>> PlanAdaptiveAsha(const ExperimentConfig& config) {
  const SearcherConfig& searcher = config.searcher;
  if (searcher.name != SearcherName::kAdaptiveAsha) {
    return Status::InvalidArgument("searcher.name: not adaptive_asha");
  }
  const double divisor = searcher.divisor;
  const double units = static_cast<double>(searcher.max_length.value);
  std::vector<int> brackets = searcher.bracket_rungs;
  if (brackets.empty()) {
    const int max_rungs = std::min({searcher.max_rungs, FloorLog(units, divisor) + 1,
                                    FloorLog(searcher.max_trials, divisor) + 1});
    const int first = searcher.mode == AshaMode::kAggressive ? max_rungs
                      : searcher.mode == AshaMode::kStandard ? (max_rungs - 1) / 2 + 1
                                                             : 1;
    for (int rungs = first; rungs <= max_rungs; ++rungs) brackets.push_back(rungs);
  }
  // The brackets that stop the most trials early come first, for early speed-ups.
  std::sort(brackets.begin(), brackets.end(), std::greater<int>());
  const int bracket_count = static_cast<int>(brackets.size());
  if (bracket_count > searcher.max_trials) {
    return Status::InvalidArgument("searcher.bracket_rungs: " + std::to_string(bracket_count) +
                                   " brackets need max_trials of at least " +
                                   std::to_string(bracket_count));
  }

  // Trials in proportion to divisor^(rungs-1)/rungs, at least one each, the rest to the first.
  std::vector<double> weights;
  double weight_sum = 0;
  for (int rungs : brackets) {
    weights.push_back(std::pow(divisor, rungs - 1) / rungs);
    weight_sum += weights.back();
  }
  std::vector<AshaBracketPlan> plan(brackets.size());
  int allocated = 0;
  for (size_t i = 0; i < brackets.size(); ++i) {
    plan[i].num_rungs = brackets[i];
    plan[i].max_trials =
        std::max(1, static_cast<int>(std::floor(weights[i] / weight_sum * searcher.max_trials)));
    allocated += plan[i].max_trials;
  }
  plan[0].max_trials += std::max(0, searcher.max_trials - allocated);

  // Concurrency: max_concurrent_trials split evenly (at least one per bracket, the remainder to
  // the first brackets); with no limit, each bracket runs max(last bracket's trials, divisor).
  if (searcher.max_concurrent_trials == 0) {
    const int each = std::max(plan.back().max_trials, static_cast<int>(divisor));
    for (auto& bracket : plan) bracket.max_concurrent_trials = each;
  } else {
    const int total = std::max(searcher.max_concurrent_trials, bracket_count);
    for (int i = 0; i < bracket_count; ++i) {
      plan[static_cast<size_t>(i)].max_concurrent_trials =
          total / bracket_count + (i < total % bracket_count ? 1 : 0);
    }
  }

  // Rung k of n trains to max_length / divisor^(n-1-k) in the config's unit (at least 1), then
  // converted to batches.
  for (auto& bracket : plan) {
    for (int k = 0; k < bracket.num_rungs; ++k) {
      const double units_needed =
          std::max(1.0, std::floor(units / std::pow(divisor, bracket.num_rungs - 1 - k)));
      CAIRN_ASSIGN_OR_RETURN(int64_t batches,
                             LengthInBatches(config, Length{searcher.max_length.unit,
                                                            static_cast<int64_t>(units_needed)}));
      bracket.rung_lengths_batches.push_back(batches);
      bracket.rung_lengths_units.push_back(static_cast<int64_t>(units_needed));
    }
  }
  return plan;
}

std::unique_ptr<SearchMethod> NewAdaptiveAshaSearch(const SearchContext& context,
                                                    std::vector<AshaBracketPlan> plan) {
  return std::make_unique<AdaptiveAshaSearch>(context, std::move(plan));
}

Result<SearchPreview> PreviewSearch(const ExperimentConfig& config) {
  const SearcherConfig& searcher = config.searcher;
  SearchPreview preview;
  preview.length_unit = searcher.max_time && !searcher.time_metric.empty()
                            ? searcher.time_metric
                            : LengthUnitName(searcher.max_length.unit);
  switch (searcher.name) {
    case SearcherName::kSingle:
      preview.entries.push_back({1, true, 0});
      return preview;
    case SearcherName::kRandom:
      preview.entries.push_back({searcher.max_trials, true, 0});
      return preview;
    case SearcherName::kGrid: {
      CAIRN_ASSIGN_OR_RETURN(auto points, GridPoints(config.hyperparameters));
      preview.entries.push_back({static_cast<int>(points.size()), true, 0});
      return preview;
    }
    case SearcherName::kAdaptiveAsha:
      break;
    case SearcherName::kPbt:
      return PreviewPbt(searcher);
  }
  // Each bracket promotes max(floor(n / divisor), 1) of a rung's n trials; the rest stop there,
  // and whoever reaches the last rung trains to max_length.
  CAIRN_ASSIGN_OR_RETURN(auto plan, PlanAdaptiveAsha(config));
  std::map<int64_t, int> stopped_at;
  for (const AshaBracketPlan& bracket : plan) {
    int remaining = bracket.max_trials;
    for (size_t rung = 0; rung < bracket.rung_lengths_units.size(); ++rung) {
      const bool last = rung + 1 == bracket.rung_lengths_units.size();
      const int promoted =
          last ? 0 : std::max(1, static_cast<int>(std::floor(remaining / searcher.divisor)));
      stopped_at[bracket.rung_lengths_units[rung]] += remaining - promoted;
      remaining = promoted;
    }
  }
  for (const auto& [length, count] : stopped_at) {
    if (count > 0) preview.entries.push_back({count, false, length});
  }
  return preview;
}

}  // namespace cairn::experiments
