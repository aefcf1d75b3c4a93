"""The workload loop: load the user's Trial, resume it, and run what the master asks until EXIT.

Each answer of the master is one workload; its result goes back with the next call (see
PROTOCOL.md §3). Exit codes: 0 on EXIT, 1 on any error (a HarnessError is reported in one line, an
exception from user code with its traceback), 143 on a second SIGTERM.
"""

import importlib
import json
import math
import os
import sys
import traceback
import uuid

import cairn_harness
from cairn_harness import signals
from cairn_harness.checkpoint_storage import open_storage
from cairn_harness.master_client import DEFAULT_RETRY_SECONDS, HarnessError, MasterClient
from cairn_harness.tfevents import TrialEventFiles
from cairn_harness.trial import Trial, TrialContext

TRIAL_FILE_ENV = "CAIRN_HARNESS_TRIAL_FILE"
RETRY_SECONDS_ENV = "CAIRN_HARNESS_RETRY_SECONDS"


def log(line):
    print(f"cairn-harness: {line}", flush=True)


def guarded(function, *args):
    """Runs function(*args) and turns its outcome into the process's exit code."""
    try:
        return function(*args)
    except HarnessError as error:
        print(f"cairn-harness: error: {error}", file=sys.stderr, flush=True)
        return 1
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        return 1


def client_from_environment():
    master = os.environ.get("CAIRN_MASTER")
    allocation_id = os.environ.get("CAIRN_ALLOCATION_ID")
    if not master or not allocation_id:
        raise HarnessError("CAIRN_MASTER and CAIRN_ALLOCATION_ID must be set by the agent")
    retry_text = os.environ.get(RETRY_SECONDS_ENV)
    try:
        retry_seconds = float(retry_text) if retry_text else DEFAULT_RETRY_SECONDS
    except ValueError:
        raise HarnessError(f"{RETRY_SECONDS_ENV}={retry_text!r} is not a number") from None
    # The allocation's own token (the agent derives it); the master refuses the harness's calls
    # without it.
    token = os.environ.get("CAIRN_ALLOCATION_TOKEN")
    # The CA the agent verified an https:// master with (Determined's name as a fallback); unset,
    # the system's CAs.
    cafile = (os.environ.get("CAIRN_MASTER_CERT_FILE") or os.environ.get("DET_MASTER_CERT_FILE")
              or None)
    return MasterClient(master, allocation_id, retry_seconds=retry_seconds, token=token,
                        cafile=cafile)


def main_after_hook():
    """Entry of `python3 -m cairn_harness.run`; the bootstrap left the trial in a file."""
    signals.install()
    sys.stdout.reconfigure(line_buffering=True)

    def run_from_file():
        path = os.environ.get(TRIAL_FILE_ENV)
        if not path:
            raise HarnessError(f"{TRIAL_FILE_ENV} is not set; start the trial with "
                               "`python3 -m cairn_harness`")
        with open(path, encoding="utf-8") as f:
            trial_doc = json.load(f)
        return run_trial(trial_doc, client_from_environment(), os.getcwd())

    return guarded(run_from_file)


def run_trial(trial_doc, client, workdir):
    """Loads the entrypoint from `workdir`, resumes from the latest checkpoint, runs the loop."""
    trial_class = load_entrypoint(trial_doc["entrypoint"], workdir)
    latest = trial_doc.get("latestCheckpoint")
    hparams = trial_doc.get("hparams") or {}
    global_batch_size = trial_doc.get("globalBatchSize") or hparams.get("global_batch_size") or 0
    context = TrialContext(hparams=hparams, trial_id=trial_doc.get("trialId"),
                           experiment_id=trial_doc.get("experimentId"),
                           request_id=trial_doc.get("requestId"),
                           global_batch_size=global_batch_size,
                           records_per_epoch=trial_doc.get("recordsPerEpoch") or 0,
                           latest_checkpoint=latest)
    trial = trial_class(context)
    storage = open_storage(trial_doc)
    events = TrialEventFiles(storage.event_root, context.experiment_id, context.trial_id)
    loop = WorkloadLoop(trial, client, storage, events)
    if latest is not None:
        loop.resume(latest)
    return loop.run()


