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


KERNELISH = ("kernel", "pool", "window")
STRUCTURAL = ("kernel", "pool", "stride", "dilation", "padding", "dim")


def candidates(names, small, dflt):
    """[(expr, value_small, value_default, cost)] integer expressions: the
    parameters, output extents of convolutions and pools (also of pools after
    convolutions), sums and differences with small constants, and products
    of up to three of these (mean divisors)."""
    ints = [i for i, n in enumerate(names)
            if isinstance(small[i], int) and isinstance(dflt[i], int)]
    atoms = {}

    def add(e, vs, vd, cost, into=atoms):
        if vs is None or vd is None:
            return
        key = (vs, vd)
        if e not in {x for x, _ in into.get(key, [])}:
            into.setdefault(key, []).append((e, cost))

    for i in ints:
        add(names[i], small[i], dflt[i], 1)

    def role(*keys):
        return [i for i in ints if any(k in names[i] for k in keys)]
    pads = role("pad") + [None]
    dils = role("dil") + [None]
    ks = role("kernel", "pool")
    strides = role("stride") + [None]
    sizes = [i for i in ints if i not in ks and i not in strides and i not in pads and i not in dils]

    def nm(i, d):
        return str(d) if i is None else names[i]

    def vv(i, vec, d):
        return d if i is None else vec[i]
    derived = []
    def suffix(i):
        m = re.search(r"_([dhw])$", names[i]) if i is not None else None
        return m.group(1) if m else None

    def fits(k, *others):
        sk = suffix(k)
        return all(o is None or suffix(o) is None or suffix(o) == sk for o in others)
    for L in sizes:
        for k in ks:
            for p in pads:
                for d in dils:
                    for st in strides + [k]:
                        if not fits(k, p, d, st if st != k else None):
                            continue
                        vals = []
                        for vec in (small, dflt):
                            S = vv(st, vec, 1)
                            num = vec[L] + 2 * vv(p, vec, 0) - vv(d, vec, 1) * (vec[k] - 1) - 1
                            vals.append(num // S + 1 if S > 0 else None)
                        if p is None and d is None and st is None:
                            e = f"{names[L]}-{names[k]}+1"
                            cost = 2
                        elif p is None and d is None and st == k:
                            e = f"{names[L]}//{names[k]}"
                            cost = 2
                        else:
                            e = f"({names[L]}+2*{nm(p, 0)}-{nm(d, 1)}*({names[k]}-1)-1)//{nm(st, 1)}+1"
                            cost = 4
                        add(e, vals[0], vals[1], cost)
                        derived.append((e, vals[0], vals[1], cost))
        for p in pads[:-1]:
            add(f"{names[L]}+2*{names[p]}", small[L] + 2 * small[p], dflt[L] + 2 * dflt[p], 2)
    # a pool after a convolution
    for e, vs, vd, cost in list(derived):
        if cost > 2 or vs is None or vd is None:
            continue
        for k in ks:
            if small[k] > 0 and dflt[k] > 0:
                add(f"({e})//{names[k]}", vs // small[k], vd // dflt[k], cost + 1)
    base = [(e, vs, vd, c) for (vs, vd), lst in atoms.items() for e, c in lst]
    out = {}
    for e, vs, vd, c in base:
        add(e, vs, vd, c, out)
        for k in (1, 2, 3, 4):
            add(f"{e}+{k}", vs + k, vd + k, c + 2, out)
            add(f"{e}-{k}", vs - k, vd - k, c + 2, out)
        for k in (2, 3, 4):
            add(f"{e}*{k}", vs * k, vd * k, c + 2, out)
            add(f"{e}//{k}", vs // k, vd // k, c + 2, out)

    def par(e):
        return e if re.fullmatch(r"[A-Za-z_0-9]+", e) else "(" + e + ")"
    small_base = [x for x in base if x[3] <= 2]
    for (e1, s1, d1, c1), (e2, s2, d2, c2) in itertools.combinations(small_base, 2):
        add(f"{par(e1)}*{par(e2)}", s1 * s2, d1 * d2, c1 + c2 + 1, out)
        if s2 and d2:
            add(f"{par(e1)}//{par(e2)}", s1 // s2, d1 // d2, c1 + c2 + 1, out)
        if s1 and d1:
            add(f"{par(e2)}//{par(e1)}", s2 // s1, d2 // d1, c1 + c2 + 1, out)
        add(f"{par(e1)}+{par(e2)}", s1 + s2, d1 + d2, c1 + c2 + 1, out)
        add(f"{par(e1)}-{par(e2)}", s1 - s2, d1 - d2, c1 + c2 + 1, out)
        add(f"{par(e2)}-{par(e1)}", s2 - s1, d2 - d1, c1 + c2 + 1, out)
    singles = [x for x in base if x[3] <= 2]
    for a1, a2, a3 in itertools.combinations(singles, 3):
        add(f"{par(a1[0])}*{par(a2[0])}*{par(a3[0])}", a1[1] * a2[1] * a3[1],
            a1[2] * a2[2] * a3[2], a1[3] + a2[3] + a3[3] + 2, out)
    res = []
    for (vs, vd), lst in out.items():
        for e, c in lst:
            res.append((e, vs, vd, c))
    return res


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
