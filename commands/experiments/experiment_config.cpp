#include "commands/experiments/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "base/encoding.h"
#include "base/fields.h"
#include "base/http_url.h"
#include "base/sealed_secrets.h"
#include "base/yaml_json.h"
#include "commands/experiments/experiment_config_parts.h"
#include "commands/tasks/command_config.h"
#include "events/limits.h"

namespace cairn::experiments {

namespace {

// The toolkit's names and the searcher half (experiment_config_parts.h).
using namespace config_parts;

// ---- sections ----
Result<ResourcesConfig> ParseResources(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, "a map"));
  if (auto slots = fields.Get("slots")) {
    return Invalid(*slots, "not allowed for experiments; use resources.slots_per_trial");
  }
  CAIRN_RETURN_IF_ERROR(fields.Check(
      {"slots_per_trial", "max_slots", "weight", "priority", "resource_pool", "shm_size",
       // Accepted and ignored, as Determined has since 0.20 (pools replaced it).
       "agent_label"},
      {{"is_single_node", ""}, {"devices", ""}, {"native_parallel", ""}}));
  ResourcesConfig r;
  if (auto f = fields.Get("shm_size")) {
    CAIRN_ASSIGN_OR_RETURN(r.shm_size_bytes, commands::ReadShmSize(*f));
  }
  if (auto f = fields.Get("slots_per_trial")) {
    CAIRN_ASSIGN_OR_RETURN(r.slots_per_trial, ReadSmallInt(*f, 0, 1 << 20));
  }
  if (auto f = fields.Get("max_slots")) {
    CAIRN_ASSIGN_OR_RETURN(r.max_slots, ReadSmallInt(*f, 0, 1 << 20));
  }
  if (auto f = fields.Get("weight")) {
    CAIRN_ASSIGN_OR_RETURN(r.weight, ReadNumber(*f));
    if (!(r.weight > 0) || !std::isfinite(r.weight)) return Invalid(*f, "must be greater than 0");
  }
  if (auto f = fields.Get("priority")) {
    CAIRN_ASSIGN_OR_RETURN(r.priority, ReadSmallInt(*f, kMinPriority, kMaxPriority));
  }
  if (auto f = fields.Get("resource_pool")) {
    CAIRN_ASSIGN_OR_RETURN(r.resource_pool, ReadString(*f, "a resource pool name"));
  }
  return r;
}

// Checks one entry of a per-device list; the entry's list is named in the error.
using EntryCheck = Status (*)(const Field& list, const std::string& entry);

Status CheckEnvironmentVariable(const Field& list, const std::string& entry) {
  const auto equals = entry.find('=');
  if (equals == std::string::npos || equals == 0) {
    return Invalid(list, "expected entries like NAME=value, got '" + entry + "'");
  }
  return Status::Ok();
}

Status CheckRuntimeCommand(const Field& list, const std::string& entry) {
  if (entry.find_first_not_of(" \t\n") == std::string::npos) {
    return Invalid(list, "a command is empty");
  }
  return Status::Ok();
}

// One pip requirement per entry (a name with version specifiers, or a URL); options are the
// cluster's (its index), not the experiment's.
Status CheckRuntimePackage(const Field& list, const std::string& entry) {
  if (entry.find_first_not_of(' ') == std::string::npos) {
    return Invalid(list, "a package is empty");
  }
  if (entry.find_first_of("\n\r", 0) != std::string::npos ||
      entry.find('\0') != std::string::npos) {
    return Invalid(list, "'" + entry + "' holds a line break; give one requirement per entry");
  }
  if (entry[entry.find_first_not_of(' ')] == '-') {
    return Invalid(list, "'" + entry +
                             "' is a pip option, not a requirement; the package index is the "
                             "cluster's (agent flags --pip-index-url, --pip-find-links)");
  }
  return Status::Ok();
}

// A plain list (for every device type) or {cpu, cuda, rocm, gpu} (gpu: cuda's other name).
Result<PerDeviceList> ReadPerDeviceList(const Field& field, const std::string& what,
                                        EntryCheck check) {
  const std::string expected = "a list of " + what + " or a map {cpu: [...], cuda: [...]}";
  PerDeviceList lists;
  if (field.node.IsSequence()) {
    CAIRN_ASSIGN_OR_RETURN(lists.cpu, ReadStringList(field, expected));
    for (const auto& entry : lists.cpu) CAIRN_RETURN_IF_ERROR(check(field, entry));
    lists.cuda = lists.cpu;
    lists.rocm = lists.cpu;
    return lists;
  }
  CAIRN_ASSIGN_OR_RETURN(MapFields per_device, MapFields::Read(field, expected));
  CAIRN_RETURN_IF_ERROR(per_device.Check({"cpu", "cuda", "rocm", "gpu"}));
  if (per_device.Get("cuda") && per_device.Get("gpu")) {
    return Invalid(*per_device.Get("gpu"), "gpu is another name for cuda; give one of them");
  }
  for (size_t i = 0; i < per_device.keys().size(); ++i) {
    const Field& list = per_device.entries()[i];
    if (fields::IsAbsent(list.node)) continue;
    CAIRN_ASSIGN_OR_RETURN(auto entries, ReadStringList(list, "a list of " + what));
    for (const auto& entry : entries) CAIRN_RETURN_IF_ERROR(check(list, entry));
    const std::string& device = per_device.keys()[i];
    (device == "cpu" ? lists.cpu : device == "rocm" ? lists.rocm : lists.cuda) = std::move(entries);
  }
  return lists;
}

}  // namespace

