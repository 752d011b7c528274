"""Import PyTorch modules into LEIR.

``leir.fx`` traces an ``nn.Module`` with ``torch.fx``, propagates the shapes
of example inputs through the graph and writes one LEIR loop nest (or a few)
per operation, spelled as the Step-TP reference spells it (reference notes
section 3.10): matmuls accumulate with the reduction loop innermost,
``nn.Linear`` is a product nest then a bias nest, softmax is a max nest, an
exp-sum nest and a quotient nest, and so on. Module parameters become inputs
of the program; their values travel with it.

    import torch, leir.fx
    prog = leir.fx.import_module(torch.nn.Sequential(torch.nn.Linear(8, 4),
                                                     torch.nn.ReLU()),
                                 (torch.randn(2, 8),))
    print(prog.text)                         # LEIR
    open("m.leir.yaml", "w").write(prog.to_yaml())
    out = prog.run(torch.randn(2, 8))        # on the interpreter (leir run)

An operation outside the supported set raises ``UnsupportedOperation``
naming the first such node of the graph (its fx name, its op and target).
The module needs nothing of the ``leir`` package but the ``leir``
executable (for ``Program.run``).
"""
import math
import os
import shutil
import subprocess
import tempfile

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

__all__ = ["UnsupportedOperation", "Program", "import_module", "SUPPORTED"]

_TENSOR_LETTERS = "ACDEFGHIJKMNOQRSWXYZ"
_INDEX_LETTERS = "acdfghijklmnopqrsuw"


class UnsupportedOperation(Exception):
    """The graph holds an operation leir.fx cannot translate."""

    def __init__(self, node, why=""):
        self.node = node
        target = getattr(node.target, "__name__", str(node.target))
        msg = f"unsupported operation at fx node '{node.name}': {node.op} {target}"
        if why:
            msg += f" ({why})"
        super().__init__(msg)


def _bijective(i, alphabet, upper_first):
    n = len(alphabet)
    s = ""
    i += 1
    while i > 0:
        i -= 1
        s = alphabet[i % n].lower() + s
        i //= n
    return s[0].upper() + s[1:] if upper_first else s


def _index_names(k):
    """tx, a, c, d, ... for a nest of k loops."""
    return ["tx"] + [_bijective(i, _INDEX_LETTERS, False) for i in range(k - 1)]


