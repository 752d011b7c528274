#!/usr/bin/env python3
"""Dumps what the strategy commands print for a corpus, to check that a
refactoring of strategies/ keeps their behaviour byte for byte.

For every program of each SOURCES file (tests/data/sources-*.jsonl), run as a
program file with its signature:
  leir candidates F                  (every strategy, with the results)
  leir candidates --json --no-result F
  leir explain S F                   for every strategy S of the catalogue
  leir apply STEP F --cot            for a sample of candidates: per strategy
                                     the first, the last and up to 4 between
  leir apply --json STEP F           for the same sample
  leir ground F AFTER                for the first candidate of each strategy
plus `leir strategies` and `leir strategies --json` once.

Each line of the dump is `COMMAND<TAB>rc<TAB>sha256(stdout)<TAB>sha256(stderr)
<TAB>len(stdout)` (the outputs themselves are large: 300 MB for the default
corpus), so two dumps are compared with `cmp` or `diff`.

Usage: strategy_dump.py LEIR_BINARY OUT.tsv SOURCES.jsonl...
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def run(leir, args, out, label, cwd=None):
    p = subprocess.run([leir] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    h = lambda b: hashlib.sha256(b).hexdigest()[:24]
    out.write("%s\t%d\t%s\t%s\t%d\n" % (label, p.returncode, h(p.stdout), h(p.stderr), len(p.stdout)))
    return p


def yaml_of(rec):
    sig = rec.get("signature")
    if not sig:  # an invalid source: the bare text (the commands report it)
        return rec["leir"] + "\n"
    lines = []
    for part in ("inputs", "outputs"):
        lines.append(part + ":")
        for t in sig[part]:
            lines.append("  %s: {dtype: %s, shape: [%s]}" % (t["name"], t["dtype"],
                                                            ", ".join(str(d) for d in t["shape"])))
    lines.append("leir: " + json.dumps(rec["leir"]))
    return "\n".join(lines) + "\n"


def sample(idx):
    if len(idx) <= 6:
        return idx
    step = (len(idx) - 1) / 5.0
    return sorted({idx[round(k * step)] for k in range(6)})


def main():
    leir, out_path, sources = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    names = subprocess.run([leir, "strategies", "--json"], stdout=subprocess.PIPE,
                           check=True).stdout.decode().splitlines()
    strategies = [json.loads(l)["name"] for l in names if l.strip()]
    with open(out_path, "w") as out, tempfile.TemporaryDirectory() as tmp:
        run(leir, ["strategies"], out, "strategies")
        run(leir, ["strategies", "--json"], out, "strategies --json")
        for src in sources:
            for ln, line in enumerate(open(src)):
                rec = json.loads(line)
                # relative to tmp (the cwd of every command): diagnostics name the
                # file, and the temporary directory's name differs between runs
                f = "p.leir.yaml" if rec.get("signature") else "p.leir"
                with open(os.path.join(tmp, f), "w") as fh:
                    fh.write(yaml_of(rec))
                tag = "%s:%d" % (os.path.basename(src), ln + 1)
                p = run(leir, ["candidates", f], out, tag + " candidates", tmp)
                run(leir, ["candidates", "--json", "--no-result", f], out, tag + " candidates --json", tmp)
                for s in strategies:
                    run(leir, ["explain", s, f], out, tag + " explain " + s, tmp)
                rows = [r.split("\t") for r in p.stdout.decode().splitlines()]
                by = {}
                for i, r in enumerate(rows):
                    by.setdefault(r[0].split(" ")[0], []).append(i)
                for s, idx in by.items():
                    for i in sample(idx):
                        step = rows[i][0]
                        run(leir, ["apply", step, f, "--cot"], out, tag + " apply --cot " + step, tmp)
                        run(leir, ["apply", "--json", step, f], out, tag + " apply --json " + step, tmp)
                    first = rows[idx[0]]
                    after = "after.leir"
                    with open(os.path.join(tmp, after), "w") as fh:
                        fh.write(first[2] + "\n")
                    run(leir, ["ground", f, after], out, tag + " ground " + first[0], tmp)


if __name__ == "__main__":
    main()
