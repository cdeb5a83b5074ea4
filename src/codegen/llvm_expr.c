/*
 * llvm_expr.c -- TIR expressions to LLVM values.
 *
 * One recursive function, mt_cg_expr, maps each expression kind to a short
 * sequence of instructions through the LLVM IRBuilder (which folds constants
 * as it goes, so guards on constant divisors vanish). Expressions have no side
 * effects, so every operand is evaluated, `and`/`or` included (no short
 * circuit), and both arms of a select.
 *
 * Types. Each dtype has a compute type (what an SSA value holds) and a memory
 * type (what a buffer element is):
 *
 *     dtype     compute   memory        dtype     compute   memory
 *     bool      i1        i8 (0/1)      int64     i64       i64
 *     int8      i8        i8            float16   float     half
 *     uint8     i8        i8            float32   float     float
 *     int32     i32       i32           float64   double    double
 *                                       bfloat16  float     i16
 *
 * So float16 is *computed in float32*: loads fpext, stores fptrunc (round to
 * nearest even), and a value of dtype float16 is rounded to half precision
 * only where it is stored, cast to float16, or written as an immediate.
 *
 * bfloat16 likewise, with its bits kept in an i16 and converted by integer
 * instructions of our own rather than through LLVM's `bfloat` type: on x86
 * without AVX512-BF16 LLVM 19 lowers fptrunc float -> bfloat to a libcall
 * (__truncsfbf2) per element, and its int -> bfloat and double -> bfloat
 * round twice. A load is zext, shl 16, bitcast; float32 -> bfloat16 is
 * (u + 0x7fff + (u >> 16 & 1)) >> 16 (round to nearest even; overflow
 * carries into inf), a NaN becoming the canonical 0x7fff; float64 and
 * int32/int64 are first rounded to float32 *to odd* (the inexact result
 * moved toward zero, its last bit set), so the value is rounded once, as
 * CUDA's __double2bfloat16, __int2bfloat16_rn and __ll2bfloat16_rn do.
 * Each step is a lane-wise integer or compare instruction: it vectorizes.
 *
 * Vectors. An expression with lanes > 1 becomes an LLVM vector of its compute
 * type. Scalar operands of a vector operation are broadcast (insertelement +
 * zero shufflevector). A TE_RAMP is base + stride * <0, 1, ..., n-1>. A load
 * or store whose index is a ramp of constant stride 1 is one vector memory
 * access; a broadcast index loads once and splats; a ramp of another
 * constant stride loads lane l at base + l * stride (a row of a transposed
 * tile, from lines the tile keeps in L1); any other vector index is
 * scalarized lane by lane (stores in lane order, so the last lane wins when
 * two lanes hit one element). LLVM may turn those into gathers.
 *
 * Semantics chosen where LLVM leaves a choice (also in docs/codegen.md):
 *  - int + - *: wrapping (no nsw), except int64 math inside a buffer index,
 *    which is nsw (indices do not overflow), which helps SCEV and vectorizing.
 *  - int / // %: Python floor semantics for signed types, truncating `/`.
 *    x // 0 == 0 and x % 0 == 0 (numpy's results) and MIN // -1 wraps to MIN;
 *    the divisor is guarded by selects, which fold away for constants.
 *  - float // and %: floor(a / b) and a - floor(a / b) * b.
 *  - float min/max: llvm.minnum/maxnum (C fminf/fmaxf): a NaN operand is
 *    ignored when the other is a number. numpy.minimum would propagate it.
 *  - compares on floats are ordered (false on NaN) except != which is
 *    unordered (true on NaN), as in C and Python.
 *  - float -> int casts saturate (llvm.fpto[su]i.sat; NaN -> 0); float -> bool
 *    is x != 0 (NaN -> true); int -> bool is x != 0.
 *  - float32 (and float16) exp, log, tanh, sigmoid and erf are expanded inline
 *    by llvm_math.c into call-free IR the loop vectorizer widens (each within
 *    one ulp); float64 calls libm. sqrt, floor, fma... are LLVM intrinsics
 *    with vector instructions; sin, cos and pow call libm once per lane.
 */
#include <string.h>

#include <llvm-c/Core.h>

#include "codegen/llvm_internal.h"
#include "support/common.h"

/* ---- maps ------------------------------------------------------------------ */

static unsigned hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (unsigned)x;
}

static mt_cg_slot *map_find(mt_cg_slot *slots, int cap, const void *key) {
    unsigned mask = (unsigned)cap - 1;
    for (unsigned i = hash_ptr(key) & mask;; i = (i + 1) & mask)
        if (slots[i].key == key || slots[i].key == NULL) return &slots[i];
}

void mt_cg_map_put(mt_arena *a, mt_cg_map *m, const void *key, LLVMValueRef val) {
    if (2 * (m->used + 1) > m->cap) {
        int ncap = m->cap ? 2 * m->cap : 32;
        mt_cg_slot *ns = MT_NEW_ARRAY(a, mt_cg_slot, ncap);
        for (int i = 0; i < m->cap; i++)
            if (m->slots[i].key) *map_find(ns, ncap, m->slots[i].key) = m->slots[i];
        m->slots = ns;
        m->cap = ncap;
    }
    mt_cg_slot *s = map_find(m->slots, m->cap, key);
    if (!s->key) {
        s->key = key;
        m->used++;
    }
    s->val = val;
}

LLVMValueRef mt_cg_map_get(const mt_cg_map *m, const void *key) {
    if (!m->cap) return NULL;
    return map_find(m->slots, m->cap, key)->val;
}

/* ---- types and constants --------------------------------------------------- */

