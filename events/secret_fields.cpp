#include "events/secret_fields.h"

#include <set>

#include "base/yaml_json.h"

namespace cairn {

namespace {

// Storage keys that hold credentials (Determined's names for S3, Azure and GCS).
constexpr const char* kStorageCredentialKeys[] = {"access_key",  "secret_key",  "password",
                                                  "credentials", "account_key", "connection_string",
                                                  "credential"};
// A registry's password (or its base64 "auth"), and the cluster's setup script.
constexpr const char* kRegistryCredentialKeys[] = {"password", "auth"};
constexpr const char* kStartupHookKeys[] = {"startup_hook"};

template <class Json>
std::string TextOf(const Json& value) {
  return value.is_string() ? value.template get<std::string>() : value.dump();
}

// "NAME=VALUE" entries; an entry without '=' unsets NAME and holds no value.
template <class Json>
bool RewriteVariableList(Json& entries, const std::set<std::string>& secret,
                         const SecretRewrite& rewrite) {
  if (!entries.is_array()) return false;
  bool changed = false;
  for (auto& entry : entries) {
    if (!entry.is_string()) continue;
    const std::string text = entry.template get<std::string>();
    const size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    auto value = rewrite(secret.count(name) > 0 ? SecretClass::kMachines : SecretClass::kOwners,
                         text.substr(equals + 1));
    if (!value) continue;
    entry = name + "=" + *value;
    changed = true;
  }
  return changed;
}

template <class Json, class Keys>
bool RewriteKeys(Json& object, SecretClass secret_class, const SecretRewrite& rewrite,
                 const Keys& keys) {
  if (!object.is_object()) return false;
  bool changed = false;
  for (const char* key : keys) {
    auto found = object.find(key);
    if (found == object.end() || found->is_null()) continue;
    auto value = rewrite(secret_class, TextOf(*found));
    if (!value) continue;
    *found = *value;
    changed = true;
  }
  return changed;
}

// The variables an environment section marks secret (secret_environment_variables), added to
// `names`.
template <class Json>
void AddSecretVariableNames(const Json& environment, std::set<std::string>& names) {
  if (!environment.is_object()) return;
  auto marked = environment.find("secret_environment_variables");
  if (marked == environment.end() || !marked->is_array()) return;
  for (const auto& name : *marked) {
    if (name.is_string()) names.insert(name.template get<std::string>());
  }
}

template <class Json>
bool RewriteEnvironment(Json& environment, const SecretRewrite& rewrite,
                        const std::set<std::string>& also_secret = {}) {
  if (!environment.is_object()) return false;
  bool changed = false;
  std::set<std::string> secret = also_secret;
  AddSecretVariableNames(environment, secret);
  auto variables = environment.find("environment_variables");
  if (variables != environment.end()) {
    if (variables->is_object()) {
      for (auto& [device, list] : variables->items()) {
        changed |= RewriteVariableList(list, secret, rewrite);
      }
    } else {
      changed |= RewriteVariableList(*variables, secret, rewrite);
    }
  }
  // The agent pulling the image needs it, no person does (it may be the cluster's own, from
  // task_container_defaults).
  auto auth = environment.find("registry_auth");
  if (auth != environment.end()) {
    changed |= RewriteKeys(*auth, SecretClass::kMachines, rewrite, kRegistryCredentialKeys);
  }
  return changed;
}

template <class Json>
bool RewriteStorage(Json& storage, const SecretRewrite& rewrite) {
  if (!storage.is_object()) return false;
  // The owner named them once and never needs them back, and an event or answer that held them
  // would hand the bucket to whoever reads it.
  bool changed = RewriteKeys(storage, SecretClass::kMachines, rewrite, kStorageCredentialKeys);
  // An account URL may carry a SAS token in its query.
  auto url = storage.find("account_url");
  if (url != storage.end() && url->is_string()) {
    const std::string text = url->template get<std::string>();
    const size_t query = text.find('?');
    if (query != std::string::npos) {
      if (auto value = rewrite(SecretClass::kMachines, text.substr(query + 1))) {
        *url = text.substr(0, query + 1) + *value;
        changed = true;
      }
    }
  }
  return changed;
}

template <class Json>
bool RewriteConfigOf(Json& config, const SecretRewrite& rewrite,
                     const std::set<std::string>& also_secret = {}) {
  if (!config.is_object()) return false;
  bool changed = false;
  auto environment = config.find("environment");
  if (environment != config.end()) {
    changed |= RewriteEnvironment(*environment, rewrite, also_secret);
  }
  auto storage = config.find("checkpoint_storage");
  if (storage != config.end()) changed |= RewriteStorage(*storage, rewrite);
  return changed;
}

// Whether the text may hold a secret at all: most configs name neither section, and the event
// stream redacts every event it sends.
bool MayHoldSecrets(const std::string& text, const SecretRewrite& rewrite) {
  if (!rewrite.machines_only) {
    return text.find("environment") != std::string::npos ||
           text.find("checkpoint_storage") != std::string::npos;
  }
  for (const char* key : {"secret_environment_variables", "registry_auth", "account_url"}) {
    if (text.find(key) != std::string::npos) return true;
  }
  for (const char* key : kStorageCredentialKeys) {
    if (text.find(key) != std::string::npos) return true;
  }
  return false;
}

void RewriteText(std::string& text, std::optional<std::string> rewritten,
                 const std::optional<std::string>& unreadable) {
  if (rewritten) {
    text = std::move(*rewritten);
  } else if (unreadable) {
    text = *unreadable;
  }
}

}  // namespace

bool RewriteConfigSecrets(nlohmann::json& config, const SecretRewrite& rewrite) {
  return RewriteConfigOf(config, rewrite);
}

bool RewriteConfigSecrets(nlohmann::ordered_json& config, const SecretRewrite& rewrite) {
  return RewriteConfigOf(config, rewrite);
}

std::optional<std::string> RewriteConfigJsonSecrets(const std::string& json_text,
                                                    const SecretRewrite& rewrite) {
  if (!MayHoldSecrets(json_text, rewrite)) return json_text;
  auto config = nlohmann::ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return std::nullopt;
  return RewriteConfigOf(config, rewrite) ? config.dump() : json_text;
}

std::optional<std::string> RewriteConfigYamlSecrets(const std::string& yaml_text,
                                                    const SecretRewrite& rewrite,
                                                    const std::set<std::string>& also_secret) {
  if (also_secret.empty() && !MayHoldSecrets(yaml_text, rewrite)) return yaml_text;
  auto config = YamlTextToJson(yaml_text, "config");
  if (!config.ok()) return std::nullopt;
  return RewriteConfigOf(*config, rewrite, also_secret) ? JsonToYamlText(*config) : yaml_text;
}

std::optional<std::string> RewriteStorageJsonSecrets(const std::string& json_text,
                                                     const SecretRewrite& rewrite) {
  if (json_text.empty()) return json_text;
  auto storage = nlohmann::ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (storage.is_discarded()) return std::nullopt;
  return RewriteStorage(storage, rewrite) ? storage.dump() : json_text;
}

std::optional<std::string> RewriteTaskContainerDefaultsSecrets(const std::string& json_text,
                                                               const SecretRewrite& rewrite) {
  if (json_text.empty()) return json_text;
  auto defaults = nlohmann::ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!defaults.is_object()) return std::nullopt;
  // The same keys as a config's environment section, at the top level.
  bool changed = RewriteEnvironment(defaults, rewrite);
  // The cluster's setup script may hold what its environment variables would.
  changed |= RewriteKeys(defaults, SecretClass::kOwners, rewrite, kStartupHookKeys);
  return changed ? defaults.dump() : json_text;
}

