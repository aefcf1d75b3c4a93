// ByOwnId (commands/decision_state.h): the ordered map of tasks and jobs keyed by a view of each
// record's own id, whose records live apart from the tree's nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "commands/decision_state.h"

namespace cairn::commands {
namespace {

using Jobs = ByOwnId<JobRecord, &JobRecord::job_id>;

// Iterators as a std::map's: bidirectional, a mutable one converts to a const one and not back,
// and a const one reads a const record.
static_assert(std::bidirectional_iterator<Jobs::iterator>);
static_assert(std::bidirectional_iterator<Jobs::const_iterator>);
static_assert(std::is_convertible_v<Jobs::iterator, Jobs::const_iterator>);
static_assert(!std::is_convertible_v<Jobs::const_iterator, Jobs::iterator>);
static_assert(
    std::is_same_v<decltype((*std::declval<const Jobs&>().begin()).second), const JobRecord&>);
static_assert(std::is_same_v<decltype((*std::declval<Jobs&>().begin()).second), JobRecord&>);

JobRecord Job(std::string id, int32_t priority) {
  JobRecord job;
  job.job_id = std::move(id);
  job.priority = priority;
  return job;
}

TEST(ByOwnIdTest, IteratesInIdOrderWhateverTheInsertionOrderAndRecordsNeverMove) {
  std::vector<std::string> ids;
  for (int i = 0; i < 500; ++i) ids.push_back("job-" + std::to_string(100000 + i * 7919 % 500));
  std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
  Jobs jobs;
  std::vector<const JobRecord*> stored;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto [record, inserted] = jobs.Insert(Job(ids[i], static_cast<int32_t>(i)));
    EXPECT_TRUE(inserted) << ids[i];
    stored.push_back(record);
  }
  ASSERT_EQ(jobs.size(), ids.size());
  // Every record is where its insertion said, after all the insertions that followed.
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(&jobs.at(ids[i]), stored[i]);
    EXPECT_EQ(stored[i]->job_id, ids[i]);
    EXPECT_EQ(stored[i]->priority, static_cast<int32_t>(i));
  }
  std::vector<std::string> walked;
  for (const auto& [id, job] : jobs) {
    EXPECT_EQ(id, job.job_id);
    walked.push_back(std::string(id));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(walked, ids);
}

TEST(ByOwnIdTest, ASecondRecordWithAnIdKeepsTheFirst) {
  Jobs jobs;
  JobRecord* first = jobs.Insert(Job("a", 1)).first;
  auto [again, inserted] = jobs.Insert(Job("a", 2));
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again, first);
  EXPECT_EQ(jobs.at("a").priority, 1);
  auto [made, was_made] = jobs.FindOrMake("b");
  EXPECT_TRUE(was_made);
  EXPECT_EQ(made->job_id, "b");
  EXPECT_EQ(jobs.FindOrMake("b").first, made);
  EXPECT_FALSE(jobs.FindOrMake("b").second);
  EXPECT_EQ(jobs.size(), 2u);
}

TEST(ByOwnIdTest, ReadsAndChangesThroughItsIteratorsAsThroughAStdMaps) {
  Jobs jobs;
  for (const char* id : {"b", "d", "f"}) jobs.Insert(Job(id, 0));
  // Changed through an iterator: `it->second` is the stored record.
  auto it = jobs.find(std::string("d"));
  ASSERT_NE(it, jobs.end());
  it->second.priority = 42;
  EXPECT_EQ(jobs.at("d").priority, 42);
  EXPECT_EQ(jobs.find("c"), jobs.end());
  EXPECT_EQ(jobs.count("f"), 1u);
  EXPECT_EQ(jobs.count("g"), 0u);
  EXPECT_EQ(jobs.lower_bound("c")->first, "d");
  EXPECT_EQ(jobs.upper_bound("d")->first, "f");
  EXPECT_EQ(jobs.lower_bound("g"), jobs.end());
  EXPECT_EQ(std::prev(jobs.end())->first, "f");
  EXPECT_EQ(std::next(jobs.begin())->first, "d");
  EXPECT_THROW(jobs.at("zzz"), std::out_of_range);
  // Read through a const view; a mutable iterator converts and compares as a std::map's does.
  const Jobs& view = jobs;
  Jobs::const_iterator at = jobs.find("b");
  EXPECT_EQ(at, view.begin());
  // Mutable and const iterators compare either way round.
  EXPECT_EQ(jobs.find("b"), view.begin());
  EXPECT_EQ(view.begin(), jobs.find("b"));
  EXPECT_NE(jobs.find("d"), view.begin());
  EXPECT_NE(view.begin(), jobs.find("d"));
  Jobs::iterator walk = jobs.begin();
  EXPECT_EQ((walk++)->first, "b");
  EXPECT_EQ(walk->first, "d");
  EXPECT_EQ((walk--)->first, "d");
  EXPECT_EQ(walk->first, "b");
  EXPECT_EQ(view.lower_bound("c")->first, "d");
  EXPECT_EQ(view.upper_bound("f"), view.end());
  EXPECT_THROW(view.at("zzz"), std::out_of_range);
  EXPECT_EQ(view.find("d")->second.priority, 42);
  EXPECT_EQ(std::distance(view.begin(), view.end()), 3);
  EXPECT_FALSE(view.empty());
  EXPECT_EQ(&view.at("f"), &jobs.at("f"));
}

