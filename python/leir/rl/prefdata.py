"""Preference pairs and process-reward rows from a dataset and from searches.

Two sources of steps that were judged, good and bad, from the same state:

- a dataset built by ``leir dataset build``: ``archive.jsonl`` holds every
  kept (verified) sample with its state, ``rejections.jsonl`` every candidate
  that was not kept, with its state and step. A rejected step is rebuilt by
  applying its step text to the state's program, so that it can be written
  as an answer (its chain of thought from the library, as the kept ones'),
  and the two differ in what they do, not in how they are worded;
- a search's trajectory (``leir optimize --trajectory``, or
  :func:`leir.optimize`'s records): proposals at one node that were accepted
  (verified and faster) and rejected (not verified, not one step, not
  faster), and the path of accepted steps from the source to each;
- a search's measurement database (``leir optimize --db``, schema 2): each
  measured proposal with the state it was taken from (``parent_hash``,
  ``parent_program``) and its step; :func:`db_trajectories` turns its rows
  into trajectories, one per source program (rows of a schema-1 database
  have no parent and are left out). Only measured proposals are there: a
  proposal rejected before measurement (not one step, seen before) is not.

Outputs, in TRL's formats, split as the dataset's SFT set is (a state keeps
its record's split; a search's rows take the split of the dataset state that
its source is, by alpha hash, and are left out when the source is none):

- :func:`preference_pairs`: DPO rows ``{"prompt": [user message], "chosen":
  [assistant message], "rejected": [assistant message]}`` (TRL's
  conversational preference format), plus ``split``, ``state``, ``origin``
  ("dataset" / "search") and why the rejected step was rejected;
- :func:`process_rows`: stepwise supervision rows ``{"prompt": str,
  "completions": [step answer, ...], "labels": [bool, ...]}`` (TRL's
  stepwise format): the steps from the source to a judged step, each
  labelled good or bad.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import LeirError
from ..program import Program
from ..run import verify
from ..strategy import Step, apply, cot
from .answers import program_of
from .rewards import program_record

SPLITS: Tuple[str, ...] = ("train", "validation", "test")
#: Rejection stages whose step is a wrong answer (a program that was not
#: kept: not verified, or unchanged). "duplicate" and "cot" steps are right,
#: "apply" and "candidates" ones have no program.
WRONG_STAGES: Tuple[str, ...] = ("verify", "noop")

Trajectory = Tuple[Union[Program, str], Sequence[Mapping[str, Any]]]


def answer_text(program: Union[Program, str], strategy: str, think: str) -> str:
    """A single-variant answer as the dataset writes its assistant text."""
    return f"<think>{think}</think><answer>" + json.dumps(
        {"transformed_IR": str(program), "applied_strategy": strategy}) + "</answer>"


def _rows(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class _State:
    __slots__ = ("id", "split", "unit", "name", "depth", "walk", "ir", "known", "prompt", "good", "bad")

    def __init__(self, sample: Mapping[str, Any], split: str) -> None:
        st = sample["state"]
        self.id: str = st["id"]
        self.split = split
        self.unit: str = sample["unit"]
        self.name: str = sample.get("name") or "Model"
        self.depth: int = int(st.get("depth", 0))
        self.walk: List[str] = list(st.get("walk") or [])
        self.ir: str = sample["original_IR"]
        self.known = sample["known"]
        self.prompt: Optional[str] = None
        self.good: Dict[str, Dict[str, Any]] = {}  # transformed alpha hash -> step
        self.bad: List[Dict[str, Any]] = []


class DatasetSteps:
    """The judged steps of a dataset directory, by state (see the module
    comment; ``backend``: the one that verifies the walks' steps).
    ``states``: state id -> its split, program, prompt, kept
    steps (``good``) and rebuilt rejected steps (``bad``); ``skipped``:
    rejections that could not be rebuilt, by reason."""

    def __init__(self, directory: Union[str, Path], *, backend: str = "interp") -> None:
        d = Path(directory)
        self.backend = backend
        self._walks: Dict[Tuple[str, Tuple[str, ...]], Optional[List[Tuple[str, bool]]]] = {}
        self.states: Dict[str, _State] = {}
        self.skipped: Dict[str, int] = defaultdict(int)
        for rec in _rows(d / "archive.jsonl"):
            split = rec.get("split", "train")
            for s in rec.get("samples") or []:
                st = self.states.get(s["state"]["id"])
                if st is None:
                    st = self.states[s["state"]["id"]] = _State(s, split)
                if rec.get("kind") == "single" and st.prompt is None and rec.get("messages"):
                    st.prompt = rec["messages"][0]["content"]
                st.good.setdefault(s.get("transformed_alpha_hash") or s["transformed_IR"], {
                    "strategy": s["strategy"], "step": s["step"], "ir": s["transformed_IR"],
                    "answer": answer_text(s["transformed_IR"], s["strategy"], s.get("CoT") or ""),
                    "verdict": s.get("verdict", ""),
                })
        for st in self.states.values():
            if st.prompt is None:
                st.prompt = program_record(self.program(st), st.name)["messages"][0]["content"]
        for rej in _rows(d / "rejections.jsonl"):
            if rej.get("stage") not in WRONG_STAGES:
                continue
            st = self.states.get(rej.get("state", ""))
            if st is None:  # a state none of whose steps was kept: no program to rebuild from
                self.skipped["state_not_in_archive"] += 1
                continue
            bad = self._rebuild(st, rej["step"], rej["strategy"])
            if bad is None:
                self.skipped["not_rebuilt"] += 1
                continue
            bad.update(stage=rej["stage"], verdict=rej.get("verdict", ""), message=rej.get("message", ""))
            st.bad.append(bad)
        # the source of each unit, where the walks start
        self.sources: Dict[str, _State] = {st.unit: st for st in self.states.values() if st.depth == 0}

    def program(self, st: _State) -> Program:
        p = program_of(st.ir, st.known)
        if p is None:
            raise ValueError(f"state {st.id}: its original_IR does not check with its known variables")
        p.name = st.name
        return p

    def _rebuild(self, st: _State, step: str, strategy: str) -> Optional[Dict[str, Any]]:
        try:
            p = self.program(st)
            q = apply(p, step)
            think = cot(p, step)
        except (LeirError, ValueError):
            return None
        return {"strategy": strategy, "step": step, "ir": str(q), "answer": answer_text(q, strategy, think)}

    def walk_answers(self, st: _State) -> Optional[List[Tuple[str, bool]]]:
        """The answers of the walk from the unit's source to ``st``, each
        with whether the library verifies it (EQUAL, or CLOSE within the
        reassociation bound: walks draw candidates unverified), or None when
        the walk cannot be replayed."""
        if not st.walk:
            return []
        src = self.sources.get(st.unit)
        if src is None:
            return None
        key = (st.unit, tuple(st.walk))
        if key in self._walks:
            return self._walks[key]
        try:
            p = self.program(src)
            out = []
            for step in st.walk:
                q = apply(p, step)
                ok = bool(verify(p, q, backend=self.backend).passed)
                out.append((answer_text(q, step.split(" ", 1)[0], cot(p, step)), ok))
                p = q
        except (LeirError, ValueError):
            out = None
        self._walks[key] = out
        return out

    def split_of_program(self, program: Program) -> Optional[str]:
        """The split of the dataset state that ``program`` is (alpha hash)."""
        st = self.states.get(program.hash_hex(alpha=True))
        return st.split if st is not None else None


def _db_rows(db: Any) -> List[Dict[str, Any]]:
    from ..search import Database

    if isinstance(db, Database):
        return db.rows()
    with Database(db) as d:
        return d.rows()


def _strategy_of(step: str) -> str:
    try:
        return Step(step).strategy
    except (LeirError, ValueError):
        return ""


def db_trajectories(db: Any) -> List[Trajectory]:
    """A measurement database's rows (``db``: a path or a
    :class:`leir.Database`) as trajectories ``(source, records)``, one per
    source program (``root_hash``), in the records' shape (``node``,
    ``parent``, ``program``, ``strategy``, ``cot``, ``verdict``,
    ``accepted``: verified and FASTER than its parent, as the search
    accepts). A program measured several times from one parent (another
    backend, machine or protocol) counts once, its first row. Rows without
    a parent link, and sources that are no row's parent, are left out."""
    by_root: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for row in _db_rows(db):
        if row.get("parent_hash") and row.get("parent_program") and row.get("program") and row.get("step"):
            by_root[row["root_hash"]].append(row)
    out: List[Trajectory] = []
    for root in sorted(by_root):
        rows = by_root[root]
        source = next((r["parent_program"] for r in rows if r["parent_hash"] == root), None)
        if source is None:
            continue
        nodes = {root: 0}  # alpha hash of an accepted program -> node id
        seen = set()
        recs: List[Dict[str, Any]] = []
        for r in rows:
            if (r["parent_hash"], r["program_hash"]) in seen:
                continue
            seen.add((r["parent_hash"], r["program_hash"]))
            accepted = r["verdict"] in ("EQUAL", "CLOSE") and r["order"].lower() == "faster"
            recs.append({"row": r, "accepted": accepted})
            if accepted:
                nodes.setdefault(r["program_hash"], len(nodes))
        records: List[Dict[str, Any]] = []
        for i, x in enumerate(recs):
            r = x["row"]
            parent = nodes.get(r["parent_hash"])
            if parent is None:  # its parent was measured but not accepted here
                continue
            node = nodes[r["program_hash"]] if x["accepted"] and nodes[r["program_hash"]] > 0 else -1
            try:
                think = cot(Program.parse(r["parent_program"]), r["step"])
            except (LeirError, ValueError):
                think = ""
            records.append({
                "sample": i + 1, "node": node, "parent": parent, "step": r["step"],
                "strategy": _strategy_of(r["step"]), "cot": think, "program": r["program"],
                "verdict": r["verdict"], "accepted": x["accepted"], "hash": r["program_hash"],
                "reject": "" if x["accepted"] else ("verdict" if r["verdict"] not in ("EQUAL", "CLOSE") else "not_faster"),
            })
        # a node is one record: the first accepted row that made it
        made = set()
        for rec in records:
            if rec["node"] > 0:
                if rec["node"] in made:
                    rec["node"] = -1
                made.add(rec["node"])
        out.append((source, records))
    return out


