#include "commands/tasks/command_config.h"

#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "base/encoding.h"
#include "base/fields.h"
#include "base/yaml_json.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

using fields::Field;
using fields::MapFields;
using nlohmann::json;

Status ParseEntrypoint(const Field& field, CommandConfig& out) {
  if (field.node.IsScalar()) {
    // A string runs through the shell, as Determined does.
    CAIRN_ASSIGN_OR_RETURN(std::string line, fields::ReadString(field, "a command line"));
    if (line.empty()) return fields::Invalid(field, "must not be empty");
    for (const char* part : {"/bin/sh", "-c"}) out.spec.add_entrypoint(part);
    out.spec.add_entrypoint(line);
    out.effective["entrypoint"] = line;
    return Status::Ok();
  }
  CAIRN_ASSIGN_OR_RETURN(auto arguments,
                         fields::ReadStringList(field, "a non-empty list of strings or a string"));
  if (arguments.empty() || arguments[0].empty()) return fields::Invalid(field, "must not be empty");
  // One argument is a command line, as Determined's command-entrypoint.sh takes it (`det cmd
  // run 'env | grep X'` sends a list of one).
  if (arguments.size() == 1) {
    for (const char* part : {"/bin/sh", "-c"}) out.spec.add_entrypoint(part);
  }
  for (const auto& argument : arguments) out.spec.add_entrypoint(argument);
  out.effective["entrypoint"] = arguments;
  return Status::Ok();
}

std::string DefaultDescription(const json& entrypoint) {
  std::string joined;
  for (const auto& argument : entrypoint.is_string() ? json::array({entrypoint}) : entrypoint) {
    joined += (joined.empty() ? "" : " ") + argument.get<std::string>();
  }
  // Cut between characters: the description goes into the event, and protobuf refuses to read
  // back a string that is not UTF-8.
  if (joined.size() > 60) joined = ValidUtf8Prefix(joined, 57) + "...";
  return "Command (" + joined + ")";
}

// Determined's resources.shm_size: bytes, or a size with binary units ("4G", "512Mi", "1.5gb"),
// as Docker reads it.
Result<int64_t> ParseShmSize(const Field& field) {
  constexpr int64_t kMin = 1 << 20;
  constexpr int64_t kMax = int64_t{1} << 40;
  const std::string range = "must be between 1 MiB and 1 TiB";
  if (!field.node.IsScalar()) return fields::Invalid(field, "expected a size like 4G or bytes");
  const std::string text = field.node.Scalar();
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  double number = 0;
  try {
    number = end == 0 ? -1 : std::stod(text.substr(0, end));
  } catch (...) {
    number = -1;
  }
  std::string unit = AsciiLower(text.substr(end));
  if (!unit.empty() && unit[0] == ' ') unit.erase(0, 1);
  static const std::map<std::string, int> kShifts = {{"", 0},   {"b", 0},  {"k", 10}, {"m", 20},
                                                     {"g", 30}, {"t", 40}, {"p", 50}};
  std::string prefix = unit;
  for (const char* suffix : {"ib", "b", "i"}) {
    if (prefix.size() > 1 && prefix.ends_with(suffix)) {
      prefix.resize(prefix.size() - std::strlen(suffix));
      break;
    }
  }
  auto shift = kShifts.find(prefix);
  if (number < 0 || shift == kShifts.end()) {
    return fields::Invalid(
        field, "expected a size like 4G, 512M or a number of bytes, got '" + text + "'");
  }
  const double bytes = number * static_cast<double>(int64_t{1} << shift->second);
  if (!(bytes >= kMin && bytes <= kMax)) return fields::Invalid(field, range);
  return static_cast<int64_t>(bytes);
}

