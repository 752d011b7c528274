#!/bin/sh
# scripts/abi-check.sh's policy on a tiny two-version library pair built
# here (no network, no libleir build needed): additions pass, breaks fail.
# Then, when the build has debug information, the real libleir.so.0 against
# the committed baseline abi/libleir.abi.xml.
#   abi_check_test.sh SOURCE_DIR CC [LIBLEIR.SO]
# Exit 77 (skipped) without abidw/abidiff (Debian: abigail-tools).
set -eu
src=$1 cc=$2 lib=${3:-}
check=$src/scripts/abi-check.sh
for t in abidw abidiff; do
  command -v $t >/dev/null || { echo "SKIP: $t not found (apt-get install abigail-tools)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-abitest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# version 1 of a libleir-like API; each variant below is one edit of it
cat > "$tmp/v1.h" <<'H'
#include <stddef.h>
#include <stdint.h>
typedef enum leir_status { LEIR_OK = 0, LEIR_ERR_ARGUMENT = -3 } leir_status;
typedef enum leir_verdict { LEIR_VERDICT_EQUAL, LEIR_VERDICT_CLOSE, LEIR_VERDICT_COUNT } leir_verdict;
typedef struct leir_parse_options { uint32_t size; uint32_t flags; uint64_t max_input_bytes; } leir_parse_options;
typedef struct leir_tensor_decl { const char *name; int dtype; } leir_tensor_decl;
leir_status leir_program_parse(const char *text, size_t len, const leir_parse_options *opts);
int leir_program_set_signature(const leir_tensor_decl *decls, size_t n);
const char *leir_verdict_name(leir_verdict verdict);
#define HASH_RET long
#define HASH_ARG const char *
HASH_RET leir_program_hash(HASH_ARG text);
H
cat > "$tmp/lib.c" <<'C'
#include "leir.h"
leir_status leir_program_parse(const char *text, size_t len, const leir_parse_options *opts) {
  return text && len && opts ? LEIR_OK : LEIR_ERR_ARGUMENT;
}
int leir_program_set_signature(const leir_tensor_decl *decls, size_t n) { return decls ? (int)n : 0; }
const char *leir_verdict_name(leir_verdict verdict) { return verdict ? "CLOSE" : "EQUAL"; }
#ifndef NO_HASH
HASH_RET leir_program_hash(HASH_ARG text) { return text ? 1 : 0; }
#endif
#ifdef ADDED
int leir_added_function(void) { return 1; }
#endif
#ifdef EXPERIMENTAL
int leir_search_run(int budget) { return budget; }
#endif
C

# variant NAME SED_EXPRESSION CFLAGS: a library built from an edited header
variant() {
  mkdir -p "$tmp/$1/experimental"
  sed "$2" "$tmp/v1.h" > "$tmp/$1/leir.h"
  if [ -n "${4:-}" ]; then
    printf '#define LEIR_API\nLEIR_API int leir_search_run(int budget);\n' > "$tmp/$1/experimental/search.h"
  fi
  # shellcheck disable=SC2086
  $cc -g -O2 -shared -fPIC -Wl,-soname,libleir.so.0 $3 -I"$tmp/$1" "$tmp/lib.c" \
    -o "$tmp/$1/libleir.so.0"
}
variant base '' ''
variant base_exp '' '-DEXPERIMENTAL' exp

fails=0
# expect NAME WANT_STATUS [OLD [EXPERIMENTAL_LIST]]: compare OLD (default
# base) with variant NAME, whose directory holds its headers
expect() {
  old=${3:-base}
  rc=0
  # shellcheck disable=SC2086 # the optional list is absent or one word
  sh "$check" --compare "$tmp/$old/libleir.so.0" "$tmp/$1/libleir.so.0" "$tmp/$1" ${4:-} \
    > "$tmp/$1.out" 2>&1 || rc=$?
  if [ "$rc" -ne "$2" ]; then
    echo "FAIL: $1: abi-check exited $rc, expected $2:"
    sed 's/^/    /' "$tmp/$1.out"
    fails=$((fails + 1))
  else
    echo "ok: $1 (exit $rc)"
  fi
}

variant same '' ''
expect same 0
variant added '' '-DADDED'
expect added 0
grep -q '^  leir_added_function$' "$tmp/added.out" || { echo "FAIL: the addition is not listed"; fails=$((fails + 1)); }
variant options_grow 's/uint64_t max_input_bytes; }/uint64_t max_input_bytes; uint32_t max_depth; }/' ''
expect options_grow 0
variant enum_append 's/LEIR_VERDICT_CLOSE,/LEIR_VERDICT_CLOSE, LEIR_VERDICT_MISMATCH,/' ''
expect enum_append 0
variant options_middle 's/uint32_t flags;/uint32_t max_depth; uint32_t flags;/' ''
expect options_middle 1
variant array_struct_grows 's/int dtype; }/int dtype; int role; }/' ''
expect array_struct_grows 1
variant status_value 's/LEIR_ERR_ARGUMENT = -3/LEIR_ERR_ARGUMENT = -4/' ''
expect status_value 1
variant removed '' '-DNO_HASH'
expect removed 1
variant param_type 's/define HASH_ARG const char \*/define HASH_ARG const double */' ''
expect param_type 1
variant return_type 's/define HASH_RET long/define HASH_RET int/' ''
expect return_type 1
# functions declared in experimental/ may go away; stable ones may not
# (the baseline's experimental functions come from its recorded list)
printf '# recorded with the baseline\nleir_search_run\n' > "$tmp/experimental.symbols"
variant exp_removed '' ''
expect exp_removed 0 base_exp "$tmp/experimental.symbols"
expect exp_removed 1 base_exp
variant exp_changed '' '-DEXPERIMENTAL -Dbudget=*budget' exp
sed -i 's/int budget/int *budget/' "$tmp/exp_changed/experimental/search.h"
expect exp_changed 0 base_exp
grep -q 'INCOMPATIBLE' "$tmp/removed.out" || { echo "FAIL: no verdict line"; fails=$((fails + 1)); }

if [ -n "$lib" ]; then
  if readelf -S "$lib" | grep -q '\.debug_info'; then
    rc=0
    sh "$check" --compare "$src/abi/libleir.abi.xml" "$lib" "$src/include/leir" \
      "$src/abi/experimental.symbols" > "$tmp/real.out" 2>&1 || rc=$?
    sed 's/^/    /' "$tmp/real.out"
    if [ "$rc" -ne 0 ]; then
      echo "FAIL: $lib is not ABI-compatible with abi/libleir.abi.xml (exit $rc)"
      fails=$((fails + 1))
    else
      echo "ok: $lib against abi/libleir.abi.xml"
    fi
  else
    echo "note: $lib has no debug information; the baseline comparison runs in .ci/run"
  fi
fi
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "abi-check policy holds"
