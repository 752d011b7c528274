#!/bin/sh
# Installs the build into a temporary DESTDIR, then compiles and runs
# examples/program_api.c against that copy using only pkg-config, as a user
# of the installed library would.
#   install_test.sh MESON BUILD_DIR SOURCE_DIR PREFIX LIBDIR CC [SANITIZE]
set -eu
meson=$1 build=$2 src=$3 prefix=$4 libdir=$5 cc=$6 sanitize=${7:-none}
dest=$(mktemp -d "${TMPDIR:-/tmp}/leir-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM

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
echo "installed into $dest$prefix; example built with: $flags"
