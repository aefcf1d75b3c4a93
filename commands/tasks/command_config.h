// A command's, notebook's, shell's or TensorBoard's configuration as Determined's CLI sends it
// (`config` of POST /api/v1/commands|notebooks|shells|tensorboards): entrypoint (commands only),
// description, resources, environment (variables, image, registry_auth, force_pull_image),
// bind_mounts, work_dir, idle_timeout and tensorboard_args.
// Read with base/fields.h; what Cairn does not have is refused by name. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/fields.h"
#include "base/status.h"
#include "events.pb.h"

namespace cairn::commands {

struct CommandConfig {
  events::TaskSpec spec;        // entrypoint, description, environment, work_dir, preemptible
  events::Resources resources;  // slots (default 1), priority, weight, max_slots, pool
  // What the user asked for, in Determined's shape, shown back as the command's config.
  nlohmann::json effective;
};

// `config` is the JSON object of the request; errors name the field ("config.resources.slots").
// `type` is the kind of task it configures: a command needs an entrypoint, the others refuse one
// (the agent starts Jupyter, sshd or TensorBoard itself). Slots default to 1, and to 0 for a
// TensorBoard, as in Determined.
Result<CommandConfig> ParseTaskConfig(const nlohmann::json& config, events::TaskType type);
inline Result<CommandConfig> ParseCommandConfig(const nlohmann::json& config) {
  return ParseTaskConfig(config, events::TASK_TYPE_COMMAND);
}

// Determined's container fields, shared by commands, experiments and task_container_defaults
// (commands/tasks/task_container_defaults.h): each is checked and read from `field` into `spec`,
// and `shown` gets it as the configuration shows it back (a registry password left out).
Status ReadTaskImage(const fields::Field& field, events::TaskSpec& spec, nlohmann::json& shown);
Status ReadRegistryAuth(const fields::Field& field, events::TaskSpec& spec, nlohmann::json& shown);
Status ReadBindMounts(const fields::Field& field, events::TaskSpec& spec, nlohmann::json& shown);
// Registry credentials in Determined's keys {username, password, serveraddress}; the password
// only `with_password` (what machines need; a command's shown config leaves it out).
nlohmann::json RegistryAuthJson(const events::TaskSpec::RegistryAuth& auth, bool with_password);
// resources.shm_size: bytes, or a size with binary units ("4G", "512Mi"), 1 MiB to 1 TiB.
Result<int64_t> ReadShmSize(const fields::Field& field);

// Puts environment.image as Determined writes it (a name, or {cpu, cuda|gpu, rocm}, already
// checked) into the spec: a name is both variants; rocm is left out (no ROCm slots). Anything
// else sets nothing.
void SetTaskImage(const nlohmann::json& image, events::TaskSpec& spec);

// "Command", "Notebook", "Shell" or "TensorBoard": a task's kind as a default description names
// it (a TensorBoard's is then made to name its experiments and trials).
const char* KindName(events::TaskType type);

// "30s", "10m", "2h", "1d", a bare number of seconds, or "0" (never): whole seconds.
// InvalidArgument for anything else, negative or above a year.
Result<int64_t> ParseIdleTimeout(const std::string& text);

}  // namespace cairn::commands
