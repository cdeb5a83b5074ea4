"""@jit on NumPy arrays: the seed's kernels, fusion, symbolic shapes,
scalars, several results, reuse, threads."""
import gc
import threading

import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, float32, int64, jit


# The seed's add kernel (examples/kernels/fused_add.py), through @jit.
@jit
def add(a: Tensor(shape=(2, 3), dtype="float32"), b: Tensor(shape=(2, 3), dtype="float32")):
    out = a + b
    out = out + a
    return out


def test_seed_add_kernel_on_numpy_arrays():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 10, np.float32)
    out = add(a, b)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, a + b + a)


def test_issue_example():
    @jit
    def add2(a: Tensor(shape=(2, 3), dtype="float32"), b: Tensor(shape=(2, 3), dtype="float32")):
        out = a + b
        return out

    x = np.ones((2, 3), np.float32)
    y = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(add2(x, y), np.full((2, 3), 2, np.float32))
    assert "prim_func" in add2.dump("tir")


def test_decorator_with_options():
    @jit(target="cpu", opt_level=1)
    def twice(x: Tensor(("n",), "float64")):
        return x * 2.0

    np.testing.assert_array_equal(twice(np.arange(5.0)), np.arange(5.0) * 2)
    assert repr(twice).startswith("<minitriton kernel twice target=cpu")
    assert twice.__name__ == "twice" and twice.__wrapped__ is not None


def test_fused_chain_is_one_kernel():
    @jit
    def chain(x: Tensor(("n", 8), "float32"), y: Tensor((8,), "float32")):
        t = x * 2.0 + y
        t = exp(t - 1.0)
        t = maximum(t, 0.5)
        return t * y

    x = np.random.default_rng(0).standard_normal((33, 8)).astype(np.float32)
    y = np.linspace(0.1, 1.0, 8, dtype=np.float32)
    expect = np.maximum(np.exp(x * 2 + y - 1), 0.5) * y
    np.testing.assert_allclose(chain(x, y), expect, rtol=1e-5)
    # fused: the graph calls one loop function
    assert chain.dump("graph-opt").count("R.call_tir(") == 1


