"""Answers that must earn no verification or speed reward, each with the
reason it got nothing (issue 31.4)."""

from __future__ import annotations


import pytest

import leir.rl as rl
from test_rl_helpers import answer, build_tiny, rows

OK = "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];"
NEST = "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=%s;];"


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory):
    ev = rows(build_tiny(tmp_path_factory.mktemp("rt")) / "eval.jsonl")
    return next(r for r in ev if r["kind"] == "single" and r["depth"] == 0)


def cases(rec):
    lab = rec["labels"][0]
    other = next(l for l in rec["labels"] if l["strategy"] != lab["strategy"])
    deep = "max(" * 300 + "A^{f64,g}_{a,c}" + ",0)" * 300  # deeper than the parser takes, under the size guard
    return {
        "unchanged": (answer(rec["original_IR"], "loop_reorder"), "ir.unchanged"),
        "unchanged_renamed": (answer("L^{4}_{i=0}L^{8}_{j=0}[C^{f64,g}_{i,j}=max(A^{f64,g}_{i,j},0);];", "loop_reorder"),
                              "ir.unchanged"),
        "zeros": (answer(NEST % "0", "loop_reorder"), "verify.MISMATCH"),
        "constant": (answer(NEST % "1.5", "loop_reorder"), "verify.MISMATCH"),
        "copy_input": (answer(NEST % "A^{f64,g}_{a,c}", "loop_reorder"), "verify.MISMATCH"),
        "nan": (answer(NEST % "max(A^{f64,g}_{a,c},0)+log(0-1)", "loop_reorder"), "verify.MISMATCH"),
        "other_strategy_name": (answer(lab["transformed_IR"], other["strategy"]), "strategy.not_grounded"),
        "program_repeated": (answer(lab["transformed_IR"] * 2, lab["strategy"]), "strategy.not_grounded"),
        "answer_text_in_ir": (answer(lab["transformed_IR"] + " <think>one step</think>", lab["strategy"]), "ir.parse"),
        "nesting_bomb": (answer(NEST % deep, "loop_reorder"), "ir.parse"),
        "evaluation_bomb": (answer("L^{4}_{a=0}L^{8}_{c=0}L^{100000}_{d=0}L^{1000}_{e=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];",
                                   "loop_reorder"), "ir.too_costly"),
        "compile_bomb": (answer(OK * 5000, "loop_unrolling"), "ir.too_large"),
        "ten_megabytes": (answer(OK + " " * (10 << 20), "loop_reorder"), "answer.too_large"),
        "different_program": (answer("L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];", "loop_reorder"),
                              "ir.invalid"),
        "just_above_tolerance": (answer(NEST % "max(A^{f64,g}_{a,c},0)*1.000000002", "loop_reorder"), "verify.MISMATCH"),
        "within_tolerance_not_a_step": (answer(NEST % "max(A^{f64,g}_{a,c},0)*1.0000000005", "loop_reorder"),
                                        "strategy.not_grounded"),
    }


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_hostile_answers_earn_nothing(rec, backend):
    if backend == "cpu":
        import shutil
        if not shutil.which("cc"):
            pytest.skip("no C compiler for the cpu backend")
    r = rl.Rewarder(timing=True, backend=backend)
    cs = cases(rec)
    if backend == "cpu":  # the slow ones only once
        cs = {k: v for k, v in cs.items() if k in ("zeros", "nan", "compile_bomb", "other_strategy_name", "just_above_tolerance")}
    scores = r.score([t for t, _ in cs.values()], records=[rec] * len(cs))
    for (name, (_, reason)), s in zip(cs.items(), scores):
        assert s.components["verified"] == 0, name
        assert s.components["predicted_speedup"] == 0 and s.components["measured_speedup"] == 0, name
        assert s.predicted_speedup is None and s.measured_speedup is None, name
        assert s.reason == reason, (name, s.reason, s.message)


def test_the_control_answer_is_rewarded(rec):
    lab = next(l for l in rec["labels"] if l["verdict"] == "EQUAL")
    s = rl.Rewarder().score([answer(lab["transformed_IR"], lab["strategy"])], records=[rec])[0]
    assert s.components["verified"] == 1.0 and s.reason == ""