def _num(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(float(v))
    return r


class _Tensor:
    def __init__(self, name, shape):
        self.name = name
        self.shape = list(shape)


class Program:
    """An imported program: LEIR text, signature and parameter values.

    ``inputs`` and ``outputs`` are lists of ``(name, dtype, shape)`` in
    signature order; ``input_names`` maps each forward argument to its LEIR
    tensor; ``params`` maps LEIR names to the tensors (module parameters)
    that are inputs of the program too.
    """

    def __init__(self, text, inputs, outputs, input_names, params, dtype):
        self.text = text
        self.inputs = inputs
        self.outputs = outputs
        self.input_names = input_names
        self.params = params
        self.dtype = dtype

    def to_yaml(self, name=None):
        lines = []
        if name:
            lines.append(f"name: {name}")
        for role, decls in (("inputs", self.inputs), ("outputs", self.outputs)):
            lines.append(f"{role}:")
            for n, dt, shape in decls:
                lines.append(f"  {n}: {{dtype: {dt}, shape: [{', '.join(str(s) for s in shape)}]}}")
        lines.append("leir: |-")
        for part in _split_nests(self.text):
            lines.append("  " + part)
        return "\n".join(lines) + "\n"

    def run(self, *args, leir=None, backend="interp", timeout=120):
        """Runs the program on ``args`` (tensors, in forward order) with
        ``leir run --inputs/--outputs`` and returns the outputs as tensors."""
        import numpy as np
        exe = leir or os.environ.get("LEIR") or shutil.which("leir") or "leir"
        np_dtype = {"f64": np.float64, "f32": np.float32}[self.dtype]
        with tempfile.TemporaryDirectory(prefix="leir-fx-") as tmp:
            ind = os.path.join(tmp, "in")
            outd = os.path.join(tmp, "out")
            os.makedirs(ind)
            os.makedirs(outd)
            values = dict(self.params)
            if len(args) != len(self.input_names):
                raise ValueError(f"expected {len(self.input_names)} inputs, got {len(args)}")
            for n, a in zip(self.input_names, args):
                values[n] = a
            for n, _, shape in self.inputs:
                arr = np.ascontiguousarray(values[n].detach().cpu().numpy().astype(np_dtype))
                np.save(os.path.join(ind, n + ".npy"), arr.reshape(shape))
            prog = os.path.join(tmp, "p.leir.yaml")
            with open(prog, "w") as f:
                f.write(self.to_yaml())
            r = subprocess.run([exe, "run", "--backend", backend, "--timeout", str(timeout),
                                "--inputs", ind, "--outputs", outd, prog],
                               capture_output=True, text=True, timeout=timeout + 60)
            if r.returncode:
                raise RuntimeError(f"leir run failed: {r.stderr.strip() or r.stdout.strip()}")
            return [torch.from_numpy(np.load(os.path.join(outd, n + ".npy")))
                    for n, _, _ in self.outputs]


def _split_nests(text):
    """One top-level nest per line."""
    out, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0 and i + 1 < len(text) and text[i + 1] == ";":
                out.append(text[start:i + 2])
                start = i + 2
                i += 1
        i += 1
    if text[start:].strip():
        out.append(text[start:])
    return out


class _Emitter:
    def __init__(self, dtype):
        self.dtype = dtype
        self.next_name = 0
        self.nests = []

    def fresh(self, shape):
        while True:
            n = _bijective(self.next_name, _TENSOR_LETTERS, True)
            self.next_name += 1
            return _Tensor(n, shape)

    def ref(self, t, idx):
        if not t.shape:
            return f"{t.name}^{{{self.dtype},g}}"
        return f"{t.name}^{{{self.dtype},g}}_{{{','.join(idx)}}}"

    def bref(self, x, out_vars, out_shape):
        """A broadcast read of x (tensor or scalar) inside a nest over
        out_shape with variables out_vars."""
        if not isinstance(x, _Tensor):
            return _num(x)
        r = len(x.shape)
        off = len(out_shape) - r
        idx = []
        for j in range(r):
            i = off + j
            idx.append("0" if x.shape[j] == 1 and out_shape[i] != 1 else out_vars[i])
        return self.ref(x, idx)

    def nest(self, extents, body):
        """body: callable(vars) -> list of equation strings."""
        if not extents:
            vars_ = ["tx"]
            head = "B^{1}_{tx=0}"
            eqs = body([])
        else:
            vars_ = _index_names(len(extents))
            head = "".join(("B" if k == 0 else "L") + f"^{{{e}}}_{{{v}=0}}"
                           for k, (e, v) in enumerate(zip(extents, vars_)))
            eqs = body(vars_)
        self.nests.append(head + "[" + "".join(e + ";" for e in eqs) + "];")

    def elementwise(self, shape, fn, *xs):
        out = self.fresh(shape)

        def body(v):
            vs = v[:len(shape)]
            return [f"{self.ref(out, vs)}={fn(*[self.bref(x, vs, shape) for x in xs])}"]
        self.nest(shape, body)
        return out

    def reduce(self, x, dims, keepdim, kind):
        """sum / max / min over dims; returns the result tensor."""
        shape = x.shape
        rank = len(shape)
        dims = sorted(d % rank for d in dims)
        keep = [i for i in range(rank) if i not in dims]
        out_shape = [1 if i in dims else shape[i] for i in range(rank)] if keepdim else [shape[i] for i in keep]
        out = self.fresh(out_shape)
        order = keep + dims
        extents = [shape[i] for i in order]

        def body(v):
            var_of = {d: v[k] for k, d in enumerate(order)}
            xi = [var_of[i] for i in range(rank)]
            if keepdim:
                oi = ["0" if i in dims else var_of[i] for i in range(rank)]
            else:
                oi = [var_of[i] for i in keep]
            o = self.ref(out, oi)
            xr = self.ref(x, xi)
            if kind == "sum":
                return [f"{o}={o}+{xr}"]
            if kind == "prod":
                return [f"{o}={o}*{xr}"]
            return [f"{o}={kind}({o},{xr})"]
        if not keep:  # a full reduction: rank-0 (or all-ones) accumulator
            self.nest(extents, body)
        else:
            self.nest(extents, body)
        return out


def _shape(node):
    tm = node.meta.get("tensor_meta")
    if tm is None or not hasattr(tm, "shape"):
        raise UnsupportedOperation(node, "no tensor shape (multiple outputs?)")
    return list(tm.shape)


_UNARY = {
    "relu": lambda x: f"max({x},0)",
    "sigmoid": lambda x: f"1/(1+exp(-{x}))",
    "exp": lambda x: f"exp({x})",
    "log": lambda x: f"log({x})",
    "abs": lambda x: f"abs({x})",
    "sqrt": lambda x: f"sqrt({x})",
    "rsqrt": lambda x: f"1/sqrt({x})",
    "neg": lambda x: f"-{x}",
    "erf": lambda x: f"erf({x})",
    "gelu": lambda x: f"{x}*0.5*(1+erf({x}/sqrt(2)))",
    "silu": lambda x: f"{x}*(1/(1+exp(-{x})))",
    "softplus": lambda x: f"log(1+exp({x}))",
    "hardsigmoid": lambda x: f"max(0,min(1,({x}+3)/6))",
    "hardswish": lambda x: f"{x}*max(min({x}+3,6),0)/6",
    "softsign": lambda x: f"{x}/(1+abs({x}))",
    "square": lambda x: f"{x}*{x}",
}

_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "div": "/"}

