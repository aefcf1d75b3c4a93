"""A real local Cairn cluster for the browser tests: cairn-master on port 0 of 127.0.0.1 over a
temporary data directory, and cairn-agent processes, started as the e2e tests start them. Waits
read the processes' own lines (blocking reads), never sleep."""
import json
import os
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body))
        self.status = status
        self.body = body


class Cluster:
    def __init__(self, binary_dir, name="cluster"):
        self.binary_dir = binary_dir
        self.dir = tempfile.TemporaryDirectory(prefix="cairn-web-%s-" % name)
        self.data_dir = os.path.join(self.dir.name, "data")
        self.processes = []
        self.url = None
        self.tokens = {}

    def path(self, *parts):
        return os.path.join(self.dir.name, *parts)

    def _start(self, argv, ready_prefix):
        """Starts a process and returns the first stdout line that starts with ready_prefix."""
        log = open(self.path(os.path.basename(argv[0]) + "-%d.log" % len(self.processes)), "w")
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True)
        self.processes.append(process)
        for line in process.stdout:
            if line.startswith(ready_prefix):
                # The rest of its output is not needed, but the pipe must neither fill up nor
                # close (a write to a closed pipe would kill the process).
                threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
                return line.strip()
        raise RuntimeError("%s ended before printing %r (see %s)" % (argv[0], ready_prefix, log.name))

    def start_master(self, extra_config=""):
        config = self.path("master.yaml")
        with open(config, "w") as out:
            out.write("port: 0\ndata_dir: %s\nagent_timeout_seconds: 30\n%s" % (self.data_dir, extra_config))
        line = self._start([os.path.join(self.binary_dir, "cairn-master"), "--config", config],
                           "cairn-master listening on")
        self.url = line.split()[-1]

    def start_agent(self, agent_id, slots, extra_args=()):
        self._start([os.path.join(self.binary_dir, "cairn-agent"), "--master", self.url, "--id", agent_id,
                     "--slots", str(slots), "--work-root", self.path("agent-" + agent_id),
                     "--heartbeat-interval", "1",
                     "--agent-token-file", os.path.join(self.data_dir, "agent-token")] + list(extra_args),
                    "cairn-agent %s registered" % agent_id)

    def login(self, user, password=""):
        answer = self.call("POST", "/api/v1/auth/login",
                           {"username": user, "password": password, "isHashed": False}, user=None)
        self.tokens[user] = answer["token"]
        return answer["token"]

    def call(self, method, path, body=None, user="determined"):
        headers = {"Content-Type": "application/json"}
        if user is not None:
            if user not in self.tokens:
                self.login(user)
            headers["Authorization"] = "Bearer " + self.tokens[user]
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                text = response.read().decode()
                return json.loads(text) if text else {}
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, error.read().decode()) from None

    def raw(self, path, headers=None):
        """GET without a session: (status, headers, body bytes)."""
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def events(self, user="admin"):
        """Every event the log holds now, oldest first."""
        if user not in self.tokens:
            self.login(user)
        request = urllib.request.Request(self.url + "/api/v1/events",
                                         headers={"Authorization": "Bearer " + self.tokens[user]})
        with urllib.request.urlopen(request, timeout=120) as response:
            return [json.loads(line) for line in response if line.strip()]

    def submit(self, config, user="determined", force=False):
        body = {"config": config}
        if force:
            body["force"] = True
        return self.call("POST", "/api/v1/commands", body, user=user)["command"]["id"]

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.dir.cleanup()
