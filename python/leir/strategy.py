"""Strategies: the catalogue, steps, candidates, apply, explain, ground and
chain-of-thought text."""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _defaults, _lib
from .errors import call, out_ptr
from .program import Program, _bytes

__all__ = [
    "StrategyInfo",
    "Step",
    "ParamValue",
    "Candidate",
    "Explanation",
    "Reason",
    "strategies",
    "strategy_index",
    "candidates",
    "candidates_json",
    "apply",
    "explain",
    "ground",
    "cot",
]

_LEVELS = ("graph", "operator", "memory", "math")


@dataclass(frozen=True)
class StrategyInfo:
    """A row of the catalogue (44 strategies; ``implemented`` says whether
    this build can enumerate and apply it)."""

    index: int
    name: str
    level: str
    summary: str
    definition: str
    benefit: str
    implemented: bool


def strategies() -> List[StrategyInfo]:
    """The whole catalogue, in index order."""
    out = []
    for i in range(_lib.leir_strategy_count()):
        r = _lib.leir_strategy_info_at(i).contents
        out.append(
            StrategyInfo(
                int(r.index),
                _lib.text(r.name),
                _LEVELS[r.level] if 0 <= r.level < 4 else str(r.level),
                _lib.text(r.summary),
                _lib.text(r.definition),
                _lib.text(r.benefit),
                bool(r.implemented),
            )
        )
    return out


def strategy_index(name: str) -> int:
    """Catalogue index of a strategy; :class:`leir.NotFoundError` (which
    suggests the closest name) when unknown."""
    idx = ctypes.c_size_t()
    call(_lib.leir_strategy_find, _bytes(name), ctypes.byref(idx))
    return idx.value


#: The type of a step parameter's value, as in the step's JSON form
#: (docs/strategies.md, "Steps"): an integer (``factor``, ``at``, ``eq``, a
#: top-level ``nest``), a string (loop and tensor names, ``mode``, ``scope``,
#: ``entry``, ``expr`` paths, a nested ``nest`` path such as "0.1"), or a list
#: of integers or strings (``loops``, ``factors``, ``perm``, ``dims``).
ParamValue = Union[int, str, List[int], List[str]]


class Step:
    """One rewrite: a strategy and its parameters. ``Step(text)`` parses the
    text form ("loop_split nest=0 loop=a factor=2") or the JSON form
    ('{"strategy":"loop_split",...}'); a dict is taken as the JSON form."""

    __slots__ = ("_h",)

    def __init__(self, step: Union[str, bytes, Dict[str, Any], "Step"]) -> None:
        self._h = ctypes.c_void_p()
        if isinstance(step, Step):
            call(_lib.leir_step_clone, ctypes.byref(self._h), step._handle)
            return
        if isinstance(step, dict):
            step = json.dumps(step)
        raw = _bytes(step)
        call(_lib.leir_step_parse, ctypes.byref(self._h), raw, len(raw))

    @classmethod
    def parse(cls, text: Union[str, bytes, Dict[str, Any]]) -> "Step":
        return cls(text)

    @classmethod
    def _clone_of(cls, borrowed: int) -> "Step":
        s = cls.__new__(cls)
        s._h = ctypes.c_void_p()
        call(_lib.leir_step_clone, ctypes.byref(s._h), borrowed)
        return s

    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise ValueError("the step was closed")
        return self._h

    def close(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _lib.leir_step_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __str__(self) -> str:
        """Canonical text form."""
        return _lib.text(_lib.leir_step_text(self._handle))

    def __repr__(self) -> str:
        return f"leir.Step({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Step(other)
            except Exception:
                return False
        return isinstance(other, Step) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def strategy(self) -> str:
        """Catalogue name of the step's strategy."""
        idx = _lib.leir_step_strategy(self._handle)
        return _lib.text(_lib.leir_strategy_info_at(idx).contents.name)

    @classmethod
    def of(cls, strategy: str, **params: ParamValue) -> "Step":
        """A step from its strategy and typed parameters:
        ``Step.of("loop_split", nest=0, loop="a", factor=2)``."""
        return cls({"strategy": strategy, **params})

    @property
    def params(self) -> Dict[str, ParamValue]:
        """The parameters with their values typed as in the JSON form
        (integers, strings, lists), in canonical key order:
        ``{"nest": 0, "loops": ["tx", "a"], "factors": [2, 4]}``. A new dict
        on every access (changing it does not change the step)."""
        obj: Dict[str, ParamValue] = json.loads(self.to_json())  # keeps the key order
        obj.pop("strategy", None)
        # the listing's domain (a step listed outside the reference domain), not parameters
        obj.pop("listing_flags", None)
        obj.pop("listing_vector_width", None)
        return obj

    @property
    def param_text(self) -> Dict[str, str]:
        """The parameters as written in the text form (lists
        comma-separated): ``{"nest": "0", "loops": "tx,a"}``."""
        out = {}
        for i in range(_lib.leir_step_param_count(self._handle)):
            k, v, n = ctypes.c_char_p(), ctypes.c_void_p(), ctypes.c_size_t()
            call(_lib.leir_step_param, self._handle, i, ctypes.byref(k), ctypes.byref(v), ctypes.byref(n))
            out[_lib.text(k.value)] = ctypes.string_at(v.value, n.value).decode() if v.value else ""
        return out

    def __getitem__(self, key: str) -> ParamValue:
        """One typed parameter (KeyError when the step has none)."""
        return self.params[key]

    def to_json(self) -> str:
        """The JSON form, one line."""
        out, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_step_to_json, self._handle, ctypes.byref(out), ctypes.byref(n))
        return _lib.take_string(out, n.value)

    @property
    def json(self) -> Dict[str, Any]:
        """The JSON form as a dict."""
        out: Dict[str, Any] = json.loads(self.to_json())
        return out


