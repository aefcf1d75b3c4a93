#include "commands/command_config.h"

#include <set>
#include <vector>

#include "base/encoding.h"
#include "base/fields.h"
#include "base/yaml_json.h"

namespace cairn::commands {

namespace {

using fields::Field;
using fields::MapFields;
using nlohmann::json;

constexpr int kMaxSlots = 4096;

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
  if (arguments.empty()) return fields::Invalid(field, "must not be empty");
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

Status ParseResources(const Field& field, CommandConfig& out) {
  CAIRN_ASSIGN_OR_RETURN(MapFields resources, MapFields::Read(field, "a map"));
  CAIRN_RETURN_IF_ERROR(
      resources.Check({"slots", "priority", "weight", "resource_pool", "max_slots", "preemptible"},
                      {{"shm_size", "Cairn runs tasks as processes"},
                       {"devices", "Cairn runs tasks as processes"}}));
  if (auto slots = resources.Get("slots")) {
    CAIRN_ASSIGN_OR_RETURN(int value, fields::ReadSmallInt(*slots, 0, kMaxSlots));
    out.resources.set_slots(value);
  }
  if (auto priority = resources.Get("priority")) {
    CAIRN_ASSIGN_OR_RETURN(int value, fields::ReadSmallInt(*priority, 1, 99));
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

Status ParseEnvironment(const Field& field, CommandConfig& out) {
  CAIRN_ASSIGN_OR_RETURN(MapFields environment, MapFields::Read(field, "a map"));
  const char* kContainers = "Cairn runs tasks as processes, not containers";
  CAIRN_RETURN_IF_ERROR(environment.Check({"environment_variables", "secret_environment_variables"},
                                          {{"image", kContainers},
                                           {"ports", kContainers},
                                           {"proxy_ports", kContainers},
                                           {"registry_auth", kContainers},
                                           {"force_pull_image", kContainers},
                                           {"pod_spec", kContainers},
                                           {"add_capabilities", kContainers},
                                           {"drop_capabilities", kContainers}}));
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
    if (entries[i].find('=') == std::string::npos) {
      return fields::Invalid(fields::Element(*variables, variables->node[i], i),
                             "expected KEY=VALUE, got '" + entries[i] + "'");
    }
    out.spec.add_environment_variables(entries[i]);
  }
  out.effective["environment"]["environment_variables"] = entries;
  return Status::Ok();
}

const char* KindName(events::TaskType type) {
  switch (type) {
    case events::TASK_TYPE_NOTEBOOK:
      return "Notebook";
    case events::TASK_TYPE_SHELL:
      return "Shell";
    case events::TASK_TYPE_TENSORBOARD:
      return "TensorBoard";
    default:
      return "Command";
  }
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
  const bool command = type == events::TASK_TYPE_COMMAND;
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
  std::set<std::string> known = {"description",     "resources",    "environment",
                                 "work_dir",        "idle_timeout", "notebook_idle_type",
                                 "tensorboard_args"};
  std::vector<fields::Refused> refused = {
      {"bind_mounts", kLater}, {"debug", kLater}, {"pbs", kLater}, {"slurm", kLater}};
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

}  // namespace cairn::commands