Result<PerDeviceList> ReadEnvironmentVariables(const Field& field) {
  return ReadPerDeviceList(field, "NAME=value entries", CheckEnvironmentVariable);
}

namespace {

Result<EnvironmentConfig> ParseEnvironment(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(field, "a map"));
  CAIRN_RETURN_IF_ERROR(
      fields.Check({"image", "environment_variables", "secret_environment_variables",
                    "runtime_commands", "runtime_packages", "registry_auth", "force_pull_image"},
                   {{"ports", ""},
                    {"proxy_ports", ""},
                    {"add_capabilities", ""},
                    {"drop_capabilities", ""},
                    {"pod_spec", ""}}));
  EnvironmentConfig e;
  e.image = nullptr;
  if (auto f = fields.Get("image")) {
    if (f->node.IsMap()) {
      CAIRN_ASSIGN_OR_RETURN(MapFields images, MapFields::Read(*f, "a map"));
      CAIRN_RETURN_IF_ERROR(images.Check({"cpu", "cuda", "rocm", "gpu"}));
      for (const auto& image : images.entries()) {
        if (!fields::IsAbsent(image.node))
          CAIRN_RETURN_IF_ERROR(ReadString(image, "an image").status());
      }
    } else {
      CAIRN_RETURN_IF_ERROR(ReadString(*f, "an image name or {cpu: ..., cuda: ...}").status());
    }
    CAIRN_ASSIGN_OR_RETURN(e.image, JsonOf(*f));
  }
  if (auto f = fields.Get("registry_auth")) {
    events::TaskSpec read;
    json shown;
    CAIRN_RETURN_IF_ERROR(commands::ReadRegistryAuth(*f, read, shown));
    e.registry_auth = commands::RegistryAuthJson(read.registry_auth(), /*with_password=*/true);
  }
  if (auto f = fields.Get("force_pull_image")) {
    CAIRN_ASSIGN_OR_RETURN(e.force_pull_image, ReadBool(*f));
  }
  if (auto f = fields.Get("secret_environment_variables")) {
    CAIRN_ASSIGN_OR_RETURN(e.secret_environment_variables,
                           ReadStringList(*f, "a list of variable names"));
  }
  if (auto f = fields.Get("environment_variables")) {
    CAIRN_ASSIGN_OR_RETURN(auto variables, ReadEnvironmentVariables(*f));
    e.environment_variables_cpu = std::move(variables.cpu);
    e.environment_variables_cuda = std::move(variables.cuda);
    e.environment_variables_rocm = std::move(variables.rocm);
  }
  if (auto f = fields.Get("runtime_commands")) {
    CAIRN_ASSIGN_OR_RETURN(e.runtime_commands,
                           ReadPerDeviceList(*f, "shell commands", CheckRuntimeCommand));
  }
  if (auto f = fields.Get("runtime_packages")) {
    CAIRN_ASSIGN_OR_RETURN(e.runtime_packages,
                           ReadPerDeviceList(*f, "pip requirements", CheckRuntimePackage));
  }
  return e;
}

bool HasDotDotSegment(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return true;
    start = end + 1;
  }
  return false;
}

// An S3 bucket name (3-63 lowercase letters, digits, '.' and '-', starting and ending with a
// letter or digit) or an Azure container name (the same without '.').
bool IsBucketName(const std::string& name, bool dots_allowed) {
  if (name.size() < 3 || name.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || (dots_allowed && c == '.'); });
}

// A credential or a URL that may carry one: read without ever repeating it in an error.
Result<std::optional<std::string>> ReadSecretText(const MapFields& fields, const std::string& key) {
  auto f = fields.Get(key);
  if (!f) return std::optional<std::string>();
  if (!f->node.IsScalar()) return Invalid(*f, "expected a string");
  std::string value = f->node.Scalar();
  if (value.empty()) return Invalid(*f, "must not be empty");
  if (HasControlCharacter(value, /*blanks_too=*/true)) {
    return Invalid(*f, "must not hold blanks or control characters");
  }
  return std::optional<std::string>(std::move(value));
}

// Determined's normalize_prefix (os.path.normpath, then no leading '/'): empty and '.' segments
// dropped; nullopt for a '..' segment, which would leave the bucket's intended place.
std::optional<std::string> NormalizedPrefix(const std::string& prefix) {
  std::string normalized;
  size_t start = 0;
  while (start <= prefix.size()) {
    size_t end = prefix.find('/', start);
    if (end == std::string::npos) end = prefix.size();
    const std::string segment = prefix.substr(start, end - start);
    if (segment == "..") return std::nullopt;
    if (!segment.empty() && segment != ".") {
      if (!normalized.empty()) normalized += '/';
      normalized += segment;
    }
    start = end + 1;
  }
  return normalized;
}

