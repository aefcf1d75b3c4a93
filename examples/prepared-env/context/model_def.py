"""A regression trial whose features come from a package of its prepared environment.

`prepared_features` is not in this directory: the experiment's runtime_packages (or a --package
upload) installs it into the environment the agent prepares. The trial refuses to run unless
startup-hook.sh ran inside that environment and the runtime command of its slot type did too.
"""

import json
import os
import sys

import cairn_harness
import prepared_features

# y = 0.5 - x + 3 x^2, learnt from features [1, x, x^2].
TARGET = (0.5, -1.0, 3.0)
VALIDATION_POINTS = 50


def sample(index):
    """The index-th x in [-1, 1]: a function of the index alone, so a resumed trial sees the same
    data as one that never stopped."""
    return ((index * 7919) % 2001) / 1000.0 - 1.0


def target(x):
    return sum(weight * x ** power for power, weight in enumerate(TARGET))


def check_environment():
    """Where this trial runs: inside the prepared environment, after the hook and the commands."""
    prefix = os.environ.get("PREPARED_HOOK_PREFIX")
    if prefix != sys.prefix or sys.prefix == sys.base_prefix:
        raise RuntimeError(f"startup-hook.sh saw python3 at {prefix!r}, but the trial runs in "
                           f"{sys.prefix!r}: not in the same prepared environment")
    with open(os.path.join(sys.prefix, "slot-type.txt"), encoding="utf-8") as f:
        prepared_for = f.read().strip()
    if prepared_for != os.environ.get("CAIRN_SLOT_TYPE"):
        raise RuntimeError(f"the environment's runtime command was {prepared_for!r}'s, the slots "
                           f"are {os.environ.get('CAIRN_SLOT_TYPE')!r}")


class FeatureTrial(cairn_harness.Trial):
    def __init__(self, context):
        super().__init__(context)
        check_environment()
        self.learning_rate = float(context.get_hparam("learning_rate"))
        self.batch_size = context.global_batch_size
        self.weights = [0.0] * len(TARGET)

    def _predict(self, x):
        return sum(w * f for w, f in zip(self.weights, prepared_features.features(x)))

    def train_batches(self, batches, start_batch):
        loss = 0.0
        for batch in range(start_batch, start_batch + batches):
            gradient = [0.0] * len(self.weights)
            loss = 0.0
            for i in range(self.batch_size):
                x = sample(batch * self.batch_size + i)
                error = self._predict(x) - target(x)
                loss += error * error / self.batch_size
                for k, feature in enumerate(prepared_features.features(x)):
                    gradient[k] += 2 * error * feature / self.batch_size
            self.weights = [w - self.learning_rate * g for w, g in zip(self.weights, gradient)]
        return {"loss": loss}

    def validate(self):
        xs = [-1.0 + 2.0 * i / (VALIDATION_POINTS - 1) for i in range(VALIDATION_POINTS)]
        loss = sum((self._predict(x) - target(x)) ** 2 for x in xs) / len(xs)
        return {"validation_loss": loss, "features_version": float(prepared_features.VERSION)}

    def save(self, path):
        with open(os.path.join(path, "weights.json"), "w", encoding="utf-8") as f:
            json.dump(self.weights, f)

    def load(self, path):
        with open(os.path.join(path, "weights.json"), encoding="utf-8") as f:
            self.weights = json.load(f)
