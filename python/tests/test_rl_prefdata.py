"""leir.rl.prefdata: DPO pairs and stepwise process rows from a dataset built
here (CLOSE steps rejected: verify.keep_close false, walks of two steps) and
from a real search's trajectory, judged again by the library."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import leir
import leir.rl as rl
from test_rl_helpers import PROGRAMS, find_leir, rows

CONFIG = """name: pref
seed: 1
sources:
  programs: programs.jsonl
walks: {count: 1, depth: 2}
sampling: {per_strategy: 1}
split: {test: 0.5, validation: 0}
verify: {keep_close: false}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pref")
    (d / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROGRAMS))
    (d / "pref.yaml").write_text(CONFIG)
    subprocess.run([find_leir(), "dataset", "build", "pref.yaml", "--out", "pref"], cwd=d, check=True,
                   capture_output=True, timeout=300)
    return d / "pref"


@pytest.fixture(scope="module")
def steps(built: Path) -> rl.DatasetSteps:
    return rl.DatasetSteps(built)


def splits_of_states(built: Path):
    out = {}
    for rec in rows(built / "archive.jsonl"):
        for s in rec["samples"]:
            out[s["state"]["id"]] = rec["split"]
    return out


def judge(prompt_ir: str, known, answer: str, rewarder: rl.Rewarder) -> rl.Score:
    rec = {"original_IR": prompt_ir, "known": known, "kind": "single", "n": 1}
    return rewarder.score([answer], records=[rec])[0]


def test_rejections_are_rebuilt_and_verify_as_rejected(built, steps):
    rejected = [r for r in rows(built / "rejections.jsonl") if r["stage"] in rl.prefdata.WRONG_STAGES]
    assert rejected, "the build rejected no CLOSE step: the test data is not what it should be"
    assert sum(len(s.bad) for s in steps.states.values()) == len(rejected) and not steps.skipped
    for st in steps.states.values():
        src = steps.program(st)
        for bad in st.bad:
            v = leir.verify(src, rl.prefdata.program_of(bad["ir"], st.known), backend="interp")
            assert v.name == bad["verdict"] == "CLOSE", (bad, v.name)


def test_preference_pairs_keep_splits_and_prefer_the_kept_step(built, steps):
    pairs = rl.preference_pairs(steps)
    split_of = splits_of_states(built)
    want = sum(min(len(s.bad), 4) for s in steps.states.values() if s.good)
    assert sum(len(v) for v in pairs.values()) == want > 0
    r = rl.Rewarder({"verified": 1.0}, close_value=0.5)
    for split, rs in pairs.items():
        for p in rs:
            assert set(p) >= {"prompt", "chosen", "rejected"} and p["split"] == split == split_of[p["state"]]
            assert p["prompt"][0]["role"] == "user" and p["chosen"][0]["role"] == p["rejected"][0]["role"] == "assistant"
            st = steps.states[p["state"]]
            assert p["prompt"][0]["content"] == st.prompt and st.ir in st.prompt
            good = judge(st.ir, st.known, p["chosen"][0]["content"], r)
            bad = judge(st.ir, st.known, p["rejected"][0]["content"], r)
            # the kept step verifies EQUAL (the build dropped CLOSE), the rejected one is CLOSE
            assert good.verdict == "EQUAL" and good.reward == 1.0, good
            assert bad.verdict == "CLOSE" and bad.reward == 0.5 and bad.grounded, bad
            assert p["chosen"] != p["rejected"] and p["reason"] == "verify: CLOSE"


