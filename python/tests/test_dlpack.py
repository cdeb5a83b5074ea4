"""DLPack: producers in (NumPy's __dlpack__, a minitriton.Array's 0.x and
1.0 capsules), minitriton.Array out, results through np.from_dlpack."""
import gc
import sys

import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, jit


class Producer:
    """Any object with __dlpack__ / __dlpack_device__ (here over a NumPy
    array, as a torch or CuPy tensor would be); counts its exports."""

    def __init__(self, array):
        self.array = array
        self.exports = 0

    def __dlpack__(self, stream=None):  # a DLPack 0.x producer: no max_version
        assert stream is None
        self.exports += 1
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


@jit
def axpb(x: Tensor(("n", 3), "float32"), b: Tensor((3,), "float32")):
    return x * 2.0 + b


needs_numpy_dlpack = pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"),
                                        reason="NumPy without __dlpack__ (< 1.22)")


@needs_numpy_dlpack
def test_dlpack_producer_as_argument():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.ones(3, np.float32)
    px, pb = Producer(x), Producer(b)
    np.testing.assert_array_equal(axpb(px, pb), x * 2 + b)
    assert px.exports == 1 and pb.exports == 1
    # the producer's memory is shared, not copied: a change shows
    x[0, 0] = 100
    assert axpb(px, pb)[0, 0] == 201


@needs_numpy_dlpack
def test_dlpack_import_keeps_the_producer_alive():
    x = np.arange(6, dtype=np.float64)
    refs = sys.getrefcount(x)
    a = mt.from_dlpack(Producer(x))
    assert sys.getrefcount(x) > refs  # the managed tensor holds the array
    assert a.device == "cpu" and a.shape == (6,) and a.dtype == np.float64
    del x
    gc.collect()
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0))
    y = np.arange(3.0)
    before = sys.getrefcount(y)
    b = mt.from_dlpack(Producer(y))
    del b
    gc.collect()
    assert sys.getrefcount(y) == before  # the deleter ran: the reference went back
    # the last reference held by a NumPy view of the Array
    c = mt.from_dlpack(Producer(y))
    view = c.numpy()
    assert np.shares_memory(view, y)
    del c
    gc.collect()
    assert sys.getrefcount(y) > before
    del view
    gc.collect()
    assert sys.getrefcount(y) == before


@needs_numpy_dlpack
def test_refused_import_leaves_the_capsule_to_its_producer():
    z = np.zeros(4, np.complex64)
    before = sys.getrefcount(z)

    def attempt():  # the traceback (which holds the capsule) is dropped on return
        try:
            mt.from_dlpack(Producer(z))
        except mt.RunError as err:
            return err.status
        return None

    assert attempt() == "MT_ERR_UNSUPPORTED"
    gc.collect()
    assert sys.getrefcount(z) == before  # the capsule's destructor called the deleter


def test_results_round_trip_through_np_from_dlpack():
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    r = axpb(x, np.zeros(3, np.float32))
    back = np.from_dlpack(r)
    np.testing.assert_array_equal(back, x * 2)
    assert np.shares_memory(back, r)


def test_array_exports_dlpack_0x_and_1_0():
    x = np.arange(5, dtype=np.int64)
    a = mt.from_dlpack(x) if hasattr(x, "__dlpack__") else None
    if a is None:
        pytest.skip("NumPy without __dlpack__")
    # DLPack 0.x capsule, consumed by NumPy
    v = np.from_dlpack(a)
    np.testing.assert_array_equal(v, x)
    assert np.shares_memory(v, x)
    # DLPack 1.0 capsule (max_version), consumed by minitriton itself
    cap = a.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    del cap  # an unconsumed capsule frees its tensor
    b = mt.from_dlpack(a)  # asks for max_version=(1, 0): the versioned import
    assert b.shape == (5,) and b.device == "cpu"
    del a
    gc.collect()
    np.testing.assert_array_equal(np.asarray(b), x)
    with pytest.raises(BufferError):
        b.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        b.__dlpack__(dl_device=(2, 0))


def test_array_as_kernel_argument():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = mt.from_dlpack(x)
    np.testing.assert_array_equal(axpb(a, mt.from_dlpack(np.ones(3, np.float32))), x * 2 + 1)


def test_torch_if_installed():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    r = axpb(x, torch.ones(3))
    np.testing.assert_array_equal(r, x.numpy() * 2 + 1)
    t = torch.from_dlpack(mt.from_dlpack(r))
    assert t.shape == (2, 3)
