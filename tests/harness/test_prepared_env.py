"""Prepared environments: runtime_commands then runtime_packages and local packages in a venv,
built once per hash in the agent's cache and reused; per-slot-type variants; the startup hook
inside the environment; a failing build; two trials starting together build once.

Packages come from a wheel directory made here (examples/prepared-env/make_wheel.py, offline), as
an agent's --pip-find-links with --pip-no-index gives them.
"""

import json
import os
import shutil
import sys

import harness_support
from fake_master import file_entry
from harness_support import REPO, HarnessTestCase

sys.path.insert(0, os.path.join(REPO, "examples", "prepared-env"))
import make_wheel  # noqa: E402  (the example's own wheel builder)

# pip and a venv take seconds, more on a busy machine.
harness_support.WAIT_SECONDS = 120

VALIDATE_THEN_EXIT = [{"kind": "VALIDATE"}, {"kind": "EXIT", "reason": "done"}]
FEATURES_SOURCE = os.path.join(REPO, "examples", "prepared-env", "wheel-src")

# Reports where it runs and what it imported, as metrics.
PROBE_TRIAL = r'''
import os
import sys

import cairn_harness
import prepared_features


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


class ProbeTrial(cairn_harness.Trial):
    def validate(self):
        return {
            "in_venv": int(sys.prefix != sys.base_prefix),
            "env_is_cache_entry": int(os.path.dirname(sys.prefix) ==
                                      os.path.abspath(os.environ["CAIRN_ENV_CACHE"])),
            "hook_saw_this_python": int(os.environ.get("HOOK_PREFIX") == sys.prefix),
            "features_version": float(prepared_features.VERSION),
            "marker_cuda": int(_read(os.path.join(sys.prefix, "marker.txt")) == "cuda"),
            "marker_cpu": int(_read(os.path.join(sys.prefix, "marker.txt")) == "cpu"),
            "variable": int(os.environ.get("VARIANT_VALUE", "-1")),
        }
'''

HOOK = '''
export HOOK_PREFIX="$(python3 -c 'import sys; print(sys.prefix)')"
'''


def environment(commands_cpu=None, commands_cuda=None, packages=None):
    return {
        "image": {"cpu": "cairn/cpu:1", "cuda": "cairn/cuda:1"},
        "environmentVariables": {"cpu": ["VARIANT_VALUE=1"], "cuda": ["VARIANT_VALUE=2"],
                                 "rocm": []},
        "runtimeCommands": {"cpu": commands_cpu if commands_cpu is not None
                            else ["echo cpu > marker.txt"],
                            "cuda": commands_cuda if commands_cuda is not None
                            else ["echo cuda > marker.txt"],
                            "rocm": []},
        "runtimePackages": {"cpu": packages or [], "cuda": packages or [], "rocm": []},
    }


