#!/bin/sh
# The minimal libleir (issue 34.3): configures a build with every optional
# feature disabled (SQLite, libcurl, CUDA, fuzzing; no tests, no benchmarks),
# builds only its libraries, checks that it needs none of the optional
# libraries, then links tests/minimal/embed_minimal.c against libleir.a with
# the flags of that build's leir.pc (pkg-config --static) and runs it: parse,
# check, print, candidates, apply, replay and verify on the interpreter.
#   minimal_build_test.sh MESON SOURCE_DIR CC
set -eu
meson=$1 src=$2 cc=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/leir-minimal.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# unoptimized: the test is about what is linked, not how fast it runs
CC=$cc $meson setup "$dir/build" "$src" --buildtype=plain -Dsqlite=disabled -Dcurl=disabled \
  -Dcuda=disabled -Dfuzz=disabled -Dtests=false -Dbench=false >"$dir/setup.log" 2>&1 || {
  cat "$dir/setup.log" >&2
  echo "configuring the minimal build failed" >&2
  exit 1
}
# only the libraries and the parts they are made of
so=$(sed -n 's/^build \(libleir\.so\.[0-9.]*\):.*/\1/p' "$dir/build/build.ninja" | head -1)
ninja -C "$dir/build" libleir.a "$so" >"$dir/build.log" 2>&1 || {
  tail -40 "$dir/build.log" >&2
  exit 1
}
lib=$dir/build/libleir.a
# the shared library of that build links (its version script names the
# search functions it lacks) and needs no optional library
so_needed=$(readelf -d "$dir/build/$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $so_needed" in
  *" libsqlite3"* | *" libcurl"*) echo "minimal $so needs: $so_needed" >&2; exit 1 ;;
esac

# no optional dependency: no SQLite or libcurl symbol is needed, the search
# part is left out, and leir.pc names neither library
if nm "$lib" 2>/dev/null | grep -E ' U (sqlite3_|curl_)' >"$dir/undef"; then
  echo "the minimal libleir.a needs optional libraries:" >&2
  sort -u "$dir/undef" >&2
  exit 1
fi
if nm -g --defined-only "$lib" 2>/dev/null | grep -q ' T leir_search_run$'; then
  echo "the minimal libleir.a has the search part (leir_search_run)" >&2
  exit 1
fi
nm -g --defined-only "$lib" | grep -q ' T leir_program_parse$' ||
  { echo "libleir.a lacks leir_program_parse" >&2; exit 1; }
export PKG_CONFIG_PATH="$dir/build/meson-uninstalled"
static=$(pkg-config --static --libs leir)
case " $static " in
  *" -lsqlite3 "* | *" -lcurl "*) echo "leir.pc of the minimal build lists $static" >&2; exit 1 ;;
esac

# a static link of libleir: libleir.a in place of -lleir, the rest as leir.pc says
link=$(echo " $static " | sed "s| -lleir | $lib |")
# shellcheck disable=SC2086 # word splitting of the flags is intended
$cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags leir) \
  "$src/tests/minimal/embed_minimal.c" $link -o "$dir/embed_minimal"
needed=$(readelf -d "$dir/embed_minimal" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for bad in libleir libsqlite3 libcurl; do
  case " $(echo $needed) " in
    *" $bad"*) echo "embed_minimal needs $bad: $needed" >&2; exit 1 ;;
  esac
done
"$dir/embed_minimal" >"$dir/out.txt"
# the toolchain's example (examples/toolchain_embed.c), linked the same way
# shellcheck disable=SC2086 # word splitting of the flags is intended
$cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags leir) \
  "$src/examples/toolchain_embed.c" $link -o "$dir/toolchain_embed"
"$dir/toolchain_embed" >"$dir/toolchain.txt" || { cat "$dir/toolchain.txt" >&2; exit 1; }
cat "$dir/toolchain.txt"
grep -q "^verified: EQUAL\|^verified: CLOSE" "$dir/toolchain.txt"
cat "$dir/out.txt"
grep -q "parsed and checked: prints back the same" "$dir/out.txt"
grep -qE "candidates: ([0-9]+), replayed from JSON: \1, verified on the interpreter: \1$" "$dir/out.txt"
echo "minimal libleir: static link without SQLite, libcurl or CUDA runs"
