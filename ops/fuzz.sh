#!/usr/bin/env bash
# Long fuzzing runs: builds the targets of tests/fuzz with clang (libFuzzer, ASan, UBSan) into
# build-fuzz/, runs them one after the other (never two at once), and prints, per target, the
# inputs executed and the crashes found.
#
#   ops/fuzz.sh [SECONDS] [TARGET...]   each target (default: all) for SECONDS (default 300)
#   ops/fuzz.sh --runs N [TARGET...]    each target for N executions instead
#
# A target's new inputs go to var/fuzz/<target>/corpus (its committed seeds in
# tests/fuzz/corpus/<target>/ are read, never written), its output to var/fuzz/<target>/log,
# and a failing input to var/fuzz/<target>/crash-* (or leak-, timeout-, oom-): replay one with
# `build-fuzz/bin/fuzz_<target> FILE`, fix the bug, and commit the input into the target's
# corpus so that CI replays it from then on. Exits 1 when any target found one.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=300
runs=""
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *[!0-9]*) targets+=("$1"); shift ;;
    *) seconds="$1"; shift ;;
  esac
done
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in tests/fuzz/*_fuzzer.cpp; do
    name="$(basename "$source")"
    targets+=("${name%_fuzzer.cpp}")
  done
fi

if ! command -v clang++ > /dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" > /dev/null; then
  echo "fuzz: installing clang (Debian packages clang and libclang-rt-dev)"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-dev
fi

# -O1 keeps stack traces readable; no NDEBUG, so that asserts (Beast's included) stay on.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCAIRN_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  > build-fuzz.configure.log 2>&1 || { cat build-fuzz.configure.log; exit 1; }
ninja -C build-fuzz -j"${CAIRN_BUILD_JOBS:-2}" $(printf 'fuzz_%s ' "${targets[@]}")

if [[ -n "$runs" ]]; then
  limit=(-runs="$runs")
else
  limit=(-max_total_time="$seconds")
fi
# Memory: YAML aliases can expand a small input enormously; one allocation past 2 GiB, or a
# process past 4 GiB, is reported (oom-*) rather than left to take the machine down. The RSS
# limit is twice what a long run settles at (about 1 GiB, ASan's quarantine and free lists):
# libFuzzer purges the allocator every second once the RSS passes half the limit, and on this
# VM each purge's TLB shootdowns took a third of the time (yaml_json fell to 87 inputs/s).
# Time: an input that takes 30 s is a hang (timeout-*).
options=(-rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=30 -print_final_stats=1)

summary=()
failed=0
for target in "${targets[@]}"; do
  work="var/fuzz/$target"
  mkdir -p "$work/corpus"
  echo "fuzz: $target (${limit[*]})"
  start=$(date +%s)
  status=0
  "build-fuzz/bin/fuzz_$target" "${limit[@]}" "${options[@]}" -artifact_prefix="$work/" \
    "$work/corpus" "tests/fuzz/corpus/$target" > "$work/log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))
  # The final statistics give the executions; a run that crashed stops before printing them, so
  # its last progress line ("#1234 ...") does instead.
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  if [[ -z "$executions" ]]; then
    executions=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$work/log" | tail -1)
  fi
  crashes=$(grep -c 'Test unit written to' "$work/log" || true)
  # libFuzzer stops at the first failing input, and writes it out; a run that failed without
  # writing one (the binary could not start) counts as one too.
  if [[ "$status" -ne 0 && "$crashes" -eq 0 ]]; then crashes=1; fi
  if [[ "$crashes" -ne 0 ]]; then
    failed=1
    grep -m1 -E 'ERROR|FUZZ_CHECK|Test unit written to' "$work/log" || true
  fi
  summary+=("$(printf '%-20s %12s executions %4s s %3s crashes' "$target" "${executions:-0}" "$elapsed" "$crashes")")
done

echo
echo "fuzz: results (logs and failing inputs in var/fuzz/<target>/)"
printf '  %s\n' "${summary[@]}"
exit "$failed"
