// Where secrets sit in what Cairn records: configs (experiment, command, template, config policy),
// task specs, task_container_defaults and checkpoint storages. One walk over them, shared by
// redaction (who may see a value: events/redaction.h) and sealing (how the log keeps a
// credential: events/sealing.h), so that both always agree on what is secret. Pure functions,
// safe from any thread.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "events.pb.h"

namespace cairn {

enum class SecretClass {
  kOwners,    // the owner may see it again: environment variables, the startup hook
  kMachines,  // only the machines that use it: storage credentials, registry passwords,
              // variables marked secret (environment.secret_environment_variables)
};

// What one secret value becomes; nullopt keeps it. Values that are not strings in a config are
// passed as their JSON text. `machines_only`: the rewrite leaves kOwners values alone, so config
// text that names no credential is skipped unread (sealing, on the writer's path).
struct SecretRewrite {
  template <class Apply>
  SecretRewrite(Apply apply, bool machines_only = false)  // NOLINT: a lambda is a rewrite
      : apply(std::move(apply)), machines_only(machines_only) {}
  std::optional<std::string> operator()(SecretClass secret_class, const std::string& value) const {
    return apply(secret_class, value);
  }

  std::function<std::optional<std::string>(SecretClass, const std::string& value)> apply;
  bool machines_only = false;
};

// A config (JSON): environment.environment_variables ("NAME=VALUE", a list or per cpu/cuda/rocm),
// environment.registry_auth's password, checkpoint_storage's credentials and an account_url's
// query. Returns whether anything changed.
bool RewriteConfigSecrets(nlohmann::json& config, const SecretRewrite& rewrite);
bool RewriteConfigSecrets(nlohmann::ordered_json& config, const SecretRewrite& rewrite);

// The same over stored text: the text rewritten, the same text when nothing changed, nullopt
// when it does not parse. YAML is re-written from its value only when something changed.
std::optional<std::string> RewriteConfigJsonSecrets(const std::string& json_text,
                                                    const SecretRewrite& rewrite);
// `also_secret`: variables marked secret elsewhere (the submission's YAML may hold a value whose
// name a template or config policy marks secret: the merged config knows).
std::optional<std::string> RewriteConfigYamlSecrets(const std::string& yaml_text,
                                                    const SecretRewrite& rewrite,
                                                    const std::set<std::string>& also_secret = {});
// A checkpoint storage on its own (a workspace's), as JSON text.
std::optional<std::string> RewriteStorageJsonSecrets(const std::string& json_text,
                                                     const SecretRewrite& rewrite);
// task_container_defaults as ResourcePoolsConfigured records them: environment_variables,
// registry_auth and startup_hook.
std::optional<std::string> RewriteTaskContainerDefaultsSecrets(const std::string& json_text,
                                                               const SecretRewrite& rewrite);

// A webhook's URL: what follows its scheme and host (its path and query, or its user
// information) is one kMachines value; the host stays, so that people see where it goes.
void RewriteWebhookUrl(std::string* url, const SecretRewrite& rewrite);

// A task spec: its registry password, startup hook and variables (those named in
// secret_variable_names are kMachines).
void RewriteSpecSecrets(events::TaskSpec& spec, const SecretRewrite& rewrite);

// Every secret of an event, in every payload that holds one (webhooks' URLs too: what follows the
// host is kMachines). Text that does not parse is left
// as it is when `unreadable` is nullopt, and replaced by it otherwise.
void RewriteEventSecrets(events::Envelope& event, const SecretRewrite& rewrite,
                         const std::optional<std::string>& unreadable_json = std::nullopt,
                         const std::optional<std::string>& unreadable_yaml = std::nullopt);

}  // namespace cairn
