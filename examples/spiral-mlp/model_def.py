"""A one-hidden-layer MLP classifying three interleaved spirals, in pure Python.

Cairn's example model: small enough that 100 batches train in a fraction of a second on one CPU,
hard enough that the learning rate, the hidden layer's width and the L2 penalty really move the
validation loss, so a hyperparameter search on it means something.

Everything is deterministic: the dataset and the initial weights come from fixed seeds, and the
samples of batch b depend on b alone. A run resumed from a checkpoint therefore reports exactly the
metrics an uninterrupted run reports.
"""

import json
import math
import os
import random

import cairn_harness

CLASSES = 3
TRAIN_POINTS_PER_CLASS = 200
VALIDATION_POINTS_PER_CLASS = 100
NOISE = 0.25
# Clipping the gradient norm keeps large learning rates from overflowing to NaN: a bad learning
# rate should show up as a bad validation loss, not as a crashed trial.
MAX_GRADIENT_NORM = 5.0
STATE_FILE = "state.json"


def spiral_points(points_per_class, rng):
    """[(x0, x1)], [label]: `points_per_class` noisy points on each of the three spiral arms."""
    xs, ys = [], []
    for label in range(CLASSES):
        for i in range(points_per_class):
            radius = i / points_per_class
            angle = label * 2.0 * math.pi / CLASSES + radius * 4.0 + rng.gauss(0.0, NOISE)
            xs.append((radius * math.sin(angle), radius * math.cos(angle)))
            ys.append(label)
    return xs, ys


