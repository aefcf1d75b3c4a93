"""SIGTERM: the first one never cuts a batch short; the master's answers still decide; a second one
ends the process with 143."""

import signal
import unittest

from harness_support import WAIT_SECONDS, HarnessTestCase, counter_context

PLAN = [{"kind": "TRAIN", "batches": 6, "startBatch": 0}, {"kind": "VALIDATE"},
        {"kind": "CHECKPOINT"}, {"kind": "EXIT", "reason": "preempted"}]
SIGTERM_LINE = "SIGTERM received"


class SigtermTest(HarnessTestCase):
    def start_blocked_in_train(self):
        """A harness whose trial is inside train_batches, held at the gate "train"."""
        master = self.start_master(files=counter_context(), workloads=PLAN,
                                   environmentVariables=["TEST_GATE=train"])
        harness, _ = self.start_harness(master)
        gate = master.gate("train")
        self.assertTrue(gate.entered.wait(WAIT_SECONDS), harness.stderr)
        return master, harness, gate

    def test_sigterm_mid_train_finishes_the_batch_and_follows_the_master(self):
        master, harness, gate = self.start_blocked_in_train()
        harness.process.send_signal(signal.SIGTERM)
        self.assertTrue(harness.wait_for_stdout(SIGTERM_LINE), harness.stdout)
        gate.release.set()

        code = harness.wait()
        self.assertExit(harness, code, 0)
        self.assertEqual([result["kind"] for result in master.results],
                         ["TRAIN", "VALIDATE", "CHECKPOINT"])
        # The interrupted call still trained all its batches.
        self.assertEqual(master.results[0]["batches"], 6)
        self.assertEqual(master.results[0]["metrics"]["end_batch"], 6)
        self.assertEqual(master.results[2]["batches"], 6)
        self.assertIn("EXIT at 6 batches: preempted", harness.stdout)

    def test_a_second_sigterm_exits_143_at_once(self):
        master, harness, gate = self.start_blocked_in_train()
        harness.process.send_signal(signal.SIGTERM)
        self.assertTrue(harness.wait_for_stdout(SIGTERM_LINE), harness.stdout)
        harness.process.send_signal(signal.SIGTERM)

        code = harness.wait()
        self.assertExit(harness, code, 143)
        self.assertEqual(master.results, [])
        gate.release.set()


if __name__ == "__main__":
    unittest.main()
