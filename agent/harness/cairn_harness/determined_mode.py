"""Runs a trial with Determined's own package (`determined`, 0.38), as Determined's master does.

Determined's launcher reads its trial from fixed places: the files under /run/determined/info
(cluster.json, trial.json, rendezvous.json, resources.json), the shared_fs checkpoint storage
mounted at /determined_shared_fs, and /tmp, which its launchers share between the processes of one
container (/tmp/pid_server-<allocation>). A process agent runs many trials on one host, the ranks
of one gang among them, so each gets a container's view: the trial process enters a private mount
namespace (`unshare --mount`) where this run's directory is /run/determined, its work directory
is /run/determined/workdir (its working directory, as in Determined), the experiment's checkpoint
host_path is /determined_shared_fs, and /tmp is its own. Then `python3 -m determined.exec.launch`
runs the entrypoint exactly as in Determined: a "module:Class" through its legacy harness
(torch_distributed), any other string with `sh -c`, a list as it is.

Every rank of a gang runs this (one process per agent); the package's own launchers start one
worker per slot. The task's token (DET_SESSION_TOKEN) is derived by the agent, never sent.
"""

import hashlib
import importlib.machinery
import json
import os
import re
import shutil
import sys

from cairn_harness.master_client import HarnessError

RUN_DIR_SUFFIX = ".determined"  # beside the work directory: <work dir>.determined
INFO_MOUNT = "/run/determined"
SHARED_FS_MOUNT = "/determined_shared_fs"
DETERMINED_PATH_ENV = "CAIRN_DETERMINED_PATH"
# Determined's form of a trial class, the one its launcher hands to its legacy harness.
TRIAL_CLASS = re.compile(r"^[a-zA-Z0-9_.]+:[a-zA-Z0-9_]+$")
# Where each allocation's rendezvous ports are drawn from (torch's c10d store and the package's
# two ZMQ ports); every rank derives the same three from its allocation's session token. Two
# gangs whose chiefs share a host draw the same ports with a chance of about n^2 / 18,000 for n
# gangs there at once: the run then fails to bind and restarts under a new allocation.
PORT_BASE = 30000
PORT_SPAN = 9000


def wants_determined(trial_doc, workdir):
    """Whether the trial runs Determined's package: a command entrypoint, or a trial class whose
    module and the model definition's modules it imports (read, not run) never import
    cairn_harness (Cairn's own Trial API). A trial class whose module is not there goes to Cairn's
    harness, which says so."""
    determined = trial_doc.get("determined") or {}
    if determined.get("entrypointArgv"):
        return True
    entrypoint = trial_doc.get("entrypoint") or ""
    if not TRIAL_CLASS.match(entrypoint):
        return True
    module = entrypoint.split(":", 1)[0]
    if _module_file(workdir, module) is None:
        return False
    return not _imports_cairn_harness(workdir, module)


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", re.MULTILINE)
# How many of the model definition's own modules the scan reads at most.
_MAX_SCANNED_MODULES = 64


