// Checkpoints as first-class entities (`det checkpoint describe/download/delete`,
// `det experiment list-checkpoints`, `det experiment download`): read from the experiments
// projection with the training metadata Determined's CLI needs to find their files, downloaded
// through the master as a tar.gz of their shared_fs directory, and deleted by a command whose
// event the checkpoint collector carries out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/call.h"

namespace cairn::api {

net::Response GetCheckpointRoute(Call& call);      // GET /api/v1/checkpoints/{uuid}
net::Response DownloadCheckpoint(Call& call);      // GET /checkpoints/{uuid} (application/gzip)
net::Response DeleteCheckpointsRoute(Call& call);  // DELETE /api/v1/checkpoints

// One page of an experiment's checkpoints (trial_id unset) or one trial's, sorted as asked
// (`sortByAttr`: SORT_BY_SEARCHER_METRIC puts the best first; `orderBy` flips; default: by when
// they were saved).
net::Response ListCheckpointsOf(Call& call, const std::string& experiment_id,
                                std::optional<int64_t> trial_id);

// v1Checkpoint `uuid` with its training metadata (its experiment's configuration redacted for
// the caller, its trial's hyperparameters), whoever may see its experiment: for readers that
// decided visibility themselves (a model version shows the checkpoint it names). nullopt when
// there is no such checkpoint.
Result<std::optional<nlohmann::json>> CheckpointWithTrainingJson(Call& call,
                                                                 const std::string& uuid);

}  // namespace cairn::api
