"""Multi-step search (experimental): :func:`optimize` composes single steps
into a trajectory from a source program to a faster one, over the C API of
include/leir/experimental/search.h (docs/search.md).

A proposal becomes a node only when it is new (alpha-hash transposition
table), one step, verified against the source program (EQUAL or CLOSE) and
faster than its parent in a paired timing comparison. The steps are
proposed by a built-in policy (``"cost"``, ``"exhaustive"``, ``"random"``)
or by a Python function (``propose=``), for example one that asks a
language model."""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from . import _lib
from . import _search_lib as _s
from .errors import ArgumentError, call, error_for, out_ptr
from .program import Program, _bytes
from .run import Backend, BackendLike, _backend
from .strategy import Candidate, Step, _cand_options, _domain_flags

__all__ = ["optimize", "Database", "SearchResult", "Record", "Query", "ALGORITHMS", "POLICIES"]

#: The search algorithms (``algorithm=``).
ALGORITHMS = ("greedy", "beam", "bfs", "dfs", "mcts", "chain")
#: The built-in policies (``policy=``).
POLICIES = ("cost", "exhaustive", "random")
_REWARDS = {"log": 0, "reference": 1}
_STOPPED = {0: "exhausted", 1: "samples", 2: "time", 3: "cancelled"}
_CANCELLED = -15


def _require() -> None:
    if not _s.AVAILABLE:
        raise NotImplementedError("this libleir has no search (leir_search_run)")


def _enum(fn: Callable[..., int], name: str, what: str, choices: Iterable[str]) -> int:
    v = ctypes.c_int()
    if fn(_bytes(name), ctypes.byref(v)) != 0:
        raise ArgumentError(f"unknown {what} {name!r} (one of {', '.join(choices)})", status=-3)
    return v.value