LLVMTypeRef mt_cg_type(mt_cg *g, mt_dtype t) {
    switch (t) {
    case MT_BOOL: return g->t_i1;
    case MT_INT8: case MT_UINT8: return g->t_i8;
    case MT_INT32: return g->t_i32;
    case MT_INT64: return g->t_i64;
    case MT_FLOAT16: case MT_BFLOAT16: case MT_FLOAT32: return g->t_f32;
    case MT_FLOAT64: return g->t_f64;
    default: mt_ice("codegen: unknown dtype %d", (int)t);
    }
}

LLVMTypeRef mt_cg_mem_type(mt_cg *g, mt_dtype t) {
    if (t == MT_BOOL) return g->t_i8;
    if (t == MT_FLOAT16) return g->t_half;
    if (t == MT_BFLOAT16) return g->t_i16;
    return mt_cg_type(g, t);
}

static unsigned elem_align(mt_dtype t) {
    switch (t) {
    case MT_BOOL: case MT_INT8: case MT_UINT8: return 1;
    case MT_FLOAT16: case MT_BFLOAT16: return 2;
    case MT_INT32: case MT_FLOAT32: return 4;
    default: return 8;
    }
}

static bool is_float(mt_dtype t) { return mt_dtype_is_float(t); }
/* Signed integer arithmetic: int8, int32, int64 (bool and uint8 are unsigned). */
static bool is_sint(mt_dtype t) { return t == MT_INT8 || t == MT_INT32 || t == MT_INT64; }

LLVMTypeRef mt_cg_vec_type(LLVMTypeRef elem, int lanes) {
    return lanes > 1 ? LLVMVectorType(elem, (unsigned)lanes) : elem;
}

int mt_cg_lanes(LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(t) : 1;
}

static LLVMTypeRef elem_type(LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
}

static LLVMValueRef const_splat(mt_cg *g, LLVMValueRef c, int lanes) {
    if (lanes <= 1) return c;
    LLVMValueRef *elts = MT_NEW_ARRAY(g->arena, LLVMValueRef, lanes);
    for (int i = 0; i < lanes; i++) elts[i] = c;
    return LLVMConstVector(elts, (unsigned)lanes);
}

LLVMValueRef mt_cg_splat(mt_cg *g, LLVMValueRef v, int lanes) {
    int have = mt_cg_lanes(v);
    if (have == lanes || lanes <= 1) return v;
    if (have != 1) mt_ice("codegen: cannot widen a %d-lane value to %d lanes", have, lanes);
    if (LLVMIsConstant(v)) return const_splat(g, v, lanes);
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
    LLVMValueRef ins =
        LLVMBuildInsertElement(g->b, LLVMGetPoison(vt), v, LLVMConstInt(g->t_i32, 0, 0), "");
    LLVMValueRef mask = LLVMConstNull(LLVMVectorType(g->t_i32, (unsigned)lanes));
    return LLVMBuildShuffleVector(g->b, ins, LLVMGetPoison(vt), mask, "");
}

/* Constant of type elem (int or fp), splat to lanes. */
static LLVMValueRef const_num(mt_cg *g, LLVMTypeRef elem, double v, int lanes) {
    LLVMValueRef c;
    if (LLVMGetTypeKind(elem) == LLVMIntegerTypeKind)
        c = LLVMConstInt(elem, (unsigned long long)(int64_t)v, 1);
    else
        c = LLVMConstReal(elem, v);
    return const_splat(g, c, lanes);
}

static LLVMValueRef const_like(mt_cg *g, LLVMValueRef like, double v) {
    return const_num(g, elem_type(like), v, mt_cg_lanes(like));
}

/* A float (vector) rounded to half precision and back: the value a float16
 * variable can hold. */
static LLVMValueRef round_half(mt_cg *g, LLVMValueRef v) {
    int n = mt_cg_lanes(v);
    LLVMValueRef h = LLVMBuildFPTrunc(g->b, v, mt_cg_vec_type(g->t_half, n), "");
    return LLVMBuildFPExt(g->b, h, mt_cg_vec_type(g->t_f32, n), "");
}

/* ---- bfloat16 ---------------------------------------------------------------- */

static LLVMValueRef const_u32(mt_cg *g, uint32_t v, int n) {
    return const_splat(g, LLVMConstInt(g->t_i32, v, 0), n);
}

/* The bits (i32 lanes, the upper 16 zero) of float v rounded to bfloat16. */
static LLVMValueRef bf16_bits(mt_cg *g, LLVMValueRef v) {
    int n = mt_cg_lanes(v);
    LLVMTypeRef it = mt_cg_vec_type(g->t_i32, n);
    LLVMValueRef u = LLVMBuildBitCast(g->b, v, it, "");
    LLVMValueRef odd = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, u, const_u32(g, 16, n), ""), const_u32(g, 1, n), "");
    LLVMValueRef r = LLVMBuildAdd(g->b, u, LLVMBuildAdd(g->b, odd, const_u32(g, 0x7fff, n), ""), "");
    r = LLVMBuildLShr(g->b, r, const_u32(g, 16, n), "");
    LLVMValueRef nan = LLVMBuildFCmp(g->b, LLVMRealUNO, v, v, "");
    return LLVMBuildSelect(g->b, nan, const_u32(g, 0x7fff, n), r, "");
}

/* bfloat16 bits in i32 lanes (upper 16 zero) as the float they are. */
static LLVMValueRef bits_to_float(mt_cg *g, LLVMValueRef b) {
    int n = mt_cg_lanes(b);
    LLVMValueRef u = LLVMBuildShl(g->b, b, const_u32(g, 16, n), "");
    return LLVMBuildBitCast(g->b, u, mt_cg_vec_type(g->t_f32, n), "");
}

