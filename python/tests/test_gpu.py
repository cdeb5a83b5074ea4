"""target="gpu": under the CPU emulation everywhere; on the real GPU only
where one is present (a machine without one gets a clear RunError)."""
import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, jit


@jit(target="gpu", emulate=True)
def rows(x: Tensor(("n", 32), "float32"), b: Tensor((32,), "float32")):
    y = softmax(x + b)
    return y, sum(x, axis=1)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_emulated_gpu_results_are_device_arrays():
    x = np.random.default_rng(3).standard_normal((7, 32)).astype(np.float32)
    b = np.linspace(-1, 1, 32, dtype=np.float32)
    y, s = rows(x, b)
    assert isinstance(y, mt.Array) and isinstance(s, mt.Array)
    assert y.shape == (7, 32) and y.dtype == np.float32 and y.ndim == 2
    assert y.device == "cuda:0 (emulated)"
    assert y.__dlpack_device__() == (2, 0)
    np.testing.assert_allclose(y.numpy(), _softmax(x + b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.numpy(), x.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert "emulated" in repr(y)


def test_device_arrays_go_back_in_without_a_copy():
    @jit(target="gpu", emulate=True)
    def scale(x: Tensor(("n", 32), "float32"), k: float):
        return x * k

    x = np.ones((4, 32), np.float32)
    y = scale(x, 3.0)                 # NumPy in: copied to the (emulated) GPU
    z = scale(y, 2.0)                 # an Array on the GPU in: no copy
    np.testing.assert_array_equal(z.numpy(), np.full((4, 32), 6, np.float32))
    out = scale(x, 1.0)
    scale(y, 0.5, out=out)            # written in place on the GPU
    np.testing.assert_array_equal(out.numpy(), np.full((4, 32), 1.5, np.float32))


def test_emulated_memory_is_not_shared_through_dlpack():
    y, _ = rows(np.zeros((2, 32), np.float32), np.zeros(32, np.float32))
    with pytest.raises(BufferError, match="emulated"):
        y.__dlpack__()
    with pytest.raises(TypeError, match="numpy"):
        np.asarray(y)


def test_gpu_without_emulation():
    @jit(target="gpu")
    def twice(x: Tensor(("n",), "float32")):
        return x * 2.0

    assert "__global__" in twice.dump("cuda")  # compiling needs no GPU
    x = np.arange(5, dtype=np.float32)
    try:
        r = twice(x)
    except mt.RunError as e:  # no GPU here: the message says so and what to do
        assert e.status == "MT_ERR_UNAVAILABLE"
        assert "no GPU is available" in str(e) and "emulate=True" in str(e)
        return
    # a machine with a GPU: the result is on it, exportable through DLPack
    assert isinstance(r, mt.Array) and r.device == "cuda:0"
    np.testing.assert_array_equal(r.numpy(), x * 2)
    assert r.__dlpack_device__() == (2, 0)
    r.__dlpack__()


def test_device_arrays_cross_kernels():
    # every kernel shares the process's context, so its emulated GPU too
    @jit(target="gpu", emulate=True)
    def first(x: Tensor(("n",), "float32")):
        return x + 1.0

    @jit(target="gpu", emulate=True)
    def second(x: Tensor(("n",), "float32"), y: Tensor(("n",), "float32")):
        return x * y

    a = first(np.arange(4, dtype=np.float32))
    b = second(a, a)
    del a
    np.testing.assert_array_equal(b.numpy(), (np.arange(4, dtype=np.float32) + 1) ** 2)


def test_gpu_array_into_a_cpu_kernel_is_refused():
    @jit
    def cpu(x: Tensor(("n",), "float32")):
        return x + 1.0

    @jit(target="gpu", emulate=True)
    def gpu(x: Tensor(("n",), "float32")):
        return x + 1.0

    a = gpu(np.zeros(3, np.float32))
    with pytest.raises(mt.RunError) as e:  # no copy back to the host behind the caller's back
        cpu(a)
    assert e.value.status == "MT_ERR_INVALID_ARG"
    assert "cuda:0" in e.value.message and "cpu" in e.value.message
    np.testing.assert_array_equal(cpu(a.numpy()), [2.0, 2.0, 2.0])
