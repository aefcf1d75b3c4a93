"""The first phase of a trial process: fetch the trial and its context, prepare the environment.

When the experiment asks for a prepared environment (runtime_commands, runtime_packages, local
packages: prepared_env.py), it is built or reused and put first on PATH. Then, when the context
has a top-level startup-hook.sh or there is a prepared environment, the process execs a shell that
sources the hook (if any) and execs `python3 -m cairn_harness.run` (so whatever the hook exports,
including a PATH to another python3, applies to the trial, and the hook itself runs inside the
prepared environment); otherwise the workload loop runs in this process.
"""

import json
import os
import sys

from cairn_harness import determined_mode, prepared_env, runner, signals
from cairn_harness.context_files import write_context
from cairn_harness.master_client import HarnessError

STARTUP_HOOK = "startup-hook.sh"
TRIAL_FILE_NAME = ".cairn-harness-trial.json"
HARNESS_PATH_ENV = "CAIRN_HARNESS_PATH"


def main():
    signals.install()
    sys.stdout.reconfigure(line_buffering=True)
    return runner.guarded(_bootstrap)


def _bootstrap():
    client = runner.client_from_environment()
    trial_doc = client.get_trial()
    _check_trial_doc(trial_doc)
    workdir = os.getcwd()
    context = client.get_context()
    files = context.get("files") if isinstance(context, dict) else None
    if not isinstance(files, list):
        raise HarnessError(f"the master's context has no list of files: {str(context)[:200]}")
    written = write_context(files, workdir)
    # Decided once, on the model definition as written: Determined's package or Cairn's harness.
    determined = determined_mode.wants_determined(trial_doc, workdir)
    rank = os.environ.get("CAIRN_AGENT_RANK", "0")
    if rank != "0" and not determined:
        # Cairn's own Trial API holds one conversation with the master: only rank 0 trains.
        # Determined's package runs every rank (determined_mode.py).
        print(f"cairn-harness: rank {rank} of {os.environ.get('CAIRN_NUM_AGENTS', '?')}: "
              "a cairn_harness.Trial trains on rank 0 alone; use Determined's package for "
              "distributed training", flush=True)
        return 0
    runner.log(f"trial {trial_doc.get('trialId')} of experiment {trial_doc.get('experimentId')}: "
               f"{len(written)} context files, entrypoint {trial_doc['entrypoint']}, "
               f"hparams {json.dumps(trial_doc.get('hparams') or {}, sort_keys=True)}")
    _apply_environment(trial_doc)
    if determined:
        return determined_mode.run(trial_doc, workdir)
    plan = prepared_env.plan_for(trial_doc, workdir)
    if plan is not None:
        env_dir = prepared_env.ensure(plan, os.environ.get(prepared_env.CACHE_ENV))
        prepared_env.activate(env_dir)
        runner.log(f"the trial runs in prepared environment {plan.digest}")

    has_hook = os.path.isfile(os.path.join(workdir, STARTUP_HOOK))
    if plan is None and not has_hook:
        return runner.run_trial(trial_doc, client, workdir)

    trial_file = os.path.join(workdir, TRIAL_FILE_NAME)
    with open(trial_file, "w", encoding="utf-8") as f:
        json.dump(trial_doc, f)
    os.environ[runner.TRIAL_FILE_ENV] = trial_file
    # The hook may replace PYTHONPATH; the harness's own directory is put back in front after it.
    os.environ[HARNESS_PATH_ENV] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # bash when the machine has it: Determined sources the hook with bash, and users' hooks rely on
    # that.
    shell = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    # python3 is the prepared environment's when there is one (activate put it first on PATH).
    script = (f'export PYTHONPATH="${HARNESS_PATH_ENV}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
              'exec python3 -m cairn_harness.run\n')
    if has_hook:
        script = (f'. ./{STARTUP_HOOK} || {{ status=$?; '
                  f'echo "cairn-harness: error: {STARTUP_HOOK} failed with status $status" >&2; '
                  'exit 1; }\n' + script)
        runner.log(f"sourcing {STARTUP_HOOK}")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(shell, [shell, "-c", script])


def _check_trial_doc(trial_doc):
    if not isinstance(trial_doc, dict) or not isinstance(trial_doc.get("entrypoint"), str):
        raise HarnessError(f"the master's trial has no entrypoint: {str(trial_doc)[:200]}")
    latest = trial_doc.get("latestCheckpoint")
    if latest is not None and not (isinstance(latest, dict) and isinstance(latest.get("uuid"), str)
                                   and isinstance(latest.get("batches"), int)):
        raise HarnessError(f"malformed latestCheckpoint: {latest!r}")
    variables = trial_doc.get("environmentVariables") or []
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise HarnessError(f"environmentVariables is not a list of strings: {variables!r}")


def _apply_environment(trial_doc):
    """The trial's identity first, then the experiment's environment_variables (which win): the
    variant of this agent's slot type, or (from a master that sends no variants) the one list."""
    os.environ["CAIRN_TRIAL_ID"] = str(trial_doc.get("trialId"))
    os.environ["CAIRN_EXPERIMENT_ID"] = str(trial_doc.get("experimentId"))
    os.environ["CAIRN_HPARAMS"] = json.dumps(trial_doc.get("hparams") or {}, sort_keys=True)
    environment = trial_doc.get("environment")
    if isinstance(environment, dict) and environment.get("environmentVariables") is not None:
        variables = prepared_env.variant(environment["environmentVariables"],
                                         prepared_env.slot_type(), "environmentVariables")
    else:
        variables = trial_doc.get("environmentVariables") or []
    for assignment in variables:
        name, separator, value = assignment.partition("=")
        if not separator or not name:
            raise HarnessError(f"environment variable {assignment!r} is not of the form K=V")
        os.environ[name] = value
