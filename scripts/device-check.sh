#!/usr/bin/env bash
# GPU checks of the CUDA backend in one go, for a machine with an NVIDIA GPU
# (docs/cuda.md, "Running on a GPU machine"). At most 8 minutes:
#
#   1. build (release, -Dcuda=enabled) unless LEIR_DEVICE_BUILD names a build;
#   2. probe the driver and the device (libleir's own "no CUDA device" status);
#   3. the CUDA test suite's execution cases: GPU runs of small programs, run-
#      time traps, timing, every conformance source on the GPU against the
#      interpreter (EQUAL/CLOSE), a verification of two programs on the GPU;
#   4. `leir verify --backend cuda` on strategy outputs from the corpus;
#   5. timings: matmul 1024^3 f32 and softmax 4096x4096 f32 as naive LEIR,
#      bound/tiled LEIR and cuBLAS (when present): ms, GFLOP/s, GB/s;
#   6. NVRTC compile time per kernel over the conformance sources.
#
# Without a GPU it still builds and runs the compile-only checks, says
# "no CUDA device" and exits 0 (GPU steps skipped). Exit status: 0 all ran
# and passed (or were skipped for lack of a GPU), 1 a check failed, 2 the
# build could not be made. Logs go to $OUT (default ./device-check-out).
#
#   scripts/device-check.sh            # from the repository root
#   OUT=/tmp/dc scripts/device-check.sh
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/device-check-out}
BUILD=${LEIR_DEVICE_BUILD:-$ROOT/build-device}
BUDGET=${DEVICE_CHECK_BUDGET:-470}   # seconds, under the 8-minute limit
START=$(date +%s)
mkdir -p "$OUT"
SUMMARY="$OUT/summary.md"
: >"$SUMMARY"
FAILED=0

say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# step NAME LIMIT CMD...: runs CMD with a time limit (bounded by the budget),
# output in $OUT/NAME.log; records pass/fail/skip.
step() {
  local name=$1 limit=$2
  shift 2
  local remain
  remain=$(left)
  if [ "$remain" -le 5 ]; then
    say "| $name | skipped: out of time | |"
    return 0
  fi
  [ "$limit" -gt "$remain" ] && limit=$remain
  local t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  case $rc in
    0) say "| $name | passed | ${dt}s |" ;;
    77) say "| $name | skipped (no CUDA device) | ${dt}s |" ;;
    124|137) say "| $name | TIMEOUT after ${limit}s | ${dt}s |"; FAILED=1 ;;
    *) say "| $name | FAILED (exit $rc, see $name.log) | ${dt}s |"; FAILED=1 ;;
  esac
  return $rc
}

say "# libleir CUDA device check ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
say ""
if command -v nvidia-smi >/dev/null 2>&1; then
  say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
else
  say "nvidia-smi: not found"
fi
say ""

# ---- 1. build -------------------------------------------------------------
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
if [ -x "$BUILD/tools/leir/leir" ] && [ -n "${LEIR_DEVICE_BUILD:-}" ]; then
  # A carried build (scripts/device-pack.sh) brings its shared libraries.
  [ -d "$BUILD/device-libs" ] && export LD_LIBRARY_PATH="$BUILD/device-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "build: using $BUILD"
else
  missing=""
  for tool in meson ninja pkg-config; do command -v $tool >/dev/null 2>&1 || missing="$missing $tool"; done
  if command -v pkg-config >/dev/null 2>&1; then
    for pc in yaml-0.1 libxxhash check; do pkg-config --exists $pc || missing="$missing $pc"; done
  fi
  if [ -n "$missing" ]; then
    say "build: cannot build here, missing:$missing (install them, or carry a build made by"
    say "       scripts/device-pack.sh and set LEIR_DEVICE_BUILD=build-device)"
    exit 2
  fi
  if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" -Dcuda=enabled -Dbuildtype=release >"$OUT/setup.log" 2>&1 ||
      { say "build: meson setup failed (see setup.log)"; tail -20 "$OUT/setup.log"; exit 2; }
  fi
  ninja -C "$BUILD" >"$OUT/build.log" 2>&1 ||
    { say "build: ninja failed (see build.log)"; tail -30 "$OUT/build.log"; exit 2; }
  say "build: $BUILD ($(( $(date +%s) - START ))s)"
fi
LEIR="$BUILD/tools/leir/leir"
DATA="$ROOT/tests/data"
say ""
say "| step | result | time |"
say "|---|---|---|"

