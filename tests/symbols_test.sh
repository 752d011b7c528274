#!/bin/sh
# The shared library exports the public leir_* API and nothing else, and its
# SONAME carries the major version.   symbols_test.sh LIBLEIR.SO
set -eu
lib=$1
all=$(nm -D --defined-only "$lib" | awk '{print $NF}')
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
for f in leir_program_parse leir_program_print leir_program_check leir_program_hash \
         leir_program_hash_alpha leir_program_walk leir_error_last leir_version; do
  printf '%s\n' "$all" | grep -qx "$f" || { echo "$f is not exported" >&2; exit 1; }
done
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libleir.so.0 ] || { echo "SONAME is '$soname', expected libleir.so.0" >&2; exit 1; }
echo "$(printf '%s\n' "$all" | wc -l) exported symbols, all leir_*; SONAME $soname"