Status ParseSharedFs(const MapFields& fields, CheckpointStorageConfig& c) {
  CAIRN_RETURN_IF_ERROR(fields.Check({"type", "host_path", "storage_path", "save_experiment_best",
                                      "save_trial_best", "save_trial_latest"},
                                     {{"container_path", ""},
                                      {"checkpoint_path", "use storage_path"},
                                      {"tensorboard_path", ""},
                                      {"propagation", ""}}));
  CAIRN_ASSIGN_OR_RETURN(Field host_path, fields.Require("host_path", "host_path: /mnt/ckpt"));
  CAIRN_ASSIGN_OR_RETURN(c.host_path, ReadString(host_path, "an absolute path"));
  if (c.host_path.empty() || c.host_path[0] != '/' || HasDotDotSegment(c.host_path)) {
    return Invalid(host_path, "must be an absolute path without '..'");
  }
  if (auto f = fields.Get("storage_path")) {
    CAIRN_ASSIGN_OR_RETURN(std::string storage_path, ReadString(*f, "a path"));
    const bool absolute = !storage_path.empty() && storage_path[0] == '/';
    const std::string inside = c.host_path.back() == '/' ? c.host_path : c.host_path + "/";
    if (HasDotDotSegment(storage_path) ||
        (absolute && storage_path != c.host_path && storage_path.rfind(inside, 0) != 0)) {
      return Invalid(*f, "must be a path inside host_path");
    }
    c.storage_path = std::move(storage_path);
  }
  return Status::Ok();
}

Status ParseS3(const MapFields& fields, CheckpointStorageConfig& c) {
  CAIRN_RETURN_IF_ERROR(
      fields.Check({"type", "bucket", "prefix", "endpoint_url", "access_key", "secret_key",
                    "save_experiment_best", "save_trial_best", "save_trial_latest"}));
  CAIRN_ASSIGN_OR_RETURN(Field bucket, fields.Require("bucket", "bucket: my-checkpoints"));
  CAIRN_ASSIGN_OR_RETURN(c.bucket, ReadString(bucket, "a bucket name"));
  if (!IsBucketName(c.bucket, /*dots_allowed=*/true)) {
    return Invalid(bucket,
                   "must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' and '-'");
  }
  if (auto f = fields.Get("prefix")) {
    CAIRN_ASSIGN_OR_RETURN(std::string prefix, ReadString(*f, "a key prefix"));
    auto normalized = NormalizedPrefix(prefix);
    if (!normalized || HasControlCharacter(*normalized, /*blanks_too=*/false)) {
      return Invalid(*f, "must be a key prefix without '..' or control characters");
    }
    c.prefix = std::move(*normalized);
  }
  CAIRN_ASSIGN_OR_RETURN(c.endpoint_url, ReadSecretText(fields, "endpoint_url"));
  if (c.endpoint_url) {
    auto parsed = ParseHttpUrl(*c.endpoint_url);
    if (!parsed.ok()) {
      return Invalid(*fields.Get("endpoint_url"), "must be an http:// or https:// URL");
    }
    if (parsed->target != "/") {
      return Invalid(*fields.Get("endpoint_url"),
                     "must have no path or query: buckets are reached path-style at its root");
    }
  }
  CAIRN_ASSIGN_OR_RETURN(c.access_key, ReadSecretText(fields, "access_key"));
  CAIRN_ASSIGN_OR_RETURN(c.secret_key, ReadSecretText(fields, "secret_key"));
  if (c.access_key.has_value() != c.secret_key.has_value()) {
    return Invalid(*fields.Get(c.access_key ? "access_key" : "secret_key"),
                   "access_key and secret_key go together (neither: the machine's own AWS "
                   "credentials)");
  }
  return Status::Ok();
}

Status ParseAzure(const MapFields& fields, CheckpointStorageConfig& c) {
  const char* kAccountKey =
      "the master reaches Azure Blob Storage with an account key, to collect and download "
      "checkpoints; give a connection_string with AccountName and AccountKey";
  CAIRN_RETURN_IF_ERROR(
      fields.Check({"type", "container", "connection_string", "save_experiment_best",
                    "save_trial_best", "save_trial_latest"},
                   {{"account_url", kAccountKey}, {"credential", kAccountKey}}));
  CAIRN_ASSIGN_OR_RETURN(Field container, fields.Require("container", "container: checkpoints"));
  CAIRN_ASSIGN_OR_RETURN(c.container, ReadString(container, "a container name"));
  if (!IsBucketName(c.container, /*dots_allowed=*/false)) {
    return Invalid(container,
                   "must be an Azure container name: 3 to 63 lowercase letters, digits and '-'");
  }
  CAIRN_ASSIGN_OR_RETURN(Field connection,
                         fields.Require("connection_string", "connection_string: \"...\""));
  if (!connection.node.IsScalar() || connection.node.Scalar().empty() ||
      HasControlCharacter(connection.node.Scalar(), /*blanks_too=*/false)) {
    return Invalid(connection, "must be a connection string without control characters");
  }
  c.connection_string = connection.node.Scalar();
  const std::string& text = *c.connection_string;
  // A sealed one (base/sealed_secrets.h) was checked before the log recorded it.
  if (!IsSealed(text) && text.find("AccountKey=") == std::string::npos &&
      text.find("UseDevelopmentStorage=true") == std::string::npos) {
    return Status::NotSupported(
        fields::Where(connection) +
        ": a connection string without AccountKey is not supported: " + kAccountKey);
  }
  return Status::Ok();
}

