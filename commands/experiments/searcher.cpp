#include "commands/experiments/searcher.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>
#include <utility>

#include "commands/experiments/search_method.h"

namespace cairn::experiments {

namespace {

// Runs a SearchMethod behind the Searcher interface; see search_method.h for what it adds.
class SearcherDriver final : public Searcher, private SearchActions {
 public:
  // `max_active`: at most this many trials have a kTrainTo outstanding; 0 = no cap.
  SearcherDriver(std::unique_ptr<SearchMethod> method, int max_active)
      : method_(std::move(method)), max_active_(max_active) {}

  std::vector<SearcherOp> Start() override {
    if (started_) return {};
    started_ = true;
    method_->Start(*this);
    return Finish();
  }

  std::vector<SearcherOp> OnValidation(int request_id, int64_t length_batches,
                                       double metric) override {
    Trial* trial = Find(request_id);
    if (trial == nullptr || trial->done || trial->target_batches < 0 ||
        length_batches < trial->target_batches) {
      return {};
    }
    trial->target_batches = -1;
    --active_;
    method_->OnValidation(request_id, metric, *this);
    Drain();
    return Finish();
  }

  std::vector<SearcherOp> OnTrialExitedEarly(int request_id) override {
    Trial* trial = Find(request_id);
    if (trial == nullptr || trial->done || !trial->announced) return {};
    trial->done = true;
    if (trial->target_batches >= 0) {
      trial->target_batches = -1;
      --active_;
    }
    // Work held back for it (an ASHA promotion waiting for a slot) is void now.
    std::erase_if(queue_, [&](const SearcherOp& op) { return op.request_id == request_id; });
    method_->OnTrialExitedEarly(request_id, *this);
    Drain();
    return Finish();
  }

  void OnTrained(int request_id, int64_t total_batches) override {
    const Trial* trial = Find(request_id);
    if (trial == nullptr || trial->done) return;
    method_->OnTrained(request_id, total_batches);
  }

  double Progress() const override {
    if (shut_down_) return 1.0;
    return std::clamp(method_->Progress(), 0.0, 1.0);
  }

 private:
  struct Trial {
    nlohmann::json hparams;
    std::string create_reason;
    bool announced = false;       // its kCreateTrial was emitted
    bool done = false;            // closed or exited
    int64_t target_batches = -1;  // the length of its emitted, unanswered kTrainTo, or -1
    int clone_of = 0;             // see SearcherOp::clone_of
    int64_t clone_at_batches = 0;
  };

  Trial* Find(int request_id) {
    if (request_id < 1 || request_id > static_cast<int>(trials_.size())) return nullptr;
    return &trials_[static_cast<size_t>(request_id - 1)];
  }

  int CreateTrial(nlohmann::json hparams, std::string reason) override {
    trials_.push_back({std::move(hparams), std::move(reason)});
    return static_cast<int>(trials_.size());
  }

  int CloneTrial(int parent, int64_t parent_batches, nlohmann::json hparams,
                 std::string reason) override {
    const int request_id = CreateTrial(std::move(hparams), std::move(reason));
    trials_.back().clone_of = parent;
    trials_.back().clone_at_batches = parent_batches;
    return request_id;
  }

  void TrainTo(int request_id, int64_t length_batches, std::string reason) override {
    Trial* trial = Find(request_id);
    if (trial == nullptr || trial->done) return;
    SearcherOp op{SearcherOp::Kind::kTrainTo, request_id, nullptr, length_batches,
                  std::move(reason)};
    // First come, first served: nothing overtakes work that is already waiting for a slot.
    if (max_active_ > 0 && (active_ >= max_active_ || !queue_.empty())) {
      queue_.push_back(std::move(op));
      return;
    }
    Release(std::move(op));
  }

  void CloseTrial(int request_id, std::string reason) override {
    Trial* trial = Find(request_id);
    if (trial == nullptr || trial->done || !trial->announced) return;
    trial->done = true;
    if (trial->target_batches >= 0) {
      trial->target_batches = -1;
      --active_;
    }
    out_.push_back({SearcherOp::Kind::kCloseTrial, request_id, nullptr, 0, std::move(reason)});
  }

  // Emits a kTrainTo, announcing its trial first if this is the trial's first work: a trial held
  // back by the cap is created only when it can run, so request ids still appear in order.
  void Release(SearcherOp op) {
    Trial& trial = *Find(op.request_id);
    if (!trial.announced) {
      trial.announced = true;
      out_.push_back({SearcherOp::Kind::kCreateTrial, op.request_id, trial.hparams, 0,
                      trial.create_reason, trial.clone_of, trial.clone_at_batches});
    }
    trial.target_batches = op.length_batches;
    ++active_;
    out_.push_back(std::move(op));
  }

