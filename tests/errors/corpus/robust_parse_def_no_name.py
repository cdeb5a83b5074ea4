# expect: MT_ERR_SYNTAX 2:5 expected a function name after 'def', found '('
def (a: Tensor((2, 3), "float32")):
    return a