Status ParseResources(const Field& field, CommandConfig& out) {
  CAIRN_ASSIGN_OR_RETURN(MapFields resources, MapFields::Read(field, "a map"));
  CAIRN_RETURN_IF_ERROR(resources.Check(
      {"slots", "priority", "weight", "resource_pool", "max_slots", "preemptible", "shm_size"},
      {{"devices", "a container gets its slots' GPUs and nothing else"}}));
  if (auto shm = resources.Get("shm_size")) {
    CAIRN_ASSIGN_OR_RETURN(int64_t bytes, ParseShmSize(*shm));
    out.spec.set_shm_size_bytes(bytes);
    out.effective["resources"]["shm_size"] = bytes;
  }
  if (auto slots = resources.Get("slots")) {
    CAIRN_ASSIGN_OR_RETURN(int value, fields::ReadSmallInt(*slots, 0, kMaxSlotsPerTask));
    out.resources.set_slots(value);
  }
  if (auto priority = resources.Get("priority")) {
    CAIRN_ASSIGN_OR_RETURN(int value, fields::ReadSmallInt(*priority, kMinPriority, kMaxPriority));
    out.resources.set_priority(value);
  }
  if (auto weight = resources.Get("weight")) {
    CAIRN_ASSIGN_OR_RETURN(double value,
                           fields::ReadNumberIn(*weight, 1e-9, 1e9, "a positive number"));
    out.resources.set_weight(value);
  }
  if (auto max_slots = resources.Get("max_slots")) {
    CAIRN_ASSIGN_OR_RETURN(int value, fields::ReadSmallInt(*max_slots, 0));
    out.resources.set_max_slots(value);
  }
  // Cairn's opt-in to Slurm-style preemption (SIGTERM, grace period, re-queue); commands are
  // otherwise not preemptible, as the seeds say.
  if (auto preemptible = resources.Get("preemptible")) {
    CAIRN_ASSIGN_OR_RETURN(bool value, fields::ReadBool(*preemptible));
    out.spec.set_preemptible(value);
  }
  // "" (or absent) leaves the choice to the decider: the default compute pool, or the default
  // aux pool for a command that asks for no slot.
  if (auto pool = resources.Get("resource_pool")) {
    CAIRN_ASSIGN_OR_RETURN(std::string value, fields::ReadString(*pool, "a pool name"));
    out.resources.set_resource_pool(value);
  }
  return Status::Ok();
}

// An image reference as the agent resolves it (agent/PROTOCOL.md §5b); the agent checks its form.
Result<std::string> ReadImageName(const Field& field) {
  CAIRN_ASSIGN_OR_RETURN(std::string name, fields::ReadString(field, "an image name"));
  if (name.empty() || name.size() > 1024)
    return fields::Invalid(field, "must be 1 to 1024 characters");
  for (char c : name) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return fields::Invalid(field, "must not hold spaces or control characters");
    }
  }
  return name;
}

// Determined's form: one image, or one per device type ({cpu, cuda}; "gpu" is cuda's old name).
Status ParseImageInto(const Field& field, events::TaskSpec& spec, json& shown) {
  json image;
  if (field.node.IsMap()) {
    CAIRN_ASSIGN_OR_RETURN(MapFields variants, MapFields::Read(field, "a map"));
    CAIRN_RETURN_IF_ERROR(
        variants.Check({"cpu", "cuda", "gpu"}, {{"rocm", "Cairn's agents offer no ROCm slots"}}));
    if (variants.Contains("cuda") && variants.Contains("gpu")) {
      return fields::Invalid(field, "give cuda or gpu (its old name), not both");
    }
    for (size_t i = 0; i < variants.keys().size(); ++i) {
      if (fields::IsAbsent(variants.entries()[i].node)) continue;
      CAIRN_ASSIGN_OR_RETURN(image[variants.keys()[i]], ReadImageName(variants.entries()[i]));
    }
  } else {
    CAIRN_ASSIGN_OR_RETURN(std::string name, ReadImageName(field));
    image = name;
  }
  SetTaskImage(image, spec);
  shown = image;
  return Status::Ok();
}

// Determined's keys; the password travels to the agent in the task spec (redacted for every
// person) and is left out of the config shown back.
Status ParseRegistryAuthInto(const Field& field, events::TaskSpec& spec, json& shown) {
  CAIRN_ASSIGN_OR_RETURN(MapFields auth, MapFields::Read(field, "a map"));
  const char* kPassword = "give username and password";
  CAIRN_RETURN_IF_ERROR(auth.Check({"username", "password", "serveraddress"},
                                   {{"auth", kPassword},
                                    {"identitytoken", kPassword},
                                    {"registrytoken", kPassword},
                                    {"email", "registries do not use it; leave it out"}}));
  auto* spec_auth = spec.mutable_registry_auth();
  CAIRN_ASSIGN_OR_RETURN(Field username, auth.Require("username", "alice"));
  CAIRN_ASSIGN_OR_RETURN(Field password, auth.Require("password"));
  CAIRN_ASSIGN_OR_RETURN(*spec_auth->mutable_username(), fields::ReadString(username));
  CAIRN_ASSIGN_OR_RETURN(*spec_auth->mutable_password(), fields::ReadString(password));
  if (auto server = auth.Get("serveraddress")) {
    CAIRN_ASSIGN_OR_RETURN(*spec_auth->mutable_server_address(),
                           fields::ReadString(*server, "a registry host"));
  }
  shown = RegistryAuthJson(*spec_auth, /*with_password=*/false);
  return Status::Ok();
}

