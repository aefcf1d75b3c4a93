#include "events/redaction.h"

#include "events/secret_fields.h"

namespace cairn {

namespace {

// What `audience` may not see, blanked.
SecretRewrite RedactionFor(Audience audience) {
  return [audience](SecretClass secret_class,
                    const std::string& value) -> std::optional<std::string> {
    const bool hidden = audience == Audience::kOthers ||
                        (audience == Audience::kOwner && secret_class == SecretClass::kMachines);
    if (!hidden || value == kRedactedValue) return std::nullopt;
    return std::string(kRedactedValue);
  };
}

}  // namespace

std::string RedactTaskContainerDefaultsJson(const std::string& text, Audience audience) {
  if (text.empty() || audience == Audience::kMachine) return text;
  // What cannot be read cannot be shown safely.
  return RewriteTaskContainerDefaultsSecrets(text, RedactionFor(audience)).value_or("{}");
}

Audience AudienceOf(bool machine, bool admin, const std::string& caller, const std::string& owner) {
  if (machine) return Audience::kMachine;
  if (admin || (!caller.empty() && caller == owner)) return Audience::kOwner;
  return Audience::kOthers;
}

bool RedactConfig(nlohmann::json& config, Audience audience) {
  return audience != Audience::kMachine && RewriteConfigSecrets(config, RedactionFor(audience));
}

bool RedactConfig(nlohmann::ordered_json& config, Audience audience) {
  return audience != Audience::kMachine && RewriteConfigSecrets(config, RedactionFor(audience));
}

// Stored configs were checked on the way in; anything unreadable is shown to no one.
std::string RedactConfigJson(const std::string& json_text, Audience audience) {
  if (audience == Audience::kMachine) return json_text;
  return RewriteConfigJsonSecrets(json_text, RedactionFor(audience)).value_or("{}");
}

std::string RedactConfigYaml(const std::string& yaml_text, Audience audience) {
  if (audience == Audience::kMachine) return yaml_text;
  return RewriteConfigYamlSecrets(yaml_text, RedactionFor(audience)).value_or("");
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
  // The part sealing takes (events/secret_fields.h), blanked: one split of the URL for both.
  std::string shown = url;
  RewriteWebhookUrl(&shown, [](SecretClass, const std::string&) -> std::optional<std::string> {
    return std::string(kRedactedValue);
  });
  return shown;
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
    case events::Envelope::kWebhookCreated:  // a webhook's URL may be its credential (Slack's)
      out.mutable_webhook_created()->set_url(RedactedWebhookUrl(out.webhook_created().url()));
      break;
    case events::Envelope::kWebhookUpdated:
      out.mutable_webhook_updated()->set_url(RedactedWebhookUrl(out.webhook_updated().url()));
      break;
    default:
      if (audience != Audience::kMachine) {
        RewriteEventSecrets(out, RedactionFor(audience), /*unreadable_json=*/"{}",
                            /*unreadable_yaml=*/"");
      }
      break;
  }
  return out;
}

}  // namespace cairn