def _module_file(workdir, module):
    base = os.path.join(workdir, *module.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _imports_cairn_harness(workdir, module):
    pending, seen = [module], set()
    while pending and len(seen) < _MAX_SCANNED_MODULES:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(workdir, name)
        if path is None:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in _IMPORT.finditer(text):
            names = [match.group(1)] if match.group(1) else match.group(2).split(",")
            for imported in names:
                imported = imported.strip().split(" ")[0]
                if imported.split(".")[0] == "cairn_harness":
                    return True
                if imported:
                    pending.append(imported)
    return False


def run(trial_doc, workdir):
    """Prepares this run's Determined files and execs the launcher; returns only on error."""
    determined = trial_doc.get("determined")
    if not isinstance(determined, dict) or not isinstance(determined.get("config"), dict):
        raise HarnessError("this master does not describe trials for Determined's package; "
                           "upgrade the master")
    env = _environment(trial_doc, determined)
    _check_package(env)
    run_dir = os.path.normpath(workdir) + RUN_DIR_SUFFIX
    binds = _write_run_dir(run_dir, workdir, trial_doc, determined, env)
    storage = determined["config"].get("checkpoint_storage") or {}
    storage_type = storage.get("type")
    if storage_type == "shared_fs":
        host_path = storage.get("host_path")
        if not isinstance(host_path, str) or not host_path:
            raise HarnessError("checkpoint_storage: shared_fs needs a host_path")
        os.makedirs(host_path, exist_ok=True)
        binds.append((host_path, SHARED_FS_MOUNT))
    elif storage_type not in ("s3", "azure"):
        # Determined's package writes s3 and azure itself, from the config.
        raise HarnessError(f"checkpoint_storage: type {storage_type!r} is not supported here")
    argv = _namespace_argv(run_dir, binds, ["python3", "-m", "cairn_harness.determined_launch"])
    os.environ.clear()
    os.environ.update(env)
    print(f"cairn-harness: trial {trial_doc.get('trialId')} runs Determined's package: "
          f"{trial_doc.get('entrypoint')}", flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(argv[0], argv)


def _environment(trial_doc, determined):
    env = dict(os.environ)
    rank = int(env.get("CAIRN_AGENT_RANK", "0") or 0)
    allocation = env.get("DET_ALLOCATION_ID", "")
    if not env.get("DET_SESSION_TOKEN"):
        raise HarnessError("DET_SESSION_TOKEN is not set: the agent has no agent token, and "
                           "Determined's package cannot call the master without one")
    latest = trial_doc.get("latestCheckpoint")
    env.update({
        "DET_CLUSTER_ID": "cairn",
        "DET_TASK_TYPE": "TRIAL",
        "DET_TASK_ID": determined.get("taskId") or env.get("DET_TASK_ID", ""),
        "DET_TRIAL_ID": str(trial_doc.get("trialId")),
        "DET_EXPERIMENT_ID": str(trial_doc.get("experimentId")),
        "DET_TRIAL_RUN_ID": str(determined.get("trialRunId") or 1),
        "DET_TRIAL_SEED": str(determined.get("trialSeed") or 0),
        "DET_STEPS_COMPLETED": str(latest["batches"] if latest else 0),
        "DET_EXPERIMENT_CONFIG": json.dumps(determined["config"]),
        "DET_HPARAMS": json.dumps(trial_doc.get("hparams") or {}),
        # Rendezvous from the files written here (docker-container: no proxy call).
        "DET_RESOURCES_TYPE": "docker-container",
        "DET_RESOURCES_ID": f"{allocation}.{rank}",
        "DET_CONTAINER_ID": f"{allocation}.{rank}",
        "DET_SEGMENT_ENABLED": "false",
        # Determined runs its launcher with this interpreter; so does Cairn.
        "DET_PYTHON_EXECUTABLE": "python3",
    })
    if latest:
        env["DET_LATEST_CHECKPOINT"] = latest["uuid"]
    else:
        env.pop("DET_LATEST_CHECKPOINT", None)
    # From the session token, which every rank of the allocation has and no other cluster's
    # allocation of the same id: two clusters on one host (a test bed) draw apart.
    seed = (env["DET_SESSION_TOKEN"] + allocation).encode()
    port = PORT_BASE + int(hashlib.sha256(seed).hexdigest(), 16) % PORT_SPAN
    env["C10D_PORT"] = str(port)
    env["INTER_TRAIN_PROCESS_COMM_PORT_1"] = str(port + 1)
    env["INTER_TRAIN_PROCESS_COMM_PORT_2"] = str(port + 2)
    package = env.get(DETERMINED_PATH_ENV)
    if package:
        existing = env.get("PYTHONPATH")
        env["PYTHONPATH"] = package + (":" + existing if existing else "")
    env["PWD"] = INFO_MOUNT + "/workdir"
    return env


def _check_package(env):
    """Fails clearly when the trial's Python path has no `determined`; the launcher imports it
    (and reports any missing dependency of it) itself, so only its presence is looked up here."""
    path = [entry for entry in env.get("PYTHONPATH", "").split(":") if entry] + sys.path
    if importlib.machinery.PathFinder.find_spec("determined", path) is None:
        raise HarnessError(
            "this trial runs Determined's own code, and the package `determined` is not on its "
            "Python path: install Determined's package in the task's environment "
            "(pip install determined==0.38.1) or start the agent with --determined-package-dir")


def _write_run_dir(run_dir, workdir, trial_doc, determined, env):
    """Writes /run/determined's files; returns the binds the namespace needs besides it."""
    info = os.path.join(run_dir, "info")
    os.makedirs(info, exist_ok=True)
    for mount_point in ("workdir", "tmp", "pythonpath"):
        os.makedirs(os.path.join(run_dir, mount_point), exist_ok=True)
    os.chmod(os.path.join(run_dir, "tmp"), 0o1777)
    binds = [(workdir, INFO_MOUNT + "/workdir")]
    # /tmp is the run's own: what the task needs from the host's is reached another way.
    cert = env.get("DET_MASTER_CERT_FILE")
    if cert and cert != "noverify" and os.path.isfile(cert):
        shutil.copyfile(cert, os.path.join(run_dir, "master.crt"))
        env["DET_MASTER_CERT_FILE"] = env["CAIRN_MASTER_CERT_FILE"] = INFO_MOUNT + "/master.crt"
    # Python's path entries under the host's /tmp (Determined's package, the agent's own
    # directories on a machine that keeps them there) are bound into /run/determined instead.
    entries = []
    for index, entry in enumerate(env.get("PYTHONPATH", "").split(":")):
        real = os.path.realpath(entry) if entry else ""
        if real and (real == "/tmp" or real.startswith("/tmp/")) and os.path.isdir(real):
            target = f"{INFO_MOUNT}/pythonpath/{index}"
            os.makedirs(os.path.join(run_dir, "pythonpath", str(index)), exist_ok=True)
            binds.append((real, target))
            entry = target
        entries.append(entry)
    env["PYTHONPATH"] = ":".join(entries)
    rendezvous = determined.get("rendezvous") or {}
    addresses = rendezvous.get("addresses") or ["127.0.0.1"]
    slots = rendezvous.get("slots") or [len(json.loads(env.get("DET_SLOT_IDS", "[]")))]
    rank = int(env.get("CAIRN_AGENT_RANK", "0") or 0)
    files = {
        "cluster.json": {
            "master_url": env["DET_MASTER"],
            "cluster_id": env["DET_CLUSTER_ID"],
            "agent_id": env.get("DET_AGENT_ID", ""),
            "slot_ids": json.loads(env.get("DET_SLOT_IDS", "[]")),
            "task_id": env["DET_TASK_ID"],
            "allocation_id": env.get("DET_ALLOCATION_ID", ""),
            "session_token": "",  # the package reads DET_SESSION_TOKEN; no secret on disk
            "task_type": "TRIAL",
            "master_cert_name": env.get("DET_MASTER_CERT_NAME"),
            "master_cert_file": env.get("DET_MASTER_CERT_FILE"),
            "latest_checkpoint": env.get("DET_LATEST_CHECKPOINT"),
        },
        "trial.json": {
            "trial_id": trial_doc.get("trialId"),
            "experiment_id": trial_doc.get("experimentId"),
            "trial_seed": int(env["DET_TRIAL_SEED"]),
            "hparams": trial_doc.get("hparams") or {},
            "config": determined["config"],
            "steps_completed": int(env["DET_STEPS_COMPLETED"]),
            "trial_run_id": int(env["DET_TRIAL_RUN_ID"]),
            "debug": bool(determined["config"].get("debug", False)),
            "inter_node_network_interface": None,
        },
        "rendezvous.json": {
            "container_addrs": addresses,
            "container_rank": rank,
            "container_slot_counts": slots,
        },
        "resources.json": {"gpu_uuids": _gpu_uuids(env)},
    }
    for name, content in files.items():
        with open(os.path.join(info, name), "w", encoding="utf-8") as f:
            json.dump(content, f)
    # The model definition as submitted: Determined's PyTorchTrial copies it into checkpoints.
    model = os.path.join(run_dir, "train", "model")
    if os.path.isdir(model):
        shutil.rmtree(model)
    shutil.copytree(workdir, model)
    return binds


def _gpu_uuids(env):
    devices = env.get("CUDA_VISIBLE_DEVICES", "")
    return [d for d in devices.split(",") if d.startswith("GPU-")]


def _namespace_argv(run_dir, binds, command):
    """The command inside a private mount namespace where this run's files are Determined's."""
    for mount_point in (INFO_MOUNT, SHARED_FS_MOUNT):
        try:
            os.makedirs(mount_point, exist_ok=True)
        except OSError as error:
            raise HarnessError(
                f"{mount_point} does not exist and cannot be made ({error.strerror}); Determined's "
                f"package reads it: create it once on this host (mkdir -p {INFO_MOUNT} "
                f"{SHARED_FS_MOUNT})") from None
    unshare = shutil.which("unshare")
    if unshare is None:
        raise HarnessError("unshare (util-linux) is needed to give the trial its own "
                           f"{INFO_MOUNT}")
    # The run's directory first (the other targets are inside it or elsewhere), /tmp last (the
    # sources may be under the host's). Then, as Determined: the work directory, the context's
    # startup-hook.sh, the launcher.
    mounts = [(run_dir, INFO_MOUNT)] + binds + [(os.path.join(run_dir, "tmp"), "/tmp")]
    script = ""
    for index in range(len(mounts)):
        source, target = 2 * index + 1, 2 * index + 2
        script += (f'mount --bind "${{{source}}}" "${{{target}}}" || {{ echo "cairn-harness: '
                   f'error: cannot bind ${{{source}}} on ${{{target}}}" >&2; exit 1; }}; ')
    script += (f"shift {2 * len(mounts)}; cd {INFO_MOUNT}/workdir || exit 1; "
               'if [ -f ./startup-hook.sh ]; then . ./startup-hook.sh || exit 1; fi; exec "$@"')
    shell = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    namespace = [unshare, "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        # Without root, a user namespace of its own lets the process mount in its namespace.
        namespace += ["--map-root-user"]
    arguments = [path for mount in mounts for path in mount]
    return namespace + ["--", shell, "-c", script, "sh"] + arguments + command
