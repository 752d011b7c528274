"""Strategies: catalogue, steps, candidates, apply, explain, ground, CoT."""

from __future__ import annotations

import json

import pytest

import leir
from conftest import NESTED_BAD, RELU, ROWSUM, corpus


def test_catalogue() -> None:
    cat = leir.strategies()
    assert len(cat) == 44
    assert [s.index for s in cat] == list(range(44))
    tiling = cat[leir.strategy_index("loop_tiling")]
    assert tiling.name == "loop_tiling" and tiling.implemented and tiling.level == "operator"
    assert sum(s.implemented for s in cat) >= 14
    with pytest.raises(leir.NotFoundError) as ei:
        leir.strategy_index("loop_tilling")
    assert "loop_tiling" in ei.value.message and ei.value.subject == "loop_tilling"


def test_step_text_json_params() -> None:
    s = leir.Step("loop_split  nest=0 loop=a factor=2")
    assert str(s) == "loop_split nest=0 loop=a factor=2"
    assert s.strategy == "loop_split"
    assert s.params == {"nest": 0, "loop": "a", "factor": 2}
    assert s.param_text == {"nest": "0", "loop": "a", "factor": "2"}
    assert s.json == {"strategy": "loop_split", "nest": 0, "loop": "a", "factor": 2}
    assert leir.Step(s.to_json()) == s
    assert leir.Step(s.json) == s
    assert s == "loop_split nest=0 loop=a factor=2"
    assert leir.Step(s) == s and hash(leir.Step(s)) == hash(s)
    with pytest.raises(leir.NotFoundError):
        leir.Step("loop_tilling nest=0")
    with pytest.raises(leir.ParseError):
        leir.Step("loop_split nest=zero")
    with pytest.raises(leir.ParseError):
        leir.Step('{"strategy":')


def test_candidates_are_complete_and_apply(rowsum: leir.Program) -> None:
    cands = leir.candidates(rowsum)
    assert len(cands) > 5
    assert {c.exactness for c in cands} <= {"exact", "reassociating"}
    assert any(c.exactness == "reassociating" for c in cands)
    for c in cands:
        # the listed result equals applying the step through the checked path
        assert leir.apply(rowsum, c.step) == c.result
        q, cls = leir.apply(rowsum, str(c.step), with_class=True)
        assert cls == c.exactness and q == c.result
        assert c.result.is_valid
        assert c.program is rowsum
    split = leir.candidates(rowsum, "loop_split")
    assert [str(c) for c in split] == [
        "loop_split nest=0 loop=tx factor=2",
        "loop_split nest=0 loop=a factor=2",
    ]
    assert str(split[1].result) == (
        "B^{4}_{tx=0}L^{2}_{f=0}L^{3}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,f*3+a};];"
    )
    with pytest.raises(leir.LimitError):
        leir.candidates(rowsum, max_candidates=1)


def test_candidates_json_matches_objects(rowsum: leir.Program) -> None:
    rows = leir.candidates_json(rowsum, results=True)
    cands = leir.candidates(rowsum)
    assert [r["step"] for r in rows] == [str(c.step) for c in cands]
    assert [r["class"] for r in rows] == [c.exactness for c in cands]
    assert [r["result"] for r in rows] == [str(c.result) for c in cands]
    assert [r["index"] for r in rows] == list(range(len(cands)))
    assert all(r["json"]["strategy"] == r["strategy"] for r in rows)


def test_candidates_outlive_the_list_and_program() -> None:
    cands = leir.candidates(leir.parse(ROWSUM))
    import gc

    gc.collect()
    assert str(cands[-1].result)
    assert cands[0].cot()


def test_apply_not_applicable_names_the_precondition(relu: leir.Program) -> None:
    with pytest.raises(leir.NotApplicableError) as ei:
        leir.apply(relu, "loop_vectorization nest=0 loop=tx")
    assert ei.value.rule and ei.value.status_name == "LEIR_ERR_NOT_APPLICABLE"


def test_candidates_of_an_invalid_program_raise(relu: leir.Program) -> None:
    relu.set_signature({"A": ("f64", (2, 4))}, {"C": ("f64", (2, 8))})
    with pytest.raises(leir.InvalidProgramError) as ei:
        leir.candidates(relu)
    assert ei.value.rule == "check.bounds"


