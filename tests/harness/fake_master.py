"""A fake Cairn master for the harness tests: the three allocation endpoints of PROTOCOL.md.

It hands out a fixed plan of workloads (answer k for sequence k), records every request, applies
each result once even when the harness repeats a sequence, and can inject failures: a 5xx before
handling, or a dropped connection after the result was applied (the harness must then repeat the
same call). Gates (GET /test/gate/NAME) let a test's model block until the test releases it.
"""

import base64
import http.server
import json
import threading

GATE_TIMEOUT_SECONDS = 30


class Gate:
    def __init__(self):
        self.entered = threading.Event()
        self.release = threading.Event()


class FakeMaster:
    def __init__(self, *, trial, files, workloads, allocation_id="alloc-7", tls_context=None):
        self.allocation_id = allocation_id
        self.trial = trial
        self.files = files
        self.workloads = list(workloads)
        self.lock = threading.Lock()
        # Every request as (method, path, decoded JSON body or None), repeats included.
        self.requests = []
        # The `completed` value of each distinct sequence, applied once, in order.
        self.results = []
        # Errors to answer the trial GET with before the real answer: [(status, body)].
        self.trial_errors = []
        # sequence -> faults to inject, consumed in order: "503" or "drop-after-apply".
        self.workload_faults = {}
        self.protocol_errors = []
        self._next_sequence = 0
        self._accepted_bodies = {}
        self._gates = {}
        self._server = None
        self._thread = None
        self._tls_context = tls_context  # an ssl.SSLContext: serve HTTPS

    # --- lifecycle -------------------------------------------------------------------------

    def start(self):
        master = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                master._handle(self, "GET")

            def do_POST(self):
                master._handle(self, "POST")

            def log_message(self, format, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self._tls_context is not None:
            self._server.socket = self._tls_context.wrap_socket(self._server.socket,
                                                                server_side=True)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        with self.lock:
            for gate in self._gates.values():
                gate.release.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self):
        host, port = self._server.server_address
        scheme = "http" if self._tls_context is None else "https"
        return f"{scheme}://{host}:{port}"

    def gate(self, name):
        with self.lock:
            return self._gates.setdefault(name, Gate())

    def workload_posts(self):
        with self.lock:
            return [body for method, path, body in self.requests if path.endswith("/workloads")]

    # --- request handling ------------------------------------------------------------------

    def _handle(self, handler, method):
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        path = handler.path
        with self.lock:
            self.requests.append((method, path, body))

        if method == "GET" and path.startswith("/test/gate/"):
            gate = self.gate(path[len("/test/gate/"):])
            gate.entered.set()
            gate.release.wait(GATE_TIMEOUT_SECONDS)
            return _answer(handler, 200, {})

        prefix = f"/api/v1/allocations/{self.allocation_id}/"
        if not path.startswith(prefix):
            return _answer(handler, 404, {"code": 5, "message": f"no allocation at {path}"})
        endpoint = (method, path[len(prefix):])
        if endpoint == ("GET", "trial"):
            with self.lock:
                error = self.trial_errors.pop(0) if self.trial_errors else None
            if error:
                return _answer(handler, error[0], error[1])
            return _answer(handler, 200, self.trial)
        if endpoint == ("GET", "context"):
            return _answer(handler, 200, {"files": self.files})
        if endpoint == ("POST", "workloads"):
            return self._workloads(handler, raw, body)
        return _answer(handler, 404, {"code": 5, "message": f"no route {method} {path}"})

    def _workloads(self, handler, raw, body):
        sequence = body.get("sequence")
        with self.lock:
            faults = self.workload_faults.get(sequence, [])
            fault = faults.pop(0) if faults else None
            if fault == "503":
                status, answer, drop = 503, {"code": 14, "message": "master busy"}, False
            else:
                status, answer = self._apply(sequence, raw, body)
                drop = fault == "drop-after-apply"
        if drop:
            # The result is applied but the answer is lost: the harness sees a dead connection.
            handler.close_connection = True
            return None
        return _answer(handler, status, answer)

    def _apply(self, sequence, raw, body):
        """Called under the lock: (status, answer) for one workload call."""
        if sequence == self._next_sequence - 1:
            if self._accepted_bodies[sequence] != raw:
                self.protocol_errors.append(f"sequence {sequence} repeated with another body")
                return 400, {"code": 3, "message": "repeated sequence with a different body"}
            return 200, {"workload": self._workload(sequence)}
        if sequence != self._next_sequence:
            self.protocol_errors.append(f"sequence {sequence}, expected {self._next_sequence}")
            return 400, {"code": 3, "message": f"expected sequence {self._next_sequence}"}
        completed = body.get("completed")
        if (sequence == 0) != (completed is None):
            self.protocol_errors.append(f"sequence {sequence} with completed={completed!r}")
            return 400, {"code": 3, "message": "completed must be null exactly at sequence 0"}
        if completed is not None:
            self.results.append(completed)
        self._accepted_bodies[sequence] = raw
        self._next_sequence += 1
        return 200, {"workload": self._workload(sequence)}

    def _workload(self, sequence):
        if sequence < len(self.workloads):
            return self.workloads[sequence]
        return {"kind": "EXIT", "reason": "the fake master's plan is exhausted"}


def _answer(handler, status, payload):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True  # The harness is gone (a test killed it); nobody to tell.


def file_entry(path, content, mode=0o644):
    """One context file as the master sends it."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return {"path": path, "content": base64.b64encode(data).decode("ascii"), "mode": mode}