SUPPORTED = sorted(set(_UNARY) | set(_BINARY) | {
    "tanh", "mish", "leaky_relu", "elu", "hardtanh", "clamp", "linear", "matmul", "bmm", "mm",
    "softmax", "log_softmax", "sum", "mean", "amax", "amin", "max (dim)", "layer_norm",
    "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "transpose", "permute", "flatten",
    "reshape/view", "pow", "flatten", "dropout (identity)", "identity", "expand", "split"})


def _canon(node):
    """A uniform name for call_function / call_method / call_module nodes."""
    t = node.target
    if node.op == "call_function":
        name = getattr(t, "__name__", str(t))
        return name.lstrip("_").replace("inplace", "")
    if node.op == "call_method":
        return t
    return None


def import_module(module, example_inputs, dtype="f64"):
    """Traces ``module`` and returns a :class:`Program`.

    ``example_inputs`` is a tuple of tensors fixing the shapes; ``dtype`` is
    the LEIR floating dtype of the program (``f64`` or ``f32``)."""
    if dtype not in ("f64", "f32"):
        raise ValueError("dtype is f64 or f32")
    module = module.eval()
    gm = torch.fx.symbolic_trace(module)
    ShapeProp(gm).propagate(*example_inputs)
    em = _Emitter(dtype)
    env = {}
    inputs = []
    input_names = []
    params = {}
    mods = dict(gm.named_modules())

    def param(t):
        x = em.fresh(list(t.shape))
        params[x.name] = t.detach()
        return x

    def val(a):
        if isinstance(a, torch.fx.Node):
            return env[a.name]
        return a

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for n in placeholders:
        t = em.fresh(_shape(n))
        env[n.name] = t
        inputs.append(t)
        input_names.append(t.name)
    output_node = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            output_node = node
            continue
        if node.op == "get_attr":
            obj = gm
            for part in node.target.split("."):
                obj = getattr(obj, part)
            env[node.name] = param(obj) if isinstance(obj, torch.Tensor) and obj.dim() else (
                float(obj) if isinstance(obj, torch.Tensor) else obj)
            continue
        args = [val(a) for a in node.args]
        kw = {k: val(v) for k, v in node.kwargs.items()}
        name = _canon(node)
        if name == "getitem" and isinstance(args[0], (list, tuple)):
            env[node.name] = args[0][args[1]]
            continue
        if name == "split":
            env[node.name] = _split(em, node, args, kw)
            continue
        shape = _shape(node)
        if node.op == "call_module":
            m = mods[node.target]
            env[node.name] = _module(em, node, m, args, shape, param)
            continue
        env[node.name] = _function(em, node, name, args, kw, shape)
    outs = val(output_node.args[0])
    if isinstance(outs, (tuple, list)):
        raise UnsupportedOperation(output_node, "one output tensor only")
    if not isinstance(outs, _Tensor) or outs in inputs:
        raise UnsupportedOperation(output_node, "the output must be computed")
    # parameters sorted after the forward inputs, as the program reads them
    param_decls = [(n, dtype, list(t.shape)) for n, t in params.items()]
    in_decls = [(t.name, dtype, t.shape) for t in inputs] + param_decls
    text = "".join(em.nests)
    return Program(text, in_decls, [(outs.name, dtype, outs.shape)], input_names, params, dtype)