LLVMValueRef mt_cg_bf16_to_float(mt_cg *g, LLVMValueRef v) {
    return bits_to_float(g, LLVMBuildZExt(g->b, v, mt_cg_vec_type(g->t_i32, mt_cg_lanes(v)), ""));
}

/* A float (vector) rounded to bfloat16 and back. */
static LLVMValueRef round_bf16(mt_cg *g, LLVMValueRef v) { return bits_to_float(g, bf16_bits(g, v)); }

/* r, a float32 rounding (to nearest) of a wider value x, made its rounding
 * to odd: moved one step toward zero when |r| > |x|, its last bit set when
 * inexact. gt/lt: r > x and r < x; inexact: r != x (false on NaN). */
static LLVMValueRef to_odd(mt_cg *g, LLVMValueRef r, LLVMValueRef gt, LLVMValueRef lt, LLVMValueRef inexact) {
    int n = mt_cg_lanes(r);
    LLVMTypeRef it = mt_cg_vec_type(g->t_i32, n);
    LLVMValueRef zero = const_like(g, r, 0);
    LLVMValueRef pos = LLVMBuildFCmp(g->b, LLVMRealOGT, r, zero, "");
    LLVMValueRef neg = LLVMBuildFCmp(g->b, LLVMRealOLT, r, zero, "");
    LLVMValueRef away = LLVMBuildOr(g->b, LLVMBuildAnd(g->b, pos, gt, ""), LLVMBuildAnd(g->b, neg, lt, ""), "");
    LLVMValueRef u = LLVMBuildBitCast(g->b, r, it, "");
    u = LLVMBuildSub(g->b, u, LLVMBuildZExt(g->b, away, it, ""), "");
    u = LLVMBuildOr(g->b, u, LLVMBuildZExt(g->b, inexact, it, ""), "");
    return LLVMBuildBitCast(g->b, u, mt_cg_vec_type(g->t_f32, n), "");
}

/* A double (vector) rounded once to bfloat16, as a float. */
static LLVMValueRef round_bf16_from_f64(mt_cg *g, LLVMValueRef d) {
    int n = mt_cg_lanes(d);
    LLVMValueRef r = LLVMBuildFPTrunc(g->b, d, mt_cg_vec_type(g->t_f32, n), "");
    LLVMValueRef back = LLVMBuildFPExt(g->b, r, LLVMTypeOf(d), "");
    LLVMValueRef gt = LLVMBuildFCmp(g->b, LLVMRealOGT, back, d, "");
    LLVMValueRef lt = LLVMBuildFCmp(g->b, LLVMRealOLT, back, d, "");
    LLVMValueRef ne = LLVMBuildFCmp(g->b, LLVMRealONE, back, d, "");
    return round_bf16(g, to_odd(g, r, gt, lt, ne));
}

/* An integer (vector) of dtype from rounded once to bfloat16, as a float:
 * exact in float32 up to 16 bits, else through float32 rounded to odd (the
 * float converted back, saturating, to tell the direction). */
static LLVMValueRef round_bf16_from_int(mt_cg *g, LLVMValueRef v, mt_dtype from, bool sint) {
    int n = mt_cg_lanes(v);
    LLVMTypeRef ft = mt_cg_vec_type(g->t_f32, n);
    LLVMValueRef r = sint ? LLVMBuildSIToFP(g->b, v, ft, "") : LLVMBuildUIToFP(g->b, v, ft, "");
    if (from != MT_INT32 && from != MT_INT64) return round_bf16(g, r);
    LLVMTypeRef types[2] = {LLVMTypeOf(v), ft}, fnty;
    LLVMValueRef fn = mt_cg_intrinsic(g, "llvm.fptosi.sat", types, 2, &fnty);
    LLVMValueRef back = LLVMBuildCall2(g->b, fnty, fn, &r, 1, "");
    LLVMValueRef gt = LLVMBuildICmp(g->b, LLVMIntSGT, back, v, "");
    LLVMValueRef lt = LLVMBuildICmp(g->b, LLVMIntSLT, back, v, "");
    LLVMValueRef ne = LLVMBuildICmp(g->b, LLVMIntNE, back, v, "");
    return round_bf16(g, to_odd(g, r, gt, lt, ne));
}

static LLVMValueRef gen_imm(mt_cg *g, const mt_texpr *e) {
    mt_dtype t = e->dtype;
    LLVMTypeRef ty = mt_cg_type(g, t);
    LLVMValueRef c;
    if (is_float(t)) {
        double v = e->kind == TE_FLOAT ? e->fval : (double)e->ival;
        if (t == MT_FLOAT16)
            c = LLVMBuildFPExt(g->b, LLVMConstReal(g->t_half, v), g->t_f32, "");
        else if (t == MT_BFLOAT16)
            c = LLVMConstReal(g->t_f32, mt_bf16_round(v));
        else
            c = LLVMConstReal(ty, v);
    } else {
        int64_t v = e->kind == TE_INT ? e->ival : (int64_t)e->fval;
        if (t == MT_BOOL) v = v != 0;
        c = LLVMConstInt(ty, (unsigned long long)v, is_sint(t));
    }
    return const_splat(g, c, e->lanes);
}

/* ---- intrinsics and library calls ------------------------------------------ */

LLVMValueRef mt_cg_intrinsic(mt_cg *g, const char *name, LLVMTypeRef *types, int n,
                             LLVMTypeRef *fnty) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) mt_ice("codegen: no LLVM intrinsic %s", name);
    *fnty = LLVMIntrinsicGetType(g->ctx, id, types, (size_t)n);
    return LLVMGetIntrinsicDeclaration(g->mod, id, types, (size_t)n);
}

