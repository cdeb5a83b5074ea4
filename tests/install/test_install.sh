#!/usr/bin/env bash
# Installs the build tree's minitriton into a scratch prefix and builds
# examples/embed.c against it four ways -- CMake package (shared, static),
# pkg-config (minitriton, minitriton-static) -- then runs each program,
# which checks its own results. The static programs must not need
# libminitriton.so.
#
#   test_install.sh BUILD_DIR SOURCE_DIR WORK_DIR [CONSUMER_CFLAGS]
set -euo pipefail
build=$1 src=$2 work=$3 cflags=${4:-}
rm -rf "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/minitriton.h bin/mtc; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done

run() { # name program
  local out
  out=$("$2") || { echo "FAIL: $1 exited with $?"; exit 1; }
  [ "$out" = "12 24 36 48 60" ] || { echo "FAIL: $1 printed '$out'"; exit 1; }
  echo "ok: $1"
}
static_only() { # name program: no libminitriton.so in its dependencies
  if ldd "$2" | grep -q libminitriton; then echo "FAIL: $1 needs libminitriton.so"; exit 1; fi
}

cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DEMBED_SOURCE="$src/examples/embed.c" -DCMAKE_C_FLAGS="$cflags" >/dev/null
cmake --build "$work/cmake" >/dev/null
run "find_package, minitriton::minitriton" "$work/cmake/embed_shared"
run "find_package, minitriton::minitriton_static" "$work/cmake/embed_static"
static_only "find_package, minitriton::minitriton_static" "$work/cmake/embed_static"

pcdir=$(dirname "$(find "$prefix" -name minitriton.pc)")
export PKG_CONFIG_PATH="$pcdir"
libdir=$(pkg-config --variable=libdir minitriton)
# shellcheck disable=SC2046 # word splitting of the flags is intended
cc $cflags "$src/examples/embed.c" $(pkg-config --cflags --libs minitriton) \
   -Wl,-rpath,"$libdir" -o "$work/embed_pc_shared"
run "pkg-config minitriton" "$work/embed_pc_shared"
# shellcheck disable=SC2046
cc $cflags "$src/examples/embed.c" $(pkg-config --cflags --libs minitriton-static) \
   -o "$work/embed_pc_static"
run "pkg-config minitriton-static" "$work/embed_pc_static"
static_only "pkg-config minitriton-static" "$work/embed_pc_static"
