#include "agent/container_runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/task_plan.h"
#include "base/encoding.h"
#include "base/log.h"

namespace cairn::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ErrnoText(int error) { return std::strerror(error); }

// Runs a tool to its end and returns what it printed (stdout and stderr together); an error that
// quotes the end of that output when it fails.
Result<std::string> RunTool(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::IOError("pipe: " + ErrnoText(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  char* no_env[] = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nullptr};
  pid_t pid = -1;
  int error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), no_env);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (error != 0) {
    close(pipe_fds[0]);
    return Status::IOError("cannot run " + argv[0] + ": " + ErrnoText(error));
  }
  std::string output;
  char buffer[8192];
  while (true) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (output.size() > 2000) output = "..." + output.substr(output.size() - 2000);
  fs::path tool = argv[0];
  return Status::IOError(tool.filename().string() + " " + (argv.size() > 1 ? argv[1] : "") +
                         " failed: " + (output.empty() ? "no output" : output));
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IOError("cannot write " + path);
  return Status::Ok();
}

std::string SafeName(const std::string& text) {
  std::string name = text;
  for (char& c : name) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return name;
}

// The cgroup v1 hierarchy of `controller` as this process sees it: its own cgroup directory in
// that hierarchy, or "" when the controller is not mounted as v1.
std::string OwnCgroupDir(const std::string& controller) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, options, rest;
  std::string found;
  while (mounts >> device >> mount_point >> type >> options && std::getline(mounts, rest)) {
    if (type != "cgroup") continue;
    std::stringstream split(options);
    for (std::string option; std::getline(split, option, ',');) {
      if (option == controller) found = mount_point;
    }
  }
  if (found.empty()) return "";
  std::ifstream own("/proc/self/cgroup");
  for (std::string line; std::getline(own, line);) {
    // "4:memory:/process_api/..." or "1:cpu,cpuacct:/"
    size_t first = line.find(':');
    size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::stringstream split(line.substr(first + 1, second - first - 1));
    for (std::string name; std::getline(split, name, ',');) {
      if (name == controller) return found + line.substr(second + 1);
    }
  }
  return found;
}

// Undoes what Prepare set up when it does not get as far as handing the process over.
struct PrepareUndo {
  std::string rootfs_mount;
  std::vector<std::string> cgroup_dirs;
  std::string bundle;
  int oom_eventfd = -1;
  bool armed = true;
  ~PrepareUndo() {
    if (!armed) return;
    if (!rootfs_mount.empty()) umount2(rootfs_mount.c_str(), MNT_DETACH);
    for (const auto& dir : cgroup_dirs) rmdir(dir.c_str());
    if (oom_eventfd >= 0) close(oom_eventfd);
    std::error_code ignored;
    if (!bundle.empty()) fs::remove_all(bundle, ignored);
  }
};

}  // namespace

Result<ContainerDevice> CharacterDevice(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return Status::NotFound("device " + path + " does not exist: " + ErrnoText(errno));
  }
  if (!S_ISCHR(info.st_mode)) {
    return Status::InvalidArgument(path + " is not a character device");
  }
  return ContainerDevice{path, static_cast<int64_t>(major(info.st_rdev)),
                         static_cast<int64_t>(minor(info.st_rdev))};
}

