"""Resuming from latestCheckpoint: the example model, run through the real harness (startup hook
included), reports exactly the metrics of an uninterrupted run."""

import unittest

from harness_support import EXAMPLE_DIR, HarnessTestCase, context_from_dir

EXIT = {"kind": "EXIT", "reason": "done"}
VALIDATE = {"kind": "VALIDATE"}
HPARAMS = {"global_batch_size": 16, "learning_rate": 0.1, "hidden_size": 12, "l2": 0.0001,
           "momentum": 0.9}


def train(batches, start):
    return {"kind": "TRAIN", "batches": batches, "startBatch": start}


class ResumeTest(HarnessTestCase):
    def run_example(self, name, workloads, **trial_overrides):
        master = self.start_master(files=context_from_dir(EXAMPLE_DIR), workloads=workloads,
                                   entrypoint="model_def:SpiralTrial", hparams=HPARAMS,
                                   globalBatchSize=16, **trial_overrides)
        code, harness, _ = self.run_harness(master, name=name)
        self.assertExit(harness, code, 0)
        self.assertEqual(master.protocol_errors, [])
        return master.results

    def test_a_run_resumed_from_a_checkpoint_matches_an_uninterrupted_run(self):
        straight = self.run_example("straight", [train(100, 0), VALIDATE, train(100, 100),
                                                 VALIDATE, train(100, 200), VALIDATE, EXIT])
        first = self.run_example("first", [train(100, 0), VALIDATE, train(100, 100),
                                           {"kind": "CHECKPOINT"}, EXIT])
        checkpoint = first[3]
        self.assertEqual(checkpoint["batches"], 200)
        resumed = self.run_example(
            "resumed", [train(100, 200), VALIDATE, EXIT],
            latestCheckpoint={"uuid": checkpoint["uuid"], "batches": 200}, batchesCompleted=200)

        self.assertEqual(first[:3], straight[:3])
        self.assertEqual(resumed, straight[4:6])
        # Guards the comparison: training did change the model between the validations.
        self.assertLess(straight[5]["metrics"]["validation_loss"],
                        straight[1]["metrics"]["validation_loss"])


if __name__ == "__main__":
    unittest.main()
