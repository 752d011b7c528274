"""Runs ``leir benchmark`` as Ray tasks, one per (program, algorithm) pair.

Each task runs the ``leir`` tool on a worker for one pair
(``leir benchmark CONFIG --out TMP --only PROGRAM --algorithms ALGO``) in a
directory of its own and sends back what it wrote: the run's record (one
line of ``runs.jsonl``), its trajectory and its measurement database. The
workers share no file system with the driver; they need only the tool, the
config and the programs it names (the same paths on every machine, or the
installed workload catalogue). The driver writes each pair's files into
``DIR`` and appends its record to ``DIR/runs.jsonl`` as soon as the task
ends, so a driver that is stopped resumes where it was: pairs already
recorded are not sent again. At the end it merges the workers' databases
with ``leir db merge DIR/dbs/*.db --into DIR/measurements.db`` and runs
``leir benchmark CONFIG --out DIR`` once, which finds every run recorded and
writes the summary, as a one-process benchmark would.

Command line::

    python -m leir.benchmark_ray CONFIG.yaml --out DIR [--address auto] [--num-cpus N]
        [--tool leir] [--workloads-dir D] [-- OPTIONS OF leir benchmark ...]

Ray is imported only when a benchmark starts, so this module imports without it.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple


def find_tool(tool: Optional[str] = None) -> str:
    """The ``leir`` executable: ``tool``, ``$LEIR_TOOL``, or ``leir`` on PATH."""
    cand = tool or os.environ.get("LEIR_TOOL") or shutil.which("leir")
    if not cand:
        raise FileNotFoundError("no leir tool: pass --tool, set LEIR_TOOL or put leir on PATH")
    return os.path.abspath(cand) if os.path.sep in cand else cand


def _common(workloads_dir: Optional[str], extra: Sequence[str]) -> List[str]:
    return (["--workloads-dir", workloads_dir] if workloads_dir else []) + list(extra)


def list_pairs(tool: str, config: str, workloads_dir: Optional[str] = None,
               extra: Sequence[str] = ()) -> List[Tuple[str, str]]:
    """The (program, algorithm) pairs of the config, in its order."""
    proc = subprocess.run([tool, "benchmark", config, "--list"] + _common(workloads_dir, extra),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"leir benchmark --list failed: {proc.stderr.strip()}")
    pairs = []
    for line in proc.stdout.splitlines():
        d = json.loads(line)
        pairs.append((d["program"], d["algorithm"]))
    return pairs


def recorded(out: str) -> Set[Tuple[str, str]]:
    """The pairs with a complete record in ``out/runs.jsonl``."""
    done: Set[Tuple[str, str]] = set()
    try:
        with open(os.path.join(out, "runs.jsonl")) as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # a record cut short: the tool cuts it off and runs the pair again
                try:
                    d = json.loads(line)
                    done.add((d["program"], d["algorithm"]))
                except (ValueError, KeyError):
                    continue
    except FileNotFoundError:
        pass
    return done


def run_pair(tool: str, config: str, program: str, algorithm: str,
             workloads_dir: Optional[str] = None, extra: Sequence[str] = ()) -> Dict[str, Any]:
    """Runs one pair in a temporary directory; returns its record and files."""
    with tempfile.TemporaryDirectory(prefix="leir-benchmark-") as tmp:
        cmd = [tool, "benchmark", config, "--out", tmp, "--only", program,
               "--algorithms", algorithm, "--quiet"] + _common(workloads_dir, extra)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        record = None
        try:
            with open(os.path.join(tmp, "runs.jsonl")) as f:
                lines = [l for l in f if l.endswith("\n")]
            record = lines[0] if lines else None
        except FileNotFoundError:
            pass
        files: Dict[str, bytes] = {}
        # the pair's trajectory and database (not the worker's merged copy)
        for sub, pattern in (("trajectories", "*.jsonl"), ("dbs", "*.db")):
            for p in glob.glob(os.path.join(tmp, sub, pattern)):
                with open(p, "rb") as f:
                    files[os.path.join(sub, os.path.basename(p))] = f.read()
        return {"program": program, "algorithm": algorithm, "returncode": proc.returncode,
                "stderr": proc.stderr[-4000:], "record": record, "files": files}


def _store(out: str, result: Dict[str, Any]) -> None:
    """Writes a pair's files, then its record (so a record implies its files)."""
    for rel, data in result["files"].items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".part"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    with open(os.path.join(out, "runs.jsonl"), "a") as f:
        f.write(result["record"])
        f.flush()
        os.fsync(f.fileno())


