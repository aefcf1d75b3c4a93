#!/usr/bin/env python3
"""The web UI end to end in headless Chromium against a real local cluster (cairn-master and a
4-slot cairn-agent): static files are served safely; log in; see the agent; a job submitted
through the API appears in the queue view and leaves it when it finishes, and a queued one is
explained and killed from the page; the spiral-mlp grid experiment shows one curve per trial
with as many points as its configuration asks for; the history scrubbed back to before the
experiment shows an empty queue; a model made on the registry's page gets a checkpoint of the grid
registered from the experiment's page as its first version, which links back and downloads;
a workspace and a project made on their pages, the experiment moved into the project; a Viewer sees no kill button and gets 403 when trying anyway and
is told history is for admins; the tasks view lists each kind and, for those who may, launches a
TensorBoard over the experiment and a notebook that opens through the proxy (a Viewer gets no
form, and 403 when forcing the call), the notebook's timeline from the log; an OpenPAI job
submitted from its JSON on the page has its bad field named, then runs to SUCCEEDED. An admin
makes a user, gives them a role, resets their password, deactivates them and drains the agent;
a Viewer is offered no Admin page and is refused when forcing it. A screenshot of each view (1280x800) goes to --screenshots.

  web_ui_test.py --bin BUILD/bin --screenshots BUILD/screenshots
"""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "ops"))
import browser  # noqa: E402
from browser import wait, css, present, absent, view_ready, screenshot, count, attribute, text, click  # noqa: E402
from local_cluster import Cluster, ApiError  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402
import submit_experiment  # noqa: E402  (the context as det experiment create sends it)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def step(name):
    print("==", name, flush=True)


def static_files_are_served_safely(cluster):
    step("static files: content types, caching, no path traversal")
    status, headers, body = cluster.raw("/")
    check(status == 200 and b"/ui/app.js" in body, "GET / serves the UI's page: %d" % status)
    check(headers.get("Content-Type", "").startswith("text/html"), "the page is HTML: %s" % headers)
    check("default-src 'self'" in headers.get("Content-Security-Policy", ""), "the page has a CSP")
    status, headers, _ = cluster.raw("/ui/app.js")
    check(status == 200 and headers.get("Content-Type", "").startswith("text/javascript"),
          "modules are JavaScript: %d %s" % (status, headers.get("Content-Type")))
    check(headers.get("Cache-Control") == "no-cache" and headers.get("ETag"), "UI files revalidate")
    status, _, _ = cluster.raw("/ui/app.js", {"If-None-Match": headers["ETag"]})
    check(status == 304, "an unchanged file is a 304, got %d" % status)
    status, headers, _ = cluster.raw("/ui/vendor/chart.js")
    check(status == 200 and "max-age" in headers.get("Cache-Control", ""), "Chart.js is served, cached")
    secret = os.path.join(cluster.data_dir, "agent-token")
    for probe in ("/ui/../master.yaml", "/ui/%2e%2e/%2e%2e/etc/passwd", "/ui/..%2f..%2fetc%2fpasswd",
                  "/ui/%2e%2e%2f" + "%2e%2e%2f" * 8 + secret.lstrip("/").replace("/", "%2f"),
                  "/ui/views/..%2f..%2f..%2fmaster.yaml", "/ui/.hidden.js", "/ui/app.js%00.png",
                  "/ui/" + "%2e%2e/" * 10 + "etc/hostname.js"):
        status, _, body = cluster.raw(probe)
        check(status == 404, "%s must be refused, got %d %r" % (probe, status, body[:80]))


def log_in(driver, cluster, user, password=""):
    driver.get(cluster.url + "/")
    if css(driver, "#logout"):
        driver.execute_script("sessionStorage.clear()")
        driver.get(cluster.url + "/")
    wait(driver, present("#login-form"), message="the login page")
    css(driver, "#username")[0].send_keys(user)
    css(driver, "#password")[0].send_keys(password)
    css(driver, "#login-button")[0].click()
    wait(driver, present("#whoami"), message="signed in")
    wait(driver, lambda d: user in text(d, "#whoami"), message="the header names " + user)


def page_fetch(driver, method, path, body=None, accept=None):
    """A request made by the page with its session's token: the answer's status and size."""
    return driver.execute_async_script("""
        const [method, path, body, accept, done] = arguments;
        const headers = {Authorization: 'Bearer ' + sessionStorage.getItem('cairn.token')};
        if (accept) headers.Accept = accept;
        fetch(path, {method, headers, body: body === null ? undefined : JSON.stringify(body)})
          .then((r) => r.blob().then((b) => done([r.status, b.size])), (e) => done([String(e), 0]));
    """, method, path, body, accept)


def go(driver, cluster, route, view):
    driver.get(cluster.url + "/#/" + route)
    wait(driver, view_ready(view), message="view " + view)


def release(gate):
    """Lets a command blocked on `read line < gate` finish."""
    with open(gate, "w") as fifo:
        fifo.write("go\n")


