"""C declarations of the research-loop APIs: datasets and the evaluation
(include/leir/experimental/dataset.h), the workload catalogue
(experimental/workload.h), the cost model (run.h, experimental/cost.h),
input domains (program.h) and assumed candidates (experimental/
candidates.h). Kept apart from _lib.py, as _search_lib.py is, because most
of it is the experimental tier: these are the lines to change when it
moves. Struct mirrors follow the headers field by field; ctypes lays them
out as the C compiler does. A name the loaded library lacks is None."""

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_double,
    c_int,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Optional

from . import _lib
from ._lib import PP, SZ, P, _fn, status


def _opt(name: str, restype: Any, *argtypes: Any) -> Optional[Any]:
    return _fn(name, restype, *argtypes) if _lib.has(name) else None


# ----- datasets (experimental/dataset.h) -------------------------------------


class DatasetProgress(Structure):
    _fields_ = [
        ("units_total", c_uint64),
        ("units_done", c_uint64),
        ("units_resumed", c_uint64),
        ("samples_verified", c_uint64),
        ("samples_kept", c_uint64),
        ("elapsed_s", c_double),
    ]


DATASET_PROGRESS_FN = CFUNCTYPE(None, POINTER(DatasetProgress), c_void_p)


class DatasetOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("shard_index", c_uint32),
        ("shard_count", c_uint32),
        ("workloads_dir", c_char_p),
        ("progress", DATASET_PROGRESS_FN),
        ("payload", c_void_p),
        ("cancel", POINTER(c_int)),
    ]


class EvalOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("backend", c_char_p),
        ("seed", c_uint64),
        ("input_sets", c_uint32),
        ("interp_max_evaluations", c_uint64),
        ("k", POINTER(c_uint32)),
        ("n_k", c_size_t),
    ]


DATASET_AVAILABLE = _lib.has("leir_dataset_open") and _lib.has("leir_eval_run")

leir_dataset_options_init = _opt("leir_dataset_options_init", status, POINTER(DatasetOptions), c_size_t)
leir_dataset_open = _opt(
    "leir_dataset_open", status, PP, c_char_p, c_size_t, c_char_p, c_char_p, POINTER(DatasetOptions)
)
leir_dataset_run = _opt("leir_dataset_run", status, P)
leir_dataset_complete = _opt("leir_dataset_complete", c_int, P)
leir_dataset_units = _opt("leir_dataset_units", None, P, POINTER(c_uint64), POINTER(c_uint64))
leir_dataset_summary_json = _opt("leir_dataset_summary_json", status, P, PP, SZ)
leir_dataset_free = _opt("leir_dataset_free", None, P)

leir_eval_options_init = _opt("leir_eval_options_init", status, POINTER(EvalOptions), c_size_t)
leir_eval_run = _opt("leir_eval_run", status, PP, c_char_p, c_size_t, c_char_p, POINTER(EvalOptions))
leir_eval_report_json = _opt("leir_eval_report_json", status, P, PP, SZ)
leir_eval_report_table = _opt("leir_eval_report_table", status, P, PP, SZ)
leir_eval_free = _opt("leir_eval_free", None, P)

# ----- the workload catalogue (experimental/workload.h) ----------------------


class CatalogOptions(Structure):
    _fields_ = [("size", c_uint32), ("dir", c_char_p)]


class WorkloadParam(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("is_float", c_bool),
        ("default_value", c_double),
        ("small_value", c_double),
        ("min", c_double),
        ("max", c_double),
    ]


class EmitOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("shape", c_int),
        ("seed", c_uint64),
        ("args", POINTER(c_double)),
        ("nargs", c_size_t),
        ("dtype", c_char_p),
    ]


CATALOG_AVAILABLE = _lib.has("leir_catalog_open")

# leir_catalog_options_init and leir_emit_options_init take no size (void f(opts *)).
leir_catalog_options_init = _opt("leir_catalog_options_init", None, POINTER(CatalogOptions))
leir_catalog_open = _opt("leir_catalog_open", status, PP, POINTER(CatalogOptions))
leir_catalog_new = _opt("leir_catalog_new", status, PP)
leir_catalog_add_text = _opt("leir_catalog_add_text", status, P, c_char_p, c_size_t, c_char_p)
leir_catalog_free = _opt("leir_catalog_free", None, P)
leir_catalog_dir = _opt("leir_catalog_dir", c_char_p, P)
leir_catalog_count = _opt("leir_catalog_count", c_size_t, P)
leir_catalog_get = _opt("leir_catalog_get", P, P, c_size_t)
leir_catalog_find = _opt("leir_catalog_find", P, P, c_char_p)
leir_workload_name = _opt("leir_workload_name", c_char_p, P)
leir_workload_level = _opt("leir_workload_level", c_int, P)
leir_workload_index = _opt("leir_workload_index", c_int, P)
leir_workload_summary = _opt("leir_workload_summary", c_char_p, P)
leir_workload_traced = _opt("leir_workload_traced", c_bool, P)
leir_workload_dtype = _opt("leir_workload_dtype", c_int, P)
leir_workload_template = _opt("leir_workload_template", c_char_p, P)
leir_workload_file = _opt("leir_workload_file", c_char_p, P)
leir_workload_param_count = _opt("leir_workload_param_count", c_size_t, P)
leir_workload_param_get = _opt("leir_workload_param_get", status, P, c_size_t, POINTER(WorkloadParam))
leir_emit_options_init = _opt("leir_emit_options_init", None, POINTER(EmitOptions))
leir_workload_emit = _opt(
    "leir_workload_emit", status, P, POINTER(EmitOptions), PP, PP, POINTER(c_double), c_size_t
)

# ----- costs (run.h; experimental/cost.h) -------------------------------------


class ProgramCost(Structure):
    _fields_ = [
        ("evaluations", c_uint64),
        ("flops", c_uint64),
        ("bytes", c_uint64),
        ("reserved", c_uint64 * 5),
    ]


leir_program_cost_get = _opt("leir_program_cost_get", status, P, POINTER(ProgramCost))
leir_program_cost_predict = _opt("leir_program_cost_predict", status, P, c_uint32, POINTER(c_double))

# ----- input domains (program.h) ----------------------------------------------


class Domain(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("kind", c_int),
        ("value", c_double),
        ("low", c_double),
        ("high", c_double),
        ("mean", c_double),
        ("std", c_double),
    ]


leir_domain_init = _opt("leir_domain_init", status, POINTER(Domain), c_size_t)
leir_program_domain_get = _opt("leir_program_domain_get", status, P, c_size_t, POINTER(Domain))
leir_program_domain_set = _opt("leir_program_domain_set", status, P, c_size_t, POINTER(Domain))
leir_domain_kind_name = _opt("leir_domain_kind_name", c_char_p, c_int)

# ----- assumed candidates (experimental/candidates.h) -------------------------

leir_candidates_assumed = _opt("leir_candidates_assumed", status, P, c_size_t, POINTER(c_int))
