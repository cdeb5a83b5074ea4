def f(n: int64):
    if n > 0: pass
    elif n < 0:
        n = -n
    elif n == 0:
        pass
    else:
        return n
    for i in range(n):
        if i % 2 == 0:
            continue
        break
    else:
        pass
    while n:
        n -= 1
    else:
        pass
    with device("gpu"), T.block("b") as blk:
        assert n >= 0, "negative"
        assert n
    f(n)
    ...
