"""Programs: parse, print, signature, check, hash and a read-only walk."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _defaults, _lib
from .errors import UnsupportedError, call, out_ptr

if TYPE_CHECKING:  # the modules above programs, imported by the methods that need them
    from .run import Timing, Verdict
    from .strategy import Candidate, Explanation, StepLike

__all__ = [
    "Program",
    "TensorDecl",
    "Diagnostic",
    "Cost",
    "Domain",
    "DOMAIN_KINDS",
    "Loop",
    "Nest",
    "Equation",
    "Expr",
    "parse",
    "load",
    "DTYPES",
]

#: Element types, in the order of the C enum leir_dtype.
DTYPES: Tuple[str, ...] = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool")
_LOOP_KINDS = ("L", "P", "V", "U", "B")
_EXPR_KINDS = (
    "number",
    "inf",
    "var",
    "tensor",
    "paren",
    "neg",
    "binary",
    "call",
    "compare",
    "and",
    "or",
)
_SCOPES = ("global", "shared", "local")
_PARSE_LENIENT = 0x1
_PRINT_PRETTY = 0x1

ShapeLike = Union[Sequence[int], int]


@dataclass(frozen=True)
class TensorDecl:
    """One entry of a program's signature (inputs first, then outputs)."""

    name: str
    dtype: str  # "f64", "f32", ...
    role: str  # "input" or "output"
    shape: Tuple[int, ...]  # () for a scalar

    @property
    def size(self) -> int:
        """Number of elements (1 for a scalar)."""
        n = 1
        for e in self.shape:
            n *= e
        return n


@dataclass(frozen=True)
class Diagnostic:
    """One finding of the static checker."""

    rule: str
    message: str
    subject: str
    line: int
    column: int

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line else ""
        return f"{where}error: {self.message} [{self.rule}]"


@dataclass(frozen=True)
class Cost:
    """The static cost of one run (leir_program_cost_get): equation
    evaluations, operations and distinct bytes of the known variables."""

    evaluations: int
    flops: int
    bytes: int


#: Input domain kinds, in the order of the C enum leir_domain_kind.
DOMAIN_KINDS: Tuple[str, ...] = ("default", "positive", "value", "range", "normal", "uniform")


@dataclass(frozen=True)
class Domain:
    """How seeded inputs of one input are drawn (docs/verification.md,
    "Input domains"); only the fields of its kind are used: ``value``
    (value), ``low``/``high`` (range, uniform), ``mean``/``std`` (normal)."""

    kind: str = "default"
    value: float = 0.0
    low: float = 0.0
    high: float = 0.0
    mean: float = 0.0
    std: float = 1.0


def _need(fn: Any, name: str) -> Any:
    if fn is None:
        raise UnsupportedError(f"this libleir has no {name}")
    return fn


def _bytes(text: Union[str, bytes]) -> bytes:
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected str or bytes, got {type(text).__name__}")
    return text.encode("utf-8", errors="surrogateescape")


def _decl_from_c(d: _lib.TensorDecl) -> TensorDecl:
    shape = tuple(int(d.shape[i]) for i in range(d.rank))
    return TensorDecl(
        _lib.text(d.name),
        DTYPES[d.dtype] if 0 <= d.dtype < len(DTYPES) else str(d.dtype),
        "output" if d.role == 1 else "input",
        shape,
    )


