"""Step-TP datasets (experimental): build one from a config, as ``leir
dataset build`` does, and read a built one as typed records
(docs/dataset.md; include/leir/experimental/dataset.h).

Field names follow the files, in Python spelling: ``original_IR`` is
``original_ir``, ``transformed_IR`` ``transformed_ir``, ``CoT`` ``cot``;
every record also keeps the line's whole object as ``raw``, so fields that
later libraries add are there too."""

from __future__ import annotations

import ctypes
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from . import _lib
from . import _research_lib as _r
from .errors import LeirIOError, NotFoundError, ParseError, UnsupportedError, call, out_ptr
from .program import Program, TensorDecl

__all__ = [
    "Dataset",
    "BuildResult",
    "Progress",
    "Message",
    "TrainRecord",
    "Label",
    "Prompt",
    "Sample",
    "ArchiveRecord",
    "Rejection",
    "Summary",
    "Split",
    "Leakage",
    "build",
    "open_dataset",
]

PathLike = Union[str, "os.PathLike[str]"]


def _require() -> None:
    if not _r.DATASET_AVAILABLE:
        raise UnsupportedError("this libleir has no dataset API (leir_dataset_open)")


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str  # "system", "user", "assistant"
    content: str


def _messages(obj: Mapping[str, Any]) -> Tuple[Message, ...]:
    return tuple(Message(str(m.get("role", "")), str(m.get("content", ""))) for m in obj.get("messages") or ())


def _content(messages: Tuple[Message, ...], role: str) -> str:
    for m in messages:
        if m.role == role:
            return m.content
    return ""


def _known(obj: Mapping[str, Any]) -> Tuple[TensorDecl, ...]:
    return tuple(
        TensorDecl(str(k["name"]), str(k["dtype"]), str(k.get("role", "input")), tuple(int(e) for e in k.get("shape", ())))
        for k in obj.get("known") or ()
    )


def _program(text: str, known: Tuple[TensorDecl, ...]) -> Program:
    """A record's program with the record's known variables as signature."""
    p = Program.parse(text)
    if known:
        p.set_signature(
            {d.name: (d.dtype, d.shape) for d in known if d.role == "input"},
            {d.name: (d.dtype, d.shape) for d in known if d.role == "output"},
        )
    return p


