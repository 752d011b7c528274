#!/bin/sh
# The evaluation loop end to end on a local stub model (issue 30.8): a
# dataset is built, bench/eval_stub_model.py answers every test prompt from
# the prompt's labels with a set error rate through `leir eval
# --llm-command`, and the answers are scored. Prints
#   - the asking rate (prompts and samples per second, the stub's own time
#     included: what the loop costs around a model),
#   - the scoring rate (answers scored per second by `leir eval`),
#   - the stub's right answers against the samples the scores say solve
#     their prompt (pass-close; a multi prompt: N distinct passing IRs),
#     which must agree, and the scored rate against the set one.
#
#   bench/eval_loop.sh BUILD_DIR [ERROR_RATE] [SAMPLES] [JOBS] [WORK_DIR]
#
# Defaults: rate 0.25, 4 samples per prompt, 2 jobs, a temporary work
# directory (removed; give WORK_DIR to keep the dataset and reuse it).
# Needs python3. Run by hand; bench/README.md has results.
set -eu
build=$(cd "$1" && pwd)
rate=${2:-0.25} samples=${3:-4} jobs=${4:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
leir=$build/tools/leir/leir
if [ -n "${5:-}" ]; then
  work=$5
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/leir-eval-loop.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
fi
cd "$work"
cat > bench.yaml <<'EOF'
name: eval-loop
seed: 3
sources:
  workloads: [level1/softmax, level1/ReLU, level1/LayerNorm, level1/Sum_reduction_over_a_dimension,
              level1/Matmul3D, level2/Gemm_Divide_Sum_Scaling, level2/Matmul_Swish_Sum_GroupNorm,
              level1/Max_reduction_over_a_dimension]
  shapes: [small]
walks: {count: 2, depth: 2}
sampling: {per_strategy: 1}
split: {by: program, test: 0.5, validation: 0}
EOF
if [ ! -f ds/eval.jsonl ]; then
  t0=$(date +%s.%N)
  LEIR_WORKLOADS_DIR=$src/workloads "$leir" dataset build bench.yaml --out ds >/dev/null 2>&1
  echo "dataset: $(wc -l < ds/eval.jsonl) test prompts, built in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
fi
rm -f answers.jsonl decisions.log
prompts=$(wc -l < ds/eval.jsonl)
t0=$(date +%s.%N)
"$leir" eval answers.jsonl --dataset ds --no-score --samples "$samples" --jobs "$jobs" \
  --llm-seed 1 --temperature 0.7 \
  --llm-command "python3 $src/bench/eval_stub_model.py $work/ds $rate $work/decisions.log" 2>/dev/null
t1=$(date +%s.%N)
"$leir" eval answers.jsonl --dataset ds --json > report.json
t2=$(date +%s.%N)
python3 - "$prompts" "$samples" "$rate" "$t0" "$t1" "$t2" <<'EOF'
import json, sys
prompts, samples, rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
t0, t1, t2 = map(float, sys.argv[4:7])
rep = json.load(open("report.json"))
lines = rep["answers"]
def solves(a):
    if not a["parsed"]:
        return False
    if a["kind"] == "multi":
        return a["multi_label"]
    return bool(a["items"]) and a["items"][0]["pass_close"]
solved = sum(solves(a) for a in lines)
right = sum(1 for l in open("decisions.log") if l.strip() == "right")
n = len(lines)
print(f"asked:  {prompts} prompts x {samples} samples = {n} answers in {t1 - t0:.2f} s: "
      f"{prompts / (t1 - t0):.1f} prompts/s, {n / (t1 - t0):.1f} samples/s")
print(f"scored: {n} answers in {t2 - t1:.2f} s: {n / (t2 - t1):.1f} answers/s "
      f"({rep['overall']['items']} transformed IRs)")
print(f"stub:   {right} right of {n} (set error rate {rate}); scored as solving: {solved} "
      f"({'agree' if solved == right else 'DIFFER'}); scored rate {solved / n:.4f}, set {1 - rate:.4f}")
print(f"pass@1 close {rep['overall']['pass_at_k']['pass_close']['1']:.4f}, "
      f"pass@{samples} close {rep['overall']['pass_at_k']['pass_close'][str(samples)]:.4f}")
sys.exit(0 if solved == right else 1)
EOF
