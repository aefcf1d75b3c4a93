#include "events/redaction.h"

#include <set>

#include "base/yaml_json.h"

namespace cairn {

namespace {

// "NAME=VALUE" -> "NAME=********" when `audience` may not see NAME's value. An entry without '='
// unsets NAME and holds no value.
template <class Json>
bool RedactVariableList(Json& entries, Audience audience, const std::set<std::string>& secret) {
  if (!entries.is_array()) return false;
  bool changed = false;
  for (auto& entry : entries) {
    if (!entry.is_string()) continue;
    const std::string text = entry.template get<std::string>();
    const size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    const bool hidden =
        audience == Audience::kOthers || (audience == Audience::kOwner && secret.count(name) > 0);
    if (!hidden || text.substr(equals + 1) == kRedactedValue) continue;
    entry = name + "=" + kRedactedValue;
    changed = true;
  }
  return changed;
}

template <class Json>
bool RedactKeys(Json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return false;
  bool changed = false;
  for (const char* key : keys) {
    auto found = object.find(key);
    if (found == object.end() || found->is_null()) continue;
    *found = kRedactedValue;
    changed = true;
  }
  return changed;
}

template <class Json>
bool RedactConfigOf(Json& config, Audience audience) {
  if (audience == Audience::kMachine || !config.is_object()) return false;
  bool changed = false;
  auto environment = config.find("environment");
  if (environment != config.end() && environment->is_object()) {
    std::set<std::string> secret;
    auto marked = environment->find("secret_environment_variables");
    if (marked != environment->end() && marked->is_array()) {
      for (const auto& name : *marked) {
        if (name.is_string()) secret.insert(name.template get<std::string>());
      }
    }
    auto variables = environment->find("environment_variables");
    if (variables != environment->end()) {
      if (variables->is_object()) {
        for (auto& [device, list] : variables->items()) {
          changed |= RedactVariableList(list, audience, secret);
        }
      } else {
        changed |= RedactVariableList(*variables, audience, secret);
      }
    }
    // Like a variable marked secret: the agent pulling the image needs it, no person does (it
    // may be the cluster's own, from task_container_defaults).
    auto auth = environment->find("registry_auth");
    if (auth != environment->end()) changed |= RedactKeys(*auth, {"password", "auth"});
  }
  // Storage credentials are the machines' alone, like a variable marked secret: the owner named
  // them once and never needs them back, and an event or answer that held them would hand the
  // bucket to whoever reads it.
  auto storage = config.find("checkpoint_storage");
  if (storage != config.end() && storage->is_object()) {
    changed |= RedactKeys(*storage, {"access_key", "secret_key", "password", "credentials",
                                     "account_key", "connection_string", "credential"});
    // An account URL may carry a SAS token in its query.
    auto url = storage->find("account_url");
    if (url != storage->end() && url->is_string()) {
      const std::string text = url->template get<std::string>();
      const size_t query = text.find('?');
      if (query != std::string::npos && text.substr(query + 1) != kRedactedValue) {
        *url = text.substr(0, query + 1) + kRedactedValue;
        changed = true;
      }
    }
  }
  return changed;
}

void RedactSpec(events::TaskSpec& spec, Audience audience) {
  if (audience == Audience::kMachine) return;
  // Like a variable marked secret: the agent pulling the image needs it, no person does.
  if (!spec.registry_auth().password().empty()) {
    spec.mutable_registry_auth()->set_password(kRedactedValue);
  }
  // The cluster's setup script may hold what its environment variables would.
  if (audience == Audience::kOthers && !spec.startup_hook().empty()) {
    spec.set_startup_hook(kRedactedValue);
  }
  const std::set<std::string> secret(spec.secret_variable_names().begin(),
                                     spec.secret_variable_names().end());
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& entry : spec.environment_variables()) entries.push_back(entry);
  if (!RedactVariableList(entries, audience, secret)) return;
  spec.clear_environment_variables();
  for (const auto& entry : entries) spec.add_environment_variables(entry.get<std::string>());
}

// A checkpoint storage on its own (a workspace's), as JSON text, redacted as in a config.
std::string RedactStorageJson(const std::string& text, Audience audience) {
  if (text.empty() || audience == Audience::kMachine) return text;
  nlohmann::json config = {
      {"checkpoint_storage", nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false)}};
  if (!RedactConfigOf(config, audience)) return text;
  return config["checkpoint_storage"].dump();
}

}  // namespace

std::string RedactTaskContainerDefaultsJson(const std::string& text, Audience audience) {
  if (text.empty() || audience == Audience::kMachine) return text;
  nlohmann::ordered_json defaults = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!defaults.is_object()) return "{}";  // what cannot be read cannot be shown safely
  nlohmann::ordered_json config = {{"environment", nlohmann::ordered_json::object()}};
  for (const char* key : {"environment_variables", "registry_auth"}) {
    if (defaults.contains(key)) config["environment"][key] = defaults[key];
  }
  bool changed = RedactConfigOf(config, audience);
  for (const auto& [key, value] : config["environment"].items()) defaults[key] = value;
  if (audience == Audience::kOthers && defaults.contains("startup_hook")) {
    defaults["startup_hook"] = kRedactedValue;
    changed = true;
  }
  return changed ? defaults.dump() : text;
}

