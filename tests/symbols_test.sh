#!/bin/sh
# The shared library exports the public leir_* API and nothing else, exactly
# the functions listed in abi/libleir.symbols, and its SONAME carries the
# major version. The public headers use no internal (leir__/LEIR__) names.
#   symbols_test.sh LIBLEIR.SO SYMBOLS_LIST [INCLUDE_DIR]
#   symbols_test.sh --update LIBLEIR.SO SYMBOLS_LIST   rewrite the list
set -eu
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
lib=$1 list=$2 incdir=${3:-}

# names without their symbol version (leir_x@@LEIR_0), and without the
# version nodes themselves (absolute symbols, type A: lib/libleir.map)
all=$(nm -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $NF); print $NF}' | LC_ALL=C sort)
[ -n "$all" ] || { echo "no exported symbols in $lib" >&2; exit 1; }
bad=$(printf '%s\n' "$all" | grep -v '^leir_' || true)
if [ -n "$bad" ]; then
  echo "exported symbols outside the leir_ namespace:" >&2
  printf '%s\n' "$bad" >&2
  exit 1
fi
# internal helpers (leir__*) stay hidden
internal=$(printf '%s\n' "$all" | grep '^leir__' || true)
[ -z "$internal" ] || { echo "internal symbols exported: $internal" >&2; exit 1; }
# only functions: exported data would freeze its size and layout
data=$(nm -D --defined-only "$lib" | awk '$2 != "T" && $2 != "A" {print $NF}')
[ -z "$data" ] || { echo "exported symbols that are not functions: $data" >&2; exit 1; }

if [ "$update" = 1 ]; then
  {
    echo "# Functions exported by libleir.so.0, one per line, sorted (LC_ALL=C)."
    echo "# tests/symbols_test.sh fails when the library exports anything else;"
    echo "# adding a public function means updating this list on purpose:"
    echo "#   scripts/abi-check.sh --update BUILD_DIR   (docs/abi.md)"
    printf '%s\n' "$all"
  } > "$list"
  echo "wrote $(printf '%s\n' "$all" | wc -l) symbols to $list"
  exit 0
fi

expected=$(grep -v '^#' "$list" | grep -v '^$' | LC_ALL=C sort)
if [ "$all" != "$expected" ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-symbols.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT INT TERM
  printf '%s\n' "$expected" > "$tmp/expected"
  printf '%s\n' "$all" > "$tmp/exported"
  {
    echo "the exported symbols differ from $list:"
    comm -13 "$tmp/expected" "$tmp/exported" | sed 's/^/  new (not in the list): /'
    comm -23 "$tmp/expected" "$tmp/exported" | sed 's/^/  missing (an ABI break): /'
    echo "A removed or renamed function breaks every caller compiled against it (docs/abi.md)."
    echo "If you added a public function on purpose, update the list and the ABI baseline with"
    echo "  scripts/abi-check.sh --update BUILD_DIR"
    echo "and commit abi/ with the change."
  } >&2
  exit 1
fi

if [ -n "$incdir" ]; then
  # internal names never appear in a public header
  leaks=$(grep -rn 'leir__\|LEIR__' "$incdir" || true)
  [ -z "$leaks" ] || { echo "internal names in public headers:" >&2; echo "$leaks" >&2; exit 1; }
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libleir.so.0 ] || { echo "SONAME is '$soname', expected libleir.so.0" >&2; exit 1; }
echo "$(printf '%s\n' "$all" | wc -l) exported symbols, all leir_* functions, as listed in $list; SONAME $soname"
