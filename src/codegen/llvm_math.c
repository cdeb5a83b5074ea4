/*
 * llvm_math.c -- float32 exp, log, tanh, sigmoid and erf as inline LLVM IR.
 *
 * Why. LLVM lowers `llvm.exp.v16f32` on x86 to sixteen scalar `expf` calls,
 * and a libm call in a loop body stops the loop vectorizer altogether, so a
 * kernel like `exp(a) * b + 1` ran at a fraction of memory bandwidth. Here
 * each function is a short, branch-free sequence of plain IR -- fadd/fmul,
 * llvm.fmuladd, fcmp + select, bitcasts and integer shifts, no calls (and,
 * for the exponential on AVX-512, two x86 intrinsics: a lookup and a scale)
 * -- on a scalar or a vector of float. The loop vectorizer widens it like any other
 * arithmetic (16 lanes of zmm on AVX-512), so the transcendental costs a few
 * dozen vector instructions per 16 elements. float16 uses the same code (it
 * is computed in float32); float64 keeps calling libm (llvm_expr.c), which
 * is correctly rounded or nearly so but scalar.
 *
 * The methods are the classical ones of Cody & Waite ("Software Manual for
 * the Elementary Functions", 1980) and Tang ("Table-driven implementation
 * of the exponential function in IEEE floating-point arithmetic", ACM TOMS
 * 15(2), 1989), table-free, in the arrangement of Cephes and of ARM's
 * optimized-routines. Every polynomial is a minimax (Remez) fit for
 * relative error (absolute where stated) on its interval, computed in
 * 40-digit arithmetic by scripts/vmath_remez.py and rounded to float; the
 * fit error is far below float's half ulp, so the error left is that of the
 * float operations.
 * llvm.fmuladd lets the backend fuse multiply-adds (FMA on every AVX-512
 * and AVX2 machine); the few steps that need an exact residual (the
 * reciprocal corrections below) lose that refinement on a machine without
 * FMA and are then about one ulp less accurate.
 *
 *  exp(x): clamp x to [-104, 89] (beyond, the result is 0 or +inf anyway);
 *    n = round(x / ln2) by adding and subtracting 1.5 * 2^23 (no float->int
 *    conversion, so no poison on NaN); r = x - n ln2 with ln2 split in two
 *    (Cody-Waite): rh = x - n ln2_hi is exact (ln2_hi has 15 significant
 *    bits, so n ln2_hi is exact even without FMA, and Sterbenz's lemma does
 *    the rest) and the small dl = -n ln2_lo is carried separately;
 *    |r| <= ln2 / 2. exp(r) = 1 + r + r^2 P(r), P of degree 4 (fit error
 *    3.1e-9), is summed as 1 + rh split exactly (Fast2Sum) plus the small
 *    terms, then renormalized into a (hi, lo) pair with hi the rounded
 *    result and exp(r) = hi + lo to about 0.2 ulp. 2^n is applied as two
 *    factors 2^(n/2) and 2^(n - n/2), each built by adding to the exponent
 *    bits, so n in [-150, 128] needs no special case: results that overflow
 *    become +inf, those below the subnormal range 0, subnormal results are
 *    rounded about once. NaN stays NaN through the clamps (ordered
 *    compares) and the arithmetic.
 *    With AVX-512 (the JIT's CPU has it), vectors take Tang's table method
 *    instead, in about half the instructions (exp_pair_table: 16 per 16
 *    lanes against 28): k = round(16 x / ln2), a degree-3 polynomial on
 *    |r| <= ln2/32, 2^(j/16) for j = k mod 16 as a (hi, lo) pair looked up
 *    in two 16-entry tables held in registers (vpermps), and 2^(k >> 4)
 *    applied by vscalefps, which rounds overflow to +inf and subnormal
 *    results once, so no case needs a branch either. Scalars (the tails of
 *    vector loops) keep the polynomial; the two agree to within their
 *    error bounds, not bit for bit.
 *  log(x): a subnormal x is scaled by 2^23 first. x = 2^e m with m in
 *    [sqrt(1/2), sqrt(2)) is read from the bits (subtract the bits of
 *    sqrt(1/2), shift out e, subtract e from the exponent field); f = m - 1
 *    is exact; log(1 + f) = f - f^2/2 + f^3 P(f), P of degree 7 (fit error
 *    5.8e-9). The result e ln2 + f + f^2 (-1/2 + f P(f)) is summed with
 *    e ln2_hi + f as an exact pair (Fast2Sum) and f^2 as an exact pair
 *    (FMA), the small terms first, so it is rounded about once. Selects
 *    give log(+-0) = -inf, log(x < 0) = log(NaN) = NaN, log(+inf) = +inf.
 *  tanh(x): on a = |x| < 0.625, a + a^3 P(a^2), P of degree 5 (fit error
 *    1.4e-9), which keeps the relative error small near 0 (tanh(tiny) is
 *    tiny, never 0). Above, tanh(a) = 1 - 2 / (exp(2a) + 1) with the (hi,
 *    lo) pair of exp: d = e + 1 as an exact pair, q = 2 / d corrected once by
 *    its FMA residual (Markstein), so 1 - q is rounded about once. a is
 *    clamped to 10 first (tanh(a) rounds to 1 from 9.01 on). The sign is
 *    put back with copysign, so tanh(-0) = -0; NaN takes the first path.
 *  sigmoid(x): e = exp(-|x|) <= 1 as a (hi, lo) pair; d = 1 + e exactly;
 *    u = 1 / d with its residual res = 1 - u d; the result is u (1 + res)
 *    for x >= 0 and e u (1 + res) for x < 0, computed as e_hi u + (e_hi u
 *    res + e_lo u) with one final rounding. So both tails are accurate: sigmoid(-100) = 3.7e-44 (not
 *    0 as with 1 / (1 + exp(100))), sigmoid(+-inf) = 1 and 0, never NaN
 *    for a non-NaN x.
 *  erf(x): on a = |x| < 0.921875, a + a Q(a^2), Q of degree 6 (relative fit
 *    error 1.8e-9; the leading coefficient 2/sqrt(pi) - 1 is stored instead
 *    of 2/sqrt(pi), whose float rounding alone would cost 0.9 ulp).
 *    Above, erf(a) = 1 - exp(R(a - 1)) where R, of degree 8 on [0.921875,
 *    4], fits log(erfc(a)) with erfc(a) as the weight (absolute error of erf
 *    4.7e-10); a is clamped to 4 (erf rounds to 1 from 3.92 on); 1 - (hi,
 *    lo) is summed exactly before the final rounding. copysign restores
 *    the sign; NaN takes the first path.
 *
 * Accuracy, float32, measured on every one of the 2^32 inputs against
 * glibc's double-precision functions on an FMA machine (docs/codegen.md has
 * the table; tests/codegen/test_vmath.c checks dense sweeps and special
 * values, and every input with MT_VMATH_EXHAUSTIVE=1), the polynomial
 * exponential: exp 0.78 ulp (0.69 where the result is normal), log 0.85,
 * tanh 0.80, sigmoid 0.81, erf 0.89; with the table method (AVX-512
 * vectors): exp 0.77 (0.58 where the result is normal), tanh 0.77, sigmoid
 * 0.79, erf 0.88 -- all below one ulp. Special values are exact.
 */