def test_process_rows_replay_the_walks(built, steps):
    out = rl.process_rows(steps)
    split_of = splits_of_states(built)
    n = sum(len(s.good) + len(s.bad) for s in steps.states.values())  # every state's walk replays
    assert sum(len(v) for v in out.values()) == n
    assert any(len(r["labels"]) == 3 for v in out.values() for r in v)  # walks of two steps, then the step
    r = rl.Rewarder({"verified": 1.0}, close_value=1.0)
    labels = set()
    for split, rs in out.items():
        for row in rs:
            st = steps.states[row["state"]]
            assert split == split_of[st.id] and isinstance(row["prompt"], str)
            assert len(row["completions"]) == len(row["labels"]) == len(st.walk) + 1
            # each step, judged against the program before it: a walk step's
            # label is whether it verifies; the last is the dataset's choice
            # (EQUAL kept, CLOSE rejected in this build)
            ir = steps.sources[st.unit].ir
            for i, (text, label) in enumerate(zip(row["completions"], row["labels"])):
                s = judge(ir, st.known, text, r)
                if i < len(st.walk):
                    assert (s.reward == 1.0) == label, (text[-200:], s.reason, s.verdict)
                    labels.add(("walk", label))
                else:
                    assert s.verdict == ("EQUAL" if label else "CLOSE") and s.grounded, (s.reason, s.verdict)
                    labels.add(("last", label))
                ir = s.program
            assert ir is not None
    assert {("last", True), ("last", False), ("walk", True)} <= labels


