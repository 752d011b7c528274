#!/bin/sh
# What a packager does (issue 29, "relocatable, safe install"): a fresh
# release build from this source tree, `meson install --destdir STAGE`, the
# build directory removed; then verify, optimize and the workload catalogue
# must work from the staged tree alone (LD_LIBRARY_PATH at its libdir),
# finding the kernel runner and the workloads relative to the library
# (lib/self_path.c), and no installed binary may name the build directory.
#
#   scripts/staged-install-check.sh [MESON_SETUP_OPTION...]
#   scripts/staged-install-check.sh --take-build DIR
#
# --take-build: instead of a fresh build, DIR (a configured build of this
# tree, e.g. CI's release build once nothing else needs it) is reconfigured
# for the prefix, its installed targets recompiled (what the prefix changes),
# installed, and removed like a fresh one: the same checks, without
# compiling the library a further time.
#
# The prefix is $PREFIX (default /opt/leir-staged-check), a path that must
# not exist on this machine: the configured absolute paths, the library's
# last resort, then find nothing, so only the relative lookup can succeed.
# Only the installed targets are compiled (no tests, no benchmarks): about
# two minutes on two cores. Exit status 0 when every check passes.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${PREFIX:-/opt/leir-staged-check}
[ ! -e "$prefix" ] || { echo "staged-install-check: $prefix exists here; set PREFIX" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-staged.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
build=$tmp/build stage=$tmp/stage work=$tmp/work
mkdir "$work"
take=
if [ "${1:-}" = --take-build ]; then
  [ -n "${2:-}" ] && [ -f "$2/build.ninja" ] || { echo "staged-install-check: --take-build needs a meson build directory" >&2; exit 2; }
  take=$(cd "$2" && pwd)
  shift 2
fi

step() { echo "staged-install-check: $*"; }
fail() {
  echo "staged-install-check: FAILED: $1" >&2
  [ -z "${2:-}" ] || cat "$2" >&2
  exit 1
}

if [ -n "$take" ]; then
  build=$take
  step "reconfigure the build $build for prefix $prefix"
  meson configure "$build" --prefix "$prefix" > "$tmp/setup.log" 2>&1 ||
    fail "meson configure" "$tmp/setup.log"
else
  step "configure a release build in $build (prefix $prefix)"
  meson setup "$build" "$root" --prefix "$prefix" -Dbuildtype=release -Dbench=false \
    -Dfuzz=disabled "$@" > "$tmp/setup.log" 2>&1 || fail "meson setup" "$tmp/setup.log"
fi
# the installed targets only: the test suites are not needed here
targets=$(meson introspect "$build" --targets | python3 -c '
import json, os, sys
build = sys.argv[1]
for t in json.load(sys.stdin):
    if t["installed"]:
        for f in t["filename"]:
            print(os.path.relpath(f, build))' "$build")
step "compile $(echo "$targets" | tr '\n' ' ')"
# shellcheck disable=SC2086 # one word per target
ninja -C "$build" $targets > "$tmp/build.log" 2>&1 || fail "compile" "$tmp/build.log"
step "meson install --destdir $stage"
meson install -C "$build" --no-rebuild --destdir "$stage" > "$tmp/install.log" 2>&1 ||
  fail "meson install" "$tmp/install.log"

lib=$(find "$stage" -name libleir.so.0 | head -n 1)
leir=$(find "$stage" -path '*/bin/leir' -type f | head -n 1)
runner=$(find "$stage" -name leir-runner -type f | head -n 1)
catalogue=$(find "$stage" -type d -path '*/leir/workloads' | head -n 1)
for v in "$lib" "$leir" "$runner" "$catalogue"; do
  [ -n "$v" ] || fail "the staged install lacks libleir.so.0, bin/leir, leir-runner or leir/workloads"
done

real_build=$(cd "$build" && pwd -P)
for f in "$lib" "$leir" "$runner"; do
  objcopy --strip-debug "$f" "$tmp/nodebug"
  if strings -a "$tmp/nodebug" | grep -F -e "$build" -e "$real_build" > "$tmp/hits"; then
    fail "$f names the build directory:" "$tmp/hits"
  fi
done
step "ok: libleir.so.0, leir and leir-runner name no path of the build directory"

rm -rf "$build"
step "removed the build directory; running from $stage$prefix"
unset LEIR_RUNNER LEIR_WORKLOADS_DIR
LD_LIBRARY_PATH=$(dirname "$lib")
export LD_LIBRARY_PATH
cd "$work"
printf 'L^{8}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}+1;];\n' > a.leir
printf 'L^{2}_{d=0}L^{4}_{a=0}[C^{f32,g}_{d*4+a}=A^{f32,g}_{d*4+a}+1;];\n' > split.leir

"$leir" verify a.leir split.leir > out.txt 2>&1 || fail "leir verify a.leir split.leir" out.txt
grep -q '^EQUAL' out.txt || fail "leir verify a.leir split.leir: not EQUAL" out.txt
step "ok: leir verify a.leir split.leir: $(head -n 1 out.txt)"

"$leir" optimize --samples 2 --no-db a.leir > out.txt 2>&1 ||
  fail "leir optimize --samples 2 --no-db a.leir" out.txt
grep -q '^samples  *2 ' out.txt || fail "leir optimize: not 2 samples" out.txt
step "ok: leir optimize --samples 2: $(grep -m 1 '^best program  ' out.txt | tr -s ' ')"

"$leir" workloads list > out.txt 2>&1 || fail "leir workloads list" out.txt
n=$(wc -l < out.txt) want=$(find "$catalogue" -name '*.yaml' | wc -l)
if [ "$n" -ne "$want" ] || [ "$n" -eq 0 ]; then
  fail "leir workloads list: $n workloads for $want files" out.txt
fi
step "ok: leir workloads list: $n workloads (LEIR_WORKLOADS_DIR unset)"

# without its runner the staged install fails, saying where it looked
mv "$runner" "$runner.away"
if "$leir" verify a.leir split.leir > out.txt 2>&1; then
  fail "leir verify ran with the staged runner removed" out.txt
fi
grep -qF "$runner (missing)" out.txt || fail "the error does not name $runner" out.txt
if grep -F -e "$build" -e "$real_build" out.txt > /dev/null; then
  fail "the error names the build directory" out.txt
fi
mv "$runner.away" "$runner"
step "ok: with leir-runner removed, verify fails and names $runner"
step "passed"
