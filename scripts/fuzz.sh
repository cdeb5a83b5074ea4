#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (ASan + UBSan + LeakSanitizer)
# into build-fuzz/ and runs each for a bounded time:
#
#     scripts/fuzz.sh [SECONDS]      # per harness; default 60
#
#   fuzz_compile  mt_jit_compile on arbitrary bytes (tests/fuzz/fuzz_compile.c)
#   fuzz_npy      the .npy reader (tests/fuzz/fuzz_npy.c)
#   fuzz_tir      the loop-function parser, the TIR verifier and user schedules (tests/fuzz/fuzz_front.c)
#   fuzz_graph    the pipeline up to code generation, no LLVM (tests/fuzz/fuzz_front.c)
#
# Environment: MT_FUZZ_ONLY=compile|npy|tir|graph runs one harness; MT_FUZZ_FORK=N runs
# N worker processes (libFuzzer's -fork=N; the "#N" status lines then count
# the executions of all of them) for long runs on several cores;
# MT_FUZZ_JOBS=N runs N whole fuzzers on the one corpus instead (-jobs=N:
# no fork-mode job restarts, each replaying its share of the corpus first;
# -runs is then per job, and scripts/fuzz_run.sh sums their executions);
# MT_FUZZ_TIMEOUT=S sets the per-input timeout (default 10 s; a long run in
# the background of other work needs more: a starved worker is not a hang);
# MT_FUZZ_ARGS="-flag=value ..." passes more libFuzzer flags (the long runs of
# fuzz_graph use -entropic=0: libFuzzer's entropic scheduling took 40 % of
# that harness's time, docs/robustness.md); MT_FUZZ_LEAN_CMP=1 builds without
# libFuzzer's compare tracing in the loop IR, passes and schedule layers
# (CMakeLists.txt; for long fuzz_graph runs: docs/robustness.md, "Fuzzing";
# switching it rebuilds those layers). The fuzz build scales the
# compiler's size limits down 16 times (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION,
# src/graph/builder_internal.h) and leaves UBSan's alignment check to the
# MT_SANITIZE suite (its compare, traced by SanitizerCoverage on every pointer
# dereference, was a fifth of the harnesses' time: CMakeLists.txt).
#
# Seeds are regenerated on every run (build-fuzz/seeds/): the kernels of the
# error corpus, the golden tests, the examples, the front-end goldens and the
# fuzz regressions (.py) for fuzz_compile; the .npy files written by
# npy_seeds and the .npy fuzz regressions for fuzz_npy. What the fuzzer learns accumulates in build-fuzz/corpus/<name>/.
# Fails (exit 1) on any crash, leak, timeout (-timeout=10 s per input) or
# memory blow-up (-rss_limit_mb=2048), leaving the input that did it in
# build-fuzz/artifacts/ and libFuzzer's report in build-fuzz/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
case "$secs" in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
MT_SETUP_EXTRA="${MT_SETUP_EXTRA:-} clang libclang-rt-14-dev" ./scripts/setup.sh

# libFuzzer ships with clang's runtime (libclang-rt-14-dev on Debian 12).
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe/p.c"
if ! clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  cat "$probe/err" >&2
  echo "fuzz: clang cannot build a libFuzzer target (is libclang-rt-14-dev installed?)" >&2
  exit 1
fi

dir=build-fuzz
echo "== fuzz: building in $dir"
# -O1 as OSS-Fuzz builds (about 1.3x the executions per second of -O0)
lean=OFF
[ "${MT_FUZZ_LEAN_CMP:-0}" = 1 ] && lean=ON
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DMT_FUZZ=ON -DMT_FUZZ_LEAN_CMP="$lean" -DMT_BUILD_TESTS=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target fuzz_compile fuzz_npy fuzz_tir fuzz_graph npy_seeds >/dev/null

rm -rf "$dir/seeds"
scripts/fuzz_seeds.sh "$dir/tests/fuzz/npy_seeds" "$dir/seeds"
cp -r "$dir/seeds/compile" "$dir/seeds/tir"   # kernels: the same seeds
cp -r "$dir/seeds/compile" "$dir/seeds/graph"

run() { # name extra-args...
  local name=$1; shift
  echo "== fuzz: $name for ${secs}s"
  # shellcheck disable=SC2086 # MT_FUZZ_ARGS: more libFuzzer flags, split at spaces
  scripts/fuzz_run.sh "$dir/tests/fuzz/fuzz_$name" "$name" "$secs" "$dir" "$PWD/tests/lsan.supp" "$@" ${MT_FUZZ_ARGS:-}
}

status=0
only="${MT_FUZZ_ONLY:-}"
if [ -z "$only" ] || [ "$only" = compile ]; then run compile -dict="$PWD/tests/fuzz/kernel.dict" || status=1; fi
if [ -z "$only" ] || [ "$only" = npy ]; then run npy || status=1; fi
if [ -z "$only" ] || [ "$only" = tir ]; then run tir -dict="$PWD/tests/fuzz/kernel.dict" || status=1; fi
if [ -z "$only" ] || [ "$only" = graph ]; then run graph -dict="$PWD/tests/fuzz/kernel.dict" || status=1; fi
[ "$status" -eq 0 ] && echo "== fuzz: no crash, leak or timeout"
exit "$status"