#include <math.h>

#include <llvm-c/Core.h>

#include "codegen/llvm_internal.h"

/* The builder state of one expansion: lane count and the (vector) types. */
typedef struct vm {
    mt_cg *g;
    LLVMBuilderRef b;
    int n;          /* lanes, 1 for a scalar */
    LLVMTypeRef ft; /* float or <n x float> */
    LLVMTypeRef it; /* i32 or <n x i32> */
} vm;

typedef struct pair {
    LLVMValueRef hi, lo; /* value = hi + lo, |lo| <= ulp(hi) / 2 */
} pair;

static vm vm_of(mt_cg *g, LLVMValueRef x) {
    vm m = {g, g->b, mt_cg_lanes(x), NULL, NULL};
    m.ft = mt_cg_vec_type(g->t_f32, m.n);
    m.it = mt_cg_vec_type(g->t_i32, m.n);
    return m;
}

static LLVMValueRef F(vm *m, double v) {
    return mt_cg_splat(m->g, LLVMConstReal(m->g->t_f32, v), m->n);
}

static LLVMValueRef I(vm *m, long long v) {
    return mt_cg_splat(m->g, LLVMConstInt(m->g->t_i32, (unsigned long long)v, 1), m->n);
}

static LLVMValueRef add(vm *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->b, a, b, ""); }
static LLVMValueRef sub(vm *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->b, a, b, ""); }
static LLVMValueRef mul(vm *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->b, a, b, ""); }
static LLVMValueRef neg(vm *m, LLVMValueRef a) { return LLVMBuildFNeg(m->b, a, ""); }

