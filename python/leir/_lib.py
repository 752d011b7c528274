"""Loading libleir and declaring the C functions the package calls.

Only this module knows C types. Everything the library returns as
``char **`` is declared as ``c_void_p`` so that ctypes never converts (and
loses) the pointer: :func:`take_string` copies the text and releases it
with ``leir_free``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import shutil
import subprocess
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, List, Optional

SONAME = "libleir.so.0"


class LibraryNotFound(OSError):
    """libleir.so.0 was not found (see :func:`find_library`)."""


def _tree_roots() -> List[Path]:
    """Source trees a copy of the library may have been built in: the one
    this package was installed from (recorded at build time) and the one it
    is imported from when run from a checkout."""
    roots: List[Path] = []
    try:
        from . import _build_info  # written by the build backend

        if _build_info.SOURCE_TREE:
            roots.append(Path(_build_info.SOURCE_TREE))
    except ImportError:
        pass
    here = Path(__file__).resolve().parent.parent.parent
    if (here / "meson.build").exists():
        roots.append(here)
    return roots


def _from_pkg_config() -> Optional[str]:
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        out = subprocess.run(
            [exe, "--variable=libdir", "leir"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = out.stdout.strip()
    if out.returncode != 0 or not libdir:
        return None
    path = os.path.join(libdir, SONAME)
    return path if os.path.exists(path) else None


def find_library() -> str:
    """Path (or loader name) of the libleir to load, in this order:

    1. ``$LEIR_LIBRARY``: the library file, or a directory holding
       ``libleir.so.0``;
    2. ``pkg-config --variable=libdir leir`` (an installed libleir);
    3. a copy built in the source tree (``build/libleir.so.0``, else the
       newest ``*/libleir.so.0`` one level below the tree's root);
    4. ``libleir.so.0`` through the dynamic loader (``LD_LIBRARY_PATH``,
       the system's library directories).
    """
    env = os.environ.get("LEIR_LIBRARY")
    if env:
        path = os.path.join(env, SONAME) if os.path.isdir(env) else env
        if not os.path.exists(path):
            raise LibraryNotFound(f"LEIR_LIBRARY={env!r}: {path} does not exist")
        return path
    found = _from_pkg_config()
    if found:
        return found
    for root in _tree_roots():
        first = root / "build" / SONAME
        if first.exists():
            return str(first)
        others = sorted(glob.glob(str(root / "*" / SONAME)), key=os.path.getmtime, reverse=True)
        if others:
            return others[0]
    return SONAME


def _load() -> ctypes.CDLL:
    path = find_library()
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise LibraryNotFound(
            f"cannot load libleir ({path}): {e}. Build it (meson setup build && meson compile "
            "-C build), install it (pkg-config finds it), or set LEIR_LIBRARY to the path of "
            "libleir.so.0"
        ) from e


lib = _load()
LIBRARY_PATH: str = getattr(lib, "_name", SONAME)


def has(name: str) -> bool:
    """Whether the loaded library exports `name` (newer entry points)."""
    return hasattr(lib, name)


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


# ---------------------------------------------------------------------------
# Struct mirrors. Only what crosses the boundary by value or as an input
# array is mirrored; results with many fields (verify reports, candidate
# lists) are read through the library's JSON functions instead.
# ---------------------------------------------------------------------------

MAX_RANK = 16


class ErrorRecord(Structure):
    _fields_ = [
        ("status", c_int),
        ("message", c_char_p),
        ("rule", c_char_p),
        ("subject", c_char_p),
        ("line", c_uint32),
        ("column", c_uint32),
    ]


class TensorDecl(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("dtype", c_int),
        ("role", c_int),
        ("rank", c_uint32),
        ("shape", POINTER(c_int64)),
    ]


class Diagnostic(Structure):
    _fields_ = [
        ("rule", c_char_p),
        ("message", c_char_p),
        ("subject", c_char_p),
        ("line", c_uint32),
        ("column", c_uint32),
    ]


class Loop(Structure):
    _fields_ = [("kind", c_int), ("extent", c_int64), ("var", c_char_p)]


class Position(Structure):
    _fields_ = [("line", c_uint32), ("column", c_uint32)]


class StrategyInfo(Structure):
    _fields_ = [
        ("index", c_uint32),
        ("name", c_char_p),
        ("level", c_int),
        ("summary", c_char_p),
        ("definition", c_char_p),
        ("benefit", c_char_p),
        ("implemented", c_int),
    ]


class Reason(Structure):
    _fields_ = [
        ("applies", c_int),
        ("site", c_char_p),
        ("rule", c_char_p),
        ("message", c_char_p),
    ]


class ParseOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("max_input_bytes", c_uint64),
        ("max_depth", c_uint32),
    ]


class CheckOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("max_loop_depth", c_uint32),
        ("max_extent", c_int64),
        ("max_nest_iterations", c_uint64),
        ("max_total_iterations", c_uint64),
        ("max_buffer_elements", c_uint64),
    ]


class CandidatesOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("strategy", c_int32),
        ("vector_width", c_uint32),
        ("max_candidates", c_uint64),
        ("flags", c_uint32),
    ]


class BackendOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("compiler", c_char_p),
        ("compiler_flags", c_char_p),
        ("cache_dir", c_char_p),
        ("device", c_int32),
        ("threads", c_uint32),
        ("timeout_s", c_double),
        ("compile_timeout_s", c_double),
        ("memory_limit_bytes", c_uint64),
        ("max_buffer_bytes", c_uint64),
        ("max_evaluations", c_uint64),
        ("runner", c_char_p),
    ]


class VerifyOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("seed", c_uint64),
        ("input_sets", c_uint32),
        ("rtol", c_double),
        ("atol", c_double),
        ("candidate_class", c_uint32),
        ("reassoc_factor", c_double),
        ("min_finite_fraction", c_double),
    ]


class BenchOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("warmup", c_uint32),
        ("min_runs", c_uint32),
        ("max_runs", c_uint32),
        ("min_seconds", c_double),
        ("max_seconds", c_double),
        ("seed", c_uint64),
    ]


class Timing(Structure):
    # Caller-allocated array element: its size is fixed by the reserved tail.
    _fields_ = [
        ("median_s", c_double),
        ("min_s", c_double),
        ("max_s", c_double),
        ("mean_s", c_double),
        ("runs", c_uint32),
        ("flops", c_uint64),
        ("bytes", c_uint64),
        ("gflops", c_double),
        ("gbytes_per_s", c_double),
        ("speedup", c_double),
        ("reserved", c_double * 6),
    ]


class WalkCallbacks(Structure):
    pass


ENTER_NEST = CFUNCTYPE(c_int, c_void_p, c_uint32, c_void_p)
EQUATION = CFUNCTYPE(c_int, c_void_p, c_void_p)
EXPR = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
WalkCallbacks._fields_ = [
    ("size", c_uint32),
    ("enter_nest", ENTER_NEST),
    ("leave_nest", ENTER_NEST),
    ("equation", EQUATION),
    ("expr", EXPR),
]

# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------

P = c_void_p  # every opaque handle
PP = POINTER(c_void_p)
SZ = POINTER(c_size_t)
status = c_int

leir_version = _fn("leir_version", c_char_p)
leir_status_name = _fn("leir_status_name", c_char_p, c_int)
leir_status_message = _fn("leir_status_message", c_char_p, c_int)
leir_error_last = _fn("leir_error_last", POINTER(ErrorRecord))
leir_error_clear = _fn("leir_error_clear", None)
leir_error_sequence = _fn("leir_error_sequence", c_uint64) if has("leir_error_sequence") else None
leir_free = _fn("leir_free", None, c_void_p)
leir_dtype_name = _fn("leir_dtype_name", c_char_p, c_int)
leir_dtype_from_name = _fn("leir_dtype_from_name", status, c_char_p, POINTER(c_int))

# programs
leir_program_parse = _fn("leir_program_parse", status, PP, c_char_p, c_size_t, POINTER(ParseOptions))
leir_program_parse_yaml = _fn(
    "leir_program_parse_yaml", status, PP, c_char_p, c_size_t, POINTER(ParseOptions)
)
leir_program_load_file = _fn("leir_program_load_file", status, PP, c_char_p, POINTER(ParseOptions))
leir_program_free = _fn("leir_program_free", None, P)
leir_program_clone = _fn("leir_program_clone", status, PP, P)
leir_program_print = _fn("leir_program_print", status, P, c_uint32, PP, SZ)
leir_program_to_yaml = _fn("leir_program_to_yaml", status, P, PP, SZ)
leir_program_set_signature = _fn(
    "leir_program_set_signature", status, P, POINTER(TensorDecl), c_size_t
)
leir_program_signature_count = _fn("leir_program_signature_count", c_size_t, P)
leir_program_signature_get = _fn(
    "leir_program_signature_get", status, P, c_size_t, POINTER(TensorDecl)
)
leir_program_infer_signature = _fn("leir_program_infer_signature", status, P)
leir_program_name = _fn("leir_program_name", c_char_p, P)
leir_program_set_name = _fn("leir_program_set_name", status, P, c_char_p)
leir_program_check = _fn("leir_program_check", status, P, POINTER(CheckOptions), PP)
leir_diagnostics_count = _fn("leir_diagnostics_count", c_size_t, P)
leir_diagnostics_get = _fn("leir_diagnostics_get", POINTER(Diagnostic), P, c_size_t)
leir_diagnostics_free = _fn("leir_diagnostics_free", None, P)
leir_program_hash = _fn("leir_program_hash", c_uint64, P)
leir_program_hash_alpha = _fn("leir_program_hash_alpha", c_uint64, P)

# walk
leir_program_walk = _fn("leir_program_walk", c_int, P, POINTER(WalkCallbacks), c_void_p)
leir_program_nest_count = _fn("leir_program_nest_count", c_size_t, P)
leir_program_nest = _fn("leir_program_nest", P, P, c_size_t)
leir_nest_loop_count = _fn("leir_nest_loop_count", c_size_t, P)
leir_nest_loop = _fn("leir_nest_loop", Loop, P, P, c_size_t)
leir_nest_item_count = _fn("leir_nest_item_count", c_size_t, P)
leir_nest_item_equation = _fn("leir_nest_item_equation", P, P, c_size_t)
leir_nest_item_nest = _fn("leir_nest_item_nest", P, P, c_size_t)
leir_nest_position = _fn("leir_nest_position", Position, P, P)
leir_equation_lhs = _fn("leir_equation_lhs", P, P)
leir_equation_rhs = _fn("leir_equation_rhs", P, P)
leir_op_name = _fn("leir_op_name", c_char_p, c_int)
leir_expr_get_kind = _fn("leir_expr_get_kind", c_int, P)
leir_expr_op = _fn("leir_expr_op", c_int, P)
leir_expr_child_count = _fn("leir_expr_child_count", c_size_t, P)
leir_expr_child = _fn("leir_expr_child", P, P, c_size_t)
leir_expr_compare_op = _fn("leir_expr_compare_op", c_int, P, c_size_t)
leir_expr_name = _fn("leir_expr_name", c_char_p, P, P)
leir_expr_dtype = _fn("leir_expr_dtype", c_int, P)
leir_expr_scope = _fn("leir_expr_scope", c_int, P)
leir_expr_number = _fn("leir_expr_number", c_double, P)
leir_expr_lexeme = _fn("leir_expr_lexeme", c_void_p, P, SZ)
leir_expr_position = _fn("leir_expr_position", Position, P, P)

# strategies
leir_level_name = _fn("leir_level_name", c_char_p, c_int)
leir_strategy_count = _fn("leir_strategy_count", c_size_t)
leir_strategy_info_at = _fn("leir_strategy_info_at", POINTER(StrategyInfo), c_size_t)
leir_strategy_find = _fn("leir_strategy_find", status, c_char_p, SZ)
leir_exactness_name = _fn("leir_exactness_name", c_char_p, c_int)
leir_step_parse = _fn("leir_step_parse", status, PP, c_char_p, c_size_t)
leir_step_free = _fn("leir_step_free", None, P)
leir_step_clone = _fn("leir_step_clone", status, PP, P)
leir_step_text = _fn("leir_step_text", c_char_p, P)
leir_step_strategy = _fn("leir_step_strategy", c_size_t, P)
leir_step_param_count = _fn("leir_step_param_count", c_size_t, P)
leir_step_param = _fn(
    "leir_step_param", status, P, c_size_t, POINTER(c_char_p), POINTER(c_void_p), SZ
)
leir_step_to_json = _fn("leir_step_to_json", status, P, PP, SZ)
leir_candidates_list = _fn("leir_candidates_list", status, PP, P, POINTER(CandidatesOptions))
leir_candidates_free = _fn("leir_candidates_free", None, P)
leir_candidates_count = _fn("leir_candidates_count", c_size_t, P)
leir_candidates_step = _fn("leir_candidates_step", P, P, c_size_t)
leir_candidates_exactness = _fn("leir_candidates_exactness", c_int, P, c_size_t)
leir_candidates_apply = _fn("leir_candidates_apply", status, PP, P, c_size_t)
leir_candidates_to_json = (
    _fn("leir_candidates_to_json", status, P, c_uint32, PP, SZ)
    if has("leir_candidates_to_json")
    else None
)
leir_step_apply = _fn("leir_step_apply", status, PP, P, P, POINTER(c_int))
leir_strategy_explain = _fn("leir_strategy_explain", status, PP, P, c_size_t)
leir_explanation_free = _fn("leir_explanation_free", None, P)
leir_explanation_candidates = _fn("leir_explanation_candidates", c_size_t, P)
leir_explanation_count = _fn("leir_explanation_count", c_size_t, P)
leir_explanation_get = _fn("leir_explanation_get", POINTER(Reason), P, c_size_t)
leir_explanation_text = _fn("leir_explanation_text", status, P, PP, SZ)
leir_ground = _fn("leir_ground", status, PP, P, P, POINTER(CandidatesOptions))
leir_step_cot = _fn("leir_step_cot", status, PP, SZ, P, P)

# running
leir_backend_count = _fn("leir_backend_count", c_size_t)
leir_backend_name_at = _fn("leir_backend_name_at", c_char_p, c_size_t)
leir_backend_open = _fn("leir_backend_open", status, PP, c_char_p, POINTER(BackendOptions))
leir_backend_free = _fn("leir_backend_free", None, P)
leir_backend_get_name = _fn("leir_backend_get_name", c_char_p, P)
leir_backend_lower = _fn("leir_backend_lower", status, P, P, PP, SZ)
leir_backend_compile_log = _fn("leir_backend_compile_log", c_char_p, P)
leir_kernel_new = _fn("leir_kernel_new", status, PP, P, P)
leir_kernel_free = _fn("leir_kernel_free", None, P)
leir_kernel_buffer_count = _fn("leir_kernel_buffer_count", c_size_t, P)
leir_kernel_buffer = _fn("leir_kernel_buffer", status, P, c_size_t, POINTER(TensorDecl))
leir_kernel_run_sized = (
    _fn("leir_kernel_run_sized", status, P, POINTER(c_void_p), POINTER(c_size_t), c_size_t)
    if has("leir_kernel_run_sized")
    else None
)
leir_kernel_run = _fn("leir_kernel_run", status, P, POINTER(c_void_p), c_size_t)
leir_program_fill_inputs = _fn(
    "leir_program_fill_inputs", status, P, c_uint64, c_uint32, POINTER(c_void_p), c_size_t
)
leir_verdict_name = _fn("leir_verdict_name", c_char_p, c_int)
leir_verify = _fn("leir_verify", status, P, P, P, POINTER(VerifyOptions), PP)
leir_verify_report_free = _fn("leir_verify_report_free", None, P)
leir_verify_report_json = _fn("leir_verify_report_json", status, P, PP, SZ)
leir_kernels_time = _fn(
    "leir_kernels_time", status, POINTER(c_void_p), c_size_t, POINTER(BenchOptions), POINTER(Timing)
)


def take_string(ptr: c_void_p, length: Optional[int] = None) -> str:
    """Copies a ``char *`` the library returned ("caller frees with
    leir_free") and frees it."""
    if not ptr.value:
        return ""
    try:
        raw = ctypes.string_at(ptr.value, length) if length is not None else ctypes.string_at(ptr.value)
        return raw.decode("utf-8", errors="replace")
    finally:
        leir_free(ptr)


def text(p: Optional[bytes]) -> str:
    """A borrowed ``const char *`` as str ("" for NULL)."""
    return p.decode("utf-8", errors="replace") if p else ""