Status CheckMountPath(const Field& field, const std::string& path) {
  if (path.empty() || path[0] != '/') return fields::Invalid(field, "must be an absolute path");
  if (path == "/") return fields::Invalid(field, "must not be /");
  if (path.find("/../") != std::string::npos || path.ends_with("/..") ||
      path.find('\0') != std::string::npos) {
    return fields::Invalid(field, "must not climb with '..'");
  }
  return Status::Ok();
}

Status CheckRelativeMountPath(const Field& field, const std::string& path) {
  if (path == "." || path == "./" || path.starts_with("../") || path == ".." ||
      path.find("/../") != std::string::npos || path.ends_with("/..") ||
      path.find('\0') != std::string::npos) {
    return fields::Invalid(field,
                           "must name a directory under the working directory (not '.', "
                           "no '..')");
  }
  return Status::Ok();
}

// Determined's top-level bind_mounts: [{host_path, container_path, read_only}].
Status ParseBindMountsInto(const Field& field, events::TaskSpec& spec, json& shown) {
  if (!field.node.IsSequence()) return fields::Invalid(field, "expected a list of mounts");
  shown = json::array();
  for (size_t i = 0; i < field.node.size(); ++i) {
    const Field element = fields::Element(field, field.node[i], i);
    CAIRN_ASSIGN_OR_RETURN(MapFields mount, MapFields::Read(element, "a map"));
    CAIRN_RETURN_IF_ERROR(mount.Check({"host_path", "container_path", "read_only"},
                                      {{"propagation", "mounts are private (rprivate)"}}));
    auto* spec_mount = spec.add_bind_mounts();
    for (const char* key : {"host_path", "container_path"}) {
      CAIRN_ASSIGN_OR_RETURN(Field path_field, mount.Require(key, "/data"));
      CAIRN_ASSIGN_OR_RETURN(std::string path, fields::ReadString(path_field, "a path"));
      // A relative container_path is under the task's working directory, as in Determined.
      const bool relative_target =
          std::string(key) == "container_path" && !path.empty() && path[0] != '/';
      CAIRN_RETURN_IF_ERROR(relative_target ? CheckRelativeMountPath(path_field, path)
                                            : CheckMountPath(path_field, path));
      std::string key_name = key;
      (key_name == "host_path" ? *spec_mount->mutable_host_path()
                               : *spec_mount->mutable_container_path()) = path;
    }
    if (auto read_only = mount.Get("read_only")) {
      CAIRN_ASSIGN_OR_RETURN(bool value, fields::ReadBool(*read_only));
      spec_mount->set_read_only(value);
    }
    shown.push_back({{"host_path", spec_mount->host_path()},
                     {"container_path", spec_mount->container_path()},
                     {"read_only", spec_mount->read_only()}});
  }
  return Status::Ok();
}

Status ParseEnvironment(const Field& field, CommandConfig& out) {
  CAIRN_ASSIGN_OR_RETURN(MapFields environment, MapFields::Read(field, "a map"));
  const char* kContainers = "Cairn's containers share the host's network and capabilities";
  CAIRN_RETURN_IF_ERROR(environment.Check({"environment_variables", "secret_environment_variables",
                                           "image", "registry_auth", "force_pull_image"},
                                          {{"ports", kContainers},
                                           {"proxy_ports", kContainers},
                                           {"pod_spec", "Cairn does not run on Kubernetes"},
                                           {"add_capabilities", kContainers},
                                           {"drop_capabilities", kContainers}}));
  if (auto image = environment.Get("image")) {
    CAIRN_RETURN_IF_ERROR(ParseImageInto(*image, out.spec, out.effective["environment"]["image"]));
  }
  if (auto auth = environment.Get("registry_auth")) {
    CAIRN_RETURN_IF_ERROR(
        ParseRegistryAuthInto(*auth, out.spec, out.effective["environment"]["registry_auth"]));
  }
  if (auto force = environment.Get("force_pull_image")) {
    CAIRN_ASSIGN_OR_RETURN(bool value, fields::ReadBool(*force));
    out.spec.set_force_pull_image(value);
    out.effective["environment"]["force_pull_image"] = value;
  }
  if (auto secret = environment.Get("secret_environment_variables")) {
    CAIRN_ASSIGN_OR_RETURN(auto names, fields::ReadStringList(*secret, "a list of variable names"));
    for (const auto& name : names) out.spec.add_secret_variable_names(name);
    out.effective["environment"]["secret_environment_variables"] = names;
  }
  auto variables = environment.Get("environment_variables");
  if (!variables) return Status::Ok();
  if (variables->node.IsMap()) {
    return fields::Unsupported(*variables, "per device type; use a list of KEY=VALUE");
  }
  CAIRN_ASSIGN_OR_RETURN(auto entries, fields::ReadStringList(*variables, "a list of KEY=VALUE"));
  for (size_t i = 0; i < entries.size(); ++i) {
    // A NAME alone unsets NAME, as Docker takes Determined's entry without a value.
    if (entries[i].empty() || entries[i][0] == '=') {
      return fields::Invalid(fields::Element(*variables, variables->node[i], i),
                             "expected KEY=VALUE or KEY, got '" + entries[i] + "'");
    }
    out.spec.add_environment_variables(entries[i]);
  }
  out.effective["environment"]["environment_variables"] = entries;
  return Status::Ok();
}

