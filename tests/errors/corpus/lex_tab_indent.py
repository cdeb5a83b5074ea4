# expect: MT_ERR_SYNTAX 3:1 tabs are not allowed in indentation; use spaces
def f(a: Tensor((2, 3), "float32")):
	return a
