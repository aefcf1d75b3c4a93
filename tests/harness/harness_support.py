"""Shared pieces of the harness tests: the real harness as a child process, a test trial, paths.

The harness runs exactly as an agent starts it: `python3 -m cairn_harness` in an empty work
directory with CAIRN_MASTER / CAIRN_ALLOCATION_ID / CAIRN_TASK_ID and PYTHONPATH set.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

from fake_master import FakeMaster, file_entry

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS_DIR = os.path.join(REPO, "agent", "harness")
EXAMPLE_DIR = os.path.join(REPO, "examples", "spiral-mlp")
WAIT_SECONDS = 20

# A trial whose numbers follow from the batches it trained, so a test can tell what it was asked to
# do; environment variables (set through the trial's environmentVariables) steer its misbehaviour.
COUNTER_TRIAL = r'''
import json
import os
import urllib.request

import cairn_harness


def _gate(name):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    opener.open(os.environ["CAIRN_MASTER"] + "/test/gate/" + name, timeout=60).read()


class CounterTrial(cairn_harness.Trial):
    def __init__(self, context):
        super().__init__(context)
        self.rate = float(context.get_hparam("rate"))
        self.weight = 0.0
        self.train_calls = 0

    def train_batches(self, batches, start_batch):
        self.train_calls += 1
        if os.environ.get("TEST_GATE"):
            _gate(os.environ["TEST_GATE"])
        if os.environ.get("TEST_FAIL_IN_TRAIN"):
            raise ValueError("model exploded at batch %d" % start_batch)
        for batch in range(start_batch, start_batch + batches):
            self.weight += self.rate * (batch + 1)
        return {"loss": 1.0 / (1.0 + self.weight), "end_batch": start_batch + batches}

    def validate(self):
        return {"validation_loss": 1.0 / (1.0 + self.weight), "train_calls": self.train_calls}

    def save(self, path):
        with open(os.path.join(path, "state.json"), "w") as f:
            json.dump({"weight": self.weight}, f)
        os.makedirs(os.path.join(path, "extra"))
        with open(os.path.join(path, "extra", "notes.txt"), "w") as f:
            f.write("counter")
        if os.environ.get("TEST_FAIL_IN_SAVE"):
            raise OSError("disk full while saving")

    def load(self, path):
        with open(os.path.join(path, "state.json")) as f:
            self.weight = json.load(f)["weight"]


class NotATrial:
    pass
'''


def trial_doc(**overrides):
    doc = {
        "trialId": 11,
        "experimentId": 3,
        "requestId": 5,
        "hparams": {"rate": 0.5, "global_batch_size": 8},
        "entrypoint": "model_def:CounterTrial",
        "checkpointDir": "",
        "latestCheckpoint": None,
        "batchesCompleted": 0,
        "recordsPerEpoch": 0,
        "globalBatchSize": 8,
        "environmentVariables": [],
    }
    doc.update(overrides)
    return doc


def context_from_dir(directory):
    """The master's context for every file under `directory`."""
    entries = []
    for parent, _, names in os.walk(directory):
        for name in sorted(names):
            full = os.path.join(parent, name)
            with open(full, "rb") as f:
                content = f.read()
            entries.append(file_entry(os.path.relpath(full, directory), content,
                                      os.stat(full).st_mode & 0o777))
    return entries


class HarnessProcess:
    """`python3 -m cairn_harness` as a child, its output collected line by line as it comes."""

    def __init__(self, master_url, allocation_id, workdir, extra_env=None):
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.update({
            "CAIRN_MASTER": master_url,
            "CAIRN_ALLOCATION_ID": allocation_id,
            "CAIRN_TASK_ID": "task-" + allocation_id,
            "PYTHONPATH": HARNESS_DIR,
            "PYTHONDONTWRITEBYTECODE": "1",
            "CAIRN_HARNESS_RETRY_SECONDS": "10",
        })
        env.update(extra_env or {})
        self._condition = threading.Condition()
        self._lines = {"stdout": [], "stderr": []}
        self.process = subprocess.Popen([sys.executable, "-m", "cairn_harness"], cwd=workdir,
                                        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stdout, "stdout"), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stderr, "stderr"), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, name):
        for line in stream:
            with self._condition:
                self._lines[name].append(line)
                self._condition.notify_all()

    def wait_for_stdout(self, text):
        """Blocks until a stdout line contains `text`; False if that does not happen in time."""
        with self._condition:
            return self._condition.wait_for(
                lambda: any(text in line for line in self._lines["stdout"]), WAIT_SECONDS)

    def wait(self):
        """The exit code; all output has been read when this returns."""
        code = self.process.wait(WAIT_SECONDS)
        for reader in self._readers:
            reader.join(WAIT_SECONDS)
        self.process.stdout.close()
        self.process.stderr.close()
        return code

    @property
    def stdout(self):
        with self._condition:
            return "".join(self._lines["stdout"])

    @property
    def stderr(self):
        with self._condition:
            return "".join(self._lines["stderr"])

    def kill(self):
        """Cleanup: ends the child if a failed test left it running."""
        if self.process.poll() is None:
            self.process.kill()
        self.wait()


class HarnessTestCase(unittest.TestCase):
    """A temp dir per test holding the work directories and the checkpoint directory."""

    def setUp(self):
        self.temp = tempfile.mkdtemp(prefix="cairn-harness-test-")
        self.addCleanup(shutil.rmtree, self.temp, ignore_errors=True)
        self.checkpoint_dir = os.path.join(self.temp, "checkpoints")

    def start_master(self, *, files, workloads, tls_context=None, **trial_overrides):
        trial_overrides.setdefault("checkpointDir", self.checkpoint_dir)
        master = FakeMaster(trial=trial_doc(**trial_overrides), files=files,
                            workloads=workloads, tls_context=tls_context).start()
        self.addCleanup(master.stop)
        return master

    def start_harness(self, master, name="work", extra_env=None):
        workdir = os.path.join(self.temp, name)
        os.makedirs(workdir)
        harness = HarnessProcess(master.url, master.allocation_id, workdir, extra_env)
        self.addCleanup(harness.kill)
        return harness, workdir

    def run_harness(self, master, name="work", extra_env=None):
        """Runs the harness to its end: (exit code, process, work directory)."""
        harness, workdir = self.start_harness(master, name, extra_env)
        return harness.wait(), harness, workdir

    def assertExit(self, harness, code, expected):
        self.assertEqual(code, expected,
                         f"exit {code}\n--- stdout\n{harness.stdout}--- stderr\n{harness.stderr}")


def counter_context(extra=None):
    files = [file_entry("model_def.py", COUNTER_TRIAL)]
    files.extend(extra or [])
    return files