Status ParseInteractive(const MapFields& map, events::TaskType type, CommandConfig& out) {
  if (auto field = map.Get("idle_timeout")) {
    std::string text;
    if (field->node.IsScalar()) text = field->node.Scalar();
    auto seconds = ParseIdleTimeout(text);
    if (!seconds.ok()) return fields::Invalid(*field, seconds.status().message());
    out.spec.set_idle_timeout_seconds(*seconds);
    out.effective["idle_timeout"] = text;
  }
  if (auto field = map.Get("notebook_idle_type")) {
    if (type != events::TASK_TYPE_NOTEBOOK) return fields::Invalid(*field, "is for notebooks");
    // Every kind counts the same activity here: proxied traffic and the kernels' own.
    CAIRN_ASSIGN_OR_RETURN(
        std::string kind,
        fields::ReadChoice(*field, {"kernels_or_terminals", "kernel_connections", "activity"}));
    out.effective["notebook_idle_type"] = kind;
  }
  if (auto field = map.Get("tensorboard_args")) {
    if (type != events::TASK_TYPE_TENSORBOARD)
      return fields::Invalid(*field, "is for TensorBoards");
    CAIRN_ASSIGN_OR_RETURN(auto arguments, fields::ReadStringList(*field, "a list of strings"));
    for (const auto& argument : arguments) out.spec.add_tensorboard_args(argument);
    out.effective["tensorboard_args"] = arguments;
  }
  return Status::Ok();
}

}  // namespace

Status ReadTaskImage(const fields::Field& field, events::TaskSpec& spec, json& shown) {
  return ParseImageInto(field, spec, shown);
}
Status ReadRegistryAuth(const fields::Field& field, events::TaskSpec& spec, json& shown) {
  return ParseRegistryAuthInto(field, spec, shown);
}
Status ReadBindMounts(const fields::Field& field, events::TaskSpec& spec, json& shown) {
  return ParseBindMountsInto(field, spec, shown);
}
Result<int64_t> ReadShmSize(const fields::Field& field) { return ParseShmSize(field); }

json RegistryAuthJson(const events::TaskSpec::RegistryAuth& auth, bool with_password) {
  json out = {{"username", auth.username()}};
  if (with_password) out["password"] = auth.password();
  if (!auth.server_address().empty()) out["serveraddress"] = auth.server_address();
  return out;
}

