// The audit trail, read from the log: who did what to what, and when. Every event already names
// its actor ("user:NAME", "agent:ID", "system:COMPONENT"), its time and what it is about, so the
// trail is a filter over the log, oldest first, not a second record that could disagree with it.
// Refused logins are events (LoginFailed) and so are in it. Pure: events in, records out.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "events.pb.h"
#include "events/redaction.h"

namespace cairn::replay {

struct AuditQuery {
  // "" = anyone. "alice" means the user alice ("user:alice"); "agent:a1" or "system:scheduler"
  // name any actor exactly.
  std::string actor;
  // "" = anything. "experiment/7", "trial/3", "task/ID", "agent/ID", "user/NAME" (or "user/ID"),
  // "template/NAME", or a bare id (a task, job, agent or allocation id, as `replay dump`).
  std::string entity;
  std::optional<int64_t> since_micros;  // inclusive
  std::optional<int64_t> until_micros;  // inclusive
  // The master's own decisions (scheduler, experiment reactor, start-up) are left out unless
  // asked for: the trail is about what users and agents did.
  bool include_system = false;
};

struct AuditRecord {
  uint64_t offset = 0;
  int64_t time_unix_micros = 0;
  std::string actor;
  std::string action;                 // the event's type, e.g. "ExperimentStateChanged"
  std::vector<std::string> subjects;  // what it is about, e.g. {"experiment/7"}
};

// Reads events in log order and answers which of them the query keeps. It remembers users'
// names as it goes, so that "user/alice" finds the events that name alice by id, and which
// trial each task runs and which experiment each trial is of, so that an experiment's timeline
// holds its trials' scheduling too (placed, preempted, resumed, exited).
class AuditTrail {
 public:
  explicit AuditTrail(AuditQuery query) : query_(std::move(query)) {}

  // The record of `event` when the query keeps it.
  std::optional<AuditRecord> Add(const events::Envelope& event);

 private:
  std::vector<std::string> SubjectsOf(const events::Envelope& event);
  bool ActorMatches(const std::string& actor) const;

  // Adds the trial of a task and the experiment of a trial the subjects name, learning both from
  // the events that name them together (TrialCreated, a trial's TaskSubmitted).
  void AddParents(std::vector<std::string>& subjects);

  AuditQuery query_;
  std::map<int64_t, std::string> usernames_;  // user id -> name, as of the events read so far
  std::map<std::string, std::string> trial_of_task_;        // "task/X" -> "trial/T"
  std::map<std::string, std::string> experiment_of_trial_;  // "trial/T" -> "experiment/E"
};

// One line of text: "2026-11-25T10:00:00.123456Z  #17  user:admin  UserCreated  user/3 user/bob".
std::string AuditLine(const AuditRecord& record);

// {"offset", "time", "actor", "action", "subjects", "event"}: the record and its whole event
// (secrets blanked, as everywhere events leave the master).
nlohmann::json AuditRecordJson(const AuditRecord& record, const events::Envelope& event,
                               Audience audience);

}  // namespace cairn::replay
