// What one more submission costs every projector as the queue grows (issue 17): the reads,
// writes and scanned entries each projector spends folding the next TaskSubmitted are counted
// at two queue sizes ten times apart, and must not grow with the queue. Work is counted through
// a store that wraps the in-memory one, never timed.
#include <gtest/gtest.h>

#include <string>

#include "projections/projector.h"
#include "projections/view_store.h"
#include "tests/projections/history.h"

namespace cairn {
namespace {

using projections::MemoryViewStore;

// Counts every operation a projector asks of its store, scanned entries one by one.
class CountingViewStore : public projections::ViewStore, public projections::ViewReader {
 public:
  explicit CountingViewStore(MemoryViewStore& inner) : inner_(inner) {}

  Result<std::optional<std::string>> Get(std::string_view key) override {
    ++operations;
    return inner_.Get(key);
  }
  Status Put(std::string_view key, std::string_view value) override {
    ++operations;
    return inner_.Put(key, value);
  }
  Status Delete(std::string_view key) override {
    ++operations;
    return inner_.Delete(key);
  }
  Result<bool> GetMessage(std::string_view key, google::protobuf::MessageLite* message) override {
    ++operations;
    return inner_.GetMessage(key, message);
  }
  Status PutMessage(std::string_view key, const google::protobuf::MessageLite& message) override {
    ++operations;
    return inner_.PutMessage(key, message);
  }
  Status Scan(std::string_view prefix,
              const std::function<bool(std::string_view, std::string_view)>& visit) override {
    ++operations;
    return inner_.Scan(prefix, [&](std::string_view key, std::string_view value) {
      ++operations;
      return visit(key, value);
    });
  }

  Status ScanRange(std::string_view begin, std::string_view end, bool backward,
                   const std::function<bool(std::string_view, std::string_view)>& visit) override {
    ++operations;
    return inner_.ScanRange(begin, end, backward,
                            [&](std::string_view key, std::string_view value) {
                              ++operations;
                              return visit(key, value);
                            });
  }

  size_t operations = 0;

 private:
  MemoryViewStore& inner_;
};

// The store operations `projector` spends on the submission that follows `queued` queued jobs
// (half in a fair-share pool, half in a priority pool, of several priorities).
size_t OperationsForOneMoreSubmission(const std::string& projector_name, int queued) {
  testing::History history;
  history.ConfigurePools(testing::History::Pools(
      {{"default", events::SCHEDULER_TYPE_FAIR_SHARE}, {"gpu", events::SCHEDULER_TYPE_PRIORITY}}));
  for (int i = 0; i < queued; ++i) {
    history.Submit("t" + std::to_string(i), "j" + std::to_string(i), i % 2 ? "gpu" : "default",
                   10 * (1 + i % 5), 1);
  }
  history.Submit("one-more", "one-more", "gpu", 30, 1);
  auto projector = projections::MakeProjector(projector_name);
  EXPECT_TRUE(projector.ok()) << projector.status().ToString();
  if (!projector.ok()) return 0;
  MemoryViewStore store;
  views::ProjectorCheckpoint checkpoint;
  const auto& events = history.events();
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const Status applied = projections::ApplyEvent(**projector, events[i], store, checkpoint);
    EXPECT_TRUE(applied.ok()) << applied.ToString();
  }
  CountingViewStore counting(store);
  const Status applied = projections::ApplyEvent(**projector, events.back(), counting, checkpoint);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
  return counting.operations;
}

TEST(SubmissionCostTest, NoProjectorSpendsMoreOnASubmissionWhenTheQueueIsLonger) {
  for (const std::string& name : projections::ProjectorNames()) {
    const size_t short_queue = OperationsForOneMoreSubmission(name, 300);
    const size_t long_queue = OperationsForOneMoreSubmission(name, 3000);
    // Ten times the queue: an O(log n) index may touch a little more, a scan would touch ~10x.
    EXPECT_LE(long_queue, short_queue + 2)
        << name << ": " << short_queue << " store operations at 300 queued, " << long_queue
        << " at 3000";
    EXPECT_LT(long_queue, 100u) << name;
    // The projectors that show queued work do write for it: the counting sees their work.
    if (name == "tasks" || name == "job_queue" || name == "task_order") {
      EXPECT_GT(short_queue, 0u) << name;
    }
  }
}

}  // namespace
}  // namespace cairn
