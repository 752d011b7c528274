#!/usr/bin/env python3
"""Draft catalogue files for reference workloads that are not in the
conformance corpus, from PyTorch modules written after the reference notes
(section 8) and imported with leir.fx.

Each workload is imported once at a "generation" shape whose integer
parameters are distinct primes (and whose float parameters are distinctive
values); every integer of the LEIR text that is a parameter, or a product of
parameters, becomes `$name` or `$(a*b)`, every float that is a float
parameter becomes `$name`. The committed YAML files are the source of truth;
python/tests/test_workloads_torch.py checks every file drafted here against
its PyTorch module at the small shape and at a random shape.

  /usr/bin/python3 scripts/workloads_from_torch.py workloads
"""
import itertools
import os
import re
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import leir.fx as fx  # noqa: E402

nn = torch.nn
PRIMES = [5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43]


class _Fn(nn.Module):
    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            setattr(self, k, nn.Parameter(v) if isinstance(v, torch.Tensor) else v)


class _Fn1(_Fn):
    def forward(self, a):
        return self.fn(self, a)


class _Fn2(_Fn):
    def forward(self, a, b):
        return self.fn(self, a, b)


class _Fn3(_Fn):
    def forward(self, a, b, c):
        return self.fn(self, a, b, c)


def Fn(fn, **params):
    """A module from a function of (self, inputs...); parameters by name
    (fixed arity: torch.fx of this PyTorch cannot trace *args)."""
    cls = {1: _Fn1, 2: _Fn2, 3: _Fn3}[fn.__code__.co_argcount - 1]
    return cls(fn, **params)


def lin(i, o, bias=True):
    m = nn.Linear(i, o, bias=bias)
    return m


