#!/usr/bin/env python3
"""Benchmark (issue 3): an adaptive ASHA search of 100 trials on examples/spiral-mlp, on one agent
with 8 artificial slots, against a real master on the embedded log. Prints the wall time from
submission to COMPLETED, the master's CPU time and peak memory (VmHWM) over the run, the events
written, and the trials by state. There is no competitor baseline to run here; the figures are
absolute (state the machine: this one has 2 cores).

  ops/bench/bench_experiments.py [--bin build/bin] [--trials 100] [--max-length 400]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "ops"))
import submit_experiment  # noqa: E402  (the same client the README uses)


def get(master, path):
    return submit_experiment.call(master, "GET", path)


def wait_for_line(path, pattern, process, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as handle:
                for line in handle:
                    match = re.search(pattern, line)
                    if match:
                        return match
        if process.poll() is not None:
            sys.exit("process exited early; see " + path)
        time.sleep(0.05)
    sys.exit("timed out waiting for %r in %s" % (pattern, path))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def peak_rss_mib(pid):
    with open("/proc/%d/status" % pid) as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def asha_config(trials, max_length, checkpoints):
    with open(os.path.join(ROOT, "examples", "spiral-mlp", "adaptive_asha.yaml")) as handle:
        text = handle.read()
    text = re.sub(r"max_trials: \d+", "max_trials: %d" % trials, text)
    text = re.sub(r"batches: \d+", "batches: %d" % max_length, text)
    text = text.replace("host_path: /tmp", "host_path: " + checkpoints)
    return text + "reproducibility:\n  experiment_seed: 42\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--max-length", type=int, default=400)
    parser.add_argument("--slots", type=int, default=8)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="cairn-bench-experiments-")
    processes = []
    try:
        with open(os.path.join(work, "master.yaml"), "w") as handle:
            handle.write("port: 0\ndata_dir: %s/data\ncluster_name: bench\n"
                         "log:\n  backend: embedded\n" % work)
        master_log = os.path.join(work, "master.log")
        master = subprocess.Popen([os.path.join(args.bin, "cairn-master"), "--config",
                                   os.path.join(work, "master.yaml")],
                                  stdout=open(master_log, "w"), stderr=subprocess.STDOUT)
        processes.append(master)
        url = wait_for_line(master_log, r"cairn-master listening on (\S+)", master).group(1)
        agent_log = os.path.join(work, "agent.log")
        agent = subprocess.Popen([os.path.join(args.bin, "cairn-agent"), "--master", url, "--id",
                                  "bench-agent", "--slots", str(args.slots), "--work-root",
                                  os.path.join(work, "agent-work"), "--agent-token-file",
                                  os.path.join(work, "data", "agent-token")],
                                 stdout=open(agent_log, "w"), stderr=subprocess.STDOUT)
        processes.append(agent)
        wait_for_line(agent_log, r"registered", agent)
        submit_experiment.log_in(url)

        config_path = os.path.join(work, "asha.yaml")
        os.makedirs(os.path.join(work, "checkpoints"))
        with open(config_path, "w") as handle:
            handle.write(asha_config(args.trials, args.max_length,
                                     os.path.join(work, "checkpoints")))
        offset_before = int(get(url, "/api/v1/master")["cairn"]["appliedOffset"])
        cpu_before = cpu_seconds(master.pid)
        start = time.time()
        created = submit_experiment.call(url, "POST", "/api/v1/experiments", {
            "config": open(config_path).read(),
            "modelDefinition": submit_experiment.model_definition(
                os.path.join(ROOT, "examples", "spiral-mlp")),
            "activate": True})
        experiment_id = created["experiment"]["id"]
        while True:
            experiment = get(url, "/api/v1/experiments/%d" % experiment_id)["experiment"]
            if experiment["state"] in submit_experiment.TERMINAL:
                break
            time.sleep(0.2)
        wall = time.time() - start
        cpu = cpu_seconds(master.pid) - cpu_before
        peak = peak_rss_mib(master.pid)
        offset_after = int(get(url, "/api/v1/master")["cairn"]["appliedOffset"])
        trials = get(url, "/api/v1/experiments/%d/trials" % experiment_id)["trials"]
        states = {}
        batches = 0
        for trial in trials:
            states[trial["state"]] = states.get(trial["state"], 0) + 1
            batches += trial.get("totalBatchesProcessed", 0)
        print("machine: %d cores (os.cpu_count)" % os.cpu_count())
        print("adaptive_asha: %d trials requested, max_length %d batches, %d slots on one agent"
              % (args.trials, args.max_length, args.slots))
        print("experiment %d ended %s with %d trials %s" % (
            experiment_id, experiment["state"], len(trials), json.dumps(states, sort_keys=True)))
        print("wall time, submission to end:    %.1f s" % wall)
        print("master CPU time over the run:    %.2f s (%.1f%% of one core)" % (
            cpu, 100 * cpu / wall))
        print("master peak memory (VmHWM):      %.1f MiB" % peak)
        print("events written:                  %d (%.1f per trial)" % (
            offset_after - offset_before, (offset_after - offset_before) / max(len(trials), 1)))
        print("batches trained (all trials):    %d (a full search would be %d)" % (
            batches, len(trials) * args.max_length))
        return 0 if experiment["state"] == "STATE_COMPLETED" else 1
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
