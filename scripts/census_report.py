#!/usr/bin/env python3
"""Summarizes a verify_census JSONL file (bench/verify_census.c --out) as
Markdown: verdict counts per strategy, then the pairs that do not pass.

Usage: census_report.py CENSUS.jsonl [STEPS.jsonl] > table.md
"""
import collections
import json
import sys

VERDICTS = ["EQUAL", "CLOSE", "MISMATCH", "INVALID", "COMPILE_ERROR", "RUNTIME_ERROR", "TIMEOUT"]


def main():
    rows = [json.loads(l) for l in open(sys.argv[1])]
    per = collections.OrderedDict()
    for r in rows:
        per.setdefault(r["strategy"], collections.Counter())[r["verdict"]] += 1
    total = collections.Counter(r["verdict"] for r in rows)
    print("| strategy | pairs | " + " | ".join(VERDICTS) + " |")
    print("|---|---:|" + "---:|" * len(VERDICTS))
    for name in sorted(per):
        c = per[name]
        print("| %s | %d | %s |" % (name, sum(c.values()), " | ".join(str(c[v]) for v in VERDICTS)))
    print("| **all** | **%d** | %s |" % (len(rows), " | ".join("**%d**" % total[v] for v in VERDICTS)))
    print()
    print("Pairs that do not pass, by strategy and reason (first line of the message):")
    print()
    groups = collections.OrderedDict()
    for r in rows:
        if r["verdict"] in ("EQUAL", "CLOSE"):
            continue
        msg = r["message"]
        key = (r["strategy"], r["verdict"], "reference" if r["program"] == 0 else "candidate")
        groups.setdefault(key, []).append(r)
    for (strategy, verdict, who), rs in sorted(groups.items()):
        ids = sorted(set(r["id"] for r in rs))
        print("- %s, %s (%s), %d pair(s): %s" % (strategy, verdict, who, len(rs), ", ".join(ids[:6]) + (" ..." if len(ids) > 6 else "")))


if __name__ == "__main__":
    main()
