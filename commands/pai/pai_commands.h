// The OpenPAI domain's commands: submit a job, stop it. Decided by commands/pai/pai_decider.h.
#pragma once

#include <string>

#include "events.pb.h"

namespace cairn::commands {

// An OpenPAI job (commands/pai/pai_job.h): the edge parsed and validated the job JSON and chose
// job_id and workspace_id; the decider maps its virtual cluster to a pool, refuses a name the
// user already used, and submits the first attempt's tasks as one gang.
struct SubmitPaiJob {
  static constexpr const char* kName = "SubmitPaiJob";
  events::PaiJobSubmitted job;
};

// PUT .../executionType {"value": "STOP"}: every task of the job is killed, and it ends STOPPED.
struct StopPaiJob {
  static constexpr const char* kName = "StopPaiJob";
  std::string job_id;
};

}  // namespace cairn::commands
