#!/usr/bin/env python3
"""Writes the catalogue files of the attention workloads (level 2: MQA_*,
GQA_*, MHA_*, MinGPTCausalAttention) from one body per attention kind and a
list of epilogue operations, naming tensors as the Step-TP reference does
(reference notes section 1.4): graph input A, then the fx nodes in order (the
last is the output), then the constants (the causal mask), then the module
parameters, then the lowering's temporaries in lowering order (softmax takes
2, tanh 2, sum and mean 1, max 2 of which it uses the second).

The MQA and GQA bodies are the reference's (conformance corpus: the files of
the corpus variants regenerate to the reference's programs at both corpus
shapes, tests/workloads/faithful.py checks that); every extent is a
parameter expression (head size n_embd//n_head, key/value width
n_group*head size), so the templates hold at every shape. The reference
cannot trace MinGPTCausalAttention and the MHA_* models (reference notes
Q37: they split the qkv projection); their body here is minGPT's (one qkv
linear, split into q, k, v, scaled by 1/sqrt(k.size(-1))) with the causal
mask as the MQA models take it (a bool [1,1,T,T] constant, true = masked).

  /usr/bin/python3 tests/workloads/gen_attention.py workloads
"""
import os
import sys

TL = "ACDEFGHIJKMNOQRSWXYZ"
HS = "$(n_embd//n_head)"
KV = "$(n_embd//n_head*n_group)"


def tname(i):
    s = ""
    i += 1
    while i > 0:
        i -= 1
        s = TL[i % 20].lower() + s
        i //= 20
    return s[0].upper() + s[1:]


def P(name, default, small, rng):
    return {"name": name, "default": default, "small": small, "range": rng}


class Prog:
    """Nodes, constants, params and temporaries with symbolic keys; nests use
    {key} for a tensor and {T} for the dtype."""

    def __init__(self):
        self.nodes, self.consts, self.params, self.temps, self.nests = [], [], [], [], []

    def node(self, key):
        self.nodes.append(key)
        return key

    def nest(self, text):
        self.nests.append(text)

    def names(self):
        order = ["x"] + self.nodes + self.consts + self.params + self.temps
        return {k: tname(i) for i, k in enumerate(order)}

    def text(self):
        nm = self.names()
        out = []
        for n in self.nests:
            s = n.replace("{MASK}", nm.get("mask", "?"))
            for k in sorted(nm, key=len, reverse=True):
                s = s.replace("{" + k + "}", nm[k] + "^{$T,g}")
            out.append(s)
        return out


BT = "B^{$batch_size}_{tx=0}L^{$seq_len}_{a=0}"
BH = "B^{$batch_size}_{tx=0}L^{$n_head}_{a=0}L^{$seq_len}_{c=0}"


def linear(p, out, inp, width_out, width_in, w, b=None):
    p.nest(f"{BT}L^{{{width_out}}}_{{c=0}}L^{{{width_in}}}_{{d=0}}[{{{out}}}_{{tx,a,c}}={{{out}}}_{{tx,a,c}}+{{{inp}}}_{{tx,a,d}}*{{{w}}}_{{c,d}};];")
    if b:
        p.nest(f"{BT}L^{{{width_out}}}_{{c=0}}[{{{out}}}_{{tx,a,c}}={{{out}}}_{{tx,a,c}}+{{{b}}}_{{c}};];")


def heads_view(p, out, inp, nheads, off=""):
    p.nest(f"{BT}L^{{{nheads}}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{{out}}}_{{tx,a,c,d}}={{{inp}}}_{{tx,a,{off}c*{HS}+d}};];")


def transpose12(p, out, inp, nheads):
    p.nest(f"{BT}L^{{{nheads}}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{{out}}}_{{tx,c,a,d}}={{{inp}}}_{{tx,a,c,d}};];")


