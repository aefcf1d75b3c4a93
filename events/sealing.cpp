#include "events/sealing.h"

#include "base/yaml_json.h"
#include "events/secret_fields.h"

namespace cairn {

namespace {

// Already sealed values are left as they are (not handed back unchanged), so that text holding
// only those is not re-written (a YAML text would lose its comments).
SecretRewrite SealingWith(const SecretSealer& sealer) {
  return SecretRewrite(
      [&sealer](SecretClass secret_class, const std::string& value) -> std::optional<std::string> {
        if (secret_class != SecretClass::kMachines || IsSealed(value)) return std::nullopt;
        return sealer.Seal(value);
      },
      /*machines_only=*/true);
}

// Opens kMachines values that are one sealed value each (as SealingWith left them); the first
// that does not open is kept in `failure`.
SecretRewrite UnsealingWith(const SecretSealer& sealer, Status& failure) {
  return SecretRewrite(
      [&sealer, &failure](SecretClass secret_class,
                          const std::string& value) -> std::optional<std::string> {
        if (secret_class != SecretClass::kMachines || !IsSealed(value)) return std::nullopt;
        auto opened = sealer.UnsealText(value);
        if (!opened.ok()) {
          if (failure.ok()) failure = opened.status();
          return std::nullopt;
        }
        return std::move(*opened);
      },
      /*machines_only=*/true);
}

// Nesting is bounded: a config is YAML in a JSON string, and no request nests deeper than that
// twice.
bool HoldsSealedValueAt(const std::string& text, int depth);

bool ScalarsHoldSealedValue(const nlohmann::ordered_json& value, int depth) {
  if (value.is_string()) return HoldsSealedValueAt(value.get<std::string>(), depth);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (HoldsSealedValueAt(key, depth) || ScalarsHoldSealedValue(child, depth)) return true;
    }
  } else if (value.is_array()) {
    for (const auto& child : value) {
      if (ScalarsHoldSealedValue(child, depth)) return true;
    }
  }
  return false;
}

// Only escapes that stand for a letter or join two lines can hide the prefix: JSON's \u and
// YAML's \x, \u, \U and escaped line breaks, or any of them escaped once more (\\).
bool MayHideThePrefix(const std::string& text) {
  for (size_t at = text.find('\\'); at != std::string::npos && at + 1 < text.size();
       at = text.find('\\', at + 2)) {
    const char next = text[at + 1];
    if (next == 'u' || next == 'U' || next == 'x' || next == '\\' || next == '\n' || next == '\r') {
      return true;
    }
  }
  return false;
}

bool HoldsSealedValueAt(const std::string& text, int depth) {
  if (text.find(kSealedPrefix) != std::string::npos) return true;
  if (depth >= 3 || !MayHideThePrefix(text)) return false;
  auto json = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) return ScalarsHoldSealedValue(json, depth + 1);
  auto yaml = YamlTextToJson(text, "text");
  return yaml.ok() && ScalarsHoldSealedValue(*yaml, depth + 1);
}

}  // namespace

void SealSecrets(events::Envelope& event, const SecretSealer& sealer) {
  if (!sealer.has_key()) return;
  RewriteEventSecrets(event, SealingWith(sealer));
}

void SealSecrets(events::ResourcePoolsConfigured& pools, const SecretSealer& sealer) {
  events::Envelope event;
  *event.mutable_resource_pools_configured() = std::move(pools);
  SealSecrets(event, sealer);
  pools = std::move(*event.mutable_resource_pools_configured());
}

std::string SealConfigYaml(const std::string& yaml_text, const SecretSealer& sealer,
                           const std::set<std::string>& also_secret) {
  if (!sealer.has_key()) return yaml_text;
  return RewriteConfigYamlSecrets(yaml_text, SealingWith(sealer), also_secret).value_or(yaml_text);
}

std::string SealStorageJson(const std::string& json_text, const SecretSealer& sealer) {
  if (!sealer.has_key()) return json_text;
  return RewriteStorageJsonSecrets(json_text, SealingWith(sealer)).value_or(json_text);
}

Status UnsealSpec(events::TaskSpec& spec, const SecretSealer& sealer) {
  Status failure = Status::Ok();
  RewriteSpecSecrets(spec, UnsealingWith(sealer, failure));
  return failure;
}

Status UnsealConfig(nlohmann::json& config, const SecretSealer& sealer) {
  Status failure = Status::Ok();
  RewriteConfigSecrets(config, UnsealingWith(sealer, failure));
  return failure;
}

Result<std::string> UnsealWebhookUrl(const std::string& url, const SecretSealer& sealer) {
  Status failure = Status::Ok();
  std::string opened = url;
  RewriteWebhookUrl(&opened, UnsealingWith(sealer, failure));
  if (!failure.ok()) return failure;
  return opened;
}

bool HoldsSealedValue(const std::string& text) { return HoldsSealedValueAt(text, 0); }

}  // namespace cairn
