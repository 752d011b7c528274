#!/usr/bin/env bash
# The anchor, side by side in one run (issue 15.8): matmul 512^3, softmax and
# layernorm 4096x4096 f32, each tuned by TVM MetaSchedule (bench/tvm_metaschedule.py)
# and searched by `leir optimize` (cost-model policy, greedy, cpu backend) with the
# same number of measured trials / samples and the same thread count.
#
#   bench/anchor.sh [TRIALS [THREADS]]          (defaults: 8 trials, 2 threads)
#
# Environment: LEIR (the leir tool; default build/tools/leir/leir), TVM_PYTHON (a
# python with apache-tvm 0.27.0.post1 and apache-tvm-ffi 0.1.14.post0, psutil,
# cloudpickle; default python3), KERNELS (default "matmul softmax layernorm"),
# MATMUL_N (512), ROWS (4096), BUILD_TIMEOUT / RUN_TIMEOUT (MetaSchedule's
# per-candidate limits; default 300 / 120 s, for a loaded machine), LEIR_ARGS (extra
# options of leir optimize). Run it with nice on a shared machine.
#
# For each kernel it prints the tuning wall time and the best GFLOP/s (matmul) or
# GB/s (softmax, layernorm: input + output bytes, as bench/softmax and the TVM script
# count them). LEIR's best time is the best program's median in the final
# side-by-side comparison with the source program; TVM's is the runtime's time
# evaluator (median of 3 repeats of >= 50 ms) on the best schedule.
set -euo pipefail

trials=${1:-8}
threads=${2:-2}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
leir=${LEIR:-$root/build/tools/leir/leir}
py=${TVM_PYTHON:-python3}
kernels=${KERNELS:-matmul softmax layernorm}
n=${MATMUL_N:-512}
r=${ROWS:-4096}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[ -x "$leir" ] || { echo "leir tool not found at $leir (meson compile -C build)" >&2; exit 1; }

program() { # NAME: the naive LEIR program, as bench/softmax writes softmax and layernorm
  case $1 in
    matmul)
      echo "L^{$n}_{a=0}L^{$n}_{c=0}L^{$n}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];" ;;
    softmax)
      echo "L^{$r}_{a=0}L^{$r}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];L^{$r}_{a=0}L^{$r}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];L^{$r}_{a=0}L^{$r}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];" ;;
    layernorm)
      echo "L^{$r}_{a=0}L^{$r}_{c=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+A^{f32,g}_{a,c};];L^{$r}_{a=0}L^{$r}_{c=0}[R^{f32,g}_{a}=R^{f32,g}_{a}+(A^{f32,g}_{a,c}-M^{f32,g}_{a}/$r)*(A^{f32,g}_{a,c}-M^{f32,g}_{a}/$r);];L^{$r}_{a=0}L^{$r}_{c=0}[C^{f32,g}_{a,c}=(A^{f32,g}_{a,c}-M^{f32,g}_{a}/$r)/sqrt(R^{f32,g}_{a}/$r+0.00001)*G^{f32,g}_{c}+H^{f32,g}_{c};];" ;;
  esac
}

echo "# anchor: $trials trials/samples, $threads threads, $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$py" -c 'import tvm, tvm_ffi; print("TVM", tvm.__version__, "tvm-ffi", tvm_ffi.__version__)' 2>/dev/null || echo 'TVM not importable')"
rows=()
for k in $kernels; do
  program "$k" >"$work/$k.leir"
  case $k in
    matmul) work_amount=$(echo "2*$n*$n*$n" | bc); unit=GFLOP/s ;;
    softmax) work_amount=$(echo "2*$r*$r*4" | bc); unit=GB/s ;;
    layernorm) work_amount=$(echo "(2*$r*$r+2*$r)*4" | bc); unit=GB/s ;;
  esac
  # LEIR: a fresh database, so every sample is measured now
  t0=$(date +%s.%N)
  "$leir" optimize --backend cpu --threads "$threads" --samples "$trials" --db "$work/$k.db" \
    --no-progress --json ${LEIR_ARGS:-} "$work/$k.leir" >"$work/$k.jsonl" 2>"$work/$k.err" || true
  t1=$(date +%s.%N)
  summary=$(grep '^{"summary"' "$work/$k.jsonl" || true)
  if [ -n "$summary" ]; then
    leir_row=$(python3 - "$summary" "$work_amount" "$t0" "$t1" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])["summary"]
amount, t0, t1 = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
best = s.get("best_median_s") or 0
src = s.get("source_median_s") or 0
rate = lambda t: "%.2f" % (amount / t * 1e-9) if t > 0 else "-"
print("%.0f|%d (measured %d)|%.3f|%s|%s|%.2fx" % (t1 - t0, s["samples"], s["measured"],
      best * 1e3, rate(best), rate(src), s.get("final_speedup", 1)))
EOF
)
  else
    leir_row="$(printf '%.0f' "$(echo "$t1-$t0" | bc)")|failed: $(tail -1 "$work/$k.err")|||"
  fi
  rows+=("| $k | LEIR greedy/cost | $leir_row |")
  echo "${rows[-1]}"
  # TVM MetaSchedule
  t0=$(date +%s.%N)
  "$py" "$root/bench/tvm_metaschedule.py" --only "$k" --trials "$trials" --threads "$threads" \
    --matmul-n "$n" --rows "$r" --build-timeout "${BUILD_TIMEOUT:-300}" \
    --run-timeout "${RUN_TIMEOUT:-120}" >"$work/$k.tvm" 2>"$work/$k.tvm.err" || true
  t1=$(date +%s.%N)
  line=$(grep "^| $k " "$work/$k.tvm" || true)
  if [ -n "$line" ]; then
    # | kernel | tuning wall s | trials | best ms | GFLOP/s | GB/s |
    IFS='|' read -r _ _ tune tr best gf gb _ <<<"$line"
    rate=$(echo "$gf$gb" | tr -d ' ')
    rows+=("| $k | TVM MetaSchedule | $(echo $tune | cut -d. -f1) |$tr|$best| $rate | | |")
  else
    rows+=("| $k | TVM MetaSchedule | $(printf '%.0f' "$(echo "$t1-$t0" | bc)") | failed: $(grep -v -i warn "$work/$k.tvm.err" | tail -1) | | | | |")
  fi
  echo "${rows[-1]}"
  cp "$work/$k.tvm.err" "${ANCHOR_LOGS:-$work}/$k.tvm.log" 2>/dev/null || true
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| kernel | tuner | wall s | trials | best ms | best $unit (GFLOP/s for matmul) | source | speedup |"
echo "|---|---|---:|---|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
