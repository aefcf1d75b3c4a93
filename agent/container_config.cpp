#include "agent/container_config.h"

#include <algorithm>

namespace cairn::agent {
namespace {

using nlohmann::json;

constexpr const char* kOciArchivePrefix = "oci-archive:";

bool IsNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '/' || c == ':' || c == '@' || c == '-';
}

bool Climbs(const std::string& path) {
  return path == ".." || path.starts_with("../") || path.find("/../") != std::string::npos ||
         path.ends_with("/..");
}

json Mount(const std::string& destination, const std::string& type, const std::string& source,
           const std::vector<std::string>& options) {
  return {{"destination", destination}, {"type", type}, {"source", source}, {"options", options}};
}

}  // namespace

Result<ImageReference> ParseImageReference(const std::string& text) {
  ImageReference reference;
  if (text.starts_with(kOciArchivePrefix)) {
    reference.kind = ImageReference::Kind::kOciArchive;
    std::string rest = text.substr(std::string(kOciArchivePrefix).size());
    // skopeo's form: the tag follows the path's last ':' when that is after the last '/'.
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos && colon > rest.rfind('/')) {
      reference.tag = rest.substr(colon + 1);
      rest.resize(colon);
    }
    reference.path = rest;
    if (reference.path.empty() || reference.path[0] != '/' || Climbs(reference.path)) {
      return Status::InvalidArgument("image '" + text +
                                     "': an oci-archive needs an absolute path without '..'");
    }
    for (char c : reference.tag) {
      if (!IsNameCharacter(c) || c == '/' || c == ':') {
        return Status::InvalidArgument("image '" + text +
                                       "': the tag may hold only letters, "
                                       "digits, '.', '_', '@' and '-'");
      }
    }
    return reference;
  }
  if (text.empty() || text.size() > 1024 || text[0] == '/' || text[0] == '-' || text[0] == '.' ||
      Climbs(text)) {
    return Status::InvalidArgument(
        "image '" + text +
        "': expected oci-archive:/path/image.tar[:tag] or a name such as team/image:1");
  }
  for (char c : text) {
    if (!IsNameCharacter(c)) {
      return Status::InvalidArgument("image '" + text +
                                     "': a name may hold only letters, digits and . _ / : @ -");
    }
  }
  reference.name = text;
  return reference;
}

std::string RegistryOf(const std::string& name) {
  size_t slash = name.find('/');
  if (slash == std::string::npos) return "docker.io";
  std::string first = name.substr(0, slash);
  if (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
      first == "localhost") {
    return first;
  }
  return "docker.io";
}

Result<ImageDefaults> ImageDefaultsOf(const json& umoci_config) {
  ImageDefaults defaults;
  const json* env = nullptr;
  if (umoci_config.is_object() && umoci_config.contains("process") &&
      umoci_config["process"].is_object()) {
    auto it = umoci_config["process"].find("env");
    if (it != umoci_config["process"].end()) env = &*it;
  }
  if (env == nullptr) return defaults;
  if (!env->is_array()) return Status::InvalidArgument("the image's process.env is not a list");
  for (const auto& entry : *env) {
    if (!entry.is_string())
      return Status::InvalidArgument("the image's process.env holds a non-string");
    defaults.env.push_back(entry.get<std::string>());
  }
  return defaults;
}

json OciConfig(const ContainerPlan& plan) {
  // Docker's default set: enough for package managers and servers, nothing that reaches the host.
  const std::vector<std::string> capabilities = {
      "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
      "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
      "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
      "CAP_KILL",    "CAP_AUDIT_WRITE"};
  std::vector<std::string> args = {plan.init_path, "-g", "--"};
  args.insert(args.end(), plan.argv.begin(), plan.argv.end());
  // tini's own warnings are not the task's output: under load runc forwards it signals after the
  // task ended, and "Child was dead when forwarding signal" landed among the task's lines (a
  // container test flaked on it). A task that sets TINI_VERBOSITY keeps its own.
  std::vector<std::string> env = plan.env;
  if (std::none_of(env.begin(), env.end(), [](const std::string& entry) {
        return entry.rfind("TINI_VERBOSITY=", 0) == 0;
      })) {
    env.push_back("TINI_VERBOSITY=0");
  }

  json mounts = json::array({
      Mount("/proc", "proc", "proc", {}),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
      Mount("/dev/shm", "tmpfs", "shm",
            {"nosuid", "noexec", "nodev", "mode=1777",
             "size=" + std::to_string(plan.shm_size_bytes / 1024) + "k"}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
  });
  for (const auto& mount : plan.mounts) {
    mounts.push_back(Mount(mount.container_path, "bind", mount.host_path,
                           {"rbind", "rprivate", mount.read_only ? "ro" : "rw"}));
  }

  json devices = json::array();
  // Everything is refused, then the plan's devices allowed; runc adds its default devices
  // (null, zero, full, random, urandom, tty, ptmx) on its own.
  json device_rules = json::array({{{"allow", false}, {"access", "rwm"}}});
  for (const auto& device : plan.devices) {
    devices.push_back({{"path", device.path},
                       {"type", "c"},
                       {"major", device.major},
                       {"minor", device.minor},
                       {"fileMode", 0666},
                       {"uid", 0},
                       {"gid", 0}});
    device_rules.push_back({{"allow", true},
                            {"type", "c"},
                            {"major", device.major},
                            {"minor", device.minor},
                            {"access", "rwm"}});
  }

  return {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", plan.uid}, {"gid", plan.gid}}},
        {"args", args},
        {"env", env},
        {"cwd", plan.work_dir},
        {"capabilities",
         {{"bounding", capabilities}, {"effective", capabilities}, {"permitted", capabilities}}},
        {"noNewPrivileges", false}}},
      {"root", {{"path", plan.rootfs}, {"readonly", false}}},
      {"hostname", plan.hostname},
      {"mounts", mounts},
      {"linux",
       {{"namespaces",
         json::array(
             {{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}})},
        {"devices", devices},
        {"resources", {{"devices", device_rules}}},
        {"cgroupsPath", plan.cgroups_path},
        {"maskedPaths",
         {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
          "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
          "/proc/scsi"}},
        {"readonlyPaths",
         {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}}},
  };
}

}  // namespace cairn::agent
