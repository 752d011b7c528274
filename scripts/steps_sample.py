#!/usr/bin/env python3
"""Builds tests/data/run/steps-verdicts.jsonl from a verify_census JSONL file:
per strategy the fastest EQUAL and CLOSE pairs, and up to three pairs of every
kind of failure, with the reason the reference output is wrong (docs/census.md
explains each). The pairs themselves are read from tests/data/steps-small.jsonl
by line number.

Usage: steps_sample.py CENSUS.jsonl > tests/data/run/steps-verdicts.jsonl
"""
import collections
import json
import re
import sys


def kind_of(r):
    m = r["message"]
    if r["verdict"] != "MISMATCH":
        return r["verdict"]
    nonfinite = bool(re.search(r"(expected|got) -?(nan|inf)", m))
    return "nonfinite" if nonfinite else "finite"


def reason(r, k):
    s, v = r["strategy"], r["verdict"]
    if v == "INVALID" and r["program"] == 0:
        return "the reference's before program is invalid (%s): the pair cannot be verified" % r["rule"]
    if v == "INVALID" and r["rule"].startswith("parse"):
        return "malformed output: a ']' not followed by ';' (leir-reference Q40)"
    if v == "INVALID" and r["rule"].startswith("limit"):
        return "the rewrite materializes an intermediate over every loop (%s)" % r["rule"]
    if v == "TIMEOUT":
        return "the rewrite multiplies the work (an intermediate over every loop): timed out"
    if s in ("reduction_factorization", "tensor_split_to_decouple_operators"):
        return "the combining nest keeps a loop of the split reduction: partial sums are added once per iteration of it"
    if s in ("online_softmax", "normal_loop_summation_on_exp_to_prefix_summation_on_exp",
             "flashattention_wo_tiling", "normal_loop_max_to_prefix_max") and v == "MISMATCH":
        return ("the running rescale computes exp(-inf-(-inf)) = NaN where a masked prefix (bool "
                "mask input) is all -inf; the original softmax is finite there")
    if s in ("expand_log", "logsimp"):
        return "log(a*b) and log(a)+log(b) differ for negative a, b (NaN on one side only)"
    if k == "nonfinite":
        if s in ("additive_split", "multiplicative_split", "exponential_split"):
            return "the split reads y at another element; where y overflows or is NaN the result becomes NaN/inf"
        return "the rewrite overflows (inf/NaN) on large inputs where the original does not, or the reverse"
    if s == "exponential_split":
        return "exp(x-y)*exp(y) with y from another element under/overflows on large inputs: a finite but wrong result downstream"
    if s in ("additive_split", "multiplicative_split"):
        return "(x+y)-y style rewrite: its rounding error, amplified by a later normalization, exceeds the f64 tolerance (not wrong in exact arithmetic)"
    if s == "factorization":
        return "the factored expression is not the original one (a term changed or dropped)"
    return "wrong result on standard normal inputs"


def main():
    census = [json.loads(l) for l in open(sys.argv[1])]
    chosen = []
    good = collections.defaultdict(list)
    bad = collections.defaultdict(list)
    for r in census:
        if r["verdict"] in ("EQUAL", "CLOSE"):
            good[(r["strategy"], r["verdict"])].append(r)
        else:
            bad[(r["strategy"], r["verdict"], kind_of(r), r["program"])].append(r)
    for key in sorted(good):
        chosen.append(min(good[key], key=lambda r: r["seconds"]))
    for key in sorted(bad):
        rs = sorted(bad[key], key=lambda r: r["seconds"])[:3]
        chosen.extend(rs)
    chosen.sort(key=lambda r: r["line"])
    for r in chosen:
        out = {"line": r["line"], "id": r["id"], "strategy": r["strategy"], "verdict": r["verdict"]}
        if r["verdict"] not in ("EQUAL", "CLOSE"):
            out["reason"] = reason(r, kind_of(r))
        print(json.dumps(out))


if __name__ == "__main__":
    main()
