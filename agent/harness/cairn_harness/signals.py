"""SIGTERM handling: the master, not the signal, decides when a trial stops.

The first SIGTERM is only noted, so a batch is never cut in half; the master learns of the stop
through its own channels and answers the next workload call with CHECKPOINT and then EXIT. A second
SIGTERM means whoever sent it has stopped waiting: the process exits 143 at once.
"""

import os
import signal
import sys

EXIT_CODE_SECOND_SIGTERM = 143  # 128 + SIGTERM, what a shell reports for a process it killed.

_received = 0


def install():
    signal.signal(signal.SIGTERM, _on_sigterm)


def received():
    """How many SIGTERMs this process has seen."""
    return _received


def _on_sigterm(signum, frame):
    global _received
    _received += 1
    # os.write, not print: the handler may run while print() is inside the buffered stdout, and
    # the buffer refuses reentrant use.
    if _received == 1:
        _write_raw(b"cairn-harness: SIGTERM received; the current workload finishes and the "
                   b"master decides what follows\n")
        return
    _write_raw(b"cairn-harness: second SIGTERM received; exiting now\n")
    try:
        sys.stdout.flush()
    except Exception:  # A reentrant flush fails; losing buffered output beats not exiting.
        pass
    os._exit(EXIT_CODE_SECOND_SIGTERM)


def _write_raw(data):
    try:
        os.write(1, data)
    except OSError:
        pass