/* llvm.<name>(args...) overloaded on the type of args[0]. */
static LLVMValueRef call_intrin(mt_cg *g, const char *name, LLVMValueRef *args, int nargs) {
    LLVMTypeRef t = LLVMTypeOf(args[0]), fnty;
    LLVMValueRef fn = mt_cg_intrinsic(g, name, &t, 1, &fnty);
    return LLVMBuildCall2(g->b, fnty, fn, args, (unsigned)nargs, "");
}

static void add_fn_attr(mt_cg *g, LLVMValueRef fn, const char *name, uint64_t val) {
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(g->ctx, kind, val));
}

/* A libm function T name(T), called once per lane. tanhf and erff do not
 * touch errno, so they are declared memory(none). */
static LLVMValueRef call_libm(mt_cg *g, const char *f32_name, const char *f64_name,
                              LLVMValueRef x) {
    LLVMTypeRef t = elem_type(x);
    const char *name = t == g->t_f64 ? f64_name : f32_name;
    LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
    LLVMTypeRef fnty = LLVMFunctionType(t, &t, 1, 0);
    if (!fn) {
        fn = LLVMAddFunction(g->mod, name, fnty);
        add_fn_attr(g, fn, "nounwind", 0);
        add_fn_attr(g, fn, "willreturn", 0);
        add_fn_attr(g, fn, "memory", 0); /* MemoryEffects::none() */
    }
    int n = mt_cg_lanes(x);
    if (n == 1) return LLVMBuildCall2(g->b, fnty, fn, &x, 1, "");
    LLVMValueRef out = LLVMGetPoison(LLVMTypeOf(x));
    for (int i = 0; i < n; i++) {
        LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned long long)i, 0);
        LLVMValueRef xi = LLVMBuildExtractElement(g->b, x, li, "");
        LLVMValueRef yi = LLVMBuildCall2(g->b, fnty, fn, &xi, 1, "");
        out = LLVMBuildInsertElement(g->b, out, yi, li, "");
    }
    return out;
}

/* ---- casts ----------------------------------------------------------------- */

