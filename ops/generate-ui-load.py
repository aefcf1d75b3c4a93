#!/usr/bin/env python3
"""Fills a Cairn master with the load the web UI must stay usable under: N experiments (created
paused, from examples/spiral-mlp/const.yaml), M tasks that stay queued on a master without agents
(commands, and every tenth a notebook), K models in the registry, and E edits of the last
experiment's notes, so that its timeline holds E events. Standard library only; the requests go
over the REST API, several at a time.

  ops/generate-ui-load.py --master URL [--experiments 1000] [--jobs 10000] [--models 1000]
                          [--timeline-events 10000] [--parallel 8]

It logs in as --user (default: determined) like ops/submit_experiment.py ($CAIRN_PASSWORD, else a
blank password). Prints what it made and how long it took.
"""
import argparse
import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import submit_experiment as rest  # noqa: E402  (the same login, calls and model definition)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default=os.environ.get("CAIRN_MASTER", "http://127.0.0.1:8080"))
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=10000, help="tasks, queued: commands, every tenth a notebook")
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--timeline-events", type=int, default=10000,
                        help="edits of the last experiment's notes (each one event of its timeline)")
    parser.add_argument("--parallel", type=int, default=8, help="requests in flight")
    parser.add_argument("--user", default="determined")
    args = parser.parse_args()
    if min(args.experiments, args.jobs, args.models, args.timeline_events) < 0 or args.parallel < 1:
        parser.error("counts must be >= 0 and --parallel >= 1")
    rest.log_in(args.master, args.user)
    context = os.path.join(ROOT, "examples", "spiral-mlp")
    with open(os.path.join(context, "const.yaml")) as handle:
        config = handle.read()
    definition = rest.model_definition(context)

    def experiment(number):
        return rest.call(args.master, "POST", "/api/v1/experiments", {
            "config": config.replace("name: spiral-mlp-const", "name: load-%d" % number, 1),
            "modelDefinition": definition, "activate": False})["experiment"]["id"]

    def task(number):
        if number % 10 == 9:
            return rest.call(args.master, "POST", "/api/v1/notebooks", {
                "config": {"description": "load notebook %d" % number}})["notebook"]["id"]
        return rest.call(args.master, "POST", "/api/v1/commands", {
            "config": {"entrypoint": ["true"], "description": "load job %d" % number}})["command"]["id"]

    def model(number):
        return rest.call(args.master, "POST", "/api/v1/models", {
            "name": "load-model-%d" % number, "description": "made by generate-ui-load",
            "labels": ["load", "batch-%d" % (number // 100)]})["model"]["id"]

    def edit_notes(number):
        return rest.call(args.master, "PATCH", "/api/v1/experiments/%d" % args.experiments,
                         {"notes": "edit %d" % number})

    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        for what, count, make in (("experiments", args.experiments, experiment),
                                  ("queued tasks", args.jobs, task),
                                  ("models", args.models, model),
                                  ("timeline events (notes edits)",
                                   args.timeline_events if args.experiments else 0, edit_notes)):
            started = time.monotonic()
            for _ in pool.map(make, range(count)):
                pass
            elapsed = time.monotonic() - started
            print("made %d %s in %.1f s (%.0f/s)" % (count, what, elapsed, count / elapsed if elapsed else 0),
                  flush=True)


if __name__ == "__main__":
    main()