Result<CheckpointStorageConfig> ParseCheckpointStorage(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields fields,
                         MapFields::Read(field, "a map like {type: shared_fs, host_path: /mnt}"));
  CAIRN_ASSIGN_OR_RETURN(Field type_field, fields.Require("type", "type: shared_fs"));
  CAIRN_ASSIGN_OR_RETURN(std::string type, ReadString(type_field, "a storage type"));
  CheckpointStorageConfig c;
  c.type = type;
  if (type == "gcs") {
    return Status::NotSupported(
        fields::Where(type_field) +
        ": checkpoint storage of type gcs is not supported: Google's Cloud Storage SDK is not "
        "packaged for the trials' Debian and no faithful local server exists to test it; use s3 "
        "(GCS's S3-compatible endpoint works through endpoint_url), azure or shared_fs");
  }
  if (type == "directory") {
    return Status::NotSupported(fields::Where(type_field) +
                                ": checkpoint storage of type directory is not supported; use "
                                "shared_fs, s3 or azure");
  }
  if (type == "shared_fs") {
    CAIRN_RETURN_IF_ERROR(ParseSharedFs(fields, c));
  } else if (type == "s3") {
    CAIRN_RETURN_IF_ERROR(ParseS3(fields, c));
  } else if (type == "azure") {
    CAIRN_RETURN_IF_ERROR(ParseAzure(fields, c));
  } else {
    return Invalid(type_field, "unknown storage type '" + type + "' (shared_fs, s3 or azure)");
  }
  if (auto f = fields.Get("save_experiment_best")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_experiment_best, ReadSmallInt(*f, 0));
  }
  if (auto f = fields.Get("save_trial_best")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_trial_best, ReadSmallInt(*f, 0));
  }
  if (auto f = fields.Get("save_trial_latest")) {
    CAIRN_ASSIGN_OR_RETURN(c.save_trial_latest, ReadSmallInt(*f, 0));
  }
  return c;
}

// Determined's launcher runs a "module:Class" through its trial harness, any other string with
// sh -c and a list as it is; Cairn does the same (agent/harness/cairn_harness/determined_mode.py).
Status ParseEntrypoint(const Field& field, ExperimentConfig& c) {
  if (field.node.IsSequence()) {
    CAIRN_ASSIGN_OR_RETURN(c.entrypoint_argv, ReadStringList(field, "a list of strings"));
    if (c.entrypoint_argv.empty() || c.entrypoint_argv[0].empty()) {
      return Invalid(field, "the command list must name a program first");
    }
    c.entrypoint = c.entrypoint_argv[0];
    for (size_t i = 1; i < c.entrypoint_argv.size(); ++i)
      c.entrypoint += " " + c.entrypoint_argv[i];
    return Status::Ok();
  }
  CAIRN_ASSIGN_OR_RETURN(c.entrypoint,
                         ReadString(field, "a command or a trial class (module:Class)"));
  if (c.entrypoint.find_first_not_of(" \t\n") == std::string::npos) {
    return Invalid(field, "must name a command or a trial class, e.g. python3 train.py");
  }
  return Status::Ok();
}

// Determined's trial-harness settings: Cairn's own harness has no use for them, Determined's
// package reads them from the configuration, so they pass through with their types checked.
Status ParseTrialSettings(const MapFields& fields, ExperimentConfig& c) {
  if (auto f = fields.Get("checkpoint_policy")) {
    CAIRN_ASSIGN_OR_RETURN(std::string policy, ReadString(*f, "one of best, all, none"));
    if (policy != "best" && policy != "all" && policy != "none") {
      return Invalid(*f, "unknown checkpoint_policy '" + policy + "'; expected best, all or none");
    }
    c.trial_settings["checkpoint_policy"] = policy;
  }
  for (const char* key : {"perform_initial_validation", "debug"}) {
    if (auto f = fields.Get(key)) {
      CAIRN_ASSIGN_OR_RETURN(bool value, ReadBool(*f));
      c.trial_settings[key] = value;
    }
  }
  for (const char* key : {"profiling", "optimizations"}) {
    if (auto f = fields.Get(key)) {
      if (!f->node.IsMap()) return Invalid(*f, "expected a map");
      CAIRN_ASSIGN_OR_RETURN(c.trial_settings[key], JsonOf(*f));
    }
  }
  return Status::Ok();
}

json LengthToJson(const Length& length) { return {{LengthUnitName(length.unit), length.value}}; }

// Determined's keys always; the runtime lists (Cairn's) only when given, so that a Determined
// configuration's effective form stays Determined's.
json EnvironmentToJson(const EnvironmentConfig& e) {
  json environment = {{"image", e.image},
                      {"environment_variables",
                       PerDeviceJson({e.environment_variables_cpu, e.environment_variables_cuda,
                                      e.environment_variables_rocm})},
                      {"secret_environment_variables", e.secret_environment_variables}};
  if (!e.runtime_commands.empty()) {
    environment["runtime_commands"] = PerDeviceJson(e.runtime_commands);
  }
  if (!e.runtime_packages.empty()) {
    environment["runtime_packages"] = PerDeviceJson(e.runtime_packages);
  }
  if (!e.registry_auth.is_null()) environment["registry_auth"] = e.registry_auth;
  if (e.force_pull_image) environment["force_pull_image"] = *e.force_pull_image;
  return environment;
}