def gn(x, groups, w, b, shape, eps=1e-5):
    """group norm over (batch, C, ...) of the given shape."""
    n, c = shape[0], shape[1]
    rest = list(shape[2:])
    y = x.reshape(n, groups, c // groups, *rest)
    dims = tuple(range(2, 3 + len(rest)))
    m = y.mean(dims, keepdim=True)
    v = ((y - m) ** 2).mean(dims, keepdim=True)
    y = (y - m) / torch.sqrt(v + eps)
    y = y.reshape(n, c, *rest)
    shape = [1, c] + [1] * len(rest)
    return y * w.reshape(shape) + b.reshape(shape)


def bn_train(x, w, b, eps=1e-5):
    """batch norm with batch statistics over dim 0 of (batch, features)."""
    m = x.mean(0, keepdim=True)
    v = ((x - m) ** 2).mean(0, keepdim=True)
    return (x - m) / torch.sqrt(v + eps) * w + b


def lse(x, dim):
    m = torch.amax(x, dim=dim, keepdim=True)
    return m + torch.log(torch.sum(torch.exp(x - m), dim=dim, keepdim=True))


def gelu(x):
    return x * 0.5 * (1 + torch.erf(x / 1.4142135623730951))


# (level, index, name, summary, [(param, default, small)], dtype, build, domains)
# build(P) -> (module, [input shapes]) where P maps parameter names to values.
W = []


def w(level, index, name, summary, params, build, dtype="f32", domains=None, constraints=None,
      derived=None):
    """derived: expressions of the parameters (output extents of convolutions
    and pools) that the template may use as factors."""
    W.append(dict(level=level, index=index, name=name, summary=summary, params=params,
                  build=build, dtype=dtype, domains=domains or {}, constraints=constraints or [],
                  derived=derived or []))


def mm(P, a, b):
    return Fn(lambda s, x, y: torch.matmul(x, y)), [a, b]


w(1, 0, "Matmul3D", "3-D tensor × matrix: (N,M,K)@(K,L)",
  [("N", 16, 2), ("M", 1024, 3), ("K", 512, 4), ("L", 768, 5)],
  lambda P: mm(P, [P["N"], P["M"], P["K"]], [P["K"], P["L"]]))
w(1, 2, "softmax", "softmax over dim 1 of a (batch,dim) matrix",
  [("batch_size", 16, 2), ("dim", 16384, 8)],
  lambda P: (nn.Softmax(dim=1), [[P["batch_size"], P["dim"]]]))
w(1, 8, "Matmul_with_transposed_A", "Aᵀ@B (explicit transpose nest)",
  [("K", 512, 4), ("M", 1024, 3), ("N", 768, 5)],
  lambda P: (Fn(lambda s, a, b: torch.matmul(a.transpose(0, 1), b)), [[P["K"], P["M"]], [P["K"], P["N"]]]))
w(1, 9, "Matmul_with_transposed_B", "A@Bᵀ (explicit transpose nest)",
  [("M", 1024, 3), ("K", 512, 4), ("N", 768, 5)],
  lambda P: (Fn(lambda s, a, b: torch.matmul(a, b.transpose(0, 1))), [[P["M"], P["K"]], [P["N"], P["K"]]]))
w(1, 10, "Matmul_with_transposed_both", "Aᵀ@Bᵀ",
  [("K", 512, 4), ("M", 1024, 3), ("N", 768, 5)],
  lambda P: (Fn(lambda s, a, b: torch.matmul(a.transpose(0, 1), b.transpose(0, 1))), [[P["K"], P["M"]], [P["N"], P["K"]]]))
w(1, 12, "Square_matrix_multiplication", "N×N matmul", [("N", 1024, 6)],
  lambda P: mm(P, [P["N"], P["N"]], [P["N"], P["N"]]))
w(1, 61, "Matmul_with_small_K_dimension", "matmul with small inner dim",
  [("M", 1024, 5), ("N", 32, 4), ("K", 1024, 2)],  # the reference's order M, N, K (issue 30.6)
  lambda P: mm(P, [P["M"], P["K"]], [P["K"], P["N"]]))
w(1, 71, "Matmul_with_irregular_shapes", "matmul with odd sizes",
  [("M", 1017, 5), ("K", 987, 7), ("N", 642, 3)],
  lambda P: mm(P, [P["M"], P["K"]], [P["K"], P["N"]]))
for idx, nm, mod in ((15, "Tanh", nn.Tanh()), (17, "Swish", None), (24, "ELU", nn.ELU(1.0)),
                     (25, "HardTanh", nn.Hardtanh(-1.0, 1.0))):
    summ = {"Tanh": "tanh via (e^x-e^-x)/(e^x+e^-x) (3 nests)", "Swish": "x*sigmoid(x)",
            "ELU": "ELU, alpha 1.0", "HardTanh": "clamp to [-1,1]"}[nm]
    w(1, idx, nm, summ, [("batch_size", 16, 2), ("dim", 16384, 8)],
      (lambda m: lambda P: (m if m is not None else Fn(lambda s, x: x * torch.sigmoid(x)),
                            [[P["batch_size"], P["dim"]]]))(mod))
w(1, 27, "InstanceNorm", "InstanceNorm2d with affine",
  [("batch_size", 16, 2), ("features", 64, 3), ("dim1", 256, 4), ("dim2", 128, 5)],
  lambda P: (Fn(lambda s, x: gn(x, s.shp[1], s.w, s.b, s.shp), w=torch.randn(P["features"]),
                b=torch.randn(P["features"]),
                shp=[P["batch_size"], P["features"], P["dim1"], P["dim2"]]),
             [[P["batch_size"], P["features"], P["dim1"], P["dim2"]]]))
w(1, 28, "GroupNorm", "GroupNorm (channel index g*C/G+c)",
  [("batch_size", 16, 2), ("features", 64, 6), ("dim1", 256, 4), ("dim2", 128, 5),
   ("num_groups", 8, 3)],
  lambda P: (Fn(lambda s, x: gn(x, s.g, s.w, s.b, s.shp), g=P["num_groups"], w=torch.randn(P["features"]),
                b=torch.randn(P["features"]), shp=[P["batch_size"], P["features"], P["dim1"], P["dim2"]]),
             [[P["batch_size"], P["features"], P["dim1"], P["dim2"]]]),
  constraints=["features % num_groups == 0"])
# RMSNorm: the committed file was edited after drafting: the reference holds eps as a tensor
# attribute, an fx constant (the rank-0 input H), which leir.fx would write as a literal
w(1, 29, "RMSNorm", "x/sqrt(mean(x²,dim=1)+eps)",
  [("batch_size", 16, 2), ("features", 64, 3), ("dim1", 256, 4), ("dim2", 128, 5),
   ("eps", 1e-05, 1e-05)],
  lambda P: (Fn(lambda s, x: x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + s.eps),
                eps=P["eps"]),
             [[P["batch_size"], P["features"], P["dim1"], P["dim2"]]]))
