# expect: MT_ERR_SYNTAX 3:1 expected an indented block after 'def'
def f(a: Tensor((2, 3), "float32")):
return a
