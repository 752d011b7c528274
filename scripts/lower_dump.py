#!/usr/bin/env python3
"""Dumps what `leir lower` prints for the conformance corpus, to compare two
builds byte for byte (a refactoring of the C or CUDA emitter must not change
any generated source, except where it fixes a bug).

For every program of tests/data/sources-*.jsonl (with its signature, as a
.leir.yaml program file) and every distinct 'after' program of
tests/data/steps-*.jsonl (signature inferred), it runs

    leir lower --to c --threads 4 IN
    leir lower --to c --threads 4 --check-bounds IN   (sources only)
    leir lower --to cuda --report IN

and writes one file per form into OUTDIR (c.txt, c-bounds.txt, cuda.txt):
a header line per program, the exit status, stdout, then stderr.

Usage: lower_dump.py LEIR_BINARY OUTDIR [--limit N]
       diff -r OUTDIR_BEFORE OUTDIR_AFTER
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def programs(limit):
    out = []
    for name in ("sources-small.jsonl", "sources-default.jsonl"):
        for i, line in enumerate(open(os.path.join(ROOT, "tests/data", name))):
            d = json.loads(line)
            out.append(("%s:%d %s" % (name, i + 1, d["id"]), d["leir"], d.get("signature")))
    seen = set()
    for name in ("steps-small.jsonl", "steps-default.jsonl"):
        for i, line in enumerate(open(os.path.join(ROOT, "tests/data", name))):
            d = json.loads(line)
            a = d.get("after")
            if not a or a in seen:
                continue
            seen.add(a)
            out.append(("%s:%d %s %s" % (name, i + 1, d["id"], d["strategy"]), a, None))
    return out[:limit] if limit else out


def yaml_of(text, sig):
    def decls(xs):
        return "".join("  %s: {dtype: %s, shape: [%s]}\n" % (x["name"], x["dtype"],
                                                             ", ".join(map(str, x["shape"])))
                       for x in xs)
    return ("inputs:\n" + decls(sig["inputs"]) + "outputs:\n" + decls(sig["outputs"]) +
            "leir: |-\n  " + text + "\n")


def main():
    leir, outdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--limit" else 0
    os.makedirs(outdir, exist_ok=True)
    files = {k: open(os.path.join(outdir, k + ".txt"), "wb") for k in ("c", "c-bounds", "cuda")}
    tmp = tempfile.mkdtemp(prefix="lower_dump")
    for label, text, sig in programs(limit):
        name = "p.leir.yaml" if sig else "p.leir"  # relative: messages name it alone
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(yaml_of(text, sig) if sig else text + "\n")
        forms = [("c", ["--to", "c", "--threads", "4"]), ("cuda", ["--to", "cuda", "--report"])]
        if sig:
            forms.append(("c-bounds", ["--to", "c", "--threads", "4", "--check-bounds"]))
        for key, args in forms:
            r = subprocess.run([leir, "lower"] + args + [name], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120, cwd=tmp)
            f = files[key]
            f.write(("### %s\n### exit %d\n" % (label, r.returncode)).encode())
            f.write(r.stdout)
            f.write(b"### stderr\n")
            f.write(r.stderr)
        os.unlink(path)
    os.rmdir(tmp)
    for f in files.values():
        f.close()


if __name__ == "__main__":
    main()
