"""The experimental C entry points leir.rl calls, declared here (and only
here) so that the rest of the package sees Python values.

- ``leir_eval_run`` / ``leir_eval_report_json``: the judgement of answers
  exactly as ``leir eval`` makes it (answer parsing, the prompt's signature,
  structure comparison, grounding, verification under the step's class);
- ``leir_llm_propose`` with a callback client: the Step-TP prompt of a
  program, worded as the dataset builder words it (the callback records the
  prompt and declines to answer);
- ``leir_program_cost_predict``: the analytic cost model;
- ``leir_catalog_*`` / ``leir_workload_emit``: workloads of the catalogue.

ctypes releases the GIL for the length of each foreign call, so threads
that call these run in parallel in the library.
"""

from __future__ import annotations

import ctypes
import json
import os
import tempfile
import threading
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint32, c_void_p
from typing import Any, Dict, List, Optional, Sequence

from .. import _lib
from .. import _research_lib as _rl
from ..errors import call, out_ptr
from ..program import Program

_L = _lib.lib


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(_L, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


# -- leir eval ---------------------------------------------------------------


# The declarations are _research_lib's (one ctypes prototype per C function:
# ctypes keeps one function object per name, so a second declaration with
# its own Structure classes would replace the first one's argument types).
EvalOptions = _rl.EvalOptions
_eval_options_init = _rl.leir_eval_options_init
_eval_run = _rl.leir_eval_run
_eval_report_json = _rl.leir_eval_report_json
_eval_free = _rl.leir_eval_free


def eval_answers(
    records: Sequence[Dict[str, Any]],
    answers: Sequence[Dict[str, Any]],
    *,
    backend: Optional[str] = None,
    seed: int = 1,
    input_sets: int = 3,
) -> List[Dict[str, Any]]:
    """Scores ``answers`` (``{"id": ..., "answer": text}``) against the
    prompt records ``records`` (eval.jsonl rows) with ``leir_eval_run``:
    the records are written to a private directory as its eval.jsonl. One
    report entry (``answers[]`` of the JSON report) per answer, in order."""
    with tempfile.TemporaryDirectory(prefix="leir-rl-") as d:
        with open(os.path.join(d, "eval.jsonl"), "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False))
                f.write("\n")
        text = "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers).encode("utf-8", "surrogatepass")
        o = EvalOptions()
        _eval_options_init(ctypes.byref(o), ctypes.sizeof(o))
        o.size = ctypes.sizeof(o)
        o.backend = backend.encode() if backend else None
        o.seed = seed
        o.input_sets = input_sets
        h = out_ptr()
        call(_eval_run, ctypes.byref(h), text, len(text), os.fsencode(d), ctypes.byref(o))
        try:
            out, n = out_ptr(), c_size_t()
            call(_eval_report_json, h, ctypes.byref(out), ctypes.byref(n))
            report = json.loads(_lib.take_string(out, n.value))
        finally:
            _eval_free(h)
    got = report.get("answers", [])
    if len(got) != len(answers):
        raise RuntimeError(f"leir_eval_run scored {len(got)} lines of {len(answers)}")
    return got


# -- the Step-TP prompt (leir_llm_propose with a recording callback) ---------


class LlmOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("timeout_s", c_double),
        ("max_answer_bytes", c_size_t),
        ("model", c_char_p),
        ("api_key_env", c_char_p),
        ("temperature", c_double),
        ("max_tokens", c_uint32),
        ("system_prompt", c_char_p),
    ]


class LlmMessage(Structure):
    _fields_ = [("role", c_char_p), ("content", c_char_p)]


class ProposeOptions(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("retries", c_uint32),
        ("strategy", c_char_p),
        ("model_name", c_char_p),
        ("candidate_class", c_uint32),
        ("feedback", POINTER(c_char_p)),
        ("nfeedback", c_size_t),
    ]


_COMPLETE = CFUNCTYPE(c_int, c_void_p, POINTER(LlmMessage), c_size_t, POINTER(c_void_p), POINTER(c_size_t))
_llm_options_init = _fn("leir_llm_options_init", c_int, POINTER(LlmOptions), c_size_t)
_propose_options_init = _fn("leir_llm_propose_options_init", c_int, POINTER(ProposeOptions), c_size_t)
_llm_new_callback = _fn("leir_llm_new_callback", c_int, POINTER(c_void_p), _COMPLETE, c_void_p, POINTER(LlmOptions))
_llm_free = _fn("leir_llm_free", None, c_void_p)
_llm_propose = _fn("leir_llm_propose", c_int, c_void_p, c_void_p, c_void_p, POINTER(ProposeOptions), POINTER(c_void_p))
_llm_result_free = _fn("leir_llm_result_free", None, c_void_p)

_LEIR_ERR_IO = -5  # any failure status: the attempt is recorded as "no answer"
_prompt_lock = threading.Lock()  # one recording client, used by one thread at a time
_prompt_state: Dict[str, Any] = {}


def _record_prompt(payload: Any, messages: Any, n: int, answer: Any, answer_len: Any) -> int:
    for i in range(n):
        m = messages[i]
        if (m.role or b"") == b"user":
            _prompt_state["user"] = (m.content or b"").decode("utf-8", "replace")
    return _LEIR_ERR_IO


_record_cb = _COMPLETE(_record_prompt)


def step_tp_prompt(program: Program, name: Optional[str]) -> str:
    """The dataset's Step-TP user prompt of ``program`` (it must have its
    signature), naming it ``name`` (None: the program's name, else
    "Model"): what ``leir_llm_propose`` sends, which is the dataset
    builder's prompt."""
    with _prompt_lock:
        if "client" not in _prompt_state:
            lo = LlmOptions()
            _llm_options_init(ctypes.byref(lo), ctypes.sizeof(lo))
            lo.system_prompt = b""
            h = out_ptr()
            call(_llm_new_callback, ctypes.byref(h), _record_cb, None, ctypes.byref(lo))
            _prompt_state["client"] = h
        po = ProposeOptions()
        _propose_options_init(ctypes.byref(po), ctypes.sizeof(po))
        po.retries = 0
        po.model_name = name.encode() if name else None
        _prompt_state.pop("user", None)
        res = out_ptr()
        call(_llm_propose, _prompt_state["client"], None, program._handle, ctypes.byref(po), ctypes.byref(res))
        _llm_result_free(res)
        user = _prompt_state.pop("user", None)
    if user is None:
        raise RuntimeError("leir_llm_propose sent no prompt")
    return str(user)


# -- the cost model ------------------------------------------------------------

_cost_predict = _rl.leir_program_cost_predict


def predicted_seconds(program: Program, threads: int = 0) -> float:
    """The cost model's time of one run on the cpu backend."""
    s = c_double()
    call(_cost_predict, program._handle, threads, ctypes.byref(s))
    return float(s.value)


# -- workloads -----------------------------------------------------------------


CatalogOptions = _rl.CatalogOptions
EmitOptions = _rl.EmitOptions
_catalog_options_init = _rl.leir_catalog_options_init
_catalog_open = _rl.leir_catalog_open
_catalog_free = _rl.leir_catalog_free
_catalog_find = _rl.leir_catalog_find
_emit_options_init = _rl.leir_emit_options_init
_workload_emit = _rl.leir_workload_emit
_workload_name = _rl.leir_workload_name
_catalog_cache: Dict[Optional[str], Any] = {}
_catalog_lock = threading.Lock()

SHAPES = {"default": 0, "small": 1, "random": 2}


def emit_workload(
    name: str, *, shape: str = "small", seed: int = 0, dtype: Optional[str] = None, directory: Optional[str] = None
) -> Program:
    """The program of workload ``name`` (``level1/ReLU`` or ``ReLU``) with
    its signature, at ``shape`` ("small", "default" or "random")."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {sorted(SHAPES)}, not {shape!r}")
    with _catalog_lock:
        cat = _catalog_cache.get(directory)
        if cat is None:
            co = CatalogOptions()
            _catalog_options_init(ctypes.byref(co))
            co.dir = os.fsencode(directory) if directory else None
            cat = out_ptr()
            call(_catalog_open, ctypes.byref(cat), ctypes.byref(co))
            _catalog_cache[directory] = cat
        w = _catalog_find(cat, name.encode())
        if not w and "/" in name:
            w = _catalog_find(cat, name.rsplit("/", 1)[1].encode())
        if not w:
            raise KeyError(f"no workload named {name!r} in the catalogue")
        eo = EmitOptions()
        _emit_options_init(ctypes.byref(eo))
        eo.shape = SHAPES[shape]
        eo.seed = seed
        eo.dtype = dtype.encode() if dtype else None
        h = out_ptr()
        call(_workload_emit, w, ctypes.byref(eo), None, ctypes.byref(h), None, 0)
        p = Program._wrap(h)
        p.name = _lib.text(_workload_name(w))
        return p
