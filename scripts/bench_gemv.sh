#!/usr/bin/env bash
# Runs the GEMV benchmark (bench/gemv_bench.c): x @ W and x @ W.T at 1 x 4096
# @ 4096 x 4096, skinny matmuls and an odd shape, on 1 and 2 threads, each
# against STREAM add, OpenBLAS sgemm and NumPy measured in the same run.
# Builds a Release tree in build-bench, as scripts/bench.sh does. Markdown on
# stdout, progress on stderr; about two minutes.
#
#   ./scripts/bench_gemv.sh > gemv.md        (./scripts/bench_gemv.sh 4096x4096: those rows)
set -euo pipefail
cd "$(dirname "$0")/.."
MT_SETUP_EXTRA="libopenblas-dev python3-numpy ${MT_SETUP_EXTRA:-}" ./scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" --target mt_gemv_bench >/dev/null
if grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
fi
exec ./build-bench/bench/mt_gemv_bench "$@"
