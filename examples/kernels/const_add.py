def add():
    out = 1 + 1
    return out
