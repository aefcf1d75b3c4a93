#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ops/install-deps.sh
CAIRN_WERROR=ON bash ops/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 600 "$@"