def _module(em, node, m, args, shape, param):
    nn = torch.nn
    x = args[0] if args else None
    if isinstance(m, (nn.Dropout, nn.Identity)):
        return x
    if isinstance(m, nn.Linear):
        return _linear(em, x, param(m.weight), param(m.bias) if m.bias is not None else None, shape)
    if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        if m.padding_mode != "zeros" or isinstance(m.padding, str):
            raise UnsupportedOperation(node, "padding modes and string padding")
        return _conv(em, x, param(m.weight), param(m.bias) if m.bias is not None else None,
                     list(m.stride), list(m.padding), list(m.dilation), shape, m.groups)
    simple = {nn.ReLU: "relu", nn.Sigmoid: "sigmoid", nn.GELU: "gelu", nn.SiLU: "silu",
              nn.Softplus: "softplus", nn.Hardsigmoid: "hardsigmoid", nn.Hardswish: "hardswish",
              nn.Softsign: "softsign"}
    for cls, fn in simple.items():
        if type(m) is cls:
            if cls is nn.GELU and m.approximate != "none":
                raise UnsupportedOperation(node, "tanh-approximate GELU")
            if cls is nn.Softplus and (m.beta != 1 or m.threshold != 20):
                raise UnsupportedOperation(node, "Softplus with beta or threshold")
            return em.elementwise(shape, _UNARY[fn], x)
    if isinstance(m, nn.Tanh):
        return _tanh(em, x, shape)
    if isinstance(m, nn.Mish):
        return _mish(em, x, shape)
    if isinstance(m, nn.LeakyReLU):
        s = _num(m.negative_slope)
        return em.elementwise(shape, lambda v: f"if_then_else({v}<0,{s}*{v},{v})", x)
    if isinstance(m, nn.ELU):
        a = _num(m.alpha)
        return em.elementwise(shape, lambda v: f"if_then_else({v}<0,{a}*(exp({v})-1),{v})", x)
    if isinstance(m, nn.Hardtanh):
        lo, hi = _num(m.min_val), _num(m.max_val)
        return em.elementwise(shape, lambda v: f"min(max({v},{lo}),{hi})", x)
    if isinstance(m, (nn.Softmax, nn.LogSoftmax)):
        return _softmax(em, x, m.dim, shape, log=isinstance(m, nn.LogSoftmax))
    if isinstance(m, nn.LayerNorm):
        return _layer_norm(em, x, list(m.normalized_shape),
                           param(m.weight) if m.weight is not None else None,
                           param(m.bias) if m.bias is not None else None, m.eps, shape)
    if isinstance(m, nn.MaxPool2d) or isinstance(m, nn.AvgPool2d):
        return _pool2d(em, node, x, m, shape)
    if isinstance(m, nn.Flatten):
        return _reshape(em, x, shape)
    raise UnsupportedOperation(node, type(m).__name__)


