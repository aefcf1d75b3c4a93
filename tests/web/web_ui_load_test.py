#!/usr/bin/env python3
"""How long each view of the web UI takes to show its data in headless Chromium on a local master
holding 1,000 experiments, 10,000 queued jobs (tasks: commands, every tenth a notebook), 1,000
models and an experiment whose timeline holds 10,000 events (made by ops/generate-ui-load.py; no
agents, so the jobs stay queued). Each view is a fresh page load; the time is from the navigation's start to
the view marking itself ready, measured by the browser. Prints one line per view and whether it
met the 1 s target; fails only if a view does not load at all or shows the wrong totals.

  web_ui_load_test.py --bin BUILD/bin --screenshots BUILD/screenshots [--experiments N] [--jobs N]
                      [--models N] [--timeline-events N]
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import browser  # noqa: E402
from browser import wait, css, present, view_ready, screenshot  # noqa: E402
from local_cluster import Cluster  # noqa: E402

TARGET_MS = 1000
ROUNDS = 3  # each view is loaded this many times; the slowest counts


def measure(driver, cluster, route, view, ready_selector=None):
    """Milliseconds from navigation start to the view's data shown, the slowest of ROUNDS loads."""
    slowest = 0.0
    for _ in range(ROUNDS):
        driver.get("about:blank")
        driver.get(cluster.url + "/#/" + route)
        wait(driver, view_ready(view), message="view " + view)
        if ready_selector:
            wait(driver, present(ready_selector), message=ready_selector)
        error = css(driver, "main .error-text")
        if error:
            raise AssertionError("view %s failed: %s" % (view, error[0].text))
        timings = driver.execute_script("return window.cairnViewTimings")
        slowest = max(slowest, timings[-1]["fromNavigationMs"])
    return slowest


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--timeline-events", type=int, default=10000)
    parser.add_argument("--master-config", default="",
                        help="more master.yaml, e.g. 'snapshots: {every_events: 1000}'")
    args = parser.parse_args()
    browser.require_browser()
    cluster = Cluster(args.bin, "load")
    driver = None
    try:
        cluster.start_master(args.master_config + "\n" if args.master_config else "")
        started = time.monotonic()
        subprocess.run([sys.executable, os.path.join(ROOT, "ops", "generate-ui-load.py"),
                        "--master", cluster.url, "--experiments", str(args.experiments),
                        "--jobs", str(args.jobs), "--models", str(args.models),
                        "--timeline-events", str(args.timeline_events)], check=True)
        print("generated the load in %.0f s" % (time.monotonic() - started), flush=True)
        queue = cluster.call("GET", "/api/v1/job-queues-v2?limit=1")
        total = int(queue["pagination"]["total"])
        # Paused experiments queue nothing: the queue is the commands.
        if total != args.jobs:
            raise AssertionError("the queue holds %d jobs, not %d" % (total, args.jobs))
        newest_task = cluster.call("GET", "/api/v1/commands?limit=1&orderBy=ORDER_BY_DESC")["commands"][0]["id"]
        models = int(cluster.call("GET", "/api/v1/models?limit=1")["pagination"]["total"])
        if models != args.models:
            raise AssertionError("the registry holds %d models, not %d" % (models, args.models))
        # The timeline's page deep in the experiment's 10,000 events: where its 9,801st starts.
        entity = "experiment/%d" % args.experiments
        timeline = cluster.call("GET", "/api/v1/audit?includeSystem=true&limit=10000&entity=" + entity,
                                user="admin")
        if len(timeline["records"]) < min(args.timeline_events, 10000):
            raise AssertionError("the timeline of %s holds %d events" % (entity, len(timeline["records"])))
        deep = timeline["records"][-200]["offset"]
        driver = browser.start_browser()
        driver.get(cluster.url + "/")
        wait(driver, present("#login-form"), message="the login page")
        css(driver, "#username")[0].send_keys("admin")
        css(driver, "#login-button")[0].click()
        wait(driver, view_ready("cluster"), message="signed in")
        views = [
            ("cluster", "cluster", None),
            ("queue", "queue", '[data-total="%d"]' % args.jobs),
            ("queue?offset=9950", "queue", "tr[data-job-id]"),
            ("experiments", "experiments", '[data-total="%d"]' % args.experiments),
            ("experiment/%d" % args.experiments, "experiment", None),
            ("tasks", "tasks", "tr[data-task-id]"),
            ("tasks?kind=notebook", "tasks", 'tr[data-kind="notebook"]'),
            ("task/" + newest_task, "task", None),
            ("models", "models", '[data-total="%d"]' % args.models),
            ("timeline?entity=" + entity, "timeline", "tr[data-offset]"),
            ("timeline?entity=%s&from=%s" % (entity, deep), "timeline", 'tr[data-offset="%s"]' % deep),
            ("history", "history", "#history-past table"),
        ]
        results = []
        for route, view, selector in views:
            ms = measure(driver, cluster, route, view, selector)
            results.append((route, ms))
            deep_page = "offset" in route or "from=" in route
            screenshot(driver, args.screenshots, "load-" + view + ("-last-page" if deep_page else "")
                       + ("-notebooks" if "kind=" in route else ""))
        print("\nview load times, %d experiments, %d queued jobs, %d models, a %d-event timeline%s "
              "(slowest of %d loads, navigation start to data shown):" % (
                  args.experiments, args.jobs, args.models, args.timeline_events,
                  ", " + args.master_config if args.master_config else "", ROUNDS))
        for route, ms in results:
            print("  %-40s %6.0f ms  %s" % (route, ms, "met" if ms <= TARGET_MS else "NOT MET (target 1000 ms)"))
        print("all views within 1 s: %s" % ("yes" if all(ms <= TARGET_MS for _, ms in results) else "no"),
              flush=True)
    finally:
        if driver is not None:
            driver.quit()
        cluster.stop()


if __name__ == "__main__":
    main()
