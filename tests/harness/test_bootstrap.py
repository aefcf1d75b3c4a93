"""The bootstrap: fetching trial and context, writing files, environment, startup hook, errors."""

import os
import socket
import stat
import unittest

from fake_master import file_entry
from harness_support import HarnessTestCase, HarnessProcess, counter_context

VALIDATE_THEN_EXIT = [{"kind": "VALIDATE"}, {"kind": "EXIT", "reason": "done"}]

# Reports, as metrics, what it found in its environment and its work directory.
ENV_PROBE_TRIAL = r'''
import os

import cairn_harness


class ProbeTrial(cairn_harness.Trial):
    def validate(self):
        with open(os.path.join("data", "table.bin"), "rb") as f:
            table = f.read()
        return {
            "hook_value": int(os.environ.get("HOOK_VALUE", "-1")),
            "env_a": int(os.environ.get("ENV_A", "-1")),
            "trial_id": int(os.environ["CAIRN_TRIAL_ID"]),
            "experiment_id": int(os.environ["CAIRN_EXPERIMENT_ID"]),
            "table_sum": sum(table),
            "batch_size": self.context.global_batch_size,
        }
'''

# Uses an expansion only bash has, doubles a variable of environmentVariables (so those must be set
# before the hook), and clobbers PYTHONPATH (the harness must still find itself).
HOOK = '''
export HOOK_VALUE=$(( HOOK_INPUT * 2 ))
name=hook
export HOOK_UPPER=${name^^}
export PYTHONPATH=/nonexistent
'''


