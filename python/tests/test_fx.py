"""leir.fx: PyTorch modules imported to LEIR give PyTorch's outputs on the
interpreter (leir run --backend interp with .npy inputs and outputs)."""
import os
import shutil
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import leir.fx as fx  # noqa: E402

nn = torch.nn
HERE = os.path.dirname(os.path.abspath(__file__))
# the `leir` tool: $LEIR_TOOL, else the one beside $LEIR_LIBRARY's build,
# else an in-tree build/, else the one on PATH
def _find_leir() -> str:
    if os.environ.get("LEIR_TOOL"):
        return os.environ["LEIR_TOOL"]
    cands = []
    if os.environ.get("LEIR_LIBRARY"):
        cands.append(os.path.join(os.path.dirname(os.environ["LEIR_LIBRARY"]), "tools", "leir", "leir"))
    cands.append(os.path.join(HERE, "..", "..", "build", "tools", "leir", "leir"))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return shutil.which("leir") or cands[-1]


LEIR = _find_leir()


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class GemmScaleResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x, r):
        return self.fc(x) * 0.5 + r


class MatmulSoftmax(nn.Module):
    def forward(self, a, b):
        return torch.softmax(a @ b, dim=1)


class Bmm(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


class BroadcastMatmul(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


class MeanKeep(nn.Module):
    def forward(self, x):
        return x - x.mean(dim=-1, keepdim=True)


class SumAll(nn.Module):
    def forward(self, x):
        return torch.sum(x * x)


class Transpose(nn.Module):
    def forward(self, x):
        return x.transpose(0, 1) + 1.0


class Permute(nn.Module):
    def forward(self, x):
        return torch.relu(x.permute(2, 0, 1))


class Flatten(nn.Module):
    def forward(self, x):
        return torch.flatten(x, 1) * 2


class Clamp(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=-0.5, max=0.25)


class AmaxSub(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=1) - torch.amin(x, dim=1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, x):
        att = torch.softmax(self.q(x) @ self.k(x).transpose(1, 2) * 0.35, dim=-1)
        return att @ self.v(x)


class SplitQKVAttention(nn.Module):
    """minGPT-style: one qkv linear split in three, heads, causal (additive) mask."""

    def __init__(self, n_embd=8, n_head=2, T=4):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_embd, self.n_head = n_embd, n_head
        self.register_buffer("neg", torch.triu(torch.full((T, T), -1e9), 1).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = 2, 4, self.n_embd
        # torch.fx cannot unpack a split (the reference's Q37); indexing traces
        qkv = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) * 0.5 + self.neg, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MultiQueryExpand(nn.Module):
    """MQA-style: one key/value head unsqueezed and expanded over the query heads."""

    def __init__(self, n_embd=8, n_head=2):
        super().__init__()
        self.q = nn.Linear(n_embd, n_embd)
        self.k = nn.Linear(n_embd, n_embd // n_head)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = 2, 3, 8
        q = self.q(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = self.k(x).unsqueeze(1).expand(B, self.n_head, T, C // self.n_head)
        return torch.sum(q @ k.transpose(-2, -1), dim=1)


class SplitSizes(nn.Module):
    def forward(self, x):
        ab = torch.split(x, [2, 3], dim=1)
        return ab[0].sum(dim=1, keepdim=True) * ab[1]


class PowDiv(nn.Module):
    def forward(self, x):
        return (torch.abs(x) + 1) ** 2 / 3.0


CASES = [
    ("relu", nn.ReLU(), [(3, 7)]),
    ("sigmoid_tanh", nn.Sequential(nn.Sigmoid(), nn.Tanh()), [(4, 5)]),
    ("gelu", nn.GELU(), [(3, 9)]),
    ("leaky_elu", nn.Sequential(nn.LeakyReLU(0.1), nn.ELU(0.7)), [(2, 6)]),
    ("hardtanh_hardswish", nn.Sequential(nn.Hardtanh(-0.5, 0.5), nn.Hardswish()), [(2, 6)]),
    ("softplus_mish", nn.Sequential(nn.Softplus(), nn.Mish()), [(3, 4)]),
    ("swish", Swish(), [(5, 3)]),
    ("linear_relu", nn.Sequential(nn.Linear(7, 4), nn.ReLU()), [(3, 7)]),
    ("linear_nobias", nn.Linear(5, 3, bias=False), [(2, 4, 5)]),
    ("gemm_scale_residual", GemmScaleResidual(), [(4, 6), (4, 5)]),
    ("matmul_softmax", MatmulSoftmax(), [(4, 6), (6, 5)]),
    ("log_softmax", nn.LogSoftmax(dim=0), [(5, 3)]),
    ("bmm", Bmm(), [(2, 3, 4), (2, 4, 5)]),
    ("broadcast_matmul", BroadcastMatmul(), [(2, 3, 4), (4, 5)]),
    ("layer_norm", nn.LayerNorm(6), [(3, 6)]),
    ("layer_norm_2d", nn.LayerNorm([3, 4]), [(2, 3, 4)]),
    ("mean_keepdim", MeanKeep(), [(3, 5)]),
    ("sum_all", SumAll(), [(3, 4)]),
    ("transpose", Transpose(), [(3, 5)]),
    ("permute", Permute(), [(2, 3, 4)]),
    ("flatten", Flatten(), [(2, 3, 4)]),
    ("clamp", Clamp(), [(4, 4)]),
    ("amax_amin", AmaxSub(), [(3, 5, 2)]),
    ("conv2d", nn.Conv2d(2, 3, 3), [(2, 2, 6, 5)]),
    ("conv2d_stride_pad_dil", nn.Conv2d(2, 3, (3, 2), stride=2, padding=1, dilation=(1, 2)),
     [(1, 2, 7, 8)]),
    ("conv1d", nn.Conv1d(3, 2, 2, padding=1), [(2, 3, 5)]),
    ("maxpool", nn.MaxPool2d(2), [(1, 2, 6, 4)]),
    ("avgpool", nn.AvgPool2d(2, stride=1), [(1, 2, 4, 5)]),
    ("attention", Attention(), [(2, 4, 8)]),
    ("pow_div", PowDiv(), [(3, 3)]),
    ("split_qkv_attention", SplitQKVAttention(), [(2, 4, 8)]),
    ("multi_query_expand", MultiQueryExpand(), [(2, 3, 8)]),
    ("split_sizes", SplitSizes(), [(3, 5)]),
    ("conv_relu_pool", nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                     nn.Linear(8, 3)), [(2, 1, 6, 6)]),
]


@pytest.mark.parametrize("name,module,shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, module, shapes):
    torch.manual_seed(hash(name) % 1000)
    module = module.double().eval()
    xs = [torch.randn(*s, dtype=torch.float64) for s in shapes]
    prog = fx.import_module(module, tuple(xs))
    want = module(*xs)
    got = prog.run(*xs, leir=LEIR)[0]
    assert list(got.shape) == list(want.shape), prog.text
    assert torch.allclose(got, want.detach(), rtol=1e-9, atol=1e-10), (
        f"max abs err {(got - want).abs().max().item()}\n{prog.text}")


def test_program_file_round_trip(tmp_path):
    prog = fx.import_module(nn.Sequential(nn.Linear(4, 3), nn.ReLU()).double(),
                            (torch.randn(2, 4, dtype=torch.float64),))
    y = prog.to_yaml(name="mlp")
    assert "inputs:\n  A: {dtype: f64, shape: [2, 4]}\n" in y
    assert y.count("dtype: f64") == 4  # A, the weight, the bias, the output
    assert "leir: |-\n  B^{2}_{tx=0}" in y


def test_unsupported_names_the_first_node():
    class M(nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            return torch.cumsum(y, dim=1) + torch.sort(y)[0] + torch.argsort(y)

    with pytest.raises(fx.UnsupportedOperation) as e:
        fx.import_module(M(), (torch.randn(2, 3),))
    assert "fx node 'sort'" in str(e.value)


def test_unsupported_module():
    with pytest.raises(fx.UnsupportedOperation) as e:
        fx.import_module(nn.Sequential(nn.ReLU(), nn.GRUCell(3, 3)), (torch.randn(2, 3),))
    assert "GRUCell" in str(e.value) or "1" in str(e.value)


def test_f32_program():
    m = nn.Sequential(nn.Linear(5, 4), nn.Tanh()).float()
    x = torch.randn(3, 5)
    prog = fx.import_module(m, (x,), dtype="f32")
    assert "f32" in prog.text and "f64" not in prog.text
    got = prog.run(x, leir=LEIR)[0]
    assert torch.allclose(got.double(), m(x).double().detach(), rtol=1e-4, atol=1e-5)
