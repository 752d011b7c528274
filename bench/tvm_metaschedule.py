#!/usr/bin/env python3
"""The anchor users would pick instead of a LEIR search: TVM MetaSchedule
tuning the same kernels on the same CPU (issue 15.8).

    tvm_metaschedule.py [--trials N] [--threads T] [--only matmul|softmax|layernorm]

For matmul 512^3 f32, softmax 4096x4096 f32 and layernorm 4096x4096 f32 it
tunes the TE definition with `tune_tir` (llvm target for this host, -num-cores
T, N measured trials, evolutionary search; XGBoost cost model when xgboost
imports, else random), compiles the best schedule, and times it with the
runtime's time evaluator (TVM_NUM_THREADS=T, 3 repeats of >= 50 ms, median).
It prints best GFLOP/s (matmul) or GB/s (softmax, layernorm: input + output
bytes, as bench/softmax counts them) and the tuning wall time.

Needs apache-tvm (tested with 0.27.0.post1 from PyPI, where MetaSchedule is
tvm.s_tir.meta_schedule), numpy, psutil and cloudpickle (the builder and runner
worker pools), and apache-tvm-ffi 0.1.14.post0. The apache-tvm wheel does not
ship libtvm_ffi.so: it uses the apache-tvm-ffi package's, through a C++
interface that is only stable within the tvm-ffi version it was built
against (0.1.14.post0, the wheel's `apache-tvm-ffi>=0.1.14.post0` floor).
pip resolves that floor to the newest release, 0.1.15.post2, with which every
IRModule serialization (tvm.ir.save_json, which MetaSchedule's database and
workers use) segfaults in tvm::ffi::ToJSONGraph. .ci/run pins the version:

    python3 -m venv venv && venv/bin/pip install apache-tvm==0.27.0.post1 \
        apache-tvm-ffi==0.1.14.post0 numpy psutil cloudpickle xgboost
"""
import argparse
import os
import statistics
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", choices=["matmul", "softmax", "layernorm"])
    ap.add_argument("--matmul-n", type=int, default=512)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--work", help="keep MetaSchedule's logs here (default: a temporary directory)")
    ap.add_argument("--build-timeout", type=float, default=30.0,
                    help="seconds per candidate build (MetaSchedule's default 30; raise on a loaded host)")
    ap.add_argument("--run-timeout", type=float, default=30.0, help="seconds per candidate run")
    args = ap.parse_args()
    os.environ["TVM_NUM_THREADS"] = str(args.threads)

    import numpy as np
    import tvm
    from tvm import te, topi

    try:
        from tvm.s_tir import meta_schedule as ms
    except ImportError:
        from tvm import meta_schedule as ms  # older layouts
    try:
        import xgboost  # noqa: F401
        cost_model = "xgb"
    except ImportError:
        cost_model = "random"

    cpu = (tvm.target.codegen.llvm_get_system_cpu() if hasattr(tvm.target, "codegen")
           else "native")
    target = tvm.target.Target({"kind": "llvm", "mcpu": cpu, "num-cores": args.threads})

    def matmul(n):
        A = te.placeholder((n, n), "float32", name="A")
        B = te.placeholder((n, n), "float32", name="B")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        return te.create_prim_func([A, B, C]), [(n, n), (n, n), (n, n)], 2.0 * n ** 3, None

    def softmax(r):
        A = te.placeholder((r, r), "float32", name="A")
        S = topi.nn.softmax(A, axis=1)
        return te.create_prim_func([A, S]), [(r, r), (r, r)], None, 2.0 * r * r * 4

    def layernorm(r):
        A = te.placeholder((r, r), "float32", name="A")
        g = te.placeholder((r,), "float32", name="G")
        b = te.placeholder((r,), "float32", name="Bt")
        O = topi.nn.layer_norm(A, g, b, axis=[1], epsilon=1e-5)
        return (te.create_prim_func([A, g, b, O]), [(r, r), (r,), (r,), (r, r)], None,
                (2.0 * r * r + 2 * r) * 4)

    kernels = {"matmul": lambda: matmul(args.matmul_n), "softmax": lambda: softmax(args.rows),
               "layernorm": lambda: layernorm(args.rows)}
    print("TVM %s, target %s, %d threads, %d trials, cost model %s" % (
        tvm.__version__, target, args.threads, args.trials, cost_model))
    print("| kernel | tuning wall s | trials | best ms | GFLOP/s | GB/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, make in kernels.items():
        if args.only and name != args.only:
            continue
        func, shapes, flops, nbytes = make()
        mod = tvm.IRModule({"main": func})
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(args.work, name) if args.work else tmp
            os.makedirs(work, exist_ok=True)
            t0 = time.time()
            builder = ms.builder.LocalBuilder(timeout_sec=args.build_timeout)
            runner = ms.runner.LocalRunner(timeout_sec=args.run_timeout)
            db = ms.tune_tir(mod, target, work, max_trials_global=args.trials,
                             builder=builder, runner=runner,
                             num_trials_per_iter=min(64, args.trials), cost_model=cost_model,
                             num_tuning_cores=args.threads, database="memory")
            tune_s = time.time() - t0
            # trials that built and ran (a build or run timeout leaves no time)
            recs = db.get_all_tuning_records()
            valid = sum(1 for rec in recs
                        if rec.run_secs and all(float(getattr(x, "value", x)) < 1e9 for x in rec.run_secs))
            trials = "%d (%d valid)" % (len(recs), valid)
            sch = ms.tir_integration.compile_tir(db, mod, target)
            if sch is None:
                print("| %s | %.1f | %s | (no valid schedule) | | |" % (name, tune_s, trials))
                continue
            lib = tvm.compile(sch.mod, target=target)
        dev = tvm.cpu()
        arrs = [tvm.runtime.tensor(np.random.rand(*s).astype("float32"), dev) for s in shapes]
        rt = lib.jit() if hasattr(lib, "jit") else lib  # tvm.compile returns an Executable
        ev = rt.time_evaluator("main", dev, number=1, repeat=3, min_repeat_ms=50)
        res = ev(*arrs).results
        med = statistics.median(res)
        print("| %s | %.1f | %s | %.3f | %s | %s |" % (
            name, tune_s, trials, med * 1e3,
            "%.1f" % (flops / med * 1e-9) if flops else "",
            "%.1f" % (nbytes / med * 1e-9) if nbytes else ""))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