static LLVMValueRef sel(vm *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef t, LLVMValueRef f) {
    return LLVMBuildSelect(m->b, LLVMBuildFCmp(m->b, p, a, b, ""), t, f, "");
}

/* llvm.<name> overloaded on float (vector). */
static LLVMValueRef intrin(vm *m, const char *name, LLVMValueRef *args, int nargs) {
    LLVMTypeRef fnty, t = m->ft;
    LLVMValueRef fn = mt_cg_intrinsic(m->g, name, &t, 1, &fnty);
    return LLVMBuildCall2(m->b, fnty, fn, args, (unsigned)nargs, "");
}

/* a * b + c, fused where the target has FMA. */
static LLVMValueRef fmadd(vm *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    return intrin(m, "llvm.fmuladd", args, 3);
}

static LLVMValueRef fabs_(vm *m, LLVMValueRef x) { return intrin(m, "llvm.fabs", &x, 1); }

static LLVMValueRef copysign_(vm *m, LLVMValueRef mag, LLVMValueRef sgn) {
    LLVMValueRef args[2] = {mag, sgn};
    return intrin(m, "llvm.copysign", args, 2);
}

/* c[0] x^(k-1) + ... + c[k-1] by Horner's rule. */
static LLVMValueRef horner(vm *m, LLVMValueRef x, const float *c, int k) {
    LLVMValueRef p = F(m, c[0]);
    for (int i = 1; i < k; i++) p = fmadd(m, p, x, F(m, c[i]));
    return p;
}

static LLVMValueRef as_int(vm *m, LLVMValueRef v) { return LLVMBuildBitCast(m->b, v, m->it, ""); }
static LLVMValueRef as_float(vm *m, LLVMValueRef v) { return LLVMBuildBitCast(m->b, v, m->ft, ""); }

/* 2^k for k in [-126, 127] from the exponent bits. */
static LLVMValueRef pow2i(vm *m, LLVMValueRef k) {
    LLVMValueRef bits = LLVMBuildShl(m->b, LLVMBuildAdd(m->b, k, I(m, 127), ""), I(m, 23), "");
    return as_float(m, bits);
}

/* Two-part ln2: hi has 15 significant bits (n * hi is exact for |n| < 512). */
static const float LN2_HI = 0x1.62e4p-1f, LN2_LO = 0x1.7f7d1cp-20f;

/* ---- exp ---------------------------------------------------------------------- */

/* exp(x) as a (hi, lo) pair, hi the rounded result. For x above 88.72 hi is
 * +inf and lo meaningless (callers of lo keep x below that). */