def _empty() -> Dict[str, List[Dict[str, Any]]]:
    return {s: [] for s in SPLITS}


def _dataset(dataset: Union[str, Path, DatasetSteps]) -> DatasetSteps:
    return dataset if isinstance(dataset, DatasetSteps) else DatasetSteps(dataset)


def _chat(prompt: str, answer: str) -> Tuple[List[Dict[str, str]], List[Dict[str, str]]]:
    return [{"role": "user", "content": prompt}], [{"role": "assistant", "content": answer}]


def preference_pairs(
    dataset: Union[str, Path, DatasetSteps],
    trajectories: Iterable[Trajectory] = (),
    *,
    per_state: int = 4,
    seed: int = 0,
    db: Any = None,
) -> Dict[str, List[Dict[str, Any]]]:
    """DPO pairs by split: for each state, each rejected step (at most
    ``per_state``) against a kept step of the same state (one of the same
    strategy when there is one: the pair then differs in what the step
    does, not in which strategy it names), drawn with ``seed``. From each
    trajectory ``(source, records)``, and from each source of a measurement
    database ``db`` (:func:`db_trajectories`): each rejected proposal
    against an accepted one at the same node."""
    ds = _dataset(dataset)
    trajectories = list(trajectories) + (db_trajectories(db) if db is not None else [])
    rng = random.Random(seed)
    out = _empty()
    for sid in sorted(ds.states):
        st = ds.states[sid]
        if not st.good or not st.bad:
            continue
        good = [st.good[k] for k in sorted(st.good)]
        for bad in st.bad[:per_state]:
            same = [g for g in good if g["strategy"] == bad["strategy"]]
            g = rng.choice(same or good)
            prompt, chosen = _chat(st.prompt or "", g["answer"])
            out[st.split].append({
                "prompt": prompt, "chosen": chosen, "rejected": _chat("", bad["answer"])[1],
                "split": st.split, "state": st.id, "origin": "dataset",
                "chosen_strategy": g["strategy"], "rejected_strategy": bad["strategy"],
                "reason": f"{bad['stage']}: {bad['verdict']}".rstrip(": "),
            })
    for source, records in trajectories:
        for row in _search_pairs(ds, source, records, rng, per_state):
            out[row["split"]].append(row)
    return out


