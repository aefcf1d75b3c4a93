"""A trial's prepared environment: PEDL's custom trial environment on a Cairn agent.

An experiment's `environment.runtime_commands` run in order, then its local packages (uploaded with
the experiment, in the context's `.cairn-packages/`) and its `environment.runtime_packages` are
pip-installed, into a Python venv made with --system-site-packages (so everything the agent's
Python has stays importable). The venv is built once per hash of what makes it (image, slot type,
interpreter, commands, packages, local packages' digests) in the agent's cache directory
(CAIRN_ENV_CACHE) and reused by every later trial with the same hash; an exclusive file lock per
hash makes two trials starting together on one agent build it once. A build's output is the
trial's output (so it is in the task's logs); a build that fails is removed and ends the trial with
its error; a finished build is marked by `cairn-ready.json`, written last, so a build cut short is
never reused.
"""

import collections
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from cairn_harness import runner
from cairn_harness.master_client import HarnessError

PACKAGES_DIR = ".cairn-packages"
READY_FILE = "cairn-ready.json"
CACHE_ENV = "CAIRN_ENV_CACHE"
SLOT_TYPE_ENV = "CAIRN_SLOT_TYPE"
DEVICE_TYPES = ("cpu", "cuda", "rocm")
# How many of a failed step's last output lines its error repeats.
ERROR_TAIL_LINES = 8


class Plan:
    """What a prepared environment is made of, and its hash."""

    def __init__(self, image, device, commands, packages, local_packages):
        self.image = image
        self.device = device
        self.commands = commands
        self.packages = packages
        self.local_packages = local_packages  # [(path, sha256 hex)], sorted by file name
        recipe = {
            "image": image,
            "device": device,
            "python": [os.path.realpath(sys.executable), sys.version],
            "commands": commands,
            "packages": packages,
            "local_packages": [[os.path.basename(path), digest]
                               for path, digest in local_packages],
        }
        text = json.dumps(recipe, sort_keys=True, separators=(",", ":"))
        self.digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def describe(self):
        return (f"{len(self.commands)} runtime commands, {len(self.packages)} runtime packages, "
                f"{len(self.local_packages)} local packages")


def slot_type():
    """The variant of the environment's lists that applies here: the agent's slot type."""
    device = os.environ.get(SLOT_TYPE_ENV, "cpu")
    if device not in DEVICE_TYPES:
        raise HarnessError(f"{SLOT_TYPE_ENV}={device!r} is none of {', '.join(DEVICE_TYPES)}")
    return device


def variant(lists, device, what):
    """`lists` is {cpu, cuda, rocm} (the master's form) or absent; its `device` list."""
    if lists is None:
        return []
    if not isinstance(lists, dict):
        raise HarnessError(f"{what} is not a map of device types to lists: {lists!r}")
    chosen = lists.get(device) or []
    if not isinstance(chosen, list) or not all(isinstance(item, str) for item in chosen):
        raise HarnessError(f"{what}.{device} is not a list of strings: {chosen!r}")
    return chosen


def image_for(image, device):
    if isinstance(image, dict):
        return image.get(device) or (image.get("gpu") if device == "cuda" else None)
    return image


def plan_for(trial_doc, workdir):
    """The trial's prepared environment, or None when it asks for none."""
    environment = trial_doc.get("environment") or {}
    if not isinstance(environment, dict):
        raise HarnessError(f"the trial's environment is not a map: {environment!r}")
    device = slot_type()
    commands = variant(environment.get("runtimeCommands"), device, "runtimeCommands")
    packages = variant(environment.get("runtimePackages"), device, "runtimePackages")
    local_packages = []
    packages_dir = os.path.join(workdir, PACKAGES_DIR)
    if os.path.isdir(packages_dir):
        for name in sorted(os.listdir(packages_dir)):
            path = os.path.join(packages_dir, name)
            if os.path.isfile(path):
                local_packages.append((path, _sha256_of(path)))
    if not commands and not packages and not local_packages:
        return None
    return Plan(image_for(environment.get("image"), device), device, commands, packages,
                local_packages)


