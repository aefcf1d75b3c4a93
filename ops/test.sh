#!/usr/bin/env bash
# Installs what is missing, builds (ops/build.sh: warnings are errors), and runs the tests under
# ctest.
#
#   ops/test.sh           every test (CI runs this)
#   ops/test.sh --fast    the inner loop: unit and component tests, no whole-cluster e2e
#   ops/test.sh -R Foo    anything else is passed to ctest (here: only tests matching Foo)
#
# Tiers are ctest labels (tests/CMakeLists.txt): unit, component, e2e; tags kafka and harness
# name what a test needs, e.g. `ops/test.sh -LE kafka`.
set -euo pipefail
cd "$(dirname "$0")/.."
ctest_args=()
for arg in "$@"; do
  if [[ "$arg" == "--fast" ]]; then
    ctest_args+=(-L "unit|component")
  else
    ctest_args+=("$arg")
  fi
done
bash ops/install-deps.sh
bash ops/install-test-servers.sh
bash ops/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 600 "${ctest_args[@]}"