LLVMValueRef mt_cg_cast(mt_cg *g, LLVMValueRef v, mt_dtype from, mt_dtype to) {
    if (from == to) return v;
    int n = mt_cg_lanes(v);
    LLVMTypeRef dst = mt_cg_vec_type(mt_cg_type(g, to), n);
    if (to == MT_BOOL) {
        if (is_float(from)) return LLVMBuildFCmp(g->b, LLVMRealUNE, v, const_like(g, v, 0), "");
        return LLVMBuildICmp(g->b, LLVMIntNE, v, const_like(g, v, 0), "");
    }
    if (!is_float(from) && !is_float(to)) {
        unsigned fw = LLVMGetIntTypeWidth(elem_type(v)), tw = LLVMGetIntTypeWidth(mt_cg_type(g, to));
        if (fw == tw) return v; /* int8 <-> uint8: same bits */
        if (fw > tw) return LLVMBuildTrunc(g->b, v, dst, "");
        return is_sint(from) ? LLVMBuildSExt(g->b, v, dst, "") : LLVMBuildZExt(g->b, v, dst, "");
    }
    if (to == MT_BFLOAT16) { /* one rounding from every dtype */
        if (!is_float(from)) return round_bf16_from_int(g, v, from, is_sint(from));
        if (from == MT_FLOAT64) return round_bf16_from_f64(g, v);
        return round_bf16(g, v); /* float32, float16 (computed in float32) */
    }
    if (!is_float(from)) { /* int -> float: to half directly, so one rounding */
        LLVMTypeRef t = to == MT_FLOAT16 ? mt_cg_vec_type(g->t_half, n) : dst;
        LLVMValueRef r = is_sint(from) ? LLVMBuildSIToFP(g->b, v, t, "")
                                       : LLVMBuildUIToFP(g->b, v, t, "");
        return to == MT_FLOAT16 ? LLVMBuildFPExt(g->b, r, dst, "") : r;
    }
    if (!is_float(to)) { /* float -> int, saturating */
        LLVMTypeRef types[2] = {dst, LLVMTypeOf(v)}, fnty;
        LLVMValueRef fn = mt_cg_intrinsic(g, is_sint(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat",
                                          types, 2, &fnty);
        return LLVMBuildCall2(g->b, fnty, fn, &v, 1, "");
    }
    /* float -> float */
    if (to == MT_FLOAT16) {
        if (from == MT_FLOAT32 || from == MT_BFLOAT16) return round_half(g, v);
        LLVMValueRef h = LLVMBuildFPTrunc(g->b, v, mt_cg_vec_type(g->t_half, n), "");
        return LLVMBuildFPExt(g->b, h, dst, "");
    }
    if (LLVMTypeOf(v) == dst) return v; /* float16, bfloat16 -> float32: already float */
    if (to == MT_FLOAT64) return LLVMBuildFPExt(g->b, v, dst, "");
    return LLVMBuildFPTrunc(g->b, v, dst, "");
}

/* ---- memory ---------------------------------------------------------------- */

static LLVMValueRef from_mem(mt_cg *g, LLVMValueRef v, mt_dtype t) {
    if (t == MT_BOOL) return LLVMBuildICmp(g->b, LLVMIntNE, v, const_like(g, v, 0), "");
    if (t == MT_FLOAT16)
        return LLVMBuildFPExt(g->b, v, mt_cg_vec_type(g->t_f32, mt_cg_lanes(v)), "");
    if (t == MT_BFLOAT16) return mt_cg_bf16_to_float(g, v);
    return v;
}

static LLVMValueRef to_mem(mt_cg *g, LLVMValueRef v, mt_dtype t) {
    int n = mt_cg_lanes(v);
    if (t == MT_BOOL) return LLVMBuildZExt(g->b, v, mt_cg_vec_type(g->t_i8, n), "");
    if (t == MT_FLOAT16) return LLVMBuildFPTrunc(g->b, v, mt_cg_vec_type(g->t_half, n), "");
    if (t == MT_BFLOAT16) return LLVMBuildTrunc(g->b, bf16_bits(g, v), mt_cg_vec_type(g->t_i16, n), "");
    return v;
}

static LLVMValueRef buf_base(mt_cg *g, const mt_tbuffer *buf, int nidx) {
    LLVMValueRef p = mt_cg_map_get(&g->bufs, buf);
    if (!p) mt_ice("codegen: buffer '%s' is neither a parameter nor allocated here", buf->name);
    if (nidx > 1)
        mt_ice("codegen: buffer '%s' accessed with %d indices: flatten_buffers must run first",
               buf->name, nidx);
    return p;
}

/* An index expression as i64 (scalar or vector). */
static LLVMValueRef gen_index(mt_cg *g, const mt_texpr *idx) {
    if (!mt_dtype_is_int(idx->dtype))
        mt_ice("codegen: buffer index of dtype %s", mt_dtype_str(idx->dtype));
    g->in_index++;
    LLVMValueRef v = mt_cg_expr(g, idx);
    g->in_index--;
    return mt_cg_cast(g, v, idx->dtype, MT_INT64);
}

static LLVMValueRef elem_ptr(mt_cg *g, LLVMTypeRef mem, LLVMValueRef base, LLVMValueRef i) {
    return LLVMBuildInBoundsGEP2(g->b, mem, base, &i, 1, "");
}

static bool is_unit_ramp(const mt_texpr *idx) {
    int64_t s;
    return idx->kind == TE_RAMP && mt_te_is_const_int(idx->b, &s) && s == 1;
}

static LLVMValueRef gen_load(mt_cg *g, const mt_texpr *e) {
    const mt_tbuffer *buf = e->buf;
    LLVMValueRef base = buf_base(g, buf, e->nargs);
    LLVMTypeRef mem = mt_cg_mem_type(g, buf->dtype);
    unsigned align = elem_align(buf->dtype);
    const mt_texpr *idx = e->nargs ? e->args[0] : NULL;
    LLVMValueRef v;
    if (!idx || idx->lanes == 1 || idx->kind == TE_BROADCAST) {
        LLVMValueRef i = idx ? gen_index(g, idx->kind == TE_BROADCAST ? idx->a : idx)
                             : LLVMConstInt(g->t_i64, 0, 0);
        v = LLVMBuildLoad2(g->b, mem, elem_ptr(g, mem, base, i), "");
        LLVMSetAlignment(v, align);
        v = from_mem(g, v, buf->dtype);
        return idx ? mt_cg_splat(g, v, idx->lanes) : v;
    }
    int n = idx->lanes;
    LLVMTypeRef vt = LLVMVectorType(mem, (unsigned)n);
    if (is_unit_ramp(idx)) {
        v = LLVMBuildLoad2(g->b, vt, elem_ptr(g, mem, base, gen_index(g, idx->a)), "");
        LLVMSetAlignment(v, align);
    } else {
        int64_t s;
        bool strided = idx->kind == TE_RAMP && mt_te_is_const_int(idx->b, &s);
        LLVMValueRef iv = gen_index(g, strided ? idx->a : idx);
        v = LLVMGetPoison(vt);
        for (int l = 0; l < n; l++) {
            LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned long long)l, 0);
            LLVMValueRef at = strided ? LLVMBuildAdd(g->b, iv, LLVMConstInt(g->t_i64, (unsigned long long)(s * l), 1), "")
                                      : LLVMBuildExtractElement(g->b, iv, li, "");
            LLVMValueRef x = LLVMBuildLoad2(g->b, mem, elem_ptr(g, mem, base, at), "");
            LLVMSetAlignment(x, align);
            v = LLVMBuildInsertElement(g->b, v, x, li, "");
        }
    }
    return from_mem(g, v, buf->dtype);
}

/* A read prefetch into L2 and up (locality 2 of 0-3: the prefetched line
 * is for a later pass, not the next few instructions), of the data cache.
 * A plain GEP, not inbounds: the address may lie outside the buffer, which
 * a prefetch may (it never faults). */
void mt_cg_prefetch(mt_cg *g, const mt_texpr *e) {
    const mt_texpr *x = mt_te_prefetched(e);
    if (!x || x->lanes != 1) return;
    LLVMValueRef base = buf_base(g, x->buf, x->nargs);
    LLVMValueRef i = x->nargs ? gen_index(g, x->args[0]) : LLVMConstInt(g->t_i64, 0, 0);
    LLVMValueRef p = LLVMBuildGEP2(g->b, mt_cg_mem_type(g, x->buf->dtype), base, &i, 1, "");
    LLVMTypeRef pt = LLVMTypeOf(p), fnty;
    LLVMValueRef fn = mt_cg_intrinsic(g, "llvm.prefetch", &pt, 1, &fnty);
    LLVMValueRef args[4] = {p, LLVMConstInt(g->t_i32, 0, 0), LLVMConstInt(g->t_i32, 2, 0),
                            LLVMConstInt(g->t_i32, 1, 0)};
    LLVMBuildCall2(g->b, fnty, fn, args, 4, "");
}

