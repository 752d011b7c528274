#!/bin/sh
# Verifier throughput side by side (issue 10.6): the same candidates judged
# by leir_verify of the library as it was before issue 10 (OLD, default the
# commit before the first issue-10 change) and by this build's leir_verifier
# (and this build's leir_verify), in alternating processes (OLD, NEW, NEW
# verify, OLD, ...), warm, the backend's default thread count, on the cpu
# backend and the interpreter.
#
#   bench/verifier_side_by_side.sh [BUILD_DIR [OLD_COMMIT [ALTERNATIONS]]]
#
# BUILD_DIR (default build) holds this tree's build with bench/verifier_side.
# The old library is built once (release, library only) under $WORK
# (default /tmp/leir-verifier-side) from `git archive OLD_COMMIT`; kernels
# are cached on disk there, one directory per build, so that only the first
# run compiles. Candidates: 12 programs of tests/data/sources-small.jsonl x
# 8 candidates, generated once to a file both builds read.
set -eu
build=${1:-build}
old=${2:-34444bf8918fe49905222c067d64d134512f4f21}
alternations=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
work=${WORK:-/tmp/leir-verifier-side}
olddir=$work/old-$old
mkdir -p "$work"

if [ ! -f "$olddir/build/libleir.so" ]; then
  echo "building the old library ($old) in $olddir" >&2
  rm -rf "$olddir"
  mkdir -p "$olddir"
  git -C "$root" archive "$old" | tar -x -C "$olddir"
  (cd "$olddir" && meson setup build -Dbuildtype=release -Dbench=false >/dev/null &&
    ninja -C build libleir.so >/dev/null)
fi
"${CC:-cc}" -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$olddir/include" \
  -I"$root/tests/support" "$root/bench/verifier_side.c" "$root/tests/support/jsonl.c" \
  -L"$olddir/build" -lleir -Wl,-rpath,"$olddir/build" -o "$work/verifier_side_old"
new=$build/bench/verifier_side
cands=$work/candidates.jsonl
"$new" gen "$root/tests/data" "$cands" 12 8

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
results=$work/results.txt
: >"$results"
for backend in cpu interp; do
  warm=1
  rounds=3
  if [ "$backend" = interp ]; then warm=0; rounds=1; fi
  i=0
  while [ "$i" -lt "$alternations" ]; do
    LEIR_CACHE_DIR=$work/cache-old "$work/verifier_side_old" run "$root/tests/data" "$cands" \
      "$backend" 0 verify "$rounds" "$warm" | sed 's/^RESULT /RESULT build=old /' | tee -a "$results"
    LEIR_CACHE_DIR=$work/cache-new "$new" run "$root/tests/data" "$cands" \
      "$backend" 0 verifier "$rounds" "$warm" | sed 's/^RESULT /RESULT build=new /' | tee -a "$results"
    LEIR_CACHE_DIR=$work/cache-new "$new" run "$root/tests/data" "$cands" \
      "$backend" 0 verify "$rounds" "$warm" | sed 's/^RESULT /RESULT build=new /' | tee -a "$results"
    i=$((i + 1))
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# median candidates/s per backend and side; the ratio of the medians
awk '
  /^RESULT/ {
    for (f = 2; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
    key = v["backend"] " " v["build"] "-" v["mode"]
    n[key]++; x[key, n[key]] = v["cand_s"] + 0; verdicts[key] = v["verdicts"]
  }
  function median(key,   i, j, t, m) {
    m = n[key]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
      if (x[key, j] < x[key, i]) { t = x[key, i]; x[key, i] = x[key, j]; x[key, j] = t }
    return m % 2 ? x[key, (m + 1) / 2] : (x[key, m / 2] + x[key, m / 2 + 1]) / 2
  }
  END {
    printf "| backend | old leir_verify cand/s | new leir_verify cand/s | new verifier cand/s | verifier / old leir_verify |\n"
    printf "|---|---:|---:|---:|---:|\n"
    split("cpu interp", bs, " ")
    for (k = 1; k <= 2; k++) {
      b = bs[k]
      o = median(b " old-verify"); nv = median(b " new-verify"); nr = median(b " new-verifier")
      printf "| %s | %.1f | %.1f | %.1f | %.2fx |\n", b, o, nv, nr, (o > 0 ? nr / o : 0)
    }
    for (k = 1; k <= 2; k++) {
      b = bs[k]
      printf "verdicts %s: old %s; new verify %s; new verifier %s\n", b, verdicts[b " old-verify"],
        verdicts[b " new-verify"], verdicts[b " new-verifier"]
    }
  }' "$results"