w(1, 31, "L1Norm", "x/sum(|x|,dim=1)", [("batch_size", 16, 2), ("dim", 16384, 8)],
  lambda P: (Fn(lambda s, x: x / torch.sum(torch.abs(x), dim=1, keepdim=True)),
             [[P["batch_size"], P["dim"]]]))
w(1, 32, "L2Norm", "x/‖x‖₂ over dim 1", [("batch_size", 16, 2), ("dim", 16384, 8)],
  lambda P: (Fn(lambda s, x: x / torch.sqrt(torch.sum(x ** 2, dim=1, keepdim=True))),
             [[P["batch_size"], P["dim"]]]))
w(1, 34, "LayerNorm", "LayerNorm over the last 3 dims with affine",
  [("batch_size", 16, 2), ("features", 64, 3), ("dim1", 256, 4), ("dim2", 128, 5)],
  lambda P: (nn.LayerNorm([P["features"], P["dim1"], P["dim2"]]),
             [[P["batch_size"], P["features"], P["dim1"], P["dim2"]]]))
w(1, 45, "Product_reduction_over_a_dimension", "prod over dim (the structure fixes dim 1)",
  [("batch_size", 16, 2), ("dim1", 256, 4), ("dim2", 256, 5), ("reduction_dim", 1, 1)],
  lambda P: (Fn(lambda s, x: torch.prod(x, dim=1)), [[P["batch_size"], P["dim1"], P["dim2"]]]))
w(1, 53, "Matrix_scalar_multiplication", "A*s with a scalar input",
  [("M", 1024, 3), ("N", 512, 4), ("s", 3.14, 3.14)],
  lambda P: (Fn(lambda s, a, c: a * c), [[P["M"], P["N"]], []]),
  domains={"C": "{value: $s}"})
w(1, 70, "cumsum", "cumsum over dim 1 (O(n²) masked sum; the structure fixes dim 1)",
  [("batch_size", 128, 2), ("input_shape", 4000, 6), ("dim", 1, 1)],
  lambda P: (Fn(lambda s, x: torch.cumsum(x, dim=1)), [[P["batch_size"], P["input_shape"]]]))
w(1, 73, "cumsum_reverse", "flip→cumsum→flip (the structure fixes dim 1)",
  [("batch_size", 128, 2), ("input_shape", 4000, 6), ("dim", 1, 1)],
  lambda P: (Fn(lambda s, x: torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])),
             [[P["batch_size"], P["input_shape"]]]))
w(1, 80, "KLDivLoss", "kl_div(log(pred), target, batchmean)",
  [("batch_size", 128, 3), ("input_shape", 1024, 5)],
  lambda P: (Fn(lambda s, p, t: torch.sum(t * (torch.log(t) - torch.log(p))) / s.n, n=P["batch_size"]),
             [[P["batch_size"], P["input_shape"]], [P["batch_size"], P["input_shape"]]]),
  domains={"A": "positive", "C": "positive"})
for idx, nm, f in ((13, "exp_exp", torch.exp), (15, "log_log", torch.log), (16, "abs_abs", torch.abs),
                   (17, "sqrt_sqrt", torch.sqrt)):
    sym = {"exp_exp": "exp(A) @ exp(C)", "log_log": "log(A) @ log(C)", "abs_abs": "|A| @ |C|",
           "sqrt_sqrt": "sqrt(A) @ sqrt(C)"}[nm]
    dom = {"A": "positive", "C": "positive"} if nm in ("log_log", "sqrt_sqrt") else {}
    w(2, idx, nm, sym, [("batch_size", 128, 2), ("m", 128, 3), ("k", 256, 4), ("n", 512, 5)],
      (lambda f: lambda P: (Fn(lambda s, a, c: torch.matmul(f(a), f(c))),
                            [[P["batch_size"], P["m"], P["k"]], [P["batch_size"], P["k"], P["n"]]]))(f),
      domains=dom)
