"""Reading a prompt record and a completion the way trainers hand them over.

Nothing here judges an answer: the library does (``leir_eval_run``). This
module only turns the trainers' shapes into the library's (a completion as a
string or as chat messages; a record as dataset columns), and extracts the
transformed IR of a well-formed answer to key the cache by the program's
alpha hash and to reach the answer's program for the cost model and timing.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import LeirError
from ..program import Program

# Columns a trainer adds to a reward call that are not dataset columns.
TRAINER_KEYS = frozenset(
    {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "environments"}
)

_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|<\\answer>)", re.S)
_DATASET_FORMAT = re.compile(r"^\s*<think>.*?(?:</think>|<\\think>)\s*<answer>.*?(?:</answer>|<\\answer>)\s*$", re.S)


def completion_text(completion: Any) -> str:
    """The model's text: a string as it is; chat messages (a list of
    ``{"role", "content"}``, TRL's conversational form): the content of the
    last assistant message (of the last message when none says assistant)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content", ""))
    if isinstance(completion, Sequence):
        msgs = [m for m in completion if isinstance(m, Mapping)]
        for m in reversed(msgs):
            if m.get("role") == "assistant":
                return _content(m.get("content"))
        return _content(msgs[-1].get("content")) if msgs else ""
    return "" if completion is None else str(completion)


def _content(c: Any) -> str:
    # multimodal chat content: a list of {"type": "text", "text": ...}
    if isinstance(c, list):
        return "".join(str(p.get("text", "")) for p in c if isinstance(p, Mapping))
    return "" if c is None else str(c)


def prompt_text(prompt: Any) -> str:
    """The user prompt of a prompt column or record messages: a string as it
    is, else the content of the first user message."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        for m in prompt:
            if isinstance(m, Mapping) and m.get("role") == "user":
                return _content(m.get("content"))
    return ""


def dataset_format(text: str) -> bool:
    """Whether the text is laid out as the dataset's answers are:
    ``<think>...</think><answer>...</answer>`` and nothing around them."""
    return bool(_DATASET_FORMAT.match(text))


def extract(text: str, max_bytes: int) -> Optional[List[Tuple[str, Tuple[str, ...]]]]:
    """The (transformed_IR, strategy names) of each entry of a well-formed
    answer: an ``<answer>`` block holding a JSON (or Python-literal) dict or
    list of dicts with string values. None when the answer is anything less
    tidy; the library's parser, which accepts more, still judges it."""
    if len(text) > max_bytes or "\x00" in text:
        return None
    m = None
    for m in _ANSWER.finditer(text):
        pass
    if m is None:
        return None
    body = m.group(1).strip()
    if body.startswith("```"):
        body = body.strip("`")
        if body.startswith("json"):
            body = body[4:]
    try:
        value = json.loads(body)
    except ValueError:
        try:
            value = ast.literal_eval(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return None
    entries = value if isinstance(value, list) else [value]
    out = []
    for e in entries:
        if not isinstance(e, dict):
            return None
        ir = e.get("transformed_IR")
        st = e.get("applied_strategy", e.get("applied_strategies"))
        if isinstance(st, str):
            st = [st]
        if not isinstance(ir, str) or not ir or not isinstance(st, list) or not st:
            return None
        if not all(isinstance(s, str) and s for s in st):
            return None
        out.append((ir, tuple(normalize_strategy(s) for s in st)))
    return out or None


def normalize_strategy(name: str) -> str:
    """As the catalogue spells it ("Loop Binding" -> "loop_binding")."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def known_signature(known: Sequence[Mapping[str, Any]]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    ins: Dict[str, Any] = {}
    outs: Dict[str, Any] = {}
    for k in known:
        (ins if k.get("role") == "input" else outs)[str(k["name"])] = (str(k["dtype"]), tuple(int(x) for x in k["shape"]))
    return ins, outs


def program_of(ir: str, known: Sequence[Mapping[str, Any]]) -> Optional[Program]:
    """The program of an IR text with the prompt's known variables, or None
    when it does not parse or check with them."""
    try:
        p = Program.parse(ir, max_input_bytes=16 << 20)
        ins, outs = known_signature(known)
        if ins or outs:
            p.set_signature(ins, outs)
        else:
            p.infer_signature()
        if not p.is_valid:
            return None
        return p
    except (LeirError, ValueError, TypeError, KeyError):
        return None


def known_of(program: Program) -> List[Dict[str, Any]]:
    """A program's signature as a record's ``known`` list."""
    return [
        {"name": d.name, "dtype": d.dtype, "role": d.role, "shape": list(d.shape)}
        for d in program.effective_signature()
    ]


def record_key(record: Mapping[str, Any]) -> str:
    """A content key of a prompt record: the program, its known variables,
    the kind, the number of IRs asked for and the labels (what the
    judgement depends on)."""
    h = hashlib.sha256()
    for k in ("original_IR", "known", "kind", "n", "labels"):
        h.update(json.dumps(record.get(k), sort_keys=True, default=str).encode())
        h.update(b"\x00")
    return h.hexdigest()[:24]
