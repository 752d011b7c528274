"""leir.eval: scores answers against a built dataset as `leir eval` does
(the same report, typed), with right, CLOSE, wrong, malformed, unchanged
and unknown answers and several samples per prompt (pass@k by hand)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from leir_tool import find_leir
from test_dataset import write_sources

import leir
from leir import dataset as ds
from leir import eval as ev


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> ds.Dataset:
    d = tmp_path_factory.mktemp("four-eval")
    r = ds.build(write_sources(d))
    return r.dataset()


def single_answer(ir: str, strategy: str) -> str:
    return "<think>one step</think><answer>" + json.dumps({"transformed_IR": ir, "applied_strategy": strategy}) + "</answer>"


def pick(four: ds.Dataset) -> Tuple[ds.Prompt, ds.Label, ds.Label]:
    """A single test prompt with an EQUAL (exact) and a CLOSE label."""
    for p in four.test():
        if p.kind != "single":
            continue
        eq = [l for l in p.labels if l.verdict == "EQUAL"]
        close = [l for l in p.labels if l.verdict == "CLOSE"]
        if eq and close:
            return p, eq[0], close[0]
    raise AssertionError("the build has no single test prompt with EQUAL and CLOSE labels")


def wrong_ir(p: ds.Prompt) -> str:
    """The prompt's program with its exp replaced by abs: valid, different,
    and not equivalent."""
    assert "exp(" in p.original_ir
    return p.original_ir.replace("exp(", "abs(", 1)


def answers(four: ds.Dataset) -> List[Dict[str, str]]:
    p, eq, close = pick(four)
    multi = next(m for m in four.test() if m.kind == "multi")
    items = [{"idx": i, "transformed_IR": l.transformed_ir, "applied_strategy": l.strategy}
             for i, l in enumerate(multi.labels[: multi.n])]
    return [
        {"id": p.id, "answer": single_answer(eq.transformed_ir, eq.strategy)},  # right, bitwise
        {"id": p.id, "answer": single_answer(close.transformed_ir, close.strategy)},  # right, CLOSE
        {"id": p.id, "answer": single_answer(wrong_ir(p), "loop_split")},  # wrong
        {"id": p.id, "answer": "I would tile the loops."},  # malformed
        {"id": p.id, "answer": single_answer(p.original_ir, "loop_reorder")},  # unchanged
        {"id": multi.id, "answer": "<answer>" + json.dumps(items) + "</answer>"},  # all N labels
        {"id": "no-such-prompt", "answer": "<answer>{}</answer>"},
    ]


def test_outcomes_per_answer(four: ds.Dataset) -> None:
    rows = answers(four)
    r = ev.score(rows, four)
    assert [a.line for a in r.answers] == list(range(1, len(rows) + 1))
    right, close, wrong, malformed, unchanged, multi, unknown = r.answers
    (i,) = right.items
    assert (i.different, i.label, i.pass_equal, i.pass_close, i.pass_reference, i.grounded) == (True,) * 6
    (i,) = close.items
    assert i.label and not i.pass_equal and i.pass_close and i.verdict == "CLOSE" and i.cls == "reassociating"
    (i,) = wrong.items
    assert i.different and not i.label and not i.pass_close and i.reason and i.reason.startswith("verify.")
    assert not malformed.parsed and malformed.reason == "answer.no_answer" and malformed.items == ()
    (i,) = unchanged.items
    assert not i.different and not i.pass_equal and i.reason == "ir.unchanged"
    assert multi.kind == "multi" and multi.multi_label and multi.distinct == multi.requested
    assert all(it.label and it.pass_close for it in multi.items)
    assert unknown.reason == "prompt.unknown" and unknown.id == "no-such-prompt"


def test_pass_at_k_by_hand(four: ds.Dataset) -> None:
    rows = answers(four)[:5]  # five samples of one prompt: 1 bitwise, 2 close, 4 reference
    r = ev.score(rows, four, k=[1, 2, 5])
    assert r.k == (1, 2, 5)
    o = r.overall
    assert o.prompts == 1 and o.answers == 5 and o.pass_at_k_prompts == {1: 1, 2: 1, 5: 1}
    n = 5
    for metric, c in (("pass_equal", 1), ("pass_close", 2)):
        # 1 - C(n-c, k) / C(n, k), by hand
        assert o.pass_at(1, metric) == pytest.approx(c / n, abs=1e-6)
        assert o.pass_at(2, metric) == pytest.approx(1 - (n - c) * (n - c - 1) / (n * (n - 1)), abs=1e-6)
        assert o.pass_at(5, metric) == 1.0
        assert ev.pass_at_k(n, c, 2) == pytest.approx(o.pass_at(2, metric), abs=1e-6)
    assert o.pass_equal == pytest.approx(1 / 5) and o.pass_close == pytest.approx(2 / 5)
    assert o.parse_rate == pytest.approx(4 / 5)
    assert ev.pass_at_k(4, 1, 2) == pytest.approx(0.5) and ev.pass_at_k(4, 3, 2) == 1.0
    with pytest.raises(ValueError):
        ev.pass_at_k(2, 3, 1)


def test_rows_per_strategy_and_level(four: ds.Dataset) -> None:
    p, eq, close = pick(four)
    r = ev.score(answers(four)[:2], four)
    assert r.per_strategy[eq.strategy].equal == 1 and r.per_strategy[close.strategy].close == 1
    assert r.per_strategy[eq.strategy].prompts is None
    levels = {i.name: i.level for i in leir.strategies()}
    assert r.per_strategy_level[levels[eq.strategy]].answers >= 1
    assert r.per_level["level1"].answers == 2 and r.single.answers == 2 and r.multi.answers == 0
    assert set(r.per_named_strategy) == {eq.strategy, close.strategy}
    assert "overall" in r.table and str(r) == r.table


def test_same_report_as_the_tool(four: ds.Dataset, tmp_path: Path) -> None:
    tool = find_leir()
    if not os.access(tool, os.X_OK):
        pytest.skip("no leir tool")
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in answers(four)))
    got = ev.score(path, four.path, k=[1, 2])
    cli = subprocess.run([tool, "eval", str(path), "--dataset", str(four.path), "--json", "--k", "1,2"],
                         capture_output=True, text=True, check=True)
    assert got.raw == json.loads(cli.stdout)
    table = subprocess.run([tool, "eval", str(path), "--dataset", str(four.path), "--k", "1,2"],
                           capture_output=True, text=True, check=True)
    assert got.table == table.stdout
    # every form of the answers gives the same report
    assert ev.score(path.read_bytes(), four, k=[1, 2]) == got
    assert ev.score(path.read_text().splitlines(), four, k=[1, 2]) == got
    assert four.score(str(path), k=[1, 2]) == got
    pairs = [(a["id"], a["answer"]) for a in answers(four)]
    assert ev.score(pairs, four, k=[1, 2]) == got


def test_hostile_answers_are_scored_not_raised(four: ds.Dataset) -> None:
    p, _, _ = pick(four)
    lines = ["{", "[]", "null", json.dumps({"id": p.id}), json.dumps({"id": p.id, "answer": "\x00" * 100}),
             json.dumps({"id": p.id, "answer": "<answer>" + "[" * 5000 + "</answer>"}),
             json.dumps({"id": p.id, "answer": single_answer("L^{99999999999}_{a=0}[C^{f64,g}=1;];", "x")})]
    r = ev.score(lines, four)
    assert len(r.answers) == len(lines)
    assert all(a.reason or any(i.reason for i in a.items) for a in r.answers)
    assert r.overall.pass_equal == 0


def test_errors(four: ds.Dataset, tmp_path: Path) -> None:
    with pytest.raises(leir.NotFoundError):
        ev.score([], tmp_path / "no-dataset")
    with pytest.raises(leir.LeirIOError):
        ev.score(tmp_path / "no-answers.jsonl", four)
    with pytest.raises(leir.ArgumentError):
        ev.score([], four, k=[0])
    with pytest.raises(leir.ArgumentError):
        ev.score([], four, k=list(range(1, 18)))
    with pytest.raises(TypeError):
        ev.score([42], four)  # type: ignore[list-item]
    empty = ev.score([], four)
    assert empty.answers == () and empty.overall.answers == 0