class Program:
    """A LEIR program (owns its C handle; freed when the object is)."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self, text: Union[str, bytes, None] = None, *, strict: bool = False) -> None:
        """``Program(text)`` is :meth:`Program.parse` (lenient unless
        ``strict``)."""
        self._h = ctypes.c_void_p()
        if text is not None:
            self._h = Program.parse(text, strict=strict)._take()

    # -- construction ----------------------------------------------------
    @classmethod
    def _wrap(cls, handle: ctypes.c_void_p) -> "Program":
        p = cls.__new__(cls)
        p._h = handle
        return p

    def _take(self) -> ctypes.c_void_p:
        h, self._h = self._h, ctypes.c_void_p()
        return h

    @staticmethod
    def _options(
        strict: bool, max_depth: Optional[int], max_input_bytes: Optional[int]
    ) -> _lib.ParseOptions:
        o = _defaults.init(_lib.ParseOptions, "leir_parse_options")
        if not strict:
            o.flags |= _PARSE_LENIENT
        if max_depth is not None:
            o.max_depth = max_depth
        if max_input_bytes is not None:
            o.max_input_bytes = max_input_bytes
        return o

    @classmethod
    def parse(
        cls,
        text: Union[str, bytes],
        *,
        strict: bool = False,
        max_depth: Optional[int] = None,
        max_input_bytes: Optional[int] = None,
    ) -> "Program":
        """Parses LEIR text. Lenient (whitespace and one nest per line are
        fine) unless ``strict``. Raises :class:`leir.ParseError` (with
        ``line``, ``column``, ``rule``) or :class:`leir.LimitError`."""
        raw = _bytes(text)
        opts = cls._options(strict, max_depth, max_input_bytes)
        h = out_ptr()
        call(_lib.leir_program_parse, ctypes.byref(h), raw, len(raw), ctypes.byref(opts))
        return cls._wrap(h)

    @classmethod
    def from_yaml(cls, text: Union[str, bytes]) -> "Program":
        """Parses a program file (``*.leir.yaml``: name, inputs, outputs,
        leir)."""
        raw = _bytes(text)
        opts = cls._options(False, None, None)
        h = out_ptr()
        call(_lib.leir_program_parse_yaml, ctypes.byref(h), raw, len(raw), ctypes.byref(opts))
        return cls._wrap(h)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Program":
        """Reads a file: ``*.yaml``/``*.yml`` as a program file, anything
        else as LEIR text (lenient)."""
        opts = cls._options(False, None, None)
        h = out_ptr()
        call(_lib.leir_program_load_file, ctypes.byref(h), os.fsencode(path), ctypes.byref(opts))
        return cls._wrap(h)

    def copy(self) -> "Program":
        """A deep copy (signature and name included)."""
        h = out_ptr()
        call(_lib.leir_program_clone, ctypes.byref(h), self._handle)
        return Program._wrap(h)

    # -- lifetime ----------------------------------------------------------
    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise ValueError("the program was closed")
        return self._h

    def close(self) -> None:
        """Frees the C program now (later use raises ValueError)."""
        h = self._take()
        if h:
            _lib.leir_program_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- text ----------------------------------------------------------------
    def _print(self, flags: int) -> str:
        out, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_program_print, self._handle, flags, ctypes.byref(out), ctypes.byref(n))
        return _lib.take_string(out, n.value)

    def __str__(self) -> str:
        """Canonical text (byte-identical to strict-mode input)."""
        return self._print(0)

    def pretty(self) -> str:
        """One top-level nest per line, nested nests indented."""
        return self._print(_PRINT_PRETTY)

    def to_yaml(self) -> str:
        """A program file; a program without a signature gets the inferred
        one (this object keeps none)."""
        p = self
        if not self.signature:
            p = self.copy()
            p.infer_signature()
        out, n = out_ptr(), ctypes.c_size_t()
        call(_lib.leir_program_to_yaml, p._handle, ctypes.byref(out), ctypes.byref(n))
        return _lib.take_string(out, n.value)

    def __reduce__(self) -> Tuple[object, Tuple[str]]:
        """Pickles as text (a program file when there is a signature)."""
        if self.signature:
            return (Program.from_yaml, (self.to_yaml(),))
        return (Program.parse, (str(self),))

    def __repr__(self) -> str:
        if not self._h:
            return "<leir.Program (closed)>"
        text = str(self)
        return f"leir.Program({text if len(text) <= 120 else text[:117] + '...'!r})"

    # -- identity ------------------------------------------------------------
    def hash(self, alpha: bool = False) -> int:
        """XXH3-64 of the canonical text (``alpha``: after renaming loop
        variables and intermediates by first appearance)."""
        fn = _lib.leir_program_hash_alpha if alpha else _lib.leir_program_hash
        return int(fn(self._handle))

    def hash_hex(self, alpha: bool = False) -> str:
        """The hash as 16 hex digits (what ``leir hash`` prints)."""
        return f"{self.hash(alpha):016x}"

    def __hash__(self) -> int:
        return self.hash()

    def __eq__(self, other: object) -> bool:
        """Same canonical text and same signature."""
        if not isinstance(other, Program):
            return NotImplemented
        return str(self) == str(other) and self.signature == other.signature

    # -- name and signature ----------------------------------------------------
    @property
    def name(self) -> str:
        return _lib.text(_lib.leir_program_name(self._handle))

    @name.setter
    def name(self, value: Optional[str]) -> None:
        call(_lib.leir_program_set_name, self._handle, None if value is None else _bytes(value))

    @property
    def signature(self) -> List[TensorDecl]:
        """The declared (or set, or inferred) signature; [] when none."""
        out = []
        for i in range(_lib.leir_program_signature_count(self._handle)):
            d = _lib.TensorDecl()
            call(_lib.leir_program_signature_get, self._handle, i, ctypes.byref(d))
            out.append(_decl_from_c(d))
        return out

    def effective_signature(self) -> List[TensorDecl]:
        """The signature, or the inferred one when there is none (the
        program is not modified). Raises :class:`leir.SignatureError`."""
        sig = self.signature
        if sig:
            return sig
        p = self.copy()
        p.infer_signature()
        return p.signature

    @property
    def inputs(self) -> List[TensorDecl]:
        return [d for d in self.effective_signature() if d.role == "input"]

    @property
    def outputs(self) -> List[TensorDecl]:
        return [d for d in self.effective_signature() if d.role == "output"]

    def infer_signature(self) -> List[TensorDecl]:
        """Replaces the signature with the inferred one and returns it."""
        call(_lib.leir_program_infer_signature, self._handle)
        return self.signature

    def set_signature(
        self,
        inputs: Mapping[str, Tuple[str, ShapeLike]],
        outputs: Mapping[str, Tuple[str, ShapeLike]],
    ) -> None:
        """Sets the signature: ``{"A": ("f64", (2, 8))}`` per tensor, inputs
        then outputs in the order given; ``()`` is a scalar."""
        decls = []
        keep: List[object] = []
        for role, group in ((0, inputs), (1, outputs)):
            for name, (dtype, shape) in group.items():
                dims = (shape,) if isinstance(shape, int) else tuple(shape)
                arr = (ctypes.c_int64 * max(1, len(dims)))(*dims)
                nm = _bytes(name)
                keep += [arr, nm]
                code = ctypes.c_int()
                call(_lib.leir_dtype_from_name, _bytes(dtype), ctypes.byref(code))
                decls.append(_lib.TensorDecl(nm, code.value, role, len(dims), arr))
        arr_t = (_lib.TensorDecl * max(1, len(decls)))(*decls)
        call(_lib.leir_program_set_signature, self._handle, arr_t, len(decls))

    # -- checks -------------------------------------------------------------------
    def check(self, **limits: int) -> List[Diagnostic]:
        """Every finding of the static checks, in program order ([] when
        the program is valid). ``limits`` override leir_check_options
        fields (max_loop_depth, max_extent, max_nest_iterations,
        max_total_iterations, max_buffer_elements)."""
        opts = _defaults.init(_lib.CheckOptions, "leir_check_options")
        for k, v in limits.items():
            if k == "size" or not hasattr(opts, k):
                raise TypeError(f"unknown check limit {k!r}")
            setattr(opts, k, v)
        diags = out_ptr()
        _lib.leir_error_clear()
        st = _lib.leir_program_check(self._handle, ctypes.byref(opts), ctypes.byref(diags))
        try:
            if st not in (0, -2, -6, -7):  # OK, INVALID, LIMIT, SIGNATURE are findings
                from .errors import error_for

                raise error_for(st)
            out = []
            for i in range(_lib.leir_diagnostics_count(diags)):
                d = _lib.leir_diagnostics_get(diags, i).contents
                out.append(
                    Diagnostic(
                        _lib.text(d.rule),
                        _lib.text(d.message),
                        _lib.text(d.subject),
                        int(d.line),
                        int(d.column),
                    )
                )
            if st != 0 and not out:
                rec = _lib.leir_error_last().contents
                out.append(
                    Diagnostic(
                        _lib.text(rec.rule),
                        _lib.text(rec.message),
                        _lib.text(rec.subject),
                        int(rec.line),
                        int(rec.column),
                    )
                )
            return out
        finally:
            _lib.leir_diagnostics_free(diags)

    @property
    def is_valid(self) -> bool:
        """True when :meth:`check` finds nothing."""
        return not self.check()

    def validate(self) -> "Program":
        """Raises :class:`leir.InvalidProgramError` (or LimitError,
        SignatureError) for the first finding; returns self when valid."""
        call(_lib.leir_program_check, self._handle, None, None)
        return self

    # -- walk -----------------------------------------------------------------------
    @property
    def nests(self) -> List["Nest"]:
        """The top-level nests, in order."""
        h = self._handle
        return [Nest(self, _lib.leir_program_nest(h, i)) for i in range(_lib.leir_program_nest_count(h))]

    def walk(self) -> Iterator[Union["Nest", "Equation", "Expr"]]:
        """Every nest, equation and expression node in program order
        (pre-order, children left to right), through the library's walker
        (leir_program_walk)."""
        nodes: List[Union[Nest, Equation, Expr]] = []

        def enter(nest: int, depth: int, payload: int) -> int:
            nodes.append(Nest(self, nest, depth))
            return 0

        def equation(eq: int, payload: int) -> int:
            nodes.append(Equation(self, eq))
            return 0

        def expr(e: int, parent: int, payload: int) -> int:
            nodes.append(Expr(self, e))
            return 0

        cbs = _lib.WalkCallbacks()
        cbs.size = ctypes.sizeof(_lib.WalkCallbacks)
        cbs.enter_nest = _lib.ENTER_NEST(enter)
        cbs.equation = _lib.EQUATION(equation)
        cbs.expr = _lib.EXPR(expr)
        _lib.leir_program_walk(self._handle, ctypes.byref(cbs), None)
        return iter(nodes)

    def tensors(self) -> Dict[str, str]:
        """Every tensor the text mentions, with its dtype."""
        return {e.name: e.dtype for e in self.walk() if isinstance(e, Expr) and e.kind == "tensor"}

    # -- input domains ------------------------------------------------------------
    def _decl_index(self, name: str) -> int:
        for i, d in enumerate(self.signature):
            if d.name == name:
                return i
        from .errors import NotFoundError

        raise NotFoundError(f"the signature has no tensor {name!r}", rule="signature.name", subject=name)

    def domain(self, name: str) -> Domain:
        """The declared domain of input ``name`` (kind "default" when none)."""
        from . import _research_lib as _r

        d = _r.Domain()
        d.size = ctypes.sizeof(_r.Domain)
        call(_need(_r.leir_program_domain_get, "leir_program_domain_get"), self._handle,
             self._decl_index(name), ctypes.byref(d))
        kind = DOMAIN_KINDS[d.kind] if 0 <= d.kind < len(DOMAIN_KINDS) else str(d.kind)
        return Domain(kind, d.value, d.low, d.high, d.mean, d.std)

    def domains(self) -> Dict[str, Domain]:
        """The domain of every input of the signature ({} without one)."""
        return {d.name: self.domain(d.name) for d in self.signature if d.role == "input"}

    def set_domain(self, name: str, domain: Union[Domain, str, None] = None, **fields: float) -> None:
        """Declares the domain of input ``name``: a :class:`Domain`, or a
        kind with its fields (``p.set_domain("E", "value", value=1e-5)``);
        None or "default" clears it. Raises :class:`leir.ArgumentError` for
        an output or a bad field (low >= high, std <= 0, ...)."""
        from . import _research_lib as _r

        if isinstance(domain, Domain):
            dom = domain
        else:
            dom = Domain(domain or "default", **fields)
        if dom.kind not in DOMAIN_KINDS:
            raise ValueError(f"domain kind is one of {', '.join(DOMAIN_KINDS)}, not {dom.kind!r}")
        d = _r.Domain(ctypes.sizeof(_r.Domain), DOMAIN_KINDS.index(dom.kind), dom.value, dom.low,
                      dom.high, dom.mean, dom.std)
        call(_need(_r.leir_program_domain_set, "leir_program_domain_set"), self._handle,
             self._decl_index(name), ctypes.byref(d))

    # -- cost ---------------------------------------------------------------------
    def _with_signature(self) -> "Program":
        if self.signature:
            return self
        p = self.copy()
        p.infer_signature()
        return p

    def cost(self) -> Cost:
        """Evaluations, flops and bytes of one run (as ``leir run --cost``;
        the signature is inferred when there is none)."""
        from . import _research_lib as _r

        c = _r.ProgramCost()
        p = self._with_signature()  # held: a temporary would be freed before the call
        call(_need(_r.leir_program_cost_get, "leir_program_cost_get"), p._handle, ctypes.byref(c))
        return Cost(int(c.evaluations), int(c.flops), int(c.bytes))

    def predict_seconds(self, threads: int = 0) -> float:
        """The analytic cost model's time of one run on the cpu backend
        with ``threads`` OpenMP threads (0: the host's CPUs), on this host's
        cache sizes (docs/cost.md; experimental)."""
        from . import _research_lib as _r

        out = ctypes.c_double()
        p = self._with_signature()
        call(_need(_r.leir_program_cost_predict, "leir_program_cost_predict"), p._handle, threads,
             ctypes.byref(out))
        return float(out.value)

    # -- the common calls as methods (leir.candidates(p, ...) is p.candidates(...)) --
    def candidates(self, strategy: Optional[Union[str, int]] = None, **options: Any) -> List["Candidate"]:
        """:func:`leir.candidates` of this program."""
        from .strategy import candidates

        return candidates(self, strategy, **options)

    def apply(self, step: "StepLike", *, with_class: bool = False) -> Any:
        """:func:`leir.apply`: the program after one step."""
        from .strategy import apply

        return apply(self, step, with_class=with_class)

    def explain(self, strategy: Union[str, int]) -> "Explanation":
        """:func:`leir.explain`: why a strategy applies or not, site by site."""
        from .strategy import explain

        return explain(self, strategy)

    def ground(self, after: "Program", strategy: Optional[Union[str, int]] = None) -> List["Candidate"]:
        """:func:`leir.ground`: the candidates that give ``after``."""
        from .strategy import ground

        return ground(self, after, strategy)

    def cot(self, step: "StepLike") -> str:
        """:func:`leir.cot`: the chain of thought of a step."""
        from .strategy import cot

        return cot(self, step)

    def verify(self, after: "Program", **options: Any) -> "Verdict":
        """:func:`leir.verify` with this program as the reference."""
        from .run import verify

        return verify(self, after, **options)

    def run(self, inputs: Any = None, **options: Any) -> Dict[str, Any]:
        """:func:`leir.run`: the outputs as numpy arrays."""
        from .run import run

        return run(self, inputs, **options)

    def time(self, **options: Any) -> "Timing":
        """:func:`leir.time` of this program."""
        from .run import time

        return time(self, **options)

    def lower(self, target: str = "c", **options: Any) -> str:
        """:func:`leir.lower`: the lowered C or CUDA source."""
        from .run import lower

        return lower(self, target, **options)


@dataclass(frozen=True)
class Loop:
    kind: str  # "L" serial, "P" parallel, "V" vectorized, "U" unrolled, "B" bound
    extent: int
    var: str


class _Node:
    __slots__ = ("_program", "_ptr")

    def __init__(self, program: Program, ptr: int) -> None:
        self._program = program  # keeps the C program (and so this node) alive
        self._ptr = ptr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Node) and type(other) is type(self) and other._ptr == self._ptr

    def __hash__(self) -> int:
        return hash((type(self), self._ptr))


class Nest(_Node):
    """A loop nest: its loops (outermost first) and items (equations and
    nested nests)."""

    __slots__ = ("depth",)

    def __init__(self, program: Program, ptr: int, depth: int = 0) -> None:
        super().__init__(program, ptr)
        self.depth = depth

    @property
    def loops(self) -> List[Loop]:
        h = self._program._handle
        out = []
        for i in range(_lib.leir_nest_loop_count(self._ptr)):
            lp = _lib.leir_nest_loop(h, self._ptr, i)
            out.append(Loop(_LOOP_KINDS[lp.kind], int(lp.extent), _lib.text(lp.var)))
        return out

    @property
    def items(self) -> List[Union["Nest", "Equation"]]:
        out: List[Union[Nest, Equation]] = []
        for i in range(_lib.leir_nest_item_count(self._ptr)):
            eq = _lib.leir_nest_item_equation(self._ptr, i)
            if eq:
                out.append(Equation(self._program, eq))
            else:
                out.append(Nest(self._program, _lib.leir_nest_item_nest(self._ptr, i), self.depth + 1))
        return out

    @property
    def position(self) -> Tuple[int, int]:
        p = _lib.leir_nest_position(self._program._handle, self._ptr)
        return int(p.line), int(p.column)

    def __repr__(self) -> str:
        loops = "".join(f"{lp.kind}^{{{lp.extent}}}_{{{lp.var}}}" for lp in self.loops)
        return f"<leir.Nest {loops} items={len(self.items)}>"


class Equation(_Node):
    """``lhs = rhs;`` (lhs is a tensor element)."""

    __slots__ = ()

    @property
    def lhs(self) -> "Expr":
        return Expr(self._program, _lib.leir_equation_lhs(self._ptr))

    @property
    def rhs(self) -> "Expr":
        return Expr(self._program, _lib.leir_equation_rhs(self._ptr))

    def __repr__(self) -> str:
        return f"<leir.Equation {self.lhs.name}=...>"


class Expr(_Node):
    """An expression node. ``kind`` is one of number, inf, var, tensor,
    paren, neg, binary, call, compare, and, or."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return _EXPR_KINDS[_lib.leir_expr_get_kind(self._ptr)]

    @property
    def op(self) -> str:
        """Operator or function ("+", "//", "exp", "max", ...); "" if none."""
        return _lib.text(_lib.leir_op_name(_lib.leir_expr_op(self._ptr)))

    @property
    def compare_ops(self) -> List[str]:
        n = _lib.leir_expr_child_count(self._ptr)
        return [_lib.text(_lib.leir_op_name(_lib.leir_expr_compare_op(self._ptr, i))) for i in range(max(0, n - 1))]

    @property
    def children(self) -> List["Expr"]:
        return [
            Expr(self._program, _lib.leir_expr_child(self._ptr, i))
            for i in range(_lib.leir_expr_child_count(self._ptr))
        ]

    @property
    def name(self) -> str:
        """Tensor or loop-variable name; "" for other kinds."""
        return _lib.text(_lib.leir_expr_name(self._program._handle, self._ptr))

    @property
    def dtype(self) -> str:
        """Tensor: the superscript dtype."""
        return DTYPES[int(_lib.leir_expr_dtype(self._ptr))]

    @property
    def scope(self) -> str:
        return _SCOPES[_lib.leir_expr_scope(self._ptr)]

    @property
    def value(self) -> float:
        """Number: its value."""
        return float(_lib.leir_expr_number(self._ptr))

    @property
    def lexeme(self) -> str:
        """Number: as written; "" otherwise."""
        n = ctypes.c_size_t()
        p = _lib.leir_expr_lexeme(self._ptr, ctypes.byref(n))
        return ctypes.string_at(p, n.value).decode() if p else ""

    @property
    def position(self) -> Tuple[int, int]:
        p = _lib.leir_expr_position(self._program._handle, self._ptr)
        return int(p.line), int(p.column)

    def __repr__(self) -> str:
        extra = self.name or self.op or self.lexeme
        return f"<leir.Expr {self.kind} {extra}>".replace("  ", " ").replace(" >", ">")


def parse(
    text: Union[str, bytes],
    *,
    strict: bool = False,
    max_depth: Optional[int] = None,
    max_input_bytes: Optional[int] = None,
) -> Program:
    """Shorthand for :meth:`Program.parse`."""
    return Program.parse(text, strict=strict, max_depth=max_depth, max_input_bytes=max_input_bytes)


def load(path: Union[str, "os.PathLike[str]"]) -> Program:
    """Shorthand for :meth:`Program.load`."""
    return Program.load(path)