def _source(source: Union[Program, str]) -> Program:
    p = source.copy() if isinstance(source, Program) else Program.parse(source)
    if not p.signature:
        p.infer_signature()
    return p


class _Search:
    """A trajectory's nodes: node -> (program text, parent, step answer)."""

    def __init__(self, source: Program, records: Sequence[Mapping[str, Any]]) -> None:
        self.source = source
        self.records = [r for r in records if "sample" in r]
        self.nodes: Dict[int, Mapping[str, Any]] = {int(r["node"]): r for r in self.records if int(r.get("node", -1)) > 0}

    def program_of_node(self, node: int) -> Optional[str]:
        if node == 0:
            return str(self.source)
        r = self.nodes.get(node)
        return r["program"] if r is not None else None

    def path(self, node: int) -> Optional[List[Mapping[str, Any]]]:
        """The accepted records from the source to ``node``."""
        out: List[Mapping[str, Any]] = []
        seen = set()
        while node > 0:
            r = self.nodes.get(node)
            if r is None or node in seen:
                return None
            seen.add(node)
            out.append(r)
            node = int(r["parent"])
        return out[::-1]

    def prompt(self, node: int, name: str) -> Optional[str]:
        ir = self.program_of_node(node)
        if ir is None:
            return None
        p = program_of(ir, [{"name": d.name, "dtype": d.dtype, "role": d.role, "shape": list(d.shape)}
                            for d in self.source.effective_signature()])
        if p is None:
            return None
        return program_record(p, name)["messages"][0]["content"]


