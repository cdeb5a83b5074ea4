#!/usr/bin/env bash
# Runs minitriton's CPU benchmark (bench/bench.c): installs what it needs
# (OpenBLAS, the matmul reference, and NumPy, besides the usual packages),
# builds a Release tree in build-bench, and runs bench/mt_bench: memory
# bandwidth, OpenBLAS sgemm, then each kernel on 1 and 2 threads against
# them, then compile latency. Markdown tables on stdout, progress on stderr;
# one to three minutes. docs/performance.md shows a run and reads it.
#
#   ./scripts/bench.sh > bench.md
#   ./scripts/bench.sh NAME > bench.md     # mt_bench's kernels whose name contains NAME
#
# With --sweep it runs the shape sweep instead (bench/sweep.c, mt_sweep):
# matmul, batched matmul and layouts, row ops, reductions, injective copies
# and broadcasting elementwise over many shapes, each against NumPy (a child
# /usr/bin/python3 running bench/numpy_sweep.py) and, for matmul, OpenBLAS
# called directly, measured in the same run; the ratios, their geometric
# mean, the worst case and the cases slower than NumPy (docs/performance.md,
# "Shape sweep"). The arguments after --sweep go to mt_sweep:
#
#   ./scripts/bench.sh --sweep > sweep.md              # 2 threads, a few minutes
#   ./scripts/bench.sh --sweep --threads 1,2 > sweep.md
#   ./scripts/bench.sh --sweep --quick softmax         # a subset, under a minute
#
# With --conv it runs the conv2d benchmark instead (bench/conv_bench.c,
# mt_conv_bench): ResNet's 3x3 and 1x1 layers at batch 1 and 32 against
# oneDNN (libdnnl-dev) in the same run; its arguments follow:
#
#   ./scripts/bench.sh --conv > conv.md                 # 2 threads, a few minutes
#   ./scripts/bench.sh --conv --quick                   # batch 8 instead of 32
#   ./scripts/bench.sh --conv --threads 1 1x1           # one thread (CPU time), the 1x1 rows
#
# With --schedule it runs the user-schedule benchmark (bench/schedule_bench.c,
# mt_schedule_bench): the steps of docs/tutorial.md "Your own schedule" on a
# 1024^3 matmul loop function against the default rule, in the same run:
#
#   ./scripts/bench.sh --schedule > schedule.md        # about a minute
#
# With --tune it runs the autotuning benchmark instead (bench/tune_bench.c,
# mt_tune_bench): mt_tune with 64 trials or 60 s per kernel on small, odd
# and skinny matmuls, narrow softmax rows and matmul 1024, then the default
# and the tuned kernels timed alternately (docs/performance.md,
# "Autotuning"); about five minutes:
#
#   ./scripts/bench.sh --tune > tune.md
#   ./scripts/bench.sh --tune softmax                   # the softmax rows only
set -euo pipefail
cd "$(dirname "$0")/.."
target=mt_bench
if [[ "${1:-}" == "--tune" ]]; then
  target=mt_tune_bench
  shift
elif [[ "${1:-}" == "--sweep" ]]; then
  target=mt_sweep
  shift
elif [[ "${1:-}" == "--conv" ]]; then
  target=mt_conv_bench
  shift
elif [[ "${1:-}" == "--schedule" ]]; then
  target=mt_schedule_bench
  shift
fi
MT_SETUP_EXTRA="libopenblas-dev python3-numpy python3-matplotlib ${MT_SETUP_EXTRA:-}" ./scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" --target "$target" >/dev/null
# OpenBLAS 0.3.21 takes its AVX2 (Haswell) kernels on Zen 5; SkylakeX is its
# AVX-512 set, the fair reference on a CPU that has AVX-512.
if grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
fi
exec "./build-bench/bench/$target" "$@"