class PreparedEnvTest(HarnessTestCase):
    def setUp(self):
        super().setUp()
        self.cache = os.path.join(self.temp, "env-cache")
        self.wheels = os.path.join(self.temp, "wheels")
        make_wheel.make_wheel(FEATURES_SOURCE, self.wheels, "prepared-features", "1.0")

    def agent_env(self, slot_type="cpu"):
        return {"CAIRN_ENV_CACHE": self.cache, "CAIRN_SLOT_TYPE": slot_type,
                "PIP_FIND_LINKS": self.wheels, "PIP_NO_INDEX": "1"}

    def start(self, files=None, **trial_overrides):
        files = files if files is not None else [file_entry("model_def.py", PROBE_TRIAL),
                                                 file_entry("startup-hook.sh", HOOK)]
        trial_overrides.setdefault("environment",
                                   environment(packages=["prepared-features==1.0"]))
        return self.start_master(files=files, workloads=VALIDATE_THEN_EXIT,
                                 entrypoint="model_def:ProbeTrial", **trial_overrides)

    def ready_entries(self):
        """The cache's finished environments: {hash: ready file's content}."""
        entries = {}
        for name in sorted(os.listdir(self.cache)):
            ready = os.path.join(self.cache, name, "cairn-ready.json")
            if os.path.isfile(ready):
                with open(ready, encoding="utf-8") as f:
                    entries[name] = json.load(f)
        return entries

    def test_built_once_then_reused_with_the_hook_inside_it(self):
        first = self.start()
        code, harness, _ = self.run_harness(first, name="first", extra_env=self.agent_env())
        self.assertExit(harness, code, 0)
        (digest, ready), = self.ready_entries().items()
        self.assertIn(f"building prepared environment {digest}", harness.stdout)
        self.assertIn(f"built prepared environment {digest} in ", harness.stdout)
        # The build's own output is the trial's: pip's lines are there.
        self.assertIn("Successfully installed prepared-features-1.0", harness.stdout)
        self.assertEqual((ready["device"], ready["image"], ready["commands"], ready["packages"]),
                         ("cpu", "cairn/cpu:1", ["echo cpu > marker.txt"],
                          ["prepared-features==1.0"]))
        expected = {"in_venv": 1, "env_is_cache_entry": 1, "hook_saw_this_python": 1,
                    "features_version": 1.0, "marker_cuda": 0, "marker_cpu": 1, "variable": 1}
        self.assertEqual(first.results[0]["metrics"], expected)

        # Without the wheel a second build would fail: the second trial must not build.
        os.remove(os.path.join(self.wheels, os.listdir(self.wheels)[0]))
        second = self.start()
        code, harness, _ = self.run_harness(second, name="second", extra_env=self.agent_env())
        self.assertExit(harness, code, 0)
        self.assertIn(f"reusing prepared environment {digest} built {ready['built']}",
                      harness.stdout)
        self.assertNotIn("building", harness.stdout)
        self.assertEqual(second.results[0]["metrics"], expected)
        self.assertEqual(list(self.ready_entries()), [digest])

    def test_the_slot_type_chooses_the_variants_and_the_hash(self):
        cpu = self.start()
        code, harness, _ = self.run_harness(cpu, name="cpu", extra_env=self.agent_env("cpu"))
        self.assertExit(harness, code, 0)
        cuda = self.start()
        code, harness, _ = self.run_harness(cuda, name="cuda", extra_env=self.agent_env("cuda"))
        self.assertExit(harness, code, 0)
        metrics = cuda.results[0]["metrics"]
        self.assertEqual((metrics["marker_cuda"], metrics["marker_cpu"], metrics["variable"]),
                         (1, 0, 2))
        devices = sorted((ready["device"], ready["image"]) for ready in self.ready_entries().values())
        self.assertEqual(devices, [("cpu", "cairn/cpu:1"), ("cuda", "cairn/cuda:1")])

    def test_local_packages_in_the_context_are_installed_and_part_of_the_hash(self):
        source = os.path.join(self.temp, "features-2")
        shutil.copytree(FEATURES_SOURCE, source)
        init = os.path.join(source, "prepared_features", "__init__.py")
        with open(init, encoding="utf-8") as f:
            text = f.read().replace('VERSION = "1.0"', 'VERSION = "2.0"')
        with open(init, "w", encoding="utf-8") as f:
            f.write(text)
        wheel = make_wheel.make_wheel(source, os.path.join(self.temp, "upload"),
                                      "prepared-features", "2.0")
        with open(wheel, "rb") as f:
            content = f.read()
        files = [file_entry("model_def.py", PROBE_TRIAL), file_entry("startup-hook.sh", HOOK),
                 file_entry(".cairn-packages/" + os.path.basename(wheel), content)]
        master = self.start(files=files, environment=environment())
        code, harness, _ = self.run_harness(master, extra_env=self.agent_env())
        self.assertExit(harness, code, 0)
        self.assertEqual(master.results[0]["metrics"]["features_version"], 2.0)
        (ready,) = self.ready_entries().values()
        self.assertEqual(ready["local_packages"], [os.path.basename(wheel)])

    def test_a_failing_command_ends_the_trial_with_its_error_and_leaves_nothing(self):
        master = self.start(environment=environment(
            commands_cpu=["echo first step", "echo about to fail; exit 3", "echo never"]))
        code, harness, _ = self.run_harness(master, extra_env=self.agent_env())
        self.assertExit(harness, code, 1)
        self.assertIn("cairn-harness: error: preparing the environment failed: runtime command 2: "
                      "echo about to fail; exit 3 exited with status 3: about to fail",
                      harness.stderr)
        self.assertIn("first step", harness.stdout)
        self.assertNotIn("never", harness.stdout)
        self.assertEqual(master.workload_posts(), [])
        self.assertEqual([name for name in os.listdir(self.cache) if not name.endswith(".lock")],
                         [])

    def test_a_missing_package_ends_the_trial_with_pips_error(self):
        master = self.start(environment=environment(packages=["no-such-package==9"]))
        code, harness, _ = self.run_harness(master, extra_env=self.agent_env())
        self.assertExit(harness, code, 1)
        self.assertIn("pip install no-such-package==9 exited with status 1", harness.stderr)
        self.assertIn("No matching distribution found for no-such-package==9", harness.stderr)

    def test_two_trials_starting_together_build_once(self):
        masters = [self.start() for _ in range(2)]
        harnesses = [self.start_harness(master, name=f"work-{i}", extra_env=self.agent_env())[0]
                     for i, master in enumerate(masters)]
        for harness in harnesses:
            self.assertExit(harness, harness.wait(), 0)
        outputs = [harness.stdout for harness in harnesses]
        self.assertEqual(sum("built prepared environment" in out for out in outputs), 1, outputs)
        self.assertEqual(sum("reusing prepared environment" in out for out in outputs), 1, outputs)
        self.assertEqual(len(self.ready_entries()), 1)

    def test_without_a_cache_the_trial_fails_with_a_clear_error(self):
        master = self.start()
        env = self.agent_env()
        env["CAIRN_ENV_CACHE"] = ""
        code, harness, _ = self.run_harness(master, extra_env=env)
        self.assertExit(harness, code, 1)
        self.assertIn("CAIRN_ENV_CACHE is not set", harness.stderr)

    def test_an_experiment_without_runtime_lists_runs_as_before(self):
        master = self.start(files=[file_entry("model_def.py", "import cairn_harness\n"
                                              "class ProbeTrial(cairn_harness.Trial):\n"
                                              "    def validate(self):\n"
                                              "        return {'x': 1}\n")],
                            environment={"environmentVariables": {"cpu": [], "cuda": [],
                                                                  "rocm": []},
                                         "runtimeCommands": {"cpu": [], "cuda": [], "rocm": []},
                                         "runtimePackages": {"cpu": [], "cuda": [], "rocm": []}})
        code, harness, _ = self.run_harness(master, extra_env=self.agent_env())
        self.assertExit(harness, code, 0)
        self.assertNotIn("prepared environment", harness.stdout)
        self.assertFalse(os.path.exists(self.cache))
