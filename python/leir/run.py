"""Running programs on numpy arrays, verification and timing."""

from __future__ import annotations

import ctypes
import json
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _defaults, _lib
from .errors import ArgumentError, LimitError, ShapeError, call, error_for, out_ptr
from .program import DTYPES, Program, TensorDecl, _bytes, _decl_from_c

__all__ = [
    "Backend",
    "Kernel",
    "Verdict",
    "Timing",
    "backends",
    "run",
    "verify",
    "bench",
    "time",
    "seeded_inputs",
    "lower",
    "NUMPY_DTYPES",
]

#: numpy element type of each LEIR dtype. bf16 has no numpy type: its
#: buffers are uint16 bit patterns (the upper half of a float32).
NUMPY_DTYPES: Dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
}

_BACKEND_NO_CACHE = 0x1
_BACKEND_CHECK_ALL_BOUNDS = 0x2
_BACKEND_LOWER_ONLY = 0x4
_BACKEND_FP_CONTRACT = 0x8
_VERIFY_REFERENCE_RULE = 0x1
_VERIFY_STRICT_PARALLEL = 0x2
_BENCH_NO_FLUSH = 0x1


def backends() -> List[str]:
    """Backends compiled into the loaded library ("interp", "cpu", and
    "cuda" when built); one may still fail to open."""
    return [_lib.text(_lib.leir_backend_name_at(i)) for i in range(_lib.leir_backend_count())]


class Backend:
    """An opened backend: "interp" (the reference evaluator), "cpu" (C
    compiled by $CC, run in a sandboxed child process; the default) or
    "cuda". Keyword options are the fields of leir_backend_options:
    compiler, compiler_flags, cache_dir, device, threads, timeout_s,
    compile_timeout_s, memory_limit_bytes, max_buffer_bytes,
    max_evaluations, plus no_cache, check_all_bounds and fp_contract
    (flags; fp_contract fuses products into the sums they feed, rounded
    once, as LEIR_BACKEND_FP_CONTRACT). Use as a context manager or call
    :meth:`close`; kernels made from a backend keep it alive."""

    __slots__ = ("_h", "_keep", "_kernels", "__weakref__")

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        self._h = ctypes.c_void_p()
        self._kernels: "weakref.WeakSet[Kernel]" = weakref.WeakSet()
        o = _defaults.init(_lib.BackendOptions, "leir_backend_options")
        self._keep: List[bytes] = []
        for k, v in options.items():
            if k == "no_cache":
                o.flags |= _BACKEND_NO_CACHE if v else 0
            elif k == "check_all_bounds":
                o.flags |= _BACKEND_CHECK_ALL_BOUNDS if v else 0
            elif k == "fp_contract":
                o.flags |= _BACKEND_FP_CONTRACT if v else 0
            elif k == "lower_only":
                o.flags |= _BACKEND_LOWER_ONLY if v else 0
            elif k in ("compiler", "compiler_flags", "cache_dir"):
                b = None if v is None else _bytes(v)
                if b is not None:
                    self._keep.append(b)
                setattr(o, k, b)
            elif k in {f[0] for f in _lib.BackendOptions._fields_} and k != "size":
                setattr(o, k, v)
            else:
                raise TypeError(f"unknown backend option {k!r}")
        call(_lib.leir_backend_open, ctypes.byref(self._h), None if name is None else _bytes(name), ctypes.byref(o))

    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise ValueError("the backend was closed")
        return self._h

    @property
    def name(self) -> str:
        return _lib.text(_lib.leir_backend_get_name(self._handle))

    def close(self) -> None:
        """Frees the backend now, and first every kernel made from it (the
        library requires that order)."""
        for k in list(self._kernels):
            k.close()
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _lib.leir_backend_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<leir.Backend {self.name if self._h else '(closed)'}>"

    def lower(self, program: Program) -> str:
        """Lowered source text (C for cpu, CUDA C for cuda)."""
        out, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_backend_lower, self._handle, program._handle, ctypes.byref(out), ctypes.byref(n))
        return _lib.take_string(out, n.value)

    def kernel(self, program: Program) -> "Kernel":
        return Kernel(program, self)