Result<std::unique_ptr<ContainerRuntime>> ContainerRuntime::Create(
    ContainerRuntimeOptions options) {
  if (geteuid() != 0) {
    return Status::FailedPrecondition(
        "runtime: container needs the agent to run as root (runc, overlay mounts and cgroups)");
  }
  std::string tools[3];
  const char* names[3] = {"runc", "tini-static", "umoci"};
  const char* packages[3] = {"runc", "tini", "umoci"};
  for (int i = 0; i < 3; ++i) {
    tools[i] = FindOnPath(names[i], options.path_env);
    if (tools[i].empty()) {
      return Status::FailedPrecondition(std::string("runtime: container needs ") + names[i] +
                                        " on the PATH (Debian's " + packages[i] + ")");
    }
  }
  std::error_code error;
  for (const char* sub : {"images", "containers", "runc"}) {
    fs::create_directories(fs::path(options.state_dir) / sub, error);
    if (error) {
      return Status::IOError("cannot create " + options.state_dir + "/" + sub + ": " +
                             error.message());
    }
  }
  // Images replaced by a forced pull while tasks still ran on them.
  for (const auto& entry : fs::directory_iterator(fs::path(options.state_dir) / "images", error)) {
    if (entry.path().filename().string().starts_with(".")) fs::remove_all(entry.path(), error);
  }
  return std::unique_ptr<ContainerRuntime>(
      new ContainerRuntime(std::move(options), tools[0], tools[1], tools[2]));
}

ContainerRuntime::ContainerRuntime(ContainerRuntimeOptions options, std::string runc,
                                   std::string tini, std::string umoci)
    : options_(std::move(options)),
      runc_(std::move(runc)),
      tini_(std::move(tini)),
      umoci_(std::move(umoci)) {}

