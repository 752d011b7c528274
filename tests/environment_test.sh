#!/bin/sh
# docs/environment.md lists every environment variable the library, the tool
# and the Python package read, and LEIR_CFLAGS behaves as it says:
#  1. every getenv("X") / os.environ.get("X") in the sources names a
#     variable written on that page (as `X`);
#  2. accepted LEIR_CFLAGS values (blank, -O2, a second ISA level) open the
#     cpu backend and verify; a result-changing flag is refused with its
#     name; the --cflags option wins over the variable.
#   environment_test.sh SOURCE_DIR LEIR_TOOL RUNNER
set -eu
src=$1 tool=$2 runner=$3
doc=$src/docs/environment.md
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/leir-env.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# 1. the list is complete
cd "$src"
vars=$( { grep -rhoE 'getenv\("[A-Z_][A-Z0-9_]*"\)' lib strategies backends dataset llm search tools \
            --include='*.c' --include='*.h' || true
          grep -rhoE 'environ\.get\("[A-Z_][A-Z0-9_]*"' python/leir --include='*.py' || true
        } | sed -E 's/.*\("([A-Z0-9_]+)".*/\1/' | LC_ALL=C sort -u)
[ -n "$vars" ] || bad "no getenv found under $src (wrong source directory?)"
for v in $vars; do
  grep -qF "\`$v\`" "$doc" || bad "$v is read by the sources but not listed in docs/environment.md"
done
cd - >/dev/null

# 2. LEIR_CFLAGS
printf 'L^{16}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}*2;];\n' > "$tmp/before.leir"
printf 'L^{4}_{a=0}L^{4}_{b=0}[C^{f32,g}_{a*4+b}=A^{f32,g}_{a*4+b}*2;];\n' > "$tmp/after.leir"
verify() { LEIR_RUNNER=$runner "$tool" verify --backend cpu --no-cache "$@" "$tmp/before.leir" "$tmp/after.leir"; }
for flags in "" " " "-O2" "-O1 -g -Wall" "-O3 -march=x86-64-v2 -fopenmp"; do
  out=$(LEIR_CFLAGS=$flags verify 2>&1) || bad "LEIR_CFLAGS='$flags': leir verify failed: $out"
done
rc=0
out=$(LEIR_CFLAGS="-O2 -DLEIR_X=1" verify 2>&1) || rc=$?
[ "$rc" != 0 ] || bad "LEIR_CFLAGS='-O2 -DLEIR_X=1' was accepted: $out"
case $out in *"-DLEIR_X=1"*refused*) ;; *) bad "the refusal does not name the flag: $out" ;; esac
out=$(LEIR_CFLAGS="-O2 -DLEIR_X=1" verify --cflags "-O2" 2>&1) ||
  bad "--cflags did not take precedence over LEIR_CFLAGS: $out"

[ "$fails" = 0 ] || exit 1
echo "$(printf '%s\n' $vars | wc -l) variables read, all in docs/environment.md; LEIR_CFLAGS as documented"