static pair exp_pair_poly(vm *m, LLVMValueRef x) {
    /* exp(r) - 1 - r = r^2 (c0 r^4 + ... + c4), |r| <= ln2/2: Remez, relative
     * error 3.07e-9. */
    static const float P[5] = {0x1.6a23dp-10f, 0x1.123a2p-7f, 0x1.5558f2p-5f, 0x1.555492p-3f,
                               0x1.fffffcp-2f};
    const float shift = 0x1.8p23f; /* z = x/ln2 + shift has n in its low mantissa bits */
    x = sel(m, LLVMRealOGT, x, F(m, 89), F(m, 89), x);
    x = sel(m, LLVMRealOLT, x, F(m, -104), F(m, -104), x);
    LLVMValueRef z = fmadd(m, x, F(m, 0x1.715476p+0f), F(m, shift));
    LLVMValueRef nf = sub(m, z, F(m, shift));
    /* r = rh + dl: rh = x - n ln2_hi is exact, dl = -n ln2_lo is small and
     * enters the low part of the sum, so r's rounding costs nothing */
    LLVMValueRef rh = fmadd(m, neg(m, nf), F(m, LN2_HI), x);
    LLVMValueRef dl = mul(m, nf, F(m, -LN2_LO));
    LLVMValueRef r = add(m, rh, dl);
    LLVMValueRef hi = add(m, F(m, 1), rh);
    LLVMValueRef lo = add(m, add(m, sub(m, F(m, 1), hi), rh), dl); /* 1 + rh exactly */
    lo = fmadd(m, mul(m, r, r), horner(m, r, P, 5), lo);
    LLVMValueRef h2 = add(m, hi, lo);
    lo = add(m, sub(m, hi, h2), lo);
    hi = h2;
    /* n = bits(z) - bits(shift) in [-150, 128]; 2^n = 2^k1 * 2^k2, both normal */
    LLVMValueRef ni = LLVMBuildSub(m->b, as_int(m, z), I(m, 0x4b400000), "");
    LLVMValueRef k1 = LLVMBuildAShr(m->b, ni, I(m, 1), "");
    LLVMValueRef k2 = LLVMBuildSub(m->b, ni, k1, "");
    LLVMValueRef s1 = pow2i(m, k1), s2 = pow2i(m, k2);
    pair e = {mul(m, mul(m, hi, s1), s2), mul(m, mul(m, lo, s1), s2)};
    return e;
}

/* An x86 intrinsic (not overloaded) called on args. */
static LLVMValueRef x86(vm *m, const char *name, LLVMValueRef *args, int nargs) {
    LLVMTypeRef fnty;
    LLVMValueRef fn = mt_cg_intrinsic(m->g, name, NULL, 0, &fnty);
    return LLVMBuildCall2(m->b, fnty, fn, args, (unsigned)nargs, "");
}

/* table[idx & 15] per lane (vpermps; 16 lanes). */
static LLVMValueRef lookup16(vm *m, const float *table, LLVMValueRef idx) {
    LLVMValueRef c[16];
    for (int i = 0; i < 16; i++) c[i] = LLVMConstReal(m->g->t_f32, table[i]);
    LLVMValueRef args[2] = {LLVMConstVector(c, 16), idx};
    return x86(m, "llvm.x86.avx512.permvar.sf.512", args, 2);
}

/* v * 2^floor(e) in one rounding, overflow to inf, subnormals rounded
 * (vscalefps; 16 lanes). */
static LLVMValueRef scalef16(vm *m, LLVMValueRef v, LLVMValueRef e) {
    LLVMValueRef args[5] = {v, e, LLVMGetUndef(m->ft), LLVMConstInt(m->g->t_i16, 0xffff, 0),
                            LLVMConstInt(m->g->t_i32, 4, 0) /* the current rounding */};
    return x86(m, "llvm.x86.avx512.mask.scalef.ps.512", args, 5);
}

/* exp_pair_poly's result with AVX-512 on 16 lanes, in about half its
 * instructions (Tang's table method): k = round(16 x / ln2), r = x - k ln2/16
 * (|r| <= ln2/32, two-part ln2/16 as above: its high part has 12
 * significant bits, k at most 12), exp(x) = 2^(k >> 4) 2^((k & 15)/16)
 * exp(r). 2^(j/16) is a (hi, lo) pair from two 16-entry tables, looked up
 * by the low bits of z (vpermps reads only those); exp(r) - 1 = r + r^2 P(r),
 * P of degree 1 (fit error 2.3e-9); T (1 + p) = Thi + (Thi p + Tlo) is
 * summed as a pair (Fast2Sum) and both parts scaled by 2^(k >> 4) with
 * vscalefps, which rounds overflow to +inf and subnormal results once. */
