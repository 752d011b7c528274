"""Scoring a model's answers against a dataset's prompts (experimental),
as ``leir eval ANSWERS --dataset DIR`` does: the same metrics
(pass_equal, pass_close, pass_reference, grounded, multi-label, pass@k with
the unbiased estimator), returned as typed rows (docs/dataset.md,
"leir eval"; include/leir/experimental/dataset.h)."""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from . import _research_lib as _r
from .errors import ArgumentError, LeirIOError, UnsupportedError, call, out_ptr
from .program import _bytes

__all__ = ["Report", "Row", "Answer", "Item", "score", "pass_at_k", "METRICS"]

#: The metrics pass@k is reported for.
METRICS: Tuple[str, ...] = ("pass_equal", "pass_close", "pass_reference")

PathLike = Union[str, "os.PathLike[str]"]
AnswersLike = Union[PathLike, bytes, Iterable[Union[Mapping[str, Any], Tuple[str, str], str]]]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator (Chen et al., 2021) of a prompt with
    ``n`` samples of which ``c`` solve it: 1 - C(n-c, k) / C(n, k),
    computed as the library computes it (a product, no binomials)."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if k > n:
        raise ValueError(f"pass_at_k needs k <= n (n={n}, k={k})")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


@dataclass(frozen=True)
class Row:
    """One row of the report: counts over answer lines and transformed
    IRs, their rates, and (for overall, single, multi and the levels) the
    prompts and pass@k."""

    answers: int  # answer lines
    parsed: int
    items: int  # transformed IRs (a failed line counts as one)
    equal: int
    close: int
    reference: int
    label: int
    grounded: int
    multi_answers: int
    parse_rate: float  # per line
    different_rate: float  # per IR, as the rest
    label_rate: float
    pass_equal: float
    pass_close: float
    pass_reference: float
    grounded_rate: float
    multi_label_rate: float
    multi_label_equal_rate: float
    prompts: Optional[int]  # None for the per-strategy rows
    pass_at_k: Dict[str, Dict[int, float]]  # metric -> k -> mean over prompts with >= k samples
    pass_at_k_prompts: Dict[int, int]  # k -> prompts with at least k samples
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def pass_at(self, k: int, metric: str = "pass_equal") -> float:
        """pass@k of a metric (KeyError for a k the report has not)."""
        return self.pass_at_k[metric][k]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Row":
        pak = obj.get("pass_at_k") or {}
        return cls(
            answers=int(obj.get("answers") or 0),
            parsed=int(obj.get("parsed") or 0),
            items=int(obj.get("items") or 0),
            equal=int(obj.get("equal") or 0),
            close=int(obj.get("close") or 0),
            reference=int(obj.get("reference") or 0),
            label=int(obj.get("label") or 0),
            grounded=int(obj.get("grounded") or 0),
            multi_answers=int(obj.get("multi_answers") or 0),
            parse_rate=float(obj.get("parse_rate") or 0),
            different_rate=float(obj.get("different_rate") or 0),
            label_rate=float(obj.get("label_rate") or 0),
            pass_equal=float(obj.get("pass_equal") or 0),
            pass_close=float(obj.get("pass_close") or 0),
            pass_reference=float(obj.get("pass_reference") or 0),
            grounded_rate=float(obj.get("grounded_rate") or 0),
            multi_label_rate=float(obj.get("multi_label_rate") or 0),
            multi_label_equal_rate=float(obj.get("multi_label_equal_rate") or 0),
            prompts=int(obj["prompts"]) if "prompts" in obj else None,
            pass_at_k={
                str(m): {int(k): float(v) for k, v in ks.items()}
                for m, ks in pak.items()
                if m != "prompts" and isinstance(ks, dict)
            },
            pass_at_k_prompts={int(k): int(v) for k, v in (pak.get("prompts") or {}).items()},
            raw=dict(obj),
        )