StepLike = Union[Step, "Candidate", str, bytes, Dict[str, Any]]


def _step(step: StepLike) -> Step:
    if isinstance(step, Candidate):
        return step.step
    return step if isinstance(step, Step) else Step(step)


class _CandidateList:
    """Owns a leir_candidates list and the program it borrows."""

    __slots__ = ("_h", "program")

    def __init__(self, handle: ctypes.c_void_p, program: Program) -> None:
        self._h = handle
        self.program = program

    def __del__(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        try:
            if h:
                _lib.leir_candidates_free(h)
        except Exception:
            pass


class Candidate:
    """An applicable step of a program, with its exactness class ("exact":
    bitwise identical results; "reassociating": rounding may differ).
    ``result`` is the transformed program (computed on first use)."""

    __slots__ = ("_list", "index", "step", "exactness", "_result")

    def __init__(self, lst: _CandidateList, index: int) -> None:
        self._list = lst
        self.index = index
        self.step = Step._clone_of(_lib.leir_candidates_step(lst._h, index))
        self.exactness: str = _lib.text(
            _lib.leir_exactness_name(_lib.leir_candidates_exactness(lst._h, index))
        )
        self._result: Optional[Program] = None

    @property
    def strategy(self) -> str:
        return self.step.strategy

    @property
    def program(self) -> Program:
        """The program the candidate applies to."""
        return self._list.program

    @property
    def assumed(self) -> bool:
        """True for a split whose numerical condition is only assumed
        (listed with ``generic_values``, or by :func:`ground`'s gated pass):
        :func:`apply` refuses its step, :attr:`result` applies it
        (leir_candidates_assumed; costs one enumeration of its strategy)."""
        from . import _research_lib as _r

        if _r.leir_candidates_assumed is None:
            from .errors import UnsupportedError

            raise UnsupportedError("this libleir has no leir_candidates_assumed")
        out = ctypes.c_int()
        call(_r.leir_candidates_assumed, self._list._h, self.index, ctypes.byref(out))
        return bool(out.value)

    @property
    def result(self) -> Program:
        if self._result is None:
            h = out_ptr()
            call(_lib.leir_candidates_apply, ctypes.byref(h), self._list._h, self.index)
            self._result = Program._wrap(h)
        return self._result

    def apply(self) -> Program:
        """The transformed program (a new object on each call)."""
        return self.result.copy()

    def cot(self) -> str:
        """The chain of thought of this step."""
        return cot(self._list.program, self.step)

    def __str__(self) -> str:
        return str(self.step)

    def __repr__(self) -> str:
        return f"<leir.Candidate {self.index}: {self.step} ({self.exactness})>"


# LEIR_CANDIDATES_* (include/leir/strategy.h): domains beyond the reference's.
_DOMAIN_FLAGS = {
    "all_divisors": 0x1,
    "generic_values": 0x2,
    "partial_fusion": 0x4,
    "reduction_lanes": 0x8,
}


def _domain_flags(**domain: bool) -> int:
    flags = 0
    for name, on in domain.items():
        if on:
            flags |= _DOMAIN_FLAGS[name]
    return flags


def _cand_options(
    strategy: Optional[Union[str, int]], vector_width: Optional[int], max_candidates: int, flags: int = 0
) -> _lib.CandidatesOptions:
    o = _defaults.init(_lib.CandidatesOptions, "leir_candidates_options")
    if strategy is not None:
        o.strategy = strategy if isinstance(strategy, int) else strategy_index(strategy)
    if vector_width is not None:
        o.vector_width = vector_width
    o.max_candidates = max_candidates
    o.flags = flags
    return o


def candidates(
    program: Program,
    strategy: Optional[Union[str, int]] = None,
    *,
    vector_width: Optional[int] = None,
    max_candidates: int = 0,
    all_divisors: bool = False,
    partial_fusion: bool = False,
    reduction_lanes: bool = False,
    generic_values: bool = False,
) -> List[Candidate]:
    """Every applicable step of the implemented strategies (or of
    ``strategy``), in the library's deterministic order. The keyword
    switches widen the domain beyond the reference's (docs/strategies.md):
    every divisor for splits and tilings, operator_fusion over leading
    loops, reduction_factorization per vector lane, splits whose condition
    is assumed; such steps apply through :meth:`Candidate.result`, not
    :func:`apply`. Raises :class:`leir.InvalidProgramError` (and
    LimitError, SignatureError) when the program fails its checks,
    :class:`leir.NotFoundError` for an unknown strategy."""
    flags = _domain_flags(
        all_divisors=all_divisors,
        partial_fusion=partial_fusion,
        reduction_lanes=reduction_lanes,
        generic_values=generic_values,
    )
    opts = _cand_options(strategy, vector_width, max_candidates, flags)
    h = out_ptr()
    call(_lib.leir_candidates_list, ctypes.byref(h), program._handle, ctypes.byref(opts))
    lst = _CandidateList(h, program)
    return [Candidate(lst, i) for i in range(_lib.leir_candidates_count(h))]


def candidates_json(
    program: Program, strategy: Optional[Union[str, int]] = None, *, results: bool = False
) -> List[Dict[str, Any]]:
    """The candidate list as the library's JSON (leir_candidates_to_json):
    index, strategy, step, json, class and, with ``results``, result."""
    if _lib.leir_candidates_to_json is None:
        raise NotImplementedError("this libleir has no leir_candidates_to_json")
    opts = _cand_options(strategy, None, 0)
    h = out_ptr()
    call(_lib.leir_candidates_list, ctypes.byref(h), program._handle, ctypes.byref(opts))
    lst = _CandidateList(h, program)
    out, n = out_ptr(), ctypes.c_size_t()
    call(_lib.leir_candidates_to_json, lst._h, 1 if results else 0, ctypes.byref(out), ctypes.byref(n))
    rows: List[Dict[str, Any]] = json.loads(_lib.take_string(out, n.value))
    return rows


def apply(program: Program, step: StepLike, *, with_class: bool = False) -> Any:
    """Applies one step (text, JSON, dict, :class:`Step` or
    :class:`Candidate`); it must be a
    candidate of the program. Returns the new program, or ``(program,
    exactness)`` with ``with_class``. Raises
    :class:`leir.NotApplicableError` (``rule`` names the failed
    precondition), :class:`leir.ParseError` / :class:`leir.NotFoundError`
    for a malformed step, :class:`leir.InvalidProgramError`."""
    s = _step(step)
    h, cls = out_ptr(), ctypes.c_int()
    call(_lib.leir_step_apply, ctypes.byref(h), program._handle, s._handle, ctypes.byref(cls))
    out = Program._wrap(h)
    if with_class:
        return out, _lib.text(_lib.leir_exactness_name(cls.value))
    return out


@dataclass(frozen=True)
class Reason:
    """One site of an explanation: a candidate (applies) or the failed
    precondition (rule)."""

    applies: bool
    site: str
    rule: str
    message: str


@dataclass(frozen=True)
class Explanation:
    strategy: str
    candidates: int
    reasons: Tuple[Reason, ...]
    text: str

    @property
    def applies(self) -> bool:
        return self.candidates > 0

    def __str__(self) -> str:
        return self.text


def explain(program: Program, strategy: Union[str, int]) -> Explanation:
    """Why ``strategy`` does or does not apply, site by site."""
    idx = strategy if isinstance(strategy, int) else strategy_index(strategy)
    h = out_ptr()
    call(_lib.leir_strategy_explain, ctypes.byref(h), program._handle, idx)
    try:
        reasons = []
        for i in range(_lib.leir_explanation_count(h)):
            r = _lib.leir_explanation_get(h, i).contents
            reasons.append(Reason(bool(r.applies), _lib.text(r.site), _lib.text(r.rule), _lib.text(r.message)))
        out, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_explanation_text, h, ctypes.byref(out), ctypes.byref(n))
        name = _lib.text(_lib.leir_strategy_info_at(idx).contents.name)
        return Explanation(name, int(_lib.leir_explanation_candidates(h)), tuple(reasons), _lib.take_string(out, n.value))
    finally:
        _lib.leir_explanation_free(h)


def ground(before: Program, after: Program, strategy: Optional[Union[str, int]] = None) -> List[Candidate]:
    """Every candidate step of ``before`` whose result equals ``after`` up
    to fresh names ([] when none)."""
    opts = _cand_options(strategy, None, 0)
    h = out_ptr()
    call(_lib.leir_ground, ctypes.byref(h), before._handle, after._handle, ctypes.byref(opts))
    lst = _CandidateList(h, before)
    return [Candidate(lst, i) for i in range(_lib.leir_candidates_count(h))]


def cot(program: Program, step: StepLike) -> str:
    """The chain-of-thought text of applying ``step`` to ``program``."""
    s = _step(step)
    out, n = out_ptr(), ctypes.c_size_t()
    call(_lib.leir_step_cot, ctypes.byref(out), ctypes.byref(n), program._handle, s._handle)
    return _lib.take_string(out, n.value)