def _function(em, node, name, args, kw, shape):
    x = args[0] if args else None
    if name in ("dropout", "contiguous", "clone", "detach"):
        return x
    if name in _UNARY:
        if name == "gelu" and kw.get("approximate", "none") != "none":
            raise UnsupportedOperation(node, "tanh-approximate GELU")
        return em.elementwise(shape, _UNARY[name], x)
    if name in _BINARY or name in ("radd", "rsub", "rmul", "rtruediv"):
        op = _BINARY.get(name) or _BINARY[name[1:]]
        a, b = args[0], args[1]
        if name.startswith("r"):
            a, b = b, a
        if "alpha" in kw and kw["alpha"] != 1:
            raise UnsupportedOperation(node, "alpha")
        return em.elementwise(shape, lambda p, q: f"{_paren(p)}{op}{_paren(q)}", a, b)
    if name == "pow":
        e = args[1]
        if isinstance(e, _Tensor):
            raise UnsupportedOperation(node, "a tensor exponent")
        return em.elementwise(shape, lambda p: f"{_paren(p)}**{_paren(_num(e))}", x)
    if name == "tanh":
        return _tanh(em, x, shape)
    if name == "mish":
        return _mish(em, x, shape)
    if name == "leaky_relu":
        s = _num(args[1] if len(args) > 1 else kw.get("negative_slope", 0.01))
        return em.elementwise(shape, lambda v: f"if_then_else({v}<0,{s}*{v},{v})", x)
    if name == "elu":
        a = _num(args[1] if len(args) > 1 else kw.get("alpha", 1.0))
        return em.elementwise(shape, lambda v: f"if_then_else({v}<0,{a}*(exp({v})-1),{v})", x)
    if name in ("hardtanh", "clamp", "clip"):
        lo = args[1] if len(args) > 1 else kw.get("min", kw.get("min_val", -1.0 if name == "hardtanh" else None))
        hi = args[2] if len(args) > 2 else kw.get("max", kw.get("max_val", 1.0 if name == "hardtanh" else None))
        if isinstance(lo, _Tensor) or isinstance(hi, _Tensor):
            raise UnsupportedOperation(node, "tensor bounds")

        def f(v):
            e = v
            if lo is not None:
                e = f"max({e},{_num(lo)})"
            if hi is not None:
                e = f"min({e},{_num(hi)})"
            return e
        return em.elementwise(shape, f, x)
    if name in ("matmul", "mm", "bmm", "matmul_"):
        return _matmul(em, node, args[0], args[1], shape)
    if name == "linear":
        return _linear(em, x, args[1], args[2] if len(args) > 2 else kw.get("bias"), shape)
    if name in ("softmax", "log_softmax"):
        dim = args[1] if len(args) > 1 else kw.get("dim")
        return _softmax(em, x, dim, shape, log=name == "log_softmax")
    if name in ("sum", "mean", "amax", "amin", "max", "min"):
        if name in ("max", "min") and (len(args) < 2 or isinstance(args[1], _Tensor)):
            if len(args) == 2 and isinstance(args[1], _Tensor):
                return em.elementwise(shape, lambda p, q: f"{name}({p},{q})", args[0], args[1])
            raise UnsupportedOperation(node, f"{name} without dim")
        dim = args[1] if len(args) > 1 else kw.get("dim")
        keepdim = args[2] if len(args) > 2 else kw.get("keepdim", False)
        if dim is None:
            dim = list(range(len(x.shape)))
        dims = [dim] if isinstance(dim, int) else list(dim)
        if name in ("max", "min"):
            raise UnsupportedOperation(node, f"{name}(dim) returns values and indices; use amax/amin")
        kind = {"sum": "sum", "mean": "sum", "amax": "max", "amin": "min"}[name]
        r = em.reduce(x, dims, keepdim, kind)
        if name == "mean":
            count = 1
            for d in dims:
                count *= x.shape[d % len(x.shape)]
            r = em.elementwise(r.shape, lambda p: f"{p}/{count}", r)
        return r
    if name in ("transpose", "permute", "t"):
        rank = len(x.shape)
        if name == "t":
            perm = [1, 0]
        elif name == "transpose":
            d0, d1 = args[1] % rank, args[2] % rank
            perm = list(range(rank))
            perm[d0], perm[d1] = perm[d1], perm[d0]
        else:
            perm = list(args[1]) if isinstance(args[1], (list, tuple)) else list(args[1:])
            perm = [p % rank for p in perm]
        out = em.fresh(shape)

        def body(v):
            xi = [None] * rank
            for i, p in enumerate(perm):
                xi[p] = v[i]
            return [f"{em.ref(out, v)}={em.ref(x, xi)}"]
        em.nest(shape, body)
        return out
    if name in ("view", "reshape", "flatten", "unsqueeze", "squeeze"):
        return _reshape(em, x, shape)
    if name in ("expand", "expand_as"):
        # a copy nest that reads index 0 of every broadcast (size-1 or missing) dimension
        out = em.fresh(shape)
        em.nest(shape, lambda v: [f"{em.ref(out, v)}={em.bref(x, v, shape)}"])
        return out
    if name in ("cumsum", "cumprod"):
        # O(n^2) masked accumulation, as the reference spells it
        rank = len(x.shape)
        d = (args[1] if len(args) > 1 else kw["dim"]) % rank
        out = em.fresh(shape)
        op, ident = ("+", "0") if name == "cumsum" else ("*", "1")

        def body(v):
            o = v[:rank]
            c = v[rank]
            xi = list(o)
            xi[d] = c
            return [f"{em.ref(out, o)}={em.ref(out, o)}{op}if_then_else({c}<={o[d]},{em.ref(x, xi)},{ident})"]
        em.nest(shape + [shape[d]], body)
        return out
    if name == "flip":
        rank = len(x.shape)
        dims = args[1] if len(args) > 1 else kw["dims"]
        dims = [dims] if isinstance(dims, int) else [d % rank for d in dims]
        out = em.fresh(shape)
        em.nest(shape, lambda v: [f"{em.ref(out, v)}={em.ref(x, [f'{shape[i] - 1}-{v[i]}' if i in dims else v[i] for i in range(rank)])}"])
        return out
    if name == "prod":
        rank = len(x.shape)
        d = (args[1] if len(args) > 1 else kw["dim"]) % rank
        keepdim = args[2] if len(args) > 2 else kw.get("keepdim", False)
        return em.reduce(x, [d], keepdim, "prod")
    if name == "layer_norm":
        ns = args[1] if len(args) > 1 else kw["normalized_shape"]
        w = args[2] if len(args) > 2 else kw.get("weight")
        b = args[3] if len(args) > 3 else kw.get("bias")
        eps = args[4] if len(args) > 4 else kw.get("eps", 1e-5)
        return _layer_norm(em, x, list(ns), w, b, eps, shape)
    if name in ("conv1d", "conv2d", "conv3d"):
        nd = int(name[4])
        w = args[1]
        b = args[2] if len(args) > 2 else kw.get("bias")
        rest = dict(zip(("stride", "padding", "dilation", "groups"), args[3:]))
        rest.update(kw)

        def tup(v, d):
            v = rest.get(v, d)
            return list(v) if isinstance(v, (tuple, list)) else [v] * nd
        if isinstance(rest.get("padding", 0), str):
            raise UnsupportedOperation(node, "string padding")
        return _conv(em, x, w, b, tup("stride", 1), tup("padding", 0), tup("dilation", 1), shape,
                     rest.get("groups", 1))
    if name in ("max_pool2d", "avg_pool2d"):
        cls = torch.nn.MaxPool2d if name == "max_pool2d" else torch.nn.AvgPool2d
        names = ("kernel_size", "stride", "padding") + (("dilation", "ceil_mode") if name == "max_pool2d" else ("ceil_mode",))
        params = dict(zip(names, args[1:]))
        params.update({k: v for k, v in kw.items() if k in names})
        return _pool2d(em, node, x, cls(**params), shape)
    if name == "getattr" or name == "size":
        raise UnsupportedOperation(node, "shape arithmetic")
    raise UnsupportedOperation(node)


