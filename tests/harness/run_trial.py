"""Runs the test trial (harness_support's CounterTrial) through the real harness against the fake
master, for C++ tests of what a trial leaves on disk (tensorboard_events_test.cpp).

    python3 run_trial.py --checkpoint-dir DIR --experiment-id 3 --trial-id 11 --rate 0.5 \
        --workloads '[{"kind": "TRAIN", "batches": 5, "startBatch": 0}, ...]'

Prints "exit N" (the harness's exit code) and "results JSON" (the results the master received,
in order); the harness's own output goes to stderr.
"""

import argparse
import json
import shutil
import sys
import tempfile

from fake_master import FakeMaster
from harness_support import HarnessProcess, counter_context, trial_doc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--experiment-id", type=int, required=True)
    parser.add_argument("--trial-id", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--workloads", type=json.loads, required=True)
    flags = parser.parse_args()

    doc = trial_doc(checkpointDir=flags.checkpoint_dir, experimentId=flags.experiment_id,
                    trialId=flags.trial_id, hparams={"rate": flags.rate, "global_batch_size": 8})
    master = FakeMaster(trial=doc, files=counter_context(), workloads=flags.workloads).start()
    workdir = tempfile.mkdtemp(prefix="cairn-run-trial-")
    try:
        harness = HarnessProcess(master.url, master.allocation_id, workdir)
        code = harness.wait()
        sys.stderr.write(harness.stdout + harness.stderr)
        print(f"exit {code}")
        print("results " + json.dumps(master.results))
        return 0
    finally:
        master.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
