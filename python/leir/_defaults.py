"""Default values of the C options structs: the ONE place they are written.

TO BE REPLACED: libleir is gaining ``leir_*_options_init(opts, size)``
functions beside the ``_INIT`` macros (bindings cannot see macros). When the
loaded library exports one, :func:`init` calls it and the table below is not
used; the table only serves older libraries. Once every supported libleir
has the functions, delete the table and keep the call.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Type, TypeVar

from . import _lib

T = TypeVar("T", bound=ctypes.Structure)

# Mirrors of the _INIT macros (include/leir/*.h), field by field.
_MACRO_DEFAULTS: Dict[str, Dict[str, object]] = {
    "leir_parse_options": {"flags": 0, "max_input_bytes": 256 << 20, "max_depth": 200},
    "leir_check_options": {
        "max_loop_depth": 32,
        "max_extent": 2147483647,
        "max_nest_iterations": 1 << 44,
        "max_total_iterations": 1 << 46,
        "max_buffer_elements": 1 << 36,
    },
    "leir_candidates_options": {"strategy": -1, "vector_width": 8, "max_candidates": 0, "flags": 0},
    "leir_backend_options": {
        "flags": 0,
        "compiler": None,
        "compiler_flags": None,
        "cache_dir": None,
        "device": 0,
        "threads": 0,
        "timeout_s": 10.0,
        "compile_timeout_s": 120.0,
        "memory_limit_bytes": 8 << 30,
        "max_buffer_bytes": 1 << 30,
        "max_evaluations": 1 << 36,
    },
    "leir_verify_options": {"flags": 0, "seed": 1, "input_sets": 3, "rtol": -1.0, "atol": -1.0},
    "leir_bench_options": {
        "flags": 0,
        "warmup": 3,
        "min_runs": 10,
        "max_runs": 10000,
        "min_seconds": 0.05,
        "max_seconds": 60.0,
        "seed": 1,
    },
}


def init(cls: Type[T], c_name: str) -> T:
    """A `cls` (a mirror of C struct `c_name`) holding the library's
    defaults, with its size field set."""
    opts = cls()
    size = ctypes.sizeof(cls)
    fn_name = c_name + "_init"
    if _lib.has(fn_name):
        fn = getattr(_lib.lib, fn_name)
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.POINTER(cls), ctypes.c_size_t]
        if fn(ctypes.byref(opts), size) == 0:
            opts.size = size
            return opts
    opts.size = size
    for field, value in _MACRO_DEFAULTS[c_name].items():
        setattr(opts, field, value)
    return opts
