#include "agent/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/command_line.h"
#include "base/fields.h"
#include "base/yaml_json.h"
#include "events/limits.h"

namespace cairn::agent {
namespace {

constexpr double kMaxSeconds = 24 * 3600;

Result<int> ParseSlots(const std::string& source, const std::string& text) {
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument(source + " must be a whole number of slots, got '" + text + "'");
  }
  int value = std::stoi(text);
  if (value < 1 || value > kMaxSlotsPerAgent) {
    return Status::InvalidArgument(source + " must be between 1 and " +
                                   std::to_string(kMaxSlotsPerAgent) + ", got " + text);
  }
  return value;
}

// Seconds as a decimal number ("10", "0.5") into milliseconds.
Result<std::chrono::milliseconds> ParseSeconds(const std::string& source, const std::string& text,
                                               bool allow_zero) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                     ? NAN
                     : std::strtod(begin, &end);
  if (std::isnan(value) || end != begin + text.size() || !std::isfinite(value)) {
    return Status::InvalidArgument(source + " must be a number of seconds, got '" + text + "'");
  }
  if (value < 0 || (!allow_zero && value == 0) || value > kMaxSeconds) {
    return Status::InvalidArgument(source + " must be " + (allow_zero ? "at least 0" : "above 0") +
                                   " and at most 86400 seconds, got " + text);
  }
  auto millis = std::chrono::milliseconds(static_cast<int64_t>(std::llround(value * 1000)));
  if (!allow_zero && millis.count() == 0) millis = std::chrono::milliseconds(1);
  return millis;
}

bool IsIdCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// Every setting has one name on the command line and one in the YAML file.
enum class Setting {
  kMaster,
  kId,
  kSlots,
  kPool,
  kWorkRoot,
  kKillGrace,
  kHeartbeatInterval,
  kAgentTokenFile,
  kMasterCertFile,
  kServiceAddress,
  kNotebookCommand,
  kSshdCommand,
  kTensorboardCommand,
  kEnvCacheDir,
  kPipIndexUrl,
  kPipFindLinks,
  kDeterminedPackageDir,
  kPipNoIndex,
  kRuntime,
  kAllowImagesOnHost,
  kImageDir,
  kDefaultImage,
  kArtificialGpus,
  kGpuDeviceDir
};

Status ApplySetting(Setting setting, const std::string& source, const std::string& value,
                    AgentConfig& config) {
  switch (setting) {
    case Setting::kMaster:
      config.master_url = value;
      break;
    case Setting::kId:
      config.agent_id = value;
      break;
    case Setting::kSlots: {
      CAIRN_ASSIGN_OR_RETURN(config.slots, ParseSlots(source, value));
      break;
    }
    case Setting::kPool:
      config.resource_pool = value;
      break;
    case Setting::kWorkRoot:
      config.work_root = value;
      break;
    case Setting::kKillGrace: {
      CAIRN_ASSIGN_OR_RETURN(config.kill_grace, ParseSeconds(source, value, true));
      break;
    }
    case Setting::kHeartbeatInterval: {
      CAIRN_ASSIGN_OR_RETURN(config.heartbeat_interval, ParseSeconds(source, value, false));
      break;
    }
    case Setting::kAgentTokenFile:
      config.agent_token_file = value;
      break;
    case Setting::kMasterCertFile:
      config.master_cert_file = value;
      break;
    case Setting::kServiceAddress:
      config.service_address = value;
      break;
    case Setting::kNotebookCommand:
      config.notebook_command = value;
      break;
    case Setting::kSshdCommand:
      config.sshd_command = value;
      break;
    case Setting::kTensorboardCommand:
      config.tensorboard_command = value;
      break;
    case Setting::kEnvCacheDir:
      config.env_cache_dir = value;
      break;
    case Setting::kPipIndexUrl:
      config.pip_index_url = value;
      break;
    case Setting::kPipFindLinks:
      config.pip_find_links = value;
      break;
    case Setting::kDeterminedPackageDir:
      config.determined_package_dir = value;
      break;
    case Setting::kPipNoIndex:
      if (value != "true" && value != "false") {
        return Status::InvalidArgument(source + ": expected true or false, got '" + value + "'");
      }
      config.pip_no_index = value == "true";
      break;
    case Setting::kRuntime:
      if (value != "process" && value != "container") {
        return Status::InvalidArgument(source + " must be process or container, got '" + value +
                                       "'");
      }
      config.runtime = value;
      break;
    case Setting::kAllowImagesOnHost:
      if (value != "true" && value != "false") {
        return Status::InvalidArgument(source + " must be true or false, got '" + value + "'");
      }
      config.allow_images_on_host = value == "true";
      break;
    case Setting::kImageDir:
      config.image_dir = value;
      break;
    case Setting::kDefaultImage:
      config.default_image = value;
      break;
    case Setting::kArtificialGpus: {
      CAIRN_ASSIGN_OR_RETURN(config.artificial_gpus, ParseSlots(source, value));
      break;
    }
    case Setting::kGpuDeviceDir:
      config.gpu_device_dir = value;
      break;
  }
  return Status::Ok();
}

