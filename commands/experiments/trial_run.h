// What a trial process needs to start (agent/harness/PROTOCOL.md §2): its trial, where to resume,
// and its experiment's settings, as the write side holds them for the live run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  // What Determined's package reads (agent/harness/cairn_harness/determined_mode.py).
  std::vector<std::string> entrypoint_argv;  // the entrypoint given as a list; empty otherwise
  std::string task_id;
  int32_t run = 0;          // this run's number (DET_TRIAL_RUN_ID), 1 for the first
  uint32_t trial_seed = 0;  // the trial's seed (DET_TRIAL_SEED), derived from the experiment's
  nlohmann::json determined_config;  // experiments::DeterminedTrialConfig
  // The gang's containers in rank order (Determined's rendezvous): where each agent's tasks are
  // reached, and how many slots each has.
  std::vector<std::string> container_addresses;
  std::vector<int32_t> container_slots;
};

}  // namespace cairn::commands
