#!/usr/bin/env python3
"""The data plane under load (issue 48), in one command. First, task logs: a real cairn-master and cairn-agent
on loopback (embedded log); 100 commands print log lines at a steady rate with bursts (short and
long lines, about 100 bytes on average), while followers read five of them live
(`GET /api/v1/tasks/{id}/logs?follow=true`, as `det task logs -f` does) and a client submits
commands one at a time. Before the printers start, the same client submits on an idle data plane,
so the two submission figures come from one run.

Prints: log lines ingested per second (every printed line stored, from the first printed to the
last stored), follower latency p50/p99 (a line's print time, which the line carries, to the
follower reading it), submission p50/p99 idle and under load, the master's peak RSS, and bytes on
disk per million lines (the task-log store after the master stopped). Then the project's other
data-plane benchmarks, each printing its own figures against its targets:
  cairn-bench-metric-reports --rate 10   50 trials at the issue's mix (training every 100 ms,
                                         validation every second), submissions idle vs loaded
  cairn-bench-metric-reports             the same 50 trials flooding: reports/s capacity
  cairn-bench-metric-reads               a trial's metric history at 10k and 1M points
  cairn-bench-log-search                 a text search over 10M stored lines of one experiment

  ops/bench/bench_data_plane.py --bin build/bin [--tasks 100] [--rate 1000] [--seconds 15]
                                [--followers 5] [--submissions-per-second 20] [--logs-only]

Targets (issue 48, 2 cores): >= 100,000 lines/s from 100 tasks, follower p99 <= 100 ms, submission
p99 under load <= 2x idle, RSS <= 1 GiB, <= 60 bytes on disk per 100-byte line.
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "web"))
from local_cluster import Cluster  # noqa: E402

# Prints `rate` lines a second for `seconds`, in ten batches a second, with three quiet batches and
# then a burst every two seconds (the rate stays the average); one line in eight is long. Each line starts with its
# print time, for the followers' latency; the last says how many came before it.
PRINTER = r"""
import sys, time
rate, seconds = int(sys.argv[1]), float(sys.argv[2])
short, long = "x" * 40, "y" * 440  # with the prefix: about 60 and 460 bytes, 110 on average
out, printed, start = sys.stdout, 0, time.time()
tick = 0
while time.time() - start < seconds:
    step, quiet = rate // 10, rate // 20
    # Every two seconds three quiet ticks, then a burst with what they left: the same average.
    batch = quiet if tick % 20 in (16, 17, 18) else step + 3 * (step - quiet) if tick % 20 == 19 else step
    now = "%.6f" % time.time()
    out.write("".join("T%s %d %s\n" % (now, printed + i, long if (printed + i) % 8 == 0 else short)
                      for i in range(batch)))
    out.flush()
    printed += batch
    tick += 1
    time.sleep(max(0.0, start + tick / 10.0 - time.time()))
out.write("DONE %d\n" % printed)
"""


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


class Client:
    """One keep-alive connection to the master with a bearer token."""

    def __init__(self, url, token):
        parsed = urllib.parse.urlparse(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        self.headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def call(self, method, path, body=None):
        self.connection.request(method, path, body=None if body is None else json.dumps(body),
                                headers=self.headers)
        answer = self.connection.getresponse()
        data = answer.read()
        if answer.status != 200:
            raise RuntimeError("%s %s: %d %s" % (method, path, answer.status, data[:300]))
        return json.loads(data) if data else {}


def submit_stream(client, per_second, stop, latencies):
    """Submits `true` per_second times a second until `stop` is set; each POST's latency in ms."""
    next_at = time.monotonic()
    while not stop.is_set():
        began = time.perf_counter()
        client.call("POST", "/api/v1/commands", {"config": {"entrypoint": ["true"],
                                                            "resources": {"slots": 0}}})
        latencies.append((time.perf_counter() - began) * 1000)
        next_at += 1.0 / per_second
        stop.wait(max(0.0, next_at - time.monotonic()))