@dataclass(frozen=True)
class Item:
    """One transformed IR of an answer, scored (docs/dataset.md lists the
    fields)."""

    strategy: Optional[str]  # as the answer names it
    label_strategy: Optional[str]  # the matching label's, None when none matches
    verdict: Optional[str]
    cls: Optional[str]  # the class it was judged by ("exact", "reassociating", "tolerance")
    different: bool
    label: bool
    pass_equal: bool
    pass_close: bool
    pass_reference: bool
    grounded: bool
    reason: Optional[str]  # why it failed ("ir.unchanged", "verify.MISMATCH", ...)
    message: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


def _opt_str(v: Any) -> Optional[str]:
    return None if v is None else str(v)


def _item(obj: Mapping[str, Any]) -> Item:
    return Item(
        strategy=_opt_str(obj.get("strategy")),
        label_strategy=_opt_str(obj.get("label_strategy")),
        verdict=_opt_str(obj.get("verdict")),
        cls=_opt_str(obj.get("class")),
        different=bool(obj.get("different")),
        label=bool(obj.get("label")),
        pass_equal=bool(obj.get("pass_equal")),
        pass_close=bool(obj.get("pass_close")),
        pass_reference=bool(obj.get("pass_reference")),
        grounded=bool(obj.get("grounded")),
        reason=_opt_str(obj.get("reason")),
        message=_opt_str(obj.get("message")),
        raw=dict(obj),
    )


@dataclass(frozen=True)
class Answer:
    """One answer line, scored: ``parsed`` False with a ``reason`` when the
    line, the prompt or the answer text failed; else its ``items``."""

    line: int
    id: Optional[str]
    parsed: bool
    kind: Optional[str]  # "single" or "multi"
    requested: int  # N of an "at least N" prompt, 1 for a single one
    items: Tuple[Item, ...]
    distinct: int
    distinct_pass_equal: int
    distinct_pass_close: int
    require_num_pass: bool
    multi_label: bool
    reason: Optional[str]
    message: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


def _answer(obj: Mapping[str, Any]) -> Answer:
    return Answer(
        line=int(obj.get("line") or 0),
        id=_opt_str(obj.get("id")),
        parsed=bool(obj.get("parsed")),
        kind=_opt_str(obj.get("kind")),
        requested=int(obj.get("requested") or 0),
        items=tuple(_item(i) for i in obj.get("items") or ()),
        distinct=int(obj.get("distinct") or 0),
        distinct_pass_equal=int(obj.get("distinct_pass_equal") or 0),
        distinct_pass_close=int(obj.get("distinct_pass_close") or 0),
        require_num_pass=bool(obj.get("require_num_pass")),
        multi_label=bool(obj.get("multi_label")),
        reason=_opt_str(obj.get("reason")),
        message=_opt_str(obj.get("message")),
        raw=dict(obj),
    )


def _rows(obj: Any) -> Dict[str, Row]:
    return {str(k): Row.from_json(v) for k, v in (obj or {}).items()}


@dataclass(frozen=True)
class Report:
    """The scores (``leir eval --json``), typed. ``overall``, ``single``
    and ``multi`` are rows; ``per_level`` (programs, level1, level2,
    unknown), ``per_strategy`` and ``per_strategy_level`` (keyed by the
    matching label's strategy; "(no label)", "(unparsed)") and
    ``per_named_strategy`` (the strategy the answer names) map keys to
    rows; ``answers`` has one entry per line; ``table`` is the text
    ``leir eval`` prints."""

    k: Tuple[int, ...]
    overall: Row
    single: Row
    multi: Row
    per_level: Dict[str, Row]
    per_strategy: Dict[str, Row]
    per_strategy_level: Dict[str, Row]
    per_named_strategy: Dict[str, Row]
    answers: Tuple[Answer, ...]
    table: str = field(repr=False, default="")
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], table: str = "") -> "Report":
        return cls(
            k=tuple(int(k) for k in obj.get("k") or ()),
            overall=Row.from_json(obj.get("overall") or {}),
            single=Row.from_json(obj.get("single") or {}),
            multi=Row.from_json(obj.get("multi") or {}),
            per_level=_rows(obj.get("per_level")),
            per_strategy=_rows(obj.get("per_strategy")),
            per_strategy_level=_rows(obj.get("per_strategy_level")),
            per_named_strategy=_rows(obj.get("per_named_strategy")),
            answers=tuple(_answer(a) for a in obj.get("answers") or ()),
            table=table,
            raw=dict(obj),
        )

    def to_json(self) -> str:
        """The library's JSON report, as ``leir eval --json`` writes it."""
        return json.dumps(self.raw)

    def __str__(self) -> str:
        return self.table


