# expect: MT_ERR_TYPE 2:7 parameter 'a' needs a type annotation
def f(a):
    return a
