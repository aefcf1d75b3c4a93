// The audit trail's filter (replay/audit.h) over hand-made events: who did what to what, with
// users found by name across renames, the master's own decisions left out unless asked for.
#include "replay/audit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cairn::replay {
namespace {

std::vector<events::Envelope> Story() {
  std::vector<events::Envelope> story;
  auto add = [&](const std::string& actor, int64_t seconds) -> events::Envelope& {
    events::Envelope& event = story.emplace_back();
    event.set_offset(story.size() - 1);
    event.set_actor(actor);
    event.set_time_unix_micros(seconds * 1'000'000);
    return event;
  };
  auto* created = add("user:admin", 100).mutable_user_created();  // #0
  created->set_user_id(3);
  created->set_username("bob");
  created->set_password_hash("$argon2id$secret");
  add("user:bob", 110).mutable_experiment_created()->set_experiment_id(7);       // #1
  add("system:experiments", 111).mutable_trial_created()->set_trial_id(1);       // #2
  add("system:experiments", 111).mutable_trial_created()->set_experiment_id(7);  // #3
  auto* killed = add("user:alice", 120).mutable_experiment_state_changed();      // #4
  killed->set_experiment_id(7);
  killed->set_state(events::EXPERIMENT_STATE_STOPPING_KILLED);
  add("", 125).mutable_login_failed()->set_username("bob");       // #5
  auto* renamed = add("user:admin", 130).mutable_user_updated();  // #6
  renamed->set_user_id(3);
  renamed->set_username("robert");
  add("user:admin", 140).mutable_user_password_changed()->set_user_id(3);  // #7
  add("agent:a1", 150).mutable_task_started()->set_task_id("cmd-1");       // #8
  return story;
}

std::vector<uint64_t> Offsets(AuditQuery query) {
  AuditTrail trail(std::move(query));
  std::vector<uint64_t> offsets;
  for (const auto& event : Story()) {
    if (auto record = trail.Add(event)) offsets.push_back(record->offset);
  }
  return offsets;
}

TEST(AuditTest, WhoKilledExperimentSeven) {
  AuditQuery query;
  query.entity = "experiment/7";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{1, 4}));
  query.actor = "alice";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{4}));
  query.actor.clear();
  query.include_system = true;
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{1, 3, 4}));
}

TEST(AuditTest, AUserIsFoundByNameBeforeAndAfterARenameAndByRefusedLogins) {
  AuditQuery query;
  query.entity = "user/bob";
  // Created as bob, a refused login as bob, renamed (the event names id 3, known as bob then).
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{0, 5, 6}));
  query.entity = "user/robert";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{6, 7}));
  query.entity = "user/3";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{0, 6, 7}));
}

TEST(AuditTest, ActorsTimesAndBareIdsNarrowTheTrail) {
  AuditQuery query;
  query.actor = "admin";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{0, 6, 7}));
  query.actor = "agent:a1";
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{8}));
  query.actor = "system:experiments";  // naming the system asks for it
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{2, 3}));
  query = AuditQuery();
  query.since_micros = 120'000'000;
  query.until_micros = 140'000'000;
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{4, 5, 6, 7}));
  query = AuditQuery();
  query.entity = "cmd-1";  // a bare task id, as `replay dump --entity`
  EXPECT_EQ(Offsets(query), (std::vector<uint64_t>{8}));
}

// An experiment's timeline holds its trials' scheduling: the preemption of a trial's task, with
// its reason, and the placement that resumes it, though neither event names the experiment.
TEST(AuditTest, AnExperimentsTimelineHoldsItsTrialsPreemptionAndResume) {
  std::vector<events::Envelope> story;
  auto add = [&](const std::string& actor) -> events::Envelope& {
    events::Envelope& event = story.emplace_back();
    event.set_offset(story.size() - 1);
    event.set_actor(actor);
    return event;
  };
  auto* trial = add("system:experiments").mutable_trial_created();  // #0
  trial->set_experiment_id(7);
  trial->set_trial_id(3);
  auto* submitted = add("system:experiments").mutable_task_submitted();  // #1
  submitted->set_task_id("trial-task");
  submitted->set_trial_id(3);
  add("system:scheduler").mutable_allocation_assigned()->set_task_id("trial-task");  // #2
  add("system:scheduler").mutable_allocation_assigned()->set_task_id("other-task");  // #3
  auto* preempted = add("system:scheduler").mutable_preemption_requested();          // #4
  preempted->set_task_id("trial-task");
  preempted->set_reason("preempted by job high-priority (priority 1 over 50)");
  add("agent:a1").mutable_task_exited()->set_task_id("trial-task");                  // #5
  add("system:scheduler").mutable_allocation_assigned()->set_task_id("trial-task");  // #6

  AuditQuery query;
  query.entity = "experiment/7";
  query.include_system = true;
  AuditTrail trail(query);
  std::vector<uint64_t> kept;
  for (const auto& event : story) {
    if (auto record = trail.Add(event)) kept.push_back(record->offset);
  }
  EXPECT_EQ(kept, (std::vector<uint64_t>{0, 1, 2, 4, 5, 6}));
  query.entity = "trial/3";
  AuditTrail by_trial(query);
  std::vector<std::string> subjects;
  for (const auto& event : story) {
    if (auto record = by_trial.Add(event); record && record->offset == 4)
      subjects = record->subjects;
  }
  EXPECT_EQ(subjects, (std::vector<std::string>{"task/trial-task", "trial/3", "experiment/7"}));
}

TEST(AuditTest, ALineSaysWhenWhoWhatAndToWhatAndJsonBlanksSecrets) {
  AuditTrail trail{AuditQuery()};
  const std::vector<events::Envelope> story = Story();
  auto record = trail.Add(story[0]);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(AuditLine(*record),
            "1970-01-01T00:01:40.000000Z  #0  user:admin  UserCreated  user/3 user/bob");
  const std::string json = AuditRecordJson(*record, story[0], Audience::kOwner).dump();
  EXPECT_NE(json.find("\"actor\":\"user:admin\""), std::string::npos) << json;
  EXPECT_EQ(json.find("secret"), std::string::npos) << "password hashes are blanked: " << json;
}

TEST(AuditTest, ARefusedChangeIsAboutWhatItsPathNames) {
  events::Envelope event;
  event.set_actor("user:alice");
  event.mutable_access_denied()->set_method("POST");
  event.mutable_access_denied()->set_path("/api/v1/experiments/7/kill");
  AuditQuery query;
  query.entity = "experiment/7";
  AuditTrail trail(query);
  auto record = trail.Add(event);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->action, "AccessDenied");
  EXPECT_EQ(record->subjects, (std::vector<std::string>{"experiment/7"}));
  event.mutable_access_denied()->set_path("/api/v1/users");  // names nothing in particular
  EXPECT_FALSE(trail.Add(event).has_value());
}

}  // namespace
}  // namespace cairn::replay
