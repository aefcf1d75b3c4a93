// The task_order projection: every task's id in submission order, by task type, keyed
// "order/<4-byte big-endian type><8-byte big-endian offset>" -> task id (with "task/<task_id>"
// marking it indexed), so that a page of a list (GET /api/v1/commands?offset=&limit=) reads its
// page of tasks instead of every task there ever was. Entries never change: a task's type and
// submission offset are fixed.
#pragma once

#include <functional>
#include <string>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kTaskOrderProjector = "task_order";

class TaskOrderProjector : public Projector {
 public:
  const std::string& name() const override { return kTaskOrderProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// Calls `visit` with the id of every task of `type`, in submission order, until it returns false.
Status VisitTaskIdsInOrder(ViewReader& reader, events::TaskType type,
                           const std::function<bool(const std::string& task_id)>& visit);

}  // namespace cairn::projections
