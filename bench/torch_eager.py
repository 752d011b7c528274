#!/usr/bin/env python3
"""The 20-workload set of bench/search.md timed against PyTorch eager on the
CPU, side by side in one process: KernelBench's fast_1 (the share of
workloads where LEIR's program is correct and faster than eager) and the
geometric mean of the ratios (eager time / LEIR time: above 1, LEIR faster).

Each workload is emitted at its default shape from the catalogue, run once on
the cpu backend and once in PyTorch on the same inputs (the verifier's input
set 0), and the outputs compared; then, for `--rounds` alternating rounds,
the LEIR kernel is timed (leir.Kernel.time, warm: no cache flush, like
eager) and the PyTorch function is timed the same way (warm-up calls, then
runs until `--min-seconds`, median), on the same thread count
(torch.set_num_threads, the backend's `threads`). A workload's time is the
median of its round medians. With `--best DIR`, DIR/<workload>.leir.yaml
(`leir optimize --out`) is timed as well, in the same rounds.

  LEIR_LIBRARY=build/libleir.so.0 LEIR_WORKLOADS_DIR=workloads \\
    /work/rl-venv/bin/python bench/torch_eager.py --threads 2 [--best DIR] [--json out.json]

A workload whose PyTorch and LEIR outputs differ is reported as `mismatch`
and counts as not fast (fast_1's rule); it is left out of the geometric mean.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import leir  # noqa: E402

F = torch.nn.functional


def _argext(a, largest):
    # LEIR's program keeps the last index holding the extreme (>= / <= over
    # the whole dimension); the check compares the values at the indices
    return torch.argmax(a, dim=1) if largest else torch.argmin(a, dim=1)


# What a user writes in PyTorch for each workload (KernelBench's modules, at
# the catalogue's default parameters); inputs by the program's names.
TORCH = {
    "Argmax_over_a_dimension": lambda x: _argext(x["A"], True),
    "softmax": lambda x: torch.softmax(x["A"], dim=1),
    "MinGPTNewGelu": lambda x: 0.5 * x["A"] * (1.0 + torch.tanh(
        math.sqrt(2.0 / math.pi) * (x["A"] + 0.044715 * torch.pow(x["A"], 3.0)))),
    "ELU": lambda x: F.elu(x["A"], alpha=1.0),
    "Sigmoid": lambda x: torch.sigmoid(x["A"]),
    "Matmul_AvgPool_GELU_Scale_Max": lambda x: torch.max(
        F.gelu(F.avg_pool1d(F.linear(x["A"], x["M"], x["N"]).unsqueeze(1), kernel_size=4).squeeze(1))
        * x["K"], dim=1).values,
    "Matmul_GELU_Softmax": lambda x: torch.softmax(F.gelu(F.linear(x["A"], x["F"], x["G"])), dim=1),
    "Hingeloss": lambda x: torch.mean(torch.clamp(1 - x["A"] * x["C"], min=0)),
    "Swish": lambda x: x["A"] * torch.sigmoid(x["A"]),
    "Matmul_Mean_Softmax": lambda x: torch.softmax(
        torch.mean(F.linear(x["A"], x["F"], x["G"]), dim=1, keepdim=True), dim=1),
    "KLDivLoss": lambda x: F.kl_div(torch.log(x["A"]), x["C"], reduction="batchmean"),
    "TripletMarginLoss": lambda x: F.triplet_margin_loss(x["A"], x["C"], x["D"], margin=1.0),
    "conv_depthwise_2D_square_input_asymmetric_kernel": lambda x: F.conv2d(x["A"], x["D"], groups=3),
    "Matmul_Subtract_Multiply_ReLU": lambda x: torch.relu(
        (F.linear(x["A"], x["I"], x["J"]) - x["G"]) * x["H"]),
    "MSELoss": lambda x: F.mse_loss(x["A"], x["C"]),
    "Matmul_with_small_K_dimension": lambda x: torch.matmul(x["A"], x["C"]),
    "log_log_add": lambda x: torch.log(x["A"]) + torch.log(x["C"]),
    "Max_Pooling_1D": lambda x: F.max_pool1d(x["A"], kernel_size=4, stride=2, padding=2, dilation=3),
    "Argmin_over_a_dimension": lambda x: _argext(x["A"], False),
    "Max_reduction_over_a_dimension": lambda x: torch.amax(x["A"], dim=1),
}
ARGEXT = {"Argmax_over_a_dimension": True, "Argmin_over_a_dimension": False}
# bench/search.md's 20 workloads, in its order
SET = list(TORCH)


def same_outputs(name, inputs, got, want):
    """Whether LEIR's output `got` (numpy) is PyTorch's `want` (tensor)."""
    want = want.detach().numpy()
    got = np.asarray(got).reshape(want.shape) if got.size == want.size else got
    if got.shape != want.shape:
        return False, f"shape {got.shape} vs {want.shape}"
    if name in ARGEXT:  # ties: the values at both indices must be the extreme
        a = inputs["A"].numpy()
        va = np.take_along_axis(a, got[:, None, :].astype(np.int64), axis=1)
        vb = np.take_along_axis(a, want[:, None, :].astype(np.int64), axis=1)
        ok = np.array_equal(va, vb)
        return ok, "" if ok else "different extreme values"
    tol = 2e-2 if want.dtype == np.float16 else 1e-3
    g, w = got.astype(np.float64), want.astype(np.float64)
    ok = np.allclose(g, w, rtol=tol, atol=tol)
    return ok, "" if ok else f"max |diff| {np.nanmax(np.abs(g - w)):.3g}"


def time_torch(fn, inputs, warmup, min_runs, min_seconds):
    with torch.inference_mode():
        for _ in range(warmup):
            fn(inputs)
        runs = []
        t_end = time.perf_counter() + min_seconds
        while len(runs) < min_runs or time.perf_counter() < t_end:
            t0 = time.perf_counter()
            fn(inputs)
            runs.append(time.perf_counter() - t0)
            if len(runs) >= 100000:
                break
    return statistics.median(runs)


def time_leir(kernel, warmup, min_runs, min_seconds):
    return kernel.time(no_flush=True, warmup=warmup, min_runs=min_runs,
                       min_seconds=min_seconds, max_seconds=60.0).median_s


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=0.2)
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--best", help="directory of best programs, <workload>.leir.yaml")
    ap.add_argument("--only", help="comma-separated workload names (default: the 20)")
    ap.add_argument("--json", help="write the rows and the summary here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cat = leir.catalogue.Catalogue(os.environ.get("LEIR_WORKLOADS_DIR"))
    backend = leir.Backend("cpu", threads=a.threads)
    names = a.only.split(",") if a.only else SET
    load = os.getloadavg()
    print(f"# torch_eager: {len(names)} workloads, default shapes, {a.threads} threads "
          f"(torch {torch.__version__}, get_num_threads {torch.get_num_threads()}), "
          f"{a.rounds} rounds, warm (no flush), load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    kinds = ["source"] + (["best"] if a.best else [])
    print(f"{'workload':50s} {'eager ms':>10s}" + "".join(f" {k + ' ms':>10s} {k + ' x':>8s}" for k in kinds))
    rows = []
    for name in names:
        w = cat.find(name)
        progs = {"source": w.emit("default")}
        if a.best:
            path = os.path.join(a.best, name + ".leir.yaml")
            if os.path.exists(path):
                progs["best"] = leir.Program.load(path)
        fn = TORCH[name]
        inputs_np = leir.seeded_inputs(progs["source"])
        inputs = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inputs_np.items()}
        with torch.inference_mode():
            want = fn(inputs)
        row = {"workload": name, "dtype": str(want.dtype).replace("torch.", "")}
        kernels = {}
        for kind, p in progs.items():
            k = leir.Kernel(p, backend)
            outs = k.run(inputs_np)
            got = list(outs.values())[0]
            ok, why = same_outputs(name, inputs, got, want)
            row[kind + "_correct"] = ok
            if not ok:
                row[kind + "_why"] = why
            kernels[kind] = k
        med = {kind: [] for kind in ["eager"] + list(kernels)}
        for _ in range(a.rounds):
            for kind, k in kernels.items():
                med[kind].append(time_leir(k, a.warmup, a.min_runs, a.min_seconds))
            med["eager"].append(time_torch(fn, inputs, a.warmup, a.min_runs, a.min_seconds))
        for kind in med:
            row[kind + "_s"] = statistics.median(med[kind])
        line = f"{name:50s} {row['eager_s'] * 1e3:10.4f}"
        for kind in kinds:
            if kind not in kernels:
                line += f" {'-':>10s} {'-':>8s}"
                continue
            row[kind + "_ratio"] = row["eager_s"] / row[kind + "_s"]
            tag = f"{row[kind + '_ratio']:7.2f}x" if row[kind + "_correct"] else "mismatch"
            line += f" {row[kind + '_s'] * 1e3:10.4f} {tag:>8s}"
        print(line, flush=True)
        for k in kernels.values():
            k.close()
        rows.append(row)
    summary = {}
    for kind in kinds:
        have = [r for r in rows if kind + "_s" in r]
        good = [r for r in have if r[kind + "_correct"]]
        fast = [r for r in good if r[kind + "_ratio"] > 1.0]
        summary[kind] = {
            "workloads": len(have), "correct": len(good), "fast_1": len(fast) / len(have) if have else 0.0,
            "faster": len(fast), "geomean_ratio": geomean([r[kind + "_ratio"] for r in good]),
        }
        s = summary[kind]
        print(f"# {kind}: fast_1 {s['fast_1']:.2f} ({s['faster']} of {s['workloads']} faster than eager, "
              f"{s['correct']} correct), geometric mean eager/LEIR {s['geomean_ratio']:.3f}x")
    load = os.getloadavg()
    print(f"# load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "rows": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
