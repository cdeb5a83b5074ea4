#!/usr/bin/env bash
# Installs what minitriton needs to build and test, from Debian's packages.
# Idempotent: installs only what is missing; runs apt-get update only then.
set -euo pipefail

# libdnnl-dev: oneDNN, the reference of the conv2d benchmark (bench/conv_bench.c);
# locales: localedef, for test_locale's comma locale (de_DE)
PKGS=(build-essential cmake pkgconf llvm-19-dev libffi-dev libcmocka-dev libdlpack-dev libdnnl-dev locales)
[ "${MT_SETUP_EXTRA:-}" ] && read -r -a EXTRA <<<"$MT_SETUP_EXTRA" && PKGS+=("${EXTRA[@]}")

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