def _split(em, node, args, kw):
    """torch.split / Tensor.split into chunks of one size (or a list of sizes)
    along a dimension: one copy nest per chunk, which getitem then picks."""
    x = args[0]
    if not isinstance(x, _Tensor):
        raise UnsupportedOperation(node, "split of a non-tensor")
    size = args[1] if len(args) > 1 else kw.get("split_size_or_sections", kw.get("split_size"))
    rank = len(x.shape)
    d = (args[2] if len(args) > 2 else kw.get("dim", 0)) % rank
    n = x.shape[d]
    sizes = list(size) if isinstance(size, (list, tuple)) else [min(size, n - i) for i in range(0, n, size)]
    chunks, start = [], 0
    for sz in sizes:
        shape = list(x.shape)
        shape[d] = sz
        out = em.fresh(shape)
        off = start
        em.nest(shape, lambda v, out=out, off=off: [
            f"{em.ref(out, v)}={em.ref(x, [f'{v[i]}+{off}' if i == d and off else v[i] for i in range(rank)])}"])
        chunks.append(out)
        start += sz
    return chunks


def _paren(s):
    return s if all(c.isalnum() or c in "^{},_." for c in s) and not s.startswith("-") else f"({s})"


def _tanh(em, x, shape):
    a = em.elementwise(shape, lambda v: f"exp({v})-exp(-{v})", x)
    b = em.elementwise(shape, lambda v: f"exp({v})+exp(-{v})", x)
    return em.elementwise(shape, lambda p, q: f"{p}/{q}", a, b)


def _mish(em, x, shape):
    sp = em.elementwise(shape, _UNARY["softplus"], x)
    t = _tanh(em, sp, shape)
    return em.elementwise(shape, lambda p, q: f"{p}*{q}", x, t)


def _linear(em, x, w, b, shape):
    out = em.fresh(shape)
    k = x.shape[-1]
    rank = len(shape)

    def prod(v):
        o = v[:rank]
        c = v[rank]
        return [f"{em.ref(out, o)}={em.ref(out, o)}+{em.ref(x, o[:-1] + [c])}*{em.ref(w, [o[-1], c])}"]
    em.nest(shape + [k], prod)
    if b is not None:
        em.nest(shape, lambda v: [f"{em.ref(out, v)}={em.ref(out, v)}+{em.ref(b, [v[-1]])}"])
    return out


