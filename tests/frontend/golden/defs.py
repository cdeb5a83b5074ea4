"""Module docstring."""


@T.prim_func
@deco(1, k=2)
def outer(a, b: int = 1, c=2.5) -> Tensor:
    """Outer docstring."""
    def inner(x):
        return x * 2
    return inner(a), b