void mt_cg_store(mt_cg *g, const mt_tbuffer *buf, mt_texpr *const *idx_, int nidx,
                 LLVMValueRef v, mt_dtype vdtype) {
    LLVMValueRef base = buf_base(g, buf, nidx);
    LLVMTypeRef mem = mt_cg_mem_type(g, buf->dtype);
    unsigned align = elem_align(buf->dtype);
    const mt_texpr *idx = nidx ? idx_[0] : NULL;
    int n = idx ? idx->lanes : 1;
    if (mt_cg_lanes(v) > n)
        mt_ice("codegen: %d-lane value stored to '%s' at a %d-lane index", mt_cg_lanes(v),
               buf->name, n);
    v = to_mem(g, mt_cg_splat(g, mt_cg_cast(g, v, vdtype, buf->dtype), n), buf->dtype);
    LLVMValueRef st;
    if (n == 1) {
        LLVMValueRef i = idx ? gen_index(g, idx) : LLVMConstInt(g->t_i64, 0, 0);
        st = LLVMBuildStore(g->b, v, elem_ptr(g, mem, base, i));
        LLVMSetAlignment(st, align);
    } else if (is_unit_ramp(idx)) {
        LLVMValueRef p = elem_ptr(g, mem, base, gen_index(g, idx->a));
        if (mt_cg_stream_store(g, buf, p, v, n * (int)mt_dtype_size(buf->dtype))) return;
        st = LLVMBuildStore(g->b, v, p);
        LLVMSetAlignment(st, align);
    } else {
        LLVMValueRef iv = gen_index(g, idx);
        iv = mt_cg_splat(g, iv, n);
        for (int l = 0; l < n; l++) {
            LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned long long)l, 0);
            LLVMValueRef p = elem_ptr(g, mem, base, LLVMBuildExtractElement(g->b, iv, li, ""));
            st = LLVMBuildStore(g->b, LLVMBuildExtractElement(g->b, v, li, ""), p);
            LLVMSetAlignment(st, align);
        }
    }
}

/* ---- arithmetic ------------------------------------------------------------ */

/* Integer / (truncating), // and % (floor) with the guards described above. */
static LLVMValueRef gen_int_div(mt_cg *g, mt_texpr_kind k, bool sgn, LLVMValueRef x,
                                LLVMValueRef y) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef zero = const_like(g, y, 0), one = const_like(g, y, 1);
    LLVMValueRef isz = LLVMBuildICmp(b, LLVMIntEQ, y, zero, "");
    LLVMValueRef ism1 = NULL, bad = isz;
    if (sgn) {
        ism1 = LLVMBuildICmp(b, LLVMIntEQ, y, const_like(g, y, -1), "");
        bad = LLVMBuildOr(b, isz, ism1, "");
    }
    LLVMValueRef ys = LLVMBuildSelect(b, bad, one, y, "");
    if (!sgn) {
        /* y == 0 -> ys == 1: x / 1 == x must become 0; x % 1 == 0 already. */
        if (k == TE_FLOORMOD) return LLVMBuildURem(b, x, ys, "");
        return LLVMBuildSelect(b, isz, zero, LLVMBuildUDiv(b, x, ys, ""), "");
    }
    LLVMValueRef q = LLVMBuildSDiv(b, x, ys, ""), r = LLVMBuildSRem(b, x, ys, "");
    if (k != TE_DIV) {
        /* Floor: when the remainder is non-zero and its sign differs from the
         * divisor's, step the quotient down and the remainder by ys. */
        LLVMValueRef nz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
        LLVMValueRef diff = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, ys, ""), zero, "");
        LLVMValueRef adj = LLVMBuildAnd(b, nz, diff, "");
        if (k == TE_FLOORMOD) return LLVMBuildSelect(b, adj, LLVMBuildAdd(b, r, ys, ""), r, "");
        q = LLVMBuildSelect(b, adj, LLVMBuildSub(b, q, one, ""), q, "");
    }
    /* y == -1: quotient is -x (wrapping); y == 0: quotient 0. */
    q = LLVMBuildSelect(b, ism1, LLVMBuildSub(b, zero, x, ""), q, "");
    return LLVMBuildSelect(b, isz, zero, q, "");
}

static LLVMValueRef gen_arith(mt_cg *g, const mt_texpr *e) {
    mt_dtype t = e->a->dtype;
    LLVMValueRef x = mt_cg_expr(g, e->a), y = mt_cg_expr(g, e->b);
    int n = mt_cg_lanes(x) > mt_cg_lanes(y) ? mt_cg_lanes(x) : mt_cg_lanes(y);
    x = mt_cg_splat(g, x, n);
    y = mt_cg_splat(g, y, n);
    LLVMBuilderRef b = g->b;
    if (is_float(t)) {
        LLVMValueRef args[2] = {x, y}, q;
        switch (e->kind) {
        case TE_ADD: return LLVMBuildFAdd(b, x, y, "");
        case TE_SUB: return LLVMBuildFSub(b, x, y, "");
        case TE_MUL: return LLVMBuildFMul(b, x, y, "");
        case TE_DIV: return LLVMBuildFDiv(b, x, y, "");
        case TE_FLOORDIV:
        case TE_FLOORMOD:
            q = LLVMBuildFDiv(b, x, y, "");
            q = call_intrin(g, "llvm.floor", &q, 1);
            if (e->kind == TE_FLOORDIV) return q;
            return LLVMBuildFSub(b, x, LLVMBuildFMul(b, q, y, ""), "");
        case TE_MIN: return call_intrin(g, "llvm.minnum", args, 2);
        case TE_MAX: return call_intrin(g, "llvm.maxnum", args, 2);
        default: break;
        }
    } else {
        bool nsw = t == MT_INT64 && g->in_index > 0;
        bool sgn = is_sint(t);
        switch (e->kind) {
        case TE_ADD: return nsw ? LLVMBuildNSWAdd(b, x, y, "") : LLVMBuildAdd(b, x, y, "");
        case TE_SUB: return nsw ? LLVMBuildNSWSub(b, x, y, "") : LLVMBuildSub(b, x, y, "");
        case TE_MUL: return nsw ? LLVMBuildNSWMul(b, x, y, "") : LLVMBuildMul(b, x, y, "");
        case TE_DIV: case TE_FLOORDIV: case TE_FLOORMOD:
            return gen_int_div(g, e->kind, sgn, x, y);
        case TE_MIN:
        case TE_MAX: {
            LLVMIntPredicate p = e->kind == TE_MIN ? (sgn ? LLVMIntSLT : LLVMIntULT)
                                                   : (sgn ? LLVMIntSGT : LLVMIntUGT);
            return LLVMBuildSelect(b, LLVMBuildICmp(b, p, x, y, ""), x, y, "");
        }
        default: break;
        }
    }
    mt_ice("codegen: bad arithmetic kind %s", mt_texpr_kind_str(e->kind));
}