class SpiralTrial(cairn_harness.Trial):
    def __init__(self, context):
        super().__init__(context)
        seed_text = os.environ.get("SPIRAL_DATASET_SEED")
        if seed_text is None:
            # The experiment's startup-hook.sh exports it: failing here means the hook did not run.
            raise RuntimeError("SPIRAL_DATASET_SEED is not set: was startup-hook.sh sourced?")
        self.dataset_seed = int(seed_text)
        self.learning_rate = float(context.get_hparam("learning_rate"))
        self.hidden_size = int(context.get_hparam("hidden_size"))
        self.l2 = float(context.hparams.get("l2", 0.0))
        self.momentum = float(context.hparams.get("momentum", 0.9))
        self.batch_size = int(context.global_batch_size)
        if self.batch_size <= 0:
            raise ValueError("global_batch_size must be a positive hyperparameter")

        data_rng = random.Random(self.dataset_seed)
        self.train_x, self.train_y = spiral_points(TRAIN_POINTS_PER_CLASS, data_rng)
        self.validation_x, self.validation_y = spiral_points(VALIDATION_POINTS_PER_CLASS, data_rng)
        self._epoch = None
        self._order = None

        # He initialisation, seeded by the width so every trial of a search starts reproducibly.
        init_rng = random.Random(1000 + self.hidden_size)
        scale1 = math.sqrt(2.0 / 2)
        scale2 = math.sqrt(2.0 / self.hidden_size)
        self.params = {
            "w1x": [init_rng.gauss(0.0, scale1) for _ in range(self.hidden_size)],
            "w1y": [init_rng.gauss(0.0, scale1) for _ in range(self.hidden_size)],
            "b1": [0.0] * self.hidden_size,
            "w2": [[init_rng.gauss(0.0, scale2) for _ in range(self.hidden_size)]
                   for _ in range(CLASSES)],
            "b2": [0.0] * CLASSES,
        }
        self.velocity = {
            "w1x": [0.0] * self.hidden_size,
            "w1y": [0.0] * self.hidden_size,
            "b1": [0.0] * self.hidden_size,
            "w2": [[0.0] * self.hidden_size for _ in range(CLASSES)],
            "b2": [0.0] * CLASSES,
        }

    # --- the Trial API -----------------------------------------------------------------------

    def train_batches(self, batches, start_batch):
        total_loss = 0.0
        total_correct = 0
        for batch in range(start_batch, start_batch + batches):
            loss, correct = self._train_step(self._batch_indices(batch))
            total_loss += loss
            total_correct += correct
        samples = batches * self.batch_size
        return {"loss": total_loss / samples, "accuracy": total_correct / samples}

    def validate(self):
        total_loss = 0.0
        correct = 0
        for point, label in zip(self.validation_x, self.validation_y):
            _, logits = self._forward(point)
            loss, predicted = _cross_entropy(logits, label)
            total_loss += loss
            correct += predicted == label
        count = len(self.validation_y)
        return {"validation_loss": total_loss / count, "accuracy": correct / count}

    def save(self, path):
        state = {
            "hidden_size": self.hidden_size,
            "dataset_seed": self.dataset_seed,
            "params": self.params,
            "velocity": self.velocity,
        }
        # JSON writes floats with repr(), which reads back to the identical double.
        with open(os.path.join(path, STATE_FILE), "w", encoding="utf-8") as f:
            json.dump(state, f)

    def load(self, path):
        with open(os.path.join(path, STATE_FILE), encoding="utf-8") as f:
            state = json.load(f)
        if state["hidden_size"] != self.hidden_size or state["dataset_seed"] != self.dataset_seed:
            raise ValueError(f"checkpoint {path} was written for hidden_size="
                             f"{state['hidden_size']}, dataset seed {state['dataset_seed']}")
        self.params = state["params"]
        self.velocity = state["velocity"]

    # --- the model ---------------------------------------------------------------------------

    def _batch_indices(self, batch):
        """Sample indices of global batch `batch`: consecutive slices of per-epoch shuffles."""
        count = len(self.train_y)
        indices = []
        for position in range(batch * self.batch_size, (batch + 1) * self.batch_size):
            epoch, offset = divmod(position, count)
            if epoch != self._epoch:
                self._order = list(range(count))
                random.Random(self.dataset_seed * 7919 + epoch).shuffle(self._order)
                self._epoch = epoch
            indices.append(self._order[offset])
        return indices

    def _forward(self, point):
        p = self.params
        x0, x1 = point
        hidden = [max(0.0, a * x0 + b * x1 + c) for a, b, c in zip(p["w1x"], p["w1y"], p["b1"])]
        logits = [sum(w * h for w, h in zip(row, hidden)) + bias
                  for row, bias in zip(p["w2"], p["b2"])]
        return hidden, logits

    def _train_step(self, indices):
        p = self.params
        size = self.hidden_size
        grad = {
            "w1x": [0.0] * size,
            "w1y": [0.0] * size,
            "b1": [0.0] * size,
            "w2": [[0.0] * size for _ in range(CLASSES)],
            "b2": [0.0] * CLASSES,
        }
        w2_columns = list(zip(*p["w2"]))
        total_loss = 0.0
        correct = 0
        for index in indices:
            point = self.train_x[index]
            label = self.train_y[index]
            hidden, logits = self._forward(point)
            loss, predicted = _cross_entropy(logits, label)
            total_loss += loss
            correct += predicted == label
            top = max(logits)
            exps = [math.exp(v - top) for v in logits]
            norm = sum(exps)
            dlogits = [e / norm for e in exps]
            dlogits[label] -= 1.0
            for k in range(CLASSES):
                dk = dlogits[k]
                grad["b2"][k] += dk
                grad["w2"][k] = [g + dk * h for g, h in zip(grad["w2"][k], hidden)]
            dhidden = [sum(w * d for w, d in zip(column, dlogits)) if h > 0.0 else 0.0
                       for column, h in zip(w2_columns, hidden)]
            x0, x1 = point
            grad["w1x"] = [g + d * x0 for g, d in zip(grad["w1x"], dhidden)]
            grad["w1y"] = [g + d * x1 for g, d in zip(grad["w1y"], dhidden)]
            grad["b1"] = [g + d for g, d in zip(grad["b1"], dhidden)]

        count = len(indices)
        flat = _flatten(grad)
        norm = math.sqrt(sum(g * g for g in flat)) / count
        scale = 1.0 / count if norm <= MAX_GRADIENT_NORM else MAX_GRADIENT_NORM / (norm * count)
        for name in ("w1x", "w1y", "b1", "b2"):
            p[name], self.velocity[name] = self._update(p[name], self.velocity[name], grad[name],
                                                        scale, decay=name != "b1" and name != "b2")
        for k in range(CLASSES):
            p["w2"][k], self.velocity["w2"][k] = self._update(
                p["w2"][k], self.velocity["w2"][k], grad["w2"][k], scale, decay=True)
        return total_loss, correct

    def _update(self, weights, velocity, gradient, scale, decay):
        """SGD with momentum; L2 only on weights, not biases."""
        lr, mu, l2 = self.learning_rate, self.momentum, self.l2 if decay else 0.0
        new_velocity = [mu * v - lr * (g * scale + l2 * w)
                        for w, v, g in zip(weights, velocity, gradient)]
        return [w + v for w, v in zip(weights, new_velocity)], new_velocity


def _cross_entropy(logits, label):
    """(loss, predicted class) of one sample, computed stably with log-sum-exp."""
    top = max(logits)
    log_norm = top + math.log(sum(math.exp(v - top) for v in logits))
    return log_norm - logits[label], logits.index(top)


def _flatten(grad):
    flat = grad["w1x"] + grad["w1y"] + grad["b1"] + grad["b2"]
    for row in grad["w2"]:
        flat += row
    return flat
