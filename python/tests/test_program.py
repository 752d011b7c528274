"""Programs: parse, print, hash, check, signature, walk, errors."""

from __future__ import annotations

import ctypes
import gc

import pytest

import leir
from leir import _lib
from conftest import NESTED_BAD, RELU, ROWSUM, SOFTMAX


def test_parse_prints_canonical_text_and_pretty(relu: leir.Program) -> None:
    assert str(relu) == RELU
    p = leir.parse(SOFTMAX)  # lenient: whitespace and one nest per line
    assert " " not in str(p)
    assert p.pretty().count("\n") >= 3
    assert leir.parse(p.pretty()) == p
    assert leir.Program(RELU) == relu


def test_strict_parse_refuses_whitespace() -> None:
    with pytest.raises(leir.ParseError):
        leir.parse(SOFTMAX, strict=True)


def test_parse_error_has_line_column_rule() -> None:
    with pytest.raises(leir.ParseError) as ei:
        leir.parse(NESTED_BAD)
    e = ei.value
    assert (e.line, e.column, e.rule) == (1, 32, "parse.expected")
    assert e.status_name == "LEIR_ERR_PARSE"
    assert "expected ';'" in e.message
    assert isinstance(e, ValueError) and isinstance(e, leir.LeirError)
    assert str(e).startswith("1:32: expected")


def test_hash_matches_the_cli_and_alpha_ignores_fresh_names() -> None:
    p = leir.parse(SOFTMAX)
    assert p.hash_hex() == "5b88bef7854c347b"  # README.md: leir hash softmax.leir
    assert p.hash_hex(alpha=True) == "e58d9ccb11d17421"
    renamed = leir.parse(SOFTMAX.replace("D^", "Q^").replace("{a=0}", "{c=0}").replace(",a}", ",c}"))
    assert renamed.hash(alpha=True) == p.hash(alpha=True)
    assert renamed.hash() != p.hash()
    assert hash(p) == p.hash()
    assert len({p, leir.parse(SOFTMAX), renamed}) == 2


def test_signature_inferred_set_and_yaml(relu: leir.Program) -> None:
    assert relu.signature == []
    assert [(d.name, d.role, d.shape) for d in relu.effective_signature()] == [
        ("A", "input", (2, 8)),
        ("C", "output", (2, 8)),
    ]
    assert relu.signature == []  # not modified
    relu.set_signature({"A": ("f64", (2, 8))}, {"C": ("f64", [2, 8])})
    assert relu.inputs[0].size == 16
    y = relu.to_yaml()
    assert "inputs:" in y and "A: {dtype: f64, shape: [2, 8]}" in y
    back = leir.Program.from_yaml(y)
    assert back == relu
    with pytest.raises(leir.SignatureError):
        relu.set_signature({"A": ("f64", (2, 8))}, {})
    with pytest.raises(leir.ArgumentError):
        relu.set_signature({"A": ("f99", (2, 8))}, {"C": ("f64", (2, 8))})


def test_load_files(tmp_path) -> None:
    f = tmp_path / "softmax.leir"
    f.write_text(SOFTMAX)
    assert leir.load(f) == leir.parse(SOFTMAX)
    y = tmp_path / "relu.leir.yaml"
    y.write_text("name: relu\ninputs: {A: {dtype: f64, shape: [2, 8]}}\n"
                 "outputs: {C: {dtype: f64, shape: [2, 8]}}\nleir: " + RELU + "\n")
    p = leir.load(y)
    assert p.name == "relu" and len(p.signature) == 2
    with pytest.raises(leir.LeirIOError):
        leir.load(tmp_path / "missing.leir")


