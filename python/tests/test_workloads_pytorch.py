"""Catalogue workloads written by hand after the reference's spellings
(reference workloads missing from the conformance corpus) against PyTorch:
at the small shape and at other shapes (strides, dilations and paddings
other than the reference's defaults, so that every output extent computed
from the parameters is exercised), the program `leir workloads emit` gives
computes, on the interpreter, what the PyTorch operation computes on the same
inputs."""
import os
import subprocess
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
F = torch.nn.functional

from leir_tool import find_leir  # noqa: E402

LEIR = find_leir()
CAT = os.environ.get("LEIR_WORKLOADS_DIR") or os.path.join(ROOT, "workloads")


def emit(wid, args):
    r = subprocess.run([LEIR, "workloads", "--dir", CAT, "emit", wid, "--args", args, "--dtype", "f64"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return yaml.safe_load(r.stdout)


def run_program(doc, values):
    with tempfile.TemporaryDirectory(prefix="leir-wl-") as tmp:
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


def inputs_for(doc, g):
    vals = {}
    for n, d in doc["inputs"].items():
        shape = d["shape"]
        if d["dtype"] == "bool":
            vals[n] = torch.rand(shape, generator=g) < 0.5
        elif "value" in (d.get("domain") or {}):
            vals[n] = torch.full(shape, float(d["domain"]["value"]), dtype=torch.float64)
        elif d["dtype"] == "i64":
            lo, hi = d["domain"]["range"]
            vals[n] = torch.randint(lo, hi, shape, generator=g)
        else:
            vals[n] = torch.randn(shape, generator=g, dtype=torch.float64)
    return vals


def conv1d_pair(v, a):
    st, pad, dil = a[3], a[4], a[5]
    return F.conv1d(v["A"], v["G"], stride=st, padding=pad, dilation=dil) + \
        F.conv1d(v["C"], v["G"], stride=st, padding=pad, dilation=dil)


def conv3d_pair(v, a):
    st, pad, dil = tuple(a[5:8]), tuple(a[8:11]), tuple(a[11:14])
    return F.conv3d(v["A"], v["G"], stride=st, padding=pad, dilation=dil) + \
        F.conv3d(v["C"], v["G"], stride=st, padding=pad, dilation=dil)


def mish(x):
    return x * torch.tanh(F.softplus(x))


# (workload, [args...], reference(inputs by name, args) -> tensor); convolutions without bias,
# as the reference lowers them

CASES = [
    ("level1/Max_Pooling_2D", ["4,3,10,9,2,2,1,3", "2,2,11,8,3,1,1,2", "2,2,9,12,2,3,0,1"],
     lambda v, a: F.max_pool2d(v["A"], a[4], stride=a[5], padding=a[6], dilation=a[7])),
    ("level1/Max_Pooling_1D", ["16,12,24,4,2,2,3", "2,3,13,3,1,1,2", "2,2,9,2,3,0,1"],
     lambda v, a: F.max_pool1d(v["A"], a[3], stride=a[4], padding=a[5], dilation=a[6])),
    ("level1/Max_Pooling_3D", ["2,3,12,8,10,3,2,1,3", "2,2,7,6,9,2,1,1,2", "1,2,6,7,5,3,3,0,1"],
     lambda v, a: F.max_pool3d(v["A"], a[5], stride=a[6], padding=a[7], dilation=a[8])),
    ("level1/Average_Pooling_1D", ["4,2,1,8,20,64", "3,1,1,2,3,11", "5,3,2,2,2,13"],
     lambda v, a: F.avg_pool1d(v["A"], a[0], stride=a[1], padding=a[2])),
    ("level1/Average_Pooling_2D", ["3,12,24,8,20", "2,2,3,7,9", "4,2,2,9,13"],
     lambda v, a: F.avg_pool2d(v["A"], a[0])),
    ("level1/Average_Pooling_3D", ["3,2,1,6,15,14,8,10", "2,1,1,2,2,5,4,6", "4,3,2,1,2,7,6,9"],
     lambda v, a: F.avg_pool3d(v["A"], a[0], stride=a[1], padding=a[2])),
    ("level1/conv_standard_1D_dilated_strided", ["3,12,3,3,4,4,26", "2,5,4,2,1,3,13", "3,4,2,1,3,2,9"],
     lambda v, a: F.conv1d(v["A"], v["D"], stride=a[3], dilation=a[4])),
    ("level1/masked_cumsum", ["2,6,1", "3,9,1"],
     lambda v, a: torch.cumsum(v["A"] * v["C"], dim=1)),
    ("level1/CrossEntropyLoss", ["4,3", "7,5"],
     lambda v, a: F.cross_entropy(v["A"], v["C"])),
    ("level2/conv1d_conv1d_padding", ["3,12,3,1,2,1,6,10", "2,5,4,2,1,2,3,11", "3,4,3,3,0,1,2,9"],
     conv1d_pair),
    ("level2/conv3d_conv3d_padding", ["3,4,3,4,5,1,1,1,1,1,1,1,1,1,2,4,5,6",
                                      "2,3,2,3,2,2,1,2,0,1,2,1,2,1,2,5,6,5"],
     conv3d_pair),
    ("level2/Conv3d_GroupNorm_Mean", ["3,4,3,2,2,5,6,5", "2,6,2,3,2,4,3,5"],
     lambda v, a: F.group_norm(F.conv3d(v["A"], v["F"]), a[3], v["G"], v["H"], eps=1e-5).mean((1, 2, 3, 4))),
    ("level2/Conv3d_GroupNorm_Min_Clamp", ["3,4,3,2,0.0,1.0,2,4,6,5", "2,6,2,3,0.25,0.75,2,4,3,5"],
     lambda v, a: torch.clamp(torch.min(F.group_norm(F.conv3d(v["A"], v["H"]), a[3], v["I"], v["J"], eps=1e-5),
                                        torch.tensor(a[4], dtype=torch.float64)), a[4], a[5])),
    ("level2/Conv3d_Softmax_MaxPool_MaxPool", ["3,3,3,2,2,6,7,10", "2,3,2,3,2,10,11,11"],
     lambda v, a: F.max_pool3d(F.max_pool3d(torch.softmax(F.conv3d(v["A"], v["G"]), dim=1), a[3]), a[3])),
    ("level2/Conv3d_Max_LogSumExp_ReLU", ["3,4,3,1,1,2,4,6,5", "2,3,2,2,0,2,7,8,6"],
     lambda v, a: torch.relu(torch.logsumexp(F.max_pool3d(F.conv3d(v["A"], v["G"], stride=a[3], padding=a[4]), 2, 2),
                                             dim=1, keepdim=True))),
    ("level2/Conv2d_Subtract_HardSwish_MaxPool_Mish", ["3,4,3,0.5,2,2,9,8", "2,3,2,0.25,3,2,11,8"],
     lambda v, a: mish(F.max_pool2d(F.hardswish(F.conv2d(v["A"], v["I"]) - a[3]), a[4]))),
    # corpus workloads whose templates were generalized (output extents from stride, dilation,
    # padding and per-dimension kernel sizes), at shapes the corpus does not have
    ("level1/conv_standard_2D__asymmetric_input__asymmetric_kernel", ["3,12,3,5,1,0,1,14,8,8", "2,3,2,3,2,0,2,2,11,9"],
     lambda v, a: F.conv2d(v["A"], v["D"], stride=a[4], dilation=a[6])),
    ("level1/conv_standard_2D_square_input_asymmetric_kernel___dilated____padded",
     ["3,12,3,5,1,1,2,2,1,4,16,12", "2,3,2,3,2,2,1,1,3,2,9,11"],
     lambda v, a: F.conv2d(v["A"], v["D"], stride=a[4], padding=(a[6], a[5]), dilation=(a[8], a[7]))),
    # its pool and the rest ran over the corpus's 3 pooled features at every shape (the
    # template had the small shape's extents written in); avg_pool1d keeps floor(out/k)
    ("level2/Matmul_AvgPool_GELU_Scale_Max", ["16,12,4,2.0,3", "9,20,4,1.5,3", "7,22,4,0.5,2"],
     lambda v, a: torch.amax(F.gelu(F.avg_pool1d(F.linear(v["A"], v["M"], v["N"])[:, None, :], a[2])[:, 0, :])
                             * a[3], dim=1)),
    ("level2/conv1d_conv1d", ["3,12,3,1,1,16,10", "2,4,3,2,2,2,13"],
     lambda v, a: F.conv1d(v["A"], v["G"], stride=a[3], dilation=a[4]) + F.conv1d(v["C"], v["G"], stride=a[3], dilation=a[4])),
    ("level2/conv2d_conv2d", ["3,12,3,5,1,1,10,14,8", "2,3,2,3,2,2,2,11,9"],
     lambda v, a: F.conv2d(v["A"], v["G"], stride=a[4], dilation=a[5]) + F.conv2d(v["C"], v["G"], stride=a[4], dilation=a[5])),
    ("level2/conv2d_conv2d_padding", ["3,12,3,5,1,2,1,14,8,8", "2,3,2,3,2,1,2,2,9,10"],
     lambda v, a: F.conv2d(v["A"], v["G"], stride=a[4], padding=a[5], dilation=a[6]) +
     F.conv2d(v["C"], v["G"], stride=a[4], padding=a[5], dilation=a[6])),
    ("level2/conv3d_conv3d", ["3,6,3,4,7,1,1,1,1,1,1,6,8,8,8", "2,3,2,3,2,2,1,2,1,2,1,2,6,7,5"],
     lambda v, a: F.conv3d(v["A"], v["G"], stride=tuple(a[5:8]), dilation=tuple(a[8:11])) +
     F.conv3d(v["C"], v["G"], stride=tuple(a[5:8]), dilation=tuple(a[8:11]))),
    ("level2/Conv2d_GroupNorm_Scale_MaxPool_Clamp", ["3,8,3,4,8,2,0.0,1.0,2,8,9", "2,6,2,3,6,3,-0.5,0.5,2,11,9"],
     lambda v, a: torch.clamp(F.max_pool2d(F.group_norm(F.conv2d(v["A"], v["J"]), a[3], v["K"], v["M"], eps=1e-5) * v["I"],
                                           a[5]), a[6], a[7])),
    ("level2/Gemm_Multiply_LeakyReLU", ["5,4,2.0,0.1,3", "7,6,-1.5,0.3,2"],
     lambda v, a: F.leaky_relu(F.linear(v["A"], v["G"], v["H"]) * a[2], a[3])),
    ("level2/Gemm_Scaling_Hardtanh_GELU", ["5,4,0.5,-2.0,2.0,3", "6,7,1.5,-0.5,0.25,2"],
     lambda v, a: F.gelu(F.hardtanh(F.linear(v["A"], v["H"], v["I"]) * a[2], a[3], a[4]))),
    # the reference's residual is the model's input (taken before the square linear)
    ("level2/Gemm_Sigmoid_Scaling_ResidualAdd", ["5,2.0,3", "6,0.5,2"],
     lambda v, a: torch.sigmoid(F.linear(v["A"], v["H"], v["I"])) * a[1] + v["A"]),
    # the reference's model concatenates the unsqueezed linear output with itself; K is unread
    ("level2/Gemm_GroupNorm_Min_BiasAdd", ["5,6,2,3", "4,8,4,2"],
     lambda v, a: torch.amin(F.group_norm(torch.cat([F.linear(v["A"], v["N"], v["O"])[:, :, None, None]] * 2, dim=-1),
                                          a[2], v["Q"], v["R"], eps=1e-5), dim=1, keepdim=True) + v["M"]),
    # eps is the rank-0 constant H (the reference holds it as torch.tensor(eps))
    ("level1/RMSNorm", ["2,3,4,5,1e-05", "3,4,2,6,0.001"],
     lambda v, a: v["A"] / torch.sqrt(torch.mean(v["A"] ** 2, dim=1, keepdim=True) + v["H"])),
    ("level2/Matmul_Divide_GELU", ["5,4,10.0,3", "6,9,0.5,2"],
     lambda v, a: F.gelu(F.linear(v["A"], v["G"], v["H"]) / a[2])),
    ("level2/Matmul_Subtract_Multiply_ReLU", ["5,4,2.0,1.5,3", "6,9,-0.5,0.25,2"],
     lambda v, a: torch.relu((F.linear(v["A"], v["I"], v["J"]) - a[2]) * a[3])),
    ("level2/Conv2d_Divide_LeakyReLU", ["3,4,2,2,2,6,5", "3,5,3,3,1,7,6"],
     lambda v, a: F.leaky_relu(F.conv2d(v["A"], v["G"]) / a[3], 0.01)),
    ("level2/Conv3d_Mish_Tanh", ["3,4,2,1,0,2,4,6,5", "3,5,3,1,0,1,5,4,6"],
     lambda v, a: torch.tanh(mish(F.conv3d(v["A"], v["F"])))),
    ("level2/Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd", ["3,4,2,2,4,6,5", "3,5,3,1,5,4,6"],
     lambda v, a: torch.sigmoid(F.gelu(F.leaky_relu(torch.relu(F.conv3d(v["A"], v["K"])), 0.01))) + v["J"]),
    ("level2/Gemm_Add_ReLU", ["5,4,3", "6,7,2"],
     lambda v, a: torch.relu(F.linear(v["A"], v["H"]) + v["G"])),
    ("level2/Gemm_BatchNorm_Scaling_Softmax", ["5,4,1e-05,0.1,3", "6,7,0.001,0.1,5"],
     lambda v, a: torch.softmax(v["J"] * F.batch_norm(F.linear(v["A"], v["K"], v["M"]), None, None, v["N"], v["O"],
                                                      training=True, eps=a[2]), dim=1)),
    ("level2/Gemm_Scale_BatchNorm", ["5,4,1e-05,0.1,3", "6,7,0.001,0.1,5"],
     lambda v, a: F.batch_norm(F.linear(v["A"], v["J"], v["K"]) * v["I"], None, None, v["M"], v["N"],
                               training=True, eps=a[2])),
    ("level2/Conv2d_InstanceNorm_Divide", ["3,4,2,2.0,2,6,5", "3,5,3,0.5,1,7,6"],
     lambda v, a: F.instance_norm(F.conv2d(v["A"], v["G"]), weight=v["H"], bias=v["I"], eps=1e-5) / a[3]),
]


@pytest.mark.parametrize("case", [(w, a, f) for w, args, f in CASES for a in args],
                         ids=[f"{w}@{a}" for w, args, _ in CASES for a in args])
def test_matches_pytorch(case):
    wid, args, ref = case
    doc = emit(wid, args)
    g = torch.Generator().manual_seed(3)
    vals = inputs_for(doc, g)
    nums = [int(x) if x.lstrip("-").isdigit() else float(x) for x in args.split(",")]
    want = ref(vals, nums).numpy()
    got = run_program(doc, {n: t.numpy() for n, t in vals.items()})
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=1e-9, atol=1e-10), np.abs(got - want).max()
