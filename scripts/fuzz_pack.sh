#!/usr/bin/env bash
# Packs the libFuzzer harnesses for a long run on another x86-64 Linux machine
# (a lent many-core machine with no LLVM 19 and no package registry):
#
#     scripts/fuzz_pack.sh [DIR]        # default .fuzzpack/ (git-ignored)
#
# Builds build-fuzz-static/ (the same -O1 sanitized harnesses as scripts/fuzz.sh,
# but LLVM and libffi linked statically: MT_LLVM_STATIC) and writes DIR/fuzzpack.tar.xz
# holding the harnesses (debug info stripped, symbols kept), the shared libraries
# they still need (libstdc++, libgcc_s, libz, libzstd: glibc >= 2.36 must be there),
# the seeds, build-fuzz/corpus/, the dictionary, the LeakSanitizer suppressions and
# run.sh. There:
#
#     tar xJf fuzzpack.tar.xz && fuzzpack/run.sh compile|npy|tir|graph SECONDS WORKERS [TIMEOUT] [FLAGS...]
#
# runs one harness through scripts/fuzz_run.sh, as scripts/fuzz.sh does (-fork=WORKERS,
# crashes, timeouts and OOMs not ignored, -timeout, -rss_limit_mb=2048); the log is
# fuzzpack/logs/NAME.log, a finding's input fuzzpack/artifacts/, the grown corpus
# fuzzpack/corpus/NAME/ (bring it back into build-fuzz/corpus/ with cp -rn).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.fuzzpack}"
MT_SETUP_EXTRA="${MT_SETUP_EXTRA:-} clang libclang-rt-14-dev" ./scripts/setup.sh

dir=build-fuzz-static
echo "== fuzz_pack: building in $dir"
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DMT_FUZZ=ON -DMT_BUILD_TESTS=OFF -DMT_LLVM_STATIC=ON \
  -DFFI_LIB="$(find /usr/lib -name libffi.a | head -1)" >/dev/null
cmake --build "$dir" -j"$(nproc)" --target fuzz_compile fuzz_npy fuzz_tir fuzz_graph npy_seeds >/dev/null

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
p="$stage/fuzzpack"
mkdir -p "$p/bin" "$p/lib" "$p/seeds" "$p/corpus"
for h in fuzz_compile fuzz_npy fuzz_tir fuzz_graph; do
  objcopy --strip-debug "$dir/tests/fuzz/$h" "$p/bin/$h"
done
# the shared libraries the harnesses still load, but libc's own
for lib in $(ldd "$p"/bin/fuzz_* | awk '/=> \//{print $3}' | sort -u); do
  case "$(basename "$lib")" in libc.so* | libm.so* | ld-linux*) ;; *) cp -L "$lib" "$p/lib/" ;; esac
done
scripts/fuzz_seeds.sh "$dir/tests/fuzz/npy_seeds" "$p/seeds"
cp -r "$p/seeds/compile" "$p/seeds/tir"   # kernels: the same seeds (as scripts/fuzz.sh)
cp -r "$p/seeds/compile" "$p/seeds/graph"
for h in compile npy tir graph; do
  mkdir -p "$p/corpus/$h"
  if [ -d "build-fuzz/corpus/$h" ]; then cp -r "build-fuzz/corpus/$h/." "$p/corpus/$h/"; fi
done
cp tests/fuzz/kernel.dict tests/lsan.supp scripts/fuzz_run.sh "$p/"
cat >"$p/run.sh" <<'EOF'
#!/usr/bin/env bash
# run.sh compile|npy|tir|graph SECONDS WORKERS [TIMEOUT] [LIBFUZZER-FLAGS...]: one harness,
# as scripts/fuzz.sh runs it (e.g. -entropic=0 for the long runs of tir and graph)
set -uo pipefail
# (SECONDS includes the first pass over the corpus, minutes for a grown one)
cd "$(dirname "$0")"
usage() { echo "usage: run.sh compile|npy|tir|graph SECONDS WORKERS [TIMEOUT] [LIBFUZZER-FLAGS...]" >&2; exit 2; }
[ $# -ge 3 ] || usage
name=$1 secs=$2 workers=$3 timeout=${4:-10}
shift $(($# < 4 ? $# : 4))
case "$name" in compile | npy | tir | graph) ;; *) usage ;; esac
for n in "$secs" "$workers" "$timeout"; do case "$n" in '' | *[!0-9]*) usage ;; esac; done
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
dict=(); [ "$name" = npy ] || dict=(-dict=kernel.dict)
MT_FUZZ_FORK=$workers MT_FUZZ_TIMEOUT=$timeout \
  ./fuzz_run.sh "bin/fuzz_$name" "$name" "$secs" . "$PWD/lsan.supp" "${dict[@]}" "$@" || exit 1
echo "run.sh: $name: no crash, leak or timeout"
EOF
chmod +x "$p/run.sh"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/fuzzpack.tar.xz" fuzzpack
ls -la "$out/fuzzpack.tar.xz"