def ensure(plan, cache_dir):
    """The directory of the plan's environment in `cache_dir`, built there unless it already was."""
    if not cache_dir:
        raise HarnessError(f"the experiment asks for a prepared environment but {CACHE_ENV} is "
                           "not set (the agent sets it: --env-cache-dir)")
    started = time.monotonic()
    env_dir = os.path.join(os.path.abspath(cache_dir), plan.digest)
    try:
        os.makedirs(cache_dir, exist_ok=True)
        lock = open(env_dir + ".lock", "a", encoding="utf-8")
    except OSError as error:
        raise HarnessError(f"cannot use the environment cache {cache_dir}: {error}") from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            runner.log(f"waiting for another trial building prepared environment {plan.digest}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        ready = _read_ready(env_dir)
        if ready is None:
            _build(plan, env_dir)
            runner.log(f"built prepared environment {plan.digest} in "
                       f"{time.monotonic() - started:.2f}s")
            return env_dir
    # The ready file's time is the environment's last use, which an operator's eviction reads.
    os.utime(os.path.join(env_dir, READY_FILE))
    runner.log(f"reusing prepared environment {plan.digest} built {ready.get('built')} "
               f"(the build took {ready.get('seconds')}s; ready now in "
               f"{(time.monotonic() - started) * 1000:.1f} ms)")
    return env_dir


def activate(env_dir):
    """Makes this process's children (the hook, the trial) run in the environment."""
    os.environ["VIRTUAL_ENV"] = env_dir
    os.environ["PATH"] = os.path.join(env_dir, "bin") + os.pathsep + os.environ.get("PATH", "")
    os.environ.pop("PYTHONHOME", None)


def _build(plan, env_dir):
    if os.path.lexists(env_dir):
        runner.log(f"removing an unfinished build of prepared environment {plan.digest}")
        shutil.rmtree(env_dir)
    runner.log(f"building prepared environment {plan.digest} in {env_dir}: {plan.describe()}, "
               f"image {plan.image or '(none)'}, {plan.device} slots")
    started = time.monotonic()
    try:
        _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", env_dir],
             "creating the venv")
        python = os.path.join(env_dir, "bin", "python3")
        env = dict(os.environ)
        env["VIRTUAL_ENV"] = env_dir
        env["PATH"] = os.path.join(env_dir, "bin") + os.pathsep + env.get("PATH", "")
        env.pop("PYTHONHOME", None)
        # pip comes from the system's site packages when it has one, else from ensurepip.
        if subprocess.run([python, "-c", "import pip"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            _run([python, "-m", "ensurepip", "--default-pip"], "installing pip", env=env)
        shell = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
        for index, command in enumerate(plan.commands, 1):
            _run([shell, "-c", command], f"runtime command {index}: {command}", env=env,
                 cwd=env_dir)
        # The local packages first, so that a requirement of runtime_packages can name a version
        # only an upload has (pip does not match a requirement to a file of the same command).
        for requirements in ([path for path, _ in plan.local_packages], plan.packages):
            if requirements:
                _run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                      *requirements], "pip install " + " ".join(requirements), env=env)
        ready = {
            "hash": plan.digest,
            "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 2),
            "image": plan.image,
            "device": plan.device,
            "commands": plan.commands,
            "packages": plan.packages,
            "local_packages": [os.path.basename(path) for path, _ in plan.local_packages],
        }
        temporary = os.path.join(env_dir, READY_FILE + ".tmp")
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(ready, f)
            f.flush()
            os.fsync(f.fileno())
        os.rename(temporary, os.path.join(env_dir, READY_FILE))
    except BaseException:
        shutil.rmtree(env_dir, ignore_errors=True)
        raise


def _run(argv, what, **kwargs):
    """Runs one step of a build with its output in the trial's; HarnessError when it fails."""
    runner.log(f"prepared environment: {what}")
    sys.stdout.flush()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace", **kwargs)
    except OSError as error:
        raise HarnessError(f"preparing the environment failed: {what}: {error}") from None
    tail = collections.deque(maxlen=ERROR_TAIL_LINES)
    with process.stdout:
        for line in process.stdout:
            sys.stdout.write(line)
            tail.append(line.rstrip("\n"))
    sys.stdout.flush()
    status = process.wait()
    if status != 0:
        raise HarnessError(f"preparing the environment failed: {what} exited with status "
                           f"{status}: " + " | ".join(tail))


def _read_ready(env_dir):
    try:
        with open(os.path.join(env_dir, READY_FILE), encoding="utf-8") as f:
            ready = json.load(f)
    except (OSError, ValueError):
        return None
    return ready if isinstance(ready, dict) else None


def _sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