def _matmul(em, node, a, b, shape):
    if not isinstance(a, _Tensor) or not isinstance(b, _Tensor):
        raise UnsupportedOperation(node, "matmul with a scalar")
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise UnsupportedOperation(node, "matmul with a vector")
    out = em.fresh(shape)
    k = a.shape[-1]
    rank = len(shape)

    def batch(t, o):
        idx = []
        for j in range(len(t.shape) - 2):
            i = rank - len(t.shape) + j
            idx.append("0" if t.shape[j] == 1 and shape[i] != 1 else o[i])
        return idx

    def body(v):
        o = v[:rank]
        c = v[rank]
        ai = batch(a, o) + [o[-2], c]
        bi = batch(b, o) + [c, o[-1]]
        return [f"{em.ref(out, o)}={em.ref(out, o)}+{em.ref(a, ai)}*{em.ref(b, bi)}"]
    em.nest(shape + [k], body)
    return out


def _softmax(em, x, dim, shape, log):
    rank = len(shape)
    d = dim % rank
    keep = [i for i in range(rank) if i != d]
    order = keep + [d]
    red_shape = [shape[i] for i in keep]
    m = em.fresh(red_shape)
    s = em.fresh(red_shape)
    out = em.fresh(shape)

    def xi(v):
        var_of = {ax: v[k] for k, ax in enumerate(order)}
        return [var_of[i] for i in range(rank)], [var_of[i] for i in keep]
    ext = [shape[i] for i in order]

    def mx(v):
        a, r = xi(v)
        return [f"{em.ref(m, r)}=max({em.ref(m, r)},{em.ref(x, a)})"]

    def sm(v):
        a, r = xi(v)
        return [f"{em.ref(s, r)}={em.ref(s, r)}+exp({em.ref(x, a)}-{em.ref(m, r)})"]

    def fin(v):
        a, r = xi(v)
        if log:
            return [f"{em.ref(out, a)}={em.ref(x, a)}-{em.ref(m, r)}-log({em.ref(s, r)})"]
        return [f"{em.ref(out, a)}=exp({em.ref(x, a)}-{em.ref(m, r)})/{em.ref(s, r)}"]
    em.nest(ext, mx)
    em.nest(ext, sm)
    em.nest(ext, fin)
    return out


def _layer_norm(em, x, nshape, w, b, eps, shape):
    rank = len(shape)
    k = len(nshape)
    lead = shape[:rank - k]
    count = 1
    for n in nshape:
        count *= n
    mean = em.reduce(x, list(range(rank - k, rank)), False, "sum")
    mean = em.elementwise(lead, lambda p: f"{p}/{count}", mean)
    var = em.fresh(lead)

    def vb(v):
        o = v[:rank - k]
        return [f"{em.ref(var, o)}={em.ref(var, o)}+({em.ref(x, v)}-{em.ref(mean, o)})**2"]
    em.nest(shape, vb)
    var = em.elementwise(lead, lambda p: f"{p}/{count}", var)
    out = em.fresh(shape)
    e = _num(eps)

    def nb(v):
        o = v[:rank - k]
        inner = v[rank - k:]
        y = f"({em.ref(x, v)}-{em.ref(mean, o)})/sqrt({em.ref(var, o)}+{e})"
        if w is not None:
            y = f"{em.ref(w, inner)}*{y}"
        if b is not None:
            y = f"{y}+{em.ref(b, inner)}"
        return [f"{em.ref(out, v)}={y}"]
    em.nest(shape, nb)
    return out


