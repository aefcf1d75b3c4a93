#!/usr/bin/env python3
"""How long each view of the web UI takes to show its data in headless Chromium on a local master
holding 1,000 experiments and 10,000 queued jobs (made by ops/generate-ui-load.py; no agents, so
the jobs stay queued). Each view is a fresh page load; the time is from the navigation's start to
the view marking itself ready, measured by the browser. Prints one line per view and whether it
met the 1 s target; fails only if a view does not load at all or shows the wrong totals.

  web_ui_load_test.py --bin BUILD/bin --screenshots BUILD/screenshots [--experiments N] [--jobs N]
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
                        "--jobs", str(args.jobs)], check=True)
        print("generated the load in %.0f s" % (time.monotonic() - started), flush=True)
        queue = cluster.call("GET", "/api/v1/job-queues-v2?limit=1")
        total = int(queue["pagination"]["total"])
        # Paused experiments queue nothing: the queue is the commands.
        if total != args.jobs:
            raise AssertionError("the queue holds %d jobs, not %d" % (total, args.jobs))
        newest_task = cluster.call("GET", "/api/v1/commands?limit=1&orderBy=ORDER_BY_DESC")["commands"][0]["id"]
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
            ("task/" + newest_task, "task", None),
            ("history", "history", "#history-past table"),
        ]
        results = []
        for route, view, selector in views:
            ms = measure(driver, cluster, route, view, selector)
            results.append((route, ms))
            screenshot(driver, args.screenshots, "load-" + view + ("-last-page" if "offset" in route else ""))
        print("\nview load times, %d experiments and %d queued jobs%s (slowest of %d loads, navigation "
              "start to data shown):" % (args.experiments, args.jobs,
                                         ", " + args.master_config if args.master_config else "", ROUNDS))
        for route, ms in results:
            print("  %-22s %6.0f ms  %s" % (route, ms, "met" if ms <= TARGET_MS else "NOT MET (target 1000 ms)"))
        print("all views within 1 s: %s" % ("yes" if all(ms <= TARGET_MS for _, ms in results) else "no"),
              flush=True)
    finally:
        if driver is not None:
            driver.quit()
        cluster.stop()


if __name__ == "__main__":
    main()
