#!/usr/bin/env bash
# Runs minitriton's CPU benchmark (bench/bench.c): installs what it needs
# (OpenBLAS, the matmul reference, besides the usual packages), builds a
# Release tree in build-bench, and runs bench/mt_bench: memory bandwidth,
# OpenBLAS sgemm, then each kernel on 1 and 2 threads against them, then
# compile latency. Markdown tables on stdout, progress on stderr; one to
# three minutes. docs/performance.md shows a run and reads it.
#
#   ./scripts/bench.sh > bench.md
set -euo pipefail
cd "$(dirname "$0")/.."
MT_SETUP_EXTRA="libopenblas-dev python3-numpy ${MT_SETUP_EXTRA:-}" ./scripts/setup.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" --target mt_bench >/dev/null
# OpenBLAS 0.3.21 takes its AVX2 (Haswell) kernels on Zen 5; SkylakeX is its
# AVX-512 set, the fair reference on a CPU that has AVX-512.
if grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
fi
exec ./build-bench/bench/mt_bench "$@"