// A snapshot's records come in id order: each goes in at the end, and in order.
TEST(ByOwnIdTest, RecordsInsertedInIdOrderAreAllThereInThatOrder) {
  Jobs jobs;
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(jobs.Insert(Job("job-" + std::to_string(1000 + i), i)).second);
  }
  ASSERT_EQ(jobs.size(), 100u);
  int expected = 0;
  for (const auto& [id, job] : std::as_const(jobs)) {
    EXPECT_EQ(id, "job-" + std::to_string(1000 + expected));
    EXPECT_EQ(job.priority, expected);
    ++expected;
  }
  EXPECT_EQ(expected, 100);
}

// Change tracking (for incremental snapshots): off until TakeChanged first runs; then every
// record handed out mutable counts, once, and nothing read through a const view does.
TEST(ByOwnIdTest, CountsEveryRecordHandedOutMutableOnceUntilTaken) {
  Jobs jobs;
  for (const char* id : {"a", "b", "c", "d", "e"}) jobs.Insert(Job(id, 0));
  jobs.at("a").priority = 1;
  EXPECT_EQ(jobs.changed_count(), 0u);  // not counting yet
  EXPECT_TRUE(jobs.TakeChanged().empty());
  auto ids = [](const std::vector<const JobRecord*>& records) {
    std::vector<std::string> out;
    for (const JobRecord* record : records) out.push_back(record->job_id);
    return out;
  };
  const Jobs& view = jobs;
  EXPECT_EQ(view.find("b")->second.priority, 0);  // const: not counted
  EXPECT_EQ(view.at("c").priority, 0);
  for (const auto& [id, job] : view) EXPECT_FALSE(id.empty());
  EXPECT_EQ(jobs.changed_count(), 0u);
  EXPECT_EQ(jobs.find("zz"), jobs.end());                // found nothing, counted nothing
  jobs.find("c")->second.priority = 3;                   // a mutable iterator's record
  jobs.at("c").priority = 4;                             // again: still once
  jobs.Insert(Job("f", 0));                              // inserted
  jobs.FindOrMake("b");                                  // found mutable
  jobs.Changed(view.at("e")).priority = 5;               // through a const pointer
  EXPECT_EQ(jobs.find("d"), std::next(jobs.find("c")));  // iterators compared, not read
  EXPECT_EQ(ids(jobs.TakeChanged()), (std::vector<std::string>{"c", "f", "b", "e"}));
  EXPECT_TRUE(jobs.TakeChanged().empty());       // counting started anew
  for (auto&& [id, job] : jobs) job.priority++;  // a mutable walk counts them all
  EXPECT_EQ(jobs.changed_count(), jobs.size());
  EXPECT_EQ(jobs.TakeChanged().size(), jobs.size());
}

// Replace puts a new record where the old one was, and the map still finds it by its id (its
// key views the new record's id: assigning over the stored record left it viewing freed bytes).
TEST(ByOwnIdTest, ReplaceKeepsTheRecordsPlaceAndItsKey) {
  Jobs jobs;
  const std::string long_id(64, 'j');  // not kept inside the string: its bytes are on the heap
  JobRecord* stored = jobs.Insert(Job(long_id, 1)).first;
  jobs.Insert(Job("k", 2));
  JobRecord* replaced = jobs.Replace(Job(long_id, 7));
  EXPECT_EQ(replaced, stored);
  EXPECT_EQ(stored->priority, 7);
  for (int i = 0; i < 100; ++i)
    jobs.Insert(Job(std::string(64, 'a' + i % 26) + std::to_string(i), 0));
  ASSERT_NE(jobs.find(long_id), jobs.end());
  EXPECT_EQ(&jobs.at(long_id), stored);
  EXPECT_EQ(jobs.find(long_id)->first.data(), stored->job_id.data());
  EXPECT_EQ(jobs.Replace(Job("none", 0)), nullptr);
  EXPECT_EQ(jobs.count("none"), 0u);
}

}  // namespace
}  // namespace cairn::commands
