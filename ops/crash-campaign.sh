#!/usr/bin/env bash
# Crash campaign: kill -9 cairn-master N times (default 100) at random moments while parallel
# submitters POST commands and experiments, restarting it each time; then checks that every
# submission the master acknowledged exists exactly once (the log and the REST projections), that
# retries with the same Idempotency-Key created nothing twice, and that the live projections'
# digests equal a full rebuild's. Prints kills, acknowledged, lost, duplicated, restart times and
# the digest verdict; exits 1 on any loss, duplicate or mismatch.
#   ops/crash-campaign.sh                          # embedded log, 100 kills, 4 submitters
#   ops/crash-campaign.sh --backend kafka          # on cairn-kafka-mock (started and stopped here)
#   ops/crash-campaign.sh --kills 20 --seed 7 --build-dir build --work-dir /tmp/cc --keep
#   ops/crash-campaign.sh --help                   # every option
# Binaries come from --build-dir (default: this checkout's build/, made by ops/build.sh); the helper
# ops/crash_campaign.py uses Python 3's standard library only.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

# Debian's python3 (the standard library is all it needs), else whichever is on the PATH.
PYTHON=/usr/bin/python3
if [ ! -x "$PYTHON" ]; then
  PYTHON=$(command -v python3) || {
    echo "crash-campaign: python3 is needed (apt-get install python3)" >&2
    exit 2
  }
fi
exec "$PYTHON" "$HERE/crash_campaign.py" "$@"