class BootstrapTest(HarnessTestCase):
    def probe_files(self, with_hook):
        files = [file_entry("model_def.py", ENV_PROBE_TRIAL),
                 file_entry("data/table.bin", bytes([1, 2, 3, 250]), 0o600),
                 file_entry("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)]
        if with_hook:
            files.append(file_entry("startup-hook.sh", HOOK))
        return files

    def test_context_files_environment_and_startup_hook(self):
        master = self.start_master(files=self.probe_files(with_hook=True),
                                   workloads=VALIDATE_THEN_EXIT,
                                   entrypoint="model_def:ProbeTrial",
                                   environmentVariables=["ENV_A=7", "HOOK_INPUT=21"])
        code, harness, workdir = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertIn("sourcing startup-hook.sh", harness.stdout)

        prefix = f"/api/v1/allocations/{master.allocation_id}"
        self.assertEqual([(method, path) for method, path, _ in master.requests[:2]],
                         [("GET", prefix + "/trial"), ("GET", prefix + "/context")])
        self.assertEqual(master.results, [{"kind": "VALIDATE", "metrics": {
            "hook_value": 42, "env_a": 7, "trial_id": 11, "experiment_id": 3,
            "table_sum": 256, "batch_size": 8}}])

        with open(os.path.join(workdir, "data", "table.bin"), "rb") as f:
            self.assertEqual(f.read(), bytes([1, 2, 3, 250]))
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(workdir, "data", "table.bin")).st_mode),
                         0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(workdir, "bin", "run.sh")).st_mode),
                         0o755)

    def test_without_a_hook_the_loop_runs_with_environment_variables_applied(self):
        master = self.start_master(files=self.probe_files(with_hook=False),
                                   workloads=VALIDATE_THEN_EXIT,
                                   entrypoint="model_def:ProbeTrial",
                                   environmentVariables=["ENV_A=9", "HOOK_VALUE=5"])
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        self.assertNotIn("sourcing", harness.stdout)
        metrics = master.results[0]["metrics"]
        self.assertEqual((metrics["env_a"], metrics["hook_value"]), (9, 5))

    def test_a_failing_startup_hook_exits_1_before_any_workload(self):
        files = counter_context([file_entry("startup-hook.sh", "echo preparing\nfalse\n")])
        master = self.start_master(files=files, workloads=VALIDATE_THEN_EXIT)
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("startup-hook.sh failed with status 1", harness.stderr)
        self.assertEqual(master.workload_posts(), [])

    def test_only_rank_0_of_a_multi_agent_trial_talks_to_the_master(self):
        master = self.start_master(files=counter_context(), workloads=VALIDATE_THEN_EXIT)
        code, harness, _ = self.run_harness(
            master, extra_env={"CAIRN_AGENT_RANK": "1", "CAIRN_NUM_AGENTS": "2"})
        self.assertExit(harness, code, 0)
        self.assertIn("a cairn_harness.Trial trains on rank 0 alone", harness.stdout)
        self.assertEqual(master.workload_posts(), [])

    def test_a_command_entrypoint_goes_to_determineds_package(self):
        # A string that is not module:Class is a command, which Determined's launcher runs; a
        # master that does not describe such trials is named as the problem.
        master = self.start_master(files=counter_context(), workloads=VALIDATE_THEN_EXIT,
                                   entrypoint="python3 train.py")
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("does not describe trials for Determined's package", harness.stderr)
        self.assertEqual(master.workload_posts(), [])

    def test_context_paths_that_escape_the_work_directory_are_refused(self):
        bad_paths = ("../escape.py", "/tmp/cairn-harness-absolute.py", "a/../../escape.py",
                     "a//b.py")
        for index, bad_path in enumerate(bad_paths):
            with self.subTest(path=bad_path):
                master = self.start_master(files=counter_context([file_entry(bad_path, "x = 1")]),
                                           workloads=VALIDATE_THEN_EXIT)
                code, harness, workdir = self.run_harness(master, name=f"work-{index}")
                self.assertExit(harness, code, 1)
                self.assertIn(repr(bad_path), harness.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.temp, "escape.py")))
                self.assertFalse(os.path.exists("/tmp/cairn-harness-absolute.py"))
                self.assertEqual(master.workload_posts(), [])

    def test_bad_entrypoints_exit_1_with_a_clear_error(self):
        cases = {
            "no_such_module:CounterTrial": "no module 'no_such_module' in the model definition",
            "model_def:Missing": "module 'model_def'",
            "model_def:NotATrial": "NotATrial is not a subclass of cairn_harness.Trial",
        }
        for index, (entrypoint, message) in enumerate(cases.items()):
            with self.subTest(entrypoint=entrypoint):
                master = self.start_master(files=counter_context(), workloads=VALIDATE_THEN_EXIT,
                                           entrypoint=entrypoint)
                code, harness, _ = self.run_harness(master, name=f"work-{index}")
                self.assertExit(harness, code, 1)
                self.assertIn("cairn-harness: error: entrypoint", harness.stderr)
                self.assertIn(message, harness.stderr)
                self.assertNotIn("Traceback", harness.stderr)
                self.assertEqual(master.workload_posts(), [])

    def test_a_4xx_is_fatal_at_once_and_its_body_is_printed(self):
        master = self.start_master(files=counter_context(), workloads=VALIDATE_THEN_EXIT)
        master.trial_errors = [(404, {"code": 5, "message": "allocation alloc-7 not found"})]
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 1)
        self.assertIn("404", harness.stderr)
        self.assertIn("allocation alloc-7 not found", harness.stderr)
        self.assertEqual(len(master.requests), 1)

    def test_5xx_answers_are_retried(self):
        master = self.start_master(files=counter_context(), workloads=VALIDATE_THEN_EXIT)
        master.trial_errors = [(503, {"code": 14, "message": "starting"}),
                               (500, {"code": 13, "message": "oops"})]
        code, harness, _ = self.run_harness(master)
        self.assertExit(harness, code, 0)
        trial_gets = [path for method, path, _ in master.requests if path.endswith("/trial")]
        self.assertEqual(len(trial_gets), 3)
        self.assertEqual([result["kind"] for result in master.results], ["VALIDATE"])

    def test_an_unreachable_master_is_given_up_after_the_retry_budget(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # Nothing listens on the port any more: every call is refused.
        workdir = os.path.join(self.temp, "work")
        os.makedirs(workdir)
        harness = HarnessProcess(f"http://127.0.0.1:{port}", "alloc-1", workdir,
                                 {"CAIRN_HARNESS_RETRY_SECONDS": "0.5"})
        self.addCleanup(harness.kill)
        code = harness.wait()
        self.assertExit(harness, code, 1)
        self.assertIn("still failing after 0.5 s", harness.stderr)
        self.assertIn("retrying", harness.stderr)


if __name__ == "__main__":
    unittest.main()
