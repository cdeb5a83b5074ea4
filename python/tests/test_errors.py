"""Diagnostics as exceptions: CompileError and RunError carry the GCC-style
text, the status and the place in the Python file."""
import inspect

import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, jit


@jit
def unknown_name(a: Tensor(("n",), "float32")):
    out = a + c  # noqa: F821 - the error under test
    return out


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(lines) if text in l)


def test_compile_error_at_top_level():
    with pytest.raises(mt.CompileError) as e:
        unknown_name.compile()
    err = e.value
    assert isinstance(err, RuntimeError) and isinstance(err, mt.MinitritonError)
    assert err.status == "MT_ERR_NAME"
    assert err.message == "unknown name 'c'"
    assert err.line == _line_of(unknown_name.fn, "a + c")
    assert err.col == 15
    assert err.filename == __file__
    first, src, caret = str(err).splitlines()
    assert first == "%s:%d:15: error: unknown name 'c'" % (__file__, err.line)
    assert src == "    out = a + c  # noqa: F821 - the error under test"
    assert caret == " " * 14 + "^"


def test_compile_error_in_a_nested_function_points_into_the_file():
    def make():
        @jit
        def shapes(a: Tensor((2, 3), "float32"), b: Tensor((4, 3), "float32")):
            return a + b
        return shapes

    k = make()
    with pytest.raises(mt.CompileError) as e:
        k(np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32))
    err = e.value
    assert err.status == "MT_ERR_SHAPE"
    line = _line_of(k.fn, "return a + b")
    assert err.line == line
    src_line = open(__file__).read().splitlines()[line - 1]
    assert err.col == src_line.index("+") + 1  # the column in the file, indentation included
    text = str(err).splitlines()
    assert text[0].startswith("%s:%d:%d: error: " % (__file__, line, err.col))
    assert text[1] == src_line
    assert text[2].index("^") == err.col - 1


def test_compile_errors_from_source_text():
    cases = [
        ("def f(x: Tensor((2,), \"float32\")):\n    return x +\n", "MT_ERR_SYNTAX", 2),
        ("def f(x: Tensor((2,), \"float32\")):\n    x[0] = 1.0\n    return x\n", None, 2),
        ("def f(x: Tensor((2,), \"float32\"), y: Tensor((2,), \"int32\")):\n    return x + y\n",
         "MT_ERR_TYPE", 2),
    ]
    for src, status, line in cases:
        with pytest.raises(mt.CompileError) as e:
            mt.compile(src, filename="k.py")
        if status:
            assert e.value.status == status, str(e.value)
        assert e.value.line == line and e.value.filename == "k.py"
        assert str(e.value).startswith("k.py:%d:" % line)


def test_an_error_is_raised_again_on_each_try():
    for _ in range(2):
        with pytest.raises(mt.CompileError):
            unknown_name(np.zeros(2, np.float32))


def test_run_errors_wrong_shape_dtype_rank():
    @jit
    def add(a: Tensor((2, 3), "float32"), b: Tensor((2, 3), "float32")):
        return a + b

    ok = np.zeros((2, 3), np.float32)
    decl = _line_of(add.fn, "def add")
    with pytest.raises(mt.RunError) as e:
        add(ok, np.zeros((2, 3), np.int32))
    err = e.value
    assert isinstance(err, RuntimeError)
    assert err.status == "MT_ERR_INVALID_ARG"
    assert "argument 'b' has dtype int32, expected float32" in err.message
    assert err.line == decl
    with pytest.raises(mt.RunError, match="'a'") as e:
        add(np.zeros((3, 2), np.float32), ok)
    assert e.value.status == "MT_ERR_INVALID_ARG"
    with pytest.raises(mt.RunError, match="'a'"):
        add(np.zeros(6, np.float32), ok)
    with pytest.raises(mt.RunError, match="complex"):
        add(np.zeros((2, 3), np.complex64), ok)
    with pytest.raises(mt.RunError, match="big|dtype"):
        add(np.zeros((2, 3), ">f4"), ok)
    with pytest.raises(TypeError, match="'b' is a dict"):
        add(ok, {})


def test_run_time_assert():
    @jit
    def checked(x: Tensor(("n",), "float32"), k: int):
        assert k >= 0, "k must be non-negative"
        return x * 2.0

    np.testing.assert_array_equal(checked(np.ones(2, np.float32), 1), np.full(2, 2, np.float32))
    with pytest.raises(mt.RunError, match="k must be non-negative") as e:
        checked(np.ones(2, np.float32), -1)
    assert e.value.status == "MT_ERR_RUNTIME"
    assert e.value.line == _line_of(checked.fn, "assert k")


def test_function_without_source():
    ns = {}
    exec("from minitriton import jit, Tensor\n@jit\ndef f(x: Tensor((2,), 'float32')):\n    return x\n", ns)
    with pytest.raises(mt.CompileError, match="cannot get the source"):
        ns["f"].compile()


def test_bad_options():
    with pytest.raises(ValueError):
        jit(target="tpu")(lambda x: x)
    with pytest.raises(ValueError):
        jit(emulate=True)(lambda x: x)
    with pytest.raises(TypeError):
        jit(3)


class Holder:
    @staticmethod
    @jit(
        target="cpu",   # a decorator over several lines, and another above it
        opt_level=2,
    )
    # a comment between the decorators and the def
    def method_kernel(x: Tensor(("n",), "float32")):
        """A docstring whose second line
is less indented than the body."""
# a comment at column 0 inside the body
        return x + 1.0


def test_source_with_awkward_layout():
    k = Holder.__dict__["method_kernel"]
    k = k.__func__ if hasattr(k, "__func__") else k
    np.testing.assert_array_equal(k(np.zeros(2, np.float32)), [1.0, 1.0])
    assert k.source.lstrip("\n").startswith("def method_kernel(")
