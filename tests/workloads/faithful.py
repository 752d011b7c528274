#!/usr/bin/env python3
"""Faithfulness of the workload catalogue to the Step-TP reference.

For every workload of the conformance corpus:
  * small shape (sources-small.jsonl): `leir workloads emit NAME --args
    SHAPE_ARGS --dtype f64` has the reference's signature (names, order,
    dtypes, shapes) and `leir verify --backend interp REFERENCE EMITTED` says
    EQUAL or CLOSE;
  * default shape (sources-default.jsonl): the emitted program at the default
    parameters is the reference's text (after mapping the reference's stray
    f16 scalars to the program's dtype).
Expected deviations (where the reference is wrong and the catalogue is
right) are listed with reasons in tests/workloads/deviations.yaml; a listed
deviation that no longer deviates fails too, so the list stays true.

And for every workload of the catalogue: it emits, checks and runs on the
interpreter at its small shape, and emits at --shape random.

usage: faithful.py LEIR_EXE CORPUS_DIR CATALOGUE_DIR DEVIATIONS [--quick] [--only REGEX]
(--only: the workloads whose id matches REGEX, for working on a few)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # PyYAML (python3-yaml) missing: skip
    sys.exit(77)

leir, corpus, catdir, devfile = sys.argv[1:5]
quick = "--quick" in sys.argv
only = re.compile(sys.argv[sys.argv.index("--only") + 1]) if "--only" in sys.argv else None


def skip(i, wid):
    return (quick and i % 8) or (only is not None and not only.search(wid))


env = dict(os.environ, LEIR_WORKLOADS_DIR=catdir)
dev = yaml.safe_load(open(devfile)) or {}
for k in ("small", "default", "random"):
    dev[k] = dev.get(k) or {}
dev_small = {k: v for k, v in (dev.get("small") or {}).items()}
dev_default = {k: v for k, v in (dev.get("default") or {}).items()}
dev_random = {k: v for k, v in (dev.get("random") or {}).items()}
failures = []
seen_dev = set()


def run(args, **kw):
    return subprocess.run([leir] + args, env=env, capture_output=True, text=True, timeout=600, **kw)


def fmt_arg(v):
    return repr(v) if isinstance(v, float) else str(v)


def fail(wid, kind, msg):
    key = (wid, kind)
    table = dev_small if kind == "small" else dev_default
    if wid in table:
        seen_dev.add(key)
        return
    failures.append(f"{wid} [{kind}]: {msg}")


tmp = tempfile.mkdtemp(prefix="leir-wl-")
small = [json.loads(l) for l in open(os.path.join(corpus, "sources-small.jsonl"))]
for i, e in enumerate(small):
    wid = e["id"]
    if skip(i, wid):
        continue
    args = ",".join(fmt_arg(v) for v in e["shape_args"])
    r = run(["workloads", "emit", wid, "--args", args, "--dtype", "f64"])
    if r.returncode:
        fail(wid, "small", "emit failed: " + r.stderr.strip())
        continue
    doc = yaml.safe_load(r.stdout)
    got_in = [{"name": n, "dtype": d["dtype"], "shape": d["shape"]} for n, d in (doc.get("inputs") or {}).items()]
    got_out = [{"name": n, "dtype": d["dtype"], "shape": d["shape"]} for n, d in doc["outputs"].items()]
    if got_in != e["signature"]["inputs"] or got_out != e["signature"]["outputs"]:
        fail(wid, "small", f"signature {got_in} -> {got_out} differs from the reference's "
             f"{e['signature']['inputs']} -> {e['signature']['outputs']}")
        continue
    ref = os.path.join(tmp, "ref.leir")
    cand = os.path.join(tmp, "cand.leir")
    open(ref, "w").write(e["leir"])
    open(cand, "w").write(doc["leir"])
    v = run(["verify", "--backend", "interp", "--timeout", "300", ref, cand])
    verdict = v.stdout.split(":")[0]
    if verdict not in ("EQUAL", "CLOSE"):
        fail(wid, "small", "verify: " + (v.stdout.strip().splitlines() or [v.stderr.strip()])[0])
    elif wid in dev_small:
        failures.append(f"{wid} [small]: listed as a deviation but verifies {verdict}")

# programs of held-back workloads quoted in the reference notes: the text must be the reference's
notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference-notes.jsonl")
for i, e in enumerate(json.loads(l) for l in open(notes)):
    wid = e["id"]
    if only is not None and not only.search(wid):
        continue
    args = ",".join(fmt_arg(v) for v in e["shape_args"])
    if "inputs" in e or "outputs" in e:
        # the known names in the reference's order (inputs, fx constants, parameters; output)
        sig = run(["workloads", "emit", wid, "--args", args, "--dtype", "f64"])
        doc = yaml.safe_load(sig.stdout) if not sig.returncode else {}
        got = (list((doc.get("inputs") or {}).keys()), list((doc.get("outputs") or {}).keys()))
        if sig.returncode or got != (e.get("inputs", got[0]), e.get("outputs", got[1])):
            failures.append(f"{wid} [{e['source']}]: known names {got} are not the reference's "
                            f"{(e.get('inputs'), e.get('outputs'))}: {sig.stderr.strip()[:300]}")
    r = run(["workloads", "emit", wid, "--args", args, "--dtype", "f64", "--leir"])
    if e.get("compare") == "verify" and not r.returncode:
        # the catalogue prints unit stride/dilation factors (c*1+g*1) the reference leaves out
        ref, cand = os.path.join(tmp, "ref.leir"), os.path.join(tmp, "cand.leir")
        open(ref, "w").write(e["leir"])
        open(cand, "w").write(r.stdout)
        v = run(["verify", "--backend", "interp", "--timeout", "300", ref, cand])
        if v.stdout.split(":")[0] not in ("EQUAL", "CLOSE"):
            failures.append(f"{wid} [{e['source']}]: verify: {(v.stdout or v.stderr).strip()[:300]}")
    elif r.returncode or r.stdout.strip() != e["leir"]:
        failures.append(f"{wid} [{e['source']}]: the emitted text is not the reference's: "
                        f"{(r.stderr or r.stdout).strip()[:300]}")

FLOAT = re.compile(r"\^\{(f16|f32|bf16|f64),")
default = [json.loads(l) for l in open(os.path.join(corpus, "sources-default.jsonl"))]
for i, e in enumerate(default):
    wid = e["id"]
    if skip(i, wid):
        continue
    m = FLOAT.search(e["leir"])
    dt = m.group(1) if m else "f32"
    r = run(["workloads", "emit", wid, "--leir", "--dtype", dt])
    if r.returncode:
        fail(wid, "default", "emit failed: " + r.stderr.strip())
        continue
    want = FLOAT.sub("^{" + dt + ",", e["leir"])
    if r.stdout.strip() != want:
        a, b = r.stdout.strip(), want
        k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
        fail(wid, "default", f"text differs at byte {k}: ...{a[max(0, k - 40):k + 40]}... vs "
             f"...{b[max(0, k - 40):k + 40]}...")
    elif wid in dev_default:
        failures.append(f"{wid} [default]: listed as a deviation but matches")

# every workload: small emits, checks and runs; random emits
names = [json.loads(l)["name"] for l in run(["workloads", "list", "--json"]).stdout.splitlines()]
levels = [json.loads(l)["level"] for l in run(["workloads", "list", "--json"]).stdout.splitlines()]
for i, (n, lv) in enumerate(zip(names, levels)):
    wid = f"level{lv}/{n}"
    if skip(i, wid):
        continue
    r = run(["workloads", "emit", wid, "--shape", "small", "--leir"])
    if r.returncode:
        failures.append(f"{wid} [small shape]: emit failed: {r.stderr.strip()}")
        continue
    p = os.path.join(tmp, "s.leir")
    open(p, "w").write(r.stdout)
    # 300 s: the ASan build interprets Conv2d_GroupNorm_Scale_MaxPool_Clamp in over 60 s under load
    x = run(["run", "--backend", "interp", "--timeout", "300", p])
    if x.returncode:
        failures.append(f"{wid} [small shape]: run failed: {(x.stderr or x.stdout).strip()[:300]}")
    r = run(["workloads", "emit", wid, "--shape", "random", "--seed", "3", "--leir"])
    if r.returncode and wid not in dev_random:
        failures.append(f"{wid} [random shape]: emit failed: {r.stderr.strip()}")

# the drafts' ambiguity notes are all decided (docs/workloads.md says how); none may come back
for fn in sorted(os.listdir(catdir)):
    if fn.endswith(".yaml") and "review" in (yaml.safe_load(open(os.path.join(catdir, fn))) or {}):
        failures.append(f"{fn}: an undecided 'review:' note")

if not quick and only is None:
    for k in list(dev_small):
        if (k, "small") not in seen_dev and k not in {e["id"] for e in small}:
            failures.append(f"{k}: a deviation for a workload not in the corpus")
for f in failures:
    print(f)
print(f"{len(failures)} failures", file=sys.stderr)
sys.exit(1 if failures else 0)
