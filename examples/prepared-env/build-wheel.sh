#!/usr/bin/env bash
# Builds the example's local package (wheel-src/prepared_features) into a wheel, offline:
#   examples/prepared-env/build-wheel.sh [OUT_DIR]   (default: var/local-cluster/wheels, the
#                                                      local cluster agent's --pip-find-links)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/../../var/local-cluster/wheels}"
python3 "$HERE/make_wheel.py" "$HERE/wheel-src" "$OUT" prepared-features 1.0