def queue_shows_jobs_live(driver, cluster, shots):
    step("queue: a submitted job appears, is explained, and leaves when it finishes")
    go(driver, cluster, "queue", "queue")
    gate = cluster.path("gate")
    os.mkfifo(gate)
    task_id = cluster.submit({"entrypoint": ["sh", "-c", "read line < %s; echo released" % gate],
                              "description": "waits for the test"})
    # No reload: the page follows the event stream.
    wait(driver, present('tr[data-entity-id="%s"]' % task_id), message="the job in the queue view")
    wait(driver, present('tr[data-entity-id="%s"][data-state="STATE_SCHEDULED"]' % task_id),
         message="the job running")
    # A job that cannot be placed now (8 slots on a 4-slot agent) waits, and the page says why.
    big = cluster.submit({"entrypoint": ["true"], "description": "too big for now",
                          "resources": {"slots": 8}}, force=True)
    why = wait(driver, lambda d: text(d, 'tr[data-entity-id="%s"] td.why' % big).strip(),
               message="the queued job's explanation")
    check("8" in why, "the explanation speaks of the 8 slots it needs: %r" % why)
    screenshot(driver, shots, "queue")
    # Admins may kill it from the page.
    click(driver, 'tr[data-entity-id="%s"] button[data-action="kill"]' % big)
    wait(driver, lambda d: d.switch_to.alert, message="the kill confirmation").accept()
    wait(driver, absent('tr[data-entity-id="%s"]' % big), message="the killed job leaves the queue")
    release(gate)
    wait(driver, absent('tr[data-entity-id="%s"]' % task_id), message="the finished job leaves the queue")
    go(driver, cluster, "tasks", "tasks")
    wait(driver, present('tr[data-task-id="%s"]' % task_id), message="the command in the task list")
    screenshot(driver, shots, "tasks")
    go(driver, cluster, "task/" + task_id, "task")
    wait(driver, lambda d: "released" in text(d, "#task-logs"), message="the task's logs")
    screenshot(driver, shots, "task")
    return task_id


def grid_config(cluster):
    """grid.yaml with the checkpoint directory in the test's folder and a validation and a
    checkpoint every 100 batches; returns (YAML text, trials, training points, validation points)
    as the configuration itself implies them."""
    import yaml  # Debian's python3-yaml
    with open(os.path.join(ROOT, "examples", "spiral-mlp", "grid.yaml")) as handle:
        text = handle.read()
    text = text.replace("host_path: /tmp", "host_path: " + cluster.path("checkpoints"), 1)
    period = 100
    text += "scheduling_unit: %d\nmin_validation_period:\n  batches: %d\n" % (period, period)
    config = yaml.safe_load(text)
    trials = 1
    for hparam in config["hyperparameters"].values():
        if hparam["type"] == "categorical":
            trials *= len(hparam["vals"])
        elif hparam["type"] in ("log", "int", "double"):
            trials *= hparam["count"]
    length = config["searcher"]["max_length"]["batches"]
    points = math.ceil(length / config["scheduling_unit"])
    validations = math.ceil(length / config["min_validation_period"]["batches"])
    return text, trials, points, validations


def chart_series(driver, kind):
    return driver.execute_script("""
        const chart = window.Chart && Chart.getChart(document.getElementById(arguments[0]));
        return chart ? chart.data.datasets.map((d) => ({label: d.label, points: d.data.length})) : null;
    """, "chart-" + kind)


def experiment_has_curves(driver, cluster, shots):
    step("experiments: the spiral-mlp grid, one curve per trial")
    config_text, trials, points, validations = grid_config(cluster)
    created = cluster.call("POST", "/api/v1/experiments", {
        "config": config_text, "modelDefinition": submit_experiment.model_definition(
            os.path.join(ROOT, "examples", "spiral-mlp")), "activate": True})
    experiment_id = created["experiment"]["id"]
    go(driver, cluster, "experiments", "experiments")
    wait(driver, present('tr[data-experiment-id="%d"]' % experiment_id), message="the experiment listed")
    # The list re-renders as the trials report (live), so follow its link rather than click it.
    link = attribute(driver, 'tr[data-experiment-id="%d"] a' % experiment_id, "href")
    check(link == "#/experiment/%d" % experiment_id, "the row links to the experiment: %s" % link)
    go(driver, cluster, "experiment/%d" % experiment_id, "experiment")
    # The page follows the run live; a grid of small trials ends in a minute or two.
    wait(driver, lambda d: "COMPLETED" in text(d, "main h1 .state"), timeout=420,
         message="the experiment completed, seen live")
    go(driver, cluster, "experiments", "experiments")
    wait(driver, present('tr[data-experiment-id="%d"][data-state="STATE_COMPLETED"]' % experiment_id),
         message="completed in the list")
    screenshot(driver, shots, "experiments")
    go(driver, cluster, "experiment/%d" % experiment_id, "experiment")
    for kind, expected in (("training", points), ("validation", validations)):
        series = wait(driver, lambda d: chart_series(d, kind), message=kind + " chart")
        check(len(series) == trials, "%s: %d curves for %d trials: %s" % (kind, len(series), trials, series))
        check(all(s["points"] == expected for s in series),
              "%s: every trial's curve has %d points: %s" % (kind, expected, series))
        check(len({s["label"] for s in series}) == trials, "one curve per distinct trial: %s" % series)
    css(driver, "#log-scale")[0].click()
    wait(driver, lambda d: d.execute_script(
        "return Chart.getChart(document.getElementById('chart-validation')).options.scales.y.type")
        == "logarithmic", message="the log scale")
    click(driver, "button[data-logs-for]")
    wait(driver, lambda d: "(ended)" in text(d, "main") and text(d, "#trial-logs").strip(),
         message="the trial's logs")
    screenshot(driver, shots, "experiment")
    return experiment_id


