#!/bin/sh
# Best programs of the 20-workload set for bench/torch_eager.py --best DIR:
# `leir optimize` with the defaults a user gets, from each workload's naive
# program at its default shape, on THREADS threads.
#   bench/torch_eager_best.sh DIR [SAMPLES [THREADS [TIME_S]]]
# (TIME_S: a wall-time cap per search, default none). Needs LEIR_WORKLOADS_DIR.
set -eu
dir=$1 samples=${2:-64} threads=${3:-2} cap=${4:-}
leir=${LEIR:-build/tools/leir/leir}
py=${PYTHON:-python3}
mkdir -p "$dir"
names=$("$py" -c 'import ast,sys; src=open(sys.argv[1]).read(); t=ast.parse(src)
for n in ast.walk(t):
    if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TORCH":
        print("\n".join(k.value for k in n.value.keys))' "$(dirname "$0")/torch_eager.py")
for n in $names; do
  [ -e "$dir/$n.leir.yaml" ] && continue
  "$leir" workloads emit "$n" > "$dir/$n.source.leir.yaml"
  "$leir" optimize --samples "$samples" --threads "$threads" ${cap:+--time "$cap"} --no-db \
    --no-progress --json --out "$dir/$n.leir.yaml" "$dir/$n.source.leir.yaml" \
    | tail -1 > "$dir/$n.summary.json" || echo "$n: leir optimize failed" >&2
done
