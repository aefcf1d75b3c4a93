// A task's and a job's records in the decision snapshot, as protobuf's wire format.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in task_snapshot.cpp, tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commands/tasks/task_records.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

// Reused across a snapshot's records: their buffers keep their capacity.
struct RecordScratch {
  std::string bytes;
  events::Resources resources;
  events::AllocationPart part;
};

// How a job names its tasks: by their indexes in the snapshot's list of tasks (a whole
// snapshot), or by their ids (a delta, whose tasks may be in the snapshots before it).
enum class TasksNamed { kByIndex, kById };

// The task's snapshot::Task, appended to scratch.bytes (cleared first).
void EncodeTask(const TaskRecord& task, RecordScratch& scratch);

// The task `in` holds; its strings and sub-messages are moved out of `in`.
TaskRecord DecodeTask(snapshot::Task& in);

// The job's snapshot::Job, appended to scratch.bytes (cleared first).
void EncodeJob(const JobRecord& job, TasksNamed named, const std::vector<uint32_t>& task_indexes,
               RecordScratch& scratch);

JobRecord DecodeJob(snapshot::Job& in);

}  // namespace cairn::commands