def registry_holds_a_checkpoint(driver, cluster, experiment_id, shots):
    """A model made on the registry's page; a checkpoint of the grid registered from its
    experiment's page as the model's first version; the version links back and downloads."""
    step("model registry: a checkpoint registered from its experiment, found in the registry")
    go(driver, cluster, "models", "models")
    wait(driver, present("#model-create summary"), message="the new-model form")
    click(driver, "#model-create summary")
    css(driver, "#model-name")[0].send_keys("spiral")
    css(driver, "#model-description")[0].send_keys("the grid's best")
    css(driver, "#model-labels")[0].send_keys("demo, spiral")
    click(driver, 'button[data-action="create-model"]')
    wait(driver, lambda d: d.current_url.endswith("#/models/spiral"), message="the model's page")
    wait(driver, lambda d: "No versions yet" in text(d, "#model-body"), message="an empty model")
    go(driver, cluster, "experiment/%d" % experiment_id, "experiment")
    wait(driver, present('button[data-action="register"]'), message="a checkpoint's Register")
    uuid = attribute(driver, 'button[data-action="register"]', "data-checkpoint")
    click(driver, 'button[data-action="register"]')
    wait(driver, present("#register-form"), message="the register form")
    Select(css(driver, "#register-model")[0]).select_by_value("spiral")
    css(driver, "#register-name")[0].send_keys("first")
    click(driver, 'button[data-action="register-version"]')
    wait(driver, lambda d: "is version 1 of" in text(d, "#register-done"), message="registered")
    click(driver, "#register-done a")
    wait(driver, present('tr[data-version="1"][data-checkpoint="%s"]' % uuid),
         message="the version in the registry")
    row = 'tr[data-version="1"]'
    check(attribute(driver, row + " a", "href") == "#/experiment/%d" % experiment_id,
          "the version links to its experiment")
    screenshot(driver, shots, "model")
    # Download through the master: the tar.gz the browser is handed holds the checkpoint's files.
    status, size = page_fetch(driver, "GET", "/checkpoints/" + uuid, accept="application/gzip")
    check(status == 200 and size > 0, "the checkpoint downloads: %s, %s bytes" % (status, size))
    click(driver, row + ' button[data-action="download"]')
    wait(driver, lambda d: text(d, "#model-status") == "", message="the download handed over")
    go(driver, cluster, "models", "models")
    wait(driver, present('tr[data-model="spiral"]'), message="the model in the registry's list")
    check(text(driver, 'tr[data-model="spiral"] td.num') == "1", "one version listed")


def history_before_the_experiment(driver, cluster, experiment_id, shots):
    step("history: before the experiment the queue was empty; while it ran it was not")
    events = cluster.events()
    created = [e for e in events if "experimentCreated" in e
               and int(e["experimentCreated"].get("experimentId", 0)) == experiment_id]
    check(len(created) == 1, "one ExperimentCreated for %d" % experiment_id)
    created_at = int(created[0]["offset"])
    # While it ran: the first placement of one of its trials.
    placed = [int(e["offset"]) for e in events if int(e["offset"]) > created_at and "allocationAssigned" in e]
    check(placed, "its trials were placed")
    go(driver, cluster, "history", "history")
    for moment, empty in ((created_at - 1, True), (placed[0], False)):
        box = css(driver, "#history-moment")[0]
        box.clear()
        box.send_keys(str(moment) + "\n")
        wait(driver, present('main[data-view="history"][data-ready][data-moment="%d"]' % moment),
             message="the past at offset %d" % moment)
        is_empty = count(driver, "#history-past .table-scroll:first-of-type tr.empty") == 1
        check(is_empty == empty, "at offset %d the queue %s" % (moment, "was empty" if empty else "held jobs"))
    check(css(driver, '#history-past tr[data-job-id="experiment-%d"]' % experiment_id),
          "the experiment's job in the past queue")
    css(driver, 'tr.event-row[data-offset="%d"]' % placed[0])[0].click()
    wait(driver, present("#history-reasons"), message="the decision's reason")
    reasons = text(driver, "#history-reasons")
    check(reasons.strip(), "the placement records why")
    screenshot(driver, shots, "history")


def viewer_cannot_kill(driver, cluster, shots):
    step("a Viewer: no kill button, 403 when trying anyway, history is for admins")
    user = cluster.call("POST", "/api/v1/users", {
        "user": {"username": "vera", "admin": False, "active": True}, "password": "vera-pw",
        "isHashed": False}, user="admin")["user"]
    cluster.call("POST", "/api/v1/roles/add-assignments", {"userRoleAssignments": [{
        "userId": user["id"], "roleAssignment": {"role": {"roleId": 1}, "scopeWorkspaceId": 1}}]},
        user="admin")
    gate = cluster.path("gate-viewer")
    os.mkfifo(gate)
    task_id = cluster.submit({"entrypoint": ["sh", "-c", "read line < %s" % gate]})
    log_in(driver, cluster, "vera", "vera-pw")
    go(driver, cluster, "queue", "queue")
    row = 'tr[data-entity-id="%s"]' % task_id
    wait(driver, present(row), message="the viewer sees the job")
    check(count(driver, row + ' button[data-action="kill"]') == 0, "no kill button for a Viewer")
    check(count(driver, row + " input") == 0, "no priority or weight inputs for a Viewer")
    check(count(driver, "button[data-action]") == 0, "no actions anywhere on the Viewer's queue")
    screenshot(driver, shots, "queue-viewer")
    status, _ = page_fetch(driver, "POST", "/api/v1/commands/%s/kill" % task_id)
    check(status == 403, "a Viewer's kill is refused with 403, got %s" % status)
    go(driver, cluster, "history", "history")
    wait(driver, present("#history-forbidden"), message="history says it is for admins")
    go(driver, cluster, "timeline?entity=task/" + task_id, "timeline")
    wait(driver, present("#timeline-forbidden"), message="timelines say they are for admins")
    release(gate)
    cluster.login("vera", "vera-pw")
    try:
        cluster.call("POST", "/api/v1/commands/%s/kill" % task_id, user="vera")
        check(False, "the API refuses the Viewer too")
    except ApiError as error:
        check(error.status == 403, "403 from the API, got %d" % error.status)


