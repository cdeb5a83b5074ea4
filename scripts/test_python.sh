#!/usr/bin/env bash
# The Python package's tests: installs python/ with pip into a virtual
# environment over Debian's python3 (numpy, pytest and setuptools from
# Debian's packages: --system-site-packages, --no-build-isolation,
# --no-index, so nothing is downloaded), then runs pytest on python/tests
# against BUILD_DIR's libminitriton.so (recorded by the install as the
# build tree of this repository).
#
#   scripts/test_python.sh [BUILD_DIR]     default build/; the library must be built
#
# MT_PYTHON names the interpreter (default /usr/bin/python3, Debian's: a
# python3 earlier on PATH, such as pyenv's, may lack numpy). Exits non-zero
# when a test fails or when pytest ran no test.
set -euo pipefail
cd "$(dirname "$0")/.."
export MINITRITON_CACHE_DIR=off # the tests time LLVM; never the user's disk cache
root=$PWD
build=$(cd "${1:-build}" && pwd)
[ -f "$build/libminitriton.so" ] || { echo "test_python: $build/libminitriton.so is not built"; exit 1; }
py=${MT_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
venv=$build/venv

if ! "$venv/bin/python" -c "import numpy, pytest, setuptools" 2>/dev/null; then
  rm -rf "$venv"
  "$py" -m venv --system-site-packages "$venv"
fi
MINITRITON_BUILD_DIR=$build "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir \
  --no-build-isolation --no-index ./python
# outside the source tree, so that the installed package is the one imported
cd "$venv"
"$venv/bin/python" -c 'import minitriton as m; print("python: minitriton from %s, library %s" % (m.__file__, m.library_path))'
set +e
MT_PYTHON_INSTALLED=$build "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "test_python: pytest ran no test"; exit 1; fi
exit "$rc"
