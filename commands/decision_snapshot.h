// The write side's decision state as bytes, so that a master starts from a snapshot and folds only
// the log's tail instead of the whole log (master/decision_snapshots.h keeps the files). Pure: no
// I/O, no clock.
//
// Contract: for any log L and offset k, Decode(Encode(Fold(L[0..k)))) folded on with L[k..] is
// the same state as Fold(L) (tests/commands/decision_snapshot_test.cpp checks it field by field
// through Encode, and runs every decider test with the state round-tripped before each command).
// What the state derives (name indexes, the queues, the live jobs' ranks, each job's tasks, each
// experiment's parsed configuration and searcher) is rebuilt, not stored: a searcher from its
// configuration, seed and recorded calls (ExperimentRecord::searcher_inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "commands/decision_state.h"

namespace google::protobuf::io {
class ZeroCopyOutputStream;
}

namespace cairn::commands {

// Bumped whenever DecisionState or the meaning of a stored field changes: a snapshot of another
// format is not decoded (the log is folded from further back instead).
// 4: experiments' creation times and webhooks; 3: deltas; 2: allocations per task.
inline constexpr uint32_t kDecisionSnapshotFormat = 4;

// Which log a snapshot belongs to: the ids of its events at offset 0 and at next_offset - 1.
struct LogAnchor {
  std::string first_event_id;
  std::string last_event_id;
};

// The state's bytes; the same state always gives the same bytes.
std::string EncodeDecisionState(const DecisionState& state, const LogAnchor& anchor);
// The same bytes, written to `out` a record at a time: nothing as large as the state is held.
// Allocates and writes, nothing else (no locks, no logging), so a forked child may call it.
// False when `out` failed.
bool EncodeDecisionStateTo(const DecisionState& state, const LogAnchor& anchor,
                           google::protobuf::io::ZeroCopyOutputStream& out);

// A delta snapshot: the tasks and jobs that changed since the snapshot at parent_offset
// (ByOwnId::TakeChanged), on the chain that starts with the whole snapshot at base_offset. The
// rest of the state (agents, experiments, identity, ...: what grows with the cluster, not with
// the queue or the history of tasks) is written whole, as in a whole snapshot. So a snapshot's
// cost follows what changed, not how many tasks the state holds.
struct DecisionDelta {
  uint64_t base_offset = 0;
  uint64_t parent_offset = 0;
  std::vector<const TaskRecord*> tasks;
  std::vector<const JobRecord*> jobs;
};
// The tasks and jobs `state` counted as changed since the last call, as the delta on the chain
// (base_offset, parent_offset); counting starts anew (the first call starts it: ByOwnId).
DecisionDelta TakeDelta(DecisionState& state, uint64_t base_offset, uint64_t parent_offset);
// At a whole snapshot: what changed before it is in it; counting starts from here.
inline void StartCountingChanges(DecisionState& state) { TakeDelta(state, 0, 0); }
// The tasks and jobs counted as changed so far; nullopt when the state is not counting (decoded
// or folded anew since its last snapshot), so that no delta can say what changed.
std::optional<size_t> CountedChanges(const DecisionState& state);

// A delta's bytes for `state`, as EncodeDecisionStateTo writes a whole snapshot's.
bool EncodeDecisionDeltaTo(const DecisionState& state, const LogAnchor& anchor,
                           const DecisionDelta& delta,
                           google::protobuf::io::ZeroCopyOutputStream& out);

struct DecodedDecisionState {
  DecisionState state;
  LogAnchor anchor;
};

// The state `bytes` hold. InvalidArgument when they do not parse or do not hold a state this
// build can rebuild (a searcher's configuration no longer parses) or are a delta,
// FailedPrecondition for another format: either way the caller folds the log from further back.
Result<std::unique_ptr<DecodedDecisionState>> DecodeDecisionState(std::string_view bytes);

// The state a chain gives: a whole snapshot, then deltas each following the one before it (its
// parent_offset that one's next_offset, its base_offset the first's, the same log's first event).
// The anchor is the last one's. Errors as DecodeDecisionState's; InvalidArgument for a chain whose
// links do not follow. On an error, `failed_link` (when given) says which link it is blamed on,
// so that a caller passes over every chain through it.
Result<std::unique_ptr<DecodedDecisionState>> DecodeDecisionChain(
    const std::vector<std::string_view>& chain, size_t* failed_link = nullptr);

}  // namespace cairn::commands
