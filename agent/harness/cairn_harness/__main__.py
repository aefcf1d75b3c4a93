"""`python3 -m cairn_harness`: the trial process's entry point (bootstrap, then workload loop)."""

import sys

from cairn_harness import bootstrap

if __name__ == "__main__":
    sys.exit(bootstrap.main())