def launch_from_the_page(driver, cluster, kind, fields):
    """Fills the tasks view's launch form of `kind` and submits it; returns the new task's id."""
    go(driver, cluster, "tasks?kind=" + kind, "tasks")
    wait(driver, present("#launch summary"), message="the launch form of " + kind)
    if css(driver, "#launch")[0].get_attribute("open") is None:
        click(driver, "#launch summary")
    for selector, value in fields.items():
        element = css(driver, selector)[0]
        element.clear()
        element.send_keys(value)
    click(driver, 'button[data-action="launch"]')
    wait(driver, lambda d: "#/task/" in d.current_url, message="the launched %s's page" % kind)
    wait(driver, view_ready("task"), message="the task view")
    return driver.current_url.split("#/task/")[1]


def tasks_of_every_kind(driver, cluster, experiment_id, shots):
    """The tasks view lists one kind at a time, each from its own route, chosen on the page, and
    launches each kind for those who may."""
    step("tasks of every kind, launched from the page")
    # The Viewer (signed in by the step before) is offered no launch.
    go(driver, cluster, "tasks?kind=notebook", "tasks")
    wait(driver, present("#launch-area[data-ready]"), message="the launch area settled")
    check(not css(driver, "#launch-form"), "no launch form for a Viewer")
    status, _ = page_fetch(driver, "POST", "/api/v1/notebooks", {"config": {}})
    check(status == 403, "a Viewer's launch is refused with 403, got %s" % status)
    log_in(driver, cluster, "admin")
    # A TensorBoard over the grid experiment: bad ids are refused on the page, then it launches.
    go(driver, cluster, "tasks?kind=tensorboard", "tasks")
    wait(driver, present("#launch summary"), message="the TensorBoard launch form")
    click(driver, "#launch summary")
    css(driver, "#launch-experiments")[0].send_keys("twelve")
    click(driver, 'button[data-action="launch"]')
    wait(driver, lambda d: "ids are numbers" in text(d, "#launch-error"),
         message="the bad id said where it was typed")
    screenshot(driver, shots, "tasks-launch-form")
    tensorboard_id = launch_from_the_page(driver, cluster, "tensorboard",
                                          {"#launch-experiments": str(experiment_id)})
    wait(driver, lambda d: "tensorboard" in text(d, "dl.kv"), message="the TensorBoard's page")
    tensorboard = cluster.call("GET", "/api/v1/tensorboards/" + tensorboard_id, user="admin")
    check(tensorboard["tensorboard"]["experimentIds"] == [experiment_id],
          "the TensorBoard is over the experiment: %s" % tensorboard)
    # A notebook, with no slots, from the page.
    notebook_id = launch_from_the_page(driver, cluster, "notebook", {
        "#launch-slots": "0", "#launch-description": "ui-notebook"})
    screenshot(driver, shots, "notebook-launched")
    go(driver, cluster, "tasks?kind=notebook", "tasks")
    wait(driver, present('tr[data-task-id="%s"][data-kind="notebook"]' % notebook_id),
         message="the notebook in the list of notebooks")
    check(not css(driver, 'tr[data-kind="command"]'), "no command among the notebooks")
    screenshot(driver, shots, "tasks-notebooks")
    # Choosing another kind on the page lists that kind.
    Select(css(driver, "#task-kind")[0]).select_by_value("command")
    wait(driver, present('tr[data-kind="command"]'), message="the commands, chosen on the page")
    check(not css(driver, 'tr[data-task-id="%s"]' % notebook_id), "the notebook is not a command")
    # Filtered by state and owner on the page, by the list's own route.
    Select(css(driver, "#task-state")[0]).select_by_value("STATE_TERMINATED")
    wait(driver, lambda d: "states=STATE_TERMINATED" in d.current_url
         and count(d, 'main[data-ready] tr[data-kind="command"]') > 0, message="the ended commands")
    states = driver.execute_script(
        "return [...document.querySelectorAll('tr[data-kind]')].map((r) => r.dataset.state)")
    check(states and set(states) == {"STATE_TERMINATED"}, "only ended commands: %s" % states)
    css(driver, "#task-owner")[0].send_keys("nobody\n")
    wait(driver, lambda d: "match these filters" in text(d, "#tasks-body"),
         message="no command of nobody's, and the filters named as why")
    check(Select(css(driver, "#task-state")[0]).first_selected_option.get_attribute("value")
          == "STATE_TERMINATED", "the filters stay chosen")
    try:
        cluster.call("GET", "/api/v1/commands?states=STATE_SLEEPING", user="admin")
        check(False, "an unknown state is refused")
    except ApiError as error:
        check(error.status == 400 and "STATE_SLEEPING" in error.body, "an unknown state is named: %s" % error)
    go(driver, cluster, "tasks?kind=command", "tasks")
    Select(css(driver, "#task-kind")[0]).select_by_value("shell")
    wait(driver, lambda d: "No shells yet" in text(d, "#tasks-body"),
         message="an empty kind says how to start one")
    # A shell's page says how to connect to it.
    shell_id = cluster.call("POST", "/api/v1/shells", {"config": {"resources": {"slots": 0}}},
                            user="admin")["shell"]["id"]
    go(driver, cluster, "task/" + shell_id, "task")
    wait(driver, lambda d: text(d, "#task-ssh") == "cairn shell ssh " + shell_id,
         message="the shell's ssh line")
    try:
        cluster.call("POST", "/api/v1/tasks/%s/kill" % shell_id, user="admin")
    except ApiError:
        pass  # it may have ended already
    # Its page: a Viewer gets no kill button; an admin kills it from there.
    log_in(driver, cluster, "vera", "vera-pw")
    go(driver, cluster, "task/" + notebook_id, "task")
    check(not css(driver, 'button[data-action="kill"]'), "a Viewer sees no kill on a notebook")
    log_in(driver, cluster, "admin")
    go(driver, cluster, "task/" + notebook_id, "task")
    # Once Jupyter is ready, Open reaches it through the master's proxy in a new tab.
    wait(driver, present('button[data-action="open"]'), timeout=120,
         message="the ready notebook's Open button")
    page = driver.current_window_handle
    click(driver, 'button[data-action="open"]')
    wait(driver, lambda d: len(d.window_handles) > 1, message="a tab for the notebook")
    driver.switch_to.window([handle for handle in driver.window_handles if handle != page][0])
    wait(driver, lambda d: "/proxy/%s/" % notebook_id in d.current_url
         and "jupyter" in d.page_source.lower(), timeout=60, message="Jupyter through the proxy")
    screenshot(driver, shots, "notebook-through-proxy")
    driver.close()
    driver.switch_to.window(page)
    wait(driver, present('button[data-action="kill"]'), message="an admin's kill on the notebook")
    click(driver, 'button[data-action="kill"]')
    wait(driver, lambda d: d.switch_to.alert, message="the kill confirmation").accept()
    wait(driver, lambda d: "kill requested" in text(d, "#task-status"),
         message="the notebook's kill requested from its page")
    # Its timeline, from the log: submitted by admin, placed by the scheduler with its reason,
    # the kill asked for by admin.
    click(driver, "#task-timeline")
    wait(driver, view_ready("timeline"), message="the notebook's timeline")
    wait(driver, present('tr[data-action="KillRequested"]'), message="the kill on the timeline")
    # Read in one go: the view redraws as the log grows.
    actions, placed = driver.execute_script("""
        const rows = [...document.querySelectorAll('#timeline-body tr[data-action]')];
        const placement = document.querySelector('tr[data-action="AllocationAssigned"] td.why');
        return [rows.map((r) => r.dataset.action), placement ? placement.textContent : ''];
    """)
    check(actions[0] == "TaskSubmitted", "the timeline starts with the submission: %s" % actions)
    check("AllocationAssigned" in actions, "the placement is on the timeline: %s" % actions)
    check("zero-slot" in placed, "the placement says why: %s" % placed)
    screenshot(driver, shots, "timeline")