def attention_tail(p, q, kT, v, scale, proj_w, proj_b):
    """q@kT, scale, mask, softmax, @v, transpose, contiguous, view, proj."""
    qk = p.node("qk")
    p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}L^{{{HS}}}_{{f=0}}[{{qk}}_{{tx,a,c,d}}={{qk}}_{{tx,a,c,d}}+{{{q}}}_{{tx,a,c,f}}*{{{kT}}}_{{tx,a,f,d}};];")
    if scale == "size":
        p.node("size")
        p.node("sqrt")
        p.node("rdiv")
        p.nest("B^{1}_{tx=0}[{size}=" + HS + ";];")
        p.nest("B^{1}_{tx=0}[{sqrt}=sqrt({size});];")
        p.nest("B^{1}_{tx=0}[{rdiv}=1.0/{sqrt};];")
        p.node("scaled")
        p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{scaled}}_{{tx,a,c,d}}={{qk}}_{{tx,a,c,d}}*{{rdiv}};];")
    else:
        p.node("scaled")
        p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{scaled}}_{{tx,a,c,d}}={{qk}}_{{tx,a,c,d}}*$(1/sqrt(n_embd//n_head));];")
    p.node("masked")
    p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{masked}}_{{tx,a,c,d}}=if_then_else({{MASK}}^{{bool,g}}_{{0,0,c,d}},-inf,{{scaled}}_{{tx,a,c,d}});];")
    p.node("sm")
    p.temps += ["sm_max", "sm_sum"]
    p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{sm_max}}_{{tx,a,c}}=max({{sm_max}}_{{tx,a,c}},{{masked}}_{{tx,a,c,d}});];")
    p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{sm_sum}}_{{tx,a,c}}={{sm_sum}}_{{tx,a,c}}+exp({{masked}}_{{tx,a,c,d}}-{{sm_max}}_{{tx,a,c}});];")
    p.nest(f"{BH}L^{{$seq_len}}_{{d=0}}[{{sm}}_{{tx,a,c,d}}=exp({{masked}}_{{tx,a,c,d}}-{{sm_max}}_{{tx,a,c}})/{{sm_sum}}_{{tx,a,c}};];")
    p.node("av")
    p.nest(f"{BH}L^{{{HS}}}_{{d=0}}L^{{$seq_len}}_{{f=0}}[{{av}}_{{tx,a,c,d}}={{av}}_{{tx,a,c,d}}+{{sm}}_{{tx,a,c,f}}*{{{v}}}_{{tx,a,f,d}};];")
    p.node("y_tr")
    p.nest(f"{BH}L^{{{HS}}}_{{d=0}}[{{y_tr}}_{{tx,c,a,d}}={{av}}_{{tx,a,c,d}};];")
    p.node("y_c")
    p.nest(f"{BT}L^{{$n_head}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{y_c}}_{{tx,a,c,d}}={{y_tr}}_{{tx,a,c,d}};];")
    p.node("y_v")
    p.nest(f"{BT}L^{{$n_head}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{y_v}}_{{tx,a,c*{HS}+d}}={{y_c}}_{{tx,a,c,d}};];")
    p.node("proj")
    linear(p, "proj", "y_v", "$n_embd", "$n_embd", proj_w, proj_b)
    return "proj"


def body_mqa():
    p = Prog()
    p.consts = ["mask"]
    p.params = ["qw", "qb", "kw", "kb", "vw", "vb", "pw", "pb"]
    p.node("q")
    linear(p, "q", "x", "$n_embd", "$n_embd", "qw", "qb")
    p.node("q_v")
    heads_view(p, "q_v", "q", "$n_head")
    p.node("q_t")
    transpose12(p, "q_t", "q_v", "$n_head")
    p.node("k")
    linear(p, "k", "x", HS, "$n_embd", "kw", "kb")
    p.node("v")
    linear(p, "v", "x", HS, "$n_embd", "vw", "vb")
    for src, u, e in (("k", "k_u", "k_e"), ("v", "v_u", "v_e")):
        p.node(u)
        p.nest(f"{BT}L^{{{HS}}}_{{c=0}}[{{{u}}}_{{tx,0,a,c}}={{{src}}}_{{tx,a,c}};];")
        p.node(e)
        p.nest(f"B^{{$batch_size}}_{{tx=0}}L^{{$n_head}}_{{a=0}}L^{{$seq_len}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{{e}}}_{{tx,a,c,d}}={{{u}}}_{{tx,0,c,d}};];")
    p.node("kT")
    p.nest(f"{BH}L^{{{HS}}}_{{d=0}}[{{kT}}_{{tx,a,d,c}}={{k_e}}_{{tx,a,c,d}};];")
    return p, attention_tail(p, "q_t", "kT", "v_e", "size", "pw", "pb")


