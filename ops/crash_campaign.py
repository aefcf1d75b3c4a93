#!/usr/bin/env python3
"""Crash campaign: kill -9 a cairn-master many times under load, then check that nothing it
acknowledged was lost or duplicated and that its live projections equal a full rebuild.

Run it through ops/crash-campaign.sh (which checks the build first); standard library only.

What it does:
  1. Starts cairn-master on a fresh data directory (embedded log, or --backend kafka against a
     cairn-kafka-mock it starts), on a fixed loopback port so that restarts keep the URL.
  2. Starts --submitters threads that POST commands (and, --experiment-ratio of the time,
     experiments) with a bearer token, each submission with its own Idempotency-Key and a tag in
     its description or name. A submission whose answer is lost (connection refused or reset, a
     5xx, a timeout) is retried with the same key until the master answers 2xx with an id.
  3. --kills times: waits a random moment (uniform in --min-uptime..--max-uptime seconds after
     the master serves; or, --startup-kill-ratio of the time, a random moment while it is still
     starting), kill -9s it and starts it again, timing each start (spawn to "listening").
  4. Restarts once more, lets the submitters finish what they have in flight, and checks:
     - the log (cairn replay dump, read through the writer-epoch fence as every reader does):
       every acknowledged id was submitted exactly once; no submission (idempotency key or tag)
       created more than one command or experiment;
     - the live projections through REST (GET /api/v1/commands, /api/v1/experiments): every
       acknowledged id is listed exactly once;
     - after a clean stop, `cairn replay digest` (the live projections) equals
       `cairn replay rebuild` (every projection rebuilt from offset 0), offsets included, and
       the live projections reached the log's end.
  5. Prints a summary (and writes summary.json in the work directory); exits 1 on any loss,
     duplicate, rejection, digest mismatch or master failure, 2 on a usage error.
"""
import argparse
import base64
import bisect
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LISTENING = "cairn-master listening on "
BOOTSTRAPS = "cairn-kafka-mock bootstraps: "
TOPIC_PREFIX = "crash"

EXPERIMENT_YAML = """\
name: crash-campaign {tag}
description: a crash-campaign submission
entrypoint: model_def:SpiralTrial
hyperparameters:
  global_batch_size: 32
  learning_rate: 0.1
  hidden_size: 16
  l2: 0.0001
  momentum: 0.9
searcher:
  name: single
  metric: validation_loss
  smaller_is_better: true
  max_length:
    batches: 100
resources:
  slots_per_trial: 1
checkpoint_storage:
  type: shared_fs
  host_path: {checkpoints}
  storage_path: checkpoints
"""