def openpai_job_from_the_page(driver, cluster, shots):
    """An OpenPAI job submitted from its JSON on the page: a bad field is named, a good job runs
    to SUCCEEDED and its page shows its task role's task."""
    step("OpenPAI: a bad field named, then a job submitted from the page succeeds")
    job = {"jobName": "hello-pai", "image": "cairn/python3", "retryCount": 0,
           "taskRoles": [{"name": "main", "taskNumber": 1, "cpuNumber": 1, "memoryMB": 50,
                          "gpuNumber": 1, "command": "echo hello from pai"}]}
    go(driver, cluster, "jobs", "jobs")
    click(driver, "#job-submit summary")
    driver.execute_script("arguments[0].value = arguments[1]", css(driver, "#job-json")[0],
                          json.dumps(job))
    click(driver, 'button[data-action="submit-job"]')
    wait(driver, lambda d: "taskRoles[0].memoryMB must be at least 100" in text(d, "#job-error"),
         message="the bad field named on the page")
    screenshot(driver, shots, "openpai-refused")
    job["taskRoles"][0]["memoryMB"] = 256
    driver.execute_script("arguments[0].value = arguments[1]", css(driver, "#job-json")[0],
                          json.dumps(job))
    click(driver, 'button[data-action="submit-job"]')
    wait(driver, lambda d: d.current_url.endswith("#/jobs/admin/hello-pai"), message="the job's page")
    wait(driver, lambda d: "SUCCEEDED" in text(d, "main h1 .state"), timeout=120,
         message="the job succeeded, seen live")
    wait(driver, present('tr[data-role="main"][data-index="0"]'), message="its task")
    screenshot(driver, shots, "openpai-job")
    go(driver, cluster, "jobs", "jobs")
    wait(driver, present('tr[data-job="hello-pai"][data-state="SUCCEEDED"]'),
         message="the job in the list")