def body_gqa():
    p = Prog()
    p.consts = ["mask"]
    p.params = ["qw", "qb", "kw", "kb", "vw", "vb", "pw", "pb"]
    p.node("q")
    linear(p, "q", "x", "$n_embd", "$n_embd", "qw", "qb")
    p.node("q_v")
    heads_view(p, "q_v", "q", "$n_head")
    p.node("q_t")
    transpose12(p, "q_t", "q_v", "$n_head")
    p.node("k")
    linear(p, "k", "x", KV, "$n_embd", "kw", "kb")
    p.node("k_v")
    heads_view(p, "k_v", "k", "$n_group")
    p.node("v")
    linear(p, "v", "x", KV, "$n_embd", "vw", "vb")
    p.node("v_v")
    heads_view(p, "v_v", "v", "$n_group")
    rep = f"{BT}L^{{$(n_head//n_group)}}_{{c=0}}L^{{$n_group}}_{{d=0}}L^{{{HS}}}_{{f=0}}"
    for s in ("k", "v"):
        p.node(s + "_u")
        p.nest(f"{BT}L^{{$n_group}}_{{c=0}}L^{{{HS}}}_{{d=0}}[{{{s}_u}}_{{tx,a,0,c,d}}={{{s}_v}}_{{tx,a,c,d}};];")
        p.node(s + "_e")
        p.nest(f"{rep}[{{{s}_e}}_{{tx,a,c,d,f}}={{{s}_u}}_{{tx,a,0,d,f}};];")
        p.node(s + "_c")
        p.nest(f"{rep}[{{{s}_c}}_{{tx,a,c,d,f}}={{{s}_e}}_{{tx,a,c,d,f}};];")
        p.node(s + "_r")
        p.nest(f"{rep}[{{{s}_r}}_{{tx,a,c*$n_group+d,f}}={{{s}_c}}_{{tx,a,c,d,f}};];")
    p.node("k_t")
    transpose12(p, "k_t", "k_r", "$n_head")
    p.node("v_t")
    transpose12(p, "v_t", "v_r", "$n_head")
    p.node("kT")
    p.nest(f"{BH}L^{{{HS}}}_{{d=0}}[{{kT}}_{{tx,a,d,c}}={{k_t}}_{{tx,a,c,d}};];")
    return p, attention_tail(p, "q_t", "kT", "v_t", "const", "pw", "pb")


def body_mha():
    """minGPT: c_attn (3*n_embd), split into q, k, v (a leading chunk
    index), k, q, v views and transposes, 1/sqrt(k.size(-1))."""
    p = Prog()
    p.consts = ["mask"]
    p.params = ["aw", "ab", "pw", "pb"]
    p.node("qkv")
    linear(p, "qkv", "x", "$(3*n_embd)", "$n_embd", "aw", "ab")
    p.node("split")
    for i in range(3):
        p.nest(f"{BT}L^{{$n_embd}}_{{c=0}}[{{split}}_{{{i},tx,a,c}}={{qkv}}_{{tx,a,c+$({i}*n_embd)}};];")
    for s, i in (("k", 1), ("q", 0), ("v", 2)):
        p.node(s + "_v")
        heads_view(p, s + "_v", "split", "$n_head", off="")
        p.nests[-1] = p.nests[-1].replace("{split}_{tx,a,", "{split}_{" + str(i) + ",tx,a,")
        p.node(s + "_t")
        transpose12(p, s + "_t", s + "_v", "$n_head")
    p.node("kT")
    p.nest(f"{BH}L^{{{HS}}}_{{d=0}}[{{kT}}_{{tx,a,d,c}}={{k_t}}_{{tx,a,c,d}};];")
    return p, attention_tail(p, "q_t", "kT", "v_t", "size", "pw", "pb")


