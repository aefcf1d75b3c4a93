// The container runtime of an agent started with `runtime: container` (PROTOCOL.md §5b): images
// unpacked from OCI archives (or pulled with skopeo) into a cache, each task's root an overlay of
// its image, its CPU and memory limits in a cgroup (v1) the agent owns, and the task run by runc
// under tini. Debian's runc, umoci and tini-static do the work; the agent must run as root.
//
// Thread-safe: several launchers prepare containers at once (images are unpacked one at a time).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/container_config.h"
#include "agent/process_runner.h"
#include "base/status.h"

namespace cairn::agent {

struct ContainerRuntimeOptions {
  std::string agent_id;
  // The agent's own directory: the image cache, each task's bundle and overlay, runc's state.
  std::string state_dir;
  // Where image names are looked up first, as <image_dir>/<name>.tar; "" = pull every name.
  std::string image_dir;
  // The PATH the tools are searched on.
  std::string path_env;
};

// An image ready to run: its unpacked root and what it brings.
struct UnpackedImage {
  std::string rootfs;
  ImageDefaults defaults;
  std::string note;  // for the task's log: where the image came from
};

struct RegistryCredentials {
  std::string username;
  std::string password;  // a secret: written only to a 0600 file skopeo reads
  std::string server_address;
};

// What a task's container needs beyond its process: limits (0 = none), mounts, devices.
struct ContainerLimits {
  int cpus = 0;
  int64_t memory_mb = 0;
  int64_t shm_size_bytes = 0;  // /dev/shm; 0 = ContainerPlan's default
};

class ContainerRuntime {
 public:
  // FailedPrecondition naming what is missing: root, runc, tini-static, umoci.
  static Result<std::unique_ptr<ContainerRuntime>> Create(ContainerRuntimeOptions options);

  // The unpacked image `reference` names (ParseImageReference), from the cache unless
  // `force_pull`. An archive is unpacked once per (path, size, modification time); a name not
  // in the image dir is pulled with skopeo, with `credentials` when a username is given.
  Result<UnpackedImage> Image(const std::string& reference, const RegistryCredentials& credentials,
                              bool force_pull);

  // Sets up `key`'s container: its overlay root on `image`, its cgroup with `limits`, the bundle;
  // returns what the ProcessRunner starts (runc run, in the process's work dir), with
  // `process.after_exit` ending the container. `mounts` and `devices` as in ContainerPlan. On an
  // error nothing is left behind.
  Result<ProcessSpec> Prepare(const std::string& key, const UnpackedImage& image,
                              const ProcessSpec& process, std::vector<ContainerMount> mounts,
                              std::vector<ContainerDevice> devices, const ContainerLimits& limits);

  // Why `key`'s container ended, when the runtime knows better than its exit code ("out of
  // memory: ..."); "" otherwise. Taken once, after the process's after_exit ran.
  std::string TakeExitNote(const std::string& key);

 private:
  explicit ContainerRuntime(ContainerRuntimeOptions options, std::string runc, std::string tini,
                            std::string umoci);
  // Called with images_mutex_ held. `layout_source` "" = only what the cache has.
  Result<UnpackedImage> Unpack(const std::string& layout_source, bool is_archive,
                               const std::string& tag, const std::string& cache_key,
                               const std::string& what, bool force);
  // Ends the container and releases its overlay, cgroup and bundle; returns the exit note.
  std::string Release(const std::string& key, const std::string& container_id,
                      const std::string& bundle, int64_t memory_mb,
                      const std::vector<std::string>& cgroup_dirs, int oom_eventfd);

  const ContainerRuntimeOptions options_;
  const std::string runc_;
  const std::string tini_;
  const std::string umoci_;
  std::mutex images_mutex_;  // one unpack or pull at a time
  std::mutex notes_mutex_;
  std::map<std::string, std::string> exit_notes_;  // guarded by notes_mutex_
};

// The character device behind `path` (a GPU's /dev/nvidiaN, or a test's fake one); NotFound when
// there is none, InvalidArgument when it is not a character device.
Result<ContainerDevice> CharacterDevice(const std::string& path);

}  // namespace cairn::agent
