// What a trial process needs to start (agent/harness/PROTOCOL.md §2): its trial, where to resume,
// and its experiment's settings, as the write side holds them for the live run.
#pragma once

#include <cstdint>
#include <string>

#include "commands/experiments/experiment_config.h"

namespace cairn::commands {

struct TrialRunStart {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  int32_t request_id = 0;
  std::string hparams_json;
  std::string entrypoint;
  std::string checkpoint_dir;
  std::string latest_checkpoint;  // uuid; "" = start from scratch
  int64_t checkpoint_batches = 0;
  int64_t records_per_epoch = 0;
  int64_t global_batch_size = 0;
  // The experiment's environment section; the harness picks each list's variant by the slot
  // type of the agent it runs on.
  experiments::EnvironmentConfig environment;
  std::string context_digest;  // the model definition in the context store
};

}  // namespace cairn::commands
