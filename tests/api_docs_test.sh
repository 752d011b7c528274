#!/bin/sh
# Every exported function of libleir.so has a doc comment in include/leir/,
# Doxygen (Doxyfile) finds no undocumented public symbol, and the committed
# reference docs/api-reference/ matches the headers.
#   api_docs_test.sh SOURCE_DIR LIBLEIR.SO
# Exit 77 (skipped) without doxygen (Debian package doxygen) or python3.
set -eu
src=$1 lib=$2
for t in doxygen python3; do
  command -v $t >/dev/null || { echo "SKIP: $t not found (apt-get install $t)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-apidocs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# 1. Doxygen over the headers: an undocumented public symbol is an error
sh "$src/scripts/api-reference.sh" --xml "$tmp/dox"

# 2. every exported function is declared and documented
# names without their symbol version (leir_x@@LEIR_0), not the version nodes (type A)
nm -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $NF); print $NF}' > "$tmp/symbols"
LEIR_SOURCE_ROOT=$src python3 "$src/scripts/api_reference.py" "$tmp/dox/xml" "$tmp/pages" \
  --symbols "$tmp/symbols"

# 3. the committed reference is the one these headers give
if ! diff -ru "$src/docs/api-reference" "$tmp/pages" > "$tmp/diff"; then
  head -40 "$tmp/diff"
  echo "docs/api-reference/ is out of date: run scripts/api-reference.sh and commit it"
  exit 1
fi

# 4. the check can fail: the same headers with one doc comment turned into
# a plain comment are refused, naming the function
mkdir -p "$tmp/neg"
cp -R "$src/include" "$src/Doxyfile" "$tmp/neg/"
sed -i 's|^/\*\* Releases a program and everything|/* Releases a program and everything|' \
  "$tmp/neg/include/leir/program.h"
grep -q '^/\* Releases a program and everything' "$tmp/neg/include/leir/program.h"
mkdir -p "$tmp/neg/out"
if (cd "$tmp/neg" && LEIR_DOXYGEN_OUT=$tmp/neg/out doxygen Doxyfile >/dev/null 2>&1); then
  echo "doxygen accepted an undocumented leir_program_free"
  exit 1
fi
grep -q 'leir_program_free' "$tmp/neg/out/warnings.log" ||
  { echo "the warning does not name leir_program_free:"; cat "$tmp/neg/out/warnings.log"; exit 1; }
echo "$(wc -l < "$tmp/symbols") exported functions documented; docs/api-reference/ up to date"
