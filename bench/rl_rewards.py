#!/usr/bin/env python3
"""Rewards per second of leir.rl's reward function (issue 31.6).

Builds a dataset of catalogue workloads at their small shapes (every program
held out, so every state is an eval.jsonl prompt with its labels), then
scores a batch of completions per prompt: every label's answer (verified
steps), the unchanged program, the first label under another strategy's
name, and an unparsable text. It reports rewards per second for

- cold:  a fresh Rewarder, no cache (first call: library load, thread pool);
- warm:  the same batch again, no cache (every completion judged again);
- cached: the same batch on a rewarder that has seen it (alpha-hash hits);
- timed: ``timing=True`` (the measured speedup of every verified step: cpu
  backend, alternating runs), no cache, on the first ``--timed`` completions.

The first three weigh format + validity + grounding + verification + the
cost model's speedup; the judgement is the library's (leir eval). Nothing
here asserts a time. Run with the build's library and tool:

    LEIR_LIBRARY=build/libleir.so.0 PYTHONPATH=python \\
      python3 bench/rl_rewards.py --leir build/tools/leir/leir --threads 2

State the machine's load (uptime) with any number: this prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import leir.rl as rl  # noqa: E402

WORKLOADS = ["level1/ReLU", "level1/softmax", "level1/LayerNorm", "level1/Sum_reduction_over_a_dimension",
             "level1/Matmul3D", "level2/Gemm_Divide_Sum_Scaling"]


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def build(leir: str, workdir: Path, workloads_dir: str) -> Path:
    cfg = (
        "name: rlbench\nseed: 3\nsources:\n  workloads: [" + ", ".join(WORKLOADS) + "]\n  shapes: [small]\n"
        "walks: {count: 1, depth: 1}\nsampling: {per_strategy: 1}\nsplit: {test: 1.0, validation: 0}\n"
    )
    (workdir / "rlbench.yaml").write_text(cfg)
    env = dict(os.environ, LEIR_WORKLOADS_DIR=workloads_dir)
    subprocess.run([leir, "dataset", "build", "rlbench.yaml", "--out", "rlbench"], cwd=workdir, check=True,
                   capture_output=True, env=env, timeout=1200)
    return workdir / "rlbench"


def answer(ir: str, strategy: str) -> str:
    return "<think>one step</think><answer>" + json.dumps({"transformed_IR": ir, "applied_strategy": strategy}) + "</answer>"


def batch(records):
    comps, recs = [], []
    for r in records:
        if r["kind"] != "single":
            continue
        labs = r["labels"]
        mine = [answer(l["transformed_IR"], l["strategy"]) for l in labs]
        mine.append(answer(r["original_IR"], labs[0]["strategy"] if labs else "loop_reorder"))
        if labs:
            other = "loop_reorder" if labs[0]["strategy"] != "loop_reorder" else "loop_split"
            mine.append(answer(labs[0]["transformed_IR"], other))
        mine.append("no answer")
        comps += mine
        recs += [r] * len(mine)
    return comps, recs


def rate(rewarder, comps, recs, repeat=1):
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        out = rewarder(comps, records=recs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = len(comps) * repeat
    return {"n": n, "wall_s": wall, "cpu_s": cpu, "per_s": n / wall, "mean_reward": sum(out) / len(out)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leir", default=str(HERE.parent / "build" / "tools" / "leir" / "leir"))
    ap.add_argument("--workloads", default=os.environ.get("LEIR_WORKLOADS_DIR", str(HERE.parent / "workloads")))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="warm passes")
    ap.add_argument("--timed", type=int, default=40, help="completions scored with timing")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ds = build(a.leir, Path(tmp), a.workloads)
        build_s = time.perf_counter() - t0
        records = [json.loads(x) for x in (ds / "eval.jsonl").read_text().splitlines() if x.strip()]
    comps, recs = batch(records)
    res = {"cpu": cpu_model(), "cores": os.cpu_count(), "load_before": os.getloadavg(),
           "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
           "threads": a.threads, "prompts": sum(r["kind"] == "single" for r in records),
           "completions": len(comps), "dataset_build_s": build_s}
    cold = rl.Rewarder(threads=a.threads, cache_size=0)
    res["cold"] = rate(cold, comps, recs)
    res["warm"] = rate(cold, comps, recs, a.repeat)
    cached = rl.Rewarder(threads=a.threads)
    cached(comps, records=recs)
    res["cached"] = rate(cached, comps, recs, a.repeat)
    timed = rl.Rewarder(threads=a.threads, cache_size=0, timing=True)
    k = min(a.timed, len(comps))
    res["timed"] = rate(timed, comps[:k], recs[:k])
    res["timed_untimed_same_slice"] = rate(cold, comps[:k], recs[:k])
    verdicts = {}
    for s in cold.score(comps, records=recs):
        verdicts[s.reason or s.verdict] = verdicts.get(s.reason or s.verdict, 0) + 1
    res["outcomes"] = verdicts
    res["load_after"] = os.getloadavg()
    if a.json:
        print(json.dumps(res, indent=1))
        return
    print(f"cpu {res['cpu']} ({res['cores']} cores), threads {a.threads}")
    print(f"uptime: {res['uptime']}")
    print(f"{res['prompts']} single prompts of {len(WORKLOADS)} small-shape workloads, {len(comps)} completions "
          f"(dataset built in {build_s:.1f} s)")
    for k2 in ("cold", "warm", "cached", "timed_untimed_same_slice", "timed"):
        r = res[k2]
        print(f"{k2:26s} {r['n']:6d} rewards  {r['wall_s']:8.3f} s wall  {r['cpu_s']:8.3f} s cpu  {r['per_s']:9.1f} /s")
    print("outcomes:", json.dumps(res["outcomes"], sort_keys=True))
    print(f"load after: {res['load_after']}")


if __name__ == "__main__":
    main()
