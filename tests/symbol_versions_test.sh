#!/bin/sh
# The two tiers are apart in the binary (docs/abi.md, "Symbol versions"):
#  - every function declared in include/leir/experimental/ is exported in the
#    version node LEIR_EXPERIMENTAL_<n>, n = LEIR_EXPERIMENTAL_VERSION of
#    experimental.h, and every other export in LEIR_0;
#  - every function declared in a stable header is exported, and the ABI
#    baseline abi/libleir.abi.xml lists every stable export;
#  - the experimental headers state the one promise of experimental.h;
#  - LEIR_VERSION_STRING (common.h) is the project's version, and no
#    "Added in X.Y.Z" of a header names a later one.
#   symbol_versions_test.sh LIBLEIR.SO SOURCE_DIR PROJECT_VERSION
set -eu
lib=$1 src=$2 project_version=$3
inc=$src/include/leir
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-symver.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# functions declared with LEIR_API in the given headers (as scripts/abi-check.sh reads them)
declared() {
  cat "$@" | tr '\n' ' ' | tr ';' '\n' | grep 'LEIR_API' |
    sed -n 's/.*[^a-z0-9_]\(leir_[a-z0-9_]*\)[[:space:]]*(.*/\1/p' | LC_ALL=C sort -u
}
declared "$inc"/experimental/*.h > "$tmp/experimental"
declared "$inc"/*.h > "$tmp/stable"
[ -s "$tmp/experimental" ] && [ -s "$tmp/stable" ] || { echo "no declarations found under $inc" >&2; exit 1; }

n=$(sed -n 's/^#define LEIR_EXPERIMENTAL_VERSION \([0-9][0-9]*\).*/\1/p' "$inc/experimental/experimental.h")
[ -n "$n" ] || { echo "no LEIR_EXPERIMENTAL_VERSION in experimental.h" >&2; exit 1; }
expnode=LEIR_EXPERIMENTAL_$n

# "name version" of every defined dynamic function; versions as the dynamic
# linker sees them (readelf's symbol table, the default version after @@)
nm -D --defined-only "$lib" | awk '$2 == "T" {print $NF}' |
  sed -n 's/^\(leir_[a-z0-9_]*\)@@\(.*\)$/\1 \2/p' | LC_ALL=C sort > "$tmp/exported"
[ -s "$tmp/exported" ] || { echo "no versioned leir_* functions in $lib (lib/libleir.map)" >&2; exit 1; }
nodes=$(readelf -V "$lib" | sed -n 's/.*Name: \(LEIR_[A-Z0-9_]*\).*/\1/p' | LC_ALL=C sort -u | tr '\n' ' ')
[ "$nodes" = "LEIR_0 $expnode " ] || bad "version nodes are '$nodes', expected 'LEIR_0 $expnode'"
unversioned=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $NF !~ /@@/ {print $NF}')
[ -z "$unversioned" ] || bad "functions without a version: $unversioned"

while read -r name version; do
  if grep -qx "$name" "$tmp/experimental"; then
    [ "$version" = "$expnode" ] || bad "$name is experimental but exported in $version, not $expnode"
  else
    [ "$version" = LEIR_0 ] || bad "$name is stable but exported in $version, not LEIR_0"
    echo "$name" >> "$tmp/stable-exported"
  fi
done < "$tmp/exported"
cut -d' ' -f1 "$tmp/exported" > "$tmp/names"
for name in $(comm -23 "$tmp/experimental" "$tmp/names"); do
  bad "$name is declared in include/leir/experimental/ but not exported"
done
for name in $(comm -23 "$tmp/stable" "$tmp/names"); do
  bad "$name is declared in a stable header but not exported"
done

# the baseline holds every stable export
grep -o "<elf-symbol name='leir_[a-z0-9_]*'" "$src/abi/libleir.abi.xml" |
  sed "s/.*'\(leir_[a-z0-9_]*\)'/\1/" | LC_ALL=C sort -u > "$tmp/baseline"
for name in $(LC_ALL=C sort "$tmp/stable-exported" | comm -23 - "$tmp/baseline"); do
  bad "$name is a stable export missing from abi/libleir.abi.xml (scripts/abi-check.sh --update)"
done

# one promise, in the same words, in every experimental header
promise='no ABI or API promise: any release may change or remove'
for h in "$inc"/experimental/*.h; do
  sed -n '1,/\*\//p' "$h" | sed 's/^ \*//' | tr '\n' ' ' | tr -s ' ' | grep -qF "$promise" ||
    bad "$(basename "$h")'s first comment does not say '$promise ...'"
done

# versions: the header's version is the project's; "Added in" names no later one
hv=$(sed -n 's/^#define LEIR_VERSION_STRING "\(.*\)"/\1/p' "$inc/common.h")
[ "$hv" = "$project_version" ] || bad "LEIR_VERSION_STRING is '$hv', the project version '$project_version'"
num() { echo "$1" | awk -F. '{printf "%d\n", $1 * 10000 + $2 * 100 + $3}'; }
grep -rhoE 'Added in [0-9]+(\.[0-9]+)*' "$inc" | sed 's/Added in //' | LC_ALL=C sort -u > "$tmp/added"
while read -r v; do
  case $v in *.*.*) ;; *) bad "'Added in $v': write the full version (MAJOR.MINOR.PATCH)"; continue ;; esac
  [ "$(num "$v")" -le "$(num "$hv")" ] || bad "'Added in $v' is later than LEIR_VERSION_STRING $hv"
done < "$tmp/added"

[ "$fails" = 0 ] || exit 1
echo "$(grep -c . "$tmp/stable-exported") stable functions in LEIR_0 (all in the ABI baseline)," \
  "$(grep -c . "$tmp/experimental") experimental ones in $expnode; headers at $hv"