json BuildEffective(const ExperimentConfig& c) {
  json searcher = {{"name", SearcherNameText(c.searcher.name)},
                   {"metric", c.searcher.metric},
                   {"smaller_is_better", c.searcher.smaller_is_better}};
  if (c.searcher.max_length_given) searcher["max_length"] = LengthToJson(c.searcher.max_length);
  if (c.searcher.source_trial_id) searcher["source_trial_id"] = *c.searcher.source_trial_id;
  if (c.searcher.source_checkpoint_uuid) {
    searcher["source_checkpoint_uuid"] = *c.searcher.source_checkpoint_uuid;
  }
  if (!c.searcher.time_metric.empty()) {
    searcher["time_metric"] = c.searcher.time_metric;
    searcher["max_time"] = c.searcher.max_time.value_or(0);
  }
  if (c.searcher.name == SearcherName::kRandom || c.searcher.name == SearcherName::kAdaptiveAsha) {
    searcher["max_trials"] = c.searcher.max_trials;
  }
  if (c.searcher.name == SearcherName::kPbt) {
    searcher["population_size"] = c.searcher.population_size;
    searcher["num_rounds"] = c.searcher.num_rounds;
    searcher["length_per_round"] = LengthToJson(c.searcher.length_per_round);
    searcher["replace_function"] = {{"truncate_fraction", c.searcher.truncate_fraction}};
    searcher["explore_function"] = {{"resample_probability", c.searcher.resample_probability},
                                    {"perturb_factor", c.searcher.perturb_factor}};
  } else if (c.searcher.name != SearcherName::kSingle) {
    searcher["max_concurrent_trials"] = c.searcher.max_concurrent_trials;
  }
  if (c.searcher.name == SearcherName::kAdaptiveAsha) {
    searcher["divisor"] = c.searcher.divisor;
    searcher["max_rungs"] = c.searcher.max_rungs;
    searcher["mode"] = AshaModeText(c.searcher.mode);
    searcher["bracket_rungs"] = c.searcher.bracket_rungs;
  }
  auto optional_int = [](const std::optional<int>& value) {
    return value ? json(*value) : json(nullptr);
  };
  json checkpoint_storage =
      c.checkpoint_storage ? CheckpointStorageJson(*c.checkpoint_storage) : json(nullptr);
  json effective = {
      {"name", c.name},
      {"workspace", c.workspace},
      {"project", c.project},
      {"description", c.description ? json(*c.description) : json()},
      {"labels", c.labels},
      {"data", c.data},
      {"hyperparameters", SpaceToJson(c.hyperparameters)},
      {"searcher", searcher},
      {"resources",
       {{"slots_per_trial", c.resources.slots_per_trial},
        {"max_slots", optional_int(c.resources.max_slots)},
        {"weight", c.resources.weight},
        {"priority", optional_int(c.resources.priority)},
        {"resource_pool", c.resources.resource_pool}}},
      {"environment", EnvironmentToJson(c.environment)},
      {"checkpoint_storage", checkpoint_storage},
      {"max_restarts", c.max_restarts},
      {"entrypoint", c.entrypoint},
      {"min_validation_period", LengthToJson(c.min_validation_period)},
      {"min_checkpoint_period", LengthToJson(c.min_checkpoint_period)},
      {"records_per_epoch", c.records_per_epoch},
      {"scheduling_unit", c.scheduling_unit},
      {"reproducibility",
       {{"experiment_seed", c.experiment_seed ? json(*c.experiment_seed) : json()}}},
  };
  if (!c.entrypoint_argv.empty()) effective["entrypoint"] = c.entrypoint_argv;
  if (c.resources.shm_size_bytes > 0) {
    effective["resources"]["shm_size"] = c.resources.shm_size_bytes;
  }
  if (!c.bind_mounts.is_null()) effective["bind_mounts"] = c.bind_mounts;
  effective["log_policies"] = LogPoliciesJson(c.log_policies);
  if (c.log_retention_days) {
    effective["retention_policy"] = {{"log_retention_days", *c.log_retention_days}};
  }
  if (c.webhooks.given) {
    const auto& w = c.webhooks;
    effective["integrations"] = {
        {"webhooks",
         {{"webhook_id", w.webhook_ids.empty() ? json() : json(w.webhook_ids)},
          {"webhook_name", w.webhook_names.empty() ? json() : json(w.webhook_names)},
          {"exclude", w.exclude}}}};
  }
  for (const auto& [key, value] : c.trial_settings.items()) effective[key] = value;
  return effective;
}

const std::vector<Refused>& RefusedTopLevel() {
  static const std::vector<Refused> refused = {
      {"preemption_timeout", ""},  {"slurm", ""},      {"pbs", ""},      {"security", ""},
      {"tensorboard_storage", ""}, {"data_layer", ""}, {"internal", ""},
  };
  return refused;
}

// integrations: Determined's webhooks (pachyderm is refused by name).
Result<WebhookIntegration> ParseIntegrations(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(MapFields integrations, MapFields::Read(field, "a map"));
  CAIRN_RETURN_IF_ERROR(integrations.Check({"webhooks"}, {{"pachyderm", ""}}));
  WebhookIntegration out;
  auto webhooks_field = integrations.Get("webhooks");
  if (!webhooks_field) return out;
  out.given = true;
  CAIRN_ASSIGN_OR_RETURN(MapFields webhooks, MapFields::Read(*webhooks_field, "a map"));
  CAIRN_RETURN_IF_ERROR(webhooks.Check({"webhook_id", "webhook_name", "exclude"}));
  if (auto f = webhooks.Get("webhook_id")) {
    if (!f->node.IsSequence()) return Invalid(*f, "expected a list of webhook ids");
    size_t index = 0;
    for (const auto& element : f->node) {
      CAIRN_ASSIGN_OR_RETURN(int64_t id, ReadInt(Element(*f, element, index++), 1));
      out.webhook_ids.push_back(id);
    }
  }
  if (auto f = webhooks.Get("webhook_name")) {
    CAIRN_ASSIGN_OR_RETURN(out.webhook_names, ReadStringList(*f, "a list of webhook names"));
  }
  if (auto f = webhooks.Get("exclude")) {
    CAIRN_ASSIGN_OR_RETURN(out.exclude, ReadBool(*f));
  }
  return out;
}

