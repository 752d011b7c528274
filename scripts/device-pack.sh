#!/usr/bin/env bash
# Prepares a build to carry to a GPU machine that cannot build libleir
# itself (no libyaml/libxxhash/check there, no network): a release build in
# build-device/ plus the shared libraries its programs need in
# build-device/device-libs/. Then, on the GPU machine, from the same tree:
#
#   LEIR_DEVICE_BUILD=build-device scripts/device-check.sh
#
# (the check script puts device-libs/ on LD_LIBRARY_PATH). The build is
# small (about 5 MB); executables find libleir through $ORIGIN rpaths.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-device}
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" "$ROOT" -Dcuda=enabled -Dbuildtype=release
ninja -C "$BUILD"
mkdir -p "$BUILD/device-libs"
for exe in "$BUILD/tools/leir/leir" "$BUILD/tests/test_cuda" "$BUILD/bench/cuda_kernels" \
           "$BUILD/bench/cuda_compile"; do
  ldd "$exe" | awk '/=> \// {print $3}' | grep -E 'libyaml|libxxhash|libsubunit|libcheck' |
    while read -r lib; do cp -L "$lib" "$BUILD/device-libs/"; done
done
ls "$BUILD/device-libs"
echo "carry $BUILD; run: LEIR_DEVICE_BUILD=$(basename "$BUILD") scripts/device-check.sh"
