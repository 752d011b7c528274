"""leir: Python bindings of libleir (pure ctypes, numpy for arrays).

Parse and print LEIR programs, check and hash them, enumerate and apply
optimization steps with their chain of thought, run programs on numpy
arrays, verify that a step kept the results, and time programs::

    import leir, numpy as np
    p = leir.parse("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];")
    out = leir.run(p, {"A": np.random.randn(2, 8)}, backend="interp")
    for c in leir.candidates(p):
        print(c.step, c.exactness, leir.verify(p, c.result, backend="interp").name)

The library is found through $LEIR_LIBRARY, pkg-config, a copy built in
the source tree, or the dynamic loader (see leir._lib.find_library).
Errors raise leir.LeirError subclasses (leir.ParseError carries line,
column and rule). docs/python.md has the tour.
"""

from __future__ import annotations

from . import _lib
from . import catalogue, dataset, eval  # the research loop (experimental C API)
from . import errors as _errors
from . import program as _program
from . import run as _run
from . import search as _search
from . import strategy as _strategy
from .errors import (
    ArgumentError,
    CancelledError,
    CompileError,
    InternalError,
    InvalidProgramError,
    LeirError,
    LeirIOError,
    LeirMemoryError,
    LeirRuntimeError,
    LeirTimeoutError,
    LimitError,
    NoDeviceError,
    NotApplicableError,
    NotFoundError,
    ParseError,
    ShapeError,
    SignatureError,
    UnsupportedError,
)
from .program import (
    DOMAIN_KINDS,
    DTYPES,
    Cost,
    Diagnostic,
    Domain,
    Equation,
    Expr,
    Loop,
    Nest,
    Program,
    TensorDecl,
    load,
    parse,
)
from .run import (
    NUMPY_DTYPES,
    Backend,
    Kernel,
    Timing,
    Verdict,
    backends,
    bench,
    lower,
    run,
    seeded_inputs,
    time,
    verify,
)
from .search import ALGORITHMS, POLICIES, Database, Query, Record, SearchResult, optimize
from .strategy import (
    Candidate,
    Explanation,
    ParamValue,
    Reason,
    Step,
    StrategyInfo,
    apply,
    candidates,
    candidates_json,
    cot,
    explain,
    ground,
    strategies,
    strategy_index,
)

__version__ = "0.2.0"
#: Version of the loaded libleir ("0.2.0").
library_version: str = _lib.text(_lib.leir_version())
#: Path of the loaded libleir.
library_path: str = _lib.LIBRARY_PATH


def __getattr__(name: str) -> object:
    # leir.fx (torch.fx import) is imported only when asked for: torch may
    # be absent; leir.rl (reward functions, step environment) likewise, to
    # keep `import leir` light.
    if name in ("fx", "rl"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'leir' has no attribute {name!r}")


# The public names: each submodule's own list, plus the two above.
__all__ = [
    *_errors.__all__,
    *_program.__all__,
    *_strategy.__all__,
    "library_version",
    "library_path",
    *_run.__all__,
    *_search.__all__,
]  # leir.catalogue, leir.dataset and leir.eval are modules, not star-exported (eval is a builtin)
