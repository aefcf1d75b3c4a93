"""The example model (examples/spiral-mlp) in-process: hyperparameters move the metric, it is fast,
save/load round-trips, and its configs name what the model defines."""

import importlib.util
import os
import re
import tempfile
import time
import unittest
from unittest import mock

import cairn_harness
from cairn_harness.runner import load_entrypoint
from harness_support import EXAMPLE_DIR

DEFAULTS = {"global_batch_size": 32, "learning_rate": 0.1, "hidden_size": 16, "l2": 0.0001,
            "momentum": 0.9}


def load_model_module():
    spec = importlib.util.spec_from_file_location("spiral_model_def",
                                                  os.path.join(EXAMPLE_DIR, "model_def.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODEL = load_model_module()


def hook_seed():
    with open(os.path.join(EXAMPLE_DIR, "startup-hook.sh"), encoding="utf-8") as f:
        return re.search(r"^export SPIRAL_DATASET_SEED=(\d+)$", f.read(), re.M).group(1)


def make_trial(**hparams):
    merged = dict(DEFAULTS, **hparams)
    context = cairn_harness.TrialContext(
        hparams=merged, trial_id=1, experiment_id=1, request_id=1,
        global_batch_size=merged["global_batch_size"], records_per_epoch=0, latest_checkpoint=None)
    with mock.patch.dict(os.environ, {"SPIRAL_DATASET_SEED": hook_seed()}):
        return MODEL.SpiralTrial(context)


def validation_loss_after(batches, **hparams):
    trial = make_trial(**hparams)
    trial.train_batches(batches, 0)
    return trial.validate()["validation_loss"]


class ExampleModelTest(unittest.TestCase):
    def test_hyperparameters_change_the_validation_loss(self):
        # Measured spreads are several times these margins: a learning rate 10x too small or too
        # large, or a layer too narrow for three spirals, loses clearly to the defaults.
        good = validation_loss_after(300)
        self.assertLess(good, validation_loss_after(300, learning_rate=0.01) - 0.2)
        self.assertLess(good, validation_loss_after(300, learning_rate=1.0) - 0.2)
        self.assertLess(good, validation_loss_after(300, hidden_size=4) - 0.1)
        self.assertNotEqual(good, validation_loss_after(300, l2=0.01))

    def test_training_learns_the_spirals(self):
        trial = make_trial()
        before = trial.validate()
        trial.train_batches(500, 0)
        after = trial.validate()
        self.assertLess(after["validation_loss"], before["validation_loss"] / 3)
        self.assertGreater(after["accuracy"], 0.9)

    def test_one_hundred_batches_take_well_under_half_a_second(self):
        trial = make_trial(hidden_size=48)  # the widest of the configs' search spaces
        durations = []
        # CPU time, the best of three: the claim is about the model's work, not about how a busy
        # CI machine shares its cores (wall time under a parallel build failed this once).
        for attempt in range(3):
            started = time.process_time()
            trial.train_batches(100, attempt * 100)
            durations.append(time.process_time() - started)
        self.assertLess(min(durations), 0.5)

    def test_save_and_load_continue_training_identically(self):
        straight = make_trial()
        straight.train_batches(150, 0)
        expected = (straight.train_batches(70, 150), straight.validate())

        interrupted = make_trial()
        interrupted.train_batches(150, 0)
        with tempfile.TemporaryDirectory() as path:
            interrupted.save(path)
            resumed = make_trial()
            resumed.load(path)
        self.assertEqual((resumed.train_batches(70, 150), resumed.validate()), expected)

    def test_the_model_refuses_to_run_without_its_startup_hook(self):
        context = cairn_harness.TrialContext(
            hparams=DEFAULTS, trial_id=1, experiment_id=1, request_id=1, global_batch_size=32,
            records_per_epoch=0, latest_checkpoint=None)
        with mock.patch.dict(os.environ, clear=False) as environment:
            environment.pop("SPIRAL_DATASET_SEED", None)
            with self.assertRaisesRegex(RuntimeError, "startup-hook.sh"):
                MODEL.SpiralTrial(context)

    def test_configs_name_the_model_and_its_hyperparameters(self):
        for name in ("const.yaml", "grid.yaml", "adaptive_asha.yaml"):
            with self.subTest(config=name):
                with open(os.path.join(EXAMPLE_DIR, name), encoding="utf-8") as f:
                    text = f.read()
                entrypoint = re.search(r"^entrypoint: (\S+)$", text, re.M).group(1)
                self.assertEqual(load_entrypoint(entrypoint, EXAMPLE_DIR).__name__, "SpiralTrial")
                for hparam in DEFAULTS:
                    self.assertRegex(text, rf"(?m)^  {hparam}:$")
                self.assertIn("metric: validation_loss", text)
                self.assertIn("host_path: /tmp", text)
                self.assertIn("storage_path: cairn-checkpoints", text)


if __name__ == "__main__":
    unittest.main()
