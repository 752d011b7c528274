"""The attention workloads of the catalogue (tests/workloads/gen_attention.py:
MQA_*, GQA_*, MHA_*, MinGPTCausalAttention) against PyTorch: the program
`leir workloads emit` gives at the small shape and at a second shape
computes, on the interpreter, what the PyTorch module computes (written here
the way the models are written: q/k/v linears or one qkv linear split in
three, heads, causal mask, softmax, projection, then the epilogue)."""
import math
import os
import subprocess
import sys
import tempfile

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
yaml = pytest.importorskip("yaml")

try:  # Debian's torch 1.13 cannot exchange arrays with numpy 2 (the tools venv's)
    torch.from_numpy(__import__("numpy").ones(1))
except Exception as exc:  # noqa: BLE001
    pytest.skip(f"this torch cannot exchange arrays with this numpy: {exc}", allow_module_level=True)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "workloads"))
import gen_attention as ga  # noqa: E402

F = torch.nn.functional

from leir_tool import find_leir  # noqa: E402

LEIR = find_leir()
CAT = os.environ.get("LEIR_WORKLOADS_DIR") or os.path.join(ROOT, "workloads")


def reference(kind, ops, vals, x, mask, w):
    B, T, E = x.shape
    nh = vals["n_head"]
    hs = E // nh

    def heads(t, n):
        return t.view(B, T, n, hs)

    if kind == "MHA":
        q, k, v = F.linear(x, w["aw"], w["ab"]).split(E, dim=2)
        k, q, v = (heads(t, nh).transpose(1, 2) for t in (k, q, v))
    else:
        q = heads(F.linear(x, w["qw"], w["qb"]), nh).transpose(1, 2)
        k = F.linear(x, w["kw"], w["kb"])
        v = F.linear(x, w["vw"], w["vb"])
        if kind == "MQA":
            k = k.unsqueeze(1).expand(B, nh, T, hs)
            v = v.unsqueeze(1).expand(B, nh, T, hs)
        else:
            ng = vals["n_group"]
            # the reference's grouping: head h reads group h % n_group
            k = heads(k, ng).unsqueeze(2).expand(B, T, nh // ng, ng, hs).reshape(B, T, nh, hs).transpose(1, 2)
            v = heads(v, ng).unsqueeze(2).expand(B, T, nh // ng, ng, hs).reshape(B, T, nh, hs).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
    y = F.linear((att @ v).transpose(1, 2).contiguous().view(B, T, E), w["pw"], w["pb"])
    for op in ops:
        if op == "gemm":
            y = F.linear(y, w["gw"])
        elif op == "relu":
            y = torch.relu(y)
        elif op == "gelu":
            y = F.gelu(y)
        elif op == "tanh":
            y = torch.tanh(y)
        elif op == "sum":
            y = y.sum(dim=1, keepdim=True)
        elif op == "mean":
            y = y.mean(dim=1, keepdim=True)
        elif op == "max":
            y = y.max(dim=1, keepdim=True).values
    return y


def roles(kind, ops):
    p = ["aw", "ab"] if kind == "MHA" else ["qw", "qb", "kw", "kb", "vw", "vb"]
    return ["x", "mask"] + p + ["pw", "pb"] + (["gw"] if "gemm" in ops else [])


def run_program(doc, values):
    with tempfile.TemporaryDirectory(prefix="leir-attn-") as tmp:
        ind, outd = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(ind)
        os.makedirs(outd)
        for n, a in values.items():
            np.save(os.path.join(ind, n + ".npy"), a)
        prog = os.path.join(tmp, "p.leir.yaml")
        with open(prog, "w") as f:
            yaml.safe_dump(doc, f)
        r = subprocess.run([LEIR, "run", "--backend", "interp", "--timeout", "120", "--inputs", ind,
                            "--outputs", outd, prog], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr or r.stdout
        (out,) = doc["outputs"]
        return np.load(os.path.join(outd, out + ".npy"))


def second(kind, params):
    """Another shape: a different head count and head size."""
    v = {p["name"]: p["small"] for p in params}
    v["n_head"] = 2 if kind != "GQA" else 4
    v["n_embd"] = v["n_head"] * 6
    if kind == "GQA":
        v["n_group"] = 2
    v["seq_len"] = 5
    v["batch_size"] = 2
    if "out_features" in v:
        v["out_features"] = 7
    return v


@pytest.mark.parametrize("wl", ga.WORKLOADS, ids=[w[0] for w in ga.WORKLOADS])
@pytest.mark.parametrize("which", ["small", "second"])
def test_attention_matches_pytorch(wl, which):
    name, _, kind, ops, _ = wl
    params = ga.params_for(kind, "gemm" in ops)
    vals = {p["name"]: p["small"] for p in params} if which == "small" else second(kind, params)
    args = ",".join(str(vals[p["name"]]) for p in params)
    r = subprocess.run([LEIR, "workloads", "--dir", CAT, "emit", f"level2/{name}", "--args", args,
                        "--dtype", "f64"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = yaml.safe_load(r.stdout)
    names = list(doc["inputs"])
    rs = roles(kind, ops)
    assert len(names) == len(rs)
    g = torch.Generator().manual_seed(5)
    tensors = {}
    for role, n in zip(rs, names):
        shape = doc["inputs"][n]["shape"]
        if role == "mask":
            T = shape[-1]
            tensors[role] = torch.triu(torch.ones(T, T, dtype=torch.bool), 1).view(1, 1, T, T)
        else:
            tensors[role] = torch.randn(shape, generator=g, dtype=torch.float64) * (0.3 if role != "x" else 1)
    want = reference(kind, ops, vals, tensors["x"], tensors["mask"], tensors).numpy()
    got = run_program(doc, {n: tensors[role].numpy() for role, n in zip(rs, names)})
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=1e-9, atol=1e-10), np.abs(got - want).max()
