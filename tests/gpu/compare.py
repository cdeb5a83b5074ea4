#!/usr/bin/env python3
"""Compares the .npy results of two runs (the CPU's and the GPU's) without
NumPy: python3 tests/gpu/compare.py DIR_A DIR_B [rtol] [atol]. Prints one
line per file and exits 1 when any element differs by more than
atol + rtol * |a| (float32 results; float16 ones by at least one float16
ulp, rtol >= 2^-10: the GPU's sums round differently before the rounding
to float16; bfloat16 ones ('<V2', mtc's convention) likewise by one
bfloat16 ulp, rtol >= 2^-7; ints and bools must be equal)."""
import array
import ast
import glob
import os
import struct
import sys

CODES = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "B", "<f2": "e", "<V2": "bf16"}
ULP = {"e": 2.0 ** -10, "bf16": 2.0 ** -7}  # the relative tolerance at least, per 16-bit float


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    hlen = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    code = CODES.get(header["descr"])
    if code is None:
        raise ValueError(f"{path}: dtype {header['descr']} not handled")
    body = data[10 + hlen:]
    if code == "e":  # float16: array has no half type
        return header["shape"], list(struct.unpack(f"<{len(body) // 2}e", body)), code
    if code == "bf16":  # bfloat16: float32's upper 16 bits
        bits = struct.unpack(f"<{len(body) // 2}H", body)
        return header["shape"], [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in bits], code
    a = array.array(code)
    a.frombytes(body)
    return header["shape"], a, code


def main():
    da, db = sys.argv[1], sys.argv[2]
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-5
    bad = 0
    files = sorted(glob.glob(os.path.join(da, "*.npy")))
    if not files:
        print(f"no results in {da}")
        return 1
    for fa in files:
        fb = os.path.join(db, os.path.basename(fa))
        sa, a, code = load(fa)
        sb, b, _ = load(fb)
        r = max(rtol, ULP[code]) if code in ULP else rtol  # 16-bit floats: one ulp of rounding
        if sa != sb or len(a) != len(b):
            print(f"{os.path.basename(fa)}: shapes {sa} vs {sb}")
            bad += 1
            continue
        worst = max((abs(x - y) - r * abs(x) for x, y in zip(a, b)), default=0.0)
        diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
        ok = worst <= atol or all(x == y for x, y in zip(a, b))
        print(f"{os.path.basename(fa)}: shape {sa}, max |diff| {diff:.3g}: {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
