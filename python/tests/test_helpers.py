"""@jit functions that call other @jit functions: the helpers' sources go
into the kernel, and diagnostics inside them point into their files."""
import inspect

import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, jit

import helper_kernels


@jit
def double(x: Tensor(("n",), "float32")):
    return x * 2.0


@jit
def double_plus_one(x: Tensor(("n",), "float32")):
    return double(x) + 1.0


@jit
def chain(x: Tensor(("n",), "float32")):
    y = double_plus_one(x)           # which calls double
    return scale3(y)                 # from helper_kernels: a global of this module, bound below


scale3 = helper_kernels.scale3


def test_helper_in_the_same_file():
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(double_plus_one(x), x * 2 + 1)
    src = double_plus_one.source
    assert "def double(" in src and "def double_plus_one(" in src
    # both at their own lines of this file
    lines = src.splitlines()
    for fn in (double, double_plus_one):
        start = inspect.getsourcelines(fn.fn)[1] + 1  # the line after @jit
        assert lines[start - 1].startswith("def %s(" % fn.__name__)


def test_helpers_of_helpers_and_other_files():
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(chain(x), (x * 2 + 1) * 3)
    assert "def scale3(" in chain.source and "def double(" in chain.source


def test_nested_helpers_through_the_closure():
    def make(k):
        @jit
        def inner(x: Tensor(("n",), "float32")):
            return x - 1.0

        @jit
        def outer(x: Tensor(("n",), "float32")):
            return inner(x) * 4.0

        return outer

    np.testing.assert_array_equal(make(0)(np.ones(3, np.float32)), np.zeros(3, np.float32))


def test_error_in_a_helper_of_another_file():
    bad = helper_kernels.broken

    @jit
    def user(x: Tensor(("n",), "float32")):
        return broken(x) * 2.0

    broken = bad  # noqa: F841 - a closure cell the kernel's call resolves
    with pytest.raises(mt.CompileError) as e:
        user(np.ones(2, np.float32))
    err = e.value
    assert err.filename == helper_kernels.__file__
    line = inspect.getsourcelines(bad.fn)[1] + 2  # the return line
    assert err.line == line
    assert str(err).startswith("%s:%d:" % (helper_kernels.__file__, line))
    assert "undefined_here" in str(err).splitlines()[1]


def test_error_in_a_nested_helper_points_into_this_file():
    @jit
    def faulty(x: Tensor(("n",), "float32")):
        return x + nowhere  # noqa: F821 - the error under test

    @jit
    def caller(x: Tensor(("n",), "float32")):
        return faulty(x)

    with pytest.raises(mt.CompileError) as e:
        caller.compile()
    err = e.value
    line = inspect.getsourcelines(faulty.fn)[1] + 2
    src_line = open(__file__).read().splitlines()[line - 1]
    assert (err.filename, err.line, err.col) == (__file__, line, src_line.index("nowhere") + 1)
