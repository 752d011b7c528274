#!/bin/sh
# Regenerates the API reference from the public headers: Doxygen (Doxyfile,
# XML only, undocumented public symbols are errors), then
# scripts/api_reference.py writes one Markdown page per header.
#   scripts/api-reference.sh [OUT_DIR]      default: docs/api-reference
#   scripts/api-reference.sh --xml DIR      only run Doxygen, XML into DIR
# Needs doxygen (Debian package doxygen) and python3. No network.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
command -v doxygen >/dev/null || { echo "api-reference: doxygen not found (apt-get install doxygen)" >&2; exit 2; }

# doxygen_xml DIR: Doxygen's XML of include/leir/ in DIR/xml
doxygen_xml() {
  mkdir -p "$1"
  if ! (cd "$root" && LEIR_DOXYGEN_OUT=$1 doxygen Doxyfile >"$1/doxygen.out" 2>&1); then
    echo "api-reference: doxygen failed on include/leir/ (every public symbol needs a doc comment):" >&2
    sed "s|$root/||" "$1/warnings.log" "$1/doxygen.out" >&2 2>/dev/null || true
    exit 1
  fi
}

if [ "${1:-}" = --xml ]; then
  doxygen_xml "$2"
  exit 0
fi
out=${1:-$root/docs/api-reference}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-apiref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
doxygen_xml "$tmp"
mkdir -p "$out"
rm -f "$out"/*.md
LEIR_SOURCE_ROOT=$root python3 "$root/scripts/api_reference.py" "$tmp/xml" "$out"
echo "api-reference: wrote the pages of $out"
