"""leir.catalogue: the workload catalogue (workloads/ of the source tree)
listed and emitted as `leir workloads list|emit` does, and emitted
programs that check, run and carry their input domains."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from leir_tool import find_leir

import leir
from leir import catalogue as cg


@pytest.fixture(scope="module")
def cat() -> cg.Catalogue:
    return cg.Catalogue()


def test_list(cat: cg.Catalogue) -> None:
    assert len(cat) >= 200 and os.path.isdir(cat.dir)
    names = cat.names()
    assert len(set(names)) == len(names) and "level1/ReLU" in names and "level2/GQA" in names
    assert len(cat.workloads(level=1)) + len(cat.workloads(level=2)) == len(cat)
    traced = cat.workloads(traced=True)
    assert 0 < len(traced) < len(cat) and all(w.traced for w in traced)
    assert "level1/ReLU" in cat and "ReLU" in cat and "level1/NoSuch" not in cat and 3 not in cat
    with pytest.raises(leir.NotFoundError) as ei:
        cat["NoSuchWorkload"]
    assert ei.value.rule == "workload.unknown"


def test_same_list_as_the_tool(cat: cg.Catalogue) -> None:
    tool = find_leir()
    if not os.access(tool, os.X_OK):
        pytest.skip("no leir tool")
    out = subprocess.run([tool, "workloads", "list", "--dir", cat.dir], capture_output=True, text=True, check=True)
    rows = [line.split()[:2] for line in out.stdout.splitlines()]
    assert [(r[0], int(r[1])) for r in rows] == [(w.qualified_name, w.index) for w in cat]


def test_a_workload(cat: cg.Catalogue) -> None:
    w = cat["level1/ReLU"]
    assert (w.name, w.level, w.qualified_name) == ("ReLU", 1, "level1/ReLU")
    assert w == cat["ReLU"] and hash(w) == hash(cat["ReLU"])
    assert w.traced and w.dtype in leir.DTYPES and w.file.endswith(".yaml") and "max(" in w.template
    assert [p.name for p in w.params] == ["batch_size", "dim"]
    assert all(not p.is_float and isinstance(p.default, int) for p in w.params)
    s = cat["level1/Matrix_scalar_multiplication"].params[2]
    assert s.is_float and isinstance(s.default, float) and s.default == pytest.approx(3.14)


def test_emit(cat: cg.Catalogue) -> None:
    w = cat["level1/ReLU"]
    p = w.emit("small")
    assert p.name == "level1/ReLU" and p.is_valid
    sig = {d.name: (d.role, d.dtype, d.shape) for d in p.signature}
    vals = w.shape_values("small")
    shape = (vals["batch_size"], vals["dim"])
    assert sig == {"A": ("input", "f64", shape), "C": ("output", "f64", shape)}
    # it computes what the workload says: max(x, 0)
    A = np.linspace(-1, 1, shape[0] * shape[1]).reshape(shape)
    assert np.array_equal(p.run({"A": A}, backend="interp")["C"], np.maximum(A, 0))
    # args override in the reference's order; dtype
    q = w.emit(args=[3, 5], dtype="f32")
    assert [d.shape for d in q.signature] == [(3, 5), (3, 5)] and q.signature[0].dtype == "f32"
    assert w.shape_values(args=[3, 5]) == {"batch_size": 3, "dim": 5}
    # the program file parses back to the same program
    y = w.emit_yaml(args=[3, 5], dtype="f32")
    assert y.startswith("# leir workloads emit level1/ReLU") and leir.Program.from_yaml(y) == q
    # random shapes: seeded, inside the ranges
    r1, r2 = w.shape_values("random", seed=7), w.shape_values("random", seed=7)
    assert r1 == r2 and all(p.min <= r1[p.name] <= p.max for p in w.params)
    assert cg.emit("level1/ReLU", "random", seed=7) == w.emit("random", seed=7)


def test_emitted_domains(cat: cg.Catalogue) -> None:
    w = cat["level1/Matrix_scalar_multiplication"]
    p = w.emit("small")
    doms = p.domains()
    assert doms["A"].kind == "default"
    assert doms["C"].kind == "value" and doms["C"].value == pytest.approx(3.14)
    C = leir.seeded_inputs(p)["C"]
    assert np.all(C == np.float64(w.shape_values("small")["s"]))
    kl = cat["level1/KLDivLoss"].emit("small")
    assert {d.kind for d in kl.domains().values()} == {"positive"}
    assert all(np.all(a > 0) for a in leir.seeded_inputs(kl).values())


def test_emit_errors(cat: cg.Catalogue) -> None:
    w = cat["level1/ReLU"]
    with pytest.raises(leir.ArgumentError) as ei:
        w.emit(args=[1, 2, 3])
    assert ei.value.rule == "workload.args"
    with pytest.raises(leir.ArgumentError):
        w.emit(args=[2.5])  # an integer parameter
    with pytest.raises(ValueError):
        w.emit("huge")
    with pytest.raises(leir.ArgumentError):
        w.emit(dtype="f99")


WORKLOAD = """name: scale
level: 1
index: 900
summary: x times a float
traced: true
dtype: f32
params:
  - {name: n, default: 8, small: 4, range: [2, 16]}
  - {name: k, type: float, default: 2.5}
inputs:
  - {name: A}
outputs:
  - {name: C}
leir: |-
  L^{$n}_{a=0}[C^{$T,g}_{a}=A^{$T,g}_{a}*$k;];
"""


def test_from_texts_and_hostile_files() -> None:
    c = cg.Catalogue.from_texts(WORKLOAD)
    assert len(c) == 1 and c.dir == "" and c.names() == ["level1/scale"]
    w = c["scale"]
    assert w.file == "" and str(w.emit("small")) == "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*2.5;];"
    assert w.emit(args=[3, 0.5], dtype="f32").signature[0].shape == (3,)
    with pytest.raises(leir.ArgumentError):
        cg.Catalogue.from_texts(WORKLOAD, WORKLOAD)  # a name twice
    for bad in ("name: [", "name: x\nleir: 1\nbogus: 2\n", "\x00\xff", "params: " + "[" * 10000):
        with pytest.raises(leir.LeirError):
            cg.Catalogue.from_texts(bad, labels=["bad.yaml"])
    with pytest.raises(leir.NotFoundError):
        cg.Catalogue("/nonexistent/workloads")
    c.close()
    with pytest.raises(ValueError):
        len(c)
    with pytest.raises(ValueError):
        w.name  # the workload belonged to the closed catalogue