def _alpha(ir: str) -> str:
    try:
        return Program.parse(ir).hash_hex(alpha=True)
    except LeirError:
        return ""


def _record_answer(r: Mapping[str, Any]) -> Optional[str]:
    """A trajectory record as an answer; None when it has no program."""
    if not r.get("program"):
        return None
    return answer_text(r["program"], r.get("strategy") or "", r.get("cot") or "")


def _search_pairs(ds: DatasetSteps, source: Union[Program, str], records: Sequence[Mapping[str, Any]],
                  rng: random.Random, per_state: int) -> List[Dict[str, Any]]:
    src = _source(source)
    split = ds.split_of_program(src)
    if split is None:
        return []
    name = ds.states[src.hash_hex(alpha=True)].name
    srch = _Search(src, records)
    by_parent: Dict[int, List[Mapping[str, Any]]] = defaultdict(list)
    for r in srch.records:
        by_parent[int(r["parent"])].append(r)
    out = []
    for parent in sorted(by_parent):
        rs = by_parent[parent]
        good = [r for r in rs if r.get("accepted") and _record_answer(r)]
        bad = [r for r in rs if not r.get("accepted") and _record_answer(r)]
        prompt = srch.prompt(parent, name) if good and bad else None
        if prompt is None:
            continue
        for b in bad[:per_state]:
            g = rng.choice(good)
            p, chosen = _chat(prompt, _record_answer(g) or "")
            out.append({
                "prompt": p, "chosen": chosen, "rejected": _chat("", _record_answer(b) or "")[1],
                "split": split, "state": _alpha(srch.program_of_node(parent) or ""),
                "origin": "search", "chosen_strategy": g.get("strategy", ""),
                "rejected_strategy": b.get("strategy", ""), "reason": f"{b.get('reject', '')}: {b.get('verdict', '')}",
            })
    return out


def process_rows(
    dataset: Union[str, Path, DatasetSteps],
    trajectories: Iterable[Trajectory] = (),
    *,
    label: str = "accepted",
    db: Any = None,
) -> Dict[str, List[Dict[str, Any]]]:
    """Stepwise rows by split. From the dataset: for each kept and each
    rejected step of a state, the prompt of the unit's source, the walk's
    steps to the state (each labelled by verification: a walk draws its
    steps unverified) and the step (True when the dataset kept it). From each trajectory: for each proposal with a
    program, the accepted path to its node and the proposal, labelled by
    ``label``: "accepted" (the search's judgement: verified and faster) or
    "verified" (EQUAL or CLOSE, faster or not). ``db``: a measurement
    database's sources too, as :func:`preference_pairs`."""
    if label not in ("accepted", "verified"):
        raise ValueError("label must be 'accepted' or 'verified'")
    ds = _dataset(dataset)
    trajectories = list(trajectories) + (db_trajectories(db) if db is not None else [])
    out = _empty()
    for sid in sorted(ds.states):
        st = ds.states[sid]
        src = ds.sources.get(st.unit)
        walk = ds.walk_answers(st)
        if src is None or walk is None:
            continue
        steps = [(st.good[k]["answer"], True) for k in sorted(st.good)] + [(b["answer"], False) for b in st.bad]
        for text, ok in steps:
            out[st.split].append({
                "prompt": src.prompt or "", "completions": [w for w, _ in walk] + [text],
                "labels": [v for _, v in walk] + [ok],
                "split": st.split, "state": st.id, "origin": "dataset",
            })
    for source, records in trajectories:
        src = _source(source)
        split = ds.split_of_program(src)
        if split is None:
            continue
        srch = _Search(src, records)
        prompt = srch.prompt(0, ds.states[src.hash_hex(alpha=True)].name)
        if prompt is None:
            continue
        for r in srch.records:
            text = _record_answer(r)
            path = srch.path(int(r["parent"]))
            if text is None or path is None:
                continue
            good = bool(r.get("accepted")) if label == "accepted" else r.get("verdict") in ("EQUAL", "CLOSE")
            out[split].append({
                "prompt": prompt, "completions": [_record_answer(x) or "" for x in path] + [text],
                "labels": [True] * len(path) + [good], "split": split, "state": r.get("hash", ""),
                "origin": "search",
            })
    return out


def write_splits(rows: Mapping[str, Sequence[Mapping[str, Any]]], directory: Union[str, Path], stem: str) -> List[str]:
    """Writes ``STEM.SPLIT.jsonl`` for each split with rows; returns the paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for split in SPLITS:
        if rows.get(split):
            p = d / f"{stem}.{split}.jsonl"
            p.write_text("".join(json.dumps(r) + "\n" for r in rows[split]))
            paths.append(str(p))
    return paths
