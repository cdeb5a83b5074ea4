# expect: MT_ERR_LIMIT 96:15 calls nest more than 32 deep (recursion is not supported)
def g0(x: Tensor((2,), "float32")):
    return g1(x)

def g1(x: Tensor((2,), "float32")):
    return g2(x)

def g2(x: Tensor((2,), "float32")):
    return g3(x)

def g3(x: Tensor((2,), "float32")):
    return g4(x)

def g4(x: Tensor((2,), "float32")):
    return g5(x)

def g5(x: Tensor((2,), "float32")):
    return g6(x)

def g6(x: Tensor((2,), "float32")):
    return g7(x)

def g7(x: Tensor((2,), "float32")):
    return g8(x)

def g8(x: Tensor((2,), "float32")):
    return g9(x)

def g9(x: Tensor((2,), "float32")):
    return g10(x)

def g10(x: Tensor((2,), "float32")):
    return g11(x)

def g11(x: Tensor((2,), "float32")):
    return g12(x)

def g12(x: Tensor((2,), "float32")):
    return g13(x)

def g13(x: Tensor((2,), "float32")):
    return g14(x)

def g14(x: Tensor((2,), "float32")):
    return g15(x)

def g15(x: Tensor((2,), "float32")):
    return g16(x)

def g16(x: Tensor((2,), "float32")):
    return g17(x)

def g17(x: Tensor((2,), "float32")):
    return g18(x)

def g18(x: Tensor((2,), "float32")):
    return g19(x)

def g19(x: Tensor((2,), "float32")):
    return g20(x)

def g20(x: Tensor((2,), "float32")):
    return g21(x)

def g21(x: Tensor((2,), "float32")):
    return g22(x)

def g22(x: Tensor((2,), "float32")):
    return g23(x)

def g23(x: Tensor((2,), "float32")):
    return g24(x)

def g24(x: Tensor((2,), "float32")):
    return g25(x)

def g25(x: Tensor((2,), "float32")):
    return g26(x)

def g26(x: Tensor((2,), "float32")):
    return g27(x)

def g27(x: Tensor((2,), "float32")):
    return g28(x)

def g28(x: Tensor((2,), "float32")):
    return g29(x)

def g29(x: Tensor((2,), "float32")):
    return g30(x)

def g30(x: Tensor((2,), "float32")):
    return g31(x)

def g31(x: Tensor((2,), "float32")):
    return g32(x)

def g32(x: Tensor((2,), "float32")):
    return g33(x)

def g33(x: Tensor((2,), "float32")):
    return g34(x)

def g34(x: Tensor((2,), "float32")):
    return g35(x)

def g35(x: Tensor((2,), "float32")):
    return g36(x)

def g36(x: Tensor((2,), "float32")):
    return g37(x)

def g37(x: Tensor((2,), "float32")):
    return g38(x)

def g38(x: Tensor((2,), "float32")):
    return g39(x)

def g39(x: Tensor((2,), "float32")):
    return g40(x)

def g40(x: Tensor((2,), "float32")):
    return x

def f(a: Tensor((2,), "float32")):
    return g0(a)
