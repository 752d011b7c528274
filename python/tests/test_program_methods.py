"""Program methods: the common calls (candidates, apply, explain, ground,
cot, verify, run, lower) agree with the module functions; cost, the cost
model's prediction and input domains, which the C API has, are there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import ROWSUM, SOFTMAX

import leir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_methods_are_the_functions(rowsum: leir.Program) -> None:
    cands = rowsum.candidates()
    assert [str(c) for c in cands] == [str(c) for c in leir.candidates(rowsum)]
    assert [str(c) for c in rowsum.candidates("loop_split")] == [str(c) for c in leir.candidates(rowsum, "loop_split")]
    step = "reduction_factorization nest=0 loop=a at=2"
    q = rowsum.apply(step)
    assert q == leir.apply(rowsum, step)
    assert rowsum.apply(step, with_class=True)[1] == "reassociating"
    assert rowsum.cot(step) == leir.cot(rowsum, step)
    assert rowsum.explain("loop_vectorization").text == leir.explain(rowsum, "loop_vectorization").text
    assert [str(c) for c in rowsum.ground(q)] == [step]
    v = rowsum.verify(q, backend="interp")
    assert v.passed and v.name == leir.verify(rowsum, q, backend="interp").name
    A = np.arange(24.0).reshape(4, 6)
    assert np.array_equal(q.run({"A": A}, backend="interp")["C"], A.sum(axis=1))
    assert np.array_equal(q.run(A=A, backend="interp")["C"], A.sum(axis=1))
    assert rowsum.lower() == leir.lower(rowsum)
    with pytest.raises(leir.NotApplicableError):
        rowsum.apply("loop_vectorization nest=0 loop=tx")


def test_cost_matches_the_program() -> None:
    mm = leir.load(EXAMPLES / "matmul.leir.yaml")
    c = mm.cost()
    n = 256
    assert c.evaluations == n**3 and c.flops == 2 * n**3 and c.bytes == 3 * n * n * 4
    # without a signature it is inferred (the program is not changed)
    p = leir.parse(ROWSUM)
    assert p.cost() == leir.Cost(24, 24, 24 * 8 + 4 * 8) and p.signature == []
    t1 = mm.predict_seconds(1)
    assert 0 < t1 < float("inf") and mm.predict_seconds() > 0
    bad = leir.parse("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];")
    bad.set_signature({"A": ("f64", (2,))}, {"C": ("f64", (4,))})  # A is read past its end
    with pytest.raises(leir.InvalidProgramError):
        bad.cost()


def test_input_domains_round_trip_and_drive_seeded_inputs() -> None:
    p = leir.parse(SOFTMAX)
    assert p.domains() == {}  # no signature, no domains
    p.infer_signature()
    assert p.domains() == {"A": leir.Domain()}
    p.set_domain("A", "range", low=2.0, high=3.0)
    assert p.domain("A") == leir.Domain("range", low=2.0, high=3.0)
    A = leir.seeded_inputs(p, seed=5)["A"]
    assert A.min() >= 2.0 and A.max() <= 3.0
    # the program file keeps it
    q = leir.Program.from_yaml(p.to_yaml())
    assert q.domain("A") == leir.Domain("range", low=2.0, high=3.0)
    p.set_domain("A", leir.Domain("value", value=1.5))
    assert np.all(leir.seeded_inputs(p)["A"] == 1.5)
    p.set_domain("A", "normal", mean=4.0, std=0.5)
    assert p.domain("A").kind == "normal"
    p.set_domain("A")  # cleared
    assert p.domain("A").kind == "default"
    with pytest.raises(leir.ArgumentError):
        p.set_domain("C", "positive")  # an output
    with pytest.raises(leir.ArgumentError):
        p.set_domain("A", "uniform", low=1.0, high=1.0)
    with pytest.raises(leir.ArgumentError):
        p.set_domain("A", "normal", std=0.0)
    with pytest.raises(leir.NotFoundError):
        p.domain("Z")
    with pytest.raises(ValueError):
        p.set_domain("A", "lognormal")
    assert leir.DOMAIN_KINDS[:2] == ("default", "positive")


def test_methods_on_a_closed_program(rowsum: leir.Program) -> None:
    rowsum.close()
    for call in (rowsum.candidates, rowsum.cost, rowsum.domains, lambda: rowsum.predict_seconds(1)):
        with pytest.raises(ValueError):
            call()