BackendLike = Union[Backend, str, None]


def _backend(b: BackendLike) -> Backend:
    return b if isinstance(b, Backend) else Backend(b)


class Kernel:
    """A checked, compiled program ready to run many times on numpy arrays.
    ``buffers`` is its signature (inputs, then outputs)."""

    __slots__ = ("_h", "backend", "buffers", "__weakref__")

    def __init__(self, program: Program, backend: BackendLike = None) -> None:
        self._h = ctypes.c_void_p()
        self.backend = _backend(backend)  # the backend must outlive the kernel
        h = out_ptr()
        _lib.leir_error_clear()
        st = _lib.leir_kernel_new(ctypes.byref(h), self.backend._handle, program._handle)
        if st != 0:
            err = error_for(st)
            if st == -9:  # LEIR_ERR_COMPILE
                err.log = _lib.text(_lib.leir_backend_compile_log(self.backend._handle))  # type: ignore[attr-defined]
            raise err
        self._h = h
        self.backend._kernels.add(self)
        self.buffers: List[TensorDecl] = []
        for i in range(_lib.leir_kernel_buffer_count(h)):
            d = _lib.TensorDecl()
            call(_lib.leir_kernel_buffer, h, i, ctypes.byref(d))
            self.buffers.append(_decl_from_c(d))

    @property
    def inputs(self) -> List[TensorDecl]:
        return [d for d in self.buffers if d.role == "input"]

    @property
    def outputs(self) -> List[TensorDecl]:
        return [d for d in self.buffers if d.role == "output"]

    def close(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            _lib.leir_kernel_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- arrays --------------------------------------------------------------
    @staticmethod
    def _input_array(d: TensorDecl, value: Any) -> np.ndarray:
        want = NUMPY_DTYPES[d.dtype]
        arr = np.asarray(value)
        if arr.dtype == object or arr.dtype.kind not in "biufc":
            raise ArgumentError(
                f"input {d.name}: expected numbers ({d.dtype}), got an array of {arr.dtype}",
                rule="run.buffer-dtype",
                subject=d.name,
            )
        if arr.dtype != want:
            if arr.dtype.kind == "c":
                raise ArgumentError(
                    f"input {d.name}: complex values cannot become {d.dtype}",
                    rule="run.buffer-dtype",
                    subject=d.name,
                )
            if d.dtype == "bf16" and arr.dtype.kind == "f":
                raise ArgumentError(
                    f"input {d.name} is bf16: pass its bit patterns as uint16 "
                    "(e.g. (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))",
                    rule="run.buffer-dtype",
                    subject=d.name,
                )
            arr = arr.astype(want)
        if arr.shape != d.shape:
            raise ShapeError(
                f"input {d.name} must have shape {d.shape} ({d.dtype}), got {arr.shape}",
                rule="run.buffer-shape",
                subject=d.name,
            )
        # The library reads dense row-major memory: strided, reversed or
        # Fortran-ordered arrays are copied to C order.
        return np.ascontiguousarray(arr)

    @staticmethod
    def _output_array(d: TensorDecl, given: Optional[np.ndarray]) -> np.ndarray:
        want = NUMPY_DTYPES[d.dtype]
        if given is None:
            return np.zeros(d.shape, dtype=want)
        if not isinstance(given, np.ndarray):
            raise ArgumentError(f"out[{d.name!r}] must be a numpy array", rule="run.buffer-dtype", subject=d.name)
        if given.dtype != want:
            raise ArgumentError(
                f"output {d.name} is {d.dtype}: out array must be {want}, got {given.dtype}",
                rule="run.buffer-dtype",
                subject=d.name,
            )
        if given.shape != d.shape:
            raise ShapeError(
                f"output {d.name} must have shape {d.shape}, got {given.shape}",
                rule="run.buffer-shape",
                subject=d.name,
            )
        if not given.flags.writeable:
            raise ArgumentError(f"out array for {d.name} is read-only", rule="run.buffer-readonly", subject=d.name)
        return given

    def run(
        self,
        inputs: Union[Mapping[str, Any], Sequence[Any], None] = None,
        *,
        out: Optional[Mapping[str, np.ndarray]] = None,
        **kw_inputs: Any,
    ) -> Dict[str, np.ndarray]:
        """Runs once. ``inputs`` maps every input name to an array (or
        anything numpy converts) of the declared shape (a list or tuple
        gives the arrays in signature order); values of another
        numeric dtype are converted, non-contiguous arrays copied to C order.
        Returns ``{output name: array}`` in signature order. ``out`` may
        give arrays to write outputs into (declared dtype and shape,
        writeable; non-contiguous ones are filled through a copy). Raises
        :class:`leir.ShapeError` / :class:`leir.ArgumentError` before
        anything runs, :class:`leir.LeirRuntimeError` /
        :class:`leir.LeirTimeoutError` from the run."""
        if not self._h:
            raise ValueError("the kernel was closed")
        if isinstance(inputs, (list, tuple)):  # arrays in signature order
            if len(inputs) != len(self.inputs):
                raise ArgumentError(
                    f"expected {len(self.inputs)} input array(s) "
                    f"({', '.join(d.name for d in self.inputs) or 'none'}), got {len(inputs)}",
                    rule="run.buffer-count",
                )
            inputs = {d.name: a for d, a in zip(self.inputs, inputs)}
        given: Dict[str, Any] = dict(inputs or {})
        given.update(kw_inputs)
        names = {d.name for d in self.inputs}
        unknown = sorted(set(given) - names)
        if unknown:
            raise ArgumentError(
                f"unknown input(s) {', '.join(unknown)}; the program's inputs are "
                f"{', '.join(d.name for d in self.inputs) or '(none)'}",
                rule="run.buffer-name",
                subject=unknown[0],
            )
        outs = dict(out or {})
        bad = sorted(set(outs) - {d.name for d in self.outputs})
        if bad:
            raise ArgumentError(f"out names unknown output(s) {', '.join(bad)}", rule="run.buffer-name", subject=bad[0])
        arrays: List[np.ndarray] = []
        results: Dict[str, np.ndarray] = {}
        write_back: List[Tuple[np.ndarray, np.ndarray]] = []
        for d in self.buffers:
            if d.role == "input":
                if d.name not in given:
                    raise ArgumentError(f"missing input {d.name} ({d.dtype}, shape {d.shape})", rule="run.buffer-name", subject=d.name)
                arrays.append(self._input_array(d, given[d.name]))
            else:
                target = self._output_array(d, outs.get(d.name))
                buf = target if target.flags.c_contiguous else np.ascontiguousarray(target)
                if buf is not target:
                    write_back.append((target, buf))
                arrays.append(buf)
                results[d.name] = target
        n = len(arrays)
        ptrs = (ctypes.c_void_p * max(1, n))(*[a.ctypes.data for a in arrays])
        sizes = (ctypes.c_size_t * max(1, n))(*[a.nbytes for a in arrays])
        if _lib.leir_kernel_run_sized is not None:
            call(_lib.leir_kernel_run_sized, self._h, ptrs, sizes, n)
        else:  # an older libleir: the checks above are the only ones
            call(_lib.leir_kernel_run, self._h, ptrs, n)
        for target, buf in write_back:
            target[...] = buf
        return results

    __call__ = run

    def time(self, **options: Any) -> "Timing":
        """Times this kernel alone (see :func:`bench`)."""
        return _time_kernels([self], options)[0]


def run(
    program: Program,
    inputs: Union[Mapping[str, Any], Sequence[Any], None] = None,
    *,
    backend: BackendLike = None,
    out: Optional[Mapping[str, np.ndarray]] = None,
    **kw_inputs: Any,
) -> Dict[str, np.ndarray]:
    """Compiles ``program`` on ``backend`` (default "cpu"; "interp" needs
    no compiler) and runs it once on ``inputs`` (see :meth:`Kernel.run`).
    Returns the outputs as numpy arrays."""
    with Kernel(program, backend) as k:
        return k.run(inputs, out=out, **kw_inputs)


def seeded_inputs(
    program: Program, seed: int = 1, set: int = 0, *, max_bytes: int = 1 << 30
) -> Dict[str, np.ndarray]:
    """The inputs verification uses: input set ``set`` of ``seed`` (0
    standard normal, 1 normal x 10, 2 uniform [-1, 1]; integer inputs in
    the valid range of the dimension they index). Signatures needing more
    than ``max_bytes`` in all raise :class:`leir.LimitError` before
    anything is allocated."""
    sig = program.effective_signature()
    total = sum(d.size * NUMPY_DTYPES[d.dtype].itemsize for d in sig)
    if total > max_bytes:
        raise LimitError(
            f"the program's buffers need {total} bytes, above max_bytes={max_bytes}",
            rule="limit.buffer-bytes",
        )
    arrays = [np.zeros(d.shape, dtype=NUMPY_DTYPES[d.dtype]) for d in sig]
    ptrs = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
    p = program
    if not program.signature:
        p = program.copy()
        p.infer_signature()
    call(_lib.leir_program_fill_inputs, p._handle, seed, set, ptrs, len(arrays))
    return {d.name: a for d, a in zip(sig, arrays) if d.role == "input"}


def lower(program: Program, target: str = "c", **options: Any) -> str:
    """Lowered source: ``target`` "c" (the cpu backend's C) or "cuda". No
    compiler or device is needed."""
    name = {"c": "cpu", "cpu": "cpu", "cuda": "cuda"}.get(target)
    if name is None:
        raise ArgumentError(f"unknown target {target!r} (c or cuda)", rule="usage")
    with Backend(name, lower_only=True, **options) as b:
        return b.lower(program)


class Verdict:
    """The result of :func:`verify`: ``name`` ("EQUAL", "CLOSE",
    "MISMATCH", "INVALID", "COMPILE_ERROR", "RUNTIME_ERROR", "TIMEOUT", and
    whatever later libraries add), ``passed`` (EQUAL or CLOSE) and
    ``report``, the library's JSON report as a dict with every field it
    has. Report fields are also attributes (``v.max_abs_err``,
    ``v.message``, ``v.outputs``)."""

    __slots__ = ("report",)

    def __init__(self, report: Dict[str, Any]) -> None:
        self.report = report

    @property
    def name(self) -> str:
        return str(self.report.get("verdict", "UNKNOWN"))

    @property
    def passed(self) -> bool:
        if "pass" in self.report:
            return bool(self.report["pass"])
        return self.name in ("EQUAL", "CLOSE")

    def __getattr__(self, key: str) -> Any:
        try:
            return self.report[key]
        except KeyError:
            raise AttributeError(f"the verify report has no field {key!r}") from None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.name == other
        return isinstance(other, Verdict) and other.report == self.report

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        msg = self.report.get("message", "")
        return f"{self.name}: {msg}" if msg else self.name

    def __repr__(self) -> str:
        return f"<leir.Verdict {self}>"


def _infer_class(before: Program, after: Program) -> Tuple[int, str]:
    """The class of a pair judged without an explicit class, and why: the
    strictest class of the steps it grounds to, else reassociating."""
    from .strategy import ground  # strategies sit above run; imported when needed

    try:
        hits = ground(before, after)
    except Exception as e:  # a pair that cannot be grounded is still verified
        return 2, f"not grounded ({e})"
    if not hits:
        return 2, "no single step of the implemented strategies turns BEFORE into AFTER"
    order = {"exact": 0, "reassociating": 1}
    best = min(hits, key=lambda c: order.get(c.exactness, 1))
    return order.get(best.exactness, 1) + 1, f"grounds to {best.step}"


def verify(
    before: Program,
    after: Program,
    *,
    backend: BackendLike = None,
    seed: Optional[int] = None,
    input_sets: Optional[int] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    reference_rule: bool = False,
    strict_parallel: bool = False,
    cls: Optional[str] = None,
) -> Verdict:
    """Runs ``before`` (the reference) and ``after`` on the same seeded
    inputs and compares every output (docs/verification.md). Any verdict,
    INVALID and TIMEOUT included, is returned, not raised; exceptions mean
    no verdict (no compiler, no device, bad arguments).

    ``cls`` is the candidate class: "any" (the per-element tolerance),
    "exact" (bitwise) or "reassociating" (the f64-truth bound). Left out,
    it is inferred as ``leir verify`` does: a pair that grounds to a step
    takes that step's class, any other pair is judged by the f64-truth
    bound; the report's ``class_inferred`` says why and ``judged_by`` which
    rule decided."""
    o = _defaults.init(_lib.VerifyOptions, "leir_verify_options")
    inferred: Optional[str] = None
    if cls is None:
        o.candidate_class, inferred = _infer_class(before, after)
    else:
        names = {"any": 0, "exact": 1, "reassociating": 2}
        if cls not in names:
            raise ArgumentError(f"unknown candidate class {cls!r} (any, exact, reassociating)", rule="usage")
        o.candidate_class = names[cls]
    if seed is not None:
        o.seed = seed
    if input_sets is not None:
        o.input_sets = input_sets
    if rtol is not None:
        o.rtol = rtol
    if atol is not None:
        o.atol = atol
    if reference_rule:
        o.flags |= _VERIFY_REFERENCE_RULE
    if strict_parallel:
        o.flags |= _VERIFY_STRICT_PARALLEL
    b = _backend(backend)
    rep = out_ptr()
    call(_lib.leir_verify, b._handle, before._handle, after._handle, ctypes.byref(o), ctypes.byref(rep))
    try:
        js, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_verify_report_json, rep, ctypes.byref(js), ctypes.byref(n))
        report = json.loads(_lib.take_string(js, n.value))
        if inferred is not None:
            report["class_inferred"] = inferred
        return Verdict(report)
    finally:
        _lib.leir_verify_report_free(rep)


