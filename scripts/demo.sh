#!/usr/bin/env bash
# Builds minitriton and runs the demo: compiles the examples/ kernels through
# the library and prints every stage of the fusion example and the results.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# the configuration scripts/test.sh uses for build/, so that neither script
# reconfigures or rebuilds what the other built; only the demo's targets
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMT_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)" --target example_demo mtc >/dev/null
./build/example_demo examples