static pair exp_pair_table(vm *m, LLVMValueRef x) {
    static const float THI[16] = {
        0x1p+0f,       0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fep+0f,  0x1.3dea64p+0f,
        0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
        0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f};
    static const float TLO[16] = {
        0.0f,           0x1.9f3122p-25f,  -0x1.c15742p-27f, 0x1.ceac48p-25f,  0x1.4636e2p-25f,
        0x1.824684p-25f, -0x1.593abcp-25f, -0x1.5bd5ecp-27f, 0x1.9fcef4p-26f,  -0x1.829fdp-25f,
        0x1.15506ep-27f, 0x1.51f848p-27f,  -0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f,
        0x1.52486cp-27f};
    /* exp(r) - 1 - r = r^2 (c0 r + c1), |r| <= ln2/32: Remez, relative error 2.33e-9 */
    static const float P[2] = {0x1.555762p-3f, 0x1.00029p-1f};
    const float shift = 0x1.8p23f;
    x = sel(m, LLVMRealOGT, x, F(m, 89), F(m, 89), x);
    x = sel(m, LLVMRealOLT, x, F(m, -104), F(m, -104), x);
    LLVMValueRef z = fmadd(m, x, F(m, 0x1.715476p+4f), F(m, shift));
    LLVMValueRef k = sub(m, z, F(m, shift));
    LLVMValueRef r = fmadd(m, neg(m, k), F(m, 0x1.62ep-5f), x); /* exact */
    r = fmadd(m, neg(m, k), F(m, 0x1.0bfbe8p-19f), r);
    LLVMValueRef p = fmadd(m, mul(m, r, r), horner(m, r, P, 2), r);
    LLVMValueRef th = lookup16(m, THI, as_int(m, z)), tl = lookup16(m, TLO, as_int(m, z));
    LLVMValueRef t = fmadd(m, th, p, tl);
    LLVMValueRef hi = add(m, th, t);
    LLVMValueRef lo = add(m, sub(m, th, hi), t);
    LLVMValueRef n = mul(m, k, F(m, 0x1p-4f)); /* floor(n) = k >> 4 */
    pair e = {scalef16(m, hi, n), scalef16(m, lo, n)};
    return e;
}

/* Lanes [from, from + n) of v and w put end to end. */
static LLVMValueRef lanes_of(vm *m, LLVMValueRef v, LLVMValueRef w, int from, int n) {
    LLVMValueRef ix[64];
    for (int i = 0; i < n; i++) ix[i] = LLVMConstInt(m->g->t_i32, (unsigned long long)(from + i), 0);
    return LLVMBuildShuffleVector(m->b, v, w, LLVMConstVector(ix, (unsigned)n), "");
}

/* v (m->n < 16 lanes) as 16 lanes, the rest 0. */
static LLVMValueRef pad16(vm *m, LLVMValueRef v) {
    LLVMValueRef ix[16];
    for (int i = 0; i < 16; i++) ix[i] = LLVMConstInt(m->g->t_i32, (unsigned long long)(i < m->n ? i : m->n), 0);
    return LLVMBuildShuffleVector(m->b, v, LLVMConstNull(m->ft), LLVMConstVector(ix, 16), "");
}

/* exp(x) as a (hi, lo) pair, hi the rounded result. For x above 88.72 hi is
 * +inf and lo meaningless (callers of lo keep x below that). With AVX-512,
 * vectors of 2 to 16 lanes (padded with zeros) and of 32 or 64 (in parts
 * of 16) take the table method; scalars and other hosts the polynomial. */
static pair exp_pair(vm *m, LLVMValueRef x) {
    int n = m->n;
    if (!m->g->avx512 || n < 2 || (n > 16 && n != 32 && n != 64)) return exp_pair_poly(m, x);
    vm w = *m;
    w.n = 16, w.ft = mt_cg_vec_type(m->g->t_f32, 16), w.it = mt_cg_vec_type(m->g->t_i32, 16);
    if (n <= 16) {
        LLVMValueRef x16 = n == 16 ? x : pad16(m, x);
        pair e = exp_pair_table(&w, x16);
        if (n < 16) e.hi = lanes_of(m, e.hi, e.hi, 0, n), e.lo = lanes_of(m, e.lo, e.lo, 0, n);
        return e;
    }
    pair part[4];
    for (int i = 0; i < n / 16; i++) part[i] = exp_pair_table(&w, lanes_of(m, x, x, 16 * i, 16));
    for (int len = 16, cnt = n / 16; cnt > 1; len *= 2, cnt /= 2)
        for (int i = 0; i < cnt / 2; i++) {
            part[i].hi = lanes_of(m, part[2 * i].hi, part[2 * i + 1].hi, 0, 2 * len);
            part[i].lo = lanes_of(m, part[2 * i].lo, part[2 * i + 1].lo, 0, 2 * len);
        }
    return part[0];
}

