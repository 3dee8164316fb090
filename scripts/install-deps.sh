#!/bin/sh
# Install what dc_toolkit needs to build, demo and test on Debian 12, as root.
# Installs only what is missing, so a second run is quick and offline-safe.
#   scripts/install-deps.sh          build + demo dependencies
#   scripts/install-deps.sh --test   also the independent readers the tests compare against, and clang
#                                    (make check builds the library a second way with it)
#   scripts/install-deps.sh --fuzz   also clang and its fuzzer runtime (make fuzz only)
#   scripts/install-deps.sh --fresh  only what scripts/check-fresh.sh needs on the host
set -eu
mode=${1:-}

BUILD="build-essential cmake pkg-config git
  libnetcdf-dev libeccodes-dev libblosc-dev libzstd-dev liblz4-dev zlib1g-dev
  libbz2-dev liblzma-dev libdeflate-dev libzfp-dev libjansson-dev libcmocka-dev libopenjp2-7-dev libudunits2-dev libyaml-dev
  libopenmpi-dev openmpi-bin libcairo2-dev libmicrohttpd-dev libncarg-data"
TEST="python3 python3-numpy python3-numcodecs python3-zfpy python3-netcdf4
  python3-eccodes python3-zarr python3-xarray netcdf-bin
  python3-sklearn chromium valgrind clang"
# libFuzzer ships with clang's compiler-rt; only `make fuzz` needs them.
FUZZ="clang libclang-rt-14-dev"
# Node.js and npm only when the machine has none: a Node.js from elsewhere
# (with its own npm) conflicts with Debian's npm package.
if [ "$mode" = "--test" ] && ! command -v npm >/dev/null 2>&1; then
  TEST="$TEST nodejs npm"
fi

FRESH="debootstrap git"

case $mode in
  "") pkgs=$BUILD ;;
  --test) pkgs="$BUILD $TEST" ;;
  --fresh) pkgs=$FRESH ;;
  --fuzz) pkgs="$BUILD $FUZZ" ;;
  *) echo "install-deps: unknown option $mode (expected --test, --fuzz or --fresh)" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done

if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing" >&2
    echo "install-deps: run as root, or: sudo apt-get install$missing" >&2
    exit 1
  fi
  echo "install-deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing
fi

# npm tools for the interop tests live in the project, never globally.
if [ "$mode" = "--test" ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  if [ ! -d "$here/tests/js/node_modules" ]; then
    echo "install-deps: npm tools into tests/js"
    (cd "$here/tests/js" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