// A webhook's URL may be its credential (Slack's are).
void RewriteWebhookUrl(std::string* url, const SecretRewrite& rewrite) {
  const size_t scheme = url->find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t path = url->find_first_of("/?#@", start);
  if (path == std::string::npos) return;
  // user:password@host...: everything after the scheme (webhooks refuse such URLs; this keeps
  // redaction safe for any URL text); else the host and a '/' stay.
  const bool user_info = (*url)[path] == '@';
  const size_t secret_from = user_info ? start : path + ((*url)[path] == '/' ? 1 : 0);
  const std::string visible = user_info ? url->substr(0, start) : url->substr(0, path) + "/";
  if (auto value = rewrite(SecretClass::kMachines, url->substr(secret_from))) {
    *url = visible + *value;
  }
}

namespace {

// The variables a config (JSON text) marks secret; a secret variable's value in the YAML the
// user sent may be marked by a template or policy merged into the config.
std::set<std::string> SecretVariablesOf(const std::string& config_json) {
  std::set<std::string> names;
  if (config_json.find("secret_environment_variables") == std::string::npos) return names;
  auto config = nlohmann::ordered_json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_object() && config.contains("environment")) {
    AddSecretVariableNames(config["environment"], names);
  }
  return names;
}

}  // namespace

void RewriteSpecSecrets(events::TaskSpec& spec, const SecretRewrite& rewrite) {
  if (!spec.registry_auth().password().empty()) {
    if (auto value = rewrite(SecretClass::kMachines, spec.registry_auth().password())) {
      spec.mutable_registry_auth()->set_password(*value);
    }
  }
  if (!spec.startup_hook().empty()) {
    if (auto value = rewrite(SecretClass::kOwners, spec.startup_hook())) {
      spec.set_startup_hook(*value);
    }
  }
  // Variables are the owner's unless marked: a rewrite of credentials alone has nothing to do.
  if (spec.environment_variables().empty() ||
      (rewrite.machines_only && spec.secret_variable_names().empty())) {
    return;
  }
  const std::set<std::string> secret(spec.secret_variable_names().begin(),
                                     spec.secret_variable_names().end());
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& entry : spec.environment_variables()) entries.push_back(entry);
  if (!RewriteVariableList(entries, secret, rewrite)) return;
  spec.clear_environment_variables();
  for (const auto& entry : entries) spec.add_environment_variables(entry.get<std::string>());
}