static LLVMValueRef gen_cmp(mt_cg *g, const mt_texpr *e) {
    mt_dtype t = e->a->dtype;
    LLVMValueRef x = mt_cg_expr(g, e->a), y = mt_cg_expr(g, e->b);
    int n = mt_cg_lanes(x) > mt_cg_lanes(y) ? mt_cg_lanes(x) : mt_cg_lanes(y);
    x = mt_cg_splat(g, x, n);
    y = mt_cg_splat(g, y, n);
    int k = e->kind - TE_EQ; /* EQ NE LT LE GT GE */
    if (is_float(t)) {
        static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                                LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        return LLVMBuildFCmp(g->b, fp[k], x, y, "");
    }
    static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT,
                                           LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT,
                                           LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    return LLVMBuildICmp(g->b, is_sint(t) ? sp[k] : up[k], x, y, "");
}

static LLVMValueRef gen_call(mt_cg *g, const mt_texpr *e) {
    LLVMValueRef args[3];
    int n = 1;
    if (e->nargs != mt_intrin_arity(e->intrin) || e->nargs > 3)
        mt_ice("codegen: T.%s with %d arguments", mt_intrin_name(e->intrin), e->nargs);
    for (int i = 0; i < e->nargs; i++) {
        args[i] = mt_cg_expr(g, e->args[i]);
        if (mt_cg_lanes(args[i]) > n) n = mt_cg_lanes(args[i]);
    }
    for (int i = 0; i < e->nargs; i++) args[i] = mt_cg_splat(g, args[i], n);
    mt_dtype t = e->args[0]->dtype;
    LLVMBuilderRef b = g->b;
    if (!is_float(t)) {
        switch (e->intrin) {
        case IN_ABS: {
            if (!is_sint(t)) return args[0];
            LLVMValueRef a2[2] = {args[0], LLVMConstInt(g->t_i1, 0, 0)};
            return call_intrin(g, "llvm.abs", a2, 2);
        }
        case IN_FLOOR: case IN_CEIL: case IN_ROUND: return args[0];
        default:
            mt_ice("codegen: T.%s on a %s operand (the float cast is missing)",
                   mt_intrin_name(e->intrin), mt_dtype_str(t));
        }
    }
    LLVMValueRef x = args[0], one = const_like(g, x, 1);
    if (elem_type(x) == g->t_f32) { /* float32 and float16: inline, vectorizable */
        switch (e->intrin) {
        case IN_EXP: return mt_cg_math_exp(g, x);
        case IN_LOG: return mt_cg_math_log(g, x);
        case IN_TANH: return mt_cg_math_tanh(g, x);
        case IN_SIGMOID: return mt_cg_math_sigmoid(g, x);
        case IN_ERF: return mt_cg_math_erf(g, x);
        default: break;
        }
    }
    switch (e->intrin) {
    case IN_EXP: return call_intrin(g, "llvm.exp", args, 1);
    case IN_LOG: return call_intrin(g, "llvm.log", args, 1);
    case IN_SQRT: return call_intrin(g, "llvm.sqrt", args, 1);
    case IN_RSQRT: return LLVMBuildFDiv(b, one, call_intrin(g, "llvm.sqrt", args, 1), "");
    case IN_SIN: return call_intrin(g, "llvm.sin", args, 1);
    case IN_COS: return call_intrin(g, "llvm.cos", args, 1);
    case IN_TANH: return call_libm(g, "tanhf", "tanh", x);
    case IN_ERF: return call_libm(g, "erff", "erf", x);
    case IN_SIGMOID: {
        LLVMValueRef nx = LLVMBuildFNeg(b, x, "");
        LLVMValueRef ex = call_intrin(g, "llvm.exp", &nx, 1);
        return LLVMBuildFDiv(b, one, LLVMBuildFAdd(b, one, ex, ""), "");
    }
    case IN_ABS: return call_intrin(g, "llvm.fabs", args, 1);
    case IN_FLOOR: return call_intrin(g, "llvm.floor", args, 1);
    case IN_CEIL: return call_intrin(g, "llvm.ceil", args, 1);
    case IN_ROUND: return call_intrin(g, "llvm.roundeven", args, 1);
    case IN_POW: return call_intrin(g, "llvm.pow", args, 2);
    case IN_FMA: return call_intrin(g, "llvm.fma", args, 3);
    default: break;
    }
    mt_ice("codegen: unknown intrinsic %d", (int)e->intrin);
}

