#!/usr/bin/env python3
"""ops/check-includes.py over small trees: the plan's allowed includes pass, and each kind of
breach (an upward folder, the dispatcher from a room, an undeclared room, a room the plan does not
know, the floor reaching past the state's parts) fails naming the file."""

import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "ops" / "check-includes.py"


def check(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            file = pathlib.Path(root) / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text)
        result = subprocess.run([sys.executable, str(SCRIPT), "--root", root],
                                capture_output=True, text=True)
        return result.returncode, result.stdout


ALLOWED = {
    "base/status.h": "",
    "events/limits.h": '#include "base/status.h"\n',
    "commands/decision.h": '#include "events/limits.h"\n',
    "commands/decision_state.h": '#include "commands/tasks/task_records.h"\n',
    "commands/decider.cpp": '#include "commands/tasks/task_decider.h"\n',
    "commands/tasks/task_records.h": "",
    "commands/tasks/task_decider.h": ('#include "commands/decision.h"\n'
                                      '#include "commands/decision_state.h"\n'
                                      '#include "commands/scheduler/scheduler.h"\n'),
    "commands/scheduler/scheduler.h": '#include "commands/decision_state.h"\n#include <map>\n',
    "api/call.h": '#include "commands/decider.h"\n#include "events.pb.h"\n',
}


class CheckIncludesTest(unittest.TestCase):
    def test_the_plan_passes(self):
        code, out = check(ALLOWED)
        self.assertEqual(code, 0, out)

    def test_the_repository_passes(self):
        result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)

    def assert_breach(self, path, text, words, named=None):
        code, out = check({**ALLOWED, path: text})
        self.assertEqual(code, 1, out)
        self.assertIn(named or path, out)
        self.assertIn(words, out)

    def test_an_upward_folder_fails(self):
        self.assert_breach("events/log.h", '#include "commands/decision.h"\n', "events/ may include")

    def test_a_room_including_the_dispatcher_fails(self):
        self.assert_breach("commands/tasks/queue.cpp", '#include "commands/decider.h"\n',
                           "includes the floor only")

    def test_an_undeclared_room_fails(self):
        self.assert_breach("commands/scheduler/fit.cpp", '#include "commands/tasks/task_records.h"\n',
                           "has not declared commands/tasks/")

    def test_a_room_the_plan_does_not_know_fails(self):
        self.assert_breach("commands/billing/bill.h", '#include "commands/decision.h"\n',
                           "a room with no entry in DOMAINS", named="commands/billing/")

    def test_the_floor_reaching_past_the_state_fails(self):
        self.assert_breach("commands/decision_state.h",
                           '#include "commands/tasks/task_decider.h"\n', "the floor includes only")


if __name__ == "__main__":
    unittest.main()
