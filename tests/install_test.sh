#!/bin/sh
# Installs the build into a temporary DESTDIR, then compiles and runs
# examples/program_api.c against that copy using only pkg-config, as a user
# of the installed library would; then checks that the installed files name
# no build-tree path and that a moved copy of the install runs verify,
# optimize and workloads list on its own runner and catalogue.
#   install_test.sh MESON BUILD_DIR SOURCE_DIR PREFIX LIBDIR CC [SANITIZE]
set -eu
meson=$1 build=$2 src=$3 prefix=$4 libdir=$5 cc=$6 sanitize=${7:-none}
dest=$(mktemp -d "${TMPDIR:-/tmp}/leir-install.XXXXXX")
moved=$(mktemp -d "${TMPDIR:-/tmp}/leir-moved.XXXXXX")
trap 'rm -rf "$dest" "$moved"' EXIT INT TERM

$meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac

# what a packager ships
for f in "$libdir/libleir.so" "$libdir/libleir.a" "$libdir/pkgconfig/leir.pc" \
         "$prefix/include/leir/leir.h" "$prefix/include/leir/common.h" \
         "$prefix/include/leir/program.h" "$prefix/include/leir/experimental/experimental.h" \
         "$prefix/bin/leir"; do
  [ -e "$dest$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
# the kernel runner the cpu backend spawns (backends/runner), wherever
# libexecdir points
[ -n "$(find "$dest$prefix" -name leir-runner -type f -perm -u+x)" ] ||
  { echo "not installed: leir-runner (libexecdir)" >&2; exit 1; }
soname=$(readelf -d "$dest$libdir/libleir.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libleir.so.0 ] || { echo "SONAME is '$soname', expected libleir.so.0" >&2; exit 1; }

# compile the example with pkg-config against the installed copy only.
# PKG_CONFIG_LIBDIR replaces pkg-config's default search path, so only
# leir.pc is visible: a dynamic link must not need yaml-0.1.pc or
# libxxhash.pc (the -dev packages), as on a machine with just the runtime
# libraries installed.
export PKG_CONFIG_SYSROOT_DIR="$dest"
unset PKG_CONFIG_PATH
export PKG_CONFIG_LIBDIR="$dest$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs leir) || {
  echo "pkg-config --cflags --libs leir fails when only leir.pc is installed" >&2
  exit 1
}
# a static link still gets everything libleir.a needs
static=$(pkg-config --static --libs leir)
for l in -lleir -lyaml -lxxhash -lm -ldl -lpthread; do
  case " $static " in *" $l "*) ;; *) echo "pkg-config --static --libs leir lacks $l: $static" >&2; exit 1 ;; esac
done
case $flags in *"$dest"*) ;; *) echo "pkg-config does not point into $dest: $flags" >&2; exit 1 ;; esac
case " $(pkg-config --cflags leir) " in
  *" -I$dest$prefix/include "*) ;;
  *) echo "pkg-config --cflags leir lacks -I$dest$prefix/include" >&2; exit 1 ;;
esac
extra=
[ "$sanitize" = none ] || extra="-fsanitize=$sanitize"
# shellcheck disable=SC2086 # word splitting of the flags is intended
$cc $extra -std=c11 -Wall -Wextra -Werror "$src/examples/program_api.c" $flags -o "$dest/program_api"
LD_LIBRARY_PATH="$dest$libdir" "$dest/program_api" > "$dest/out.txt"
grep -q "program file reads back: same program" "$dest/out.txt"
grep -q "malformed text refused at 1:32" "$dest/out.txt"
# and the installed tool runs
LD_LIBRARY_PATH="$dest$libdir" "$dest$prefix/bin/leir" --version | grep -q "^leir "

# the search framework's example (enumerate, apply, verify, time, a seeded
# walk, its trajectory replayed from JSON) over the same pkg-config flags
# shellcheck disable=SC2086 # word splitting of the flags is intended
$cc $extra -std=c11 -Wall -Wextra -Werror "$src/examples/search_framework.c" $flags \
  -o "$dest/search_framework"
LD_LIBRARY_PATH="$dest$libdir" "$dest/search_framework" interp 1 > "$dest/search.txt" ||
  { cat "$dest/search.txt" >&2; echo "examples/search_framework.c failed" >&2; exit 1; }
grep -q "the trajectory replays from JSON to the same alpha hash" "$dest/search.txt" ||
  { cat "$dest/search.txt" >&2; exit 1; }

# the same example linked against libleir.a with the --static flags: a
# directory holding only the archive comes first, so the linker takes it
mkdir "$dest/static"
cp "$dest$libdir/libleir.a" "$dest/static/"
# shellcheck disable=SC2086,SC2046 # word splitting of the flags is intended
$cc $extra -std=c11 -Wall -Wextra -Werror "$src/examples/program_api.c" \
  $(pkg-config --cflags leir) -L"$dest/static" $static -o "$dest/program_api_static"
if readelf -d "$dest/program_api_static" | grep -q 'NEEDED.*libleir'; then
  echo "the --static link still needs libleir.so" >&2
  exit 1