class Database:
    """A measurement database (SQLite, WAL): every measurement of a search
    keyed by program, baseline, source program, backend, machine and timing
    protocol, so a later search (another process too) reuses it. Pass it, or
    a path, as ``optimize(..., db=)``. Use as a context manager or call
    :meth:`close`."""

    __slots__ = ("_h", "path")

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        _require()
        self._h = ctypes.c_void_p()
        self.path = os.fspath(path)
        call(_s.leir_db_open, ctypes.byref(self._h), _bytes(self.path))

    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise ValueError("the database was closed")
        return self._h

    def __len__(self) -> int:
        n = ctypes.c_uint64()
        call(_s.leir_db_count, self._handle, ctypes.byref(n))
        return int(n.value)

    def check(self) -> None:
        """SQLite's integrity check; raises :class:`leir.LeirIOError` with the
        first problem."""
        call(_s.leir_db_check, self._handle)

    def rows(self) -> List[Dict[str, Any]]:
        """Every row as a dict (``leir db export``), oldest first."""
        lines: List[str] = []

        def line(_payload: int, ptr: int, n: int) -> int:
            lines.append(ctypes.string_at(ptr, n).decode("utf-8", errors="replace"))
            return 0

        cb = _s.LINE_FN(line)
        call(_s.leir_db_export, self._handle, cb, None)
        return [json.loads(x) for x in lines]

    def close(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _s.leir_db_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<leir.Database {self.path!r}{'' if self._h else ' (closed)'}>"


class Record(dict):  # type: ignore[type-arg]
    """One evaluated proposal, a line of the trajectory: the library's JSON
    record (``leir_search_record_json``: sample, node, parent, depth, step,
    strategy, cot, verdict, reject, reason, accepted, cached, timing,
    speedup, best_speedup, elapsed_s, hash, program, proposed, raw:
    ``proposed`` is the proposal as the policy gave it, ``raw`` the model's
    whole answer for the LLM policy) with ``program``, the proposed
    program's canonical text ("" when there was none). Keys are also
    attributes."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"a search record has no field {key!r}") from None

    @staticmethod
    def _from_c(rec: "ctypes._Pointer[_s.Record]") -> "Record":
        out, n = out_ptr(), ctypes.c_size_t()
        call(_s.leir_search_record_json, rec, ctypes.byref(out), ctypes.byref(n))
        r = Record(json.loads(_lib.take_string(out, n.value)))
        r["program"] = _lib.text(rec.contents.program)
        return r


class SearchResult:
    """What :func:`optimize` returns: ``records`` (the trajectory, one
    :class:`Record` per evaluated proposal), ``summary`` (a dict: samples,
    measured, reused, accepted, rejected, best_depth, best_speedup,
    final_speedup, final_lo, final_hi, source_median_s, best_median_s,
    seconds, stopped_by, lookaheads, lookahead_evals, db_unsaved,
    db_saved_late), ``db_unsaved`` (measurements the database could not
    keep, even written again when the search ended; 0 without a database),
    ``best`` (the best program, a :class:`Program`
    with the source's signature), ``steps`` (the step texts from the
    source to it), ``speedup`` (the final side-by-side speedup) and
    :meth:`plot_svg`."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._h = handle
        n = _s.leir_search_result_record_count(handle)
        self.records: List[Record] = [
            Record._from_c(_s.leir_search_result_record(handle, i)) for i in range(n)
        ]
        s = _s.Summary()
        s.size = ctypes.sizeof(s)
        call(_s.leir_search_result_summary, handle, ctypes.byref(s))
        self.summary: Dict[str, Any] = {
            f[0]: getattr(s, f[0]) for f in _s.Summary._fields_ if f[0] != "size"
        }
        self.summary["stopped_by"] = _STOPPED.get(s.stopped_by, str(s.stopped_by))
        best = _s.leir_search_result_best(handle)
        clone = out_ptr()
        call(_lib.leir_program_clone, ctypes.byref(clone), ctypes.c_void_p(best))
        self.best = Program._wrap(clone)
        out, n2 = out_ptr(), ctypes.c_size_t()
        call(_s.leir_search_result_best_steps, handle, ctypes.byref(out), ctypes.byref(n2))
        self.steps: List[str] = [x for x in _lib.take_string(out, n2.value).split("\n") if x]

    @property
    def db_unsaved(self) -> int:
        """Measurements the database lost: a write failed (a lock held past
        the busy timeout, a full disk) and writing them again when the
        search ended failed too (``summary["db_saved_late"]`` counts those
        that second write saved). The results are complete either way."""
        return int(self.summary["db_unsaved"])

    @property
    def speedup(self) -> float:
        return float(self.summary["final_speedup"]) or 1.0

    @property
    def accepted(self) -> List[Record]:
        """The accepted records (the nodes of the search), in order."""
        return [r for r in self.records if r.get("accepted")]

    def plot_svg(self) -> str:
        """An SVG image of the best speedup against the samples evaluated."""
        out, n = out_ptr(), ctypes.c_size_t()
        call(_s.leir_search_result_plot_svg, self._h, ctypes.byref(out), ctypes.byref(n))
        return _lib.take_string(out, n.value)

    def close(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _s.leir_search_result_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<leir.SearchResult {s['samples']} samples, {s['accepted']} accepted, "
            f"speedup {self.speedup:.3f}x>"
        )


class Query:
    """What a Python policy (``optimize(..., propose=fn)``) is asked, copied
    out of the C query: ``algorithm``, ``program`` (the current program, a
    :class:`Program`), ``root`` (the source program), ``candidates`` (its
    candidate steps as dicts: index, strategy, step, class), ``depth``,
    ``speedup``, ``want`` (proposals wanted), ``attempt``, ``feedback`` (the
    rejections at this node, oldest first: dicts with proposal, reject,
    verdict, reason), ``history`` (the path as a list of {step, speedup}),
    ``seed``. :meth:`builtin` adds a built-in policy's proposals."""

    def __init__(self, q: "ctypes._Pointer[_s.Query]", out: int) -> None:
        self._q = q
        self._out = out
        c = q.contents
        self.algorithm = _lib.text(_s.leir_search_algorithm_name(c.algorithm))
        self.program = _clone(c.program)
        self.root = _clone(c.root)
        self.depth = int(c.depth)
        self.speedup = float(c.speedup)
        self.want = int(c.want)
        self.attempt = int(c.attempt)
        self.seed = int(c.seed)
        self.history: List[Dict[str, Any]] = json.loads(_lib.text(c.history) or "[]")
        self.feedback: List[Dict[str, Any]] = [
            {
                "proposal": _lib.text(f.proposal),
                "reject": _lib.text(_s.leir_search_reject_name(f.reject)),
                "verdict": _lib.text(_lib.leir_verdict_name(f.verdict)),
                "reason": _lib.text(f.reason),
            }
            for f in (c.feedback[i] for i in range(c.nfeedback))
        ]
        self.candidates: List[Dict[str, Any]] = []
        if c.candidates and _lib.leir_candidates_to_json is not None:
            js, n = out_ptr(), ctypes.c_size_t()
            call(_lib.leir_candidates_to_json, ctypes.c_void_p(c.candidates), 0, ctypes.byref(js), ctypes.byref(n))
            self.candidates = json.loads(_lib.take_string(js, n.value))

    def builtin(self, policy: str = "cost") -> None:
        """Adds the proposals of a built-in policy (``"cost"``,
        ``"exhaustive"``, ``"random"``) to this call's."""
        if self._out is None:
            raise ValueError("the query is no longer being answered")
        p = _enum(_s.leir_search_policy_from_name, policy, "policy", POLICIES)
        call(_s.leir_search_propose_builtin, p, self._q, ctypes.c_void_p(self._out))


def _clone(h: Optional[int]) -> Optional[Program]:
    if not h:
        return None
    out = out_ptr()
    call(_lib.leir_program_clone, ctypes.byref(out), ctypes.c_void_p(h))
    return Program._wrap(out)


Proposal = Union[int, str, Step, Candidate, Program, Dict[str, Any]]


def _propose(out: ctypes.c_void_p, item: Proposal) -> None:
    cot: Optional[bytes] = None
    if isinstance(item, dict):
        cot = _bytes(item["cot"]) if item.get("cot") else None
        if "program" in item:
            text = _bytes(str(item["program"]))
            strat = item.get("strategy")
            call(
                _s.leir_search_propose_program,
                out,
                text,
                len(text),
                _bytes(strat) if strat else None,
                cot,
            )
            return
        item = item["index"] if "index" in item else item["step"]
    if isinstance(item, bool):
        raise TypeError("a proposal is an index, a step, a program or a dict, not a bool")
    if isinstance(item, int):
        call(_s.leir_search_propose_candidate, out, item, cot)
    elif isinstance(item, (str, Step, Candidate)):
        text = _bytes(str(item.step) if isinstance(item, Candidate) else str(item))
        call(_s.leir_search_propose_step, out, text, len(text), cot)
    elif isinstance(item, Program):
        text = _bytes(str(item))
        call(_s.leir_search_propose_program, out, text, len(text), None, cot)
    else:
        raise TypeError(f"cannot propose a {type(item).__name__}")


def optimize(
    program: Program,
    *,
    backend: BackendLike = None,
    algorithm: str = "greedy",
    policy: str = "cost",
    propose: Optional[Callable[[Query], Iterable[Proposal]]] = None,
    samples: int = 100,
    time: Optional[float] = None,
    depth: int = 8,
    width: int = 2,
    branching: int = 4,
    retries: int = 3,
    uct: float = 1.414,
    rollouts: int = 0,
    reward: str = "log",
    seed: int = 1,
    db: Union[Database, str, "os.PathLike[str]", None] = None,
    machine: Optional[str] = None,
    rounds: Optional[int] = None,
    max_rounds: Optional[int] = None,
    compare_time: Optional[float] = None,
    confidence: Optional[float] = None,
    min_effect: Optional[float] = None,
    warmup: Optional[int] = None,
    input_sets: Optional[int] = None,
    vector_width: Optional[int] = None,
    final_compare: bool = True,
    on_record: Optional[Callable[[Record], Any]] = None,
    lookahead: int = 0,
    lookahead_width: int = 32,
    lookahead_evals: int = 200000,
    lookahead_time: float = 20.0,
    all_divisors: bool = False,
    partial_fusion: bool = False,
    reduction_lanes: bool = False,
) -> SearchResult:
    """Searches from ``program`` for a faster equivalent one (``leir
    optimize``; docs/search.md) and returns a :class:`SearchResult`.

    ``backend`` is a name (``"cpu"``, the default, ``"interp"``,
    ``"cuda"``) or a :class:`Backend`. ``algorithm`` is one of
    :data:`ALGORITHMS`; ``policy`` one of :data:`POLICIES`, unless
    ``propose`` is given: a function of a :class:`Query` that returns the
    proposals, each a candidate index, a step (text, :class:`Step` or
    :class:`Candidate` of ``query.program``), a whole transformed
    :class:`Program`, or a dict (``{"index"|"step"|"program": ...,
    "strategy": name, "cot": text}``); returning nothing says it has
    nothing more at this node. Budgets: ``samples`` (proposals evaluated,
    0 = no limit), ``time`` (seconds), ``depth``. ``db`` is a
    :class:`Database` or a path (opened for the call; measurements found
    there are reused). The timing comparison: ``rounds`` (min),
    ``max_rounds``, ``compare_time`` (s), ``confidence``, ``min_effect``,
    ``warmup``; verification: ``input_sets``. ``lookahead`` (cost policy;
    0 = off) is the depth of a beam search in the cost model alone at each
    node, whose best sequence is proposed as one macro-step
    (``lookahead_width`` programs per level, at most ``lookahead_evals``
    model evaluations and ``lookahead_time`` seconds per node; docs/search.md
    "Lookahead in the model"); the summary counts ``lookaheads`` and
    ``lookahead_evals``. ``vector_width``, ``all_divisors``,
    ``partial_fusion`` and ``reduction_lanes`` set the candidates as for
    :func:`leir.candidates` (``leir optimize --all-divisors
    --partial-fusion --reduction-lanes``). ``on_record`` is called
    with every :class:`Record` as it is made; returning True stops the
    search, which then returns what it found so far (``summary
    ["stopped_by"] == "cancelled"``). An exception raised by ``propose``
    or ``on_record`` stops the search and is raised again here."""
    _require()
    o = _s.SearchOptions()
    call(_s.leir_search_options_init, ctypes.byref(o), ctypes.sizeof(o))
    o.algorithm = _enum(_s.leir_search_algorithm_from_name, algorithm, "algorithm", ALGORITHMS)
    o.policy = _enum(_s.leir_search_policy_from_name, policy, "policy", POLICIES)
    if reward not in _REWARDS:
        raise ArgumentError(f"unknown reward {reward!r} (log or reference)", status=-3)
    for name, v in (("samples", samples), ("depth", depth), ("width", width),
                    ("branching", branching), ("retries", retries), ("rollouts", rollouts),
                    ("lookahead", lookahead), ("lookahead_width", lookahead_width)):
        if not isinstance(v, int) or v < 0 or v > 0xFFFFFFFF:
            raise ArgumentError(f"{name} must be an integer in [0, 2^32)", status=-3)
    o.max_samples, o.max_depth, o.width, o.branching = samples, depth, width, branching
    o.retries, o.rollouts, o.uct_c, o.reward = retries, rollouts, uct, _REWARDS[reward]
    o.seed = seed
    if not isinstance(lookahead_evals, int) or lookahead_evals < 0 or lookahead_evals >= 1 << 64:
        raise ArgumentError("lookahead_evals must be an integer in [0, 2^64)", status=-3)
    if not lookahead_time >= 0:
        raise ArgumentError("lookahead_time must be >= 0", status=-3)
    o.lookahead_depth, o.lookahead_width = lookahead, lookahead_width
    o.lookahead_evals, o.lookahead_seconds = lookahead_evals, lookahead_time
    if time is not None:
        o.max_seconds = time
    if not final_compare:
        o.flags |= _s.NO_FINAL_COMPARE

    co = _s.CompareOptions()
    call(_s.leir_compare_options_init, ctypes.byref(co), ctypes.sizeof(co))
    for field, v in (("min_rounds", rounds), ("max_rounds", max_rounds), ("max_seconds", compare_time),
                     ("confidence", confidence), ("min_effect", min_effect), ("warmup", warmup)):
        if v is not None:
            setattr(co, field, v)
    o.compare = ctypes.pointer(co)
    vo = _s.VerifierOptions()
    call(_s.leir_verifier_options_init, ctypes.byref(vo), ctypes.sizeof(vo))
    if input_sets is not None:
        vo.input_sets = input_sets
    o.verifier = ctypes.pointer(vo)
    cand = _cand_options(
        None,
        vector_width,
        0,
        _domain_flags(all_divisors=all_divisors, partial_fusion=partial_fusion, reduction_lanes=reduction_lanes),
    )
    o.candidates = ctypes.pointer(cand)
    mach = _bytes(machine) if machine else None
    o.machine = mach

    errors: List[BaseException] = []

    def propose_cb(_payload: int, q: "ctypes._Pointer[_s.Query]", out: int) -> int:
        query = None
        try:
            query = Query(q, out)
            items = propose(query) if propose is not None else None
            for item in items or ():
                _propose(ctypes.c_void_p(out), item)
            return 0
        except BaseException as e:  # noqa: BLE001 - re-raised after the search
            errors.append(e)
            return _CANCELLED
        finally:
            if query is not None:
                query._out = None

    def record_cb(_payload: int, rec: "ctypes._Pointer[_s.Record]") -> int:
        try:
            return 1 if on_record(Record._from_c(rec)) is True else 0  # type: ignore[misc]
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            return 1

    pcb = _s.PROPOSE_FN(propose_cb) if propose is not None else None
    rcb = _s.RECORD_FN(record_cb) if on_record is not None else None
    if pcb is not None:
        o.propose = pcb
    if rcb is not None:
        o.on_record = rcb

    own_db = None
    if isinstance(db, Database):
        o.db = db._handle
    elif db is not None:
        own_db = Database(db)
        o.db = own_db._handle
    b = _backend(backend)
    res = out_ptr()
    try:
        _lib.leir_error_clear()
        before = _lib.leir_error_sequence() if _lib.leir_error_sequence is not None else None
        st = _s.leir_search_run(ctypes.byref(res), b._handle, program._handle, ctypes.byref(o))
        if errors:
            if res:
                _s.leir_search_result_free(res)
            raise errors[0]
        if st != 0 and not (st == _CANCELLED and res):
            if res:
                _s.leir_search_result_free(res)
            raise error_for(st, before)
        return SearchResult(res)
    finally:
        if own_db is not None:
            own_db.close()
        if not isinstance(backend, Backend):
            b.close()

