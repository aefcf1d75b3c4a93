"""The Trial API that model code implements, and the context the harness hands it.

The harness owns the loop (which workload runs when, checkpoint directories, reporting); a Trial
only knows how to train some batches, validate, and save or load its complete state.
"""


class TrialContext:
    """What a trial knows about itself when it is constructed. Read-only by convention."""

    def __init__(self, *, hparams, trial_id, experiment_id, request_id, global_batch_size,
                 records_per_epoch, latest_checkpoint):
        self.hparams = hparams
        self.trial_id = trial_id
        self.experiment_id = experiment_id
        self.request_id = request_id
        # The master's value when it sent one, else the hyperparameter of the same name (Determined
        # keeps it among the hyperparameters).
        self.global_batch_size = global_batch_size
        self.records_per_epoch = records_per_epoch
        # {"uuid": str, "batches": int} or None. The harness calls load() with it before any
        # workload; a trial only needs this to log or to skip expensive setup.
        self.latest_checkpoint = latest_checkpoint

    def get_hparam(self, name):
        """The hyperparameter `name`; a KeyError naming the known ones when it is absent."""
        try:
            return self.hparams[name]
        except KeyError:
            raise KeyError(f"hyperparameter {name!r} is not set; known: "
                           f"{sorted(self.hparams)}") from None


class Trial:
    """Base class of every model definition run by cairn_harness.

    A subclass is named by the experiment's `entrypoint` ("module:Class"). The harness constructs it
    once per process, calls load() when resuming, then train_batches / validate / save as the master
    asks. Metrics are dicts of name -> finite number. Training must be a function of (hparams,
    loaded state, batch indices) only, so that a run resumed from a checkpoint continues exactly
    where the interrupted one stood.
    """

    def __init__(self, context):
        self.context = context

    def train_batches(self, batches, start_batch):
        """Trains `batches` more batches after the `start_batch` done before; returns metrics."""
        raise NotImplementedError(f"{type(self).__name__} must implement train_batches()")

    def validate(self):
        """Evaluate the current model. Returns metrics, including the searcher's metric."""
        raise NotImplementedError(f"{type(self).__name__} must implement validate()")

    def save(self, path):
        """Write the complete training state into the existing, empty directory `path`."""
        raise NotImplementedError(f"{type(self).__name__} must implement save()")

    def load(self, path):
        """Restore the state that save() wrote into directory `path`."""
        raise NotImplementedError(f"{type(self).__name__} must implement load()")