const std::map<std::string, Setting>& YamlKeys() {
  static const std::map<std::string, Setting> keys = {
      {"master", Setting::kMaster},
      {"id", Setting::kId},
      {"slots", Setting::kSlots},
      {"resource_pool", Setting::kPool},
      {"work_root", Setting::kWorkRoot},
      {"kill_grace_seconds", Setting::kKillGrace},
      {"heartbeat_interval_seconds", Setting::kHeartbeatInterval},
      {"agent_token_file", Setting::kAgentTokenFile},
      {"master_cert_file", Setting::kMasterCertFile},
      {"service_address", Setting::kServiceAddress},
      {"notebook_command", Setting::kNotebookCommand},
      {"sshd_command", Setting::kSshdCommand},
      {"tensorboard_command", Setting::kTensorboardCommand},
      {"env_cache_dir", Setting::kEnvCacheDir},
      {"pip_index_url", Setting::kPipIndexUrl},
      {"pip_find_links", Setting::kPipFindLinks},
      {"determined_package_dir", Setting::kDeterminedPackageDir},
      {"pip_no_index", Setting::kPipNoIndex},
      {"runtime", Setting::kRuntime},
      {"allow_images_on_host", Setting::kAllowImagesOnHost},
      {"image_dir", Setting::kImageDir},
      {"default_image", Setting::kDefaultImage},
      {"artificial_gpus", Setting::kArtificialGpus},
      {"gpu_device_dir", Setting::kGpuDeviceDir},
  };
  return keys;
}

struct Flag {
  const char* name;
  Setting setting;
  const char* value_name;
  const char* help;
};

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"--master", Setting::kMaster, "URL",
       "the master, http://host:port or https://host:port (here or in --config)"},
      {"--id", Setting::kId, "NAME",
       "this agent's id: letters, digits, '.', '_', '-' (here or in --config)"},
      {"--slots", Setting::kSlots, "N",
       "offer N artificial CPU slots; without it the agent offers the GPUs nvidia-smi lists"},
      {"--pool", Setting::kPool, "NAME", "resource pool (default: default)"},
      {"--work-root", Setting::kWorkRoot, "DIR",
       "where tasks without a work dir run (default: $TMPDIR/cairn-agent-<id>)"},
      {"--kill-grace", Setting::kKillGrace, "SECONDS",
       "SIGTERM to SIGKILL delay when killing a task (default 10)"},
      {"--heartbeat-interval", Setting::kHeartbeatInterval, "SECONDS",
       "between heartbeats to the master (default 2)"},
      {"--agent-token-file", Setting::kAgentTokenFile, "FILE",
       "the file holding the master's agent token (security.agent_token, or the master's "
       "<data dir>/agent-token)"},
      // Determined's agent flag; its YAML key here is master_cert_file.
      {"--security-tls-master-cert", Setting::kMasterCertFile, "FILE",
       "the CA certificate (PEM) an https:// master is verified with (default: the system's "
       "CAs); tasks get it as CAIRN_MASTER_CERT_FILE"},
      {"--service-address", Setting::kServiceAddress, "ADDRESS",
       "where notebooks, shells and TensorBoards listen: this host's address as the master "
       "reaches it (default 127.0.0.1)"},
      {"--notebook-command", Setting::kNotebookCommand, "COMMAND",
       "the Jupyter server notebooks run (default jupyter-notebook, Debian's jupyter-notebook)"},
      {"--sshd-command", Setting::kSshdCommand, "COMMAND",
       "the sshd shells run (default /usr/sbin/sshd, Debian's openssh-server)"},
      {"--tensorboard-command", Setting::kTensorboardCommand, "COMMAND",
       "the TensorBoard server TensorBoards run (default tensorboard; not a Debian package)"},
      {"--env-cache-dir", Setting::kEnvCacheDir, "DIR",
       "where trials' prepared environments (runtime_commands, runtime_packages) are built once "
       "and reused (default: <work root>/env-cache); tasks get it as CAIRN_ENV_CACHE"},
      {"--pip-index-url", Setting::kPipIndexUrl, "URL",
       "the package index runtime_packages are installed from (PIP_INDEX_URL; default: pip's)"},
      {"--pip-find-links", Setting::kPipFindLinks, "PATHS",
       "directories or URLs of wheels pip also looks in, space-separated (PIP_FIND_LINKS)"},
      {"--determined-package-dir", Setting::kDeterminedPackageDir, "DIR",
       "where Determined's Python package is (the directory holding determined/), for trials "
       "that run Determined's own code when their environment has none (default: the "
       "environment's)"},
      {"--pip-no-index", Setting::kPipNoIndex, "true|false",
       "install from --pip-find-links only, never an index (PIP_NO_INDEX; default false)"},
      {"--runtime", Setting::kRuntime, "process|container",
       "run tasks as processes on this host (default) or in containers (runc; needs root)"},
      {"--image-dir", Setting::kImageDir, "DIR",
       "container runtime: image NAME is DIR/NAME.tar (an OCI archive) when there"},
      {"--default-image", Setting::kDefaultImage, "IMAGE",
       "container runtime: the image of tasks that name none (default: such tasks fail)"},
      {"--artificial-gpus", Setting::kArtificialGpus, "N",
       "offer N artificial GPU slots (tests, demos), device files <gpu-device-dir>/nvidia<i>"},
      {"--gpu-device-dir", Setting::kGpuDeviceDir, "DIR",
       "where the GPUs' device files nvidia<i> are (default /dev)"},
  };
  return flags;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read config file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::InvalidArgument("cannot read config file '" + path + "'");
  return text.str();
}

}  // namespace