  void Drain() {
    while (!queue_.empty() && (max_active_ == 0 || active_ < max_active_)) {
      SearcherOp op = std::move(queue_.front());
      queue_.pop_front();
      Release(std::move(op));
    }
  }

  std::vector<SearcherOp> Finish() {
    if (!shut_down_ && !trials_.empty() && queue_.empty()) {
      bool all_done = true;
      for (const auto& trial : trials_) all_done = all_done && trial.done;
      if (all_done) {
        shut_down_ = true;
        out_.push_back(
            {SearcherOp::Kind::kShutdown, 0, nullptr, 0,
             "search complete: all " + std::to_string(trials_.size()) + " trials are done"});
      }
    }
    return std::exchange(out_, {});
  }

  std::unique_ptr<SearchMethod> method_;
  const int max_active_;
  std::vector<Trial> trials_;  // index = request id - 1
  std::deque<SearcherOp> queue_;
  std::vector<SearcherOp> out_;
  int active_ = 0;
  bool started_ = false;
  bool shut_down_ = false;
};

}  // namespace

Searcher::~Searcher() = default;

const char* SearcherOpKindName(SearcherOp::Kind kind) {
  switch (kind) {
    case SearcherOp::Kind::kCreateTrial:
      return "create";
    case SearcherOp::Kind::kTrainTo:
      return "train_to";
    case SearcherOp::Kind::kCloseTrial:
      return "close";
    case SearcherOp::Kind::kShutdown:
      return "shutdown";
  }
  return "unknown";
}

std::string ToString(const SearcherOp& op) {
  std::string out = SearcherOpKindName(op.kind);
  if (op.kind != SearcherOp::Kind::kShutdown) out += " " + std::to_string(op.request_id);
  if (op.kind == SearcherOp::Kind::kCreateTrial) out += " " + op.hparams.dump();
  if (op.clone_of != 0) {
    out += " from " + std::to_string(op.clone_of) + "@" + std::to_string(op.clone_at_batches);
  }
  if (op.kind == SearcherOp::Kind::kTrainTo) out += " " + std::to_string(op.length_batches);
  return out + " (" + op.reason + ")";
}

std::string FormatMetric(double value) {
  if (std::isnan(value)) return "NaN";
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

Result<std::unique_ptr<Searcher>> NewSearcher(const ExperimentConfig& config, uint64_t seed) {
  SearchContext context;
  context.config = config;
  context.seed = seed;
  CAIRN_ASSIGN_OR_RETURN(context.max_length_batches,
                         LengthInBatches(config, config.searcher.max_length));
  if (context.max_length_batches < 1) {
    return Status::InvalidArgument("searcher.max_length: must be at least one batch");
  }
  const auto& searcher = config.searcher;
  switch (searcher.name) {
    case SearcherName::kSingle:
    case SearcherName::kRandom:
      return std::unique_ptr<Searcher>(new SearcherDriver(NewRandomSearch(context), 0));
    case SearcherName::kGrid: {
      CAIRN_ASSIGN_OR_RETURN(auto points, GridPoints(config.hyperparameters));
      return std::unique_ptr<Searcher>(
          new SearcherDriver(NewGridSearch(context, std::move(points)), 0));
    }
    case SearcherName::kAdaptiveAsha: {
      CAIRN_ASSIGN_OR_RETURN(auto plan, PlanAdaptiveAsha(config));
      // Brackets split max_concurrent_trials among themselves, rounding up to one each; the
      // driver holds the whole search to the user's cap.
      return std::unique_ptr<Searcher>(new SearcherDriver(
          NewAdaptiveAshaSearch(context, std::move(plan)), searcher.max_concurrent_trials));
    }
    case SearcherName::kPbt: {
      CAIRN_ASSIGN_OR_RETURN(int64_t round_batches,
                             LengthInBatches(config, searcher.length_per_round));
      if (round_batches < 1) {
        return Status::InvalidArgument("searcher.length_per_round: must be at least one batch");
      }
      // The population runs at once: a round waits for every member.
      return std::unique_ptr<Searcher>(new SearcherDriver(NewPbtSearch(context, round_batches), 0));
    }
  }
  return Status::Internal("unknown searcher");
}

}  // namespace cairn::experiments
