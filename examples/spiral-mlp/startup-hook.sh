# Sourced by the harness (bash) before the trial starts, as in Determined: whatever it exports is in
# the trial's environment. model_def.py refuses to run without this variable, so a trial that
# trains at all proves the hook ran.
export SPIRAL_DATASET_SEED=7
