"""Catalogue workloads that are not in the conformance corpus (drafted by
scripts/workloads_from_torch.py from PyTorch modules) against PyTorch: the
program `leir workloads emit` gives at the small shape and at a second shape
computes the module's outputs on the interpreter."""
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")
yaml = pytest.importorskip("yaml")

try:  # Debian's torch 1.13 cannot exchange arrays with numpy 2 (the tools venv's)
    torch.from_numpy(__import__("numpy").ones(1))
except Exception as exc:  # noqa: BLE001
    pytest.skip(f"this torch cannot exchange arrays with this numpy: {exc}", allow_module_level=True)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import leir.fx as fx  # noqa: E402
import workloads_from_torch as wt  # noqa: E402

from leir_tool import find_leir  # noqa: E402

LEIR = find_leir()
CAT = os.environ.get("LEIR_WORKLOADS_DIR") or os.path.join(ROOT, "workloads")


# the drafts that passed review are committed; the script may hold more
# (the HAND_WRITTEN ones are written after the reference's
# spelling instead, and checked in test_workloads_pytorch.py)
HAND_WRITTEN = {"Conv3d_GroupNorm_Mean", "Conv3d_GroupNorm_Min_Clamp", "Gemm_Multiply_LeakyReLU",
                "Gemm_Scaling_Hardtanh_GELU", "Gemm_Sigmoid_Scaling_ResidualAdd", "Matmul_Divide_GELU",
                "Matmul_Subtract_Multiply_ReLU", "Conv2d_Divide_LeakyReLU", "Conv3d_Mish_Tanh",
                "Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd", "Gemm_Add_ReLU", "Gemm_BatchNorm_Scaling_Softmax",
                "Gemm_Scale_BatchNorm", "Conv2d_InstanceNorm_Divide",
                # issue 30.6: RMSNorm's eps is a rank-0 constant (leir.fx writes rank-0 tensors as
                # literals); Gemm_GroupNorm_Min_BiasAdd follows the reference's spelling of its cat
                "RMSNorm", "Gemm_GroupNorm_Min_BiasAdd"}
# issue 30.6: the reference lists a model's own parameter twice (an unread get_attr constant,
# then the parameter) and before its submodules' parameters; here the catalogue's input names in
# leir.fx's order, the unread one left out
FX_ORDER = {"Gemm_GroupNorm_Swish_Multiply_Swish": ["A", "C", "D", "F", "G", "Af"],
            "Gemm_BiasAdd_Hardtanh_Mish_GroupNorm": ["A", "C", "D", "F", "O", "Q"]}
COMMITTED = [e for e in wt.W
             if os.path.exists(os.path.join(CAT, f"level{e['level']}_{e['name']}.yaml"))
             and e["name"] not in HAND_WRITTEN]


def test_most_drafts_are_committed():
    assert len(COMMITTED) >= 35  # 37 drafts, less RMSNorm and Gemm_GroupNorm_Min_BiasAdd (issue 30.6)


def second_shape(entry):
    """small + 1 for every free integer, keeping divisibility constraints."""
    vals = {}
    for p, d, s in entry["params"]:
        vals[p] = s if isinstance(d, float) or (d == s and d in (0, 1)) else s + 1
    for c in entry["constraints"]:
        a, b = re.fullmatch(r"(\w+) % (\w+) == 0", c).groups()
        small = {p: s for p, _, s in entry["params"]}
        vals[a] = vals[b] * (small[a] // small[b])
    return vals


@pytest.mark.parametrize("entry", COMMITTED, ids=[e["name"] for e in COMMITTED])
@pytest.mark.parametrize("which", ["small", "second"])
def test_catalogue_matches_pytorch(entry, which):
    if which == "small":
        vals = {p: s for p, _, s in entry["params"]}
    else:
        vals = second_shape(entry)
    args = ",".join(repr(vals[p]) if isinstance(vals[p], float) else str(vals[p])
                    for p, _, _ in entry["params"])
    r = subprocess.run([LEIR, "workloads", "--dir", CAT, "emit",
                        f"level{entry['level']}/{entry['name']}", "--args", args, "--dtype", "f64"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = yaml.safe_load(r.stdout)
    torch.manual_seed(1)
    module, shapes = entry["build"](vals)
    module = module.double().eval()
    xs = [torch.rand(list(s), dtype=torch.float64) + 0.5 for s in shapes]
    prog = fx.import_module(module, tuple(xs))
    # the catalogue names tensors as the reference does, leir.fx in its own order: same
    # roles in the same signature order, so map them by position
    names = FX_ORDER.get(entry["name"], list(doc["inputs"]))
    assert set(names) <= set(doc["inputs"])
    assert len(names) == len(prog.inputs) and len(doc["outputs"]) == len(prog.outputs)
    rename = {old[0]: new for old, new in zip(prog.inputs + prog.outputs, names + list(doc["outputs"]))}
    prog.inputs = [(rename[n], dt, sh) for n, dt, sh in prog.inputs]
    prog.outputs = [(rename[n], dt, sh) for n, dt, sh in prog.outputs]
    prog.input_names = [rename[n] for n in prog.input_names]
    prog.params = {rename[n]: v for n, v in prog.params.items()}
    prog.text = doc["leir"].replace("\n", "").strip()
    got = prog.run(*xs, leir=LEIR)[0]
    want = module(*xs).detach()
    assert list(got.shape) == list(want.shape)
    assert torch.allclose(got, want, rtol=1e-9, atol=1e-10), (got - want).abs().max()