Result<ExperimentConfig> ParseRoot(const YAML::Node& root) {
  const Field top = fields::Root(root);
  if (fields::IsAbsent(root)) {
    return Invalid(top, "the configuration is empty; entrypoint and searcher are required");
  }
  CAIRN_ASSIGN_OR_RETURN(MapFields fields, MapFields::Read(top, "a map of experiment settings"));
  if (auto t = fields.Get("template")) {
    return Invalid(*t, "the template must be applied before the configuration is parsed");
  }
  CAIRN_RETURN_IF_ERROR(fields.Check({"name",
                                      "description",
                                      "labels",
                                      "data",
                                      "hyperparameters",
                                      "searcher",
                                      "resources",
                                      "environment",
                                      "checkpoint_storage",
                                      "max_restarts",
                                      "entrypoint",
                                      "min_validation_period",
                                      "min_checkpoint_period",
                                      "records_per_epoch",
                                      "scheduling_unit",
                                      "reproducibility",
                                      "workspace",
                                      "project",
                                      "checkpoint_policy",
                                      "perform_initial_validation",
                                      "profiling",
                                      "optimizations",
                                      "debug",
                                      "integrations",
                                      "retention_policy",
                                      "bind_mounts",
                                      "log_policies"},
                                     RefusedTopLevel()));

  ExperimentConfig c;
  if (auto f = fields.Get("name")) {
    CAIRN_ASSIGN_OR_RETURN(c.name, ReadString(*f));
  }
  if (auto f = fields.Get("description")) {
    CAIRN_ASSIGN_OR_RETURN(c.description, ReadString(*f));
  }
  if (auto f = fields.Get("workspace")) {
    CAIRN_ASSIGN_OR_RETURN(c.workspace, ReadString(*f));
  }
  if (auto f = fields.Get("project")) {
    CAIRN_ASSIGN_OR_RETURN(c.project, ReadString(*f));
  }
  if (c.workspace.empty() != c.project.empty()) {
    return Invalid(top, "workspace and project must both be given if one is");
  }
  if (auto f = fields.Get("labels")) {
    CAIRN_ASSIGN_OR_RETURN(c.labels, ReadStringList(*f, "a list of strings"));
  }
  if (auto f = fields.Get("data")) {
    if (!f->node.IsMap()) return Invalid(*f, "expected a map");
    CAIRN_ASSIGN_OR_RETURN(c.data, JsonOf(*f));
  }
  CAIRN_ASSIGN_OR_RETURN(Field searcher, fields.Require("searcher",
                                                        "searcher: {name: single, metric: loss, "
                                                        "max_length: {batches: 1000}}"));
  CAIRN_ASSIGN_OR_RETURN(c.searcher, ParseSearcher(searcher));
  std::map<std::string, Field> hyperparameter_fields;
  if (auto f = fields.Get("hyperparameters")) {
    CAIRN_ASSIGN_OR_RETURN(c.hyperparameters,
                           ParseSpace(*f, c.searcher.name == SearcherName::kGrid));
    CAIRN_ASSIGN_OR_RETURN(MapFields members, MapFields::Read(*f, "a map"));
    for (size_t i = 0; i < members.keys().size(); ++i) {
      hyperparameter_fields[members.keys()[i]] = members.entries()[i];
    }
  }
  if (auto f = fields.Get("resources")) {
    CAIRN_ASSIGN_OR_RETURN(c.resources, ParseResources(*f));
  }
  if (auto f = fields.Get("environment")) {
    CAIRN_ASSIGN_OR_RETURN(c.environment, ParseEnvironment(*f));
  }
  if (auto f = fields.Get("checkpoint_storage")) {
    CAIRN_ASSIGN_OR_RETURN(c.checkpoint_storage, ParseCheckpointStorage(*f));
  }
  if (auto f = fields.Get("max_restarts")) {
    CAIRN_ASSIGN_OR_RETURN(c.max_restarts, ReadSmallInt(*f, 0));
  }
  CAIRN_ASSIGN_OR_RETURN(Field entrypoint,
                         fields.Require("entrypoint", "entrypoint: model_def:MyTrial"));
  CAIRN_RETURN_IF_ERROR(ParseEntrypoint(entrypoint, c));
  CAIRN_RETURN_IF_ERROR(ParseTrialSettings(fields, c));
  if (c.searcher.open_ended && c.entrypoint_argv.empty() && IsTrialClassEntrypoint(c.entrypoint)) {
    return Invalid(searcher,
                   "a trial class entrypoint (" + c.entrypoint +
                       ") trains to the searcher's length: give max_length: {batches: N}, or "
                       "max_time and time_metric");
  }
  std::vector<std::pair<Field, Length>> lengths;
  {
    CAIRN_ASSIGN_OR_RETURN(MapFields searcher_fields, MapFields::Read(searcher, "a map"));
    if (c.searcher.max_length_given && c.searcher.time_metric.empty()) {
      lengths.emplace_back(*searcher_fields.Get("max_length"), c.searcher.max_length);
    }
  }
  for (const char* key : {"min_validation_period", "min_checkpoint_period"}) {
    if (auto f = fields.Get(key)) {
      CAIRN_ASSIGN_OR_RETURN(Length length, ReadLength(*f, 0));
      (std::string(key) == "min_validation_period" ? c.min_validation_period
                                                   : c.min_checkpoint_period) = length;
      lengths.emplace_back(*f, length);
    }
  }
  if (auto f = fields.Get("records_per_epoch")) {
    CAIRN_ASSIGN_OR_RETURN(c.records_per_epoch,
                           ReadInt(*f, 0, std::numeric_limits<int64_t>::max()));
  }
  if (auto f = fields.Get("scheduling_unit")) {
    CAIRN_ASSIGN_OR_RETURN(c.scheduling_unit, ReadSmallInt(*f, 1));
  }
  if (auto f = fields.Get("reproducibility")) {
    CAIRN_ASSIGN_OR_RETURN(MapFields reproducibility, MapFields::Read(*f, "a map"));
    CAIRN_RETURN_IF_ERROR(reproducibility.Check({"experiment_seed"}));
    if (auto seed = reproducibility.Get("experiment_seed")) {
      CAIRN_ASSIGN_OR_RETURN(int64_t value, ReadInt(*seed, 0, UINT32_MAX));
      c.experiment_seed = static_cast<uint32_t>(value);
    }
  }

  if (auto f = fields.Get("retention_policy")) {
    CAIRN_ASSIGN_OR_RETURN(MapFields retention, MapFields::Read(*f, "a map"));
    CAIRN_RETURN_IF_ERROR(retention.Check({"log_retention_days"}));
    if (auto days = retention.Get("log_retention_days")) {
      CAIRN_ASSIGN_OR_RETURN(c.log_retention_days,
                             ReadSmallInt(*days, -1, 32767, "days (-1: keep forever)"));
    }
  }
  if (auto f = fields.Get("integrations")) {
    CAIRN_ASSIGN_OR_RETURN(c.webhooks, ParseIntegrations(*f));
  }
  if (auto f = fields.Get("bind_mounts")) {
    CAIRN_RETURN_IF_ERROR(commands::ReadBindMounts(*f, c.container, c.bind_mounts));
  }
  std::vector<LogPolicy> log_policies;
  if (auto f = fields.Get("log_policies")) {
    CAIRN_ASSIGN_OR_RETURN(log_policies, ReadLogPolicies(*f));
  }
  c.log_policies = WithDefaultLogPolicies(std::move(log_policies));
  if (!c.environment.registry_auth.is_null()) {
    auto* auth = c.container.mutable_registry_auth();
    auth->set_username(c.environment.registry_auth.value("username", ""));
    auth->set_password(c.environment.registry_auth.value("password", ""));
    auth->set_server_address(c.environment.registry_auth.value("serveraddress", ""));
  }
  c.container.set_force_pull_image(c.environment.force_pull_image.value_or(false));
  c.container.set_shm_size_bytes(c.resources.shm_size_bytes);

  // Lengths in records or epochs become batches through global_batch_size (and records_per_epoch
  // for epochs), so those must be fixed numbers for the whole experiment.
  const Hyperparameter* batch_size = nullptr;
  for (const auto& h : c.hyperparameters) {
    if (h.name == "global_batch_size") batch_size = &h;
  }
  if (batch_size && batch_size->type == HyperparameterType::kConst &&
      batch_size->val.is_number_integer() && batch_size->val.get<int64_t>() > 0) {
    c.global_batch_size = batch_size->val.get<int64_t>();
  }
  for (const auto& [field, length] : lengths) {
    if (length.unit == LengthUnit::kBatches) continue;
    const std::string unit = LengthUnitName(length.unit);
    if (!c.global_batch_size && batch_size) {
      return Invalid(hyperparameter_fields.at(batch_size->name),
                     "must be a positive integer constant when a length is given in " + unit +
                         " (" + field.path + ")");
    }
    if (!c.global_batch_size) {
      return Invalid(field, "a length in " + unit + " needs hyperparameters.global_batch_size");
    }
    if (length.unit == LengthUnit::kEpochs && c.records_per_epoch <= 0) {
      return Invalid(field, "a length in epochs needs records_per_epoch");
    }
    auto batches = LengthInBatches(c, length);
    if (!batches.ok()) return Invalid(field, batches.status().message());
  }
  c.effective = BuildEffective(c);
  return c;
}

}  // namespace

