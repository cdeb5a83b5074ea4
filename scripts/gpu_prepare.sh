#!/usr/bin/env bash
# Prepares what scripts/gpu_check.sh runs on a GPU machine that has no LLVM,
# cmocka or network: a release build in build-gpu/ with LLVM linked
# statically into libminitriton.so (MT_LLVM_STATIC, MT_LINK_SHARED), the GPU
# test binaries and mt_gpu_bench linked with it, and the shared libraries
# they load (but libc's) copied to build-gpu/lib; then packs that into
# .gpupack.tar.xz (a few MiB), which gpu_check.sh unpacks when build-gpu/
# is absent. Carry .gpupack.tar.xz to the GPU machine with the work tree.
#
#   ./scripts/gpu_prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=build-gpu
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMT_BUILD_TESTS=ON -DMT_LLVM_STATIC=ON \
  -DMT_LINK_SHARED=ON -DFFI_LIB="$(find /usr/lib -name libffi_pic.a | head -1)" >/dev/null
TESTS="test_cuda_device test_nvrtc test_ops_nn test_ops_math test_ops_math_operators test_ops_shape test_numerics test_cuda_c_gpu test_api test_gpu_matmul test_tune test_apply_rule test_bfloat16"
targets="minitriton mt_gpu_bench mtc"
for t in $TESTS; do
  if grep -q "^build tests/$t:" "$B/build.ninja"; then targets="$targets $t"; fi
done
cmake --build "$B" -j"$(nproc)" --target $targets
rm -rf "$B/lib" && mkdir -p "$B/lib"
cp -L "$B/libminitriton.so.0" "$B/lib/" && strip --strip-unneeded "$B/lib/libminitriton.so.0"
bins="$B/bench/mt_gpu_bench $B/mtc"
for t in $TESTS; do [ -x "$B/tests/$t" ] && bins="$bins $B/tests/$t"; done
for lib in $(ldd $bins "$B/lib/libminitriton.so.0" | awk '/=> \//{print $3}' | sort -u); do
  case "$(basename "$lib")" in libc.so* | libm.so* | ld-linux* | libminitriton*) ;; *) cp -L "$lib" "$B/lib/" ;; esac
done
# the commit the binaries were built from ("-dirty": with uncommitted changes),
# for the report: the GPU machine's copy of the tree may not carry git's state
git describe --always --dirty --abbrev=7 > "$B/commit.txt" 2>/dev/null || echo "?" > "$B/commit.txt"
files="$B/lib $B/bench/mt_gpu_bench $B/mtc $B/commit.txt"
for t in $TESTS; do [ -x "$B/tests/$t" ] && files="$files $B/tests/$t"; done
tar -cJf .gpupack.tar.xz $files
ls -la .gpupack.tar.xz