def workspace_project_and_a_moved_experiment(driver, cluster, experiment_id, shots):
    """A workspace and a project made from the pages; the grid experiment moved into the project
    from its page, then listed among the project's experiments; the workspace pinned."""
    step("workspaces: a workspace and a project made, an experiment moved into it")
    go(driver, cluster, "workspaces", "workspaces")
    click(driver, "#workspace-create summary")
    css(driver, "#workspace-create-name")[0].send_keys("vision")
    click(driver, 'button[data-action="workspace-create"]')
    wait(driver, lambda d: "Workspace vision" in text(d, "main h1"), message="the new workspace's page")
    click(driver, "#project-create summary")
    css(driver, "#project-create-name")[0].send_keys("detection")
    click(driver, 'button[data-action="project-create"]')
    wait(driver, present('tr[data-project="detection"]'), message="the new project")
    project_id = attribute(driver, 'tr[data-project="detection"]', "data-project-id")
    go(driver, cluster, "experiment/%d" % experiment_id, "experiment")
    click(driver, 'button[data-action="move"]')
    wait(driver, present("#move-form"), message="the move form")
    Select(css(driver, "#move-project")[0]).select_by_visible_text("vision / detection")
    click(driver, 'button[data-action="move-to"]')
    wait(driver, lambda d: "Moved to vision / detection" in text(d, "#move-done"), message="moved")
    go(driver, cluster, "workspaces", "workspaces")
    wait(driver, present('tr[data-workspace="vision"]'), message="the workspace listed")
    click(driver, 'tr[data-workspace="vision"] button[data-action="pin"]')
    wait(driver, present('tr[data-workspace="vision"][data-pinned="true"]'), message="pinned")
    check(attribute(driver, "#workspaces-body tbody tr", "data-workspace") == "vision",
          "a pinned workspace comes first")
    screenshot(driver, shots, "workspaces")
    click(driver, 'tr[data-workspace="vision"] a')
    wait(driver, present('tr[data-project="detection"]'), message="the workspace's projects")
    click(driver, 'tr[data-project="detection"] a')
    wait(driver, view_ready("experiments"), message="the project's experiments")
    wait(driver, present('tr[data-experiment-id="%d"]' % experiment_id),
         message="the moved experiment among the project's")
    check(count(driver, "#experiments-body tr[data-experiment-id]") == 1,
          "only the project's experiments are listed")
    moved = cluster.call("GET", "/api/v1/experiments/%d" % experiment_id, user="admin")
    check(str(moved["experiment"]["projectId"]) == project_id,
          "the API agrees: %s" % moved["experiment"]["projectId"])


def administration(driver, cluster, shots):
    """Admins make a user, give them a role, reset their password, deactivate them, drain and
    enable the agent, and read the master's masked configuration and log; a Viewer is offered no
    Admin page and is refused when forcing it."""
    step("administration: users, roles, agents, the master's configuration and log")
    log_in(driver, cluster, "admin")
    go(driver, cluster, "admin", "admin")
    wait(driver, present('tr[data-user="admin"]'), message="the users")
    click(driver, "#new-user summary")
    css(driver, "#new-user-name")[0].send_keys("olga")
    css(driver, "#new-user-password")[0].send_keys("olga-pw-1")
    click(driver, 'button[data-action="create-user"]')
    wait(driver, present('tr[data-user="olga"][data-active="true"]'), message="the new user")
    click(driver, "#roles summary")
    Select(css(driver, "#role-user")[0]).select_by_visible_text("olga")
    Select(css(driver, "#role-role")[0]).select_by_visible_text("Editor")
    Select(css(driver, "#role-workspace")[0]).select_by_visible_text("Uncategorized")
    click(driver, 'button[data-action="assign-role"]')
    wait(driver, lambda d: "assigned Editor of Uncategorized for olga" in text(d, "#admin-status"),
         message="the role assigned")
    olga_id = cluster.call("GET", "/api/v1/users/olga/by-username", user="admin")["user"]["id"]
    roles = cluster.call("GET", "/api/v1/roles/search/by-user/%d" % olga_id, user="admin")
    check("Editor" in json.dumps(roles), "the API has olga as an Editor: %s" % roles)
    click(driver, 'tr[data-user="olga"] button[data-action="reset-password"]')
    prompt = wait(driver, lambda d: d.switch_to.alert, message="the password prompt")
    prompt.send_keys("olga-pw-2")
    prompt.accept()
    wait(driver, lambda d: "olga's password reset" in text(d, "#admin-status"), message="reset")
    cluster.login("olga", "olga-pw-2")
    click(driver, 'tr[data-user="olga"] button[data-action="deactivate"]')
    wait(driver, present('tr[data-user="olga"][data-active="false"]'), message="deactivated")
    click(driver, 'tr[data-agent="agent-1"] button[data-action="drain"]')
    wait(driver, present('tr[data-agent="agent-1"][data-enabled="false"]'), message="draining")
    click(driver, 'tr[data-agent="agent-1"] button[data-action="enable"]')
    wait(driver, present('tr[data-agent="agent-1"][data-enabled="true"]'), message="enabled again")
    wait(driver, lambda d: "log" in text(d, "#admin-config") and text(d, "#admin-logs"),
         message="the configuration and the log")
    screenshot(driver, shots, "admin")
    # A Viewer: no Admin in the navigation, and the page and the API refuse them.
    log_in(driver, cluster, "vera", "vera-pw")
    check(not css(driver, '[data-nav="admin"]')[0].is_displayed(), "no Admin link for a Viewer")
    go(driver, cluster, "admin", "admin")
    wait(driver, present("#admin-forbidden"), message="the page says it is for admins")
    try:
        cluster.call("POST", "/api/v1/agents/agent-1/disable", {"drain": True}, user="vera")
        check(False, "the API refuses a Viewer's disable")
    except ApiError as error:
        check(error.status == 403, "403 for a Viewer's disable, got %d" % error.status)