const char* LengthUnitName(LengthUnit unit) {
  switch (unit) {
    case LengthUnit::kBatches:
      return "batches";
    case LengthUnit::kRecords:
      return "records";
    case LengthUnit::kEpochs:
      return "epochs";
  }
  return "batches";
}

int PbtReplaced(const SearcherConfig& searcher, int population) {
  return static_cast<int>(std::floor(searcher.truncate_fraction * population));
}

const char* SearcherNameText(SearcherName name) {
  switch (name) {
    case SearcherName::kSingle:
      return "single";
    case SearcherName::kGrid:
      return "grid";
    case SearcherName::kRandom:
      return "random";
    case SearcherName::kAdaptiveAsha:
      return "adaptive_asha";
    case SearcherName::kPbt:
      return "pbt";
  }
  return "single";
}

const char* AshaModeText(AshaMode mode) {
  switch (mode) {
    case AshaMode::kAggressive:
      return "aggressive";
    case AshaMode::kStandard:
      return "standard";
    case AshaMode::kConservative:
      return "conservative";
  }
  return "standard";
}

Result<int64_t> LengthToBatches(const Length& length, int64_t global_batch_size,
                                int64_t records_per_epoch) {
  if (length.value < 0) return Status::InvalidArgument("a length cannot be negative");
  if (length.unit == LengthUnit::kBatches) return length.value;
  if (global_batch_size <= 0) {
    return Status::InvalidArgument(std::string("a length in ") + LengthUnitName(length.unit) +
                                   " needs a positive global_batch_size");
  }
  int64_t records = length.value;
  if (length.unit == LengthUnit::kEpochs) {
    if (records_per_epoch <= 0) {
      return Status::InvalidArgument("a length in epochs needs a positive records_per_epoch");
    }
    if (records > std::numeric_limits<int64_t>::max() / records_per_epoch) {
      return Status::InvalidArgument("a length of " + std::to_string(length.value) +
                                     " epochs is too long");
    }
    records *= records_per_epoch;
  }
  return records / global_batch_size + (records % global_batch_size != 0 ? 1 : 0);
}

