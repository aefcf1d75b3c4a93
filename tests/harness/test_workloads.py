"""The workload loop against a fake master: result shapes, checkpoints, repeats, user errors."""

import os
import unittest
import uuid

from harness_support import HarnessTestCase, counter_context


def train(batches, start):
    return {"kind": "TRAIN", "batches": batches, "startBatch": start}


VALIDATE = {"kind": "VALIDATE"}
CHECKPOINT = {"kind": "CHECKPOINT"}
EXIT = {"kind": "EXIT", "reason": "searcher done"}


def counter_weight(rate, batches):
    """CounterTrial's weight after `batches` batches: rate * (1 + 2 + ... + batches)."""
    return rate * batches * (batches + 1) / 2


class WorkloadLoopTest(HarnessTestCase):
    def test_train_validate_checkpoint_exit_with_the_protocol_shapes(self):
        master = self.start_master(
            files=counter_context(),
            workloads=[train(5, 0), VALIDATE, CHECKPOINT, train(3, 5), CHECKPOINT, EXIT])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertEqual(master.protocol_errors, [])

        posts = master.workload_posts()
        self.assertEqual([post["sequence"] for post in posts], [0, 1, 2, 3, 4, 5])
        self.assertIsNone(posts[0]["completed"])
        self.assertEqual(sorted(posts[0]), ["completed", "sequence"])

        train1, validate, checkpoint1, train2, checkpoint2 = master.results
        self.assertEqual(train1, {"kind": "TRAIN", "batches": 5,
                                  "metrics": {"loss": 1 / (1 + counter_weight(0.5, 5)),
                                              "end_batch": 5}})
        self.assertEqual(validate, {"kind": "VALIDATE",
                                    "metrics": {"validation_loss": 1 / (1 + counter_weight(0.5, 5)),
                                                "train_calls": 1}})
        self.assertEqual(train2["metrics"]["loss"], 1 / (1 + counter_weight(0.5, 8)))

        for checkpoint, batches in ((checkpoint1, 5), (checkpoint2, 8)):
            self.assertEqual(sorted(checkpoint), ["batches", "kind", "metadata", "resources",
                                                  "sizeBytes", "uuid"])
            self.assertEqual(checkpoint["kind"], "CHECKPOINT")
            self.assertEqual(uuid.UUID(checkpoint["uuid"]).version, 4)
            self.assertEqual(checkpoint["batches"], batches)
            self.assertEqual(checkpoint["metadata"]["steps_completed"], batches)
            directory = os.path.join(self.checkpoint_dir, checkpoint["uuid"])
            on_disk = {}
            for parent, _, names in os.walk(directory):
                for name in names:
                    full = os.path.join(parent, name)
                    on_disk[os.path.relpath(full, directory)] = os.path.getsize(full)
            self.assertEqual(checkpoint["resources"], on_disk)
            self.assertEqual(set(on_disk), {"state.json", "extra/notes.txt"})
            self.assertEqual(checkpoint["sizeBytes"], sum(on_disk.values()))
        self.assertNotEqual(checkpoint1["uuid"], checkpoint2["uuid"])

        lines = [line for line in harness.stdout.splitlines()
                 if line.startswith("cairn-harness: ") and line.split()[1] in
                 ("TRAIN", "VALIDATE", "CHECKPOINT", "EXIT")]
        self.assertEqual(len(lines), 6, harness.stdout)
        self.assertTrue(lines[0].startswith("cairn-harness: TRAIN 5 batches (0 -> 5): loss="),
                        lines[0])
        self.assertTrue(lines[3].startswith("cairn-harness: TRAIN 3 batches (5 -> 8): "), lines[3])

    def test_a_lost_answer_and_a_5xx_repeat_the_same_call_and_apply_it_once(self):
        master = self.start_master(files=counter_context(),
                                   workloads=[train(4, 0), VALIDATE, EXIT])
        master.workload_faults = {1: ["drop-after-apply", "503"], 2: ["503"]}
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertEqual(master.protocol_errors, [])

        posts = master.workload_posts()
        self.assertEqual([post["sequence"] for post in posts], [0, 1, 1, 1, 2, 2])
        self.assertEqual(posts[1], posts[2])
        self.assertEqual(posts[1], posts[3])
        # Applied once; the trial trained once; it validated after exactly those 4 batches.
        self.assertEqual([result["kind"] for result in master.results], ["TRAIN", "VALIDATE"])
        self.assertEqual(master.results[1]["metrics"],
                         {"validation_loss": 1 / (1 + counter_weight(0.5, 4)), "train_calls": 1})
        self.assertIn("retrying", harness.stderr)

    def test_an_exception_in_user_code_exits_1_with_its_traceback(self):
        master = self.start_master(files=counter_context(),
                                   workloads=[train(4, 0), VALIDATE, EXIT],
                                   environmentVariables=["TEST_FAIL_IN_TRAIN=1"])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("Traceback", harness.stderr)
        self.assertIn("ValueError: model exploded at batch 0", harness.stderr)
        self.assertEqual([post["sequence"] for post in master.workload_posts()], [0])
        self.assertEqual(master.results, [])

    def test_a_train_that_does_not_continue_from_the_trials_batches_is_refused(self):
        master = self.start_master(files=counter_context(), workloads=[train(4, 0), train(4, 10)])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("train from batch 10, but this trial is at batch 4", harness.stderr)

    def test_a_save_that_fails_exits_1_and_leaves_no_checkpoint_directory(self):
        master = self.start_master(files=counter_context(),
                                   workloads=[train(2, 0), CHECKPOINT, EXIT],
                                   environmentVariables=["TEST_FAIL_IN_SAVE=1"])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("OSError: disk full while saving", harness.stderr)
        self.assertEqual([result["kind"] for result in master.results], ["TRAIN"])
        # Only the TensorBoard event files of the training before it.
        self.assertEqual(os.listdir(self.checkpoint_dir), ["tensorboard"])


if __name__ == "__main__":
    unittest.main()