def benchmark(config: str, out: str, *, tool: Optional[str] = None,
              address: Optional[str] = None, num_cpus: Optional[int] = None,
              workloads_dir: Optional[str] = None, extra: Sequence[str] = (),
              max_retries: int = 3) -> Dict[str, Any]:
    """Runs the benchmark of ``config`` into ``out`` as Ray tasks; returns summary.json.

    ``address`` joins a running Ray cluster (``"auto"``); without it a local
    instance with ``num_cpus`` workers is started. ``extra`` are options of
    ``leir benchmark`` given to every task and to the final run (a budget,
    ``--llm-command``, ``--backend``, ...). Raises RuntimeError when a pair
    leaves no record after its retries (the recorded pairs stay; run again to
    resume).
    """
    import ray  # imported here so that the module loads without Ray

    tool = find_tool(tool)
    config = os.path.abspath(config)
    out = os.path.abspath(out)
    if workloads_dir:
        workloads_dir = os.path.abspath(workloads_dir)
    os.makedirs(out, exist_ok=True)
    done = recorded(out)
    todo = [p for p in list_pairs(tool, config, workloads_dir, extra) if p not in done]
    failed: List[Dict[str, Any]] = []
    if todo:
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
            task = ray.remote(num_cpus=1, max_retries=max_retries)(run_pair)
            pending = [task.remote(tool, config, prog, algo, workloads_dir, list(extra))
                       for prog, algo in todo]
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                result = ray.get(ready[0])
                if result["record"]:
                    _store(out, result)
                else:
                    failed.append(result)
        finally:
            if started:
                ray.shutdown()
    dbs = sorted(glob.glob(os.path.join(out, "dbs", "*.db")))
    if dbs:
        merge = subprocess.run([tool, "db", "merge"] + dbs +
                               ["--into", os.path.join(out, "measurements.db"), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if merge.returncode != 0:
            raise RuntimeError(f"leir db merge failed: {merge.stderr.strip()}")
    if failed:
        msgs = "; ".join(f"{r['program']} {r['algorithm']}: exit {r['returncode']}: "
                         f"{r['stderr'].strip()}" for r in failed)
        raise RuntimeError(f"leir benchmark left no record for: {msgs}")
    final = subprocess.run([tool, "benchmark", config, "--out", out, "--quiet"] +
                           _common(workloads_dir, extra),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # exit status 1 also says that some search failed (recorded as an error run)
    if final.returncode not in (0, 1) or not os.path.exists(os.path.join(out, "summary.json")):
        raise RuntimeError(f"leir benchmark (summary) failed: {final.stderr.strip()}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: List[str] = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(prog="python -m leir.benchmark_ray",
                                 description="leir benchmark, one Ray task per (program, algorithm)",
                                 epilog="options after -- go to every leir benchmark run")
    ap.add_argument("config", help="the benchmark config (YAML)")
    ap.add_argument("--out", required=True, help="output directory (on the driver)")
    ap.add_argument("--address", help="Ray cluster address (default: a local instance)")
    ap.add_argument("--num-cpus", type=int, help="workers of the local instance")
    ap.add_argument("--tool", help="path of the leir tool")
    ap.add_argument("--workloads-dir", help="the workload catalogue")
    args = ap.parse_args(argv)
    try:
        summary = benchmark(args.config, args.out, tool=args.tool, address=args.address,
                            num_cpus=args.num_cpus, workloads_dir=args.workloads_dir, extra=extra)
    except (RuntimeError, FileNotFoundError, ValueError) as e:
        print(f"leir.benchmark_ray: {e}", file=sys.stderr)
        return 1
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
