#!/usr/bin/env bash
# Builds minitriton and runs the whole test suite twice: a normal build, then
# a build under AddressSanitizer + UndefinedBehaviorSanitizer (with
# LeakSanitizer). Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
jobs="$(nproc)"

run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name: building in $dir"
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== $name: running tests"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}

run_suite "release" build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  run_suite "asan+ubsan" build-asan -DCMAKE_BUILD_TYPE=Debug -DMT_SANITIZE=ON
echo "== all suites passed"
