"""cairn_harness: runs a user's Trial inside a Cairn trial process (stdlib only).

Model code imports this package for the Trial base class. `python3 -m cairn_harness` is the trial
process's entry point (see PROTOCOL.md beside this package).
"""

from cairn_harness.trial import Trial, TrialContext

__all__ = ["Trial", "TrialContext"]
__version__ = "0.1.0"