w(2, 12, "Bmm_Bmm", "A@C + D@C batched",
  [("batch_size", 128, 2), ("m", 64, 3), ("k", 256, 4), ("n", 512, 5)],
  lambda P: (Fn(lambda s, a, c, d: torch.bmm(a, c) + torch.bmm(d, c)),
             [[P["batch_size"], P["m"], P["k"]], [P["batch_size"], P["k"], P["n"]],
              [P["batch_size"], P["m"], P["k"]]]))


def gemm(P, epi, i="in_features", o="out_features", **extra):
    m = Fn(lambda s, x: epi(s, s.fc(x)), bs=P["batch_size"], of=P[o], **extra)
    m.fc = nn.Linear(P[i], P[o])
    return m, [[P["batch_size"], P[i]]]


GEMM = [("in_features", 1024, 5), ("out_features", 512, 4)]
w(2, 18, "Gemm_Multiply_LeakyReLU", "linear → ×const/param → leaky-relu",
  GEMM + [("multiplier", 2.0, 2.0), ("negative_slope", 0.1, 0.1), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: torch.nn.functional.leaky_relu(y * s.mul, s.ns),
                 mul=P["multiplier"], ns=P["negative_slope"]))
w(2, 34, "Gemm_Scale_BatchNorm", "linear → ×const → batch-norm (batch statistics)",
  GEMM + [("eps", 1e-05, 1e-05), ("momentum", 0.1, 0.1), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: bn_train(y * s.scale, s.w, s.b, s.eps), scale=torch.randn(P["out_features"]),
                 w=torch.randn(P["out_features"]), b=torch.randn(P["out_features"]), eps=P["eps"]))
w(2, 47, "Gemm_Scaling_Hardtanh_GELU", "linear → ×const → hardtanh → gelu",
  GEMM + [("scaling_factor", 0.5, 0.5), ("hardtanh_min", -2.0, -2.0), ("hardtanh_max", 2.0, 2.0),
          ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: gelu(torch.clamp(y * s.sf, s.lo, s.hi)), sf=P["scaling_factor"],
                 lo=P["hardtanh_min"], hi=P["hardtanh_max"]))
w(2, 55, "Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU",
  "linear → logsumexp(dim) → leaky-relu → leaky-relu → gelu → gelu",
  GEMM + [("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: gelu(gelu(torch.nn.functional.leaky_relu(
      torch.nn.functional.leaky_relu(lse(y, 1), 0.01), 0.01)))))
def gemm_residual_input(P):
    """the reference's Gemm_Sigmoid_Scaling_ResidualAdd: a square linear, its residual the input"""
    m = Fn(lambda s, x: torch.sigmoid(s.fc(x)) * s.sf + x, sf=P["scaling_factor"])
    m.fc = nn.Linear(P["input_size"], P["input_size"])
    return m, [[P["batch_size"], P["input_size"]]]


# the reference's linear is square and its residual is the input (taken before the linear)
w(2, 62, "Gemm_Sigmoid_Scaling_ResidualAdd", "linear → sigmoid → ×const → +residual (the input)",
  [("input_size", 1024, 5), ("scaling_factor", 2.0, 2.0), ("batch_size", 128, 3)],
  lambda P: gemm_residual_input(P))
# the reference unsqueezes the linear's output twice and concatenates it with itself before the
# group norm (the committed file is hand-written after Gemm_GroupNorm_Hardtanh's spelling)
w(2, 65, "Gemm_GroupNorm_Min_BiasAdd", "linear → unsqueeze ×2, cat with itself → group-norm → min(dim) → +bias",
  [("in_features", 512, 5), ("out_features", 256, 6), ("num_groups", 8, 2), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: torch.amin(gn(torch.cat((y[:, :, None, None], y[:, :, None, None]), dim=-1),
                                               s.g, s.w, s.b, [s.bs, s.of, 1, 2]), dim=1, keepdim=True) + s.bias,
                 g=P["num_groups"], w=torch.randn(P["out_features"]), b=torch.randn(P["out_features"]),
                 bias=torch.randn(1, 1, 1, 2)),
  constraints=["out_features % num_groups == 0"])
