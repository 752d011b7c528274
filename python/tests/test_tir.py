"""The TIR printer checked by apache-tvm: every program of
tests/data/sources-small.jsonl and a seeded sample of strategy outputs
(tests/data/steps-small.jsonl) is lowered with leir_lower_tir (B loops as
T.serial: TVM builds thread bindings only for GPU targets), parsed with
tvm.script.from_source, built for llvm, run on the verification inputs and
compared with the interpreter (CLOSE, the dtype's tolerance). Programs
(and a seeded sample of 30 in the block form, LEIR_TIR_BLOCKS) listed in
tir_expected_failures.txt (id and reason) may fail; the test
fails on any other failure and on a listed program that passes.

The thread-binding form (the default) is checked separately: it parses,
and its loops carry the thread tags."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

import leir
from leir.tokens import TIR_BIND_SERIAL, TIR_BLOCKS, lower_tir, program_of

tvm = pytest.importorskip("tvm", reason="apache-tvm is not installed (pip install apache-tvm)")

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
HERE = Path(__file__).resolve().parent
STEP_SAMPLE = 40
BLOCK_SAMPLE = 30  # programs also checked in the block form
SEED = 18

TOL = {"f64": (1e-9, 1e-7), "f32": (1e-4, 1e-5), "f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2)}


def _records() -> List[Tuple[str, Dict]]:
    src = DATA / "sources-small.jsonl"
    steps = DATA / "steps-small.jsonl"
    if not src.exists():
        pytest.skip(f"{src} is not there")
    out = [(r["id"], r) for r in map(json.loads, src.read_text().splitlines())]
    rows = [json.loads(l) for l in steps.read_text().splitlines()] if steps.exists() else []
    for r in random.Random(SEED).sample(rows, min(STEP_SAMPLE, len(rows))):
        out.append((f"{r['id']}:{r['strategy']}", r))
    return out


def _expected() -> Dict[str, str]:
    path = HERE / "tir_expected_failures.txt"
    exp = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, why = line.partition(" ")
                exp[key] = why.strip()
    return exp


def _build(text: str):
    f = tvm.script.from_source(text)
    mod = tvm.IRModule({"main": f})
    return tvm.compile(mod, target="llvm") if hasattr(tvm, "compile") else tvm.build(mod, target="llvm")


def _tensor(a: np.ndarray):
    dev = tvm.cpu()
    return tvm.runtime.tensor(a, dev) if hasattr(tvm.runtime, "tensor") else tvm.nd.array(a, dev)


def _check(rid: str, rec: Dict, flags: int = TIR_BIND_SERIAL) -> str:
    """'' when TVM's results are CLOSE to the interpreter's, else why not."""
    p = program_of(rec)
    sig = p.effective_signature()
    inputs = leir.seeded_inputs(p, seed=1)
    want = leir.run(p, inputs, backend="interp")
    lib = _build(lower_tir(p, flags=flags))
    args, outs = [], {}
    for d in sig:
        if d.role == "input":
            args.append(_tensor(np.array(inputs[d.name], order="C", copy=True)))
        else:
            outs[d.name] = _tensor(np.zeros(d.shape, dtype=want[d.name].dtype))
            args.append(outs[d.name])
    lib["main"](*args)
    for d in sig:
        if d.role != "output":
            continue
        got, exp = outs[d.name].numpy(), want[d.name]
        if d.dtype in TOL:
            rtol, atol = TOL[d.dtype]
            ok = np.allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=atol,
                             equal_nan=True)
        else:
            ok = np.array_equal(got, exp)
        if not ok:
            err = np.nanmax(np.abs(got.astype(np.float64) - exp.astype(np.float64)))
            return f"{d.name} differs (max abs error {err:g})"
    return ""


RECORDS = _records() if (DATA / "sources-small.jsonl").exists() else []


def _run_all(records, flags: int, label: str) -> None:
    expected = _expected()
    failures, unexpected_pass, passed = [], [], 0
    for rid, rec in records:
        try:
            why = _check(rid, rec, flags)
        except leir.LeirError as e:  # the interpreter refused it: nothing to compare
            why = "" if rid not in expected else f"leir: {e}"
            if not why:
                continue
        except Exception as e:  # noqa: BLE001 - TVM parse/build errors
            why = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
        if why and rid not in expected:
            failures.append(f"{rid}: {why}")
        elif not why and rid in expected:
            unexpected_pass.append(rid)
        elif not why:
            passed += 1
    print(f"TIR ({label}): {passed} of {len(records)} programs CLOSE to the interpreter")
    assert not failures, "\n".join(failures)
    assert not unexpected_pass, f"listed as expected failures but pass: {unexpected_pass}"
    assert passed >= len(records) - len(expected)


def test_tir_builds_and_matches_interpreter() -> None:
    _run_all(RECORDS, TIR_BIND_SERIAL, "loops")


def test_tir_blocks_build_and_match_interpreter() -> None:
    """The block form (T.block + T.axis.remap) on a seeded sample."""
    sample = random.Random(SEED + 1).sample(RECORDS, min(BLOCK_SAMPLE, len(RECORDS)))
    _run_all(sample, TIR_BIND_SERIAL | TIR_BLOCKS, "blocks")


def test_thread_bindings_parse() -> None:
    """Default form: B loops bound to their thread axes; TVM parses it."""
    text = ("B^{4}_{bx=0}B^{8}_{tx=0}L^{6}_{a=0}"
            "[C^{f64,g}_{bx,tx}=C^{f64,g}_{bx,tx}+A^{f64,g}_{bx,tx,a};];")
    src = lower_tir(leir.parse(text))
    assert 'T.thread_binding(4, thread="blockIdx.x")' in src
    assert 'T.thread_binding(8, thread="threadIdx.x")' in src
    f = tvm.script.from_source(src)
    assert f.params and len(f.params) == 2
