#!/usr/bin/env python3
"""Interactive tasks on a running cluster: how long a notebook and a shell take to be ready, what
the master's proxy adds to a request (the same Jupyter request through /proxy/ID/ and straight to
the agent's port), and an SSH command through `cairn shell ssh`.

  ops/bench/bench_interactive.py --master URL --data-dir DIR [--requests N]

DIR is the master's data directory: the bench reads its agent-token to derive the notebook's
Jupyter token (base/task_secrets.h), which only a direct request needs. Prints a table."""
import argparse
import hashlib
import hmac
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse


def call(master, method, path, token, body=None):
    url = urllib.parse.urlparse(master)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {"Authorization": "Bearer " + token} if token else {}
    connection.request(method, path, body=json.dumps(body) if body is not None else None,
                       headers=headers)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return answer.status, data


def launch_and_wait(master, token, kind):
    started = time.monotonic()
    status, body = call(master, "POST", "/api/v1/" + kind + "s", token, {"config": {}})
    if status != 200:
        sys.exit(f"launching a {kind} failed: {status} {body[:200]}")
    task_id = json.loads(body)[kind]["id"]
    while True:  # polling, as det does: this is a measurement, not a test
        status, body = call(master, "GET", "/api/v1/tasks/" + task_id, token)
        allocations = json.loads(body)["task"]["allocations"]
        if allocations and allocations[0]["isReady"]:
            return task_id, time.monotonic() - started
        time.sleep(0.02)


def latencies(host, port, path, headers, count):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    times = []
    for _ in range(count):
        began = time.perf_counter()
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            sys.exit(f"GET {path} on {host}:{port}: {answer.status}")
        if answer.getheader("Connection", "").lower() == "close":
            connection.close()
            connection = http.client.HTTPConnection(host, port, timeout=30)
        times.append((time.perf_counter() - began) * 1000)
    connection.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--cairn", default=os.path.join(os.path.dirname(__file__), "../../build/bin/cairn"))
    args = parser.parse_args()
    status, body = call(args.master, "POST", "/api/v1/auth/login", None,
                        {"username": "determined", "password": ""})
    token = json.loads(body)["token"]
    agent_token = open(os.path.join(args.data_dir, "agent-token")).read().strip()

    notebook, notebook_ready = launch_and_wait(args.master, token, "notebook")
    status, body = call(args.master, "GET", "/api/v1/events?from=0", token)
    ready = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
    service = next(e["taskReady"] for e in ready
                   if "taskReady" in e and e["taskReady"]["taskId"] == notebook)
    jupyter_token = hmac.new(agent_token.encode(), b"jupyter-token\0" + notebook.encode(),
                             hashlib.sha256).digest()[:16].hex()
    path = f"/proxy/{notebook}/api/status"
    url = urllib.parse.urlparse(args.master)
    through = latencies(url.hostname, url.port, path, {"Authorization": "Bearer " + token},
                        args.requests)
    direct = latencies(service["serviceHost"], service["servicePort"], path,
                       {"Authorization": "token " + jupyter_token}, args.requests)

    shell, shell_ready = launch_and_wait(args.master, token, "shell")
    env = dict(os.environ, CAIRN_TOKEN=token)
    ssh_times = []
    for _ in range(5):
        began = time.perf_counter()
        subprocess.run([args.cairn, "shell", "ssh", "--master", args.master, shell, "--", "true"],
                       env=env, check=True)
        ssh_times.append(time.perf_counter() - began)
    for kind, task in (("notebook", notebook), ("shell", shell)):
        call(args.master, "POST", f"/api/v1/{kind}s/{task}/kill", token)

    cores = os.cpu_count()
    print(f"interactive tasks ({cores} cores, {args.requests} requests each)")
    print(f"  notebook launch -> ready (Jupyter answers):   {notebook_ready:6.2f} s")
    print(f"  shell launch -> ready (sshd answers):         {shell_ready:6.2f} s")
    print(f"  GET {'/proxy/ID/api/status':28s} p50 {through[0]:6.2f} ms  p95 {through[1]:6.2f} ms  (through the master)")
    print(f"  GET {'Jupyter :PORT/.../api/status':28s} p50 {direct[0]:6.2f} ms  p95 {direct[1]:6.2f} ms  (straight to the agent's port)")
    print(f"  proxy's cost per request (p50):               {through[0] - direct[0]:6.2f} ms  ({through[0] / direct[0]:.2f}x)")
    print(f"  cairn shell ssh ID -- true (login + command): median {statistics.median(ssh_times):.2f} s over 5")


if __name__ == "__main__":
    main()
