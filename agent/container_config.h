// What a container agent decides before it runs a task (PROTOCOL.md §5b): which image a reference
// names, and the OCI runtime configuration (config.json) runc runs the task with. Pure: no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::agent {

// environment.image as the agent resolves it.
struct ImageReference {
  enum class Kind {
    kOciArchive,  // "oci-archive:/abs/path.tar[:tag]": an OCI image layout in a tar file
    kName,        // "name[:tag]": <image dir>/<name>.tar when there, else pulled from its registry
  };
  Kind kind = Kind::kName;
  std::string path;  // kOciArchive: the archive
  std::string tag;   // kOciArchive: "" = the archive's only tag
  std::string name;  // kName: as written ("busybox", "registry.local:5000/team/image:1")
};

// InvalidArgument, naming the reference, for anything else: a relative archive path, a name with
// characters outside [A-Za-z0-9._/:@-], an empty one, or one that climbs with "..".
Result<ImageReference> ParseImageReference(const std::string& text);

// The registry a name is pulled from: its first component when that has a '.' or ':' or is
// "localhost", else docker.io, as Docker reads names.
std::string RegistryOf(const std::string& name);

// What an unpacked image brings to the task: its environment (the image config's Env).
struct ImageDefaults {
  std::vector<std::string> env;  // "KEY=VALUE"
};

// Reads the defaults out of the runtime configuration umoci writes beside an unpacked image's
// rootfs (its process.env). InvalidArgument when that is not such a document.
Result<ImageDefaults> ImageDefaultsOf(const nlohmann::json& umoci_config);

struct ContainerMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
};

struct ContainerDevice {
  std::string path;  // the same path inside the container ("/dev/nvidia0")
  int64_t major = 0;
  int64_t minor = 0;
};

struct ContainerPlan {
  std::string rootfs;             // the task's own root: the image under a writable overlay
  std::vector<std::string> argv;  // the task's, run under `init_path`
  std::vector<std::string> env;   // the complete environment, "KEY=VALUE"
  std::string work_dir;           // the working directory, the same path as on the host
  std::string init_path;          // inside the container: tini, which forwards signals
  std::string hostname;
  std::vector<ContainerMount> mounts;    // bind mounts, in order
  std::vector<ContainerDevice> devices;  // character devices the task may use (its GPUs)
  std::string cgroups_path;              // relative to runc's own cgroups
  int64_t shm_size_bytes = 64 << 20;     // /dev/shm (resources.shm_size)
  uint32_t uid = 0;                      // the task's process (its linked agent user)
  uint32_t gid = 0;
};

// The OCI runtime configuration: the host's network (services and the master stay reachable at
// the addresses the agent knows), its own PID, IPC, UTS and mount namespaces, Docker's default
// capabilities, /proc, /dev, /sys (read-only), the plan's mounts and devices; every other device
// is refused by the device cgroup.
nlohmann::json OciConfig(const ContainerPlan& plan);

}  // namespace cairn::agent
