"""C declarations of the experimental search API
(include/leir/experimental/search.h) and the measurement database. Kept
apart from _lib.py because the API is experimental: these are the only
lines to change when it moves. Struct mirrors follow the header field by
field; ctypes lays them out as the C compiler does."""

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)

from . import _lib
from ._lib import PP, SZ, P, _fn, status

#: Whether the loaded libleir has the search (older builds do not).
AVAILABLE = _lib.has("leir_search_run")


class CompareOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("warmup", c_uint32),
        ("min_rounds", c_uint32),
        ("max_rounds", c_uint32),
        ("max_seconds", c_double),
        ("confidence", c_double),
        ("min_effect", c_double),
        ("seed", c_uint64),
    ]


class VerifierOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("seed", c_uint64),
        ("input_sets", c_uint32),
        ("rtol", c_double),
        ("atol", c_double),
        ("reassoc_factor", c_double),
        ("min_finite_fraction", c_double),
    ]


class Feedback(Structure):
    _fields_ = [
        ("proposal", c_char_p),
        ("reject", c_int),
        ("verdict", c_int),
        ("reason", c_char_p),
    ]


class Query(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("algorithm", c_int),
        ("program", c_void_p),
        ("root", c_void_p),
        ("candidates", c_void_p),
        ("depth", c_uint32),
        ("speedup", c_double),
        ("want", c_uint32),
        ("attempt", c_uint32),
        ("feedback", POINTER(Feedback)),
        ("nfeedback", c_size_t),
        ("history", c_char_p),
        ("seed", c_uint64),
        ("parent", c_void_p),
        ("parent_speedup", c_double),
    ]


class Measurement(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("verdict", c_int),
        ("order", c_int),
        ("ratio", c_double),
        ("ratio_lo", c_double),
        ("ratio_hi", c_double),
        ("median_s", c_double),
        ("q1_s", c_double),
        ("q3_s", c_double),
        ("parent_median_s", c_double),
        ("rounds", c_uint32),
        ("message", c_char * 256),
    ]


class Record(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("sample", c_uint32),
        ("node", c_int32),
        ("parent", c_int32),
        ("depth", c_uint32),
        ("step", c_char_p),
        ("strategy", c_char_p),
        ("cot", c_char_p),
        ("program", c_char_p),
        ("hash", c_uint64),
        ("reject", c_int),
        ("reason", c_char_p),
        ("measured", c_int),
        ("cached", c_int),
        ("m", Measurement),
        ("speedup", c_double),
        ("best_speedup", c_double),
        ("elapsed_s", c_double),
        ("proposed", c_char_p),
        ("raw", c_char_p),
    ]


PROPOSE_FN = CFUNCTYPE(c_int, c_void_p, POINTER(Query), c_void_p)
RECORD_FN = CFUNCTYPE(c_int, c_void_p, POINTER(Record))
LINE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t)


class SearchOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("algorithm", c_int),
        ("policy", c_int),
        ("max_samples", c_uint32),
        ("max_seconds", c_double),
        ("max_depth", c_uint32),
        ("width", c_uint32),
        ("branching", c_uint32),
        ("retries", c_uint32),
        ("uct_c", c_double),
        ("rollouts", c_uint32),
        ("reward", c_int),
        ("seed", c_uint64),
        ("propose", PROPOSE_FN),
        ("propose_payload", c_void_p),
        ("measure", c_void_p),
        ("measure_payload", c_void_p),
        ("on_record", RECORD_FN),
        ("record_payload", c_void_p),
        ("db", c_void_p),
        ("machine", c_char_p),
        ("compare", POINTER(CompareOptions)),
        ("verifier", POINTER(VerifierOptions)),
        ("candidates", POINTER(_lib.CandidatesOptions)),
        ("cancel", POINTER(c_int)),
        ("flags", c_uint32),
        ("lookahead_depth", c_uint32),
        ("lookahead_width", c_uint32),
        ("lookahead_evals", c_uint64),
        ("lookahead_seconds", c_double),
    ]


class Summary(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("samples", c_uint32),
        ("measured", c_uint32),
        ("reused", c_uint32),
        ("accepted", c_uint32),
        ("rejected", c_uint32),
        ("best_depth", c_uint32),
        ("best_speedup", c_double),
        ("final_speedup", c_double),
        ("final_lo", c_double),
        ("final_hi", c_double),
        ("source_median_s", c_double),
        ("best_median_s", c_double),
        ("seconds", c_double),
        ("stopped_by", c_int),
        ("lookaheads", c_uint32),
        ("lookahead_evals", c_uint64),
        ("db_unsaved", c_uint32),
        ("db_saved_late", c_uint32),
    ]


NO_FINAL_COMPARE = 0x1

if AVAILABLE:
    leir_compare_options_init = _fn("leir_compare_options_init", status, POINTER(CompareOptions), c_size_t)
    leir_verifier_options_init = _fn(
        "leir_verifier_options_init", status, POINTER(VerifierOptions), c_size_t
    )
    leir_search_options_init = _fn("leir_search_options_init", status, POINTER(SearchOptions), c_size_t)
    leir_search_algorithm_from_name = _fn(
        "leir_search_algorithm_from_name", status, c_char_p, POINTER(c_int)
    )
    leir_search_algorithm_name = _fn("leir_search_algorithm_name", c_char_p, c_int)
    leir_search_policy_from_name = _fn("leir_search_policy_from_name", status, c_char_p, POINTER(c_int))
    leir_search_reject_name = _fn("leir_search_reject_name", c_char_p, c_int)
    leir_order_name = _fn("leir_order_name", c_char_p, c_int)
    leir_search_run = _fn("leir_search_run", status, PP, P, P, POINTER(SearchOptions))
    leir_search_result_free = _fn("leir_search_result_free", None, P)
    leir_search_result_record_count = _fn("leir_search_result_record_count", c_size_t, P)
    leir_search_result_record = _fn("leir_search_result_record", POINTER(Record), P, c_size_t)
    leir_search_result_summary = _fn("leir_search_result_summary", status, P, POINTER(Summary))
    leir_search_result_best = _fn("leir_search_result_best", c_void_p, P)
    leir_search_result_best_steps = _fn("leir_search_result_best_steps", status, P, PP, SZ)
    leir_search_record_json = _fn("leir_search_record_json", status, POINTER(Record), PP, SZ)
    leir_search_result_plot_svg = _fn("leir_search_result_plot_svg", status, P, PP, SZ)
    leir_search_propose_candidate = _fn("leir_search_propose_candidate", status, P, c_size_t, c_char_p)
    leir_search_propose_step = _fn("leir_search_propose_step", status, P, c_char_p, c_size_t, c_char_p)
    leir_search_propose_program = _fn(
        "leir_search_propose_program", status, P, c_char_p, c_size_t, c_char_p, c_char_p
    )
    leir_search_propose_builtin = _fn("leir_search_propose_builtin", status, c_int, POINTER(Query), P)
    leir_search_machine_fingerprint = _fn(
        "leir_search_machine_fingerprint", status, c_uint32, c_char_p, c_size_t
    )
    leir_search_protocol = _fn(
        "leir_search_protocol",
        status,
        POINTER(CompareOptions),
        POINTER(VerifierOptions),
        c_char_p,
        c_size_t,
    )
    leir_db_open = _fn("leir_db_open", status, PP, c_char_p)
    leir_db_free = _fn("leir_db_free", None, P)
    leir_db_count = _fn("leir_db_count", status, P, POINTER(c_uint64))
    leir_db_export = _fn("leir_db_export", status, P, LINE_FN, c_void_p)
    leir_db_check = _fn("leir_db_check", status, P)