def epilogue(p, cur, width, ops):
    """ops: gemm, relu, gelu, tanh, sum, mean, max (over dim 1, keepdim)."""
    for op in ops:
        if op == "gemm":
            p.node("gemm")
            p.params.append("gw")
            linear(p, "gemm", cur, "$out_features", "$n_embd", "gw")
            cur, width = "gemm", "$out_features"
        elif op in ("relu", "gelu"):
            p.node(op)
            x = f"{{{cur}}}_{{tx,a,c}}"
            rhs = f"max({x},0)" if op == "relu" else f"{x}*0.5*(1+erf({x}/sqrt(2)))"
            p.nest(f"{BT}L^{{{width}}}_{{c=0}}[{{{op}}}_{{tx,a,c}}={rhs};];")
            cur = op
        elif op == "tanh":
            p.node("tanh")
            p.temps += ["th_n", "th_d"]
            x = f"{{{cur}}}_{{tx,a,c}}"
            p.nest(f"{BT}L^{{{width}}}_{{c=0}}[{{th_n}}_{{tx,a,c}}=exp({x})-exp(-{x});];")
            p.nest(f"{BT}L^{{{width}}}_{{c=0}}[{{th_d}}_{{tx,a,c}}=exp({x})+exp(-{x});];")
            p.nest(f"{BT}L^{{{width}}}_{{c=0}}[{{tanh}}_{{tx,a,c}}={{th_n}}_{{tx,a,c}}/{{th_d}}_{{tx,a,c}};];")
            cur = "tanh"
        elif op in ("sum", "mean", "max"):
            p.node(op)
            if op == "max":
                p.node("getitem")
                p.temps += ["red_unused", "red"]
            else:
                p.temps += ["red"]
            out = "getitem" if op == "max" else op
            x = f"{{{cur}}}_{{tx,a,c}}"
            acc = "{red}_{tx,0,c}"
            rhs = f"max({acc},{x})" if op == "max" else f"{acc}+{x}"
            p.nest(f"{BT}L^{{{width}}}_{{c=0}}[{acc}={rhs};];")
            div = "/$seq_len" if op == "mean" else ""
            p.nest(f"B^{{$batch_size}}_{{tx=0}}L^{{1}}_{{a=0}}L^{{{width}}}_{{c=0}}[{{{out}}}_{{tx,a,c}}={{red}}_{{tx,a,c}}{div};];")
            cur = out
    return cur


# small: a shape the interpreter runs in milliseconds (the corpus shapes are checked at their
# own shape_args); range: from the corpus's small shape to the default
MQA_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("max_seqlen", 1024, 512, [512, 1024]),
         P("batch_size", 64, 2, [2, 64]), P("seq_len", 256, 5, [5, 256])]
MQA_GEMM_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("out_features", 64, 6, [6, 64]),
              P("max_seqlen", 1024, 512, [512, 1024]), P("batch_size", 64, 2, [2, 64]),
              P("seq_len", 256, 5, [5, 256])]
GQA_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("n_group", 2, 2, [2, 2]),
         P("max_seqlen", 1024, 512, [512, 1024]), P("batch_size", 64, 2, [2, 64]), P("seq_len", 256, 5, [5, 256])]
GQA_GEMM_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("out_features", 64, 6, [6, 64]),
              P("n_group", 2, 2, [2, 2]), P("max_seqlen", 1024, 512, [512, 1024]),
              P("batch_size", 64, 2, [2, 64]), P("seq_len", 256, 5, [5, 256])]
MHA_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("max_seqlen", 1024, 512, [512, 1024]),
         P("batch_size", 64, 2, [2, 64]), P("seq_len", 256, 5, [5, 256])]
MHA_GEMM_P = [P("n_embd", 128, 16, [16, 128]), P("n_head", 8, 4, [4, 8]), P("out_features", 64, 6, [6, 64]),
              P("max_seqlen", 1024, 512, [512, 1024]), P("batch_size", 64, 2, [2, 64]),
              P("seq_len", 256, 5, [5, 256])]

DESC = {"MQA": "multi-query causal attention", "GQA": "grouped-query causal attention",
        "MHA": "multi-head causal attention"}
OPDESC = {"gemm": "linear", "relu": "relu", "gelu": "gelu", "tanh": "tanh", "sum": "sum(dim)",
          "mean": "mean(dim)", "max": "max(dim)"}

# (name, index, kind, epilogue ops, traced by the reference)
WORKLOADS = [("MinGPTCausalAttention", 1, "MHA", [], False), ("MQA", 87, "MQA", [], True),
             ("GQA", 88, "GQA", [], True)]