void RewriteEventSecrets(events::Envelope& event, const SecretRewrite& rewrite,
                         const std::optional<std::string>& unreadable_json,
                         const std::optional<std::string>& unreadable_yaml) {
  auto config_json = [&](std::string* text) {
    if (!text->empty()) {
      RewriteText(*text, RewriteConfigJsonSecrets(*text, rewrite), unreadable_json);
    }
  };
  auto config_yaml = [&](std::string* text, const std::set<std::string>& also_secret) {
    if (!text->empty()) {
      RewriteText(*text, RewriteConfigYamlSecrets(*text, rewrite, also_secret), unreadable_yaml);
    }
  };
  auto storage_json = [&](std::string* text) {
    RewriteText(*text, RewriteStorageJsonSecrets(*text, rewrite), unreadable_json);
  };
  auto defaults_json = [&](std::string* text) {
    RewriteText(*text, RewriteTaskContainerDefaultsSecrets(*text, rewrite), unreadable_json);
  };
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted: {
      auto* submitted = event.mutable_task_submitted();
      RewriteSpecSecrets(*submitted->mutable_spec(), rewrite);
      config_json(submitted->mutable_config_json());
      break;
    }
    case events::Envelope::kAllocationAssigned:
      RewriteSpecSecrets(*event.mutable_allocation_assigned()->mutable_spec(), rewrite);
      break;
    case events::Envelope::kExperimentCreated: {
      auto* created = event.mutable_experiment_created();
      config_yaml(created->mutable_original_config(), SecretVariablesOf(created->config_json()));
      config_json(created->mutable_config_json());
      break;
    }
    case events::Envelope::kExperimentContinued: {
      auto* continued = event.mutable_experiment_continued();
      config_yaml(continued->mutable_override_yaml(), SecretVariablesOf(continued->config_json()));
      config_json(continued->mutable_config_json());
      break;
    }
    case events::Envelope::kTemplateSaved:
      config_yaml(event.mutable_template_saved()->mutable_config_yaml(), {});
      break;
    case events::Envelope::kConfigPoliciesSet:
      config_json(event.mutable_config_policies_set()->mutable_invariant_config_json());
      break;
    case events::Envelope::kResourcePoolsConfigured: {
      auto* pools = event.mutable_resource_pools_configured();
      defaults_json(pools->mutable_task_container_defaults_json());
      for (auto& pool : *pools->mutable_pools()) {
        defaults_json(pool.mutable_task_container_defaults_json());
      }
      break;
    }
    case events::Envelope::kWebhookCreated:
      RewriteWebhookUrl(event.mutable_webhook_created()->mutable_url(), rewrite);
      break;
    case events::Envelope::kWebhookUpdated:
      RewriteWebhookUrl(event.mutable_webhook_updated()->mutable_url(), rewrite);
      break;
    case events::Envelope::kWorkspaceCreated:
      storage_json(event.mutable_workspace_created()->mutable_checkpoint_storage_json());
      break;
    case events::Envelope::kWorkspaceUpdated:
      if (event.workspace_updated().has_checkpoint_storage_json()) {
        storage_json(event.mutable_workspace_updated()->mutable_checkpoint_storage_json());
      }
      break;
    default:
      break;
  }
}

}  // namespace cairn
