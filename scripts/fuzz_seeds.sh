#!/usr/bin/env bash
# Writes the fuzz harnesses' seeds (scripts/fuzz.sh and scripts/fuzz_pack.sh
# call it from the repository root):
#
#     scripts/fuzz_seeds.sh NPY_SEEDS DEST
#
# DEST/compile: the kernels of the error corpus, the golden tests, the
# examples, the front-end goldens and the fuzz regressions (.py); DEST/npy:
# the .npy files that NPY_SEEDS (the built tests/fuzz/npy_seeds) writes and
# the .npy fuzz regressions.
set -euo pipefail
npy_seeds=$1 dest=$2
mkdir -p "$dest/compile" "$dest/npy"
for f in tests/errors/corpus/*.py tests/golden/*.py examples/kernels/*.py \
         tests/frontend/golden/*.py tests/fuzz/regressions/*.py; do
  [ -e "$f" ] && cp "$f" "$dest/compile/$(echo "$f" | tr / _)"
done
"$npy_seeds" "$dest/npy" >/dev/null
cp tests/fuzz/regressions/*.npy "$dest/npy/" 2>/dev/null || true
