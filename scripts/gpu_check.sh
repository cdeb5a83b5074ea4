#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, runs the GPU test suite
# and the GPU benchmark with its references, and writes a results file.
#
#   ./scripts/gpu_prepare.sh            # here, with LLVM: builds build-gpu/
#   OUT=/some/dir ./scripts/gpu_check.sh [--quick]
#
# The GPU machine needs no LLVM, cmocka or network: gpu_prepare.sh builds
# build-gpu/ with LLVM linked statically and puts the shared libraries the
# binaries need beside them (build-gpu/lib). It needs the NVIDIA driver,
# NVRTC (the CUDA toolkit's, or the one PyTorch ships), and for the
# references Python 3 with PyTorch (Triton optional). Under 8 minutes.
#
# Writes $OUT/gpu_check.md (the report: tests, our timings, the references,
# the ratios against the goals of docs/performance.md) and the raw files
# beside it. Exit status: 0 when every GPU test passed, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check}
B=${MT_GPU_BUILD:-build-gpu}
mkdir -p "$OUT"
if [ ! -d "$B" ] && [ -f .gpupack.tar.xz ]; then tar -xJf .gpupack.tar.xz; fi
REPORT="$OUT/gpu_check.md"
QUICK=${1:-}

export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MT_SOURCE_DIR="$PWD" MT_VERIFY_TIR=1

# NVRTC: the toolkit's, else the one in PyTorch's wheels.
if [ -z "${MT_NVRTC_LIBRARY:-}" ]; then
  for c in /usr/local/cuda/lib64/libnvrtc.so /usr/local/cuda/lib64/libnvrtc.so.*[0-9] \
           $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)/nvidia/cu*/lib/libnvrtc.so.*[0-9] \
           /opt/*/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libnvrtc.so.*[0-9]; do
    if [ -e "$c" ]; then export MT_NVRTC_LIBRARY="$c"; break; fi
  done
fi

{
  echo "# GPU check ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  echo "NVRTC: ${MT_NVRTC_LIBRARY:-not found}; built from commit: $(cat "$B/commit.txt" 2>/dev/null || echo '?')"
  echo
  echo "## Tests"
  echo
} > "$REPORT"

# ---- tests: each binary of the GPU suite, run directly (no ctest: the build
# tree's absolute paths are this machine's build machine's) ----------------
fails=0
run_test() { # name [env...]
  local name=$1; shift
  local log="$OUT/test_$name${MT_TEST_TARGET:+_$MT_TEST_TARGET}.log"
  if [ ! -x "$B/tests/$name" ]; then echo "| $name | missing |" >> "$REPORT"; fails=$((fails+1)); return; fi
  local t0=$(date +%s)
  env "$@" timeout 300 "$B/tests/$name" > "$log" 2>&1
  local rc=$? t=$(( $(date +%s) - t0 ))
  local summary=$(grep -E "PASSED|FAILED|SKIPPED" "$log" | tr '\n' ' ' | sed 's/  */ /g')
  echo "| $name $* | rc=$rc | ${t}s | $summary |" >> "$REPORT"
  [ $rc -eq 0 ] || fails=$((fails+1))
}
echo "| test | status | time | cmocka |" >> "$REPORT"
echo "|---|---|---|---|" >> "$REPORT"
run_test test_cuda_device
run_test test_nvrtc
run_test test_cuda_c_gpu
run_test test_api          # a run on the caller's stream
run_test test_tune         # test_gpu_tune: tuning a softmax's gpu_reduce_rows knobs on the GPU
run_test test_apply_rule   # the GPU rules' knobs (emulated; the CPU's too)
# the op suites and the matmul rules on the GPU itself (tests/test_util.h: MT_TEST_TARGET=cuda)
for t in test_ops_nn test_ops_math test_ops_math_operators test_ops_shape test_numerics \
         test_gpu_matmul test_bfloat16; do
  [ -x "$B/tests/$t" ] && run_test "$t" MT_TEST_TARGET=cuda
done

# ---- the programs of tests/gpu on the GPU against their emulation ---------------
{
  echo
  echo "GPU runs of tests/gpu/*.py against the emulation (mtc --random, same seed):"
  echo
  echo '```'
} >> "$REPORT"
# one program and size: its report in $g/report, its verdict in $g/ok
run_program() {
  local p=$1 n=$2 g=$3
  rm -rf "$g"; mkdir -p "$g"
  echo "$p n=$n:" > "$g/report"
  if "$B/mtc" "$p" --target cuda --random --dim n=$n --output-dir "$g/gpu" > "$g/gpu.log" 2>&1 &&
     "$B/mtc" "$p" --target cuda --emulate --random --dim n=$n --output-dir "$g/emu" > "$g/emu.log" 2>&1; then
    python3 tests/gpu/compare.py "$g/emu" "$g/gpu" 1e-4 1e-4 >> "$g/report" 2>&1 && touch "$g/ok"
  else
    cat "$g/gpu.log" "$g/emu.log" 2>/dev/null | head -5 >> "$g/report"
  fi
}
runs=()
for p in tests/gpu/*.py; do
  case "$p" in */compare.py) continue ;; esac
  for n in 1 1000; do
    g="$OUT/run/$(basename "$p" .py)_$n"
    run_program "$p" $n "$g" &   # the programs at once: the machine has the cores
    runs+=("$g")
  done
done
wait
for g in "${runs[@]}"; do
  cat "$g/report" >> "$REPORT"
  [ -e "$g/ok" ] || fails=$((fails+1))
done
echo '```' >> "$REPORT"
echo "failed checks: $fails" >> "$REPORT"

# ---- benchmark and references ---------------------------------------------------
{
  echo
  echo "## minitriton on the GPU (bench/gpu_bench.c: wall time per mt_kernel_run, launches and final wait included)"
  echo
} >> "$REPORT"
timeout 240 "$B/bench/mt_gpu_bench" $QUICK --json "$OUT/gpu_bench.json" >> "$REPORT" 2> "$OUT/gpu_bench.err"
echo "(mt_gpu_bench exit $?)" >> "$REPORT"
OUT="$OUT" timeout 150 ./scripts/gpu_reference.sh $QUICK > "$OUT/gpu_reference.log" 2>&1
{
  echo
  echo "## Ratios against the goals"
  echo
  python3 bench/gpu_ratios.py "$OUT/gpu_bench.json" "$OUT/gpu_reference.json" 2>&1
  echo
  echo "## References (bench/gpu_reference.py)"
  echo
  sed -n '/^| case/,/^$/p' "$OUT/gpu_reference.md" 2>/dev/null
} >> "$REPORT"
cat "$REPORT"
[ $fails -eq 0 ]
