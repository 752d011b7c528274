"""Reward functions over libleir's own judgement of an answer.

:class:`Rewarder` scores completions against prompt records (the rows of
``eval.jsonl`` / ``validation.jsonl`` that ``leir dataset build`` writes, or
the chat rows of ``train.jsonl`` looked up in the dataset's archive). The
judgement is ``leir eval``'s (``leir_eval_run``): the library parses the
answer, gives the IR the prompt's known variables, compares programs by
structure, grounds the step in the strategy it names and verifies it under
the step's class. On top of that verdict the rewarder weighs six components
(docs/rl.md):

==================  =======================================================
format              1: parsed and laid out as the dataset's answers; 0.5:
                    parsed only; 0: not parsed
valid_ir            1: the IR parses and checks with the prompt's variables
grounded            1: one step of the strategy it names (from the prompt)
verified            1: EQUAL, ``close_value``: CLOSE, 0 otherwise; only for a
                    grounded step that changes the program
predicted_speedup   log2 of the cost model's speedup over ``clip``, in
                    [-1, 1]; only for a verified step
measured_speedup    the same from timing (``timing=True``); only verified
==================  =======================================================

So an answer earns verification or speed reward only when it is a real,
verified step of the strategy it names: the unchanged program, a program
that computes something else, and a correct step under another strategy's
name all get 0 there, each with the library's reason.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..run import bench as _bench  # leir.run the module: the package name is the function
from ..errors import LeirError
from ..program import Program
from . import _native
from .answers import (
    TRAINER_KEYS,
    completion_text,
    dataset_format,
    extract,
    known_of,
    program_of,
    prompt_text,
    record_key,
)

COMPONENTS: Tuple[str, ...] = (
    "format",
    "valid_ir",
    "grounded",
    "verified",
    "predicted_speedup",
    "measured_speedup",
)

#: Weights used when none are given: verification dominates, format and
#: validity shape early training, speed counts once a step is correct.
DEFAULT_WEIGHTS: Dict[str, float] = {
    "format": 0.1,
    "valid_ir": 0.1,
    "grounded": 0.2,
    "verified": 1.0,
    "predicted_speedup": 0.5,
    "measured_speedup": 0.0,
}

_INVALID_REASONS = ("ir.parse", "ir.invalid", "ir.too_costly")


@dataclass
class Score:
    """One completion's judgement. ``components`` holds each component's
    value (before weighting), ``reward`` their weighted sum."""

    reward: float
    components: Dict[str, float]
    parsed: bool = False
    verdict: str = ""
    reason: str = ""
    message: str = ""
    different: bool = False
    grounded: bool = False
    label: bool = False
    strategy: str = ""
    predicted_speedup: Optional[float] = None
    measured_speedup: Optional[float] = None
    cached: bool = False
    program: Optional[str] = field(default=None, repr=False)

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


class DatasetIndex:
    """The prompt records of a built dataset, by id and by user prompt:
    eval.jsonl, validation.jsonl and archive.jsonl (which holds the train
    records' programs and labels)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.by_id: Dict[str, Dict[str, Any]] = {}
        self.by_prompt: Dict[str, Dict[str, Any]] = {}
        for name in ("eval.jsonl", "validation.jsonl", "archive.jsonl"):
            path = os.path.join(directory, name)
            if not os.path.exists(path):
                if name == "eval.jsonl":
                    raise FileNotFoundError(f"{path}: not a dataset directory (leir dataset build --out)")
                continue
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        rec = prompt_record(json.loads(line))
                        self.by_id.setdefault(str(rec.get("id", "")), rec)
                        self.by_prompt.setdefault(prompt_text(rec.get("messages")), rec)

    def find(self, id: Optional[str], prompt: Optional[str]) -> Optional[Dict[str, Any]]:
        if id and id in self.by_id:
            return self.by_id[id]
        if prompt and prompt in self.by_prompt:
            return self.by_prompt[prompt]
        return None


def prompt_record(row: Mapping[str, Any]) -> Dict[str, Any]:
    """An eval.jsonl-shaped record from a dataset row: eval/validation rows
    as they are; archive rows (their ``samples``) with the first sample's
    program and every sample as a label; the user message only."""
    rec = dict(row)
    samples = row.get("samples")
    if "original_IR" not in row and isinstance(samples, list) and samples:
        s0 = samples[0]
        for k in ("name", "level", "original_IR", "known", "unit"):
            rec[k] = s0.get(k)
        rec["labels"] = [
            {k: s.get(k) for k in ("strategy", "transformed_IR", "verdict", "exactness")} for s in samples
        ]
        rec.pop("samples", None)
    msgs = row.get("messages")
    if isinstance(msgs, list):
        rec["messages"] = [m for m in msgs if isinstance(m, Mapping) and m.get("role") == "user"][:1]
    return rec


def program_record(program: Program, name: Optional[str] = None, *, labels: Sequence[Any] = ()) -> Dict[str, Any]:
    """A single-variant prompt record of ``program`` (which needs its
    signature): the Step-TP prompt the dataset builder would write, the
    program and its known variables."""
    name = name or program.name or "Model"
    rec: Dict[str, Any] = {
        "kind": "single",
        "n": 1,
        "messages": [{"role": "user", "content": _native.step_tp_prompt(program, name)}],
        "name": name,
        "original_IR": str(program),
        "known": known_of(program),
        "labels": list(labels),
    }
    rec["id"] = "rl-" + record_key(rec)
    return rec


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self.d: "OrderedDict[Any, Score]" = OrderedDict()
        self.lock = threading.Lock()

    def get(self, k: Any) -> Optional[Score]:
        with self.lock:
            v = self.d.get(k)
            if v is not None:
                self.d.move_to_end(k)
            return v

    def put(self, k: Any, v: Score) -> None:
        if self.size <= 0:
            return
        with self.lock:
            self.d[k] = v
            self.d.move_to_end(k)
            while len(self.d) > self.size:
                self.d.popitem(last=False)


@dataclass
class _Job:
    index: int
    text: str
    record: Dict[str, Any]
    rkey: str
    entries: Optional[List[Tuple[str, Tuple[str, ...]]]]
    program: Optional[Program] = None
    akey: Optional[Tuple[Any, ...]] = None


class Rewarder:
    """Scores completions with libleir (see the module comment).

    ``weights``: component -> weight (missing components weigh 0 when a
    dict is given; None: :data:`DEFAULT_WEIGHTS`). ``dataset``: a dataset
    directory to look records up in when the columns do not carry the
    program (train.jsonl rows: by prompt text; any row: by ``id``).
    ``timing``: time verified steps against the prompt's program (cpu
    backend, alternating runs: slow, machine-dependent). ``threads``:
    workers for a batch (default: 2, at most the CPUs). ``backend``,
    ``seed``, ``input_sets``: verification's (as ``leir eval``).
    ``max_answer_bytes``: a longer completion is rejected unread
    (``answer.too_large``); ``max_ir_growth``: an answer whose IR text is
    more than this many times the prompt's (plus 4 KiB) is rejected before
    anything is compiled or run (``ir.too_large``: a compile bomb of
    repeated nests would otherwise keep a cpu-backend judgement busy up to
    its compile timeout). Results are cached per prompt by completion
    text and by the alpha hash of the answer's program and the strategies
    it names (``cache_size`` entries each; 0: none).
    """

    def __init__(
        self,
        weights: Optional[Mapping[str, float]] = None,
        *,
        dataset: Optional[str] = None,
        close_value: float = 0.5,
        speedup_clip: float = 4.0,
        timing: bool = False,
        timing_backend: str = "cpu",
        timing_options: Optional[Mapping[str, Any]] = None,
        backend: Optional[str] = None,
        seed: int = 1,
        input_sets: int = 3,
        threads: Optional[int] = None,
        max_answer_bytes: int = 1 << 20,
        max_ir_growth: float = 8.0,
        cache_size: int = 65536,
    ) -> None:
        w = dict(DEFAULT_WEIGHTS) if weights is None else {c: 0.0 for c in COMPONENTS}
        for k, v in (weights or {}).items():
            if k not in COMPONENTS:
                raise ValueError(f"unknown reward component {k!r} (one of {', '.join(COMPONENTS)})")
            w[k] = float(v)
        if weights is None and timing:
            w["measured_speedup"] = 0.5
        self.weights = w
        self.dataset = DatasetIndex(dataset) if isinstance(dataset, str) else dataset
        self.close_value = float(close_value)
        if speedup_clip <= 1:
            raise ValueError("speedup_clip must be above 1")
        self.speedup_clip = float(speedup_clip)
        self.timing = bool(timing)
        self.timing_backend = timing_backend
        self.timing_options = dict(timing_options or {"warmup": 1, "min_runs": 5, "max_runs": 50, "min_seconds": 0.01, "max_seconds": 2.0})
        self.backend = backend
        self.seed = int(seed)
        self.input_sets = int(input_sets)
        self.threads = max(1, int(threads if threads is not None else min(2, os.cpu_count() or 1)))
        self.max_answer_bytes = int(max_answer_bytes)
        self.max_ir_growth = float(max_ir_growth)
        self._by_text = _LRU(cache_size)
        self._by_alpha = _LRU(cache_size)
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_lock = threading.Lock()
        self._seconds: Dict[str, float] = {}
        self.last_scores: List[Score] = []
        #: How each of the last batch's scores was reached: "text" and
        #: "alpha" cache hits, "judged" by the library, "rejected" unread.
        self.last_sources: Dict[str, int] = {}

    # -- TRL / ms-swift calling conventions -------------------------------------
    __name__ = "leir_reward"

    def __call__(self, completions: Sequence[Any], **columns: Any) -> List[float]:
        """TRL's convention: ``reward(prompts=..., completions=...,
        **dataset_columns) -> list[float]`` (``log_extra`` / ``log_metric``,
        when the trainer passes them, receive every component per sample
        and their means)."""
        scores = self.score(completions, **columns)
        _log(scores, columns)
        return [s.reward for s in scores]

    def component(self, name: str) -> Callable[..., List[float]]:
        """A reward function for one component (unweighted), for trainers
        that log each reward function apart (TRL's ``rewards/<name>``): pass
        several with ``reward_weights``. They share this rewarder's cache, so
        the batch is judged once."""
        if name not in COMPONENTS:
            raise ValueError(f"unknown reward component {name!r}")

        def f(completions: Sequence[Any], **columns: Any) -> List[float]:
            return [s.components[name] for s in self.score(completions, **columns)]

        f.__name__ = f"leir_{name}"
        return f

    # -- scoring -------------------------------------------------------------------
    def records(self, n: int, columns: Mapping[str, Any]) -> List[Dict[str, Any]]:
        """The prompt record of each of ``n`` samples from the columns: the
        row's own fields when it carries ``original_IR`` and ``known``, else
        the dataset's record with its ``id`` or prompt text."""
        cols = {k: v for k, v in columns.items() if k not in TRAINER_KEYS}
        prompts = columns.get("prompts")
        out = []
        for i in range(n):
            row = {k: _at(v, i, n) for k, v in cols.items()}
            ptext = prompt_text(row.get("prompt", row.get("messages", _at(prompts, i, n) if prompts is not None else None)))
            if row.get("original_IR") and row.get("known") is not None:
                rec = prompt_record(row)
                if not rec.get("messages") and ptext:
                    rec["messages"] = [{"role": "user", "content": ptext}]
            else:
                found = self.dataset.find(row.get("id"), ptext) if self.dataset else None
                if found is None:
                    raise KeyError(
                        "a sample carries no original_IR/known and "
                        + ("its id and prompt are not in the dataset" if self.dataset else "no dataset was given to look it up")
                    )
                rec = found
            out.append(rec)
        return out

    def score(self, completions: Sequence[Any], **columns: Any) -> List[Score]:
        """Every completion's :class:`Score` (columns as for ``__call__``;
        or ``records=[...]``: prompt records, one per completion)."""
        recs = columns.pop("records", None)
        if recs is None:
            recs = self.records(len(completions), columns)
        if len(recs) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(recs)} records")
        texts = [completion_text(c) for c in completions]
        results: List[Optional[Score]] = [None] * len(texts)
        jobs: List[_Job] = []
        sources = {"text": 0, "alpha": 0, "judged": 0, "rejected": 0}
        pending: Dict[Tuple[str, str], List[int]] = {}
        for i, (t, r) in enumerate(zip(texts, recs)):
            rk = record_key(r)
            if len(t.encode("utf-8", "surrogatepass")) > self.max_answer_bytes:
                results[i] = self._zero("answer.too_large", f"the answer is over {self.max_answer_bytes} bytes")
                sources["rejected"] += 1
                continue
            tkey = (rk, hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest())
            hit = self._by_text.get(tkey)
            if hit is not None:
                results[i] = _cached(hit)
                sources["text"] += 1
                continue
            if tkey in pending:  # the same text twice in one batch: judged once
                pending[tkey].append(i)
                continue
            pending[tkey] = [i]
            jobs.append(_Job(i, t, r, rk, extract(t, self.max_answer_bytes)))
        # cache by alpha hash: the same program and strategy, other words
        todo: List[_Job] = []
        kept: List[_Job] = []
        for j in jobs:
            limit = self.max_ir_growth * len(str(j.record.get("original_IR", ""))) + 4096
            if j.entries is not None and any(len(ir) > limit for ir, _ in j.entries):
                why = f"the transformed IR is over {int(limit)} characters ({self.max_ir_growth:g} times the prompt's and 4 KiB)"
                results[j.index] = self._zero("ir.too_large", why)
                sources["rejected"] += 1
                continue
            kept.append(j)
        for j in kept:
            if j.entries is not None and len(j.entries) == 1 and j.record.get("kind", "single") != "multi":
                j.program = program_of(j.entries[0][0], j.record.get("known") or [])
                if j.program is not None:
                    j.akey = (j.rkey, j.program.hash(alpha=True), j.entries[0][1])
                    hit = self._by_alpha.get(j.akey)
                    if hit is not None:
                        s = _cached(hit)
                        s.components["format"] = 1.0 if dataset_format(j.text) else 0.5
                        s.reward = self._total(s.components)
                        results[j.index] = s
                        sources["alpha"] += 1
                        continue
            todo.append(j)
        for j, s in zip(todo, self._judge(todo)):
            results[j.index] = s
            sources["judged"] += 1
            self._by_text.put((j.rkey, hashlib.sha256(j.text.encode("utf-8", "surrogatepass")).hexdigest()), s)
            if j.akey is not None and s.parsed:
                self._by_alpha.put(j.akey, s)
        for j in jobs:
            s0 = results[j.index]
            for i in pending[(j.rkey, hashlib.sha256(j.text.encode("utf-8", "surrogatepass")).hexdigest())][1:]:
                results[i] = _cached(s0)  # type: ignore[arg-type]
                sources["text"] += 1
        self.last_scores = [s for s in results if s is not None]
        self.last_sources = sources
        return self.last_scores

    # -- internals -----------------------------------------------------------------
    def _zero(self, reason: str, message: str) -> Score:
        comps = {c: 0.0 for c in COMPONENTS}
        return Score(reward=0.0, components=comps, reason=reason, message=message)

    def _total(self, comps: Mapping[str, float]) -> float:
        return float(sum(self.weights.get(c, 0.0) * comps[c] for c in COMPONENTS))

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="leir-rl")
            return self._pool

    def _judge(self, jobs: List[_Job]) -> List[Score]:
        if not jobs:
            return []
        # contiguous chunks, one per worker: each writes only its records
        k = min(self.threads, len(jobs))
        size = (len(jobs) + k - 1) // k
        chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        if len(chunks) == 1:
            return self._judge_chunk(chunks[0])
        out: List[Score] = []
        for part in self._executor().map(self._judge_chunk, chunks):
            out.extend(part)
        return out

    def _judge_chunk(self, jobs: List[_Job]) -> List[Score]:
        recs: Dict[str, Dict[str, Any]] = {}
        answers = []
        for j in jobs:
            rec = dict(j.record)
            rec["id"] = j.rkey
            recs[j.rkey] = rec
            answers.append({"id": j.rkey, "answer": j.text})
        report = _native.eval_answers(
            list(recs.values()), answers, backend=self.backend, seed=self.seed, input_sets=self.input_sets
        )
        return [self._score(j, a) for j, a in zip(jobs, report)]

    def _score(self, j: _Job, a: Mapping[str, Any]) -> Score:
        comps = {c: 0.0 for c in COMPONENTS}
        s = Score(reward=0.0, components=comps, parsed=bool(a.get("parsed")))
        items = a.get("items") or []
        if not s.parsed or not items:
            s.reason = str(a.get("reason") or "answer.unparsed")
            s.message = str(a.get("message") or "")
            s.reward = self._total(comps)
            return s
        comps["format"] = 1.0 if dataset_format(j.text) else 0.5
        n = len(items)
        valid = [it.get("reason") not in _INVALID_REASONS and it.get("verdict") != "INVALID" for it in items]
        grounded = [bool(it.get("grounded")) and bool(it.get("different")) for it in items]
        values = []
        for it, g in zip(items, grounded):
            ok = g and bool(it.get("pass_close"))
            values.append(0.0 if not ok else 1.0 if it.get("verdict") == "EQUAL" else self.close_value)
        first = items[0]
        s.verdict = str(first.get("verdict") or "")
        s.different = bool(first.get("different"))
        s.grounded = grounded[0]
        s.label = bool(first.get("label"))
        s.strategy = str(first.get("strategy") or "")
        reasons = [it.get("reason") for it in items if it.get("reason")]
        if a.get("kind") == "multi":
            want = max(1, int(a.get("requested") or 1))
            comps["valid_ir"] = sum(valid) / n
            comps["grounded"] = sum(grounded) / n
            comps["verified"] = min(1.0, sum(values) / want)
            if comps["verified"] == 0 and not reasons:
                reasons = ["verify.none"]
        else:
            comps["valid_ir"] = 1.0 if valid[0] else 0.0
            comps["grounded"] = 1.0 if grounded[0] else 0.0
            comps["verified"] = values[0]
        if reasons:
            s.reason = str(reasons[0])
            msgs = [it.get("message") for it in items if it.get("reason")]
            s.message = str(msgs[0] or "")
        if comps["verified"] > 0 and a.get("kind") != "multi" and j.program is not None:
            s.program = str(j.program)
            self._speedups(j, s)
        s.reward = self._total(comps)
        return s

    def _log2(self, speedup: float) -> float:
        if not (speedup > 0) or math.isinf(speedup):
            return 0.0
        v = math.log2(speedup) / math.log2(self.speedup_clip)
        return max(-1.0, min(1.0, v))

    def _source_program(self, rec: Mapping[str, Any]) -> Optional[Program]:
        return program_of(str(rec.get("original_IR", "")), rec.get("known") or [])

    def _speedups(self, j: _Job, s: Score) -> None:
        src = self._source_program(j.record)
        if src is None or j.program is None:
            return
        try:
            t0 = self._seconds.get(j.rkey)
            if t0 is None:
                t0 = self._seconds[j.rkey] = _native.predicted_seconds(src)
            t1 = _native.predicted_seconds(j.program)
            if t1 > 0:
                s.predicted_speedup = t0 / t1
                s.components["predicted_speedup"] = self._log2(s.predicted_speedup)
        except LeirError:
            pass
        if self.timing:
            try:
                t = _bench([src, j.program], backend=self.timing_backend, **self.timing_options)
                s.measured_speedup = float(t[1].speedup)
                s.components["measured_speedup"] = self._log2(s.measured_speedup)
            except LeirError as e:
                s.message = s.message or f"timing failed: {e}"

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None