def _conv(em, x, w, b, stride, padding, dilation, shape, groups=1):
    nd = len(stride)
    cin = w.shape[1]  # input channels per group
    out_per_group = shape[1] // groups
    ks = w.shape[2:]
    src = x
    if any(padding):
        pshape = x.shape[:2] + [x.shape[2 + i] + 2 * padding[i] for i in range(nd)]
        src = em.fresh(pshape)

        def pad(v):
            conds = []
            xi = v[:2]
            for i in range(nd):
                p = padding[i]
                var = v[2 + i]
                if p:
                    conds.append(f"{p}<={var}<{x.shape[2 + i] + p}")
                    xi.append(f"{var}-{p}")
                else:
                    xi.append(var)
            cond = "&".join(conds)
            return [f"{em.ref(src, v)}=if_then_else({cond},{em.ref(x, xi)},0)"]
        em.nest(pshape, pad)
    out = em.fresh(shape)

    def body(v):
        o = v[:2 + nd]
        c = v[2 + nd]
        kv = v[3 + nd:]
        if groups == 1:
            ch = c
        elif cin == 1 and out_per_group == 1:
            ch = o[1]  # depthwise: the input channel is the output channel
        else:
            grp = o[1] if out_per_group == 1 else f"{o[1]}//{out_per_group}"
            ch = f"{grp}*{cin}+{c}" if cin != 1 else grp
        xi = [o[0], ch]
        for i in range(nd):
            s, d = stride[i], dilation[i]
            xi.append(f"{o[2 + i]}{'*' + str(s) if s != 1 else ''}+{kv[i]}{'*' + str(d) if d != 1 else ''}")
        return [f"{em.ref(out, o)}={em.ref(out, o)}+{em.ref(w, [o[1], c] + kv)}*{em.ref(src, xi)}"]
    if groups != 1 and cin == 1:
        # one input channel per group: no channel loop (reference: "the
        # input-channel index is the output channel")
        def body1(v):
            return body(v[:2 + nd] + ["0"] + v[2 + nd:])
        em.nest(shape + list(ks), body1)
    else:
        em.nest(shape + [cin] + list(ks), body)
    if b is not None:
        em.nest(shape, lambda v: [f"{em.ref(out, v)}={em.ref(out, v)}+{em.ref(b, [v[1]])}"])
    return out


def _pool2d(em, node, x, m, shape):
    def pair(v):
        return list(v) if isinstance(v, (tuple, list)) else [v, v]
    k, s, p = pair(m.kernel_size), pair(m.stride or m.kernel_size), pair(m.padding)
    d = pair(getattr(m, "dilation", 1))
    is_max = isinstance(m, torch.nn.MaxPool2d)
    if m.ceil_mode or (any(p) and not is_max):
        raise UnsupportedOperation(node, "ceil_mode or average-pool padding")
    if any(p):
        # a padded copy holding -inf outside the input
        pshape = x.shape[:2] + [x.shape[2] + 2 * p[0], x.shape[3] + 2 * p[1]]
        src = em.fresh(pshape)

        def pad(v):
            cond = "&".join(f"{p[i]}<={v[2 + i]}<{x.shape[2 + i] + p[i]}" for i in range(2) if p[i])
            xi = v[:2] + [f"{v[2 + i]}-{p[i]}" if p[i] else v[2 + i] for i in range(2)]
            return [f"{em.ref(src, v)}=if_then_else({cond},{em.ref(x, xi)},-inf)"]
        em.nest(pshape, pad)
        x = src
    out = em.fresh(shape)

    def body(v):
        o = v[:4]
        kh, kw = v[4], v[5]
        xi = [o[0], o[1], f"{o[2]}*{s[0]}+{kh}*{d[0]}", f"{o[3]}*{s[1]}+{kw}*{d[1]}"]
        if is_max:
            return [f"{em.ref(out, o)}=max({em.ref(out, o)},{em.ref(x, xi)})"]
        return [f"{em.ref(out, o)}={em.ref(out, o)}+{em.ref(x, xi)}"]
    em.nest(shape + k, body)
    if not is_max:
        out = em.elementwise(shape, lambda q: f"{q}/{k[0] * k[1]}", out)
    return out


def _reshape(em, x, shape):
    """A copy through the row-major linear index."""
    out = em.fresh(shape)
    if list(x.shape) == list(shape):
        em.nest(shape, lambda v: [f"{em.ref(out, v)}={em.ref(x, v)}"])
        return out

    def body(v):
        terms = []
        stride = 1
        for i in reversed(range(len(shape))):
            terms.append(v[i] if stride == 1 else f"{v[i]}*{stride}")
            stride *= shape[i]
        lin = "+".join(reversed(terms)) if terms else "0"
        xi = []
        stride = 1
        strides = []
        for e in reversed(x.shape):
            strides.append(stride)
            stride *= e
        strides.reverse()
        for j, e in enumerate(x.shape):
            part = f"({lin})" if len(terms) > 1 else lin
            if strides[j] != 1:
                part = f"{part}//{strides[j]}"
            if j > 0:
                part = f"{part}%{e}"
            xi.append(part)
        return [f"{em.ref(out, v)}={em.ref(x, xi)}"]
    em.nest(shape, body)
    return out