static LLVMValueRef gen_ramp(mt_cg *g, const mt_texpr *e) {
    int n = e->lanes;
    LLVMValueRef base = mt_cg_expr(g, e->a), stride = mt_cg_expr(g, e->b);
    if (mt_cg_lanes(base) != 1 || mt_cg_lanes(stride) != 1)
        mt_ice("codegen: T.Ramp of vectors");
    LLVMTypeRef et = LLVMTypeOf(base);
    LLVMValueRef *iota = MT_NEW_ARRAY(g->arena, LLVMValueRef, n);
    for (int i = 0; i < n; i++) iota[i] = const_num(g, et, i, 1);
    LLVMValueRef io = LLVMConstVector(iota, (unsigned)n);
    LLVMValueRef bv = mt_cg_splat(g, base, n), sv = mt_cg_splat(g, stride, n);
    if (is_float(e->dtype))
        return LLVMBuildFAdd(g->b, bv, LLVMBuildFMul(g->b, sv, io, ""), "");
    if (e->dtype == MT_INT64 && g->in_index > 0)
        return LLVMBuildNSWAdd(g->b, bv, LLVMBuildNSWMul(g->b, sv, io, ""), "");
    return LLVMBuildAdd(g->b, bv, LLVMBuildMul(g->b, sv, io, ""), "");
}

/* ---- the dispatcher -------------------------------------------------------- */

/* T.Shuffle: a shufflevector of the one or two vectors (the second poison
 * when there is one), or an extractelement for a one-lane result. */
static LLVMValueRef gen_shuffle(mt_cg *g, const mt_texpr *e) {
    LLVMValueRef x = mt_cg_expr(g, e->args[0]);
    LLVMValueRef y = e->nargs > 1 ? mt_cg_expr(g, e->args[1]) : LLVMGetPoison(LLVMTypeOf(x));
    if (e->lanes == 1) {
        int w = e->args[0]->lanes, l = e->lane[0];
        return LLVMBuildExtractElement(g->b, l < w ? x : y, LLVMConstInt(g->t_i32, (unsigned)(l % w), 0), "");
    }
    LLVMValueRef mask[64];
    for (int i = 0; i < e->lanes; i++) mask[i] = LLVMConstInt(g->t_i32, (unsigned)e->lane[i], 0);
    return LLVMBuildShuffleVector(g->b, x, y, LLVMConstVector(mask, (unsigned)e->lanes), "");
}

LLVMValueRef mt_cg_expr(mt_cg *g, const mt_texpr *e) {
    LLVMBuilderRef b = g->b;
    switch (e->kind) {
    case TE_INT:
    case TE_FLOAT: return gen_imm(g, e);
    case TE_VAR: {
        LLVMValueRef v = mt_cg_map_get(&g->vars, e->var);
        if (!v) mt_ice("codegen: variable '%s' used outside its scope", e->var->name);
        return mt_cg_splat(g, v, e->lanes);
    }
    case TE_LOAD: return gen_load(g, e);
    case TE_ADD: case TE_SUB: case TE_MUL: case TE_DIV: case TE_FLOORDIV: case TE_FLOORMOD:
    case TE_MIN: case TE_MAX:
        return gen_arith(g, e);
    case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT: case TE_GE:
        return gen_cmp(g, e);
    case TE_AND:
    case TE_OR: {
        LLVMValueRef x = mt_cg_cast(g, mt_cg_expr(g, e->a), e->a->dtype, MT_BOOL);
        LLVMValueRef y = mt_cg_cast(g, mt_cg_expr(g, e->b), e->b->dtype, MT_BOOL);
        int n = mt_cg_lanes(x) > mt_cg_lanes(y) ? mt_cg_lanes(x) : mt_cg_lanes(y);
        x = mt_cg_splat(g, x, n);
        y = mt_cg_splat(g, y, n);
        return e->kind == TE_AND ? LLVMBuildAnd(b, x, y, "") : LLVMBuildOr(b, x, y, "");
    }
    case TE_NOT:
        return LLVMBuildNot(b, mt_cg_cast(g, mt_cg_expr(g, e->a), e->a->dtype, MT_BOOL), "");
    case TE_NEG: {
        LLVMValueRef x = mt_cg_expr(g, e->a);
        return is_float(e->a->dtype) ? LLVMBuildFNeg(b, x, "") : LLVMBuildNeg(b, x, "");
    }
    case TE_SELECT: {
        LLVMValueRef c = mt_cg_cast(g, mt_cg_expr(g, e->cond), e->cond->dtype, MT_BOOL);
        LLVMValueRef x = mt_cg_expr(g, e->a), y = mt_cg_expr(g, e->b);
        int n = mt_cg_lanes(x) > mt_cg_lanes(y) ? mt_cg_lanes(x) : mt_cg_lanes(y);
        if (mt_cg_lanes(c) > n) n = mt_cg_lanes(c);
        x = mt_cg_splat(g, x, n);
        y = mt_cg_splat(g, y, n);
        if (mt_cg_lanes(c) != 1) c = mt_cg_splat(g, c, n);
        return LLVMBuildSelect(b, c, x, y, "");
    }
    case TE_CAST: return mt_cg_cast(g, mt_cg_expr(g, e->a), e->a->dtype, e->dtype);
    case TE_CALL: return gen_call(g, e);
    case TE_RAMP: return gen_ramp(g, e);
    case TE_BROADCAST: return mt_cg_splat(g, mt_cg_expr(g, e->a), e->lanes);
    case TE_SHUFFLE: return gen_shuffle(g, e);
    default: break;
    }
    mt_ice("codegen: expression kind %d is not handled", (int)e->kind);
}
