#!/usr/bin/env bash
# Renders the graphs of the example kernels with Graphviz (mtc --emit dot),
# one cluster per fused group, into docs/images/*.svg: the pictures in
# docs/mtc.md. Needs build/mtc (./scripts/demo.sh builds it) and graphviz.
set -euo pipefail
cd "$(dirname "$0")/.."
MT_SETUP_EXTRA="graphviz" ./scripts/setup.sh
[ -x build/mtc ] || cmake --build build --target mtc >/dev/null
for k in fused_add mlp; do
  ./build/mtc --emit dot "examples/kernels/$k.py" | dot -Tsvg -o "docs/images/$k.svg"
  echo "docs/images/$k.svg"
done
./build/mtc --emit dot tests/golden/control_flow.py | dot -Tsvg -o docs/images/control_flow.svg
echo "docs/images/control_flow.svg"
