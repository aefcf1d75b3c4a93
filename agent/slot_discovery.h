// What an agent offers the scheduler: artificial CPU slots, or the GPUs nvidia-smi lists.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::agent {

// One schedulable slot, as registered with the master (PROTOCOL.md §1 "devices").
struct SlotDevice {
  int id = 0;         // the slot id that AllocationAssigned.slot_ids refers to
  std::string brand;  // "Artificial" for CPU slots, the GPU's name otherwise
  std::string uuid;   // the GPU's UUID; "" for CPU slots
  std::string type;   // "cpu" | "cuda"
};

// `count` artificial CPU slots with ids 0..count-1.
std::vector<SlotDevice> ArtificialCpuSlots(int count);

// `count` artificial GPU slots with ids 0..count-1 (uuids GPU-artificial-<id>): GPUs as far as
// scheduling, CUDA_VISIBLE_DEVICES and a container's device mapping go, for tests and demos.
std::vector<SlotDevice> ArtificialGpuSlots(int count);

// Parses the output of `nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader`
// ("0, GPU-3f2…, NVIDIA A100-SXM4-40GB" per line). InvalidArgument on a malformed line.
Result<std::vector<SlotDevice>> ParseNvidiaSmiCsv(const std::string& output);

// Runs nvidia-smi (searched on `path_env`) and returns the GPUs it lists. NotFound when
// nvidia-smi is not on the PATH; an error when it fails or lists no GPU.
Result<std::vector<SlotDevice>> DiscoverGpus(const std::string& path_env);

}  // namespace cairn::agent