_idx = 89
for kind in ("MHA", "MQA", "GQA"):
    for red in ("sum", "max", "mean"):
        WORKLOADS.append((f"{kind}_{red}", _idx, kind, [red], kind != "MHA"))
        _idx += 1
for suffix, ops in (("Gemm", ["gemm"]), ("Gemm_ReLU", ["gemm", "relu"]), ("Gemm_GeLU", ["gemm", "gelu"]),
                    ("Gemm_Tanh", ["gemm", "tanh"])):
    for kind in ("MHA", "MQA", "GQA"):
        WORKLOADS.append((f"{kind}_{suffix}", _idx, kind, ops, kind != "MHA"))
        _idx += 1
for name, ops in (("MHA_Gemm_ReLU_sum", ["gemm", "relu", "sum"]), ("MQA_Gemm_ReLU_max", ["gemm", "relu", "max"]),
                  ("GQA_Gemm_ReLU_mean", ["gemm", "relu", "mean"]), ("MHA_Gemm_Tanh_max", ["gemm", "tanh", "max"]),
                  ("MQA_Gemm_Tanh_mean", ["gemm", "tanh", "mean"]), ("GQA_Gemm_Tanh_sum", ["gemm", "tanh", "sum"]),
                  ("MHA_Gemm_GeLU_mean", ["gemm", "gelu", "mean"]), ("MQA_Gemm_GeLU_sum", ["gemm", "gelu", "sum"]),
                  ("GQA_Gemm_GeLU_max", ["gemm", "gelu", "max"])):
    WORKLOADS.append((name, _idx, name[:3], ops, name[:3] != "MHA"))
    _idx += 1
assert _idx == 119 and len(WORKLOADS) == 33


def params_for(kind, gemm):
    return {("MQA", False): MQA_P, ("MQA", True): MQA_GEMM_P, ("GQA", False): GQA_P,
            ("GQA", True): GQA_GEMM_P, ("MHA", False): MHA_P, ("MHA", True): MHA_GEMM_P}[(kind, gemm)]


def flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return str(v)


def render(name, index, kind, ops, traced):
    p, cur = {"MQA": body_mqa, "GQA": body_gqa, "MHA": body_mha}[kind]()
    out = epilogue(p, cur, "$n_embd", ops)
    assert p.nodes[-1] == out
    nm = p.names()
    params = params_for(kind, "gemm" in ops)
    what = DESC[kind] if name != "MinGPTCausalAttention" else \
        "minGPT causal self-attention (qkv linear, split, mask, softmax, proj)"
    summary = " → ".join([what] + [OPDESC[o] for o in ops])
    if kind != "MHA":
        summary = summary.replace(DESC[kind], DESC[kind] + (" + output projection" if not ops else ""), 1)
    cons = ["n_embd % n_head == 0"] + (["n_head % n_group == 0"] if kind == "GQA" else [])
    inputs = [("x", None)] + [(k, "bool" if k == "mask" else None) for k in p.consts + p.params]
    rank = {k: i for i, k in enumerate(["x"] + p.nodes + p.consts + p.params + p.temps)}
    inputs.sort(key=lambda t: rank[t[0]])
    lines = [f"# Generated by tests/workloads/gen_attention.py (edit that script, then rerun it).",
             f"name: {name}", "level: 2", f"index: {index}", f"summary: '{summary}'",
             f"traced: {'true' if traced else 'false'}", "dtype: f32", "params:"]
    lines += [f"  - {flow(x)}" for x in params]
    lines.append("constraints: [" + ", ".join(f"'{c}'" for c in cons) + "]")
    lines.append("inputs:")
    for k, dt in inputs:
        extra = ""
        if k == "mask":
            extra = ", dtype: bool"
        lines.append(f"  - {{name: {nm[k]}{extra}}}")
    lines += ["outputs:", f"  - {{name: {nm[out]}}}", "leir: |-"]
    lines += ["  " + t for t in p.text()]
    return "\n".join(lines) + "\n"


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "workloads"
    for w in WORKLOADS:
        with open(os.path.join(outdir, f"level2_{w[0]}.yaml"), "w") as f:
            f.write(render(*w))


if __name__ == "__main__":
    main()