Result<UnpackedImage> ContainerRuntime::Image(const std::string& reference,
                                              const RegistryCredentials& credentials,
                                              bool force_pull) {
  CAIRN_ASSIGN_OR_RETURN(ImageReference parsed, ParseImageReference(reference));
  std::lock_guard lock(images_mutex_);
  std::string archive = parsed.path;
  std::string tag = parsed.tag;
  if (parsed.kind == ImageReference::Kind::kName && !options_.image_dir.empty()) {
    std::string candidate = options_.image_dir + "/" + parsed.name + ".tar";
    if (fs::is_regular_file(candidate)) archive = candidate;
  }
  if (!archive.empty()) {
    struct stat info;
    if (stat(archive.c_str(), &info) != 0) {
      return Status::NotFound("image " + reference + ": cannot read " + archive + ": " +
                              ErrnoText(errno));
    }
    CAIRN_ASSIGN_OR_RETURN(std::string key,
                           Sha256Hex(archive + "\n" + std::to_string(info.st_size) + "\n" +
                                     std::to_string(info.st_mtim.tv_sec) + "." +
                                     std::to_string(info.st_mtim.tv_nsec) + "\n" + tag));
    return Unpack(archive, true, tag, key, "image " + reference + " from " + archive, false);
  }

  // A registry's: skopeo copies it into a layout, credentials from a file only it reads.
  std::string skopeo = FindOnPath("skopeo", options_.path_env);
  if (skopeo.empty()) {
    return Status::FailedPrecondition(
        "image " + reference + " is not in this agent's --image-dir" +
        (options_.image_dir.empty() ? std::string(" (it has none)") : "") +
        ", and pulling it needs skopeo (Debian's skopeo)");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string key, Sha256Hex("pull\n" + parsed.name));
  const fs::path cache = fs::path(options_.state_dir) / "images" / key;
  if (!force_pull && fs::exists(cache / "rootfs")) {
    return Unpack("", false, "", key, "image " + reference, false);
  }
  static std::atomic<uint64_t> counter{0};
  const fs::path pull_dir =
      fs::path(options_.state_dir) / "images" /
      (".pull-" + key + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::error_code error;
  fs::create_directories(pull_dir, error);
  if (error) return Status::IOError("cannot create " + pull_dir.string() + ": " + error.message());
  struct RemovePullDir {
    fs::path dir;
    ~RemovePullDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_pull_dir{pull_dir};
  std::vector<std::string> argv = {skopeo, "copy"};
  if (!credentials.username.empty()) {
    std::string server =
        credentials.server_address.empty() ? RegistryOf(parsed.name) : credentials.server_address;
    json auth = {
        {"auths",
         {{server, {{"auth", Base64Encode(credentials.username + ":" + credentials.password)}}}}}};
    const std::string auth_file = (pull_dir / "auth.json").string();
    int fd = open(auth_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IOError("cannot write " + auth_file + ": " + ErrnoText(errno));
    std::string text = auth.dump();
    bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (!written) return Status::IOError("cannot write " + auth_file);
    argv.insert(argv.end(), {"--src-authfile", auth_file});
  }
  argv.insert(argv.end(),
              {"docker://" + parsed.name, "oci:" + (pull_dir / "layout").string() + ":pulled"});
  auto pulled = RunTool(argv);
  if (!pulled.ok())
    return Status::Unavailable("image " + reference + ": " + pulled.status().message());
  return Unpack((pull_dir / "layout").string(), false, "pulled", key,
                "image " + reference + " pulled from " + RegistryOf(parsed.name), force_pull);
}

Result<UnpackedImage> ContainerRuntime::Unpack(const std::string& layout_source, bool is_archive,
                                               const std::string& tag, const std::string& cache_key,
                                               const std::string& what, bool force) {
  const fs::path images = fs::path(options_.state_dir) / "images";
  const fs::path cache = images / cache_key;
  auto load = [&](const std::string& note) -> Result<UnpackedImage> {
    std::ifstream in(cache / "config.json");
    json config = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded()) {
      return Status::Corruption("the unpacked image in " + cache.string() + " has no config.json");
    }
    UnpackedImage image;
    image.rootfs = (cache / "rootfs").string();
    CAIRN_ASSIGN_OR_RETURN(image.defaults, ImageDefaultsOf(config));
    image.note = note;
    return image;
  };
  std::error_code error;
  if (!force && fs::exists(cache / "rootfs")) return load(what + " (cached on this agent)");
  if (layout_source.empty()) return Status::NotFound(what + " is not cached");

  static std::atomic<uint64_t> counter{0};
  const fs::path work = images / (".unpack-" + cache_key + "-" + std::to_string(getpid()) + "-" +
                                  std::to_string(counter++));
  struct RemoveWork {
    fs::path dir;
    ~RemoveWork() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_work{work};
  fs::create_directories(work, error);
  if (error) return Status::IOError("cannot create " + work.string() + ": " + error.message());
  std::string layout = layout_source;
  if (is_archive) {
    layout = (work / "layout").string();
    fs::create_directories(layout, error);
    auto untar =
        RunTool({FindOnPath("tar", options_.path_env), "-xf", layout_source, "-C", layout});
    if (!untar.ok()) return Status::InvalidArgument(what + ": " + untar.status().message());
  }
  std::string chosen = tag;
  if (chosen.empty()) {
    auto listed = RunTool({umoci_, "ls", "--layout", layout});
    if (!listed.ok()) {
      return Status::InvalidArgument(what +
                                     " is not an OCI image archive: " + listed.status().message());
    }
    std::vector<std::string> tags;
    std::stringstream lines(*listed);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) tags.push_back(line);
    }
    if (tags.size() != 1) {
      std::string all;
      for (const auto& t : tags) all += (all.empty() ? "" : ", ") + t;
      return Status::InvalidArgument(what + " holds " + std::to_string(tags.size()) + " tags (" +
                                     all + "); name one as oci-archive:PATH:TAG");
    }
    chosen = tags[0];
  }
  auto unpacked =
      RunTool({umoci_, "unpack", "--image", layout + ":" + chosen, (work / "bundle").string()});
  if (!unpacked.ok()) return Status::InvalidArgument(what + ": " + unpacked.status().message());
  if (fs::exists(cache)) {
    // Tasks may still run on the old one: it is set aside, and removed when the agent restarts.
    fs::rename(cache, images / (".old-" + cache_key + "-" + std::to_string(counter++)), error);
    if (error) return Status::IOError("cannot replace " + cache.string() + ": " + error.message());
  }
  fs::rename(work / "bundle", cache, error);
  if (error) return Status::IOError("cannot store " + cache.string() + ": " + error.message());
  return load(what + " (unpacked on this agent)");
}

Result<ProcessSpec> ContainerRuntime::Prepare(const std::string& key, const UnpackedImage& image,
                                              const ProcessSpec& process,
                                              std::vector<ContainerMount> mounts,
                                              std::vector<ContainerDevice> devices,
                                              const ContainerLimits& limits) {
  const std::string name = SafeName(key);
  const std::string container_id = "cairn-" + SafeName(options_.agent_id) + "-" + name;
  PrepareUndo undo;
  const fs::path bundle = fs::path(options_.state_dir) / "containers" / container_id;
  std::error_code error;
  if (fs::exists(bundle)) {
    // Left by an agent that died with the task: end that container first.
    RunTool({runc_, "--root", options_.state_dir + "/runc", "delete", "--force", container_id})
        .status()
        .ok();
    umount2((bundle / "rootfs").string().c_str(), MNT_DETACH);
    fs::remove_all(bundle, error);
  }
  undo.bundle = bundle.string();
  for (const char* sub : {"upper", "overlay-work", "rootfs"}) {
    fs::create_directories(bundle / sub, error);
    if (error) return Status::IOError("cannot create " + bundle.string() + ": " + error.message());
  }
  const std::string rootfs = (bundle / "rootfs").string();
  const std::string overlay_options = "lowerdir=" + image.rootfs +
                                      ",upperdir=" + (bundle / "upper").string() +
                                      ",workdir=" + (bundle / "overlay-work").string();
  if (mount("overlay", rootfs.c_str(), "overlay", 0, overlay_options.c_str()) != 0) {
    return Status::IOError("cannot mount the task's overlay root: " + ErrnoText(errno));
  }
  undo.rootfs_mount = rootfs;

  // Limits live in a cgroup of the agent's, one level above runc's, so that an OOM kill is
  // still known once runc has removed its own.
  const std::string group = "cairn-" + SafeName(options_.agent_id) + "/" + name;
  std::string cgroups_path = group;
  if (limits.memory_mb > 0 || limits.cpus > 0) {
    cgroups_path = group + "/task";
    auto make = [&](const char* controller) -> Result<std::string> {
      std::string own = OwnCgroupDir(controller);
      if (own.empty()) {
        return Status::FailedPrecondition(
            std::string("the task's limits need the cgroup v1 ") + controller +
            " controller, which this host does not mount (cgroup v2 is not supported yet)");
      }
      std::string dir = own + "/" + group;
      fs::create_directories(dir, error);
      if (error) return Status::IOError("cannot create cgroup " + dir + ": " + error.message());
      undo.cgroup_dirs.push_back(dir);
      return dir;
    };
    if (limits.memory_mb > 0) {
      CAIRN_ASSIGN_OR_RETURN(std::string dir, make("memory"));
      const std::string bytes = std::to_string(limits.memory_mb * 1024 * 1024);
      CAIRN_RETURN_IF_ERROR(WriteText(dir + "/memory.limit_in_bytes", bytes));
      // Swap counts too, where the kernel accounts it, so the limit cannot be dodged by swapping.
      if (fs::exists(dir + "/memory.memsw.limit_in_bytes")) {
        CAIRN_RETURN_IF_ERROR(WriteText(dir + "/memory.memsw.limit_in_bytes", bytes));
      }
      int control = open((dir + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
      undo.oom_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (control < 0 || undo.oom_eventfd < 0) {
        if (control >= 0) close(control);
        return Status::IOError("cannot watch " + dir + " for OOM: " + ErrnoText(errno));
      }
      Status registered =
          WriteText(dir + "/cgroup.event_control",
                    std::to_string(undo.oom_eventfd) + " " + std::to_string(control));
      close(control);
      CAIRN_RETURN_IF_ERROR(registered);
    }
    if (limits.cpus > 0) {
      CAIRN_ASSIGN_OR_RETURN(std::string dir, make("cpu"));
      CAIRN_RETURN_IF_ERROR(WriteText(dir + "/cpu.cfs_period_us", "100000"));
      CAIRN_RETURN_IF_ERROR(
          WriteText(dir + "/cpu.cfs_quota_us", std::to_string(int64_t{limits.cpus} * 100000)));
    }
  }

  ContainerPlan plan;
  plan.rootfs = rootfs;
  plan.argv = process.argv;
  plan.env = process.env;
  plan.work_dir = process.work_dir;
  if (process.run_as) {
    plan.uid = process.run_as->uid;
    plan.gid = process.run_as->gid;
  }
  plan.init_path = "/.cairn-init";
  plan.hostname = name.substr(0, 63);
  plan.mounts.push_back({tini_, plan.init_path, true});
  // The host's network: its name resolution with it.
  for (const char* file : {"/etc/hosts", "/etc/resolv.conf"}) {
    if (fs::is_regular_file(file)) plan.mounts.push_back({file, file, true});
  }
  plan.mounts.insert(plan.mounts.end(), mounts.begin(), mounts.end());
  plan.devices = std::move(devices);
  plan.cgroups_path = cgroups_path;
  if (limits.shm_size_bytes > 0) plan.shm_size_bytes = limits.shm_size_bytes;
  CAIRN_RETURN_IF_ERROR(WriteText((bundle / "config.json").string(), OciConfig(plan).dump(1)));

  ProcessSpec runc;
  runc.argv = {runc_,           "--root",    options_.state_dir + "/runc", "run", "--bundle",
               bundle.string(), container_id};
  runc.env = {"PATH=" + options_.path_env};
  runc.work_dir = process.work_dir;
  runc.preamble = process.preamble;
  runc.after_exit = [this, key, container_id, bundle = bundle.string(),
                     memory_mb = limits.memory_mb, cgroup_dirs = undo.cgroup_dirs,
                     oom_eventfd = undo.oom_eventfd] {
    std::string note = Release(key, container_id, bundle, memory_mb, cgroup_dirs, oom_eventfd);
    std::lock_guard lock(notes_mutex_);
    if (!note.empty()) exit_notes_[key] = note;
  };
  undo.armed = false;
  return runc;
}

std::string ContainerRuntime::Release(const std::string& key, const std::string& container_id,
                                      const std::string& bundle, int64_t memory_mb,
                                      const std::vector<std::string>& cgroup_dirs,
                                      int oom_eventfd) {
  // runc exits when the container's init does, but processes the task moved out of init's
  // process group, or a container whose runc was killed, still run: delete --force ends them all.
  auto deleted =
      RunTool({runc_, "--root", options_.state_dir + "/runc", "delete", "--force", container_id});
  if (!deleted.ok() && deleted.status().message().find("does not exist") == std::string::npos) {
    log::Warn("agent", "container {} of {}: {}", container_id, key, deleted.status().message());
  }
  std::string note;
  if (oom_eventfd >= 0) {
    uint64_t ooms = 0;
    if (read(oom_eventfd, &ooms, sizeof ooms) == sizeof ooms && ooms > 0) {
      note = "out of memory: the task reached its memory limit of " + std::to_string(memory_mb) +
             " MB and was killed";
    }
    close(oom_eventfd);
  }
  for (const auto& dir : cgroup_dirs) {
    rmdir((dir + "/task").c_str());
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT) {
      log::Warn("agent", "cannot remove cgroup {}: {}", dir, ErrnoText(errno));
    }
  }
  const std::string rootfs = bundle + "/rootfs";
  if (umount2(rootfs.c_str(), MNT_DETACH) != 0 && errno != EINVAL) {
    log::Warn("agent", "cannot unmount {}: {}", rootfs, ErrnoText(errno));
  }
  std::error_code error;
  fs::remove_all(bundle, error);
  return note;
}

std::string ContainerRuntime::TakeExitNote(const std::string& key) {
  std::lock_guard lock(notes_mutex_);
  auto it = exit_notes_.find(key);
  if (it == exit_notes_.end()) return "";
  std::string note = std::move(it->second);
  exit_notes_.erase(it);
  return note;
}

}  // namespace cairn::agent
