"""The workload catalogue (experimental): the Step-TP workloads as LEIR
programs at any shape, as ``leir workloads list|show|emit`` gives them
(docs/workloads.md; include/leir/experimental/workload.h)."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _lib
from . import _research_lib as _r
from .errors import LeirError, NotFoundError, UnsupportedError, call, error_for, out_ptr
from .program import DTYPES, Program, _bytes

__all__ = ["Catalogue", "Workload", "WorkloadParam", "workloads", "emit", "SHAPES"]

#: The starting shapes of :meth:`Workload.emit`, in the order of the C enum
#: leir_shape_kind.
SHAPES: Tuple[str, ...] = ("default", "small", "random")

PathLike = Union[str, "os.PathLike[str]"]


def _require() -> None:
    if not _r.CATALOG_AVAILABLE:
        raise UnsupportedError("this libleir has no workload catalogue (leir_catalog_open)")


def _tree_dir() -> Optional[str]:
    """The catalogue of the source tree the package comes from, if any."""
    for root in _lib._tree_roots():
        d = root / "workloads"
        if d.is_dir():
            return str(d)
    return None


def _open(directory: Optional[str]) -> ctypes.c_void_p:
    o = _r.CatalogOptions()
    _r.leir_catalog_options_init(ctypes.byref(o))
    o.size = ctypes.sizeof(_r.CatalogOptions)
    o.dir = os.fsencode(directory) if directory is not None else None
    h = out_ptr()
    call(_r.leir_catalog_open, ctypes.byref(h), ctypes.byref(o))
    return h


def default_dir_error() -> Optional[LeirError]:
    """The error the library's own lookup (no directory given) fails with,
    or None when it finds a catalogue."""
    try:
        h = _open(None)
    except NotFoundError as e:
        return e
    _r.leir_catalog_free(h)
    return None


@dataclass(frozen=True)
class WorkloadParam:
    """One parameter, in the reference's order (the corpus's ``shape_args``):
    integers hold integral values (``is_float`` False)."""

    name: str
    is_float: bool
    default: Union[int, float]
    small: Union[int, float]
    min: Union[int, float]
    max: Union[int, float]


def _num(v: float, is_float: bool) -> Union[int, float]:
    return float(v) if is_float else int(v)


class Workload:
    """One catalogue entry (borrowed from its :class:`Catalogue`, which it
    keeps alive)."""

    __slots__ = ("_cat", "_ptr")

    def __init__(self, cat: "Catalogue", ptr: int) -> None:
        self._cat = cat
        self._ptr = ptr

    @property
    def _p(self) -> int:
        self._cat._handle  # raises when the catalogue was closed
        return self._ptr

    @property
    def name(self) -> str:
        """The file's name ("ReLU")."""
        return _lib.text(_r.leir_workload_name(self._p))

    @property
    def level(self) -> int:
        """1 or 2 (0 when the file sets none)."""
        return int(_r.leir_workload_level(self._p))

    @property
    def qualified_name(self) -> str:
        """"level1/ReLU", as ``leir workloads list`` prints it."""
        return f"level{self.level}/{self.name}"

    @property
    def index(self) -> int:
        """The reference's model_index (-1 when none)."""
        return int(_r.leir_workload_index(self._p))

    @property
    def summary(self) -> str:
        return _lib.text(_r.leir_workload_summary(self._p))

    @property
    def traced(self) -> bool:
        """False for the workloads the reference cannot trace to LEIR
        (dataset builds leave them out)."""
        return bool(_r.leir_workload_traced(self._p))

    @property
    def dtype(self) -> str:
        """The default floating dtype of the default and random shapes."""
        d = int(_r.leir_workload_dtype(self._p))
        return DTYPES[d] if 0 <= d < len(DTYPES) else str(d)

    @property
    def template(self) -> str:
        """The LEIR template, ``$NAME`` and ``$(EXPR)`` holes unfilled."""
        return _lib.text(_r.leir_workload_template(self._p))

    @property
    def file(self) -> str:
        """The YAML file it was read from ("" for one added as text)."""
        return _lib.text(_r.leir_workload_file(self._p))

    @property
    def params(self) -> Tuple[WorkloadParam, ...]:
        out = []
        for i in range(_r.leir_workload_param_count(self._p)):
            p = _r.WorkloadParam()
            call(_r.leir_workload_param_get, self._p, i, ctypes.byref(p))
            f = bool(p.is_float)
            out.append(
                WorkloadParam(
                    _lib.text(p.name),
                    f,
                    _num(p.default_value, f),
                    _num(p.small_value, f),
                    _num(p.min, f),
                    _num(p.max, f),
                )
            )
        return tuple(out)

    def _emit(
        self, shape: str, seed: int, args: Optional[Sequence[float]], dtype: Optional[str]
    ) -> Tuple[Program, str, Dict[str, Union[int, float]]]:
        if shape not in SHAPES:
            raise ValueError(f"shape is one of {', '.join(SHAPES)}, not {shape!r}")
        o = _r.EmitOptions()
        _r.leir_emit_options_init(ctypes.byref(o))
        o.size = ctypes.sizeof(_r.EmitOptions)
        o.shape = SHAPES.index(shape)
        o.seed = seed
        keep: List[object] = []
        if args:
            arr = (ctypes.c_double * len(args))(*[float(a) for a in args])
            keep.append(arr)
            o.args = ctypes.cast(arr, ctypes.POINTER(ctypes.c_double))
            o.nargs = len(args)
        if dtype is not None:
            o.dtype = _bytes(dtype)
        params = self.params
        values = (ctypes.c_double * max(1, len(params)))()
        yaml = out_ptr()
        call(_r.leir_workload_emit, self._p, ctypes.byref(o), ctypes.byref(yaml), None, values, len(params))
        text = _lib.take_string(yaml)
        # The program from its file: the name and the input domains come with
        # it (the C program_out has neither), so seeded inputs and
        # verification draw the values the workload declares.
        program = Program.from_yaml(text)
        chosen = {p.name: _num(values[i], p.is_float) for i, p in enumerate(params)}
        return program, text, chosen

    def emit(
        self,
        shape: str = "default",
        *,
        seed: int = 0,
        args: Optional[Sequence[float]] = None,
        dtype: Optional[str] = None,
    ) -> Program:
        """The program at a shape (``leir workloads emit``), with its
        signature, name and input domains set (as the program file has them)
        and its checks passed. ``shape`` is
        "default" (the reference's, in the workload's dtype), "small" (runs
        in milliseconds on the interpreter; f64) or "random" (drawn from the
        sampling ranges with ``seed``); ``args`` override the first
        parameters, in the reference's order; ``dtype`` sets the floating
        dtype. Raises :class:`leir.ArgumentError` for a bad argument or a
        failed constraint."""
        return self._emit(shape, seed, args, dtype)[0]

    def emit_yaml(
        self,
        shape: str = "default",
        *,
        seed: int = 0,
        args: Optional[Sequence[float]] = None,
        dtype: Optional[str] = None,
    ) -> str:
        """The program file (``*.leir.yaml``, with the input domains) that
        ``leir workloads emit`` prints."""
        return self._emit(shape, seed, args, dtype)[1]

    def shape_values(
        self,
        shape: str = "default",
        *,
        seed: int = 0,
        args: Optional[Sequence[float]] = None,
        dtype: Optional[str] = None,
    ) -> Dict[str, Union[int, float]]:
        """The parameter values :meth:`emit` chooses, by name."""
        return self._emit(shape, seed, args, dtype)[2]

    def __repr__(self) -> str:
        return f"<leir.Workload {self.qualified_name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workload) and other._ptr == self._ptr

    def __hash__(self) -> int:
        return hash(self._ptr)