LLVMValueRef mt_cg_math_exp(mt_cg *g, LLVMValueRef x) {
    vm m = vm_of(g, x);
    return exp_pair(&m, x).hi;
}

/* ---- log ---------------------------------------------------------------------- */

LLVMValueRef mt_cg_math_log(mt_cg *g, LLVMValueRef x) {
    /* log(1 + f) - f + f^2/2 = f^3 (c0 f^7 + ... + c7), f in [sqrt(1/2) - 1,
     * sqrt(2) - 1]: Remez, relative error 5.84e-9; -1/2 is appended. */
    static const float P[9] = {-0x1.38b55cp-4f, 0x1.055d6cp-3f, -0x1.0d8636p-3f,
                               0x1.22d9eap-3f,  -0x1.547228p-3f, 0x1.99a00ap-3f,
                               -0x1.000228p-2f, 0x1.555554p-2f,  -0x1p-1f};
    vm mm = vm_of(g, x), *m = &mm;
    LLVMBuilderRef b = m->b;
    LLVMValueRef tiny = LLVMBuildFCmp(b, LLVMRealOLT, x, F(m, 0x1p-126f), "");
    LLVMValueRef xs = LLVMBuildSelect(b, tiny, mul(m, x, F(m, 0x1p23f)), x, "");
    LLVMValueRef ix = as_int(m, xs);
    LLVMValueRef e = LLVMBuildAShr(b, LLVMBuildSub(b, ix, I(m, 0x3f3504f3), ""), I(m, 23), "");
    LLVMValueRef im = LLVMBuildSub(b, ix, LLVMBuildShl(b, e, I(m, 23), ""), "");
    LLVMValueRef f = sub(m, as_float(m, im), F(m, 1)); /* exact: m in [0.70, 1.42) */
    e = LLVMBuildAdd(b, e, LLVMBuildSelect(b, tiny, I(m, -23), I(m, 0), ""), "");
    LLVMValueRef ef = LLVMBuildSIToFP(b, e, m->ft, "");
    /* c = f^2 P(f) with f^2 exact as a pair; e ln2_hi + f = t + err exactly
     * (Fast2Sum: |e ln2_hi| >= |f| unless e = 0, and then t = f); the small
     * terms are summed first, so the result is rounded about once */
    LLVMValueRef f2 = mul(m, f, f);
    LLVMValueRef f2lo = fmadd(m, f, f, neg(m, f2));
    LLVMValueRef p = horner(m, f, P, 9);
    LLVMValueRef c = fmadd(m, f2, p, mul(m, f2lo, p));
    LLVMValueRef a = mul(m, ef, F(m, LN2_HI)); /* exact */
    LLVMValueRef t = add(m, a, f);
    LLVMValueRef err = add(m, sub(m, a, t), f);
    LLVMValueRef r = add(m, t, add(m, fmadd(m, ef, F(m, LN2_LO), err), c));
    r = sel(m, LLVMRealOEQ, x, F(m, INFINITY), F(m, INFINITY), r);
    r = sel(m, LLVMRealOEQ, x, F(m, 0), F(m, -INFINITY), r);
    return sel(m, LLVMRealULT, x, F(m, 0), F(m, NAN), r); /* x < 0 or NaN */
}

/* ---- tanh, sigmoid ------------------------------------------------------------- */

LLVMValueRef mt_cg_math_tanh(mt_cg *g, LLVMValueRef x) {
    /* tanh(a) - a = a^3 (c0 a^10 + ... + c5), a in [0, 0.625]: Remez,
     * relative error 1.43e-9. */
    static const float P[6] = {0x1.383aa2p-9f, -0x1.14731ep-7f, 0x1.6534bep-6f,
                               -0x1.ba12b4p-5f, 0x1.111108p-3f, -0x1.555556p-2f};
    vm mm = vm_of(g, x), *m = &mm;
    LLVMValueRef a = fabs_(m, x);
    LLVMValueRef a2 = mul(m, a, a);
    LLVMValueRef small = fmadd(m, mul(m, a, a2), horner(m, a2, P, 6), a);
    /* 1 - 2 / (e + 1), e = exp(2a) >= 1 */
    LLVMValueRef ac = sel(m, LLVMRealOLT, a, F(m, 10), a, F(m, 10));
    pair e = exp_pair(m, mul(m, ac, F(m, 2)));
    LLVMValueRef d = add(m, e.hi, F(m, 1));
    LLVMValueRef dlo = add(m, add(m, sub(m, e.hi, d), F(m, 1)), e.lo);
    LLVMValueRef q = LLVMBuildFDiv(m->b, F(m, 2), d, "");
    LLVMValueRef res = fmadd(m, neg(m, q), dlo, fmadd(m, neg(m, q), d, F(m, 2)));
    q = fmadd(m, res, mul(m, q, F(m, 0.5)), q); /* 1/d = q/2 */
    LLVMValueRef big = sub(m, F(m, 1), q);
    LLVMValueRef r = sel(m, LLVMRealOGE, a, F(m, 0.625), big, small);
    return copysign_(m, r, x);
}

