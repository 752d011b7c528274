"""Builds a dataset with ``leir dataset build`` shards as Ray tasks.

Each shard ``K/N`` of the config is one Ray task that runs the ``leir`` tool
(``leir dataset build CONFIG --out DIR --shard K/N``) on a worker. The
output directory must be shared by the workers (a local directory for a
single machine, a network file system for a cluster): every finished unit
is written there atomically, so a task that Ray retries after a worker
died resumes where the dead one stopped, and the union of the shards is
exactly the unsharded build. When every task is done the driver runs the
tool once more without ``--shard``; it finds every unit finished and
(re)writes the outputs, byte-identical to a one-process build.

Command line::

    python -m leir.dataset_ray CONFIG.yaml --out DIR --shards 8 [--address auto]

The same build as a Slurm job array (docs/dataset.md)::

    #SBATCH --array=0-7
    leir dataset build CONFIG.yaml --out /shared/DIR --shard $SLURM_ARRAY_TASK_ID/8

Ray is imported only when a build starts, so this module imports without it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional


def find_tool(tool: Optional[str] = None) -> str:
    """The ``leir`` executable: ``tool``, ``$LEIR_TOOL``, or ``leir`` on PATH."""
    cand = tool or os.environ.get("LEIR_TOOL") or shutil.which("leir")
    if not cand:
        raise FileNotFoundError("no leir tool: pass --tool, set LEIR_TOOL or put leir on PATH")
    return os.path.abspath(cand) if os.path.sep in cand else cand


def build_shard(tool: str, config: str, out: str, shard: int, shards: int,
                workloads_dir: Optional[str] = None) -> Dict[str, Any]:
    """Runs one shard with the leir tool; returns its exit status and stderr."""
    cmd = [tool, "dataset", "build", config, "--out", out, "--shard", f"{shard}/{shards}"]
    if workloads_dir:
        cmd += ["--workloads-dir", workloads_dir]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return {"shard": shard, "returncode": proc.returncode, "stderr": proc.stderr[-4000:]}


def build(config: str, out: str, shards: int, *, tool: Optional[str] = None,
          address: Optional[str] = None, num_cpus: Optional[int] = None,
          workloads_dir: Optional[str] = None, max_retries: int = 3) -> Dict[str, Any]:
    """Builds ``config`` into ``out`` with ``shards`` Ray tasks; returns summary.json.

    ``address`` joins a running Ray cluster (``"auto"``); without it a local
    instance with ``num_cpus`` workers is started. Raises RuntimeError when a
    shard fails after its retries (the finished units stay; run again to
    resume).
    """
    import ray  # imported here so that the module loads without Ray

    if shards < 1:
        raise ValueError("shards must be at least 1")
    tool = find_tool(tool)
    config = os.path.abspath(config)
    out = os.path.abspath(out)
    if workloads_dir:
        workloads_dir = os.path.abspath(workloads_dir)
    started = False
    if not ray.is_initialized():
        kwargs: Dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
        ray.init(**kwargs)
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=max_retries)(build_shard)
        refs = [task.remote(tool, config, out, k, shards, workloads_dir) for k in range(shards)]
        results: List[Dict[str, Any]] = ray.get(refs)
    finally:
        if started:
            ray.shutdown()
    failed = [r for r in results if r["returncode"] != 0]
    if failed:
        msgs = "; ".join(f"shard {r['shard']}: exit {r['returncode']}: {r['stderr'].strip()}" for r in failed)
        raise RuntimeError(f"leir dataset build failed: {msgs}")
    cmd = [tool, "dataset", "build", config, "--out", out, "--json"]
    if workloads_dir:
        cmd += ["--workloads-dir", workloads_dir]
    final = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if final.returncode != 0:
        raise RuntimeError(f"leir dataset build (outputs) failed: {final.stderr.strip()}")
    return json.loads(final.stdout)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m leir.dataset_ray",
                                 description="leir dataset build, sharded over Ray tasks")
    ap.add_argument("config", help="the dataset config (YAML)")
    ap.add_argument("--out", required=True, help="output directory, shared by the workers")
    ap.add_argument("--shards", type=int, default=0, help="number of shards (default: the CPUs)")
    ap.add_argument("--address", help="Ray cluster address (default: a local instance)")
    ap.add_argument("--num-cpus", type=int, help="workers of the local instance")
    ap.add_argument("--tool", help="path of the leir tool")
    ap.add_argument("--workloads-dir", help="the workload catalogue")
    args = ap.parse_args(argv)
    shards = args.shards or args.num_cpus or os.cpu_count() or 1
    try:
        summary = build(args.config, args.out, shards, tool=args.tool, address=args.address,
                        num_cpus=args.num_cpus, workloads_dir=args.workloads_dir)
    except (RuntimeError, FileNotFoundError, ValueError) as e:
        print(f"leir.dataset_ray: {e}", file=sys.stderr)
        return 1
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