def _answers_bytes(answers: AnswersLike) -> bytes:
    if isinstance(answers, (bytes, bytearray)):
        return bytes(answers)
    if isinstance(answers, (str, os.PathLike)):
        p = Path(os.fspath(answers))
        try:
            return p.read_bytes()
        except OSError as e:
            raise LeirIOError(f"cannot read {p}: {e.strerror}", rule="eval.answers", subject=str(p)) from None
    lines: List[str] = []
    for a in answers:
        if isinstance(a, Mapping):
            lines.append(json.dumps(a))
        elif isinstance(a, tuple) and len(a) == 2:
            lines.append(json.dumps({"id": a[0], "answer": a[1]}))
        elif isinstance(a, str):
            lines.append(a.rstrip("\n"))
        else:
            raise TypeError(f"an answer is a dict, an (id, answer) pair or a JSON line, not {type(a).__name__}")
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def score(
    answers: AnswersLike,
    dataset: Union[PathLike, Any],
    *,
    backend: Optional[str] = None,
    seed: Optional[int] = None,
    input_sets: Optional[int] = None,
    interp_max_evaluations: Optional[int] = None,
    k: Optional[Sequence[int]] = None,
) -> Report:
    """Scores answers against the prompts of a built dataset (a directory
    or a :class:`leir.dataset.Dataset`), as ``leir eval``.

    ``answers`` is the path of an answers JSONL file, its bytes, or an
    iterable of answers: dicts (``{"id": ..., "answer": ...}``, any form
    ``leir eval`` reads), ``(id, answer_text)`` pairs or JSON lines. Lines
    with the same prompt are samples of it (pass@k). ``k`` lists the k of
    pass@k (up to 16; default 1 and the fewest samples of any answered
    prompt); ``backend`` ("interp", "cpu", "cuda"; default: the interpreter
    for small programs, else cpu), ``seed`` and ``input_sets`` set the
    verification. Nothing in the answers makes this fail: every line is
    scored with a reason. Raises :class:`leir.LeirIOError` /
    :class:`leir.ParseError` for the dataset directory,
    :class:`leir.ArgumentError` for a bad ``k``."""
    if not _r.DATASET_AVAILABLE:
        raise UnsupportedError("this libleir has no evaluation (leir_eval_run)")
    text = _answers_bytes(answers)
    o = _r.EvalOptions()
    call(_r.leir_eval_options_init, ctypes.byref(o), ctypes.sizeof(_r.EvalOptions))
    keep: List[object] = []
    if backend is not None:
        o.backend = _bytes(backend)
    if seed is not None:
        o.seed = seed
    if input_sets is not None:
        o.input_sets = input_sets
    if interp_max_evaluations is not None:
        o.interp_max_evaluations = interp_max_evaluations
    if k is not None:
        ks = [int(x) for x in k]
        if not ks or any(x < 1 for x in ks):
            raise ArgumentError(f"k lists integers >= 1, not {list(k)!r}", rule="eval.k")
        arr = (ctypes.c_uint32 * len(ks))(*ks)
        keep.append(arr)
        o.k = ctypes.cast(arr, ctypes.POINTER(ctypes.c_uint32))
        o.n_k = len(ks)
    h = out_ptr()
    call(_r.leir_eval_run, ctypes.byref(h), text, len(text), os.fsencode(os.fspath(dataset)), ctypes.byref(o))
    try:
        js, n = out_ptr(), ctypes.c_size_t()
        call(_r.leir_eval_report_json, h, ctypes.byref(js), ctypes.byref(n))
        obj = json.loads(_lib.take_string(js, n.value))
        tb, m = out_ptr(), ctypes.c_size_t()
        call(_r.leir_eval_report_table, h, ctypes.byref(tb), ctypes.byref(m))
        return Report.from_json(obj, _lib.take_string(tb, m.value))
    finally:
        _r.leir_eval_free(h)