def _at(v: Any, i: int, n: int) -> Any:
    if isinstance(v, (list, tuple)) and len(v) == n:
        return v[i]
    return v


def _cached(s: Score) -> Score:
    c = Score(**{**s.as_dict(), "components": dict(s.components)})
    c.cached = True
    return c


def _log(scores: Sequence[Score], columns: Mapping[str, Any]) -> None:
    log_extra = columns.get("log_extra")
    log_metric = columns.get("log_metric")
    if callable(log_extra):
        for c in COMPONENTS:
            log_extra(f"leir/{c}", [s.components[c] for s in scores])
        log_extra("leir/verdict", [s.verdict for s in scores])
        log_extra("leir/reason", [s.reason for s in scores])
    if callable(log_metric) and scores:
        for c in COMPONENTS:
            log_metric(f"leir/{c}", sum(s.components[c] for s in scores) / len(scores))


def reward_function(weights: Optional[Mapping[str, float]] = None, **options: Any) -> Rewarder:
    """A TRL reward function: ``GRPOTrainer(reward_funcs=leir.rl.reward_function(...))``
    (the :class:`Rewarder` options)."""
    return Rewarder(weights, **options)


class SwiftReward:
    """ms-swift's reward-plugin (ORM) form: ``__call__(self, completions,
    **kwargs) -> List[float]`` with the dataset's columns as keyword
    arguments. ms-swift constructs the class itself (it may pass a
    tokenizer or its arguments, which are ignored); the options come from
    the class attributes (see :func:`swift_plugin`) or the environment:
    ``LEIR_RL_DATASET`` (a dataset directory) and ``LEIR_RL_WEIGHTS`` (a
    JSON object of component weights)."""

    options: Dict[str, Any] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        opts = dict(self.options)
        if "dataset" not in opts and os.environ.get("LEIR_RL_DATASET"):
            opts["dataset"] = os.environ["LEIR_RL_DATASET"]
        if "weights" not in opts and os.environ.get("LEIR_RL_WEIGHTS"):
            opts["weights"] = json.loads(os.environ["LEIR_RL_WEIGHTS"])
        weights = opts.pop("weights", None)
        self.rewarder = Rewarder(weights, **opts)

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> List[float]:
        return [s.reward for s in self.rewarder.score(completions, **kwargs)]


def swift_plugin(name: str = "leir", **options: Any) -> type:
    """A :class:`SwiftReward` subclass with these :class:`Rewarder` options,
    registered in ms-swift's ``swift.plugin.orms`` under ``name`` when
    ms-swift is importable (use ``--reward_funcs NAME`` in a
    ``--external_plugins`` file that calls this)."""
    cls = type(f"LeirSwiftReward_{name}", (SwiftReward,), {"options": dict(options)})
    try:
        from swift.plugin import orms  # type: ignore[import-not-found]
    except ImportError:
        return cls
    orms[name] = cls
    return cls


def components_table(scores: Iterable[Score]) -> List[Dict[str, Any]]:
    """Rows for logging: each score's components, reward, verdict and reason."""
    return [{**s.components, "reward": s.reward, "verdict": s.verdict, "reason": s.reason} for s in scores]
