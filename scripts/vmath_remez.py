#!/usr/bin/env python3
"""Minimax (Remez exchange) fits behind src/codegen/llvm_math.c.

Prints, for each polynomial of that file, its maximum weighted error and its
coefficients rounded to float32 as C hex literals, highest degree first (the
order of the tables there). Needs mpmath (apt: python3-mpmath); about ten
seconds.

The method: for basis functions phi_i and weight w, solve
sum c_i phi_i(x_j) + (-1)^j E / w(x_j) = f(x_j) on n+1 reference points,
find the extrema of the weighted error on a dense grid, keep n+1 of
alternating sign as the new reference, and repeat until the levelled error
E and the true maximum agree to 1e-6 (Remez 1934; Cheney, "Introduction to
Approximation Theory", ch. 3).

    python3 scripts/vmath_remez.py
"""
import struct

import mpmath as mp

mp.mp.dps = 40


def remez(f, phis, w, a, b, iters=30, grid=4000):
    n = len(phis)
    ref = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * j / n) for j in range(n + 1)]
    xs = [a + (b - a) * mp.mpf(k) / grid for k in range(grid + 1)]
    best = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for j, x in enumerate(ref):
            for i, p in enumerate(phis):
                A[j, i] = p(x)
            A[j, n] = (-1) ** j / w(x)
            rhs[j] = f(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        E = sol[n]
        ev = [w(x) * (f(x) - sum(ci * p(x) for ci, p in zip(c, phis))) for x in xs]
        ext = []
        for k, v in enumerate(ev):
            left = ev[k - 1] if k > 0 else None
            right = ev[k + 1] if k < len(ev) - 1 else None
            if (left is None or abs(v) >= abs(left)) and (right is None or abs(v) >= abs(right)):
                ext.append((xs[k], v))
        alt = []
        for x, v in ext:
            if alt and mp.sign(alt[-1][1]) == mp.sign(v):
                if abs(v) > abs(alt[-1][1]):
                    alt[-1] = (x, v)
            else:
                alt.append((x, v))
        while len(alt) > n + 1:
            alt.pop(0 if abs(alt[0][1]) < abs(alt[-1][1]) else -1)
        mx = max(abs(v) for v in ev)
        best = (c, mx)
        if len(alt) < n + 1:
            break
        ref = [x for x, _ in alt]
        if abs(mx - abs(E)) / mx < 1e-6:
            break
    return best


def f32hex(v):
    v = struct.unpack("f", struct.pack("f", float(v)))[0]
    sign, h = ("-", float.hex(-v)) if v < 0 else ("", float.hex(v))
    mant, exp = h[2:].split("p")
    mant = mant.rstrip("0").rstrip(".")
    return f"{sign}0x{mant}p{exp}f"


def powers(ks):
    return [(lambda k: (lambda x: x ** k))(k) for k in ks]


def show(name, fit):
    c, err = fit
    print(f"{name}: max error {mp.nstr(err, 3)}")
    print("    {" + ", ".join(f32hex(x) for x in reversed(c)) + "}")


def inv_or_big(g):
    return lambda x: 1 / g(x) if x != 0 else mp.mpf(10) ** 30


h = mp.log(2) / 2 * mp.mpf("1.0005")
show("exp: exp(r) - 1 - r = r^2 P(r), |r| <= ln2/2, relative",
     remez(lambda r: mp.exp(r) - 1 - r, powers(range(2, 7)), lambda r: 1 / mp.exp(r), -h, h))

lo, hi = (mp.sqrt(mp.mpf(1) / 2) - 1) * mp.mpf("1.0001"), (mp.sqrt(2) - 1) * mp.mpf("1.0001")
show("log: log1p(f) - f + f^2/2 = f^3 P(f), relative (then -1/2)",
     remez(lambda f: mp.log1p(f) - f + f * f / 2, powers(range(3, 11)), inv_or_big(mp.log1p),
           lo, hi, grid=4001))

show("tanh: tanh(a) - a = a^3 P(a^2), a in [0, 0.625], relative",
     remez(lambda a: mp.tanh(a) - a, powers(range(3, 15, 2)), inv_or_big(mp.tanh),
           mp.mpf("1e-6"), mp.mpf("0.625"), grid=3001))

show("erf small: erf(a) - a = a Q(a^2), a in [0, 0.921875], relative",
     remez(lambda a: mp.erf(a) - a, powers(range(1, 15, 2)), lambda a: 1 / mp.erf(a),
           mp.mpf("1e-6"), mp.mpf("0.921875"), grid=3001))

show("erf large: log(erfc(a)) = R(a - 1), a in [0.921875, 4], weight erfc(a)",
     remez(lambda t: mp.log(mp.erfc(t + 1)), powers(range(0, 9)), lambda t: mp.erfc(t + 1),
           mp.mpf("0.921875") - 1, mp.mpf(3), grid=3000))
