#!/usr/bin/env python3
"""Two builds of Cairn side by side, on the same machine in the same run: the figures a change to
the write side must keep (submission throughput, the decision snapshot's encode and decode, the
write side's fold, the projections' rebuild), each build's runs alternated (old, new, old, new, ...)
so that a slow stretch of the machine falls on both, and each figure printed with new / old.

  ops/bench/compare_builds.py OLD_BUILD NEW_BUILD [--rounds N] [--history DIR] [--only NAME ...]

OLD_BUILD and NEW_BUILD are build directories (their bin/ holds cairn-bench-history,
cairn-generate-history and bench_scheduling). --history is a master data directory whose log
cairn-generate-history wrote (made with NEW_BUILD's generator when missing; the log format is the
same for both). The measurements: `fold` (cairn-bench-history --only fold: fold, encode, decode),
`rebuild` (cairn-bench-rebuild: its own 1,000,000 events), `submit` (bench_scheduling --only
submit: real masters on loopback).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

# Each measurement: the command after the binary, and the figures read from its output as
# (name, regex with one number group, "higher" or "lower" is better).
MEASUREMENTS = {
    "fold": (["cairn-bench-history", "--only", "fold"], [
        ("write-side fold (s)", r"decision state folded from offset 0\s+([\d.]+) s", "lower"),
        ("snapshot encode (s)", r"encoded in ([\d.]+) s", "lower"),
        ("snapshot decode (s)", r"decoded in ([\d.]+) s", "lower"),
    ]),
    "rebuild": (["cairn-bench-rebuild"], [
        ("projections rebuild (events/s)", r"rebuild rate: ([\d.]+) events/s", "higher"),
    ]),
    "submit": (["bench_scheduling", "--only", "submit"], [
        ("submissions (per s)", r"submissions/s, 10k queued, 8 clients\s+([\d.]+)", "higher"),
        ("submission p99 (ms)", r"p99 ([\d.]+) ms", "lower"),
    ]),
}


def number(text):
    return float(text.replace(",", ""))


def run(build, args, history):
    binary = os.path.join(build, "bin", args[0])
    command = [binary] + args[1:]
    if args[0] == "cairn-bench-history":
        command += ["--data", history]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def read(figures, output):
    values = {}
    for name, pattern, _ in figures:
        match = re.search(pattern, output)
        if match:
            values[name] = number(match.group(match.lastindex))
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--history")
    parser.add_argument("--only", nargs="*", choices=sorted(MEASUREMENTS), default=None)
    args = parser.parse_args()
    history = args.history or os.path.join(tempfile.gettempdir(), "cairn-compare-history")
    if not os.path.isdir(os.path.join(history, "log")):
        os.makedirs(history, exist_ok=True)
        subprocess.run([os.path.join(args.new, "bin", "cairn-generate-history"), "--data", history],
                       check=True)
    print(f"machine: {os.cpu_count()} cores; old {args.old}, new {args.new}; history {history}")
    for name in args.only or sorted(MEASUREMENTS):
        command, figures = MEASUREMENTS[name]
        seen = {"old": [], "new": []}
        for _ in range(args.rounds):
            for which in ("old", "new"):
                output = run(getattr(args, which), command, history)
                values = read(figures, output)
                if len(values) != len(figures):
                    sys.exit(f"{name}: could not read every figure from:\n{output}")
                seen[which].append(values)
        for figure, _, better in figures:
            old = [values[figure] for values in seen["old"]]
            new = [values[figure] for values in seen["new"]]
            ratio = statistics.median(new) / statistics.median(old)
            print(f"{figure:34} old {', '.join(f'{v:g}' for v in old):28} "
                  f"new {', '.join(f'{v:g}' for v in new):28} new/old {ratio:.2f} "
                  f"({better} is better)")


if __name__ == "__main__":
    main()