def recount_utilization(events):
    """The cluster's counts after each event, recomputed here from the log as docs/events.md
    ("Utilization") defines them: [(time in µs, slots total, slots used, tasks waiting)]."""
    agents = {}  # id -> [incarnation, slots, connected]
    tasks = {}   # id -> {"held", "allocation", "parts": {agent: slots}}
    newest_epoch = 0
    moments = []
    for event in events:
        epoch = int(event.get("writerEpoch", 0))
        if "writerEpochClaimed" in event:
            newest_epoch = max(newest_epoch, int(event["writerEpochClaimed"].get("epoch", 0)))
            continue
        if epoch < newest_epoch:
            continue  # fenced off: it never happened
        if "agentRegistered" in event:
            e = event["agentRegistered"]
            agents[e["agentId"]] = [e.get("incarnation", ""), int(e.get("slotCount", 0)), True]
        elif "agentDisconnected" in event:
            e = event["agentDisconnected"]
            agent = agents.get(e["agentId"])
            if agent and e.get("incarnation", "") in ("", agent[0]):
                agent[2] = False
        elif "taskSubmitted" in event:
            tasks.setdefault(event["taskSubmitted"]["taskId"], {"held": False, "allocation": "", "parts": {}})
        elif "taskExited" in event:
            tasks.pop(event["taskExited"]["taskId"], None)
        elif "taskHeld" in event:
            task = tasks.get(event["taskHeld"]["taskId"])
            if task:
                task["held"] = bool(event["taskHeld"].get("held", False))
        elif "allocationAssigned" in event:
            e = event["allocationAssigned"]
            task = tasks.get(e["taskId"])
            if task and not task["allocation"]:
                task["allocation"] = e["allocationId"]
                parts = e.get("parts") or [{"agentId": e.get("agentId", ""), "slotIds": e.get("slotIds", [])}]
                for part in parts:
                    task["parts"][part.get("agentId", "")] = (task["parts"].get(part.get("agentId", ""), 0)
                                                             + len(part.get("slotIds", [])))
        elif "allocationPartExited" in event:
            e = event["allocationPartExited"]
            task = tasks.get(e["taskId"])
            if task and task["allocation"] == e["allocationId"]:
                task["parts"].pop(e.get("agentId", ""), None)
        elif "allocationReleased" in event:
            e = event["allocationReleased"]
            task = tasks.get(e["taskId"])
            if task and task["allocation"] == e["allocationId"]:
                task["allocation"], task["parts"] = "", {}
        else:
            continue
        moments.append((int(event["timeUnixMicros"]),
                        sum(a[1] for a in agents.values() if a[2]),
                        sum(sum(t["parts"].values()) for t in tasks.values()),
                        sum(1 for t in tasks.values() if not t["held"] and not t["allocation"])))
    return moments


def micros(rfc3339):
    """RFC 3339 with microseconds and a Z (the master's form) -> unix microseconds, exactly."""
    import calendar
    whole, fraction = rfc3339.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) * 1000000 + int(fraction.ljust(6, "0"))


def utilization_matches_the_log(driver, cluster, shots):
    step("cluster: the slots used and the queue over the last hour match a recount from the log")
    go(driver, cluster, "cluster", "cluster")
    wait(driver, present('#utilization[data-points="60"] tr[data-time]'), message="the utilization points")
    # One read of the table, the chart's data and the window: a live refresh may redraw them.
    page = driver.execute_script("""
        const rows = [...document.querySelectorAll('#utilization tr[data-time]')].map((r) => ({
          time: r.dataset.time, used: Number(r.dataset.slotsUsed), total: Number(r.dataset.slotsTotal),
          waiting: Number(r.dataset.tasksWaiting),
          peak: r.lastElementChild.textContent.split(' / ').map(Number)}));
        const chart = window.Chart && Chart.getChart(document.getElementById('utilization-chart'));
        return {rows, from: document.getElementById('utilization').dataset.from,
                drawn: chart ? chart.data.datasets.map((d) => d.data.map((p) => p.y)) : null};""")
    rows = page["rows"]
    check(len(rows) == 60, "60 points: %d" % len(rows))
    check(page["drawn"] is not None and page["drawn"][0] == [r["used"] for r in rows]
          and page["drawn"][2] == [r["waiting"] for r in rows]
          and page["drawn"][3] == [r["peak"][0] for r in rows], "the chart draws the table's points")
    moments = recount_utilization(cluster.events())
    check(moments, "the log holds changes to count")

    def at(when):
        counts = (0, 0, 0)
        for moment in moments:
            if moment[0] <= when:
                counts = moment[1:]
        return counts

    start = micros(page["from"])
    # The last point ends now: an event stamped just before the read may not have been folded
    # yet, so it is left out; every other point is in the past.
    for row in rows[:-1]:
        end = micros(row["time"])
        expected = at(end)
        check((row["total"], row["used"], row["waiting"]) == expected,
              "at %s the chart shows %s, the log says %s" % (row["time"], row, expected))
        within = [m[1:] for m in moments if start < m[0] <= end] + [at(start)]
        peak = [max(c[1] for c in within), max(c[2] for c in within)]
        check(row["peak"] == peak, "the peak up to %s is %s, the log says %s" % (row["time"], row["peak"], peak))
        start = end
    check(max(r["peak"][0] for r in rows) > 0 and max(r["peak"][1] for r in rows) > 0,
          "the hour held slots used and tasks waiting: %s" % rows)
    screenshot(driver, shots, "cluster-utilization")


INTERACTIVE_ROLES = {"button", "link", "textbox", "combobox", "checkbox", "spinbutton", "searchbox",
                     "slider", "radio", "menuitem", "tab", "switch", "ListBox", "listbox"}


def unnamed_controls(driver):
    """Controls Chromium's accessibility tree gives no name (what a screen reader would announce
    as just "button"), and the landmarks the page has."""
    tree = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})
    unnamed, landmarks = [], set()
    for node in tree["nodes"]:
        if node.get("ignored"):
            continue
        role = node.get("role", {}).get("value", "")
        name = str(node.get("name", {}).get("value", "")).strip()
        if role in ("main", "navigation", "banner"):
            landmarks.add(role)
        if role in INTERACTIVE_ROLES and not name:
            unnamed.append(role + " #" + str(node.get("backendDOMNodeId")))
    return unnamed, landmarks


