#!/usr/bin/env bash
# Configures and builds Cairn into build/ (RelWithDebInfo, Ninja, ccache when present).
# CAIRN_WERROR=ON turns warnings into errors (CI does this).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCAIRN_WERROR="${CAIRN_WERROR:-OFF}" > build.configure.log 2>&1 || {
  cat build.configure.log; exit 1; }
ninja -C build -j"${CAIRN_BUILD_JOBS:-2}"