w(2, 66, "Gemm_Add_ReLU", "linear → +param → relu", GEMM + [("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: torch.relu(y + s.bias), bias=torch.randn(P["out_features"])))
w(2, 73, "Gemm_BatchNorm_Scaling_Softmax", "linear → batch-norm → ×const → softmax",
  GEMM + [("bn_eps", 1e-05, 1e-05), ("bn_momentum", 0.1, 0.1), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: torch.softmax(bn_train(y, s.w, s.b, s.eps) * s.scale, dim=1),
                 w=torch.randn(P["out_features"]), b=torch.randn(P["out_features"]), eps=P["bn_eps"],
                 scale=torch.randn(1)))
w(2, 75, "Matmul_Divide_GELU", "linear → ÷const → gelu",
  [("input_size", 512, 5), ("output_size", 1024, 4), ("divisor", 10.0, 10.0), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: gelu(y / s.d), i="input_size", o="output_size", d=P["divisor"]))
w(2, 77, "Gemm_GroupNorm_Swish_Multiply_Swish", "linear → group-norm → swish → ×param → swish",
  [("in_features", 512, 5), ("out_features", 1024, 6), ("num_groups", 16, 2), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: (lambda z: (lambda u: u * torch.sigmoid(u))(z * torch.sigmoid(z) * s.m))(
      gn(y, s.g, s.w, s.b, [s.bs, s.of])), g=P["num_groups"], w=torch.randn(P["out_features"]),
      b=torch.randn(P["out_features"]), m=torch.randn(P["out_features"])),
  constraints=["out_features % num_groups == 0"])
w(2, 81, "Gemm_BiasAdd_Hardtanh_Mish_GroupNorm", "linear → +bias → hardtanh → mish → group-norm",
  [("in_features", 512, 5), ("out_features", 1024, 6), ("num_groups", 32, 2), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: gn(torch.nn.functional.mish(torch.clamp(y + s.bias, -1.0, 1.0)), s.g, s.w, s.b, [s.bs, s.of]),
                 bias=torch.randn(P["out_features"]), g=P["num_groups"], w=torch.randn(P["out_features"]),
                 b=torch.randn(P["out_features"])),
  constraints=["out_features % num_groups == 0"])
w(2, 86, "Matmul_Subtract_Multiply_ReLU", "linear → −const → ×const → relu",
  [("in_features", 10, 5), ("out_features", 5, 4), ("subtract_value", 2.0, 2.0),
   ("multiply_value", 1.5, 1.5), ("batch_size", 128, 3)],
  lambda P: gemm(P, lambda s, y: torch.relu((y - s.sv) * s.mv), sv=P["subtract_value"], mv=P["multiply_value"]))


def conv_entry(level, index, name, summary, params, nd, out_expr, mk, extra=None, derived=(),
               constraints=None, inputs=1):
    w(level, index, name, summary, params, mk, derived=list(derived), constraints=constraints)


CONV = [("in_channels", 3, 3), ("out_channels", 64, 4)]
w(1, 49, "conv_standard_3D__square_input__square_kernel", "Conv3d, cubic kernel",
  CONV + [("kernel_size", 3, 2), ("stride", 1, 1), ("padding", 0, 0), ("dilation", 1, 1),
          ("batch_size", 16, 2), ("depth", 64, 5), ("width", 64, 6), ("height", 64, 4)],
  lambda P: (nn.Conv3d(P["in_channels"], P["out_channels"], P["kernel_size"], P["stride"], P["padding"],
                       P["dilation"], bias=False),
             [[P["batch_size"], P["in_channels"], P["depth"], P["width"], P["height"]]]),
  derived=["(depth+2*padding-dilation*(kernel_size-1)-1)//stride+1",
           "(width+2*padding-dilation*(kernel_size-1)-1)//stride+1",
           "(height+2*padding-dilation*(kernel_size-1)-1)//stride+1"])
w(1, 55, "conv_standard_2D__square_input__asymmetric_kernel", "Conv2d, non-square kernel",
  # the reference builds its kernel as (3rd, 4th argument) = (height, width), whatever their labels
  CONV + [("kernel_size_h", 3, 2), ("kernel_size_w", 5, 3), ("stride", 1, 1), ("padding", 0, 0),
          ("dilation", 1, 1), ("batch_size", 16, 2), ("height", 256, 6), ("width", 256, 5)],
  lambda P: (nn.Conv2d(P["in_channels"], P["out_channels"], (P["kernel_size_h"], P["kernel_size_w"]),
                       P["stride"], P["padding"], P["dilation"], bias=False),
             [[P["batch_size"], P["in_channels"], P["height"], P["width"]]]),
  derived=["(height+2*padding-dilation*(kernel_size_h-1)-1)//stride+1",
           "(width+2*padding-dilation*(kernel_size_w-1)-1)//stride+1"])
w(1, 56, "conv_standard_2D__square_input__square_kernel", "Conv2d, square kernel",
  CONV + [("kernel_size", 3, 2), ("stride", 1, 1), ("padding", 0, 0), ("dilation", 1, 1),
          ("batch_size", 16, 2), ("height", 256, 6), ("width", 256, 5)],
  lambda P: (nn.Conv2d(P["in_channels"], P["out_channels"], P["kernel_size"], P["stride"], P["padding"],
                       P["dilation"], bias=False),
             [[P["batch_size"], P["in_channels"], P["height"], P["width"]]]),
  derived=["(height+2*padding-dilation*(kernel_size-1)-1)//stride+1",
           "(width+2*padding-dilation*(kernel_size-1)-1)//stride+1"])
w(1, 63, "conv_depthwise_2D_square_input_square_kernel", "depthwise Conv2d (groups=C)",
  [("in_channels", 3, 3), ("kernel_size", 3, 2), ("stride", 1, 1), ("padding", 0, 0),
   ("batch_size", 16, 2), ("height", 256, 6), ("width", 256, 5)],
  lambda P: (nn.Conv2d(P["in_channels"], P["in_channels"], P["kernel_size"], P["stride"], P["padding"],
                       groups=P["in_channels"], bias=False),
             [[P["batch_size"], P["in_channels"], P["height"], P["width"]]]),
  derived=["(height+2*padding-kernel_size)//stride+1", "(width+2*padding-kernel_size)//stride+1"])
w(1, 68, "conv_pointwise_2D", "1×1 Conv2d",
  CONV + [("batch_size", 16, 2), ("height", 256, 6), ("width", 256, 5)],
  lambda P: (nn.Conv2d(P["in_channels"], P["out_channels"], 1, bias=False),
             [[P["batch_size"], P["in_channels"], P["height"], P["width"]]]))
def conv2d_chain(P, epi, **extra):
    m = Fn(lambda s, x: epi(s, s.conv(x)), **extra)
    m.conv = nn.Conv2d(P["in_channels"], P["out_channels"], P["kernel_size"])
    return m, [[P["batch_size"], P["in_channels"], P["height"], P["width"]]]


def conv3d_chain(P, epi, dn="depth", hn="height", wn="width", **extra):
    m = Fn(lambda s, x: epi(s, s.conv(x)), **extra)
    m.conv = nn.Conv3d(P["in_channels"], P["out_channels"], P["kernel_size"])
    return m, [[P["batch_size"], P["in_channels"], P[dn], P[hn], P[wn]]]


C2 = [("in_channels", 3, 3), ("out_channels", 16, 4), ("kernel_size", 3, 2)]
D2 = ["height-kernel_size+1", "width-kernel_size+1"]
D3 = ["depth-kernel_size+1", "height-kernel_size+1", "width-kernel_size+1"]
w(2, 63, "Conv2d_Divide_LeakyReLU", "conv2d → ÷const → leaky-relu",
  C2 + [("divisor", 2, 2), ("batch_size", 128, 2), ("height", 32, 6), ("width", 32, 5)],
  lambda P: conv2d_chain(P, lambda s, y: torch.nn.functional.leaky_relu(y / s.d, 0.01), d=float(P["divisor"])),
  derived=D2)
w(2, 20, "Conv2d_InstanceNorm_Divide", "conv2d → instance-norm → ÷const",
  C2 + [("divide_by", 2.0, 2.0), ("batch_size", 128, 2), ("height", 32, 6), ("width", 32, 5)],
  lambda P: conv2d_chain(P, lambda s, y: (lambda m, v: (y - m) / torch.sqrt(v + 1e-5))(
      y.mean((2, 3), keepdim=True), ((y - y.mean((2, 3), keepdim=True)) ** 2).mean((2, 3), keepdim=True)) / s.d,
      d=P["divide_by"]),
  derived=D2)
w(2, 42, "Conv3d_Mish_Tanh", "conv3d → mish → tanh",
  C2 + [("stride", 1, 1), ("padding", 0, 0), ("batch_size", 64, 2), ("D", 16, 4), ("H", 32, 6), ("W", 32, 5)],
  lambda P: conv3d_chain(P, lambda s, y: torch.tanh(torch.nn.functional.mish(y)), dn="D", hn="H", wn="W"),
  derived=["D-kernel_size+1", "H-kernel_size+1", "W-kernel_size+1"])
w(2, 68, "Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd", "conv3d → relu → leaky-relu → gelu → sigmoid → +bias",
  C2 + [("batch_size", 128, 2), ("depth", 16, 4), ("height", 32, 6), ("width", 32, 5)],
  lambda P: conv3d_chain(P, lambda s, y: torch.sigmoid(gelu(torch.nn.functional.leaky_relu(torch.relu(y), 0.01)))
                         + s.bias, bias=torch.randn(P["out_channels"], 1, 1, 1)),
  derived=D3)
w(2, 25, "Conv3d_GroupNorm_Mean", "conv3d → group-norm → mean over all but the batch",
  C2 + [("num_groups", 8, 2), ("batch_size", 128, 2), ("D", 16, 4), ("H", 32, 6), ("W", 32, 5)],
  lambda P: conv3d_chain(P, lambda s, y: gn(y, s.g, s.w, s.b, s.shp).mean((1, 2, 3, 4)),
                         dn="D", hn="H", wn="W", g=P["num_groups"], w=torch.randn(P["out_channels"]),
                         b=torch.randn(P["out_channels"]),
                         shp=[P["batch_size"], P["out_channels"], P["D"] - P["kernel_size"] + 1,
                              P["H"] - P["kernel_size"] + 1, P["W"] - P["kernel_size"] + 1]),
  derived=["D-kernel_size+1", "H-kernel_size+1", "W-kernel_size+1", "out_channels//num_groups"],
  constraints=["out_channels % num_groups == 0"])
w(2, 72, "Conv3d_GroupNorm_Min_Clamp", "conv3d → group-norm → min(dim) → clamp",
  C2 + [("groups", 8, 2), ("min_value", 0.0, 0.0), ("max_value", 1.0, 1.0), ("batch_size", 128, 2),
        ("depth", 16, 4), ("height", 32, 6), ("width", 32, 5)],
  lambda P: conv3d_chain(P, lambda s, y: torch.clamp(torch.amin(gn(y, s.g, s.w, s.b, s.shp), dim=1, keepdim=True),
                                                     s.lo, s.hi),
                         g=P["groups"], w=torch.randn(P["out_channels"]), b=torch.randn(P["out_channels"]),
                         lo=P["min_value"], hi=P["max_value"],
                         shp=[P["batch_size"], P["out_channels"], P["depth"] - P["kernel_size"] + 1,
                              P["height"] - P["kernel_size"] + 1, P["width"] - P["kernel_size"] + 1]),
  derived=D3 + ["out_channels//groups"],
  constraints=["out_channels % groups == 0"])

FLOAT_GEN = [1.375, 0.6875, 2.4375, 1.8125, 0.3125, 2.5625, 0.1875, 1.1875]


def template(entry):
    params = entry["params"]
    ints = [p for p, d, s in params if isinstance(d, int)]
    import random
    rng = random.Random(7)
    pool = PRIMES[:9]
    for attempt in range(2000):
        gen = {}
        nf = 0
        order = pool[:] if attempt == 0 else rng.sample(pool, len(pool))
        primes = iter(order)
        for p, d, s in params:
            if isinstance(d, float):
                gen[p] = FLOAT_GEN[nf]
                nf += 1
            elif d == s and d in (0, 1):  # structural: fixed
                gen[p] = d
            else:
                gen[p] = next(primes)
        for c in entry["constraints"]:
            m = re.fullmatch(r"(\w+) % (\w+) == 0", c)
            if m:
                gen[m.group(1)] = gen[m.group(1)] * gen[m.group(2)]
        vals = [gen[p] for p in ints if gen[p] > 1]
        ok = all(eval(c.replace("%", "%"), {}, dict(gen)) for c in entry["constraints"])
        der = [eval(e, {"min": min, "max": max}, dict(gen)) for e in entry["derived"]]
        allv = vals + der
        if ok and all(v >= 2 and v not in (2, 3, 4, 6, 10) for v in der) and len(set(allv)) == len(allv):
            break
    else:
        raise RuntimeError(f"{entry['name']}: no generation shape with distinct values")
    torch.manual_seed(0)
    module, shapes = entry["build"](gen)
    module = module.double().eval()
    xs = [torch.rand(list(s), dtype=torch.float64) + 0.5 for s in shapes]
    prog = fx.import_module(module, tuple(xs))
    names = [p for p in ints if gen[p] > 1]
    atoms = {p: gen[p] for p in names}
    for c in entry["constraints"]:
        m = re.fullmatch(r"(\w+) % (\w+) == 0", c)
        if m:
            atoms[f"{m.group(1)}//{m.group(2)}"] = gen[m.group(1)] // gen[m.group(2)]
    for e in entry["derived"]:
        atoms[e] = eval(e, {"min": min, "max": max}, dict(gen))
    by_value = {}
    for r in range(1, 4):
        for combo in itertools.combinations_with_replacement(sorted(atoms, key=lambda a: ("//" in a, a)), r):
            v = 1
            for q in combo:
                v *= atoms[q]
            by_value.setdefault(v, "*".join(a if re.fullmatch(r"\w+", a) else f"({a})" for a in combo))
    for a, b in itertools.permutations(names, 2):
        if gen[a] % gen[b] == 0:
            by_value.setdefault(gen[a] // gen[b], f"{a}//{b}")
    for a in list(names) + list(entry["derived"]):
        by_value.setdefault(atoms[a] - 1, f"{a}-1" if re.fullmatch(r"\w+", a) else f"({a})-1")
    fl = {repr(float(v)): p for p, v in gen.items() if isinstance(v, float)}

    def sub(m):
        t = m.group(0)
        if re.fullmatch(r"\d+", t):
            v = int(t)
            if v in by_value and v > 1:
                e = by_value[v]
                return "$" + e if re.fullmatch(r"\w+", e) else "$(" + e + ")"
            return t
        if t in fl:
            return "$" + fl[t]
        return t

    # numbers outside names (dtypes like f64 are letters + digits)
    text = re.sub(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?:e[-+]?\d+)?", sub, prog.text)
    text = text.replace("^{f64,", "^{$T,")
    return prog, text, gen


def emit(entry, outdir):
    prog, text, gen = template(entry)
    lines = ["# Drafted by scripts/workloads_from_torch.py (PyTorch module → leir.fx); reviewed.",
             f"name: {entry['name']}", f"level: {entry['level']}", f"index: {entry['index']}",
             "summary: '" + entry["summary"].replace("'", "''") + "'",
             "traced: false", f"dtype: {entry['dtype']}", "params:"]
    for p, d, s in entry["params"]:
        if isinstance(d, float):
            lines.append(f"  - {{name: {p}, type: float, default: {d!r}, small: {s!r}}}")
        elif d == 1 and s == 1:
            lines.append(f"  - {{name: {p}, default: 1, small: 1, range: [1, 1]}}")
        else:
            lines.append(f"  - {{name: {p}, default: {d}, small: {s}, range: [{min(s, d)}, {max(s, d)}]}}")
    if entry["constraints"]:
        lines.append("constraints: [" + ", ".join(f"'{c}'" for c in entry["constraints"]) + "]")
    lines.append("inputs:")
    for n, _, _ in prog.inputs:
        dom = entry["domains"].get(n)
        lines.append(f"  - {{name: {n}" + (f", domain: {dom}" if dom else "") + "}")
    lines.append("outputs:")
    for n, _, _ in prog.outputs:
        lines.append(f"  - {{name: {n}}}")
    lines.append("leir: |-")
    for part in fx._split_nests(text):
        lines.append("  " + part)
    path = os.path.join(outdir, f"level{entry['level']}_{entry['name']}.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    out = sys.argv[1]
    only = set(sys.argv[2:])
    for e in W:
        if only and e["name"] not in only:
            continue
        emit(e, out)
        print(e["name"], file=sys.stderr)
