"""HTTP/JSON calls from the trial process to the master, with the protocol's retry rules.

Connection errors and 5xx answers are retried with exponential backoff until `retry_seconds` have
passed since the first failure of the call; then, or on any 4xx, the call raises HarnessError and
the process exits 1. Retrying is safe because every call of the protocol is idempotent (the
workload call carries its sequence number). An https:// master is verified against `cafile` (or
the system's CAs); a certificate that fails verification is fatal at once, since retrying cannot
help.
"""

import http.client
import json
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_RETRY_SECONDS = 60.0
# Longer than any answer the master should take; a half-open connection then costs one timeout,
# and the call is retried like any other connection error.
REQUEST_TIMEOUT_SECONDS = 120.0
FIRST_BACKOFF_SECONDS = 0.1
MAX_BACKOFF_SECONDS = 5.0


class HarnessError(Exception):
    """A fatal condition the harness reports in one line and exits 1 on (no traceback)."""


class MasterClient:
    def __init__(self, master_url, allocation_id, *, retry_seconds=DEFAULT_RETRY_SECONDS,
                 log=None, token=None, cafile=None):
        self._base = (master_url.rstrip("/") + "/api/v1/allocations/" +
                      urllib.parse.quote(allocation_id, safe=""))
        self._retry_seconds = retry_seconds
        self._token = token  # a secret: never logged
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        # The master is addressed directly; an http_proxy in the agent's environment must not
        # capture calls to 127.0.0.1 or a cluster-internal address.
        handlers = [urllib.request.ProxyHandler({})]
        if master_url.startswith("https://"):
            # Verifies the chain and the host name; TLS 1.2 at least, like the master.
            context = ssl.create_default_context(cafile=cafile)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    def get_trial(self):
        return self._call("GET", "/trial", None)

    def get_context(self):
        return self._call("GET", "/context", None)

    def post_workloads(self, sequence, completed):
        return self._call("POST", "/workloads", {"sequence": sequence, "completed": completed})

    def _call(self, method, suffix, body):
        url = self._base + suffix
        # Encoded once so that a retried call repeats exactly the same bytes.
        data = None if body is None else json.dumps(body, allow_nan=False).encode("utf-8")
        deadline = None
        backoff = FIRST_BACKOFF_SECONDS
        while True:
            request = urllib.request.Request(url, data=data, method=method)
            request.add_header("Accept", "application/json")
            if self._token:
                request.add_header("Authorization", "Bearer " + self._token)
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with self._opener.open(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                    payload = response.read()
                return _decode(method, url, payload)
            except urllib.error.HTTPError as error:
                error_body = _read_error_body(error)
                if error.code < 500:
                    raise HarnessError(
                        f"{method} {url} answered {error.code}: {error_body}") from None
                failure = f"{error.code}: {error_body}"
            except urllib.error.URLError as error:
                if isinstance(error.reason, ssl.SSLCertVerificationError):
                    raise HarnessError(f"{method} {url}: the master's certificate failed "
                                       f"verification: {error.reason.verify_message}") from None
                failure = str(error.reason) or type(error).__name__
            except (http.client.HTTPException, OSError) as error:
                failure = str(getattr(error, "reason", error)) or type(error).__name__
            now = time.monotonic()
            if deadline is None:
                deadline = now + self._retry_seconds
            if now >= deadline:
                raise HarnessError(f"{method} {url} still failing after {self._retry_seconds:g} s: "
                                   f"{failure}")
            wait = min(backoff, deadline - now)
            self._log(f"cairn-harness: {method} {url} failed ({failure}); retrying in {wait:.1f} s")
            time.sleep(wait)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)


def _decode(method, url, payload):
    try:
        return json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HarnessError(f"{method} {url} answered with invalid JSON ({error}): "
                           f"{payload[:200]!r}") from None


def _read_error_body(error):
    try:
        return error.read().decode("utf-8", "replace").strip() or "(empty body)"
    except (OSError, http.client.HTTPException):
        return "(body unreadable)"