def test_reductions_and_nn():
    @jit
    def head(x: Tensor(("n", 16), "float32"), w: Tensor((4, 16), "float32"), b: Tensor((4,), "float32")):
        h = relu(linear(x, w, b))
        return softmax(h), sum(h, axis=1)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 16)).astype(np.float32)
    w = rng.standard_normal((4, 16)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    h = np.maximum(x @ w.T + b, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    p, s = head(x, w, b)
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, h.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_symbolic_shapes():
    @jit
    def scale(x: Tensor(("n", "m"), "float32"), y: Tensor(("m",), "float32")):
        return x * y

    for n, m in [(1, 1), (3, 7), (100, 33), (0, 4)]:
        x = np.ones((n, m), np.float32)
        y = np.arange(m, dtype=np.float32)
        out = scale(x, y)
        assert out.shape == (n, m)
        np.testing.assert_array_equal(out, x * y)
    assert scale.params[0] == ("x", Tensor(("n", "m"), "float32"))
    with pytest.raises(mt.RunError) as e:
        scale(np.ones((2, 3), np.float32), np.ones(4, np.float32))
    assert "'m'" in str(e.value)


def test_scalar_parameters_take_python_scalars():
    @jit
    def affine(x: Tensor(("n",), "float32"), alpha: float32, k: int64, flag: bool):
        y = x * alpha + k.astype("float32")
        if flag:
            y = -y
        return y

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(affine(x, 2.0, 3, False), x * 2 + 3)
    np.testing.assert_array_equal(affine(x, 2, 3, True), -(x * 2 + 3))
    np.testing.assert_array_equal(affine(x, np.float32(0.5), np.int64(1), np.bool_(False)), x * 0.5 + 1)
    with pytest.raises(mt.RunError, match="float"):
        affine(x, 1.0, 2.5, False)
    with pytest.raises(mt.RunError, match="out of range"):
        affine(x, 1.0, 2 ** 70, False)
    with pytest.raises(mt.RunError, match="bool"):
        affine(x, 1.0, 1, 1)
    with pytest.raises(mt.RunError, match="scalar"):
        affine(1.0, 1.0, 1, False)


def test_multiple_results():
    @jit
    def stats(x: Tensor(("n", 4), "float64")):
        return sum(x, axis=0), max(x, axis=1), x.T

    x = np.random.default_rng(2).standard_normal((6, 4))
    s, m, t = stats(x)
    np.testing.assert_allclose(s, x.sum(axis=0))
    np.testing.assert_array_equal(m, x.max(axis=1))
    np.testing.assert_array_equal(t, x.T)
    assert t.flags.c_contiguous
    assert len(stats.results) == 3


def test_reuse_across_calls_compiles_once():
    @jit
    def inc(x: Tensor(("n",), "int32")):
        return x + 1

    inc.compile()
    handle = inc._k
    before = mt.cache_stats()
    x = np.zeros(10, np.int32)
    for _ in range(50):
        x = inc(x)
    np.testing.assert_array_equal(x, np.full(10, 50, np.int32))
    assert inc._k == handle
    assert mt.cache_stats()["misses"] == before["misses"]


def test_same_source_twice_hits_the_compile_cache():
    src = 'def neg(x: Tensor(("n",), "float32")):\n    return -x\n'
    k1 = mt.compile(src)
    hits = mt.cache_stats()["hits"]
    k2 = mt.compile(src)
    assert mt.cache_stats()["hits"] == hits + 1
    np.testing.assert_array_equal(k2(np.ones(3, np.float32)), -np.ones(3, np.float32))
    assert k1.name == "neg"


def test_compile_from_source_with_helpers():
    src = '''
def helper(x: Tensor(("n",), "float32")):
    return x * 3.0

def main(x: Tensor(("n",), "float32")):
    return helper(x) + 1.0
'''
    k = mt.compile(src, entry="main", filename="helpers.py")
    np.testing.assert_array_equal(k(np.ones(2, np.float32)), np.full(2, 4, np.float32))


def test_keyword_arguments():
    @jit
    def sub(a: Tensor(("n",), "float32"), b: Tensor(("n",), "float32")):
        return a - b

    a, b = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(sub(b=b, a=a), a - b)
    with pytest.raises(TypeError, match="missing"):
        sub(a)
    with pytest.raises(TypeError, match="unexpected"):
        sub(a, c=b)
    with pytest.raises(TypeError, match="takes 2"):
        sub(a, b, a)


def test_results_written_in_place_with_out():
    out = np.empty((2, 3), np.float32)
    a = np.ones((2, 3), np.float32)
    r = add(a, a, out=out)
    assert r is out
    np.testing.assert_array_equal(out, np.full((2, 3), 3, np.float32))
    with pytest.raises(mt.RunError):
        add(a, a, out=np.empty((3, 2), np.float32))
    with pytest.raises(mt.RunError, match="C-contiguous"):
        add(a, a, out=np.empty((2, 6), np.float32)[:, ::2])
    ro = np.empty((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(mt.RunError, match="read-only"):
        add(a, a, out=ro)


def test_strided_and_list_arguments_are_copied():
    big = np.arange(12, dtype=np.float32).reshape(2, 6)
    view = big[:, ::2]
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(add(view, view), view * 3)
    np.testing.assert_array_equal(add([[1, 2, 3], [4, 5, 6]], np.ones((2, 3), np.float32)),
                                  np.array([[3, 5, 7], [9, 11, 13]], np.float32))
    ro = np.ones((2, 3), np.float32)
    ro.flags.writeable = False
    np.testing.assert_array_equal(add(ro, ro), ro * 3)


def test_results_are_zero_copy_and_outlive_the_kernel():
    @jit
    def sq(x: Tensor(("n",), "float32")):
        return x * x

    r = sq(np.arange(1000, dtype=np.float32))
    assert r.base is not None and type(r.base).__name__ == "_HostBuffer"
    assert r.flags.writeable and r.flags.c_contiguous
    del sq
    gc.collect()
    r[0] = 7  # the memory is the result's, not the kernel's
    assert r[0] == 7 and r[999] == 999.0 ** 2
    view = r[10:20]
    del r
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(10, 20, dtype=np.float32) ** 2)


def test_empty_tensors():
    @jit
    def plus(x: Tensor(("n", 3), "float32")):
        return x + 1.0

    out = plus(np.empty((0, 3), np.float32))
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_bfloat16():
    # NumPy has no bfloat16: ml_dtypes' is taken in and given back
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = mt.compile('def f(x: Tensor(("n",), "bfloat16")):\n    return x + x\n')
    x = np.array([1.0, -1.5, 0.1, 3e38], dtype=ml_dtypes.bfloat16)
    y = k(x)
    assert y.dtype == x.dtype
    with np.errstate(over="ignore"):  # 3e38 + 3e38: inf, as the kernel gives
        np.testing.assert_array_equal(y.view(np.uint16), (x + x).view(np.uint16))
    c = mt.compile('def f(x: Tensor(("n",), "float32")):\n    return x.astype("bfloat16")\n')
    f = np.array([1.00390625, 1.01171875, np.nan], np.float32)  # ties: to even down, up
    np.testing.assert_array_equal(c(f).view(np.uint16), [0x3F80, 0x3F82, 0x7FFF])


def test_dtypes_round_trip():
    for dt in ["int8", "uint8", "int32", "int64", "float16", "float32", "float64"]:
        k = mt.compile('def f(x: Tensor(("n",), "%s")):\n    return x + x\n' % dt)
        x = np.arange(5).astype(dt)
        np.testing.assert_array_equal(k(x), x + x)
    k = mt.compile('def f(x: Tensor(("n",), "bool"), y: Tensor(("n",), "bool")):\n    return x == y\n')
    x = np.array([True, False, True])
    np.testing.assert_array_equal(k(x, ~x), np.zeros(3, bool))


def test_threads_run_one_kernel_at_once():
    @jit
    def axpy(a: float32, x: Tensor(("n",), "float32"), y: Tensor(("n",), "float32")):
        return a * x + y

    axpy.compile()
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(40):
                n = int(rng.integers(1, 5000))
                x = rng.standard_normal(n).astype(np.float32)
                y = rng.standard_normal(n).astype(np.float32)
                np.testing.assert_allclose(axpy(float(seed), x, y), seed * x + y, rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_compile_times_and_signature():
    t = add.compile().compile_times()
    assert t["total_ms"] > 0 and set(t) >= {"frontend_ms", "opt_ms", "jit_ms"}
    assert add.params == [("a", Tensor((2, 3), "float32")), ("b", Tensor((2, 3), "float32"))]
    assert add.results == [Tensor((2, 3), "float32")]


def test_tensor_annotation_validates():
    assert Tensor((2, "n"), "int8").shape == (2, "n")
    assert Tensor(shape=4, dtype="float32").shape == (4,)
    with pytest.raises(TypeError):
        Tensor((2, 3), "complex64")
    with pytest.raises(TypeError):
        Tensor((2.5,), "float32")


def test_rank0_results():
    @jit
    def total(x: Tensor(("n",), "float32")):
        return sum(x), x.shape[0]

    s, n = total(np.arange(5, dtype=np.float32))
    assert s.shape == () and s.dtype == np.float32 and float(s) == 10.0
    assert n.shape == () and int(n) == 5