void SetTaskImage(const json& image, events::TaskSpec& spec) {
  if (image.is_string()) {
    spec.set_image_cpu(image.get<std::string>());
    spec.set_image_gpu(image.get<std::string>());
    return;
  }
  if (!image.is_object()) return;
  auto variant = [&](const char* key) {
    auto it = image.find(key);
    return it != image.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  spec.set_image_cpu(variant("cpu"));
  spec.set_image_gpu(variant("cuda").empty() ? variant("gpu") : variant("cuda"));
}

Result<int64_t> ParseIdleTimeout(const std::string& text) {
  const std::string expected =
      "expected a duration such as \"30s\", \"10m\", \"2h\" or \"1d\", or seconds";
  if (text.empty()) return Status::InvalidArgument(expected);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return Status::InvalidArgument(expected + ", got '" + text + "'");
  int64_t value = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else {
    return Status::InvalidArgument(expected + ", got '" + text + "'");
  }
  if (value * scale > 366 * 86400) {
    return Status::InvalidArgument("at most a year, got '" + text + "'");
  }
  return value * scale;
}

Result<CommandConfig> ParseTaskConfig(const json& config, events::TaskType type) {
  const bool generic = type == events::TASK_TYPE_GENERIC;
  const bool command = type == events::TASK_TYPE_COMMAND || generic;
  if (!config.is_object()) {
    return Status::InvalidArgument(command ? "config: expected a map with an entrypoint"
                                           : "config: expected a map");
  }
  // Straight from the parsed body: no second parse of the same document.
  CAIRN_ASSIGN_OR_RETURN(YAML::Node node, JsonToYamlNode(config, "config"));
  // A JSON body: paths, no lines.
  const Field top{node, "config", 0, ""};
  CAIRN_ASSIGN_OR_RETURN(MapFields map,
                         MapFields::Read(top, command ? "a map with an entrypoint" : "a map"));
  const char* kLater = "not supported by Cairn yet";
  std::set<std::string> known = {"description",      "resources",    "environment",
                                 "work_dir",         "idle_timeout", "notebook_idle_type",
                                 "tensorboard_args", "bind_mounts"};
  std::vector<fields::Refused> refused = {{"debug", kLater}, {"pbs", kLater}, {"slurm", kLater}};
  if (generic) {
    // Determined's GenericTaskConfig: no description, idle timeout or TensorBoard arguments.
    known = {"resources", "environment", "work_dir", "bind_mounts", "entrypoint"};
    refused.push_back({"preemption_timeout", kLater});
  }
  if (command) {
    known.insert("entrypoint");
  } else {
    refused.push_back(
        {"entrypoint", "the agent starts Jupyter, sshd or TensorBoard itself; use a command"});
  }
  CAIRN_RETURN_IF_ERROR(map.Check(known, refused));

  CommandConfig out;
  out.effective = json::object();
  out.spec.set_task_type(type);
  if (command) {
    CAIRN_ASSIGN_OR_RETURN(Field entrypoint, map.Require("entrypoint", "[\"echo\", \"hi\"]"));
    if (generic && entrypoint.node.IsScalar()) {
      return fields::Invalid(entrypoint, "must be a list of strings, as [\"echo\", \"hi\"]");
    }
    CAIRN_RETURN_IF_ERROR(ParseEntrypoint(entrypoint, out));
  }
  CAIRN_RETURN_IF_ERROR(ParseInteractive(map, type, out));

  std::string description;
  if (auto field = map.Get("description")) {
    CAIRN_ASSIGN_OR_RETURN(description, fields::ReadString(*field));
  }
  if (description.empty()) {
    description =
        command ? DefaultDescription(out.effective["entrypoint"]) : std::string(KindName(type));
  }
  out.spec.set_description(description);
  out.effective["description"] = description;

  // Determined's defaults when the request omits slots: one, none for a TensorBoard.
  out.resources.set_slots(type == events::TASK_TYPE_TENSORBOARD ? 0 : 1);
  if (auto resources = map.Get("resources")) CAIRN_RETURN_IF_ERROR(ParseResources(*resources, out));
  if (auto environment = map.Get("environment")) {
    CAIRN_RETURN_IF_ERROR(ParseEnvironment(*environment, out));
  }
  if (auto mounts = map.Get("bind_mounts")) {
    CAIRN_RETURN_IF_ERROR(ParseBindMountsInto(*mounts, out.spec, out.effective["bind_mounts"]));
  }
  if (auto work_dir = map.Get("work_dir")) {
    CAIRN_ASSIGN_OR_RETURN(std::string value, fields::ReadString(*work_dir, "a directory"));
    if (!value.empty()) {
      out.spec.set_work_dir(value);
      out.effective["work_dir"] = value;
    }
  }
  // What the user asked for; the pool and priority the decider resolves are filled in from the
  // recorded task when the config is shown.
  json& resources = out.effective["resources"];
  resources = {{"slots", out.resources.slots()}};
  if (!out.resources.resource_pool().empty()) {
    resources["resource_pool"] = out.resources.resource_pool();
  }
  if (out.resources.priority() != 0) resources["priority"] = out.resources.priority();
  if (out.resources.weight() != 0) resources["weight"] = out.resources.weight();
  if (out.resources.max_slots() != 0) resources["max_slots"] = out.resources.max_slots();
  if (out.spec.preemptible()) resources["preemptible"] = true;
  return out;
}

const char* KindName(events::TaskType type) {
  switch (type) {
    case events::TASK_TYPE_NOTEBOOK:
      return "Notebook";
    case events::TASK_TYPE_SHELL:
      return "Shell";
    case events::TASK_TYPE_TENSORBOARD:
      return "TensorBoard";
    case events::TASK_TYPE_GENERIC:
      return "Generic Task";
    default:
      return "Command";
  }
}

}  // namespace cairn::commands