// Read with base/fields.h like every configuration: the file and line in every error.
Status ApplyConfigYaml(const std::string& yaml_text, const std::string& source,
                       AgentConfig& config) {
  CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, source));
  if (fields::IsAbsent(root)) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(
      fields::MapFields settings,
      fields::MapFields::Read(fields::Root(root, source),
                              "a map of settings (master_url: ..., slots: ...)"));
  std::set<std::string> known;
  std::string listed;
  for (const auto& [name, ignored] : YamlKeys()) {
    known.insert(name);
    listed += (listed.empty() ? "" : ", ") + name;
  }
  CAIRN_RETURN_IF_ERROR(settings.Check(known, {}, "unknown field (known: " + listed + ")"));
  for (size_t i = 0; i < settings.keys().size(); ++i) {
    const fields::Field& field = settings.entries()[i];
    if (fields::IsAbsent(field.node)) continue;
    if (!field.node.IsScalar()) return fields::Invalid(field, "expected a single value");
    CAIRN_RETURN_IF_ERROR(ApplySetting(YamlKeys().at(settings.keys()[i]), fields::Where(field),
                                       field.node.Scalar(), config));
  }
  return Status::Ok();
}

Status ValidateConfig(const AgentConfig& config) {
  if (config.master_url.empty()) return Status::InvalidArgument("--master URL is required");
  const bool https = config.master_url.rfind("https://", 0) == 0;
  const std::string scheme = https ? "https://" : "http://";
  if (config.master_url.rfind(scheme, 0) != 0) {
    return Status::InvalidArgument("--master must be an http(s)://host:port URL, got '" +
                                   config.master_url + "'");
  }
  if (!https && !config.master_cert_file.empty()) {
    return Status::InvalidArgument(
        "--security-tls-master-cert is for an https:// master, but --master is '" +
        config.master_url + "'");
  }
  std::string authority = config.master_url.substr(scheme.size());
  if (!authority.empty() && authority.back() == '/') authority.pop_back();
  size_t colon = authority.rfind(':');
  std::string host = colon == std::string::npos ? "" : authority.substr(0, colon);
  std::string port = colon == std::string::npos ? "" : authority.substr(colon + 1);
  bool port_ok = !port.empty() && port.size() <= 5 &&
                 port.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoi(port) >= 1 && std::stoi(port) <= 65535;
  if (host.empty() || host.find('/') != std::string::npos || !port_ok) {
    return Status::InvalidArgument("--master must be an http(s)://host:port URL, got '" +
                                   config.master_url + "'");
  }
  if (config.agent_id.empty()) return Status::InvalidArgument("--id NAME is required");
  if (config.agent_id.size() > 128) {
    return Status::InvalidArgument("--id must be at most 128 characters");
  }
  for (char c : config.agent_id) {
    if (!IsIdCharacter(c)) {
      return Status::InvalidArgument("--id may hold only letters, digits, '.', '_' and '-', got '" +
                                     config.agent_id + "'");
    }
  }
  for (const auto& [flag, command] :
       {std::pair{"--notebook-command", &config.notebook_command},
        std::pair{"--sshd-command", &config.sshd_command},
        std::pair{"--tensorboard-command", &config.tensorboard_command}}) {
    if (command->find_first_not_of(' ') == std::string::npos) {
      return Status::InvalidArgument(std::string(flag) + " must not be empty");
    }
  }
  if (config.slots && config.artificial_gpus) {
    return Status::InvalidArgument("give --slots or --artificial-gpus, not both");
  }
  if (config.runtime != "container") {
    for (const auto& [flag, value] : {std::pair{"--image-dir", &config.image_dir},
                                      std::pair{"--default-image", &config.default_image}}) {
      if (!value->empty()) {
        return Status::InvalidArgument(std::string(flag) + " is for --runtime container");
      }
    }
  } else if (config.allow_images_on_host) {
    return Status::InvalidArgument(
        "--allow-images-on-host is for --runtime process (a container agent runs images)");
  }
  if (config.service_address.empty()) {
    return Status::InvalidArgument("--service-address must not be empty");
  }
  if (config.resource_pool.empty() || config.resource_pool.size() > 128) {
    return Status::InvalidArgument("--pool must be 1 to 128 characters");
  }
  for (char c : config.resource_pool) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("--pool must not hold control characters");
    }
  }
  return Status::Ok();
}

Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine result;
  CLI::App app(
      "Cairn's agent: registers this node's slots with the master, runs the tasks placed on them "
      "as child processes, ships their output, reports their exits and kills them on request. "
      "It prints 'cairn-agent ID registered with URL (N slots, pool P)' once registered; SIGTERM "
      "or SIGINT stops it cleanly.",
      "cairn-agent");
  command_line::Configure(app);
  CLI::Option* config_file =
      app.add_option("--config",
                     "YAML with keys master, id, slots, resource_pool, work_root, "
                     "kill_grace_seconds, heartbeat_interval_seconds, agent_token_file, "
                     "master_cert_file, service_address, notebook_command, sshd_command, "
                     "tensorboard_command, env_cache_dir, pip_index_url, pip_find_links, "
                     "determined_package_dir, pip_no_index, runtime, allow_images_on_host, "
                     "image_dir, default_image, "
                     "artificial_gpus, gpu_device_dir; read first, so flags override it")
          ->type_name("FILE");
  // Kept as text and applied after the file, by the same rules as its keys.
  std::vector<CLI::Option*> flag_options;
  for (const Flag& flag : Flags()) {
    flag_options.push_back(app.add_option(flag.name, flag.help)->type_name(flag.value_name));
  }
  CLI::Option* allow_images =
      app.add_flag("--allow-images-on-host")
          ->description(
              "process runtime: run a task that names an image on this host anyway (a "
              "warning in its log); without it such a task fails");
  app.add_option("--trace-file", result.config.trace_file,
                 "append '<allocation id> <unix micros>' per order received")
      ->type_name("FILE");
  command_line::AddLogLevelOption(app, result.log_level);

  if (std::optional<command_line::Stop> stop = command_line::Parse(app, args)) {
    if (stop->kind == command_line::Stop::Kind::kUsageError)
      return Status::InvalidArgument(stop->text);
    result.exit_text = stop->text;
    return result;
  }
  if (config_file->count() > 0) {
    const std::string path = config_file->as<std::string>();
    CAIRN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    Status applied = ApplyConfigYaml(text, path, result.config);
    if (!applied.ok()) return Status::InvalidArgument(applied.message());
  }
  for (size_t i = 0; i < Flags().size(); ++i) {
    if (flag_options[i]->count() == 0) continue;
    CAIRN_RETURN_IF_ERROR(ApplySetting(Flags()[i].setting, Flags()[i].name,
                                       flag_options[i]->as<std::string>(), result.config));
  }
  if (allow_images->count() > 0) result.config.allow_images_on_host = true;
  CAIRN_RETURN_IF_ERROR(ValidateConfig(result.config));
  return result;
}

std::string EffectiveWorkRoot(const AgentConfig& config) {
  if (!config.work_root.empty()) return config.work_root;
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  return base + "/cairn-agent-" + config.agent_id;
}

std::string EffectiveEnvCacheDir(const AgentConfig& config) {
  if (!config.env_cache_dir.empty()) return config.env_cache_dir;
  return EffectiveWorkRoot(config) + "/env-cache";
}

}  // namespace cairn::agent