fi
"$dest/program_api_static" > "$dest/out_static.txt"
cmp -s "$dest/out.txt" "$dest/out_static.txt" || { echo "static and shared examples differ" >&2; exit 1; }

# the experimental tier refuses to compile without LEIR_EXPERIMENTAL
printf '#include <leir/experimental/experimental.h>\nint main(void) { return 0; }\n' > "$dest/exp.c"
# shellcheck disable=SC2046
if $cc -std=c11 -c $(pkg-config --cflags leir) "$dest/exp.c" -o "$dest/exp.o" 2>/dev/null; then
  echo "leir/experimental/ compiled without LEIR_EXPERIMENTAL" >&2
  exit 1
fi
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Werror -DLEIR_EXPERIMENTAL -c $(pkg-config --cflags leir) "$dest/exp.c" -o "$dest/exp.o"

# Relocatable and safe (issue 29): the installed library and tool name no
# path of the build tree (debug sections aside: they say where the objects
# were compiled, and packages strip them), so an install can never fall back
# to a build-tree program such as backends/runner/leir-runner.
root=$(cd "$build" && pwd -P)
for f in "$dest$libdir/libleir.so.0" "$dest$prefix/bin/leir"; do
  objcopy --strip-debug "$f" "$dest/nodebug"
  if strings -a "$dest/nodebug" | grep -F -e "$build" -e "$root" >&2; then
    echo "$f names the build tree $root (above)" >&2
    exit 1
  fi
done

# A moved install: the staged tree copied elsewhere and the staged one
# deleted, so the installed tool finds the kernel runner and the workload
# catalogue only relative to the library (lib/self_path.c).
cp -a "$dest/." "$moved/"
rm -rf "$dest"
unset LEIR_RUNNER LEIR_WORKLOADS_DIR
export LD_LIBRARY_PATH="$moved$libdir"
leir=$moved$prefix/bin/leir
runner=$(find "$moved$prefix" -name leir-runner -type f)
catalogue=$(find "$moved$prefix" -type d -path '*/leir/workloads')
cd "$moved"
printf 'L^{8}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}+1;];\n' > a.leir
printf 'L^{2}_{d=0}L^{4}_{a=0}[C^{f32,g}_{d*4+a}=A^{f32,g}_{d*4+a}+1;];\n' > split.leir
fail() { echo "moved install: $1" >&2; [ -z "${2:-}" ] || cat "$2" >&2; exit 1; }
"$leir" verify a.leir split.leir > verify.txt 2>&1 || fail "leir verify failed" verify.txt
grep -q '^EQUAL' verify.txt || fail "leir verify: not EQUAL" verify.txt
"$leir" verify a.leir a.leir > verify.txt 2>&1 || fail "leir verify (same program) failed" verify.txt
"$leir" optimize --samples 2 --no-db a.leir > optimize.txt 2>&1 || fail "leir optimize failed" optimize.txt
grep -q '^samples  *2 ' optimize.txt || fail "leir optimize: not 2 samples" optimize.txt
"$leir" workloads list > workloads.txt 2>&1 || fail "leir workloads list failed" workloads.txt
n=$(wc -l < workloads.txt) want=$(find "$catalogue" -name '*.yaml' | wc -l)
if [ "$n" -ne "$want" ] || [ "$n" -eq 0 ]; then
  fail "leir workloads list: $n workloads, $want files" workloads.txt
fi

# ... and nothing else: without the moved runner or catalogue the tool fails
# (with the build tree still present) and says where it looked. Skipped
# where this machine has the configured paths installed (the last resort).
if [ -e "${runner#"$moved"}" ]; then
  echo "note: ${runner#"$moved"} exists here: the missing-runner checks are skipped"
else
  mv "$runner" "$runner.away"
  if "$leir" verify a.leir split.leir > err.txt 2>&1; then fail "verify ran without the moved runner"; fi
  grep -qF "$runner (missing)" err.txt || fail "the error does not name $runner" err.txt
  if grep -F -e "$build" -e "$root" err.txt; then fail "the error names the build tree" err.txt; fi
  mv "$runner.away" "$runner"
  # a runner in a directory others may write to is not used
  chmod o+w "$(dirname "$runner")"
  if "$leir" verify a.leir split.leir > err.txt 2>&1; then fail "verify used a runner in a directory writable by others"; fi
  grep -q "not used" err.txt || fail "the error does not say why the runner was not used" err.txt
  chmod o-w "$(dirname "$runner")"
fi
if [ -e "${catalogue#"$moved"}" ]; then
  echo "note: ${catalogue#"$moved"} exists here: the missing-catalogue check is skipped"
else
  mv "$catalogue" "$moved/workloads.away"
  if "$leir" workloads list > err.txt 2>&1; then fail "workloads listed without the moved catalogue"; fi
  grep -qF "also looked at $catalogue" err.txt || fail "the error does not name $catalogue" err.txt
  mv "$moved/workloads.away" "$catalogue"
fi
echo "installed into $dest$prefix; example built with: $flags; moved to $moved$prefix:" \
     "verify, optimize and workloads list ran from there"