# ---- 2. device --------------------------------------------------------------
printf '%s\n' 'B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a});];' >"$OUT/probe.leir"
if "$LEIR" run --backend cuda --input A:f64:2x8 --output C:f64:2x8 "$OUT/probe.leir" \
    >"$OUT/probe.log" 2>&1; then
  GPU=1
  say "| device | CUDA device present ($(command -v nvidia-smi >/dev/null && nvidia-smi -L | head -1)) | |"
else
  GPU=0
  say "| device | $(grep -m1 -o 'no CUDA device.*' "$OUT/probe.log" || tail -1 "$OUT/probe.log") | |"
fi

# ---- 3. CUDA tests ----------------------------------------------------------
export LEIR_TEST_DATA="$DATA"
for case in codegen legality compile device; do
  CK_RUN_CASE=$case step "test_cuda:$case" 240 "$BUILD/tests/test_cuda"
done
grep -h "GPU vs interpreter" "$OUT/test_cuda:device.log" 2>/dev/null | sed 's/^test_cuda: /  /' | tee -a "$SUMMARY"

# ---- 4. verification of strategy outputs on the GPU -------------------------
if [ $GPU -eq 1 ]; then
  verify_pairs() {
    local n=0 bad=0
    # A few reference rewrites of small programs, each verified on the GPU.
    python3 - "$DATA" >"$OUT/pairs.txt" <<'PY' || return 1
import json, sys
want = {"loop_binding": 3, "loop_tiling": 3, "loop_reorder": 2, "cache_read_write": 2,
        "layout_transformation": 2, "reduction_factorization": 2}
src = {}
for line in open(sys.argv[1] + "/sources-small.jsonl"):
    d = json.loads(line)
    src[d["id"]] = d
for line in open(sys.argv[1] + "/steps-small.jsonl"):
    d = json.loads(line)
    s = d["strategy"]
    if want.get(s, 0) <= 0 or d.get("malformed") or d["before"] is not None:
        continue
    if not d["id"].startswith("level1/"):
        continue
    want[s] -= 1
    sig = src[d["id"]]["signature"]
    args = []
    for role, flag in (("inputs", "--input"), ("outputs", "--output")):
        for t in sig[role]:
            shape = "x".join(map(str, t["shape"])) or "scalar"
            args.append("%s %s:%s:%s" % (flag, t["name"], t["dtype"], shape))
    print("%s\t%s\t%s\t%s\t%s" % (d["id"], s, " ".join(args), src[d["id"]]["leir"], d["after"]))
PY
    while IFS=$'\t' read -r id strat args before after; do
      n=$((n + 1))
      printf '%s\n' "$before" >"$OUT/before.leir"
      printf '%s\n' "$after" >"$OUT/after.leir"
      # shellcheck disable=SC2086
      verdict=$("$LEIR" verify --backend cuda $args "$OUT/before.leir" "$OUT/after.leir" 2>&1 | head -3 | tr '\n' ' ')
      echo "$id $strat: $verdict"
      case "$verdict" in *EQUAL*|*CLOSE*|*INVALID*) ;; *) bad=$((bad + 1)) ;; esac
    done <"$OUT/pairs.txt"
    echo "$n pairs verified on the GPU, $bad unexpected verdicts"
    [ $bad -eq 0 ]
  }
  export -f verify_pairs
  export LEIR OUT DATA
  step "verify-on-gpu" 90 bash -c verify_pairs
  tail -1 "$OUT/verify-on-gpu.log" | sed 's/^/  /' | tee -a "$SUMMARY"
else
  say "| verify-on-gpu | skipped (no CUDA device) | |"
fi

# ---- 5. timings ---------------------------------------------------------------
if [ $GPU -eq 1 ]; then
  step "timings" 200 "$BUILD/bench/cuda_kernels"
else
  say "| timings | skipped (no CUDA device) | |"
fi

# ---- 6. NVRTC compile time -----------------------------------------------------
step "nvrtc-compile" 150 "$BUILD/bench/cuda_compile" "$DATA/sources-small.jsonl" --limit 60

say ""
if [ $GPU -eq 1 ] && [ -s "$OUT/timings.log" ]; then
  say "## Timings (CUDA events, median of >= 10 runs, L2 flushed between runs)"
  say ""
  grep -E '^(device:|\|)' "$OUT/timings.log" | tee -a "$SUMMARY"
  say ""
fi
if [ -s "$OUT/nvrtc-compile.log" ]; then
  say "## NVRTC compile time"
  say ""
  sed 's/^/    /' "$OUT/nvrtc-compile.log" | tee -a "$SUMMARY"
fi
say ""
say "total: $(( $(date +%s) - START ))s; GPU checks: $([ $GPU -eq 1 ] && echo ran || echo 'skipped: no CUDA device')"
exit $FAILED
