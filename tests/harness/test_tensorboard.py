"""TensorBoard event files from the harness: a failure to write them never fails the trial, and
the encoder's edge cases (numbers beyond float32, non-numbers). The files' contents are checked
by a decoder of their own in tensorboard_test.cpp; here the stand-in's Python decoder reads them."""

import math
import os
import shutil
import sys
import tempfile
import unittest

from harness_support import REPO, HarnessTestCase, counter_context

sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import fake_tensorboard  # noqa: E402  (tests/tools is not a package)

from cairn_harness import tfevents  # noqa: E402

WARNING = "cairn-harness: warning: TensorBoard event files are not written"


def train(batches, start):
    return {"kind": "TRAIN", "batches": batches, "startBatch": start}


def read_events(path):
    with open(path, "rb") as f:
        return [fake_tensorboard.decode_event(record)
                for record in fake_tensorboard.read_records(f.read())]


class TrialEventFilesTest(HarnessTestCase):
    def test_a_storage_that_cannot_hold_event_files_warns_once_and_the_trial_goes_on(self):
        os.makedirs(self.checkpoint_dir)
        # A file where the tensorboard directory would go.
        with open(os.path.join(self.checkpoint_dir, "tensorboard"), "w") as f:
            f.write("in the way")
        master = self.start_master(
            files=counter_context(),
            workloads=[train(2, 0), {"kind": "VALIDATE"}, train(2, 2), {"kind": "CHECKPOINT"},
                       {"kind": "EXIT", "reason": "done"}])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertEqual([result["kind"] for result in master.results],
                         ["TRAIN", "VALIDATE", "TRAIN", "CHECKPOINT"])
        self.assertEqual(harness.stderr.count(WARNING), 1, harness.stderr)

    def test_without_checkpoint_storage_the_trial_warns_once_and_goes_on(self):
        master = self.start_master(files=counter_context(),
                                   workloads=[train(2, 0), {"kind": "VALIDATE"},
                                              {"kind": "EXIT", "reason": "done"}],
                                   checkpointDir="")
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertEqual(len(master.results), 2)
        self.assertEqual(harness.stderr.count(WARNING), 1, harness.stderr)


class EncoderTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="cairn-tfevents-test-")
        self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)

    def write(self, scalars, step=7):
        """The events of a new file with one write of `scalars`."""
        writer = tfevents.EventFileWriter(tempfile.mkdtemp(dir=self.directory))
        writer.add_scalars(step, scalars, wall_time=1.5)
        writer.close()
        return read_events(writer.path)

    def test_numbers_beyond_float32_become_infinities(self):
        events = self.write({"big": 1e300, "small": -1e300, "huge_int": 10 ** 400, "one": 1})
        self.assertEqual(events[1][2], [("big", math.inf), ("small", -math.inf),
                                        ("huge_int", math.inf), ("one", 1.0)])

    def test_only_numbers_are_written(self):
        events = self.write({"flag": True, "name": "x", "loss": 0.5})
        self.assertEqual(events[1], (1.5, 7, [("loss", 0.5)]))
        # Nothing numeric: no event at all, only the file's version record.
        self.assertEqual(len(self.write({"flag": False})), 1)

    def test_negative_steps_are_int64(self):
        self.assertEqual(self.write({"loss": 0.5}, step=-3)[1][1], -3)


if __name__ == "__main__":
    unittest.main()
