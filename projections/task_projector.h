// The tasks projection: one TaskView per task, keyed "task/<task_id>".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kTasksProjector = "tasks";

class TaskProjector : public Projector {
 public:
  const std::string& name() const override { return kTasksProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

std::string TaskKey(const std::string& task_id);

Result<std::optional<views::TaskView>> ReadTask(ViewReader& reader, const std::string& task_id);
// Every task, in submission (log) order.
Result<std::vector<views::TaskView>> ReadTasks(ViewReader& reader);

}  // namespace cairn::projections
