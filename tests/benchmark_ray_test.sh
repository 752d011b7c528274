#!/usr/bin/env bash
# leir.benchmark_ray on a local Ray instance with two workers: the
# (program, algorithm) pairs as Ray tasks give the runs, the summary's
# counts and the measurement keys of a one-process `leir benchmark`
# (the timings themselves differ from run to run), and a second driver run
# resumes with nothing left to do.
#   benchmark_ray_test.sh TOOL SOURCE_ROOT
# Exit 77 (meson: skipped) with the reason when no python3 can import ray.
set -uo pipefail
tool=$1 src=$2
py=
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import ray' 2>/dev/null; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 can import ray (pip install ray; .ci/run installs it in its tools venv)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/mm.leir" <<'LEIR'
L^{6}_{a=0}L^{6}_{c=0}L^{6}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*C^{f64,g}_{d,c};];
LEIR
cat > "$work/bench.yaml" <<'YAML'
name: ray-test
programs:
  files: [mm.leir]
  workloads: [level1/ReLU, level1/softmax]
  shape: small
algorithms: [greedy, beam, mcts]
budget: {samples: 2, depth: 2}
measure: {backend: interp, rounds: 3, max_rounds: 3, time: 1, sets: 1}
YAML
"$tool" benchmark "$work/bench.yaml" --out "$work/one" --quiet 2>"$work/one.log" || {
  cat "$work/one.log"; echo "FAIL: the one-process benchmark failed"; exit 1; }
export PYTHONDONTWRITEBYTECODE=1 RAY_USAGE_STATS_ENABLED=0
"$py" "$src/python/leir/benchmark_ray.py" "$work/bench.yaml" --out "$work/ray" --num-cpus 2 \
  --tool "$tool" >"$work/summary.json" 2>"$work/ray.log" || {
  tail -50 "$work/ray.log"; echo "FAIL: the Ray benchmark failed"; exit 1; }
"$tool" db export --db "$work/one/measurements.db" >"$work/one.rows" || exit 1
"$tool" db export --db "$work/ray/measurements.db" >"$work/ray.rows" || exit 1
rc=0
"$py" - "$work" <<'PY' || rc=1
import json, sys
w = sys.argv[1]
def runs(d):
    out = {}
    for line in open(f"{w}/{d}/runs.jsonl"):
        r = json.loads(line)
        out[(r["program"], r["algorithm"])] = r
    return out
one, ray = runs("one"), runs("ray")
assert len(one) == 9 and set(one) == set(ray), (sorted(one), sorted(ray))
for k in one:
    for f in ("status", "samples", "measured", "policy", "seed"):
        assert one[k][f] == ray[k][f], (k, f, one[k][f], ray[k][f])
s1 = json.load(open(f"{w}/one/summary.json"))
s2 = json.load(open(f"{w}/summary.json"))
assert s2 == json.load(open(f"{w}/ray/summary.json"))
assert s2["complete"] and s2["done"] == 9, s2
for a in ("greedy", "beam", "mcts"):
    for f in ("runs", "ok", "errors"):
        assert s1["algorithms"][a][f] == s2["algorithms"][a][f] == (3 if f != "errors" else 0), (a, f)
assert list(s1["per_program"]) == list(s2["per_program"])
def keys(p):
    return sorted((r["program_hash"], r["baseline_hash"], r["root_hash"], r["backend"],
                   r["machine"], r["protocol"], r["verdict"])
                  for r in map(json.loads, open(p)))
k1, k2 = keys(f"{w}/one.rows"), keys(f"{w}/ray.rows")
assert k1 == k2 and k1, (len(k1), len(k2))
print(f"ok: 9 runs as Ray tasks on 2 workers == one process ({len(k1)} measurements merged by key)")
PY
# a second driver run finds every pair recorded and only rewrites the summary
"$py" "$src/python/leir/benchmark_ray.py" "$work/bench.yaml" --out "$work/ray" --num-cpus 2 \
  --tool "$tool" >/dev/null 2>"$work/ray2.log" || { tail -20 "$work/ray2.log"; rc=1; }
n=$(wc -l <"$work/ray/runs.jsonl")
[ "$n" = 9 ] || { echo "FAIL: the resumed driver left $n records, not 9"; rc=1; }
[ "$rc" = 0 ] && echo "ok: the resumed driver ran nothing again"
exit "$rc"