def test_explain(rowsum: leir.Program) -> None:
    e = leir.explain(rowsum, "loop_vectorization")
    assert not e.applies and e.candidates == 0
    assert {r.rule for r in e.reasons} == {"loop.kind", "loop.not-parallel-safe"}
    assert str(e).startswith("loop_vectorization does not apply")
    e = leir.explain(rowsum, "loop_split")
    assert e.applies and e.candidates == 2 and all(r.applies for r in e.reasons)
    with pytest.raises(leir.NotFoundError):
        leir.explain(rowsum, "nope")
    with pytest.raises(leir.ArgumentError):
        leir.explain(rowsum, 999)


def test_ground_finds_the_step(rowsum: leir.Program) -> None:
    target = leir.apply(rowsum, "reduction_factorization nest=0 loop=a at=2")
    hits = leir.ground(rowsum, target)
    assert "reduction_factorization nest=0 loop=a at=2" in [str(h.step) for h in hits]
    assert leir.ground(rowsum, rowsum) == []
    assert leir.ground(rowsum, target, strategy="loop_split") == []


def test_cot_quotes_the_program(rowsum: leir.Program) -> None:
    text = leir.cot(rowsum, "loop_split nest=0 loop=a factor=2")
    assert "Under the given IR" in text
    with pytest.raises(leir.NotApplicableError):
        leir.cot(rowsum, "loop_split nest=3 loop=a factor=2")


def test_corpus_candidates_verify_on_interp(interp: leir.Backend) -> None:
    # every candidate of a few corpus programs keeps the results
    checked = 0
    for row in corpus(6):
        p = leir.parse(row["leir"])
        for c in leir.candidates(p)[:8]:
            v = leir.verify(p, c.result, backend=interp, input_sets=1)
            assert v.passed, (row["id"], str(c.step), str(v))
            if c.exactness == "exact":
                assert v.name == "EQUAL"
            checked += 1
    assert checked > 10


def test_unparsable_program_never_reaches_candidates() -> None:
    with pytest.raises(leir.ParseError):
        leir.candidates(leir.parse(NESTED_BAD))
    assert json.loads(json.dumps(leir.candidates_json(leir.parse(RELU))))


def test_candidates_are_steps_too(rowsum: leir.Program) -> None:
    c = leir.candidates(rowsum, "loop_split")[0]
    assert leir.apply(rowsum, c) == c.result
    assert leir.cot(rowsum, c) == c.cot()


def test_domains_beyond_the_reference(interp: leir.Backend) -> None:
    rows = leir.parse(
        "L^{4}_{a=0}L^{32}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
        "L^{4}_{a=0}L^{32}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];"
    )
    # off by default: the reference's domain
    assert not any("depth=" in str(c) for c in leir.candidates(rows, "operator_fusion"))
    assert not any("lanes=" in str(c) for c in leir.candidates(rows, "reduction_factorization"))
    fused = leir.candidates(rows, "operator_fusion", partial_fusion=True)
    assert [str(c) for c in fused] == ["operator_fusion nest=0 depth=1"]
    assert str(fused[0].result).startswith("L^{4}_{a=0}[L^{32}_{c=0}[D^{f32,g}_{a}=max(")
    lanes = leir.candidates(rows, "reduction_factorization", reduction_lanes=True, vector_width=8)
    lane = [c for c in lanes if "lanes=" in str(c)]
    assert [str(c) for c in lane] == ["reduction_factorization nest=0 loop=c lanes=8"]
    assert "V^{8}_{" in str(lane[0].result)
    for c in fused + lane:
        assert leir.verify(rows, c.result, backend=interp).passed
        # the step carries its listing's domain, so it replays; its bare text
        # is read in the reference's domain, where it is not a candidate
        assert leir.apply(rows, c.step) == c.result
        with pytest.raises(leir.NotApplicableError):
            leir.apply(rows, str(c.step))
    more = leir.candidates(rows, "loop_split", all_divisors=True)
    assert len(more) > len(leir.candidates(rows, "loop_split"))
