#!/usr/bin/env bash
# Builds minitriton and runs the whole test suite:
#
#   release      the suite on a normal build (build/)
#   python       the Python package (python/): pip-installed into build/venv,
#                its pytest suite against build/libminitriton.so
#                (scripts/test_python.sh)
#   asan+ubsan   the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                with LeakSanitizer (build-asan/)
#   tsan         the threaded tests under ThreadSanitizer (build-tsan/):
#                test_threads (one context, many threads), test_codegen
#                (compiles on several threads, four compiling at once) and
#                test_compile_faults (helpers that fail to start or to emit),
#                test_blockcache (the GPU's kept blocks, several threads)
#   valgrind     the examples and mtc under valgrind's memcheck: no error, no
#                definite or possible leak (uses build/)
#   fuzz         each libFuzzer harness for MT_FUZZ_SECONDS (default 60) per
#                harness (scripts/fuzz.sh, build-fuzz/); MT_SKIP_FUZZ=1 skips it
#
# Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# No run of the suite reads or writes the user's disk cache (~/.cache/minitriton):
# ctest turns it off per test (tests/CMakeLists.txt), this covers python,
# the examples and mtc; the disk cache's own tests name their directories.
export MINITRITON_CACHE_DIR=off
py_pkgs="python3 python3-venv python3-setuptools python3-wheel python3-numpy python3-pytest"
MT_SETUP_EXTRA="${MT_SETUP_EXTRA:-} valgrind clang libclang-rt-14-dev graphviz $py_pkgs" ./scripts/setup.sh
jobs="$(nproc)"

# Did every test that failed in build dir $1 fail because LeakSanitizer's
# own stop-the-world tracer crashed at exit ("Tracer caught signal 11": an
# intermittent crash of the sanitizer runtime after the test's body passed,
# not a leak report; google/sanitizers#1353)?
lsan_tracer_only() {
  local tmp="$1/Testing/Temporary" t
  [ -s "$tmp/LastTestsFailed.log" ] || return 1
  while IFS=: read -r _ t; do
    awk -v t="$t" 'index($0, "Testing: " t) && $0 ~ (t "$") {on = 1} on {print}
                   on && index($0, "\"" t "\" end time") == 1 {exit}' "$tmp/LastTest.log" |
      grep -q "Tracer caught signal" || return 1
  done < "$tmp/LastTestsFailed.log"
}

run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name: building in $dir"
  # MT_BUILD_TESTS=ON: the directory may have been configured without tests
  # (scripts/demo.sh configures build/ so); a suite that runs no test fails
  cmake -S . -B "$dir" -DMT_BUILD_TESTS=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== $name: running tests"
  if (cd "$dir" && ctest --output-on-failure --no-tests=error -j"$jobs"); then return 0; fi
  lsan_tracer_only "$dir" || return 1
  echo "== $name: LeakSanitizer's tracer crashed at exit in" \
    "$(cut -d: -f2 "$dir/Testing/Temporary/LastTestsFailed.log" | paste -sd' '); running them once more"
  (cd "$dir" && ctest --rerun-failed --output-on-failure --no-tests=error)
}

run_suite "release" build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== python: pip install ./python into build/venv, pytest python/tests"
./scripts/test_python.sh build
# allocator_may_return_null: the library must see NULL from malloc for a size
# it cannot have (tests/robust checks MT_ERR_NOMEM), not an ASan abort.
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1" \
LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  run_suite "asan+ubsan" build-asan -DCMAKE_BUILD_TYPE=Debug -DMT_SANITIZE=ON

echo "== tsan: building in build-tsan"
cmake -S . -B build-tsan -DMT_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug -DMT_TSAN=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target test_threads test_codegen test_compile_faults test_blockcache >/dev/null
echo "== tsan: running test_threads, test_codegen, test_compile_faults and test_blockcache"
tsan_opts="halt_on_error=1:second_deadlock_stack=1"
[ -f tests/tsan.supp ] && tsan_opts="$tsan_opts:suppressions=$PWD/tests/tsan.supp"
(cd build-tsan && TSAN_OPTIONS="$tsan_opts" ./tests/test_threads &&
  TSAN_OPTIONS="$tsan_opts" ./tests/test_codegen &&
  TSAN_OPTIONS="$tsan_opts" ./tests/test_compile_faults &&
  TSAN_OPTIONS="$tsan_opts" ./tests/test_blockcache)

echo "== valgrind: examples and mtc"
vg=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,possible
    --show-leak-kinds=definite,possible --error-exitcode=1)
"${vg[@]}" build/example_embed >/dev/null
"${vg[@]}" build/example_demo >/dev/null
"${vg[@]}" build/mtc --random examples/kernels/fused_add.py >/dev/null
# the disk cache's write (a miss) and read (a hit) paths, in a fresh directory
vgcache=$(mktemp -d)
"${vg[@]}" build/mtc --cache-dir "$vgcache" --random examples/kernels/fused_add.py >/dev/null
"${vg[@]}" build/mtc --cache-dir "$vgcache" --random --emit llvm examples/kernels/fused_add.py >/dev/null
rm -rf "$vgcache"
echo "valgrind: no errors, no definite or possible leaks"

if [ "${MT_SKIP_FUZZ:-}" = 1 ]; then
  echo "== fuzz: SKIPPED (MT_SKIP_FUZZ=1)"
else
  ./scripts/fuzz.sh "${MT_FUZZ_SECONDS:-60}"
fi
echo "== all suites passed"
