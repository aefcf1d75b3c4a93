#!/usr/bin/env bash
# Configures and builds Cairn into build/ (Ninja, ccache when present). Every caller (the
# README's two commands, CI) builds with the same configuration, so the second command only finds
# the build done: ops/run-local-cluster.sh then ops/test.sh compiles each file once.
#   CAIRN_WERROR=OFF     warnings are not errors (the default, and CI's, is ON)
#   CAIRN_DEBUG_INFO=ON  -O2 -g (RelWithDebInfo) for a debugger; the default is -O2 without
#                        debug info, which compiles about a third faster
#   CAIRN_UNITY_BUILD=OFF  compile files one by one: a slower build from clean, but an edit
#                        recompiles only its file (the default compiles batches of 8)
set -euo pipefail
cd "$(dirname "$0")/.."
build_type=Release
if [[ "${CAIRN_DEBUG_INFO:-OFF}" == "ON" ]]; then build_type=RelWithDebInfo; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCAIRN_WERROR="${CAIRN_WERROR:-ON}" -DCAIRN_UNITY_BUILD="${CAIRN_UNITY_BUILD:-ON}" \
  > build.configure.log 2>&1 || {
  cat build.configure.log; exit 1; }
ninja -C build -j"${CAIRN_BUILD_JOBS:-2}"