def load_entrypoint(entrypoint, workdir):
    """The Trial subclass named by "module:Class" (Class may be dotted), imported from workdir."""
    if not isinstance(entrypoint, str):
        raise HarnessError(f"entrypoint {entrypoint!r} is not a 'module:Class' string")
    module_name, separator, class_path = entrypoint.partition(":")
    if not separator or not module_name or not class_path:
        raise HarnessError(f"entrypoint {entrypoint!r} is not of the form 'module:Class'")
    if not sys.path or sys.path[0] != workdir:
        sys.path.insert(0, workdir)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        # Only the entrypoint's own module being absent is the harness's to explain; a missing
        # dependency of the user's module shows best as the user's own traceback.
        missing = error.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise HarnessError(f"entrypoint {entrypoint!r}: no module {module_name!r} in the "
                               f"model definition ({workdir})") from None
        raise
    found = module
    for attribute in class_path.split("."):
        try:
            found = getattr(found, attribute)
        except AttributeError:
            location = getattr(module, "__file__", "?")
            raise HarnessError(f"entrypoint {entrypoint!r}: module {module_name!r} ({location}) "
                               f"has no {class_path!r}") from None
    if not isinstance(found, type) or not issubclass(found, Trial) or found is Trial:
        raise HarnessError(f"entrypoint {entrypoint!r}: {class_path} is not a subclass of "
                           "cairn_harness.Trial")
    return found


class WorkloadLoop:
    def __init__(self, trial, client, storage, events):
        self._trial = trial
        self._client = client
        self._storage = storage  # checkpoint_storage.open_storage
        self._events = events  # TrialEventFiles: the metrics for TensorBoard
        self._batches = 0
        self._sigterms_logged = 0

    def resume(self, latest):
        with self._storage.restored(latest["uuid"]) as path:
            self._trial.load(path)
        self._batches = int(latest["batches"])
        log(f"resumed from checkpoint {latest['uuid']} at {self._batches} batches")

    def run(self):
        sequence = 0
        completed = None
        while True:
            answer = self._client.post_workloads(sequence, completed)
            sequence += 1
            self._note_sigterm()
            workload = answer.get("workload") if isinstance(answer, dict) else None
            kind = workload.get("kind") if isinstance(workload, dict) else None
            if kind == "TRAIN":
                completed = self._train(workload)
            elif kind == "VALIDATE":
                completed = self._validate()
            elif kind == "CHECKPOINT":
                completed = self._checkpoint()
            elif kind == "EXIT":
                log(f"EXIT at {self._batches} batches: {workload.get('reason', '')}")
                return 0
            else:
                raise HarnessError(f"the master answered an unknown workload: {answer!r}")

    def _note_sigterm(self):
        if signals.received() > self._sigterms_logged:
            self._sigterms_logged = signals.received()
            log("a SIGTERM is pending; following the master's answers")

    def _train(self, workload):
        batches = workload.get("batches")
        start_batch = workload.get("startBatch")
        if not _is_int(batches) or batches <= 0 or not _is_int(start_batch):
            raise HarnessError(f"malformed TRAIN workload: {workload!r}")
        if start_batch != self._batches:
            # The trial's state is at self._batches; training "from" elsewhere would silently
            # repeat or skip data.
            raise HarnessError(f"the master asked to train from batch {start_batch}, but this "
                               f"trial is at batch {self._batches}")
        metrics = _checked_metrics(self._trial.train_batches(batches, start_batch),
                                   "train_batches()")
        self._batches += batches
        log(f"TRAIN {batches} batches ({start_batch} -> {self._batches}): {_format(metrics)}")
        self._events.report("training", self._batches, metrics)
        return {"kind": "TRAIN", "batches": batches, "metrics": metrics}

    def _validate(self):
        metrics = _checked_metrics(self._trial.validate(), "validate()")
        log(f"VALIDATE at {self._batches} batches: {_format(metrics)}")
        self._events.report("validation", self._batches, metrics)
        return {"kind": "VALIDATE", "metrics": metrics}

    def _checkpoint(self):
        checkpoint_uuid = str(uuid.uuid4())
        resources = self._storage.save(checkpoint_uuid, self._trial.save)
        size = sum(resources.values())
        log(f"CHECKPOINT {checkpoint_uuid} at {self._batches} batches: {len(resources)} files, "
            f"{size} bytes")
        return {"kind": "CHECKPOINT", "uuid": checkpoint_uuid, "batches": self._batches,
                "sizeBytes": size, "resources": resources,
                "metadata": {"steps_completed": self._batches,
                             "harness": f"cairn_harness {cairn_harness.__version__}"}}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _checked_metrics(metrics, source):
    """Metrics as JSON-ready {str: finite number}; numpy-like scalars become floats."""
    if not isinstance(metrics, dict):
        raise HarnessError(f"{source} returned {type(metrics).__name__}, not a dict of metrics")
    checked = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise HarnessError(f"{source} returned a metric named {name!r}, not a string")
        if _is_int(value):
            checked[name] = value
            continue
        number = None
        if not isinstance(value, (bool, str, bytes)):
            try:
                number = float(value)
            except (TypeError, ValueError):
                pass
        if number is None or not math.isfinite(number):
            raise HarnessError(f"{source} returned metric {name}={value!r}; metrics must be "
                               "finite numbers")
        checked[name] = number
    return checked


def _format(metrics):
    return " ".join(f"{name}={value:.4g}" for name, value in metrics.items()) or "(no metrics)"