def test_check_lists_every_finding(relu: leir.Program) -> None:
    assert relu.check() == [] and relu.is_valid
    relu.set_signature({"A": ("f64", (2, 4))}, {"C": ("f64", (2, 8))})
    diags = relu.check()
    assert diags and diags[0].rule == "check.bounds"
    assert diags[0].line == 1 and diags[0].column > 0
    assert not relu.is_valid
    with pytest.raises(leir.InvalidProgramError) as ei:
        relu.validate()
    assert ei.value.rule == "check.bounds"
    # limits
    big = leir.parse("L^{100}_{a=0}[C^{f64,g}_{a}=1;];")
    assert big.check(max_extent=10)
    with pytest.raises(TypeError):
        big.check(frobnicate=1)


def test_walk_visits_every_node_in_order() -> None:
    p = leir.parse(ROWSUM)
    nodes = list(p.walk())
    kinds = [type(n).__name__ for n in nodes]
    assert kinds[0] == "Nest" and kinds[1] == "Equation"
    exprs = [n for n in nodes if isinstance(n, leir.Expr)]
    assert [e.kind for e in exprs] == ["tensor", "var", "binary", "tensor", "var", "tensor", "var", "var"]
    assert exprs[2].op == "+"
    assert p.tensors() == {"C": "f64", "A": "f64"}
    (nest,) = p.nests
    assert [(lp.kind, lp.extent, lp.var) for lp in nest.loops] == [("B", 4, "tx"), ("L", 6, "a")]
    (eq,) = nest.items
    assert eq.lhs.name == "C" and eq.rhs.kind == "binary"
    assert nest.position == (1, 1)
    num = [e for e in leir.parse(RELU).walk() if isinstance(e, leir.Expr) and e.kind == "number"][0]
    assert num.value == 0 and num.lexeme == "0"


def test_nodes_keep_their_program_alive() -> None:
    nest = leir.parse(ROWSUM).nests[0]
    gc.collect()
    assert nest.loops[0].var == "tx"


def test_closed_program_raises_instead_of_crashing() -> None:
    p = leir.parse(RELU)
    p.close()
    p.close()  # idempotent
    with pytest.raises(ValueError):
        str(p)
    with leir.parse(RELU) as q:
        assert str(q) == RELU
    with pytest.raises(ValueError):
        q.hash()


def test_stale_error_is_never_reported() -> None:
    # leave a parse error in the library's record ...
    with pytest.raises(leir.ParseError):
        leir.parse(NESTED_BAD)
    rec = _lib.leir_error_last().contents
    assert rec.status == -1
    # ... then a call fails with a status whose record it did not write:
    # leir_step_to_json with a NULL step records ARGUMENT itself, so make
    # the record stale on purpose and ask error_for with the sequence.
    from leir.errors import error_for

    before = _lib.leir_error_sequence()
    e = error_for(-1, before)  # same status, but the sequence did not move
    assert e.line == 0 and e.rule == "" and e.message == "malformed LEIR text"
    e = error_for(-3)  # another status: generic message, not the parse error
    assert e.rule == "" and isinstance(e, leir.ArgumentError)
    # a successful call after the failure is not an error
    assert str(leir.parse(RELU)) == RELU


def test_many_programs_are_freed() -> None:
    for _ in range(2000):
        p = leir.parse(SOFTMAX)
        q = p.copy()
        assert q.hash() == p.hash()
    gc.collect()


def test_text_may_be_bytes_and_not_nul_terminated() -> None:
    assert str(leir.parse(RELU.encode())) == RELU
    with pytest.raises(leir.ParseError):
        leir.parse(RELU[:-1] + "\0")
    with pytest.raises(TypeError):
        leir.parse(42)  # type: ignore[arg-type]


def test_version() -> None:
    assert leir.library_version == "0.2.0"
    assert leir.library_path
    assert ctypes.sizeof(_lib.Timing) == 8 * 4 + 8 + 16 + 8 * 3 + 8 * 6


def test_programs_pickle() -> None:
    import pickle

    p = leir.parse(SOFTMAX)
    assert pickle.loads(pickle.dumps(p)) == p
    p.set_signature({"A": ("f64", (2, 8))}, {"C": ("f64", (2, 8))})
    p.name = "softmax"
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.name == "softmax"
