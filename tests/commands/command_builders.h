// Commands the write-side tests build again and again.
#pragma once

#include <string>

#include "commands/commands.h"

namespace cairn::commands::testing {

// A one-slot `true` command with default priority and pool.
inline SubmitTask OneSlotSubmit(const std::string& task_id) {
  SubmitTask submit;
  submit.task_id = task_id;
  submit.spec.add_entrypoint("true");
  submit.resources.set_slots(1);
  return submit;
}

}  // namespace cairn::commands::testing
