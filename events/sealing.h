// Credentials sealed in the log (base/sealed_secrets.h): the one writer seals every event before
// it is appended, so no credential reaches the log's files, Kafka or anything that copies them;
// the places that use a credential open it. Which values are credentials is
// events/secret_fields.h's SecretClass::kMachines: storage keys, registry passwords, variables
// marked secret and webhook URLs' paths. Everything else stays as it is, and only those fields
// are ever opened: a sealed value anywhere else stays sealed. Sealed values are the log's own:
// one copied out of it must never come back in from outside (HoldsSealedValue).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/sealed_secrets.h"
#include "base/status.h"
#include "events.pb.h"

namespace cairn {

// Seals the credentials of `event` in place (none without a key, and none twice: sealing is
// deterministic and leaves sealed values alone, so a resubmitted config still compares equal).
void SealSecrets(events::Envelope& event, const SecretSealer& sealer);

// The same for what a command carries, sealed at the edge so that the decider compares it with
// what the log recorded: a pool configuration (a restart records nothing new), a `continue`
// override and a workspace's storage (JSON text).
void SealSecrets(events::ResourcePoolsConfigured& pools, const SecretSealer& sealer);
// `also_secret`: variables marked secret by the config the YAML is laid over.
std::string SealConfigYaml(const std::string& yaml_text, const SecretSealer& sealer,
                           const std::set<std::string>& also_secret = {});
std::string SealStorageJson(const std::string& json_text, const SecretSealer& sealer);

// Opens the sealed credentials of `spec` (its registry password and variables marked secret),
// for the agent that runs it. FailedPrecondition when one does not open under this key.
Status UnsealSpec(events::TaskSpec& spec, const SecretSealer& sealer);

// Opens the sealed credentials of a config (JSON): storage credentials, the registry password,
// variables marked secret. For a trial's own description.
Status UnsealConfig(nlohmann::json& config, const SecretSealer& sealer);

// A webhook's URL as the log keeps it, opened for the shipper and the webhook's editors.
Result<std::string> UnsealWebhookUrl(const std::string& url, const SecretSealer& sealer);

// Whether text from outside (a request body) holds a sealed value, also behind JSON's or YAML's
// escapes ("cairn\u002dsealed", "\x63airn-sealed") in JSON strings and YAML inside them.
bool HoldsSealedValue(const std::string& text);

}  // namespace cairn