def test_search_trajectory_rows(built, steps, tmp_path):
    train_src = next(s for s in steps.states.values() if s.depth == 0 and s.split == "train")
    (tmp_path / "p.leir").write_text(train_src.ir + "\n")
    subprocess.run([find_leir(), "optimize", "--no-db", "--samples", "5", "--rounds", "3", "--compare-time", "0.2",
                    "--quiet", "--trajectory", "t.jsonl", "p.leir"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=120)
    recs = rows(tmp_path / "t.jsonl")
    assert len(recs) == 5
    only = rl.DatasetSteps(built)
    base = {k: len(v) for k, v in rl.process_rows(only).items()}
    got = rl.process_rows(only, [(train_src.ir, recs)], label="verified")
    search_rows = [r for r in got["train"] if r["origin"] == "search"]
    assert len(search_rows) == sum(1 for x in recs if x["program"]) and len(got["test"]) == base["test"]
    for row, x in zip(search_rows, recs):
        assert row["labels"][-1] == (x["verdict"] in ("EQUAL", "CLOSE")) and all(row["labels"][:-1])
        assert x["program"] in row["completions"][-1]
    # DPO pairs: an accepted and a rejected proposal at one node, when timing gave both
    pairs = [p for p in rl.preference_pairs(only, [(train_src.ir, recs)])["train"] if p["origin"] == "search"]
    nodes = {}
    for x in recs:
        nodes.setdefault(x["parent"], []).append(x)
    want = sum(min(sum(not x["accepted"] for x in xs), 4) for xs in nodes.values()
               if any(x["accepted"] for x in xs) and any(not x["accepted"] for x in xs))
    assert len(pairs) == want
    # a source that is no state of the dataset has no split: left out
    other = "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*2;];"
    assert rl.process_rows(only, [(other, recs)])["train"] == rl.process_rows(only)["train"]


def test_write_splits(steps, tmp_path):
    paths = rl.write_splits(rl.preference_pairs(steps), tmp_path, "dpo")
    assert [Path(p).name for p in paths] == ["dpo.train.jsonl", "dpo.test.jsonl"]
    assert all(json.loads(line)["chosen"] for line in Path(paths[0]).read_text().splitlines())


# the measurement table of schema 1 (before parent_hash / parent_program)
SCHEMA_1 = """
CREATE TABLE leir_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO leir_meta VALUES ('schema', '1');
CREATE TABLE measurements(
 program_hash TEXT NOT NULL, baseline_hash TEXT NOT NULL, root_hash TEXT NOT NULL,
 backend TEXT NOT NULL, machine TEXT NOT NULL, protocol TEXT NOT NULL,
 verdict TEXT NOT NULL, ord TEXT NOT NULL, ratio REAL, ratio_lo REAL, ratio_hi REAL,
 median_s REAL, q1_s REAL, q3_s REAL, baseline_median_s REAL, rounds INTEGER,
 step TEXT, program TEXT, message TEXT, created REAL,
 PRIMARY KEY(program_hash, baseline_hash, root_hash, backend, machine, protocol));
INSERT INTO measurements VALUES ('00000000000000aa', '00000000000000bb', '00000000000000bb', 'interp',
 'm', 'p', 'EQUAL', 'faster', 1.5, 1.2, 1.8, 1e-3, 1e-3, 1e-3, 1.5e-3, 5, 'loop_reorder nest=0 loops=a,c',
 'L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];', 'old', 1.0);
"""


def test_search_database_rows(built, steps, tmp_path):
    """A schema-1 database migrates on open (its row keeps an unknown
    parent, and `leir db merge` still reads such a file); a real search then
    stores each measured proposal with its parent, and the database gives
    the same trajectory, DPO pairs and stepwise rows as the search's own
    records, in the source's split."""
    import sqlite3

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as c:
        c.executescript(SCHEMA_1)
    merged = tmp_path / "merged.db"
    subprocess.run([find_leir(), "db", "merge", str(old), "--into", str(merged), "--quiet"], check=True,
                   capture_output=True, timeout=60)
    path = tmp_path / "m.db"
    path.write_bytes(old.read_bytes())
    with leir.Database(path) as db:
        (row,) = db.rows()
        assert row["step"].startswith("loop_reorder") and row["parent_hash"] == "" and row["parent_program"] == ""
        db.check()
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT value FROM leir_meta WHERE key='schema'").fetchone() == ("2",)
    with leir.Database(merged) as db:
        assert [r["message"] for r in db.rows()] == ["old"] and db.rows()[0]["parent_hash"] == ""

    src = next(s for s in steps.states.values() if s.depth == 0 and s.split == "train")
    program = leir.parse(src.ir)
    result = leir.optimize(program, backend="interp", algorithm="greedy", samples=5, db=path, rounds=3,
                           compare_time=0.2, final_compare=False)
    measured = [x for x in result.records if x.get("measured")]
    assert len(measured) == result.summary["measured"] > 0
    with leir.Database(path) as db:
        rows = db.rows()[1:]
    assert len(rows) == len(measured)
    texts = {program.hash_hex(alpha=True): str(program)} | {r["program_hash"]: r["program"] for r in rows}
    for r in rows:
        assert leir.parse(r["parent_program"]).hash_hex(alpha=True) == r["parent_hash"] == r["baseline_hash"]
        assert texts[r["parent_hash"]] == r["parent_program"]

    (traj,) = rl.db_trajectories(path)  # the schema-1 row has no parent: left out
    assert leir.parse(traj[0]).hash_hex(alpha=True) == program.hash_hex(alpha=True)
    assert [(x["step"], x["accepted"], x["verdict"]) for x in traj[1]] == \
        [(x["step"], bool(x["accepted"]), x["verdict"]) for x in measured]
    assert all(x["strategy"] and x["cot"] for x in traj[1])

    base = {k: len(v) for k, v in rl.process_rows(steps).items()}
    got = rl.process_rows(steps, db=path, label="verified")
    search_rows = [r for r in got["train"] if r["origin"] == "search"]
    assert len(search_rows) == len(measured) and len(got["test"]) == base["test"]
    for row, x in zip(search_rows, measured):
        assert row["labels"][-1] == (x["verdict"] in ("EQUAL", "CLOSE")) and x["program"] in row["completions"][-1]
    pairs = [p for p in rl.preference_pairs(steps, db=path)["train"] if p["origin"] == "search"]
    by_parent = {}
    for x in measured:
        by_parent.setdefault(x["parent"], []).append(x)
    want = sum(min(sum(not x["accepted"] for x in xs), 4) for xs in by_parent.values()
               if any(x["accepted"] for x in xs) and any(not x["accepted"] for x in xs))
    assert len(pairs) == want
    assert pairs == [p for p in rl.preference_pairs(steps, [(src.ir, measured)])["train"] if p["origin"] == "search"]