class Catalogue:
    """A catalogue of workloads, read from a directory of YAML files.

    ``Catalogue()`` finds the directory as the library does (``$LEIR_WORKLOADS_DIR``,
    the catalogue installed beside the library, the configured data
    directory; docs/workloads.md) and, when none of those exists, uses the
    ``workloads/`` folder of the source tree the package comes from.
    Immutable once open; iterating gives the workloads in file-name order."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self, dir: Optional[PathLike] = None) -> None:
        _require()
        self._h = ctypes.c_void_p()
        if dir is not None:
            self._h = _open(os.fspath(dir))
            return
        try:
            self._h = _open(None)
        except NotFoundError:
            tree = _tree_dir()
            if tree is None:
                raise
            self._h = _open(tree)

    @classmethod
    def from_texts(cls, *texts: Union[str, bytes], labels: Optional[Sequence[str]] = None) -> "Catalogue":
        """A catalogue of workload files given as YAML text (``labels`` name
        them in errors)."""
        _require()
        c = cls.__new__(cls)
        c._h = out_ptr()
        call(_r.leir_catalog_new, ctypes.byref(c._h))
        for i, t in enumerate(texts):
            raw = _bytes(t)
            label = _bytes(labels[i]) if labels is not None else None
            call(_r.leir_catalog_add_text, c._h, raw, len(raw), label)
        return c

    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise ValueError("the catalogue was closed")
        return self._h

    def close(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _r.leir_catalog_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Catalogue":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def dir(self) -> str:
        """The directory it was read from ("" for :meth:`from_texts`)."""
        return _lib.text(_r.leir_catalog_dir(self._handle))

    def __len__(self) -> int:
        return int(_r.leir_catalog_count(self._handle))

    def __iter__(self) -> Iterator[Workload]:
        h = self._handle
        for i in range(_r.leir_catalog_count(h)):
            yield Workload(self, _r.leir_catalog_get(h, i))

    def __getitem__(self, name: str) -> Workload:
        """By name ("ReLU") or level and name ("level1/ReLU");
        :class:`leir.NotFoundError` when absent."""
        return self.find(name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.find(name)
        except NotFoundError:
            return False
        return True

    def find(self, name: str) -> Workload:
        h = self._handle
        _lib.leir_error_clear()
        before = _lib.leir_error_sequence() if _lib.leir_error_sequence is not None else None
        ptr = _r.leir_catalog_find(h, _bytes(name))
        if not ptr:
            raise error_for(-14, before)
        return Workload(self, ptr)

    def workloads(self, *, level: Optional[int] = None, traced: Optional[bool] = None) -> List[Workload]:
        """The workloads, optionally of one level and/or by whether the
        reference traces them."""
        return [
            w
            for w in self
            if (level is None or w.level == level) and (traced is None or w.traced == traced)
        ]

    def names(self) -> List[str]:
        """Every ``levelN/name``, in catalogue order."""
        return [w.qualified_name for w in self]

    def __repr__(self) -> str:
        if not self._h:
            return "<leir.Catalogue (closed)>"
        return f"<leir.Catalogue {len(self)} workloads from {self.dir or '(text)'}>"


def workloads(dir: Optional[PathLike] = None, **filters: Optional[object]) -> List[Workload]:
    """``Catalogue(dir).workloads(**filters)`` (``level``, ``traced``)."""
    return Catalogue(dir).workloads(**filters)  # type: ignore[arg-type]


def emit(
    name: str,
    shape: str = "default",
    *,
    seed: int = 0,
    args: Optional[Sequence[float]] = None,
    dtype: Optional[str] = None,
    dir: Optional[PathLike] = None,
) -> Program:
    """One workload's program (see :meth:`Workload.emit`)."""
    return Catalogue(dir).find(name).emit(shape, seed=seed, args=args, dtype=dtype)