def set_width(driver, width, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def narrow_and_accessible(driver, cluster, experiment_id, shots):
    step("every view: controls named in the accessibility tree, keyboard reachable, usable at 390 px")
    log_in(driver, cluster, "admin")  # an admin's pages have every form and button
    views = [("cluster", "cluster"), ("queue", "queue"), ("workspaces", "workspaces"),
             ("experiments", "experiments"), ("experiment/%d" % experiment_id, "experiment"),
             ("tasks", "tasks"), ("models", "models"), ("jobs", "jobs"), ("history", "history"),
             ("timeline", "timeline"), ("admin", "admin")]
    driver.execute_cdp_cmd("Accessibility.enable", {})
    for route, view in views:
        go(driver, cluster, route, view)
        unnamed, landmarks = unnamed_controls(driver)
        check(not unnamed, "the %s view has controls without a name: %s (%s)" % (
            view, unnamed, driver.execute_script(
                "return [...document.querySelectorAll('input,select,button,textarea')].filter((e) =>"
                 " !e.labels?.length && !e.getAttribute('aria-label') &&"
                " !(e.tagName === 'BUTTON' && e.textContent.trim()) &&"
                " !e.placeholder).map((e) => e.outerHTML.slice(0, 120))")))
        check(landmarks >= {"main", "navigation", "banner"}, "the %s view's landmarks: %s" % (view, landmarks))
    # The keyboard alone: Tab from the page's start reaches the navigation and the chart's window,
    # and Enter on a link follows it.
    go(driver, cluster, "cluster", "cluster")
    driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    reached = []
    for _ in range(60):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        focused = driver.execute_script(
            "const e = document.activeElement; return e.id || e.getAttribute('href') || e.tagName")
        reached.append(focused)
        if focused == "utilization-window":
            break
    check("#/queue" in reached and "utilization-window" in reached,
          "Tab reaches the navigation and the chart's window: %s" % reached)
    for _ in range(reached.index("utilization-window") - reached.index("#/queue")):
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    check(driver.execute_script("return document.activeElement.getAttribute('href')") == "#/queue",
          "Shift+Tab goes back to the queue's link")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, view_ready("queue"), message="Enter on the queue's link")
    # A phone's width: no view is wider than the screen (wide tables scroll in their own box) and
    # the navigation still reaches every view.
    set_width(driver, 390, 844)
    try:
        for route, view in views:
            go(driver, cluster, route, view)
            width = driver.execute_script("return document.documentElement.scrollWidth")
            check(width <= 390, "at 390 px the %s view is %d px wide" % (view, width))
            screenshot(driver, shots, "narrow-" + view)
        hidden = driver.execute_script(
            "return [...document.querySelectorAll('#nav a:not([hidden])')].filter((a) => {"
            " const r = a.getBoundingClientRect(); return r.width === 0 || r.left < 0 || r.right > 390;"
            "}).map((a) => a.textContent)")
        check(not hidden, "at 390 px every link of the navigation is on the screen: %s are not" % hidden)
    finally:
        set_width(driver, 1280, 800)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    browser.require_browser()
    cluster = Cluster(args.bin, "ui")
    driver = None
    started = time.monotonic()
    try:
        # Roles on: the UI hides what a Viewer may not do (the master's default, basic, has none).
        cluster.start_master("security:\n  authz:\n    type: rbac\n")
        # OpenPAI jobs name an image, which a process agent runs on the host when allowed.
        cluster.start_agent("agent-1", 4, ["--allow-images-on-host"])
        static_files_are_served_safely(cluster)
        driver = browser.start_browser()
        step("log in, see the agent")
        driver.get(cluster.url + "/")
        wait(driver, present("#login-form"), message="the login page")
        screenshot(driver, args.screenshots, "login")
        css(driver, "#username")[0].send_keys("admin")
        css(driver, "#login-button")[0].click()
        wait(driver, view_ready("cluster"), message="the cluster view")
        wait(driver, present('tr[data-agent="agent-1"]'), message="the agent")
        slots = css(driver, 'tr[data-agent="agent-1"] .slot')
        check(len(slots) == 4, "the agent's 4 slots are drawn: %d" % len(slots))
        screenshot(driver, args.screenshots, "cluster")
        queue_shows_jobs_live(driver, cluster, args.screenshots)
        experiment_id = experiment_has_curves(driver, cluster, args.screenshots)
        registry_holds_a_checkpoint(driver, cluster, experiment_id, args.screenshots)
        history_before_the_experiment(driver, cluster, experiment_id, args.screenshots)
        workspace_project_and_a_moved_experiment(driver, cluster, experiment_id, args.screenshots)
        viewer_cannot_kill(driver, cluster, args.screenshots)
        tasks_of_every_kind(driver, cluster, experiment_id, args.screenshots)
        openpai_job_from_the_page(driver, cluster, args.screenshots)
        administration(driver, cluster, args.screenshots)
        utilization_matches_the_log(driver, cluster, args.screenshots)
        narrow_and_accessible(driver, cluster, experiment_id, args.screenshots)
        # The refusals the steps provoke on purpose: a Viewer's 403s, the OpenPAI job's bad field.
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
                  and "403" not in entry["message"] and "401" not in entry["message"]
                  and not ("/api/v1/user/admin/jobs" in entry["message"]
                           and "400" in entry["message"])]
        check(not errors, "no errors in the browser's console: %s" % errors)
        print("web UI test passed in %.0f s" % (time.monotonic() - started))
    except Exception:
        if driver is not None:
            screenshot(driver, args.screenshots, "failure")
            print("page at failure:", driver.current_url, flush=True)
            for entry in driver.get_log("browser"):
                print("console:", entry, flush=True)
        raise
    finally:
        if driver is not None:
            driver.quit()
        cluster.stop()


if __name__ == "__main__":
    main()
