#!/usr/bin/env python3
"""Draft generator for the workload catalogue (workloads/*.yaml).

Reads the workload table of the reference notes (section 8: names, indices,
summaries, default parameters in the reference's order) and the conformance
corpus (the reference's LEIR at a small shape with its shape_args, and at the
default shape), and writes one YAML file per workload whose LEIR is in the
corpus. Every integer of the LEIR text becomes a parameter expression when one
explains its value at both shapes (a parameter, a product, a convolution or
pooling output extent, ...); the rest stay literals. Ambiguous choices (two
parameters with the same value at both shapes) are listed under `review:` in
the draft so that a person resolves them.

The committed YAML files are the source of truth; this script only produced
their first draft (run it into an empty directory to compare):

  python3 scripts/workloads_draft.py --reference REF.md --corpus tests/data --out DIR
"""
import argparse
import itertools
import json
import os
import re
import sys

TOKEN = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z_0-9]*|\S")
FLOAT_DT = {"f16", "f32", "f64", "bf16"}


def parse_table(path):
    """{(level, model): (index, summary, [(name, value)])} from section 8."""
    out = {}
    level = None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"### (level\d)", line)
        if m:
            level = m.group(1)
            continue
        m = re.match(r"\| (\d+) \| `([^`]+)` \| (.*) \| ([^|]*) \|\s*$", line)
        if not m or level is None:
            continue
        idx, model, summary, params = m.groups()
        plist = []
        for item in params.split(", "):
            if "=" not in item:
                continue
            k, v = item.split("=", 1)
            v = v.strip()
            try:
                val = int(v)
            except ValueError:
                try:
                    val = float(v)
                except ValueError:
                    continue
            plist.append((k.strip(), val))
        out[(level, model)] = (int(idx), summary.strip(), plist)
    return out


def tokens(text):
    return TOKEN.findall(text)


def is_int(t):
    return re.fullmatch(r"\d+", t) is not None