def log(message):
    print("crash-campaign: " + message, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LineWatcher:
    """Reads a child's stdout on a thread; wait() blocks until a line starts with a prefix."""

    def __init__(self, stream):
        self.lines = []
        self.times = []  # when each line was read (time.monotonic())
        self.closed = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for raw in stream:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.times.append(time.monotonic())
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def seen_at(self, prefix):
        """When the first line starting with prefix was read; None if none was."""
        with self.cond:
            for line, seen in zip(self.lines, self.times):
                if line.startswith(prefix):
                    return seen
        return None

    def wait(self, prefix, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    return None
                self.cond.wait(left)


class Master:
    """One cairn-master process at a time on the same configuration and port."""

    def __init__(self, binary, config_path, log_path):
        self.binary = binary
        self.config_path = config_path
        self.log_path = log_path
        self.process = None
        self.watcher = None
        self.starts = 0
        self.kills = 0  # counted once the killed process is gone

    def spawn(self):
        self.starts += 1
        with open(self.log_path, "ab") as stderr:
            stderr.write(b"==== crash-campaign: start %d ====\n" % self.starts)
            stderr.flush()
            self.process = subprocess.Popen([self.binary, "--config", self.config_path],
                                            stdout=subprocess.PIPE, stderr=stderr,
                                            stdin=subprocess.DEVNULL)
        self.watcher = LineWatcher(self.process.stdout)
        return time.monotonic()

    def wait_listening(self, timeout):
        """The URL once it serves; None if it exited or timed out first."""
        line = self.watcher.wait(LISTENING, timeout)
        return line[len(LISTENING):].strip() if line else None

    def cpu_seconds(self):
        """The process's user + system CPU time so far (0 if it is gone)."""
        try:
            with open("/proc/%d/stat" % self.process.pid) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.kills += 1
        self.watcher.thread.join(5)

    def stop(self, timeout=60):
        """SIGTERM, the clean stop; its exit code (None if it had to be killed)."""
        if not self.alive():
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            return None


class Submission:
    __slots__ = ("key", "kind", "worker", "attempts", "unserved", "answer_lost", "acked_id",
                 "status", "error", "first_sent", "last_sent", "acked_at", "offset")

    def __init__(self, key, kind, worker):
        self.key = key
        self.kind = kind  # "command" | "experiment"
        self.worker = worker
        self.attempts = 0
        self.unserved = 0         # attempts that reached no live master (refused, sent on a
        #                           connection to a killed one) or got "starting" (503): nothing
        #                           was executed; retried
        self.answer_lost = False  # a sent attempt got no answer (or a 5xx): retried
        self.acked_id = None      # the id of the 2xx answer
        self.status = None        # the final HTTP status
        self.error = ""
        self.first_sent = None
        self.last_sent = None     # when the last attempt (the acknowledged one) was sent
        self.acked_at = None
        self.offset = None        # Cairn-Offset of the acknowledging answer


class Campaign:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.stop_submitting = threading.Event()
        self.lock = threading.Lock()
        self.submissions = []
        self.token = ""
        self.token_generation = 0
        self.next_slot = time.monotonic()
        self.url_host = "127.0.0.1"
        self.port = free_port()
        self.run_id = "%x" % self.rng.getrandbits(40)
        self.kafka = None
        self.bootstraps = None
        self.master = None
        self.model_definition = None
        self.kill_times = []
        self.start_cpu = []
        self.failures = []  # what went wrong outside the checks (a start that failed, ...)

    # ---- the cluster ----------------------------------------------------------------------

    def setup(self):
        args = self.args
        os.makedirs(args.work_dir, exist_ok=True)
        self.data_dir = os.path.join(args.work_dir, "data")
        log_config = "log:\n  backend: embedded\n"
        if args.backend == "kafka":
            kafka_log = open(os.path.join(args.work_dir, "kafka-mock.log"), "ab")
            self.kafka = subprocess.Popen(
                [os.path.join(args.bin_dir, "cairn-kafka-mock"), "--brokers", "3",
                 "--topic-prefix", TOPIC_PREFIX], stdout=subprocess.PIPE, stderr=kafka_log,
                stdin=subprocess.DEVNULL)
            line = LineWatcher(self.kafka.stdout).wait(BOOTSTRAPS, 60)
            if not line:
                raise SystemExit("crash-campaign: cairn-kafka-mock did not start (see %s)"
                                 % kafka_log.name)
            self.bootstraps = line[len(BOOTSTRAPS):].strip()
            log_config = "log:\n  backend: kafka\n  brokers: %s\n  topic_prefix: %s\n" % (
                self.bootstraps, TOPIC_PREFIX)
        config_path = os.path.join(args.work_dir, "master.yaml")
        with open(config_path, "w") as handle:
            handle.write("port: %d\nlisten_address: 127.0.0.1\ndata_dir: %s\n"
                         "cluster_name: crash-campaign\n%s" % (self.port, self.data_dir,
                                                              log_config))
        self.master = Master(os.path.join(args.bin_dir, "cairn-master"), config_path,
                             os.path.join(args.work_dir, "master.log"))
        if args.experiment_ratio > 0:
            self.model_definition = model_definition(args.context)

    def teardown(self):
        if self.master and self.master.alive():
            self.master.stop()
        if self.kafka and self.kafka.poll() is None:
            self.kafka.send_signal(signal.SIGTERM)
            try:
                self.kafka.wait(30)
            except subprocess.TimeoutExpired:
                self.kafka.kill()
                self.kafka.wait()

    def start_master(self):
        """Starts the master and waits until it serves; the seconds that took (its CPU seconds
        go to start_cpu: on a shared machine the wall time says as much about the neighbours)."""
        spawned = self.master.spawn()
        url = self.master.wait_listening(self.args.start_timeout)
        self.start_cpu.append(self.master.cpu_seconds())
        if url is None:
            code = self.master.process.poll()
            if code is None:
                self.master.kill9()
            raise MasterFailed("the master did not serve within %ss (exit code %s); see %s" % (
                self.args.start_timeout, code, self.master.log_path))
        return time.monotonic() - spawned

    # ---- submitting -----------------------------------------------------------------------

    def connection(self):
        return http.client.HTTPConnection(self.url_host, self.port, timeout=self.args.timeout)

    def request(self, conn, method, path, body=None, headers=None):
        """(status, headers, body bytes); raises OSError/HTTPException on a lost answer."""
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.headers, response.read()

    def log_in(self, generation):
        """Logs in as determined (blank password) unless another thread already did."""
        with self.lock:
            if self.token_generation != generation:
                return
            deadline = time.monotonic() + self.args.start_timeout
            while True:
                conn = self.connection()
                try:
                    status, _, body = self.request(
                        conn, "POST", "/api/v1/auth/login",
                        json.dumps({"username": "determined", "password": ""}),
                        {"Content-Type": "application/json"})
                    if status == 200:
                        self.token = json.loads(body)["token"]
                        self.token_generation += 1
                        return
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    pass
                finally:
                    conn.close()
                if time.monotonic() > deadline:
                    raise MasterFailed("no login for %ss" % self.args.start_timeout)
                time.sleep(0.05)

    def pace(self):
        """Spreads submissions over time when --rate is set (submissions per second, total)."""
        if self.args.rate <= 0:
            return
        with self.lock:
            slot = max(self.next_slot, time.monotonic())
            self.next_slot = slot + 1.0 / self.args.rate
        delay = slot - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def body_of(self, submission):
        tag = "crash-campaign " + submission.key
        if submission.kind == "command":
            return "/api/v1/commands", json.dumps(
                {"config": {"entrypoint": ["true"], "description": tag}})
        config = EXPERIMENT_YAML.format(tag=submission.key,
                                        checkpoints=os.path.join(self.args.work_dir, "ckpt"))
        return "/api/v1/experiments", json.dumps(
            {"config": config, "modelDefinition": self.model_definition, "activate": True,
             "parentId": None, "projectId": None, "template": None, "validateOnly": False})

    def submit(self, conn_box, submission):
        path, body = self.body_of(submission)
        while True:
            generation = self.token_generation
            headers = {"Content-Type": "application/json",
                       "Authorization": "Bearer " + self.token}
            if not self.args.no_idempotency_key:
                headers["Idempotency-Key"] = submission.key
            submission.attempts += 1
            submission.last_sent = time.monotonic()
            if submission.first_sent is None:
                submission.first_sent = submission.last_sent
            if conn_box[0] is None:
                conn = self.connection()
                try:
                    conn.connect()
                except OSError:
                    # Refused (the master is down) or no answer to connecting: nothing was sent.
                    conn.close()
                    submission.unserved += 1
                    time.sleep(self.args.retry_delay)
                    continue
                # Read after connecting: a kill that completes later is a kill of this
                # connection's master (one master at a time), or the comparison below errs on
                # the side of "the answer was lost".
                conn_box[0], conn_box[1] = conn, self.master.kills
            kills_before_send = self.master.kills
            try:
                status, answer_headers, answer = self.request(conn_box[0], "POST", path, body,
                                                              headers)
            except (OSError, http.client.HTTPException):
                conn_box[0].close()
                conn_box[0] = None
                if kills_before_send > conn_box[1]:
                    # A kept-alive connection to a master killed before this was sent: nothing
                    # was executed.
                    submission.unserved += 1
                else:
                    # Reset, closed or timed out after sending: the command may have landed,
                    # and only the same key makes the retry safe.
                    submission.answer_lost = True
                time.sleep(self.args.retry_delay)
                continue
            submission.status = status
            if status == 401:
                self.log_in(generation)
                continue
            if status == 503 and b"the master is starting" in answer:
                # Bound but still replaying (master/master.cpp answers so until it serves).
                submission.unserved += 1
                time.sleep(self.args.retry_delay)
                continue
            if status >= 500 or status == 429:
                submission.answer_lost = True
                time.sleep(self.args.retry_delay)
                continue
            if 200 <= status < 300:
                try:
                    document = json.loads(answer)
                    if submission.kind == "command":
                        submission.acked_id = document["command"]["id"]
                    else:
                        submission.acked_id = str(document["experiment"]["id"])
                except (ValueError, KeyError, TypeError):
                    submission.error = "2xx without an id: %r" % answer[:200]
                    return
                submission.acked_at = time.monotonic()
                submission.offset = answer_headers.get("Cairn-Offset")
                return
            submission.error = "%d %s" % (status, answer[:300].decode(errors="replace"))
            return

    def submitter(self, worker):
        conn_box = [None, 0]  # the connection, and the master's kills when it connected
        number = 0
        try:
            while not self.stop_submitting.is_set():
                self.pace()
                if self.stop_submitting.is_set():
                    break
                number += 1
                kind = "command"
                if self.model_definition and self.rng.random() < self.args.experiment_ratio:
                    kind = "experiment"
                submission = Submission("%s-w%d-%d" % (self.run_id, worker, number), kind, worker)
                with self.lock:
                    self.submissions.append(submission)
                self.submit(conn_box, submission)
        except Exception as error:  # reported, never silently lost
            self.failures.append("submitter %d: %r" % (worker, error))
        finally:
            if conn_box[0] is not None:
                conn_box[0].close()

    # ---- the campaign ---------------------------------------------------------------------

    def run(self):
        args = self.args
        self.setup()
        started = time.monotonic()
        restart_times = []
        kills = {"serving": 0, "starting": 0}
        try:
            first = self.start_master()
            log("master serving on http://127.0.0.1:%d after %.2fs (%s log, work dir %s)" % (
                self.port, first, args.backend, args.work_dir))
            self.log_in(self.token_generation)
            workers = [threading.Thread(target=self.submitter, args=(w,), daemon=True)
                       for w in range(args.submitters)]
            for worker in workers:
                worker.start()
            try:
                self.kill_loop(first, kills, restart_times, started)
            except MasterFailed as failure:
                # Still check what was acknowledged: one more start, then the same checks.
                self.failures.append(str(failure))
                log("%s; starting once more to check what was acknowledged" % failure)
                if not self.master.alive():
                    self.start_master()
            # Let the last start serve a while, then finish what is in flight.
            time.sleep(args.settle)
            self.stop_submitting.set()
            for worker in workers:
                worker.join(args.start_timeout + args.timeout)
                if worker.is_alive():
                    self.failures.append("a submitter did not finish its last submission")
            result = self.check(kills, restart_times, time.monotonic() - started)
        except MasterFailed as failure:
            self.stop_submitting.set()
            self.failures.append(str(failure))
            result = self.summary(kills, restart_times, time.monotonic() - started, None, None)
        finally:
            self.stop_submitting.set()
            self.teardown()
            self.save_submissions()
        return result

    def kill_loop(self, first, kills, restart_times, started):
        args = self.args
        last_start = first
        doomed = None  # the spawn time of a start the next kill is aimed at
        for number in range(1, args.kills + 1):
            if doomed is not None:
                # A kill while the master replays, claims its epoch or catches up: at a random
                # moment within the last start's duration.
                deadline = doomed + self.rng.uniform(0, max(last_start, 0.05))
                while time.monotonic() < deadline and self.master.alive():
                    time.sleep(0.002)
                served = self.master.watcher.seen_at(LISTENING)
                phase = "starting" if served is None else "serving"
                if served is not None:
                    restart_times.append(served - doomed)
            else:
                time.sleep(self.rng.uniform(args.min_uptime, args.max_uptime))
                phase = "serving"
            if not self.master.alive():
                raise MasterFailed("the master exited by itself (code %s) before kill %d; see %s"
                                   % (self.master.process.returncode, number,
                                      self.master.log_path))
            self.master.kill9()
            self.kill_times.append(time.monotonic())
            kills[phase] += 1
            if number < args.kills and self.rng.random() < args.startup_kill_ratio:
                doomed = self.master.spawn()
            else:
                doomed = None
                last_start = self.start_master()
                restart_times.append(last_start)
            if number % 10 == 0 or number == args.kills:
                with self.lock:
                    acked = sum(1 for s in self.submissions if s.acked_id)
                log("%d/%d kills, %d acknowledged, last start %.2fs, %.0fs elapsed" % (
                    number, args.kills, acked, last_start, time.monotonic() - started))

    def save_submissions(self):
        """Every submission, one JSON line each, for a post-mortem."""
        with self.lock:
            submissions = list(self.submissions)
        with open(os.path.join(self.args.work_dir, "submissions.jsonl"), "w") as handle:
            for s in submissions:
                handle.write(json.dumps({
                    "key": s.key, "kind": s.kind, "id": s.acked_id, "status": s.status,
                    "attempts": s.attempts, "unserved": s.unserved, "answer_lost": s.answer_lost,
                    "offset": s.offset, "error": s.error,
                    "latency_ms": round((s.acked_at - s.last_sent) * 1000, 2) if s.acked_at
                    else None}) + "\n")

    # ---- checking -------------------------------------------------------------------------

    def cairn(self, *arguments):
        command = [os.path.join(self.args.bin_dir, "cairn"), "replay"] + list(arguments)
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=1800)
        if done.returncode != 0:
            raise MasterFailed("%s failed (%d): %s" % (" ".join(command), done.returncode,
                                                      done.stderr.decode(errors="replace")))
        return done.stdout.decode()

    def log_source(self):
        if self.bootstraps:
            return ["--kafka", self.bootstraps, "--topic-prefix", TOPIC_PREFIX]
        return ["--data", self.data_dir]

    def digest_args(self):
        extra = ["--kafka", self.bootstraps, "--topic-prefix", TOPIC_PREFIX] if self.bootstraps \
            else []
        return ["digest", "--data", self.data_dir] + extra

    def rest_get(self, path, min_offset):
        conn = self.connection()
        conn.timeout = 600
        try:
            status, _, body = self.request(conn, "GET", path, headers={
                "Authorization": "Bearer " + self.token, "Cairn-Min-Offset": str(min_offset)})
        finally:
            conn.close()
        if status != 200:
            raise MasterFailed("GET %s answered %d: %s" % (path, status, body[:300]))
        return json.loads(body)

    def log_facts(self):
        """What the log says happened: {kind: {id: [keys]}} and {key: [(kind, id)]}, fenced."""
        dump = self.cairn("dump", *self.log_source(),
                          "--type", "WriterEpochClaimed,TaskSubmitted,ExperimentCreated")
        newest_epoch = 0
        fenced = 0
        ids = {"command": {}, "experiment": {}}
        by_tag = {}
        for line in dump.splitlines():
            if not line.strip():
                continue
            event = json.loads(line)
            if "writerEpochClaimed" in event:
                newest_epoch = max(newest_epoch, int(event["writerEpochClaimed"].get("epoch", 0)))
                continue
            if int(event.get("writerEpoch", 0)) < newest_epoch:
                fenced += 1
                continue
            if "taskSubmitted" in event:
                submitted = event["taskSubmitted"]
                spec = submitted.get("spec", {})
                if spec.get("taskType") != "TASK_TYPE_COMMAND":
                    continue  # a trial's run: the experiment is what was submitted
                kind, entity, tag = "command", submitted.get("taskId"), spec.get("description",
                                                                                  "")
            else:
                created = event["experimentCreated"]
                kind, entity = "experiment", str(created.get("experimentId"))
                tag = created.get("name", "")
            ids[kind].setdefault(entity, []).append(event.get("idempotencyKey", ""))
            if tag.startswith("crash-campaign "):
                by_tag.setdefault(tag[len("crash-campaign "):], []).append((kind, entity))
        return ids, by_tag, fenced

    def rest_facts(self, min_offset):
        commands = self.rest_get("/api/v1/commands", min_offset)["commands"]
        experiments = self.rest_get("/api/v1/experiments?limit=0", min_offset)["experiments"]
        listed = {"command": {}, "experiment": {}}
        for command in commands:
            listed["command"][command["id"]] = listed["command"].get(command["id"], 0) + 1
        for experiment in experiments:
            key = str(experiment["id"])
            listed["experiment"][key] = listed["experiment"].get(key, 0) + 1
        return listed

    def check(self, kills, restart_times, elapsed):
        args = self.args
        # The log's end while the master still runs, then the projections there through REST.
        log_end = parse_digest(self.cairn(*self.digest_args()))[1]
        rest = self.rest_facts(log_end - 1)
        code = self.master.stop()
        if code != 0:
            self.failures.append("the final clean stop exited %s" % code)
        log_ids, by_tag, fenced = self.log_facts()
        live, live_end = parse_digest(self.cairn(*self.digest_args()))
        rebuilt_dir = os.path.join(args.work_dir, "rebuilt")
        shutil.rmtree(rebuilt_dir, ignore_errors=True)
        rebuilt, _ = parse_digest(self.cairn("rebuild", *self.log_source(), "--out", rebuilt_dir))
        digest = {"live": live, "rebuilt": rebuilt, "log_end": live_end,
                  "equal": bool(live) and live == rebuilt and
                  all(offset == live_end for offset, _ in live.values())}
        checks = {"lost": [], "duplicated": [], "retried_duplicates": [], "unacked_in_log": 0,
                  "fenced_events": fenced}
        acked_keys = set()
        for s in self.submissions:
            if not s.acked_id:
                continue
            acked_keys.add(s.key)
            in_log = len(log_ids[s.kind].get(s.acked_id, []))
            in_rest = rest[s.kind].get(s.acked_id, 0)
            created = by_tag.get(s.key, [])
            if in_log == 0 or in_rest == 0:
                checks["lost"].append({"key": s.key, "id": s.acked_id, "in_log": in_log,
                                       "listed": in_rest})
            if in_log > 1 or in_rest > 1 or len(created) > 1:
                checks["duplicated"].append({"key": s.key, "id": s.acked_id, "in_log": in_log,
                                             "listed": in_rest, "created": created})
                if s.answer_lost:
                    checks["retried_duplicates"].append(s.key)
        for key, created in by_tag.items():
            if key not in acked_keys and key.startswith(self.run_id + "-"):
                checks["unacked_in_log"] += len(created)
        return self.summary(kills, restart_times, elapsed, checks, digest)

    def downtimes(self):
        """For each kill, the seconds until the first acknowledgement of a request sent after
        it (an answer the killed master wrote before dying may still be read after the kill)."""
        acks = sorted((s.last_sent, s.acked_at) for s in self.submissions if s.acked_at)
        sent = [pair[0] for pair in acks]
        first_ack_from = [0.0] * len(acks)  # the earliest ack among requests sent from i on
        earliest = float("inf")
        for i in range(len(acks) - 1, -1, -1):
            earliest = min(earliest, acks[i][1])
            first_ack_from[i] = earliest
        result = []
        for kill in self.kill_times:
            i = bisect.bisect_right(sent, kill)
            if i < len(acks):
                result.append(first_ack_from[i] - kill)
        return result

    def summary(self, kills, restart_times, elapsed, checks, digest):
        subs = self.submissions
        acked = [s for s in subs if s.acked_id]
        result = {
            "backend": self.args.backend,
            "kills": kills["serving"] + kills["starting"],
            "kills_while_serving": kills["serving"],
            "kills_while_starting": kills["starting"],
            "submissions": len(subs),
            "acknowledged": len(acked),
            "acknowledged_experiments": sum(1 for s in acked if s.kind == "experiment"),
            "retried": sum(1 for s in subs if s.answer_lost or s.unserved),
            "answer_lost": sum(1 for s in subs if s.answer_lost),
            "acknowledged_after_lost_answer": sum(1 for s in acked if s.answer_lost),
            "client_downtime_seconds": self.downtimes(),
            "rejected": [(s.key, s.error) for s in subs if s.error],
            "idempotency_key": not self.args.no_idempotency_key,
            "restart_seconds": restart_times,
            "restart_cpu_seconds": self.start_cpu[1:],
            "elapsed_seconds": round(elapsed, 1),
            "checks": checks,
            "digest": digest,
            "failures": self.failures,
        }
        return result


class MasterFailed(Exception):
    pass


def parse_digest(text):
    """({projection: (offset, digest)}, log_end) from `cairn replay digest|rebuild` output."""
    projections, log_end = {}, None
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "log_end":
            log_end = int(words[1])
        elif len(words) == 3 and len(words[2]) == 64:
            projections[words[0]] = (int(words[1]), words[2])
    return projections, log_end


def model_definition(context_dir):
    entries = []
    for name in sorted(os.listdir(context_dir)):
        path = os.path.join(context_dir, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            content = base64.b64encode(handle.read()).decode()
        entries.append({"path": name, "type": 48, "content": content, "mode": 0o644,
                        "mtime": "0", "uid": 0, "gid": 0})
    return entries


def seconds(values):
    if not values:
        return "none"
    return "min %.2fs, median %.2fs, max %.2fs" % (min(values), statistics.median(values),
                                                  max(values))


def print_summary(result):
    checks, digest = result["checks"], result["digest"]
    print()
    print("== crash campaign summary (%s log) ==" % result["backend"])
    print("kills:                  %d (%d while serving, %d while starting)" % (
        result["kills"], result["kills_while_serving"], result["kills_while_starting"]))
    print("submissions:            %d by the submitters, %d acknowledged (%d experiments)" % (
        result["submissions"], result["acknowledged"], result["acknowledged_experiments"]))
    print("retried:                %d submissions%s; %d had an answer lost after sending "
          "(%d of those acknowledged)" % (
              result["retried"], " with their Idempotency-Key" if result["idempotency_key"]
              else " WITHOUT an Idempotency-Key", result["answer_lost"],
              result["acknowledged_after_lost_answer"]))
    print("rejected:               %d" % len(result["rejected"]))
    for key, error in result["rejected"][:5]:
        print("  %s: %s" % (key, error))
    if checks is not None:
        print("lost:                   %d" % len(checks["lost"]))
        for item in checks["lost"][:5]:
            print("  %s" % json.dumps(item))
        print("duplicated:             %d (%d of them after a lost answer)" % (
            len(checks["duplicated"]), len(checks["retried_duplicates"])))
        for item in checks["duplicated"][:5]:
            print("  %s" % json.dumps(item))
        print("in the log, never acked: %d (answers never received; expected 0)" %
              checks["unacked_in_log"])
        print("fenced events in log:   %d" % checks["fenced_events"])
    print("restart times:          %s over %d starts (spawn to listening)" % (
        seconds(result["restart_seconds"]), len(result["restart_seconds"])))
    print("restart CPU time:       %s (the master's user+system time until listening)" %
          seconds(result["restart_cpu_seconds"]))
    print("client downtime:        %s (a kill to the next acknowledgement)" %
          seconds(result["client_downtime_seconds"]))
    if digest is not None:
        print("digests:                %s (%d projections, live at log end %s)" % (
            "live == rebuilt" if digest["equal"] else "MISMATCH", len(digest["live"]),
            digest["log_end"]))
        if not digest["equal"]:
            for name in sorted(set(digest["live"]) | set(digest["rebuilt"])):
                print("  %-12s live %s rebuilt %s" % (name, digest["live"].get(name),
                                                      digest["rebuilt"].get(name)))
    for failure in result["failures"]:
        print("FAILURE:                %s" % failure)
    print("elapsed:                %.1fs" % result["elapsed_seconds"])


def verdict(result):
    checks, digest = result["checks"], result["digest"]
    return (checks is not None and digest is not None and not checks["lost"] and
            not checks["duplicated"] and digest["equal"] and not result["rejected"] and
            not result["failures"])


def main():
    parser = argparse.ArgumentParser(
        prog="ops/crash-campaign.sh",
        description="kill -9 cairn-master repeatedly under submission load; check that nothing "
                    "acknowledged was lost or duplicated and that the live projections equal a "
                    "rebuild")
    parser.add_argument("--build-dir", default=None,
                        help="where bin/ is (default: this checkout's build/)")
    parser.add_argument("--backend", choices=["embedded", "kafka"], default="embedded")
    parser.add_argument("--kills", type=int, default=100, help="kill -9s (default 100)")
    parser.add_argument("--submitters", type=int, default=4,
                        help="parallel submitting threads (default 4)")
    parser.add_argument("--rate", type=float, default=None,
                        help="submissions per second, all submitters together; 0 = as fast as "
                             "they go (default: 0 embedded, 25 kafka: the mock keeps only about "
                             "5 MiB of a partition, and a rebuild needs the whole log)")
    parser.add_argument("--experiment-ratio", type=float, default=0.05,
                        help="share of submissions that are experiments (default 0.05)")
    parser.add_argument("--min-uptime", type=float, default=0.2,
                        help="least seconds between serving and a kill (default 0.2)")
    parser.add_argument("--max-uptime", type=float, default=1.5,
                        help="most seconds between serving and a kill (default 1.5)")
    parser.add_argument("--startup-kill-ratio", type=float, default=0.1,
                        help="share of kills aimed at a starting master (default 0.1)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds of load after the last restart (default 2)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per request")
    parser.add_argument("--start-timeout", type=float, default=600,
                        help="seconds a start may take before it counts as failed")
    parser.add_argument("--retry-delay", type=float, default=0.02,
                        help="seconds between a lost answer and its retry")
    parser.add_argument("--no-idempotency-key", action="store_true",
                        help="retry without Idempotency-Key (shows what the key prevents)")
    parser.add_argument("--work-dir", default=None,
                        help="data, logs and summary.json (default: a new temporary directory)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory after a successful run")
    parser.add_argument("--context", default=None,
                        help="the experiments' model directory (default: examples/spiral-mlp)")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args.rate is None:
        args.rate = 25.0 if args.backend == "kafka" else 0.0
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.kills < 0 or args.submitters < 1 or not 0 <= args.experiment_ratio <= 1 or \
            not 0 <= args.startup_kill_ratio <= 1 or args.min_uptime < 0 or \
            args.max_uptime < args.min_uptime:
        parser.error("--kills >= 0, --submitters >= 1, ratios in [0,1], "
                     "0 <= --min-uptime <= --max-uptime")
    args.bin_dir = os.path.join(os.path.abspath(args.build_dir or os.path.join(root, "build")),
                                "bin")
    for binary in ["cairn-master", "cairn"] + (["cairn-kafka-mock"] if args.backend == "kafka"
                                               else []):
        if not os.access(os.path.join(args.bin_dir, binary), os.X_OK):
            parser.error("%s/%s is missing: build first (ops/build.sh)" % (args.bin_dir, binary))
    args.context = os.path.abspath(args.context or os.path.join(root, "examples", "spiral-mlp"))
    made_work_dir = args.work_dir is None
    if made_work_dir:
        args.work_dir = tempfile.mkdtemp(prefix="cairn-crash-")
    args.work_dir = os.path.abspath(args.work_dir)
    log("seed %d, %d kills, %d submitters, rate %s, backend %s" % (
        args.seed, args.kills, args.submitters, args.rate or "unlimited", args.backend))

    result = Campaign(args).run()
    result["seed"] = args.seed
    result["work_dir"] = args.work_dir
    with open(os.path.join(args.work_dir, "summary.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    print_summary(result)
    ok = verdict(result)
    if ok and made_work_dir and not args.keep:
        shutil.rmtree(args.work_dir, ignore_errors=True)
        print("result:                 PASS")
    else:
        print("result:                 %s (work dir kept: %s)" % ("PASS" if ok else "FAIL",
                                                                   args.work_dir))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