@dataclass(frozen=True)
class TrainRecord:
    """A line of ``train.jsonl``: a chat record (user prompt, assistant
    answer with its chain of thought; a system message when configured)."""

    messages: Tuple[Message, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def system(self) -> str:
        return _content(self.messages, "system")

    @property
    def user(self) -> str:
        return _content(self.messages, "user")

    @property
    def assistant(self) -> str:
        return _content(self.messages, "assistant")

    @property
    def cot(self) -> str:
        """The assistant's ``<think>`` text."""
        a = self.assistant
        start, end = a.find("<think>"), a.find("</think>")
        return a[start + 7 : end] if start >= 0 and end > start else ""

    @property
    def answer(self) -> str:
        """The assistant's ``<answer>`` text (JSON for a single record, a
        Python literal for a multi record)."""
        a = self.assistant
        start, end = a.find("<answer>"), a.rfind("</answer>")
        return a[start + 8 : end] if start >= 0 and end > start else ""


@dataclass(frozen=True)
class Label:
    """One verified step of a prompt's state."""

    strategy: str
    transformed_ir: str
    verdict: str  # "EQUAL" or "CLOSE"
    exactness: str  # "exact" or "reassociating"
    known: Tuple[TensorDecl, ...] = field(repr=False, compare=False, default=())

    def program(self) -> Program:
        """The transformed program, with the prompt's known variables."""
        return _program(self.transformed_ir, self.known)


@dataclass(frozen=True)
class Prompt:
    """A line of ``eval.jsonl`` (split "test") or ``validation.jsonl``:
    the user prompt of one held-out state, single or "at least N"
    (``kind`` "multi", ``n``), with every verified label."""

    id: str
    split: str
    kind: str
    n: int
    messages: Tuple[Message, ...]
    name: str
    level: int
    depth: int
    unit: str
    state: str  # the state's alpha hash
    original_ir: str
    known: Tuple[TensorDecl, ...]
    labels: Tuple[Label, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def prompt(self) -> str:
        """The user message (what a model is sent)."""
        return _content(self.messages, "user")

    def program(self) -> Program:
        """The prompt's program, with its known variables as signature."""
        return _program(self.original_ir, self.known)


def _state_fields(obj: Dict[str, Any]) -> Dict[str, Any]:
    """The fields a prompt record and an archive record share (the state and
    its prompt), as keyword arguments of either."""
    return dict(
        id=str(obj.get("id", "")),
        split=str(obj.get("split", "")),
        kind=str(obj.get("kind", "")),
        n=int(obj.get("n") or 0),
        messages=_messages(obj),
        name=str(obj.get("name", "")),
        level=int(obj.get("level") or 0),
        depth=int(obj.get("depth") or 0),
        unit=str(obj.get("unit", "")),
        state=str(obj.get("state", "")),
        original_ir=str(obj.get("original_IR", "")),
        known=_known(obj),
    )


def _prompt(obj: Dict[str, Any]) -> Prompt:
    fields = _state_fields(obj)
    known = fields["known"]
    return Prompt(
        **fields,
        labels=tuple(
            Label(str(l.get("strategy", "")), str(l.get("transformed_IR", "")), str(l.get("verdict", "")),
                  str(l.get("exactness", "")), known)
            for l in obj.get("labels") or ()
        ),
        raw=obj,
    )


@dataclass(frozen=True)
class Sample:
    """One verified step, with every field ``archive.jsonl`` keeps."""

    id: str
    unit: str
    name: str
    level: int
    state: str  # the state's alpha hash
    depth: int
    walk: Tuple[str, ...]  # the steps from the source to the state
    original_ir: str
    original_hash: str
    known: Tuple[TensorDecl, ...]
    strategy: str
    strategy_index: int
    strategy_level: str
    step: str
    step_json: Dict[str, Any]
    exactness: str
    transformed_ir: str
    transformed_hash: str
    transformed_alpha_hash: str
    verdict: str
    verify: Dict[str, Any]
    cot: str
    time_ms: Optional[float]
    speedup: Optional[float]
    source: Dict[str, Any]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def as_step(self) -> "Any":
        """The step as a :class:`leir.Step`."""
        from .strategy import Step

        return Step(self.step)

    def original(self) -> Program:
        return _program(self.original_ir, self.known)

    def transformed(self) -> Program:
        return _program(self.transformed_ir, self.known)


def _opt_float(v: Any) -> Optional[float]:
    return None if v is None else float(v)


def _sample(obj: Dict[str, Any]) -> Sample:
    st = obj.get("state") or {}
    return Sample(
        id=str(obj.get("id", "")),
        unit=str(obj.get("unit", "")),
        name=str(obj.get("name", "")),
        level=int(obj.get("level") or 0),
        state=str(st.get("id", "")),
        depth=int(st.get("depth") or 0),
        walk=tuple(str(s) for s in st.get("walk") or ()),
        original_ir=str(obj.get("original_IR", "")),
        original_hash=str(obj.get("original_hash", "")),
        known=_known(obj),
        strategy=str(obj.get("strategy", "")),
        strategy_index=int(obj.get("strategy_index", -1)),
        strategy_level=str(obj.get("strategy_level", "")),
        step=str(obj.get("step", "")),
        step_json=dict(obj.get("step_json") or {}),
        exactness=str(obj.get("exactness", "")),
        transformed_ir=str(obj.get("transformed_IR", "")),
        transformed_hash=str(obj.get("transformed_hash", "")),
        transformed_alpha_hash=str(obj.get("transformed_alpha_hash", "")),
        verdict=str(obj.get("verdict", "")),
        verify=dict(obj.get("verify") or {}),
        cot=str(obj.get("CoT") or ""),
        time_ms=_opt_float(obj.get("time_ms")),
        speedup=_opt_float(obj.get("speedup")),
        source=dict(obj.get("source") or {}),
        raw=obj,
    )


@dataclass(frozen=True)
class ArchiveRecord:
    """A line of ``archive.jsonl``: a record of any split with its samples."""

    id: str
    split: str  # "train", "validation" or "test"
    kind: str  # "single" or "multi"
    n: int
    messages: Tuple[Message, ...]
    name: str
    level: int
    depth: int
    unit: str
    state: str
    original_ir: str
    known: Tuple[TensorDecl, ...]
    samples: Tuple[Sample, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


def _archive(obj: Dict[str, Any]) -> ArchiveRecord:
    return ArchiveRecord(
        **_state_fields(obj),
        samples=tuple(_sample(s) for s in obj.get("samples") or ()),
        raw=obj,
    )


@dataclass(frozen=True)
class Rejection:
    """A line of ``rejections.jsonl``: a candidate that was not kept."""

    unit: str
    state: str
    depth: int
    strategy: str
    step: str
    stage: str  # source, candidates, apply, noop, duplicate, verify, cot
    verdict: str
    message: str
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


def _rejection(obj: Dict[str, Any]) -> Rejection:
    return Rejection(
        unit=str(obj.get("unit", "")),
        state=str(obj.get("state") or ""),
        depth=int(obj.get("depth") or 0),
        strategy=str(obj.get("strategy") or ""),
        step=str(obj.get("step") or ""),
        stage=str(obj.get("stage") or ""),
        verdict=str(obj.get("verdict") or ""),
        message=str(obj.get("message") or ""),
        raw=obj,
    )


# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    """How the source programs were held out (summary.json ``split``)."""

    by: str  # "program" or "workload"
    seed: int
    test: float
    validation: float
    keys: Dict[str, int]  # per split: distinct keys (programs or families)
    units: Dict[str, int]
    states: Dict[str, int]


@dataclass(frozen=True)
class Leakage:
    """The leakage check's figures (summary.json ``leakage``)."""

    checked_states: int
    checked_labels: int
    train_hashes: int
    test_states_in_train: int
    test_labels_in_train: int
    validation_states_in_train: int
    validation_labels_in_train: int
    units_in_two_splits: int

    @property
    def clean(self) -> bool:
        """No held-out state or label reaches train, no unit is in two splits."""
        return not (
            self.test_states_in_train
            or self.test_labels_in_train
            or self.validation_states_in_train
            or self.validation_labels_in_train
            or self.units_in_two_splits
        )


def _ints(d: Any) -> Dict[str, int]:
    return {str(k): int(v) for k, v in (d or {}).items() if isinstance(v, (int, float))}


@dataclass(frozen=True)
class Summary:
    """summary.json: what the build verified, kept, rejected and wrote."""

    schema: int
    name: str
    config_hash: str
    seed: int
    units: int
    states: int
    verified: int
    kept_samples: int
    rejected: int
    rejected_by_stage: Dict[str, int]
    rejected_by_verdict: Dict[str, int]
    rejected_by_strategy: Dict[str, int]
    filtered: Dict[str, int]
    records: Dict[str, int]  # train_single, train_multi, eval_single, ...
    split: Split
    leakage: Leakage
    per_strategy: Dict[str, Dict[str, int]]
    per_level: Dict[str, Dict[str, int]]
    per_depth: Dict[str, Dict[str, int]]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Summary":
        rej = obj.get("rejected") or {}
        sp = obj.get("split") or {}
        lk = obj.get("leakage") or {}
        return cls(
            schema=int(obj.get("schema") or 0),
            name=str(obj.get("name", "")),
            config_hash=str(obj.get("config_hash", "")),
            seed=int(obj.get("seed") or 0),
            units=int(obj.get("units") or 0),
            states=int(obj.get("states") or 0),
            verified=int(obj.get("verified") or 0),
            kept_samples=int(obj.get("kept_samples") or 0),
            rejected=int(rej.get("total") or 0),
            rejected_by_stage=_ints(rej.get("by_stage")),
            rejected_by_verdict=_ints(rej.get("by_verdict")),
            rejected_by_strategy=_ints(rej.get("by_strategy")),
            filtered=_ints(obj.get("filtered")),
            records=_ints(obj.get("records")),
            split=Split(
                str(sp.get("by", "")),
                int(sp.get("seed") or 0),
                float(sp.get("test") or 0),
                float(sp.get("validation") or 0),
                _ints(sp.get("keys")),
                _ints(sp.get("units")),
                _ints(sp.get("states")),
            ),
            leakage=Leakage(*(int(lk.get(f) or 0) for f in Leakage.__dataclass_fields__)),
            per_strategy={str(k): _ints(v) for k, v in (obj.get("per_strategy") or {}).items()},
            per_level={str(k): _ints(v) for k, v in (obj.get("per_level") or {}).items()},
            per_depth={str(k): _ints(v) for k, v in (obj.get("per_depth") or {}).items()},
            raw=dict(obj),
        )


# ---------------------------------------------------------------------------
# A built dataset
# ---------------------------------------------------------------------------


def _jsonl(path: Path) -> Iterator[Dict[str, Any]]:
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise LeirIOError(f"{path} does not exist", rule="dataset.file", subject=str(path)) from None
    except OSError as e:
        raise LeirIOError(f"cannot read {path}: {e.strerror}", rule="dataset.file", subject=str(path)) from None
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ParseError(f"{path}: line {n} is not JSON: {e.msg}", rule="dataset.jsonl",
                                 subject=str(path), line=n, column=e.colno) from None
            if not isinstance(obj, dict):
                raise ParseError(f"{path}: line {n} is not a JSON object", rule="dataset.jsonl",
                                 subject=str(path), line=n, column=1)
            yield obj


class Dataset:
    """A built dataset directory (what ``leir dataset build`` writes).

    The split iterators read their file lazily, one typed record per line:
    :meth:`train`, :meth:`test` (``eval.jsonl``; :meth:`eval` is the same),
    :meth:`validation`, :meth:`archive`, :meth:`rejections`. Raises
    :class:`leir.LeirIOError` (rule ``dataset.incomplete``) for a directory
    without summary.json (not built, or shards still running)."""

    __slots__ = ("path", "_summary")

    def __init__(self, path: PathLike) -> None:
        self.path = Path(os.fspath(path))
        self._summary: Optional[Summary] = None
        if not self.path.is_dir():
            raise LeirIOError(f"{self.path} is not a directory", rule="dataset.file", subject=str(self.path))
        if not (self.path / "summary.json").is_file():
            raise LeirIOError(
                f"{self.path} holds no built dataset (no summary.json: not built, or shards are still running)",
                rule="dataset.incomplete",
                subject=str(self.path),
            )

    @property
    def summary(self) -> Summary:
        if self._summary is None:
            p = self.path / "summary.json"
            try:
                obj = json.loads(p.read_text(encoding="utf-8"))
            except json.JSONDecodeError as e:
                raise ParseError(f"{p} is not JSON: {e.msg}", rule="dataset.summary", subject=str(p),
                                 line=e.lineno, column=e.colno) from None
            self._summary = Summary.from_json(obj)
        return self._summary

    @property
    def card(self) -> str:
        """The dataset card (README.md: a YAML header for the Hugging Face
        ``datasets`` loader, the split rule and leakage check, tables)."""
        return (self.path / "README.md").read_text(encoding="utf-8")

    def train(self) -> Iterator[TrainRecord]:
        for obj in _jsonl(self.path / "train.jsonl"):
            yield TrainRecord(_messages(obj), obj)

    def test(self) -> Iterator[Prompt]:
        """The test split's prompts (``eval.jsonl``), what ``leir eval`` scores."""
        for obj in _jsonl(self.path / "eval.jsonl"):
            yield _prompt(obj)

    eval = test

    def validation(self) -> Iterator[Prompt]:
        for obj in _jsonl(self.path / "validation.jsonl"):
            yield _prompt(obj)

    def prompts(self) -> Iterator[Prompt]:
        """Test, then validation prompts."""
        yield from self.test()
        yield from self.validation()

    def prompt(self, id: str) -> Prompt:
        """The test or validation prompt with this id
        (:class:`leir.NotFoundError` when none)."""
        for p in self.prompts():
            if p.id == id:
                return p
        raise NotFoundError(f"no prompt of {self.path} has id {id!r}", rule="dataset.prompt", subject=id)

    def archive(self) -> Iterator[ArchiveRecord]:
        for obj in _jsonl(self.path / "archive.jsonl"):
            yield _archive(obj)

    def samples(self, split: Optional[str] = None) -> Iterator[Sample]:
        """Every archived sample (of records of ``split``: train,
        validation, test)."""
        for rec in self.archive():
            if split is None or rec.split == split:
                yield from rec.samples

    def rejections(self) -> Iterator[Rejection]:
        for obj in _jsonl(self.path / "rejections.jsonl"):
            yield _rejection(obj)

    def score(self, answers: Any, **options: Any) -> Any:
        """:func:`leir.eval.score` of ``answers`` against this dataset."""
        from .eval import score

        return score(answers, self, **options)

    def __fspath__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"<leir.Dataset {self.path}>"


def open_dataset(path: PathLike) -> Dataset:
    """``Dataset(path)``."""
    return Dataset(path)


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """Passed to ``build(progress=...)`` after every unit."""

    units_total: int  # of this shard
    units_done: int  # of this shard, resumed ones included
    units_resumed: int  # found finished by an earlier run
    samples_verified: int  # by this run
    samples_kept: int
    elapsed_s: float


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build` did: ``complete`` when every unit of the config
    is finished and the outputs are written (then ``summary`` is set)."""

    out: Path
    complete: bool
    units_total: int  # of the whole config
    units_done: int
    summary: Optional[Summary]

    def dataset(self) -> Dataset:
        """The built dataset (:class:`leir.LeirIOError` while incomplete)."""
        return Dataset(self.out)


def _config_text(config: Union[PathLike, Mapping[str, Any]]) -> Tuple[bytes, Optional[str], Optional[Path]]:
    """(YAML text, its directory, its path) of a config path or mapping."""
    if isinstance(config, Mapping):
        # JSON is YAML (flow style), which the config reader takes as is
        return json.dumps(config).encode("utf-8"), None, None
    path = Path(os.fspath(config))
    try:
        return path.read_bytes(), str(path.parent), path
    except OSError as e:
        raise LeirIOError(f"cannot read {path}: {e.strerror}", rule="dataset.config", subject=str(path)) from None


def _default_out(path: Optional[Path]) -> Path:
    if path is None:
        raise TypeError("build(config_mapping) needs out=DIR")
    s = str(path)
    for ext in (".yaml", ".yml"):
        if s.endswith(ext) and len(s) > len(ext):
            return Path(s[: -len(ext)])
    return Path(s + ".dataset")


def _open(text: bytes, base: Optional[str], out: Path, opts: _r.DatasetOptions) -> ctypes.c_void_p:
    h = out_ptr()
    call(_r.leir_dataset_open, ctypes.byref(h), text, len(text), None if base is None else os.fsencode(base),
         os.fsencode(out), ctypes.byref(opts))
    return h


def build(
    config: Union[PathLike, Mapping[str, Any]],
    out: Optional[PathLike] = None,
    *,
    base_dir: Optional[PathLike] = None,
    shard: Optional[Tuple[int, int]] = None,
    workloads_dir: Optional[PathLike] = None,
    progress: Optional[Callable[[Progress], Optional[bool]]] = None,
) -> BuildResult:
    """Builds a dataset, as ``leir dataset build CONFIG --out OUT``.

    ``config`` is the path of a YAML config (docs/dataset.md; relative
    paths in it are relative to its directory) or the config as a mapping
    (relative paths from ``base_dir``, default the current directory).
    ``out`` defaults to the config's path without ``.yaml``. ``shard`` is
    ``(K, N)``: build units K, K+N, ... only. ``workloads_dir`` overrides the
    config's ``sources.workloads_dir``; with neither, the catalogue is found
    as :class:`leir.catalogue.Catalogue` finds it. ``progress(p)`` is called
    after every unit; returning True stops the build.

    A build resumes a killed one over the same directory and gives
    byte-identical files for the same config. Ctrl-C (KeyboardInterrupt)
    stops the build within the unit it is building (that unit is redone
    on resume) and is raised again; a stop asked by ``progress`` raises
    :class:`leir.CancelledError`. Other failures raise the matching
    :class:`leir.LeirError` (ParseError for the config, with line and
    column; InvalidProgramError with rule ``dataset.leakage`` when a
    held-out state or label reaches train)."""
    _require()
    text, cfg_dir, cfg_path = _config_text(config)
    base = os.fspath(base_dir) if base_dir is not None else cfg_dir
    out_path = Path(os.fspath(out)) if out is not None else _default_out(cfg_path)

    cancel = ctypes.c_int(0)
    raised: List[BaseException] = []

    def on_progress(pp: Any, payload: Any) -> None:
        if progress is None or raised:
            return
        p = pp.contents
        try:
            stop = progress(Progress(int(p.units_total), int(p.units_done), int(p.units_resumed),
                                     int(p.samples_verified), int(p.samples_kept), float(p.elapsed_s)))
        except BaseException as e:  # raised again by build, after the run stops
            raised.append(e)
            stop = True
        if stop:
            cancel.value = 1

    o = _r.DatasetOptions()
    call(_r.leir_dataset_options_init, ctypes.byref(o), ctypes.sizeof(_r.DatasetOptions))
    if shard is not None:
        o.shard_index, o.shard_count = int(shard[0]), int(shard[1])
    cb = _r.DATASET_PROGRESS_FN(on_progress)
    o.progress = cb
    o.cancel = ctypes.pointer(cancel)

    explicit = workloads_dir if workloads_dir is not None else os.environ.get("LEIR_WORKLOADS_DIR")
    if workloads_dir is not None:
        o.workloads_dir = os.fsencode(workloads_dir)
    try:
        h = _open(text, base, out_path, o)
    except NotFoundError as e:
        # No catalogue where the library looks (a source tree, not an
        # install): the source tree's, as Catalogue() does. Only when the
        # directory that failed is the library's default, never one the
        # config or the caller named.
        from .catalogue import _tree_dir, default_dir_error

        tree = _tree_dir()
        d = default_dir_error() if explicit is None and e.rule == "workload.dir" else None
        if tree is None or d is None or d.subject != e.subject:
            raise
        o.workloads_dir = os.fsencode(tree)
        h = _open(text, base, out_path, o)

    failed: List[BaseException] = []

    def work() -> None:
        try:
            call(_r.leir_dataset_run, h)  # the last error is per thread: read here
        except BaseException as e:
            failed.append(e)

    try:
        t = threading.Thread(target=work, name="leir-dataset-build", daemon=True)
        t.start()
        interrupted: Optional[BaseException] = None
        while t.is_alive():
            try:
                t.join(0.2)
            except KeyboardInterrupt as e:  # stop within the unit, then raise it
                interrupted = e
                cancel.value = 1
        if interrupted is not None:
            raise interrupted
        if raised:
            raise raised[0]
        if failed:
            raise failed[0]
        total, done = ctypes.c_uint64(), ctypes.c_uint64()
        _r.leir_dataset_units(h, ctypes.byref(total), ctypes.byref(done))
        complete = bool(_r.leir_dataset_complete(h))
        summary = None
        if complete:
            js, n = out_ptr(), ctypes.c_size_t()
            call(_r.leir_dataset_summary_json, h, ctypes.byref(js), ctypes.byref(n))
            summary = Summary.from_json(json.loads(_lib.take_string(js, n.value)))
        return BuildResult(out_path, complete, int(total.value), int(done.value), summary)
    finally:
        _r.leir_dataset_free(h)
        del cb  # the callback outlives every call that may use it