def follow(url, token, task_id, latencies, done):
    """Follows one task's log to its DONE line; each line's print-to-read latency in ms."""
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=300)
    connection.request("GET", "/api/v1/tasks/%s/logs?follow=true" % task_id,
                       headers={"Authorization": "Bearer " + token})
    answer = connection.getresponse()
    seen = 0
    for raw in answer:
        now = time.time()
        text = json.loads(raw).get("result", {}).get("log", "")
        if text.startswith("T"):
            latencies.append((now - float(text[1:text.index(" ")])) * 1000)
            seen += 1
        elif text.startswith("DONE"):
            done.append((task_id, seen, int(text.split()[1])))
            return


def rss_sampler(pid, stop, peak):
    while not stop.is_set():
        try:
            with open("/proc/%d/status" % pid) as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        peak[0] = max(peak[0], int(line.split()[1]) * 1024)
        except OSError:
            return
        stop.wait(0.25)


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--rate", type=int, default=1000, help="lines a second per task")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--followers", type=int, default=5)
    parser.add_argument("--submissions-per-second", type=float, default=20)
    parser.add_argument("--idle-seconds", type=float, default=10)
    parser.add_argument("--logs-only", action="store_true", help="only the task-log part")
    args = parser.parse_args()
    if args.tasks < 1 or args.rate < 10 or args.seconds <= 0 or not 0 <= args.followers <= args.tasks:
        parser.error("need --tasks >= 1, --rate >= 10, --seconds > 0, 0 <= --followers <= --tasks")

    cluster = Cluster(args.bin, "data-plane")
    try:
        cluster.start_master()
        cluster.start_agent("agent-1", args.tasks)
        token = cluster.login("admin")
        master_pid = cluster.processes[0].pid
        stop_rss, peak_rss = threading.Event(), [0]
        threading.Thread(target=rss_sampler, args=(master_pid, stop_rss, peak_rss), daemon=True).start()
        submitter = Client(cluster.url, token)

        # Submissions on an idle data plane.
        idle = []
        stop = threading.Event()
        timer = threading.Timer(args.idle_seconds, stop.set)
        timer.start()
        submit_stream(submitter, args.submissions_per_second, stop, idle)

        # The printers, their followers, and the same submissions again.
        control = Client(cluster.url, token)
        printers = [control.call("POST", "/api/v1/commands", {"config": {
            "entrypoint": ["python3", "-c", PRINTER, str(args.rate), str(args.seconds)],
            "resources": {"slots": 1}, "description": "printer %d" % i}})["command"]["id"]
            for i in range(args.tasks)]
        follower_latency, done = [], []
        followers = [threading.Thread(target=follow, args=(cluster.url, token, task_id, follower_latency, done),
                                      daemon=True) for task_id in printers[:args.followers]]
        for thread in followers:
            thread.start()
        loaded = []
        stop = threading.Event()
        streaming = threading.Thread(target=submit_stream,
                                     args=(submitter, args.submissions_per_second, stop, loaded))
        streaming.start()
        # Until every printer ended: an agent reports an exit only after the lines before it were
        # stored, so then every line is in (a measurement's poll, not a test's).
        first_print = None
        pending = set(printers)
        while pending:
            for task_id in list(pending):
                task = control.call("GET", "/api/v1/commands/" + task_id)["command"]
                if task["state"] == "STATE_TERMINATED":
                    pending.discard(task_id)
            time.sleep(0.2)
        stored_at = time.time()
        stop.set()
        streaming.join()
        for thread in followers:
            thread.join(timeout=60)

        # Every line of every printer arrived once and in order: read them back from the store.
        # The first print time is the earliest line's.
        stored, printed, out_of_order = 0, 0, 0
        for task_id in printers:
            control.connection.request("GET", "/api/v1/tasks/%s/logs" % task_id, headers=control.headers)
            body = control.connection.getresponse().read().decode()
            numbers, last = [], None
            for raw in body.splitlines():
                text = json.loads(raw).get("result", {}).get("log", "")
                if text.startswith("T"):
                    stamp, number = text[1:].split(" ", 2)[:2]
                    numbers.append(int(number))
                    first_print = float(stamp) if first_print is None else min(first_print, float(stamp))
                elif text.startswith("DONE"):
                    last = int(text.split()[1])
            stored += len(numbers) + (last is not None)
            printed += max(last if last is not None else 0, max(numbers, default=-1) + 1) + 1
            out_of_order += sum(1 for a, b in zip(numbers, numbers[1:]) if b <= a)
        total = stored
        # What the agent and the master said about lines they could not take.
        complaints = []
        for name in sorted(os.listdir(cluster.dir.name)):
            if name.endswith(".log"):
                with open(cluster.path(name), errors="replace") as log:
                    complaints += [name + ": " + line.strip()[:200] for line in log
                                   if "dropp" in line or "throttl" in line or "log queue" in line]
        stop_rss.set()
        # The master stopped (its memtables flushed), before the folder goes.
        for process in cluster.processes:
            process.terminate()
            process.wait(timeout=60)
        disk = directory_bytes(os.path.join(cluster.data_dir, "tasklogs"))
        # The compressed tables alone: the store once its write-ahead log (bounded at 64 MiB)
        # is flushed.
        tables = sum(os.path.getsize(os.path.join(root, name))
                     for root, _, names in os.walk(os.path.join(cluster.data_dir, "tasklogs"))
                     for name in names if name.endswith(".sst"))
    finally:
        cluster.stop()
    seconds = stored_at - first_print
    print("\ndata plane: task logs, %d printers x %d lines/s for %.0f s, %d followers, %.0f submissions/s"
          % (args.tasks, args.rate, args.seconds, args.followers, args.submissions_per_second))
    print("machine: %d cores (os.cpu_count), real master and agent on loopback, embedded log" % os.cpu_count())
    rows = [
        ("lines ingested/s", "%.0f (%d lines in %.1f s; offered %d/s)" % (
            total / seconds, total, seconds, args.tasks * args.rate), ">= 100,000",
         total / seconds >= 100000),
        ("lines lost / out of order", "%d of %d printed / %d" % (printed - stored, printed, out_of_order),
         "none", printed == stored and out_of_order == 0),
        ("follower latency p50 / p99", "%.0f / %.0f ms (%d lines)" % (
            percentile(follower_latency, 0.5), percentile(follower_latency, 0.99), len(follower_latency)),
         "p99 <= 100 ms", percentile(follower_latency, 0.99) <= 100),
        ("submission p50 / p99 idle", "%.1f / %.1f ms (%d)" % (
            percentile(idle, 0.5), percentile(idle, 0.99), len(idle)), "", None),
        ("submission p50 / p99 loaded", "%.1f / %.1f ms (%d), %.2fx idle p99" % (
            percentile(loaded, 0.5), percentile(loaded, 0.99), len(loaded),
            percentile(loaded, 0.99) / percentile(idle, 0.99)), "<= 2x idle",
         percentile(loaded, 0.99) <= 2 * percentile(idle, 0.99)),
        ("master peak RSS", "%.0f MiB" % (peak_rss[0] / 2**20), "<= 1 GiB", peak_rss[0] <= 2**30),
        ("disk per line", "%.0f bytes in tables, %.0f with the write-ahead log (lines ~110 bytes)" % (
            tables / total, disk / total), "<= 60 bytes per 100-byte line", tables / total <= 66),
    ]
    for name, figure, target, met in rows:
        print("  %-30s %-52s %-30s %s" % (name, figure, target,
                                         "" if met is None else ("met" if met else "NOT MET")))
    if complaints:
        print("\nthe processes' logs about lines they could not take (first 5 of %d):" % len(complaints))
        for line in complaints[:5]:
            print("  " + line)
    if args.logs_only:
        return
    for argv in (["cairn-bench-metric-reports", "--rate", "10"], ["cairn-bench-metric-reports"],
                 ["cairn-bench-metric-reads"], ["cairn-bench-log-search"]):
        print("\n$ " + " ".join(argv), flush=True)
        finished = subprocess.run([os.path.join(args.bin, argv[0])] + argv[1:],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # The figures, without the master's own warnings (blank passwords and the like).
        print("\n".join(line for line in finished.stdout.splitlines() if " W " not in line[:40]))
        if finished.returncode != 0:
            print("  (exited with %d)" % finished.returncode)


if __name__ == "__main__":
    main()
