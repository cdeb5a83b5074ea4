#!/usr/bin/env bash
# Runs the GPU references (bench/gpu_reference.py) on a machine with an NVIDIA
# GPU: torch's D2D copy, elementwise chains, softmax and layer_norm, our Triton
# row softmax, cuBLAS matmul (fp32 with TF32 off, fp16), the torch eager MLP,
# device facts, and a probe of libcuda + NVRTC through ctypes. Needs Python 3
# with torch (Triton optional); under a minute (--quick: under 30 s).
#
#   OUT=/some/dir ./scripts/gpu_reference.sh [--quick]
#
# Writes $OUT/gpu_reference.md (the Markdown report, also on stdout) and
# $OUT/gpu_reference.json (OUT defaults to /tmp). Exits non-zero only when
# Python cannot start the script (no python3, or it dies before writing any
# JSON, e.g. a syntax error); a benchmark that fails is reported in its row.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
mkdir -p "$OUT"

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/nvidia-smi: /'
else
  echo "nvidia-smi: not found"
fi

if ! command -v python3 >/dev/null 2>&1; then
  echo "gpu_reference.sh: python3 not found" >&2
  exit 127
fi

rm -f "$OUT/gpu_reference.json"
python3 bench/gpu_reference.py --json "$OUT/gpu_reference.json" "$@" | tee "$OUT/gpu_reference.md"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo "gpu_reference.sh: bench/gpu_reference.py exited with status $rc" >&2
  if [ ! -s "$OUT/gpu_reference.json" ]; then
    exit "$rc"  # it never got as far as its first JSON write: it did not start
  fi
fi
exit 0