LLVMValueRef mt_cg_math_sigmoid(mt_cg *g, LLVMValueRef x) {
    vm mm = vm_of(g, x), *m = &mm;
    LLVMBuilderRef b = m->b;
    pair e = exp_pair(m, neg(m, fabs_(m, x))); /* <= 1 */
    LLVMValueRef d = add(m, F(m, 1), e.hi);
    LLVMValueRef dlo = add(m, add(m, sub(m, F(m, 1), d), e.hi), e.lo);
    LLVMValueRef u = LLVMBuildFDiv(b, F(m, 1), d, "");
    LLVMValueRef res = fmadd(m, neg(m, u), dlo, fmadd(m, neg(m, u), d, F(m, 1)));
    /* x >= 0: 1/d = u (1 + res); x < 0: e/d = (e_hi + e_lo) u (1 + res) */
    LLVMValueRef isneg = LLVMBuildFCmp(b, LLVMRealOLT, x, F(m, 0), "");
    LLVMValueRef nh = LLVMBuildSelect(b, isneg, e.hi, F(m, 1), "");
    LLVMValueRef nl = LLVMBuildSelect(b, isneg, e.lo, F(m, 0), "");
    return fmadd(m, nh, u, fmadd(m, mul(m, nh, u), res, mul(m, nl, u)));
}

/* ---- erf ----------------------------------------------------------------------- */

LLVMValueRef mt_cg_math_erf(mt_cg *g, LLVMValueRef x) {
    /* erf(a) - a = a (c0 a^12 + ... + c6), a in [0, 0.921875]: Remez,
     * relative error 1.80e-9; c6 = 2/sqrt(pi) - 1. */
    static const float S[7] = {0x1.6e5086p-14f, -0x1.afd24ap-11f, 0x1.5570ap-8f,
                               -0x1.b82096p-6f, 0x1.ce2eep-4f,    -0x1.812746p-2f,
                               0x1.06eba8p-3f};
    /* log(erfc(a)) = R(a - 1), a in [0.921875, 4], degree 8: Remez weighted by
     * erfc(a) (absolute error of erf 4.67e-10). */
    static const float R[9] = {0x1.61aaaep-20f, -0x1.fb9c14p-16f, 0x1.4625f4p-12f,
                               -0x1.0b23fep-9f, 0x1.49b688p-7f,   -0x1.5484eep-5f,
                               -0x1.afabbap-1f, -0x1.51c9bp+1f,   -0x1.d97fcp+0f};
    vm mm = vm_of(g, x), *m = &mm;
    LLVMValueRef a = fabs_(m, x);
    LLVMValueRef small = fmadd(m, a, horner(m, mul(m, a, a), S, 7), a);
    LLVMValueRef ac = sel(m, LLVMRealOLT, a, F(m, 4), a, F(m, 4));
    pair e = exp_pair(m, horner(m, sub(m, ac, F(m, 1)), R, 9)); /* erfc(a) <= 0.193 */
    LLVMValueRef t = sub(m, F(m, 1), e.hi);
    LLVMValueRef tlo = sub(m, sub(m, F(m, 1), t), e.hi);
    LLVMValueRef big = add(m, t, sub(m, tlo, e.lo));
    LLVMValueRef r = sel(m, LLVMRealOGE, a, F(m, 0.921875), big, small);
    return copysign_(m, r, x);
}
