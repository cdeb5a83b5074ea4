"""dump() of each stage, for the CPU and for target gpu."""
import numpy as np
import pytest

import minitriton as mt
from minitriton import Tensor, jit


@jit
def fused(a: Tensor(("n", 4), "float32"), b: Tensor((4,), "float32")):
    out = a + b
    out = out * a
    return relu(out)


EXPECT = {
    "ast": "FunctionDef fused",
    "graph": "R.function",
    "graph-opt": "R.call_tir",
    "tir": "@T.prim_func",
    "tir-sched": "@T.prim_func",
    "llvm": "define",
    "asm": "ret",
    "plan": "memory plan",
    "dot": "digraph",
    "schedule": "# fused_add_multiply_relu: the default rule",
}


@pytest.mark.parametrize("stage", sorted(EXPECT))
def test_cpu_stages(stage):
    text = fused.dump(stage)
    assert isinstance(text, str) and EXPECT[stage] in text, text[:500]


def test_dump_compiles_lazily_and_keeps_the_text():
    @jit
    def k(x: Tensor((3,), "float32")):
        return x + 1.0

    assert k._k is None
    assert k.dump("llvm") == k.dump("llvm")
    assert k._k is not None


def test_a_missing_stage_says_why():
    with pytest.raises(mt.MinitritonError) as e:
        fused.dump("cuda")
    assert e.value.status == "MT_ERR_UNAVAILABLE"
    assert e.value.message
    with pytest.raises(ValueError, match="stages: ast, graph"):
        fused.dump("bytecode")
    # the library's stages, in mt_stage order
    assert mt.STAGES[:9] == ["ast", "graph", "graph-opt", "tir", "tir-sched", "llvm", "asm", "cuda", "plan"]
    assert set(mt.STAGES) == set(EXPECT) | {"cuda"}


def test_gpu_stages():
    @jit(target="gpu", arch="sm_80")
    def g(x: Tensor(("n", 64), "float32")):
        return softmax(x * 2.0)

    cuda = g.dump("cuda")
    assert "__global__" in cuda
    assert "blockIdx.x" in g.dump("tir-sched")
    assert "R.call_tir" in g.dump("graph-opt")


def test_pass_dumps():
    @jit(dump_after=["fuse_ops", "schedule"])
    def k(x: Tensor(("n",), "float32")):
        return exp(x) + 1.0

    assert "R.function" in k.pass_dump("fuse_ops") or "def" in k.pass_dump("fuse_ops")
    assert k.pass_dump("schedule")
    assert k.pass_dump("lower_blocks") is None
    np.testing.assert_allclose(k(np.zeros(2, np.float32)), [2.0, 2.0])
    with pytest.raises(mt.CompileError):
        jit(dump_after="no_such_pass")(k.fn).compile()


def test_ast_places_are_the_files():
    import inspect
    _, start = inspect.getsourcelines(fused.fn)
    assert "FunctionDef fused @%d:1" % (start + 1) in fused.dump("ast")  # the line after @jit


def test_every_pass_dump_in_order():
    @jit(dump_after="all")
    def k(x: Tensor(("n",), "float32")):
        return exp(x) * 2.0

    dumps = k.pass_dumps()
    names = [n for n, _ in dumps]
    assert names[0] == "parse" and "fuse_ops" in names and "vectorize" in names
    assert names.index("fuse_ops") < names.index("vectorize")
    assert all(text for _, text in dumps)
    assert dict(dumps)["fuse_ops"] == k.pass_dump("fuse_ops")
