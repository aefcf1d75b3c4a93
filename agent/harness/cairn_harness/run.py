"""`python3 -m cairn_harness.run`: the workload loop, exec'd by the bootstrap after the hook."""

import sys

from cairn_harness import runner

if __name__ == "__main__":
    sys.exit(runner.main_after_hook())