namespace {

// Whether the text may hold anything RedactConfig takes out: most configs name neither section, and
// the event stream asks for every event it sends.
bool MayHoldSecrets(const std::string& text) {
  return text.find("environment") != std::string::npos ||
         text.find("checkpoint_storage") != std::string::npos;
}

}  // namespace

Audience AudienceOf(bool machine, bool admin, const std::string& caller, const std::string& owner) {
  if (machine) return Audience::kMachine;
  if (admin || (!caller.empty() && caller == owner)) return Audience::kOwner;
  return Audience::kOthers;
}

bool RedactConfig(nlohmann::json& config, Audience audience) {
  return RedactConfigOf(config, audience);
}

bool RedactConfig(nlohmann::ordered_json& config, Audience audience) {
  return RedactConfigOf(config, audience);
}

std::string RedactConfigJson(const std::string& json_text, Audience audience) {
  if (audience == Audience::kMachine || !MayHoldSecrets(json_text)) return json_text;
  auto config = nlohmann::ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  // Stored configs were checked on the way in; anything unreadable is shown to no one.
  if (config.is_discarded()) return "{}";
  return RedactConfig(config, audience) ? config.dump() : json_text;
}

std::string RedactConfigYaml(const std::string& yaml_text, Audience audience) {
  if (audience == Audience::kMachine || !MayHoldSecrets(yaml_text)) return yaml_text;
  auto config = YamlTextToJson(yaml_text, "config");
  if (!config.ok()) return "";
  return RedactConfig(*config, audience) ? JsonToYamlText(*config) : yaml_text;
}

std::string OwnerOf(const events::Envelope& event) {
  constexpr std::string_view kUserActor = "user:";
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted:
      return event.task_submitted().spec().user();
    case events::Envelope::kAllocationAssigned:
      return event.allocation_assigned().spec().user();
    case events::Envelope::kExperimentCreated:
      return event.experiment_created().owner();
    case events::Envelope::kExperimentContinued:
      return event.experiment_continued().owner();
    default:
      // Templates and everything else: whoever did it.
      if (event.actor().rfind(kUserActor, 0) == 0) return event.actor().substr(kUserActor.size());
      return "";
  }
}

std::string RedactedWebhookUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t path = url.find_first_of("/?#@", start);
  if (path == std::string::npos) return url;
  if (url[path] == '@') return url.substr(0, start) + kRedactedValue;
  return url.substr(0, path) + "/" + kRedactedValue;
}

events::Envelope RedactedFor(const events::Envelope& event, Audience audience) {
  events::Envelope out = event;
  switch (out.payload_case()) {
    case events::Envelope::kUserCreated:
      out.mutable_user_created()->clear_password_hash();
      break;
    case events::Envelope::kUserPasswordChanged:
      out.mutable_user_password_changed()->clear_password_hash();
      break;
    case events::Envelope::kTaskSubmitted: {
      auto* submitted = out.mutable_task_submitted();
      RedactSpec(*submitted->mutable_spec(), audience);
      if (!submitted->config_json().empty()) {
        submitted->set_config_json(RedactConfigJson(submitted->config_json(), audience));
      }
      break;
    }
    case events::Envelope::kAllocationAssigned:
      RedactSpec(*out.mutable_allocation_assigned()->mutable_spec(), audience);
      break;
    case events::Envelope::kExperimentCreated: {
      auto* created = out.mutable_experiment_created();
      created->set_original_config(RedactConfigYaml(created->original_config(), audience));
      created->set_config_json(RedactConfigJson(created->config_json(), audience));
      break;
    }
    case events::Envelope::kExperimentContinued: {
      auto* continued = out.mutable_experiment_continued();
      continued->set_override_yaml(RedactConfigYaml(continued->override_yaml(), audience));
      continued->set_config_json(RedactConfigJson(continued->config_json(), audience));
      break;
    }
    case events::Envelope::kTemplateSaved:
      out.mutable_template_saved()->set_config_yaml(
          RedactConfigYaml(out.template_saved().config_yaml(), audience));
      break;
    case events::Envelope::kResourcePoolsConfigured: {
      auto* pools = out.mutable_resource_pools_configured();
      pools->set_task_container_defaults_json(
          RedactTaskContainerDefaultsJson(pools->task_container_defaults_json(), audience));
      for (auto& pool : *pools->mutable_pools()) {
        pool.set_task_container_defaults_json(
            RedactTaskContainerDefaultsJson(pool.task_container_defaults_json(), audience));
      }
      break;
    }
    case events::Envelope::kWorkspaceCreated:
      out.mutable_workspace_created()->set_checkpoint_storage_json(
          RedactStorageJson(out.workspace_created().checkpoint_storage_json(), audience));
      break;
    case events::Envelope::kWorkspaceUpdated:
      if (out.workspace_updated().has_checkpoint_storage_json()) {
        out.mutable_workspace_updated()->set_checkpoint_storage_json(
            RedactStorageJson(out.workspace_updated().checkpoint_storage_json(), audience));
      }
      break;
    case events::Envelope::kWebhookCreated:  // a webhook's URL may be its credential (Slack's)
      out.mutable_webhook_created()->set_url(RedactedWebhookUrl(out.webhook_created().url()));
      break;
    case events::Envelope::kWebhookUpdated:
      out.mutable_webhook_updated()->set_url(RedactedWebhookUrl(out.webhook_updated().url()));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace cairn
