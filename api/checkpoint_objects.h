// Checkpoints kept in an object store (checkpoint_storage type s3 or azure), as the master reaches
// them for downloads, deletions and garbage collection. The layout is Determined's, so checkpoints
// written by its package and by cairn_harness are the same: S3 keys "<prefix>/<uuid>/<path>",
// Azure blobs "<uuid>/<path>" in the container. The credentials come from the storage config
// (the master holds the experiment's config, its credentials sealed as the log keeps them:
// `sealer` opens them), or for S3 without keys, the master's environment.
#pragma once

#include <memory>
#include <string>

#include "base/sealed_secrets.h"
#include "base/status.h"
#include "commands/experiments/experiment_config.h"
#include "net/object_store.h"

namespace cairn {

struct CheckpointObjects {
  std::unique_ptr<net::ObjectStore> store;
  std::string key_prefix;  // "<prefix>/" or "": where checkpoints' directories start
};

// A client for `storage`, which must be an object store (IsObjectStore()); NotSupported for an
// Azure storage reached by account_url (the master signs with an account key).
Result<CheckpointObjects> OpenCheckpointObjects(const experiments::CheckpointStorageConfig& storage,
                                                const SecretSealer& sealer);

// The keys of checkpoint `uuid` start with this.
std::string CheckpointKeyPrefix(const CheckpointObjects& objects, const std::string& uuid);

}  // namespace cairn
