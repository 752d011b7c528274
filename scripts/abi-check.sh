#!/bin/sh
# ABI check of libleir.so.0 against the committed baseline (docs/abi.md).
#
#   scripts/abi-check.sh [BUILD_DIR]            compare the build with abi/
#   scripts/abi-check.sh --update [BUILD_DIR]   record the build's ABI in abi/
#   scripts/abi-check.sh --compare OLD NEW HEADERS_DIR [EXPERIMENTAL_LIST]
#        compare two libraries or abidw XML files (tests/abi_check_test.sh)
#
# BUILD_DIR must hold a build with debug information (-g); when it does not
# exist it is set up here (-Doptimization=3 -Ddebug=true: the release flags
# plus -g); default build-abi. Only the shared library is (re)compiled.
#
# Policy: additions pass (new functions, enumerators appended before a
# *_COUNT sentinel, fields appended to the structs named in
# abi/libleir.abignore); every other change, and every removal, fails.
# Functions declared in include/leir/experimental/ are left out (no promise).
# Exit status: 0 compatible, 1 incompatible, 2 usage or tool error.
# Needs abidw and abidiff (libabigail; Debian package abigail-tools).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
baseline=$root/abi/libleir.abi.xml
symbols=$root/abi/libleir.symbols
experimental_list=$root/abi/experimental.symbols
suppressions=$root/abi/libleir.abignore

die() { echo "abi-check: $*" >&2; exit 2; }
for t in abidw abidiff; do
  command -v $t >/dev/null || die "$t not found (install libabigail: apt-get install abigail-tools)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# dump LIB HEADERS_DIR OUT: the ABI as XML, without anything that depends on
# where or when it was built (paths, locations, DT_NEEDED), so that the
# baseline is byte-stable across rebuilds.
dump() {
  readelf -S "$1" | grep -q '\.debug_info' ||
    die "$1 has no debug information: build with -g (-Ddebug=true)"
  abidw --no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed \
    --type-id-style hash --drop-private-types --exported-interfaces-only \
    --headers-dir "$2" --out-file "$tmp/dump.xml" "$1" || die "abidw failed on $1"
  # translation units are named relative to the build directory (or
  # absolute when it lies outside the tree): name them from the source root
  sed -e "s|path='\(\.\./\)*|path='/|" -e "s|path='$root/|path='|" \
    -e "s|path='/|path='|" "$tmp/dump.xml" > "$3"
}

# experimental_names HEADERS_DIR: functions declared in HEADERS_DIR/experimental
experimental_names() {
  [ -d "$1/experimental" ] || return 0
  cat "$1"/experimental/*.h 2>/dev/null | tr '\n' ' ' | tr ';' '\n' |
    grep 'LEIR_API' | sed -n 's/.*[^a-z0-9_]\(leir_[a-z0-9_]*\)[[:space:]]*(.*/\1/p' |
    LC_ALL=C sort -u
}

# compare OLD NEW HEADERS_DIR EXPERIMENTAL_LIST: OLD/NEW are .xml or ELF
compare() {
  old=$1 new=$2 headers=$3 explist=$4
  case $old in *.xml) cp "$old" "$tmp/old.xml" ;; *) dump "$old" "$headers" "$tmp/old.xml" ;; esac
  case $new in *.xml) cp "$new" "$tmp/new.xml" ;; *) dump "$new" "$headers" "$tmp/new.xml" ;; esac
  set -- --suppressions "$suppressions"
  { [ -f "$explist" ] && grep -v '^#' "$explist"; experimental_names "$headers"; } |
    grep . | LC_ALL=C sort -u > "$tmp/experimental" || true
  if [ -s "$tmp/experimental" ]; then
    printf '[suppress_function]\n  name_regexp = ^(%s)$\n' \
      "$(paste -sd'|' "$tmp/experimental")" > "$tmp/experimental.abignore"
    set -- "$@" --suppressions "$tmp/experimental.abignore"
  fi
  rc=0
  abidiff --no-added-syms "$@" "$tmp/old.xml" "$tmp/new.xml" > "$tmp/report" 2>&1 || rc=$?
  if [ $((rc & 3)) -ne 0 ]; then
    cat "$tmp/report" >&2
    die "abidiff failed (status $rc)"
  fi
  if [ "$rc" -ne 0 ]; then
    cat "$tmp/report"
    echo "abi-check: INCOMPATIBLE: the changes above break callers compiled against the baseline."
    echo "abi-check: keep the old declarations (add new functions or append fields instead;"
    echo "abi-check: docs/abi.md says what may change), or, for a new major version only,"
    echo "abi-check: record the new ABI with scripts/abi-check.sh --update."
    return 1
  fi
  abidiff "$@" "$tmp/old.xml" "$tmp/new.xml" > "$tmp/full" 2>&1 || true
  added=$(sed -n "s/^  \[A\] 'function [^']*[ *]\(leir_[a-z0-9_]*\)(.*/\1/p" "$tmp/full")
  if [ -n "$added" ]; then
    echo "abi-check: compatible; added functions (record them with scripts/abi-check.sh --update):"
    printf '%s\n' "$added" | sed 's/^/  /'
  else
    echo "abi-check: compatible"
  fi
  return 0
}

# the library of BUILD_DIR, setting up and compiling build-abi when asked
library() {
  dir=$1
  if [ ! -f "$dir/build.ninja" ]; then
    [ ! -e "$dir" ] || die "$dir exists and is not a meson build directory"
    meson setup "$dir" "$root" -Doptimization=3 -Ddebug=true -Dbench=false >/dev/null ||
      die "meson setup $dir failed"
  fi
  meson compile -C "$dir" leir:shared_library >/dev/null || die "building libleir.so in $dir failed"
  [ -f "$dir/libleir.so.0" ] || die "no $dir/libleir.so.0"
  echo "$dir/libleir.so.0"
}

mode=check
case ${1:-} in
  --update) mode=update; shift ;;
  --compare)
    shift
    [ $# -ge 3 ] || die "usage: abi-check.sh --compare OLD NEW HEADERS_DIR [EXPERIMENTAL_LIST]"
    compare "$1" "$2" "$3" "${4:-/nonexistent}" && exit 0 || exit 1 ;;
  -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
  -*) die "unknown option $1 (see --help)" ;;
esac
dir=${1:-$root/build-abi}
lib=$(library "$dir")

if [ "$mode" = update ]; then
  dump "$lib" "$root/include/leir" "$baseline"
  {
    echo "# Functions declared in include/leir/experimental/ when abi/libleir.abi.xml was"
    echo "# recorded: scripts/abi-check.sh leaves them out (no ABI promise)."
    experimental_names "$root/include/leir"
  } > "$experimental_list"
  sh "$root/tests/symbols_test.sh" --update "$lib" "$symbols" >/dev/null
  echo "abi-check: recorded the ABI of $lib in abi/ ($(grep -vc '^#' "$symbols") functions);"
  echo "abi-check: review 'git diff abi/' and commit it with the change."
  exit 0
fi

[ -f "$baseline" ] || die "no baseline $baseline (scripts/abi-check.sh --update)"
compare "$baseline" "$lib" "$root/include/leir" "$experimental_list" && exit 0 || exit 1