def is_num(t):
    return re.fullmatch(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", t) is not None


def candidates(names, small, dflt):
    """[(expr, value_small, value_default, cost)] integer expressions."""
    ints = [i for i, n in enumerate(names)
            if isinstance(small[i], int) and isinstance(dflt[i], int)]
    c = []
    for i in ints:
        c.append((names[i], small[i], dflt[i], 1))
    for i in ints:
        for k in (1, 2, 3, 4):
            c.append((f"{names[i]}+{k}", small[i] + k, dflt[i] + k, 3))
            c.append((f"{names[i]}-{k}", small[i] - k, dflt[i] - k, 3))
        for k in (2, 3, 4):
            c.append((f"{names[i]}*{k}", small[i] * k, dflt[i] * k, 3))
            c.append((f"{names[i]}//{k}", small[i] // k, dflt[i] // k, 3))
    for i, j in itertools.permutations(ints, 2):
        if i < j:
            c.append((f"{names[i]}*{names[j]}", small[i] * small[j], dflt[i] * dflt[j], 3))
        if small[j] and dflt[j]:
            c.append((f"{names[i]}//{names[j]}", small[i] // small[j], dflt[i] // dflt[j], 3))
        c.append((f"{names[i]}-{names[j]}", small[i] - small[j], dflt[i] - dflt[j], 3))
        c.append((f"{names[i]}-{names[j]}+1", small[i] - small[j] + 1, dflt[i] - dflt[j] + 1, 4))
        c.append((f"{names[i]}+{names[j]}", small[i] + small[j], dflt[i] + dflt[j], 3))
        c.append((f"{names[i]}+2*{names[j]}", small[i] + 2 * small[j], dflt[i] + 2 * dflt[j], 4))
    for i, j, k in itertools.combinations(ints, 3):
        c.append((f"{names[i]}*{names[j]}*{names[k]}", small[i] * small[j] * small[k],
                  dflt[i] * dflt[j] * dflt[k], 5))
    # output extents of convolutions and pools
    def role(n, *keys):
        return [i for i in ints if any(key in names[i] for key in keys)]
    sizes = [i for i in ints if i not in role(names[0] and "", )]
    pads = role("", "pad") + [None]
    dils = role("", "dil") + [None]
    ks = role("", "kernel", "pool")
    strides = role("", "stride") + [None]
    def val(i, vec, default):
        return default if i is None else vec[i]
    def nm(i, default):
        return str(default) if i is None else names[i]
    for L in sizes:
        for p in pads:
            for d in dils:
                for k in ks:
                    for s in strides + [k]:
                        if p is None and d is None and s is None:
                            continue
                        vs = []
                        for vec in (small, dflt):
                            S = val(s, vec, 1)
                            if S <= 0:
                                vs.append(None)
                                continue
                            vs.append((vec[L] + 2 * val(p, vec, 0) - val(d, vec, 1) * (vec[k] - 1) - 1) // S + 1)
                        if None in vs:
                            continue
                        e = f"({names[L]}+2*{nm(p, 0)}-{nm(d, 1)}*({names[k]}-1)-1)//{nm(s, 1)}+1"
                        c.append((e, vs[0], vs[1], 8))
                        if p is not None:
                            pv = [vec[L] + 2 * vec[p] for vec in (small, dflt)]
                            c.append((f"{names[L]}+2*{names[p]}", pv[0], pv[1], 4))
    return c


def fmt_num(v):
    if isinstance(v, int):
        return str(v)
    r = repr(v)
    return r


def yaml_scalar(s):
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", s):
        return s
    return "'" + s.replace("'", "''") + "'"


def template(small_entry, default_entry, names, sargs, dargs, use_default):
    st = tokens(small_entry["leir"])
    dt = tokens(default_entry["leir"]) if (use_default and default_entry) else None
    if dt is not None:
        norm_s = [("#" if is_num(t) else ("$T" if t in FLOAT_DT else t)) for t in st]
        norm_d = [("#" if is_num(t) else ("$T" if t in FLOAT_DT else t)) for t in dt]
        if norm_s != norm_d:
            dt = None
    cands = candidates(names, sargs, dargs if dt is not None else sargs)
    by_val = {}
    for e, vs, vd, cost in cands:
        by_val.setdefault((vs, vd), []).append((cost, e))
    out = []
    review = []
    prev = ""
    for pos, t in enumerate(st):
        if t in FLOAT_DT:
            out.append("$T")
        elif is_int(t):
            vs = int(t)
            vd = int(dt[pos]) if dt is not None else vs
            context = "extent" if prev == "{" and pos >= 2 and st[pos - 2] == "^" else (
                "sub" if _in_subscript(st, pos) else "value")
            opts = sorted(by_val.get((vs, vd), []))
            if vs != vd and opts:
                best = [e for cst, e in opts if cst == opts[0][0]]
                if len(best) > 1:
                    review.append(f"{t}: {' | '.join(best)}")
                out.append(_sub(best[0]))
            elif vs != vd:
                review.append(f"{t}/{vd}: no expression found; kept the small value")
                out.append(t)
            else:
                single = [e for cst, e in opts if cst == 1]
                if single and context == "extent" and vs > 1:
                    if len(single) > 1:
                        review.append(f"extent {t}: {' | '.join(single)}")
                    out.append(_sub(single[0]))
                elif single and context == "value" and vs > 2 and prev in "/*":
                    if len(single) > 1:
                        review.append(f"value {t}: {' | '.join(single)}")
                    out.append(_sub(single[0]))
                else:
                    out.append(t)
        elif is_num(t):
            fv = float(t)
            fd = float(dt[pos]) if dt is not None else fv
            hit = [n for n, v in zip(names, sargs) if isinstance(v, float) and v == fv]
            if hit:
                out.append("$" + hit[0])
            elif fv != fd:
                # attention scales: 1/sqrt(head dimension)
                rs = [e for cst, e in sorted(c for (vs, vd), lst in by_val.items() for c in lst
                                             if vs > 0 and vd > 0 and abs(1 / vs ** 0.5 - fv) < 1e-15
                                             and abs(1 / vd ** 0.5 - fd) < 1e-12)]
                if rs:
                    out.append("$(1/sqrt(" + rs[0] + "))")
                else:
                    review.append(f"{t}/{dt[pos]}: float differs; kept the small value")
                    out.append(t)
            else:
                out.append(t)
        else:
            out.append(t)
        prev = t
    return "".join(out), review, dt is not None


def _sub(expr):
    return "$" + expr if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", expr) else "$(" + expr + ")"


def _in_subscript(st, pos):
    depth = 0
    for i in range(pos - 1, -1, -1):
        if st[i] == "}":
            depth += 1
        elif st[i] == "{":
            if depth == 0:
                return i >= 1 and st[i - 1] == "_"
            depth -= 1
    return False


def shape_expr(dims_s, dims_d, names, sargs, dargs):
    cands = candidates(names, sargs, dargs)
    by_val = {}
    for e, vs, vd, cost in cands:
        by_val.setdefault((vs, vd), []).append((cost, e))
    res = []
    for vs, vd in zip(dims_s, dims_d):
        opts = sorted(by_val.get((vs, vd), []))
        single = [e for c, e in opts if c == 1]
        if vs != vd and opts:
            res.append(opts[0][1])
        elif vs == vd and single and vs > 1:
            res.append(single[0])
        else:
            res.append(str(vs))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    table = parse_table(a.reference)
    small = {}
    for line in open(os.path.join(a.corpus, "sources-small.jsonl")):
        e = json.loads(line)
        small[e["id"]] = e
    dflt = {}
    for line in open(os.path.join(a.corpus, "sources-default.jsonl")):
        e = json.loads(line)
        dflt[e["id"]] = e
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for (level, model), (idx, summary, plist) in sorted(table.items()):
        wid = f"{level}/{model}"
        s = small.get(wid)
        d = dflt.get(wid)
        if s is None and d is None:
            continue
        names = [p for p, _ in plist]
        dargs = [v for _, v in plist]
        if s is not None and len(s["shape_args"]) == len(names):
            sargs = s["shape_args"]
            src = s
        else:
            sargs = dargs
            src = s or d
        use_default = d is not None
        if s is None:
            src = {"leir": d["leir"]}
        tmpl, review, aligned = template(src, d, names, sargs, dargs, use_default)
        # signature
        if s is not None:
            sig_in = s["signature"]["inputs"]
            sig_out = s["signature"]["outputs"]
        else:
            sig_in = sig_out = None
        dtype_default = "f32"
        if d is not None:
            m = re.search(r"\^\{(f16|f32|f64|bf16)", d["leir"])
            if m:
                dtype_default = m.group(1)
        lines = []
        lines.append(f"# Draft from scripts/workloads_draft.py (conformance corpus), then reviewed.")
        lines.append(f"name: {model}")
        lines.append(f"level: {level[-1]}")
        lines.append(f"index: {idx}")
        lines.append("summary: " + yaml_scalar(summary))
        lines.append("traced: true")
        lines.append(f"dtype: {dtype_default}")
        lines.append("params:")
        for i, (pn, pv) in enumerate(plist):
            sv = sargs[i]
            if isinstance(pv, float):
                lines.append(f"  - {{name: {pn}, type: float, default: {fmt_num(pv)}, small: {fmt_num(sv)}}}")
            else:
                lo, hi = min(sv, pv), max(sv, pv)
                lines.append(f"  - {{name: {pn}, default: {pv}, small: {sv}, range: [{lo}, {hi}]}}")
        for role, sig in (("inputs", sig_in), ("outputs", sig_out)):
            lines.append(f"{role}:")
            if sig is None:
                continue
            for t in sig:
                dd = d["shapes"].get(t["name"]) if (d and t["name"] in d.get("shapes", {})) else None
                if dd is None or not aligned:
                    dd = t["shape"]
                    shp = shape_expr(t["shape"], t["shape"], names, sargs, sargs)
                else:
                    shp = shape_expr(t["shape"], dd, names, sargs, dargs)
                dt = t["dtype"]
                dts = "" if dt in FLOAT_DT else f", dtype: {dt}"
                used = re.search(r"(?<![A-Za-z])" + t["name"] + r"\^", src["leir"])
                shs = "" if used else f", shape: [{', '.join(shp)}]"
                lines.append(f"  - {{name: {t['name']}{shs}{dts}}}")
        if review:
            lines.append("review:")
            for r in review:
                lines.append("  - " + yaml_scalar(r))
        lines.append("leir: |-")
        # one nest per line
        body = tmpl.replace("];", "];\n").strip().split("\n")
        for b in body:
            lines.append("  " + b)
        path = os.path.join(a.out, f"{level}_{model}.yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        n += 1
    print(f"{n} drafts", file=sys.stderr)


if __name__ == "__main__":
    main()