Result<int64_t> LengthInBatches(const ExperimentConfig& config, const Length& length) {
  return LengthToBatches(length, config.global_batch_size.value_or(0), config.records_per_epoch);
}

void SetExperimentSeed(ExperimentConfig& config, uint32_t seed) {
  config.experiment_seed = seed;
  config.effective["reproducibility"]["experiment_seed"] = seed;
}

bool IsTrialClassEntrypoint(const std::string& entrypoint) {
  const auto colon = entrypoint.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == entrypoint.size()) return false;
  auto all_of = [&](size_t from, size_t to, bool dots) {
    for (size_t i = from; i < to; ++i) {
      const char ch = entrypoint[i];
      const bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '_';
      if (!word && !(dots && ch == '.')) return false;
    }
    return true;
  };
  return all_of(0, colon, true) && all_of(colon + 1, entrypoint.size(), false);
}

nlohmann::json DeterminedTrialConfig(const ExperimentConfig& config) {
  json trial = config.effective;
  // Determined's defaults for what its harness reads (its master fills them the same way).
  const json defaults = {
      {"checkpoint_policy", "best"},
      {"perform_initial_validation", false},
      {"debug", false},
      {"profiling",
       {{"enabled", false},
        {"begin_on_batch", 0},
        {"end_after_batch", nullptr},
        {"sync_timings", true}}},
      {"optimizations",
       {{"aggregation_frequency", 1},
        {"average_aggregated_gradients", true},
        {"average_training_metrics", true},
        {"gradient_compression", false},
        {"grad_updates_size_file", nullptr},
        {"mixed_precision", "O0"},
        {"tensor_fusion_threshold", 64},
        {"tensor_fusion_cycle_time", 1},
        {"auto_tune_tensor_fusion", false}}},
  };
  for (const auto& [key, value] : defaults.items()) {
    if (!trial.contains(key)) {
      trial[key] = value;
    } else if (value.is_object() && trial[key].is_object()) {
      for (const auto& [inner, inner_value] : value.items()) {
        if (!trial[key].contains(inner)) trial[key][inner] = inner_value;
      }
    }
  }
  return trial;
}

Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text) {
  // yaml-cpp reports malformed documents (and odd ones: bad aliases, deep nesting) by throwing.
  try {
    // Bounded: size, nesting and alias expansion (base/yaml_json.h).
    CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, ""));
    return ParseRoot(root);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("line " +
                                   std::to_string(e.mark.is_null() ? 1 : e.mark.line + 1) +
                                   ": not valid YAML: " + e.msg);
  }
}

std::string CheckpointDirectory(const ExperimentConfig& config) {
  if (!config.checkpoint_storage || config.checkpoint_storage->IsObjectStore()) return "";
  const auto& storage = *config.checkpoint_storage;
  if (!storage.storage_path || storage.storage_path->empty()) return storage.host_path;
  if ((*storage.storage_path)[0] == '/') return *storage.storage_path;
  return storage.host_path + "/" + *storage.storage_path;
}

nlohmann::json PerDeviceJson(const PerDeviceList& lists) {
  return {{"cpu", lists.cpu}, {"cuda", lists.cuda}, {"rocm", lists.rocm}};
}

nlohmann::json CheckpointStorageJson(const CheckpointStorageConfig& s) {
  auto optional_text = [](const std::optional<std::string>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json shown = {{"type", s.type}};
  if (s.type == "shared_fs") {
    shown["host_path"] = s.host_path;
    shown["storage_path"] = optional_text(s.storage_path);
  } else if (s.type == "s3") {
    shown["bucket"] = s.bucket;
    shown["prefix"] = s.prefix.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.prefix);
    shown["endpoint_url"] = optional_text(s.endpoint_url);
    shown["access_key"] = optional_text(s.access_key);
    shown["secret_key"] = optional_text(s.secret_key);
  } else {
    shown["container"] = s.container;
    shown["connection_string"] = optional_text(s.connection_string);
  }
  shown["save_experiment_best"] = s.save_experiment_best;
  shown["save_trial_best"] = s.save_trial_best;
  shown["save_trial_latest"] = s.save_trial_latest;
  return shown;
}

Result<nlohmann::json> NormalizedCheckpointStorage(const nlohmann::json& storage,
                                                   const std::string& field) {
  if (!storage.is_object()) {
    return Status::InvalidArgument(field + ": expected a map like {type: s3, bucket: b}");
  }
  try {
    CAIRN_ASSIGN_OR_RETURN(YAML::Node node, JsonToYamlNode(storage, field));
    fields::Field root = fields::Root(node, "", /*with_lines=*/false);
    root.path = field;
    CAIRN_ASSIGN_OR_RETURN(CheckpointStorageConfig parsed, ParseCheckpointStorage(root));
    return CheckpointStorageJson(parsed);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(field + ": " + e.msg);
  }
}

}  // namespace cairn::experiments
