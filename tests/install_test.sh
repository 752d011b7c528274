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
         "$prefix/include/leir/program.h" "$prefix/bin/leir"; do
  [ -e "$dest$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
soname=$(readelf -d "$dest$libdir/libleir.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libleir.so.0 ] || { echo "SONAME is '$soname', expected libleir.so.0" >&2; exit 1; }

# compile the example with pkg-config against the installed copy only
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$dest$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs leir)
case $flags in *"$dest"*) ;; *) echo "pkg-config does not point into $dest: $flags" >&2; exit 1 ;; esac
extra=
[ "$sanitize" = none ] || extra="-fsanitize=$sanitize"
# shellcheck disable=SC2086 # word splitting of the flags is intended
$cc $extra -std=c11 -Wall -Wextra -Werror "$src/examples/program_api.c" $flags -o "$dest/program_api"
LD_LIBRARY_PATH="$dest$libdir" "$dest/program_api" > "$dest/out.txt"
grep -q "program file reads back: same program" "$dest/out.txt"
grep -q "malformed text refused at 1:32" "$dest/out.txt"
# and the installed tool runs
LD_LIBRARY_PATH="$dest$libdir" "$dest$prefix/bin/leir" --version | grep -q "^leir "
echo "installed into $dest$prefix; example built with: $flags"
