"""Running on numpy arrays: shapes, dtypes, layouts, errors; verify; time."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import leir
from leir import _lib
from conftest import RELU, ROWSUM, SOFTMAX, have_cc

BACKENDS = ["interp"] + (["cpu"] if have_cc() else [])


@pytest.fixture(params=BACKENDS)
def backend(request, interp, tmp_path_factory) -> leir.Backend:
    if request.param == "interp":
        return interp
    return request.getfixturevalue("cpu")


def test_run_relu(relu: leir.Program, backend: leir.Backend) -> None:
    a = np.random.default_rng(0).standard_normal((2, 8))
    out = leir.run(relu, {"A": a}, backend=backend)
    assert list(out) == ["C"]
    assert out["C"].dtype == np.float64 and out["C"].shape == (2, 8)
    np.testing.assert_array_equal(out["C"], np.maximum(a, 0))


def test_run_softmax_matches_numpy(backend: leir.Backend) -> None:
    a = np.random.default_rng(1).standard_normal((2, 8))
    c = leir.run(leir.parse(SOFTMAX), A=a, backend=backend)["C"]
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(c, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: np.asfortranarray(a),
        lambda a: np.ascontiguousarray(a.T).T,
        lambda a: np.repeat(a, 2, axis=1)[:, ::2],
        lambda a: a[::-1][::-1],
        lambda a: a.tolist(),
    ],
    ids=["fortran", "transposed", "strided", "reversed-view", "list"],
)
def test_non_contiguous_inputs_are_copied_to_c_order(make, relu: leir.Program, interp) -> None:
    a = np.arange(16, dtype=np.float64).reshape(2, 8) - 7.5
    arg = make(a)
    if isinstance(arg, np.ndarray):
        np.testing.assert_array_equal(arg, a)
    out = leir.run(relu, {"A": arg}, backend=interp)["C"]
    np.testing.assert_array_equal(out, np.maximum(a, 0))


@pytest.mark.parametrize("shape", [(2, 7), (2,), (16,), (8, 2), (2, 8, 1), (0, 8), ()])
def test_wrong_shapes_raise_before_running(shape, relu: leir.Program, backend) -> None:
    with pytest.raises(leir.ShapeError) as ei:
        leir.run(relu, {"A": np.zeros(shape)}, backend=backend)
    assert ei.value.subject == "A" and "(2, 8)" in str(ei.value)
    assert isinstance(ei.value, ValueError)


def test_the_c_entry_refuses_short_buffers_too(relu: leir.Program, interp) -> None:
    # below the Python checks: the sized entry point itself refuses
    k = interp.kernel(relu)
    a = np.zeros(15)
    c = np.zeros(16)
    ptrs = (ctypes.c_void_p * 2)(a.ctypes.data, c.ctypes.data)
    sizes = (ctypes.c_size_t * 2)(a.nbytes, c.nbytes)
    from leir.errors import call

    with pytest.raises(leir.ArgumentError) as ei:
        call(_lib.leir_kernel_run_sized, k._h, ptrs, sizes, 2)
    assert ei.value.rule == "run.buffer-size" and ei.value.subject == "A"
    assert "needs 128 bytes" in ei.value.message


def test_inputs_by_name(relu: leir.Program, interp) -> None:
    with pytest.raises(leir.ArgumentError) as ei:
        leir.run(relu, {}, backend=interp)
    assert "missing input A" in str(ei.value)
    with pytest.raises(leir.ArgumentError) as ei:
        leir.run(relu, {"A": np.zeros((2, 8)), "B": 1}, backend=interp)
    assert "unknown input(s) B" in str(ei.value)
    with pytest.raises(leir.ArgumentError):
        leir.run(relu, {"A": np.array([["x"] * 8] * 2)}, backend=interp)
    with pytest.raises(leir.ArgumentError):
        leir.run(relu, {"A": np.zeros((2, 8), dtype=complex)}, backend=interp)


def test_dtypes_are_converted_or_kept(interp) -> None:
    p = leir.parse("L^{4}_{a=0}[C^{i32,g}=C^{i32,g}+A^{i8,g}_{a};];")
    out = leir.run(p, {"A": [1, 2, 3, -4]}, backend=interp)
    assert out["C"].dtype == np.int32 and out["C"].shape == () and int(out["C"]) == 2
    f32 = leir.parse("L^{3}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}*2;];")
    out = leir.run(f32, {"A": np.array([1.5, 2.0, -1.0])}, backend=interp)["C"]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([3, 4, -2], dtype=np.float32))
    b = leir.parse("L^{3}_{a=0}[C^{f64,g}_{a}=if_then_else(A^{bool,g}_{a},1,2);];")
    out = leir.run(b, {"A": np.array([True, False, True])}, backend=interp)["C"]
    np.testing.assert_array_equal(out, [1, 2, 1])


def test_out_arrays(relu: leir.Program, interp) -> None:
    a = np.linspace(-1, 1, 16).reshape(2, 8)
    c = np.full((2, 8), 7.0)
    res = leir.run(relu, {"A": a}, out={"C": c}, backend=interp)
    assert res["C"] is c
    np.testing.assert_array_equal(c, np.maximum(a, 0))
    wide = np.zeros((8, 2)).T  # non-contiguous target: filled through a copy
    leir.run(relu, {"A": a}, out={"C": wide}, backend=interp)
    np.testing.assert_array_equal(wide, np.maximum(a, 0))
    with pytest.raises(leir.ShapeError):
        leir.run(relu, {"A": a}, out={"C": np.zeros((2, 7))}, backend=interp)
    with pytest.raises(leir.ArgumentError):
        leir.run(relu, {"A": a}, out={"C": np.zeros((2, 8), dtype=np.float32)}, backend=interp)
    ro = np.zeros((2, 8))
    ro.flags.writeable = False
    with pytest.raises(leir.ArgumentError):
        leir.run(relu, {"A": a}, out={"C": ro}, backend=interp)


def test_kernel_runs_many_times(rowsum: leir.Program, backend) -> None:
    k = leir.Kernel(rowsum, backend)
    assert [d.name for d in k.inputs] == ["A"] and [d.name for d in k.outputs] == ["C"]
    rng = np.random.default_rng(2)
    for _ in range(5):
        a = rng.standard_normal((4, 6))
        np.testing.assert_allclose(k(A=a)["C"], a.sum(axis=1), rtol=1e-12)
    k.close()
    with pytest.raises(ValueError):
        k.run(A=a)


def test_runtime_errors_raise(interp) -> None:
    p = leir.parse("L^{4}_{a=0}[C^{i64,g}_{a}=10//(a-2);];")
    with pytest.raises(leir.LeirRuntimeError) as ei:
        leir.run(p, {}, backend=interp)
    assert "division by zero" in ei.value.message
    gather = leir.parse("L^{3}_{c=0}[C^{f64,g}_{c}=A^{f64,g}_{I^{i64,g}_{c}};];")
    gather.set_signature({"A": ("f64", 4), "I": ("i64", 3)}, {"C": ("f64", 3)})
    with pytest.raises(leir.LeirRuntimeError) as ei:
        leir.run(gather, {"A": np.arange(4.0), "I": [0, 3, 4]}, backend=interp)
    assert "out of range" in ei.value.message
    out = leir.run(gather, {"A": np.arange(4.0), "I": [0, 3, 2]}, backend=interp)["C"]
    np.testing.assert_array_equal(out, [0, 3, 2])


def test_seeded_inputs_are_what_verify_uses(relu: leir.Program) -> None:
    a = leir.seeded_inputs(relu, seed=7)["A"]
    assert a.shape == (2, 8) and a.dtype == np.float64
    np.testing.assert_array_equal(a, leir.seeded_inputs(relu, seed=7)["A"])
    assert not np.array_equal(a, leir.seeded_inputs(relu, seed=8)["A"])


def test_verify_verdicts(rowsum: leir.Program, backend) -> None:
    v = leir.verify(rowsum, leir.apply(rowsum, "loop_split nest=0 loop=a factor=2"), backend=backend)
    assert v.name == "EQUAL" and v.passed and v == "EQUAL"
    assert v.report["verdict"] == "EQUAL" and v.input_sets == 3
    v = leir.verify(rowsum, leir.apply(rowsum, "reduction_factorization nest=0 loop=a at=2"), backend=backend)
    assert v.name in ("EQUAL", "CLOSE") and v.passed
    wrong = leir.parse(ROWSUM.replace("+A", "-A"))
    v = leir.verify(rowsum, wrong, backend=backend, seed=3)
    assert v.name == "MISMATCH" and not v.passed
    assert v.output == "C" and v.report["seed"] == 3
    assert "MISMATCH" in str(v)
    bad = leir.parse("B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a+1};];")
    v = leir.verify(rowsum, bad, backend=backend)
    assert v.name == "INVALID" and v.rule == "check.bounds"
    with pytest.raises(AttributeError):
        v.no_such_field


MATMUL_F32 = (
    "L^{64}_{a=0}L^{64}_{c=0}L^{256}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];"
)


def test_verify_infers_the_class_or_takes_cls(interp: leir.Backend) -> None:
    mm = leir.parse(MATMUL_F32)
    split = leir.apply(mm, "reduction_factorization nest=0 loop=d at=5")
    v = leir.verify(mm, split, backend=interp)
    assert v.passed and v.report["class"] == "reassociating" and v.judged_by == "truth"
    assert v.class_inferred == "grounds to reduction_factorization nest=0 loop=d at=5"
    reordered = leir.apply(mm, "loop_reorder nest=0 loops=a,c")
    v = leir.verify(mm, reordered, backend=interp)
    assert v.name == "EQUAL" and v.report["class"] == "exact" and v.judged_by == "bitwise"
    wrong = leir.parse(MATMUL_F32.replace("C^{f32,g}_{d,c};", "C^{f32,g}_{d,c}*1.001;"))
    v = leir.verify(mm, wrong, backend=interp)
    assert v.name == "MISMATCH" and v.class_inferred.startswith("no single step")
    for cls, rule in (("any", "tolerance"), ("exact", "bitwise"), ("reassociating", "truth")):
        v = leir.verify(mm, reordered, backend=interp, cls=cls)
        assert v.report["class"] == cls and v.judged_by == rule and "class_inferred" not in v.report
    with pytest.raises(leir.ArgumentError):
        leir.verify(mm, reordered, backend=interp, cls="bitwise")


def test_timing(relu: leir.Program, backend) -> None:
    fast = dict(warmup=1, min_runs=3, max_runs=5, min_seconds=0.0, max_seconds=5.0)
    t = leir.time(relu, backend=backend, **fast)
    assert t.runs >= 3 and 0 < t.min_s <= t.median_s <= t.max_s
    assert t.flops == 16 and t.speedup == 1.0
    ts = leir.bench([relu, leir.parse(SOFTMAX)], backend=backend, **fast)
    assert len(ts) == 2 and ts[0].speedup == 1.0 and ts[1].speedup > 0
    with pytest.raises(TypeError):
        leir.time(relu, backend=backend, frobnicate=1)


def test_lower_and_backends(relu: leir.Program) -> None:
    assert "interp" in leir.backends() and "cpu" in leir.backends()
    src = leir.lower(relu, "c")
    assert "void" in src or "int" in src
    with pytest.raises(leir.ArgumentError):
        leir.lower(relu, "tir")
    with pytest.raises(leir.NotFoundError):
        leir.Backend("nope")
    with pytest.raises(TypeError):
        leir.Backend("interp", frobnicate=1)


def test_closing_a_backend_closes_its_kernels(relu: leir.Program) -> None:
    b = leir.Backend("interp")
    k = b.kernel(relu)
    b.close()
    with pytest.raises(ValueError):
        k.run(A=np.zeros((2, 8)))


def test_inputs_as_a_sequence_in_signature_order(interp) -> None:
    p = leir.parse("L^{3}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a}-C^{f64,g}_{a};];")
    out = leir.run(p, [np.array([5.0, 6, 7]), np.array([1.0, 1, 1])], backend=interp)
    np.testing.assert_array_equal(out["D"], [4, 5, 6])
    with pytest.raises(leir.ArgumentError):
        leir.run(p, [np.zeros(3)], backend=interp)


def test_seeded_inputs_refuse_huge_signatures() -> None:
    p = leir.parse("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];")
    p.set_signature({"A": ("f64", (100000, 100000))}, {"C": ("f64", 4)})
    with pytest.raises(leir.LimitError):
        leir.seeded_inputs(p)


def _cpu_has_fma() -> bool:
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read()
    except OSError:
        return True


@pytest.mark.skipif(not have_cc(), reason="no C compiler for the cpu backend")
def test_fp_contract_fuses_a_product_into_its_sum(interp, tmp_path) -> None:
    # a*e + d with a = e = 1 + 2^-12, d = -(1 + 2^-11): 0 when the product
    # is rounded first (the interpreter, the default cpu backend), 2^-24
    # fused (fp_contract=True)
    p = leir.parse("V^{16}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}*E^{f32,g}_{a}+D^{f32,g}_{a};];")
    a = np.full(16, 1 + 2.0**-12, dtype=np.float32)
    d = np.full(16, -(1 + 2.0**-11), dtype=np.float32)
    args = {"A": a, "E": a, "D": d}
    np.testing.assert_array_equal(leir.run(p, args, backend=interp)["C"], 0)
    with leir.Backend("cpu", threads=1, cache_dir=str(tmp_path)) as plain:
        np.testing.assert_array_equal(leir.run(p, args, backend=plain)["C"], 0)
    with leir.Backend("cpu", threads=1, cache_dir=str(tmp_path), fp_contract=True) as fused:
        c = leir.run(p, args, backend=fused)["C"]
    if _cpu_has_fma():
        np.testing.assert_array_equal(c, np.float32(2.0**-24))
