#!/usr/bin/env bash
# leir.dataset_ray on a local Ray instance with two workers: four shards as
# Ray tasks build the same files as one `leir dataset build` process.
#   dataset_ray_test.sh TOOL SOURCE_ROOT
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
cat > "$work/ray.yaml" <<'YAML'
name: ray-test
seed: 5
sources:
  workloads: [level1/softmax, level1/ReLU, level1/ELU, level1/Sigmoid, level1/Tanh]
  shapes: [small]
walks: {count: 1, depth: 1}
sampling: {per_strategy: 1}
YAML
"$tool" dataset build "$work/ray.yaml" --out "$work/one" >/dev/null 2>"$work/one.log" || {
  cat "$work/one.log"; echo "FAIL: the one-process build failed"; exit 1; }
# run as a script: the module needs neither the leir package (numpy) nor the library
export PYTHONDONTWRITEBYTECODE=1 RAY_USAGE_STATS_ENABLED=0
"$py" "$src/python/leir/dataset_ray.py" "$work/ray.yaml" --out "$work/ray" --shards 4 --num-cpus 2 \
  --tool "$tool" >"$work/summary.json" 2>"$work/ray.log" || {
  tail -50 "$work/ray.log"; echo "FAIL: the Ray build failed"; exit 1; }
rc=0
for f in train.jsonl eval.jsonl validation.jsonl archive.jsonl rejections.jsonl summary.json \
         README.md strategies.svg levels.svg; do
  if ! cmp -s "$work/one/$f" "$work/ray/$f"; then echo "FAIL: $f differs"; rc=1; fi
done
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["units"] == 5, d' \
  "$work/summary.json" || rc=1
[ "$rc" = 0 ] && echo "ok: 4 Ray shards on 2 workers == one process"
# The dataset card's YAML header is what the Hugging Face `datasets` loader
# reads (configs default/eval/validation/archive; eval and validation when
# they have rows): load each offline and compare its rows with the JSONL
# files. .ci/run installs datasets beside ray.
if "$py" -c 'import datasets' 2>/dev/null; then
  HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HOME="$work/hf" "$py" - "$work/ray" <<'PY' || rc=1
import sys, datasets
d = sys.argv[1]
datasets.disable_progress_bars()
want = {"default": ("train", "train.jsonl"), "eval": ("test", "eval.jsonl"),
        "validation": ("validation", "validation.jsonl"), "archive": ("train", "archive.jsonl")}
card = open(f"{d}/README.md").read()
for cfg, (split, name) in want.items():
    if f"- config_name: {cfg}\n" not in card:
        assert not open(f"{d}/{name}").read().strip(), (cfg, "rows but no config")
        continue
    ds = datasets.load_dataset(d, cfg, cache_dir=d + "/.hf-cache")
    rows = sum(1 for line in open(f"{d}/{name}") if line.strip())
    assert list(ds) == [split], (cfg, list(ds))
    assert ds[split].num_rows == rows, (cfg, ds[split].num_rows, rows)
    assert "messages" in ds[split].column_names, (cfg, ds[split].column_names)
print("ok: the dataset card loads with datasets", datasets.__version__)
PY
else
  echo "note: python has no 'datasets' module: the card was not loaded with it"
fi
exit "$rc"