@dataclass
class Timing:
    """Timing of one program (verification.md §4): seconds per run
    (median, min, max, mean) over ``runs`` timed runs, the program's flops
    and bytes, and the speedup over the first program of the same call."""

    median_s: float
    min_s: float
    max_s: float
    mean_s: float
    runs: int
    flops: int
    bytes: int
    gflops: float
    gbytes_per_s: float
    speedup: float
    extra: Dict[str, Any] = field(default_factory=dict)


def _bench_options(options: Mapping[str, Any]) -> _lib.BenchOptions:
    o = _defaults.init(_lib.BenchOptions, "leir_bench_options")
    for k, v in options.items():
        if k == "no_flush":
            o.flags |= _BENCH_NO_FLUSH if v else 0
        elif k in {f[0] for f in _lib.BenchOptions._fields_} and k != "size":
            setattr(o, k, v)
        else:
            raise TypeError(f"unknown timing option {k!r}")
    return o


def _time_kernels(kernels: Sequence[Kernel], options: Mapping[str, Any]) -> List[Timing]:
    o = _bench_options(options)
    n = len(kernels)
    if n == 0:
        return []
    arr = (ctypes.c_void_p * n)(*[k._h for k in kernels])
    out = (_lib.Timing * n)()
    call(_lib.leir_kernels_time, arr, n, ctypes.byref(o), out)
    return [
        Timing(t.median_s, t.min_s, t.max_s, t.mean_s, int(t.runs), int(t.flops), int(t.bytes), t.gflops, t.gbytes_per_s, t.speedup)
        for t in out
    ]


def bench(programs: Sequence[Program], *, backend: BackendLike = None, **options: Any) -> List[Timing]:
    """Times programs in alternation in one process (warm-ups, cache
    flushes, median of timed runs). ``options`` are the fields of
    leir_bench_options: warmup, min_runs, max_runs, min_seconds,
    max_seconds, seed, and no_flush. All programs must run on the same
    backend (default "cpu")."""
    b = _backend(backend)
    kernels = [Kernel(p, b) for p in programs]
    try:
        return _time_kernels(kernels, options)
    finally:
        for k in kernels:
            k.close()


def time(program: Program, *, backend: BackendLike = None, **options: Any) -> Timing:
    """Times one program (see :func:`bench`)."""
    return bench([program], backend=backend, **options)[0]
