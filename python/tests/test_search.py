"""leir.optimize (python/leir/search.py): the multi-step search over the
experimental C API. Tiny searches (a few samples, short comparisons); every
record the search verified is verified again here, independently, on the
interpreter, and every accepted step is replayed with leir.apply."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import pytest

import leir

from conftest import have_cc

pytestmark = pytest.mark.skipif(
    not leir.search._s.AVAILABLE, reason="this libleir has no search (leir_search_run)"
)

MATMUL = "L^{48}_{a=0}L^{48}_{c=0}L^{48}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];"
RELU = "L^{16}_{a=0}L^{16}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];"
QUICK = dict(rounds=3, compare_time=0.5)


def _check_trajectory(src: leir.Program, result: leir.SearchResult) -> int:
    """Every verified record's program verifies against the source on the
    interpreter; every accepted record is its parent plus its step. Returns
    the number of records checked."""
    nodes: Dict[int, leir.Program] = {0: src}
    checked = 0
    for rec in result.records:
        if rec.verdict in ("EQUAL", "CLOSE"):
            assert rec.program, rec
            cand = leir.parse(rec.program)
            v = leir.verify(src, cand, backend="interp")
            assert v.passed, (rec.step, v)
            checked += 1
        if rec.accepted:
            parent = nodes[rec.parent]
            after = leir.apply(parent, rec.step)
            assert after.hash_hex(alpha=True) == leir.parse(rec.program).hash_hex(alpha=True)
            assert rec.hash == after.hash_hex(alpha=True)
            nodes[rec.node] = after
    # the best program is the source plus the reported steps
    p = src
    for step in result.steps:
        p = leir.apply(p, step)
    assert p.hash(alpha=True) == result.best.hash(alpha=True)
    return checked


def test_optimize_trajectory_verifies() -> None:
    backend = "cpu" if have_cc() else "interp"
    src = leir.parse(MATMUL)
    seen: List[leir.Record] = []
    r = leir.optimize(src, backend=backend, samples=4, rounds=5, compare_time=2, on_record=seen.append)
    assert len(r.records) >= 4
    assert [x.sample for x in seen] == [x.sample for x in r.records]
    assert r.summary["samples"] == 4 and r.summary["stopped_by"] == "samples"
    assert _check_trajectory(src, r) >= 1
    # whether a step was accepted depends on timing (not asserted); when one
    # was, _check_trajectory replayed it and the speedup is the side-by-side one
    if r.summary["accepted"]:
        assert r.steps and r.speedup > 0
    assert r.best.effective_signature() == src.effective_signature()
    assert r.plot_svg().lstrip().startswith("<")


def test_python_policy_gets_feedback(tmp_path: Path) -> None:
    src = leir.parse(RELU)
    asked = []

    def policy(q: leir.Query) -> list:
        asked.append(q)
        assert q.program is not None and q.root.hash() == src.hash()
        assert q.candidates and {"index", "step", "strategy"} <= set(q.candidates[0])
        if q.attempt == 0:
            # not a candidate of this program, then candidate 0 with a chain of thought
            return ["loop_tiling nest=7 loops=a,c factors=2,2", {"index": 0, "cot": "my reason"}]
        return []

    r = leir.optimize(src, backend="interp", propose=policy, samples=3, retries=1, **QUICK)
    first, second = r.records[0], r.records[1]
    assert first.reject == "not-applicable" and "nest=7" in first.reason
    assert second.step == asked[0].candidates[0]["step"] and second.cot == "my reason"
    # the second call at the node was told why both proposals were rejected
    assert len(asked) >= 2 and asked[1].attempt == 1
    assert [f["reject"] for f in asked[1].feedback][0] == "not-applicable"
    assert asked[1].feedback[0]["proposal"].startswith("loop_tiling nest=7")
    _check_trajectory(src, r)


def test_python_policy_builtin_and_errors() -> None:
    src = leir.parse(RELU)

    def exhaustive(q: leir.Query) -> list:
        q.builtin("exhaustive")
        return []

    r = leir.optimize(src, backend="interp", propose=exhaustive, samples=2, **QUICK)
    assert [x.step for x in r.records[:2]] == [c["step"] for c in leir.candidates_json(src)[:2]]

    def boom(q: leir.Query) -> list:
        raise KeyError("from the policy")

    with pytest.raises(KeyError, match="from the policy"):
        leir.optimize(src, backend="interp", propose=boom, samples=2)
    with pytest.raises(TypeError):
        leir.optimize(src, backend="interp", propose=lambda q: [object()], samples=2)
    with pytest.raises(leir.ArgumentError):
        leir.optimize(src, backend="interp", algorithm="annealing")
    with pytest.raises(leir.ArgumentError):
        leir.optimize(src, backend="interp", policy="oracle")


def test_on_record_stops_the_search() -> None:
    src = leir.parse(RELU)
    r = leir.optimize(src, backend="interp", samples=10, on_record=lambda rec: rec.sample >= 2, **QUICK)
    assert len(r.records) == 2 and r.summary["stopped_by"] == "cancelled"


def test_lookahead_options_reach_the_library() -> None:
    """The lookahead fields follow the C struct (its size convention): a
    lookahead runs and is counted in the summary; lookahead 0 runs none."""
    src = leir.parse(MATMUL)
    r = leir.optimize(src, backend="interp", samples=1, lookahead=2, lookahead_width=4,
                      lookahead_evals=500, lookahead_time=5, final_compare=False, **QUICK)
    assert r.summary["lookaheads"] >= 1
    assert 0 < r.summary["lookahead_evals"] <= 500 * r.summary["lookaheads"]
    r0 = leir.optimize(src, backend="interp", samples=1, final_compare=False, **QUICK)
    assert r0.summary["lookaheads"] == 0 and r0.summary["lookahead_evals"] == 0
    with pytest.raises(leir.ArgumentError):
        leir.optimize(src, backend="interp", lookahead=-1)


def test_unsaved_rows_are_written_at_the_end_or_counted(tmp_path: Path) -> None:
    """A write that fails (here a trigger refusing every insert, as a full
    disk does) leaves the search going; its rows are written again when it
    ends: lost while the failure lasts (``db_unsaved``), saved once it is
    gone (``summary["db_saved_late"]``)."""
    import sqlite3

    src = leir.parse(RELU)
    path = tmp_path / "m.db"
    leir.Database(path).close()  # our tables, then the failure
    other = sqlite3.connect(path, isolation_level=None)
    full = "CREATE TRIGGER full BEFORE INSERT ON measurements BEGIN SELECT RAISE(FAIL, 'disk is full'); END"
    other.execute(full)
    fast = dict(backend="interp", algorithm="chain", samples=1, final_compare=False, db=path, **QUICK)
    a = leir.optimize(src, **fast)
    assert a.summary["measured"] == 1
    assert a.db_unsaved == a.summary["db_unsaved"] == 1 and a.summary["db_saved_late"] == 0
    with leir.Database(path) as db:
        assert len(db) == 0
    # the failure ends after the first record (its write failed): saved at the end
    dropped: List[int] = []

    def drop(rec: leir.Record) -> None:
        if not dropped:
            other.execute("DROP TRIGGER full")
            dropped.append(rec.sample)

    b = leir.optimize(src, on_record=drop, **fast)
    assert dropped and b.summary["measured"] == 1
    assert b.db_unsaved == 0 and b.summary["db_saved_late"] == 1
    with leir.Database(path) as db:
        assert len(db) == 1
    other.close()


def test_database_is_reused(tmp_path: Path) -> None:
    src = leir.parse(RELU)
    path = tmp_path / "m.db"
    a = leir.optimize(src, backend="interp", algorithm="chain", samples=3, db=path, **QUICK)
    assert a.summary["measured"] == 3 and a.summary["reused"] == 0
    with leir.Database(path) as db:
        b = leir.optimize(src, backend="interp", algorithm="chain", samples=3, db=db, **QUICK)
        assert b.summary["measured"] == 0 and b.summary["reused"] == 3
        assert [x.step for x in b.records] == [x.step for x in a.records]
        assert all(x.cached for x in b.records)
        assert len(db) == 3
        db.check()
        rows = db.rows()
        assert {row["step"] for row in rows} == {x.step for x in a.records}
    with pytest.raises(ValueError):
        len(db)
