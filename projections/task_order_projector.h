// The task_order projection, what lists of tasks read besides the tasks' views:
// - every task's id in submission order, by task type, keyed
//   "order/<4-byte big-endian type><8-byte big-endian offset>" -> task id, so that a page of a
//   list (GET /api/v1/commands?offset=&limit=) reads its page of tasks instead of every task there
//   ever was. These entries never change: a task's type and submission offset are fixed.
// - "task/<task_id>" -> "<4-byte type><user>", the list the task belongs to;
// - "changed/<4-byte type><user>" -> the offset (decimal) of the last event about a task of that
//   list: the list's version. It moves with every event the tasks projection may change a view
//   of that user's tasks of that type for (an event about the task, or about its job when the
//   job's id is the task's), so equal versions mean the same views; it may move for an event
//   that changed nothing, which only costs a render.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kTaskOrderProjector = "task_order";

class TaskOrderProjector : public Projector {
 public:
  const std::string& name() const override { return kTaskOrderProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// The version of the list of `type`'s tasks of `users` (every user's when empty): the offset of
// the last event about one of those tasks (0: none yet).
Result<uint64_t> ReadTaskListVersion(ViewReader& reader, events::TaskType type,
                                     const std::vector<std::string>& users);

// Calls `visit` with the id of every task of `type`, in submission order, until it returns false.
Status VisitTaskIdsInOrder(ViewReader& reader, events::TaskType type,
                           const std::function<bool(const std::string& task_id)>& visit);

}  // namespace cairn::projections
