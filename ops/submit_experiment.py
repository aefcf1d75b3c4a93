#!/usr/bin/env python3
"""Submits an experiment to a Cairn master the way Determined's `det experiment create` does
(the YAML text and the context directory as base64 files), optionally waits for it to end and
prints its trials. Standard library only.

  ops/submit_experiment.py --master URL CONFIG.yaml CONTEXT_DIR [--paused] [--wait] [--quiet]

It logs in as --user (default: determined) with the password in $CAIRN_PASSWORD (default: blank),
as Determined's CLI does, or uses the session token in $CAIRN_TOKEN. An https:// master is
verified with the CA file in $DET_MASTER_CERT_FILE (as `det` does), else the system's CAs.
"""
import argparse
import base64
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

TERMINAL = {"STATE_COMPLETED", "STATE_CANCELED", "STATE_ERROR"}
# The session every call presents (log_in sets it).
_session = {"token": os.environ.get("CAIRN_TOKEN", "")}
# How https:// masters are verified: Determined's CLI variable names the CA file.
_tls = ssl.create_default_context(cafile=os.environ.get("DET_MASTER_CERT_FILE") or None)


def log_in(master, user="determined", password=None):
    """Starts a session as `user` (password: $CAIRN_PASSWORD, else blank) for later calls."""
    if password is None:
        password = os.environ.get("CAIRN_PASSWORD", "")
    _session["token"] = ""
    answer = call(master, "POST", "/api/v1/auth/login",
                  {"username": user, "password": password, "isHashed": False})
    _session["token"] = answer["token"]


def call(master, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if _session["token"]:
        headers["Authorization"] = "Bearer " + _session["token"]
    request = urllib.request.Request(master + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60, context=_tls) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit("%s %s failed (%d): %s" % (method, path, error.code, error.read().decode()))


def model_definition(context_dir):
    entries = []
    for root, dirs, files in os.walk(context_dir):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        for name in sorted(files):
            path = os.path.join(root, name)
            relative = os.path.relpath(path, context_dir).replace(os.sep, "/")
            with open(path, "rb") as handle:
                content = base64.b64encode(handle.read()).decode()
            entries.append({"path": relative, "type": 48, "content": content,
                            "mode": os.stat(path).st_mode & 0o777,
                            "mtime": str(int(os.stat(path).st_mtime)), "uid": 0, "gid": 0})
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default=os.environ.get("CAIRN_MASTER", "http://127.0.0.1:8080"))
    parser.add_argument("config")
    parser.add_argument("context")
    parser.add_argument("--paused", action="store_true", help="create it PAUSED")
    parser.add_argument("--wait", action="store_true", help="wait until it ends")
    parser.add_argument("--quiet", action="store_true", help="print only the experiment id")
    parser.add_argument("--user", default="determined", help="log in as this user")
    args = parser.parse_args()
    if not _session["token"]:
        log_in(args.master, args.user)
    with open(args.config) as handle:
        config = handle.read()
    created = call(args.master, "POST", "/api/v1/experiments", {
        "config": config, "modelDefinition": model_definition(args.context),
        "activate": not args.paused, "parentId": None, "projectId": None, "template": None,
        "validateOnly": False})
    experiment_id = created["experiment"]["id"]
    print(experiment_id if args.quiet else "Created experiment %d" % experiment_id, flush=True)
    if not args.wait:
        return
    while True:
        experiment = call(args.master, "GET", "/api/v1/experiments/%d" % experiment_id)["experiment"]
        if experiment["state"] in TERMINAL:
            break
        time.sleep(0.5)
    trials = call(args.master, "GET", "/api/v1/experiments/%d/trials" % experiment_id)["trials"]
    if not args.quiet:
        print("experiment %d: %s, %d trials" % (experiment_id, experiment["state"], len(trials)))
        for trial in trials:
            best = trial.get("bestValidation") or {}
            metrics = (best.get("metrics") or {}).get("avgMetrics", {})
            print("  trial %-4d %-16s batches %-6d restarts %d  hparams %s  best %s" % (
                trial["id"], trial["state"], trial.get("totalBatchesProcessed", 0),
                trial.get("restarts", 0), json.dumps(trial["hparams"], sort_keys=True),
                json.dumps(metrics, sort_keys=True)))
    sys.exit(0 if experiment["state"] == "STATE_COMPLETED" else 1)


if __name__ == "__main__":
    main()
