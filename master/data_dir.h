// Where things live in a master's data directory, for the master and for the tools and tests
// that start one (header only: no library to link).
#pragma once

#include <string>

namespace cairn {

// The token agents present, when master.yaml sets no security.agent_token: the master makes it
// at its first start (mode 0600); agents on the same machine read it with --agent-token-file.
inline std::string AgentTokenPath(const std::string& data_dir) { return data_dir + "/agent-token"; }
// The key webhooks are signed with, when master.yaml sets no webhooks.signing_key: made at the
// first start (mode 0600) and kept.
inline std::string WebhookSigningKeyPath(const std::string& data_dir) {
  return data_dir + "/webhook-signing-key";
}

// The write side's snapshots (master/decision_snapshots.h).
inline std::string DecisionSnapshotDir(const std::string& data_dir) {
  return data_dir + "/decision-snapshots";
}

}  // namespace cairn
