// Who may see which secrets in what Cairn hands out: events on the stream and in replay output,
// configs in REST answers. Environment variables are the owner's: everyone else sees their
// names, not their values. Registry passwords reach only machines (they may be the cluster's,
// from task_container_defaults, which are redacted the same way in ResourcePoolsConfigured). A
// config may also mark variables secret (environment.secret_environment_variables: [NAME, ...]);
// their values reach only the machines that run the task, never a person again, not even the owner.
// Checkpoint storage credentials (access_key, secret_key, connection_string, credential, an
// account_url's SAS query) are always machine-only. Where these values sit is
// events/secret_fields.h, which sealing (events/sealing.h) shares: the machine-only ones are in
// the log sealed, and a sealed value is redacted like any other. Password hashes never leave the
// master. Pure functions, safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "events.pb.h"

namespace cairn {

enum class Audience {
  kMachine,  // an agent or the task itself: everything it needs to run the work
  kOwner,    // the work's owner or an admin: all but the variables marked secret
  kOthers,   // anyone else: no values of variables or credentials
};

// The audience of a caller: agents are kMachine; admins and the owner (`caller` == `owner`, both
// non-empty) kOwner; everyone else kOthers.
Audience AudienceOf(bool machine, bool admin, const std::string& caller, const std::string& owner);

// What stands for a value that was taken out.
inline constexpr const char* kRedactedValue = "********";

// Redacts a configuration (experiment, command or template, as JSON) in place for `audience`:
// environment.environment_variables ("NAME=VALUE" entries, as a list or per cpu/cuda/rocm),
// environment.registry_auth.password and checkpoint_storage credentials. Returns whether anything
// changed.
bool RedactConfig(nlohmann::json& config, Audience audience);
bool RedactConfig(nlohmann::ordered_json& config, Audience audience);
// The same for stored config text: JSON, or YAML (given back unchanged, with its comments, when
// nothing in it is secret for `audience`; otherwise re-written from the redacted value).
std::string RedactConfigJson(const std::string& json_text, Audience audience);
std::string RedactConfigYaml(const std::string& yaml_text, Audience audience);

// task_container_defaults as ResourcePoolsConfigured records them (Determined's keys, JSON text),
// redacted as a config's environment is, with `startup_hook` hidden from kOthers too; text that
// does not parse is given back as "{}".
std::string RedactTaskContainerDefaultsJson(const std::string& text, Audience audience);

// A webhook's URL without its path and query ("https://hooks.slack.com/********"): a webhook's
// URL may be its credential (Slack's are), so the event stream, replay and log lines show only
// this, and GET /api/v1/webhooks the whole URL only to those who may edit the webhook.
std::string RedactedWebhookUrl(const std::string& url);

// The user whose work the event is ("" for cluster events: agents, pools, users, ...).
std::string OwnerOf(const events::Envelope& event);

// The event as `audience` may see it: task specs' variables, configs and templates redacted, a
// task spec's registry password kept for machines only, and password hashes and webhook URLs
// blanked for every audience.
events::Envelope RedactedFor(const events::Envelope& event, Audience audience);

}  // namespace cairn
