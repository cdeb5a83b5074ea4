/*
 * cuda_c_expr.c -- TIR expressions as CUDA C (the printer's state and
 * names: cuda_c_internal.h, cuda_c.c).
 *
 * Expressions print with C precedence (parentheses only where needed,
 * comparison operands of comparisons always). Types: bool is bool, int8
 * signed char, uint8 unsigned char, int32 int, int64 long long, float32
 * float, float64 double; float16 is __half in memory and, as on the CPU,
 * computed in float: loads __half2float, stores __float2half_rn (round to
 * nearest even), and a float16 value is rounded only where it is stored,
 * cast to float16 or written as an immediate. bfloat16 likewise, as
 * __nv_bfloat16 (__bfloat162float, __float2bfloat16_rn: cvt.rn.bf16.f32 on
 * sm_80 on, which gives the CPU's bits: nearest even, NaN as 0x7fff).
 * The semantics are the CPU backend's (llvm_expr.c):
 *
 *  - int8/uint8 + - * / // and negation are wrapped back to 8 bits with a
 *    cast (C computes them in int). int32 and int64 + - * are plain C:
 *    they wrap on every GPU, but C calls signed overflow undefined.
 *  - int64 arithmetic is done in long long even between immediates (an
 *    immediate that would make an int-only operation gets LL).
 *  - Integer / (truncating), // and % (Python's floor) call helpers that
 *    give the CPU's results where C has none: x / 0 == x // 0 == x % 0 ==
 *    0, MIN / -1 == MIN // -1 == MIN. Float // is floor(a / b), % is
 *    a - floor(a / b) * b with each step rounded (__fmul_rn: never fused).
 *  - float min/max are fminf/fmaxf (a NaN operand is ignored), compares
 *    are C's (ordered, != unordered), select is `c ? a : b`.
 *  - float -> int casts truncate and saturate, NaN to 0 (helpers); -> bool
 *    is x != 0 (NaN is true); int -> float16 rounds once (__int2half_rn),
 *    and int or float64 -> bfloat16 too (__int2bfloat16_rn, __ll2bfloat16_rn,
 *    __double2bfloat16: through float rounded to odd, as the CPU does).
 *  - Intrinsics: expf, logf, sqrtf, 1.0f / sqrtf (rsqrt: rsqrtf is not
 *    correctly rounded), sinf, cosf, tanhf, erff, fabsf, floorf, ceilf,
 *    rintf (round half to even), powf, fmaf, and a sigmoid helper that is
 *    accurate in both tails; double versions for float64.
 *  - Immediates are exact: float32 as %.9g with f, float64 the shortest
 *    text that reads back, non-finite ones from their bits
 *    (__int_as_float(0x7f800000)); -0.0f keeps its sign.
 *
 * Where CUDA may still differ from the CPU: nvcc and NVRTC contract a * b
 * + c into an FMA unless compiled with --fmad=false (the CPU never fuses),
 * and CUDA's expf, logf, sinf, ... have other (small) errors than the CPU's
 * inline expansions; -use_fast_math changes more (division, sqrt,
 * denormals).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codegen/cuda_c_internal.h"
#include "support/cnum.h"
#include "support/common.h"
#include "tir/arith.h"

/* ---- types ------------------------------------------------------------------- */

/* The C type a value of dtype t is computed in. */
const char *mt_cu_ctype(mt_dtype t) {
    switch (t) {
    case MT_BOOL: return "bool";
    case MT_INT8: return "signed char";
    case MT_UINT8: return "unsigned char";
    case MT_INT32: return "int";
    case MT_INT64: return "long long";
    case MT_FLOAT16: case MT_BFLOAT16: case MT_FLOAT32: return "float";
    case MT_FLOAT64: return "double";
    default: mt_ice("cuda_c: unknown dtype %d", (int)t);
    }
}

/* The C type of a buffer element or a scalar param of dtype t. */
const char *mt_cu_mem_type(mt_cu *c, mt_dtype t) {
    if (t == MT_BFLOAT16) {
        c->bf16 = true;
        return "__nv_bfloat16";
    }
    if (t != MT_FLOAT16) return mt_cu_ctype(t);
    c->fp16 = true;
    return "__half";
}

/* The float value of a 16-bit float (dtype t) in memory: __half2float... */
static const char *to_float_fn(mt_dtype t) { return t == MT_BFLOAT16 ? "__bfloat162float" : "__half2float"; }

/* ---- immediates -------------------------------------------------------------- */

static mt_cu_form leaf(const char *text, int prec, bool ll) {
    mt_cu_form f = {0};
    f.prec = prec;
    f.ll = ll;
    f.pre = text;
    f.post = "";
    return f;
}

/* v rounded to the nearest half-precision value (ties to even), as a
 * float16 immediate holds it. */
static double round_half(double v) {
    double m = fabs(v);
    if (!isfinite(v) || m == 0) return v;
    if (m >= 65520.0) return copysign(INFINITY, v);
    int e;
    frexp(m, &e);                            /* m = f * 2^e, f in [0.5, 1) */
    double q = ldexp(1.0, (e - 1 < -14 ? -14 : e - 1) - 10); /* the spacing at m */
    double x = m / q, fl = floor(x), d = x - fl;
    double r = d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0) ? fl + 1 : fl;
    return copysign(r * q, v);
}

static mt_cu_form int_imm(mt_cu *c, mt_dtype t, int64_t v, bool force_ll) {
    if (t == MT_BOOL) return leaf(v ? "true" : "false", C_ATOM, false);
    v = mt_int_wrap(t, (uint64_t)v);
    if (t == MT_INT64 && v == INT64_MIN) return leaf("(-9223372036854775807LL - 1)", C_ATOM, true);
    if (t != MT_INT64 && v == INT32_MIN) return leaf("(-2147483647 - 1)", C_ATOM, false);
    bool ll = t == MT_INT64 && (force_ll || v <= INT32_MIN || v > INT32_MAX);
    return leaf(mt_arena_printf(c->a, "%lld%s", (long long)v, ll ? "LL" : ""),
                v < 0 ? C_UNARY : C_ATOM, ll);
}

/* A finite number's text with ".0" when it would read as an integer. */
static const char *num_text(mt_cu *c, const char *txt, const char *suffix) {
    bool plain = !strpbrk(txt, ".eE");
    return mt_arena_printf(c->a, "%s%s%s", txt, plain ? ".0" : "", suffix);
}

static mt_cu_form float_imm(mt_cu *c, mt_dtype t, double v) {
    char txt[40];
    if (t == MT_FLOAT64) {
        if (!isfinite(v)) {
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            const char *s = mt_arena_printf(c->a, "%s__longlong_as_double(0x%016llxLL)",
                                            bits >> 63 ? "-" : "",
                                            (unsigned long long)(bits & ~(1ULL << 63)));
            return leaf(s, bits >> 63 ? C_UNARY : C_ATOM, false);
        }
        for (int digits = 15; digits <= 17; digits++) {
            mt_c_snprintf(txt, sizeof txt, "%.*g", digits, v);
            if (mt_c_strtod(txt, NULL) == v) break;
        }
        return leaf(num_text(c, txt, ""), signbit(v) ? C_UNARY : C_ATOM, false);
    }
    float f = (float)(t == MT_FLOAT16 ? round_half(v) : t == MT_BFLOAT16 ? mt_bf16_round(v) : v);
    if (!isfinite(f)) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        const char *s = mt_arena_printf(c->a, "%s__int_as_float(0x%08x)", bits >> 31 ? "-" : "",
                                        (unsigned)(bits & 0x7fffffffu));
        return leaf(s, bits >> 31 ? C_UNARY : C_ATOM, false);
    }
    mt_c_snprintf(txt, sizeof txt, "%.9g", (double)f);
    return leaf(num_text(c, txt, "f"), signbit(f) ? C_UNARY : C_ATOM, false);
}

static mt_cu_form imm_form(mt_cu *c, const mt_texpr *e) {
    if (mt_dtype_is_float(e->dtype))
        return float_imm(c, e->dtype, e->kind == TE_FLOAT ? e->fval : (double)e->ival);
    int64_t v = e->kind == TE_INT ? e->ival : mt_f64_to_i64(e->fval);
    return int_imm(c, e->dtype, v, false);
}

/* ---- expression forms -------------------------------------------------------- */

static mt_cu_form form_of(mt_cu *c, const mt_texpr *e);

/* pre x post, x needing binding px. */
static mt_cu_form around(const char *pre, const mt_texpr *x, const char *post, int prec, int px) {
    mt_cu_form f = leaf(pre, prec, false);
    f.post = post;
    f.n = 1;
    f.kid[0] = x;
    f.kid_prec[0] = px;
    return f;
}

static mt_cu_form infix(const mt_texpr *x, const char *op, const mt_texpr *y, int prec, int px, int py) {
    mt_cu_form f = around("", x, "", prec, px);
    f.sep[0] = op;
    f.n = 2;
    f.kid[1] = y;
    f.kid_prec[1] = py;
    return f;
}

/* fn(args...). */
static mt_cu_form call(mt_cu *c, const char *fn, const mt_texpr *x, const mt_texpr *y, const mt_texpr *z) {
    mt_cu_form f = around(mt_arena_printf(c->a, "%s(", fn), x, ")", C_ATOM, 0);
    f.sep[0] = f.sep[1] = ", ";
    f.kid[1] = y;
    f.kid[2] = z;
    f.n = z ? 3 : y ? 2 : 1;
    return f;
}

static mt_cu_form call_helper(mt_cu *c, helper h, const mt_texpr *x, const mt_texpr *y) {
    c->used[h] = true;
    return call(c, mt_cu_helper_name[h], x, y, NULL);
}

/* f wrapped back into the 8-bit type t: "(signed char)(a + b)". */
static mt_cu_form wrap8(mt_cu *c, mt_cu_form f, mt_dtype t) {
    if (t != MT_INT8 && t != MT_UINT8) return f;
    bool paren = f.prec < C_ATOM;
    f.pre = mt_arena_printf(c->a, "(%s)%s%s", mt_cu_ctype(t), paren ? "(" : "", f.pre);
    f.post = mt_arena_printf(c->a, "%s%s", f.post, paren ? ")" : "");
    f.prec = C_UNARY;
    return f;
}

/* The conversion of a value of dtype t (computed as ctype(t)) to the
 * 16-bit float `to` (__half or __nv_bfloat16), rounded once. */
static const char *to_half_fn(mt_cu *c, mt_dtype t, mt_dtype to) {
    bool fromf = mt_dtype_is_half(t) || t == MT_FLOAT32;
    if (to == MT_BFLOAT16) {
        c->bf16 = true;
        if (fromf) return "__float2bfloat16_rn";
        if (t == MT_FLOAT64) return "__double2bfloat16";
        return t == MT_INT64 ? "__ll2bfloat16_rn" : "__int2bfloat16_rn";
    }
    c->fp16 = true;
    if (fromf) return "__float2half_rn";
    if (t == MT_FLOAT64) return "__double2half";
    return t == MT_INT64 ? "__ll2half_rn" : "__int2half_rn";
}

static helper cvt_helper(mt_dtype to) {
    switch (to) {
    case MT_INT8: return H_CVT_I8;
    case MT_UINT8: return H_CVT_U8;
    case MT_INT32: return H_CVT_I32;
    default: return H_CVT_I64;
    }
}

/* x (of dtype from) converted to dtype to, as mt_cg_cast does. */
mt_cu_form mt_cu_cast_form(mt_cu *c, const mt_texpr *x, mt_dtype from, mt_dtype to) {
    bool ffrom = mt_dtype_is_float(from);
    if (from == to || (mt_dtype_is_half(from) && to == MT_FLOAT32)) return form_of(c, x);
    if (to == MT_BOOL)
        return around("", x, from == MT_FLOAT64 ? " != 0.0" : ffrom ? " != 0.0f" : " != 0", C_EQ,
                      C_REL);
    if (mt_dtype_is_half(to))
        return around(mt_arena_printf(c->a, "%s(%s(", to_float_fn(to), to_half_fn(c, from, to)), x, "))",
                      C_ATOM, 0);
    if (mt_dtype_is_float(to))
        return around(to == MT_FLOAT64 ? "(double)" : "(float)", x, "", C_UNARY, C_UNARY);
    mt_cu_form f = ffrom ? call_helper(c, cvt_helper(to), x, NULL)
                   : around(mt_arena_printf(c->a, "(%s)", mt_cu_ctype(to)), x, "", C_UNARY, C_UNARY);
    f.ll = to == MT_INT64;
    return f;
}

/* The value v as an element of a buffer of dtype to. */
mt_cu_form mt_cu_store_form(mt_cu *c, const mt_texpr *v, mt_dtype to) {
    if (!mt_dtype_is_half(to)) return mt_cu_cast_form(c, v, v->dtype, to);
    if (v->kind == TE_LOAD && v->buf->dtype == to && v->nargs == 1) /* a copy: the __half itself */
        return around(mt_arena_printf(c->a, "%s[", mt_cu_name_of(c, v->buf, v->buf->name)), v->args[0], "]", C_ATOM, 0);
    if (v->kind == TE_VAR && mt_ptrmap_get(&c->half_params, v->var) == (int)to + 1) /* likewise */
        return leaf(mt_cu_name_of(c, v->var, v->var->name), C_ATOM, false);
    return around(mt_arena_printf(c->a, "%s(", to_half_fn(c, v->dtype, to)), v, ")", C_ATOM, 0);
}

static mt_cu_form var_form(mt_cu *c, const mt_tvar *v) {
    const char *n = mt_cu_name_of(c, v, v->name);
    int hp = mt_ptrmap_get(&c->half_params, v);
    if (hp) n = mt_arena_printf(c->a, "%s(%s)", to_float_fn((mt_dtype)(hp - 1)), n);
    return leaf(n, C_ATOM, v->dtype == MT_INT64);
}

static mt_cu_form load_form(mt_cu *c, const mt_texpr *e) {
    const mt_tbuffer *b = e->buf;
    if (e->nargs > 1)
        mt_ice("cuda_c: buffer '%s' accessed with %d indices: flatten_buffers must run first",
               b->name, e->nargs);
    if (e->nargs == 1 && !mt_dtype_is_int(e->args[0]->dtype))
        mt_ice("cuda_c: buffer index of dtype %s", mt_dtype_str(e->args[0]->dtype));
    bool half = mt_dtype_is_half(b->dtype);
    const char *n = mt_cu_name_of(c, b, b->name);
    const char *pre = mt_arena_printf(c->a, "%s%s%s[%s", half ? to_float_fn(b->dtype) : "", half ? "(" : "", n,
                                      e->nargs ? "" : "0");
    mt_cu_form f = e->nargs ? around(pre, e->args[0], half ? "])" : "]", C_ATOM, 0)
                      : leaf(mt_arena_printf(c->a, "%s]%s", pre, half ? ")" : ""), C_ATOM, false);
    f.ll = b->dtype == MT_INT64;
    return f;
}

/* + - * / // % min max on floats. */
static mt_cu_form float_arith(mt_cu *c, const mt_texpr *e) {
    bool d = e->a->dtype == MT_FLOAT64;
    switch (e->kind) {
    case TE_ADD: return infix(e->a, " + ", e->b, C_ADD, C_ADD, C_ADD + 1);
    case TE_SUB: return infix(e->a, " - ", e->b, C_ADD, C_ADD, C_ADD + 1);
    case TE_MUL: return infix(e->a, " * ", e->b, C_MUL, C_MUL, C_MUL + 1);
    case TE_DIV: return infix(e->a, " / ", e->b, C_MUL, C_MUL, C_MUL + 1);
    case TE_FLOORDIV: {
        mt_cu_form f = infix(e->a, " / ", e->b, C_ATOM, C_MUL, C_MUL + 1);
        f.pre = d ? "floor(" : "floorf(";
        f.post = ")";
        return f;
    }
    case TE_FLOORMOD: return call_helper(c, d ? H_FLOORMOD_F64 : H_FLOORMOD_F32, e->a, e->b);
    case TE_MIN: return call(c, d ? "fmin" : "fminf", e->a, e->b, NULL);
    case TE_MAX: return call(c, d ? "fmax" : "fmaxf", e->a, e->b, NULL);
    default: mt_ice("cuda_c: bad arithmetic kind %s", mt_texpr_kind_str(e->kind));
    }
}

/* Arithmetic on bool, as on i1: + and - are xor, * / // min are and. */
static mt_cu_form bool_arith(mt_cu *c, const mt_texpr *e) {
    switch (e->kind) {
    case TE_ADD: case TE_SUB: return infix(e->a, " != ", e->b, C_EQ, C_REL, C_REL);
    case TE_MUL: case TE_DIV: case TE_FLOORDIV: case TE_MIN:
        return infix(e->a, " && ", e->b, C_AND, C_EQ, C_EQ);
    case TE_MAX: return infix(e->a, " || ", e->b, C_OR, C_EQ, C_EQ);
    case TE_FLOORMOD: return leaf("false", C_ATOM, false);
    default: mt_ice("cuda_c: bad arithmetic kind %s", mt_texpr_kind_str(e->kind));
    }
}

static mt_cu_form int_div(mt_cu *c, const mt_texpr *e) {
    bool w = e->a->dtype == MT_INT64;
    helper h = e->kind == TE_DIV ? (w ? H_TRUNCDIV_I64 : H_TRUNCDIV_I32)
               : e->kind == TE_FLOORDIV ? (w ? H_FLOORDIV_I64 : H_FLOORDIV_I32)
                                        : (w ? H_FLOORMOD_I64 : H_FLOORMOD_I32);
    mt_cu_form f = call_helper(c, h, e->a, e->b);
    f.ll = w;
    return e->kind == TE_FLOORMOD ? f : wrap8(c, f, e->a->dtype);
}

static mt_cu_form int_arith(mt_cu *c, const mt_texpr *e) {
    mt_dtype t = e->a->dtype;
    mt_cu_form f;
    switch (e->kind) {
    case TE_ADD: f = infix(e->a, " + ", e->b, C_ADD, C_ADD, C_ADD + 1); break;
    case TE_SUB: f = infix(e->a, " - ", e->b, C_ADD, C_ADD, C_ADD + 1); break;
    case TE_MUL: f = infix(e->a, " * ", e->b, C_MUL, C_MUL, C_MUL + 1); break;
    case TE_DIV: case TE_FLOORDIV: case TE_FLOORMOD: return int_div(c, e);
    case TE_MIN: case TE_MAX:
        f = call(c, e->kind == TE_MIN ? "min" : "max", e->a, e->b, NULL);
        f.kid_ll[0] = f.kid_ll[1] = t == MT_INT64; /* min(long long, int) is ambiguous */
        f.ll = t == MT_INT64;
        return f;
    default: mt_ice("cuda_c: bad arithmetic kind %s", mt_texpr_kind_str(e->kind));
    }
    if (t == MT_INT64) { /* keep it in long long even between int immediates */
        f.kid_ll[0] = !form_of(c, e->a).ll && !form_of(c, e->b).ll;
        f.ll = true;
    }
    return wrap8(c, f, t);
}

static mt_cu_form arith_form(mt_cu *c, const mt_texpr *e) {
    if (mt_dtype_is_float(e->a->dtype)) return float_arith(c, e);
    return e->a->dtype == MT_BOOL ? bool_arith(c, e) : int_arith(c, e);
}

static mt_cu_form cmp_form(const mt_texpr *e) {
    static const char *const ops[] = {" == ", " != ", " < ", " <= ", " > ", " >= "};
    int prec = e->kind == TE_EQ || e->kind == TE_NE ? C_EQ : C_REL;
    return infix(e->a, ops[e->kind - TE_EQ], e->b, prec, C_ADD, C_ADD);
}

static mt_cu_form neg_form(mt_cu *c, const mt_texpr *e) {
    mt_dtype t = e->a->dtype;
    if (t == MT_BOOL) return form_of(c, e->a); /* -x == x on i1 */
    /* "-(-x)", never "--x" */
    int px = form_of(c, e->a).prec <= C_UNARY ? C_ATOM : C_UNARY;
    mt_cu_form f = around("-", e->a, "", C_UNARY, px);
    f.kid_ll[0] = f.ll = t == MT_INT64;
    return mt_dtype_is_float(t) ? f : wrap8(c, f, t);
}

static mt_cu_form select_form(const mt_texpr *e) {
    mt_cu_form f = infix(e->cond, " ? ", e->a, C_TERN, C_OR, C_OR);
    f.sep[1] = " : ";
    f.n = 3;
    f.kid[2] = e->b;
    f.kid_prec[2] = C_OR;
    if (e->dtype == MT_INT64) f.ll = f.kid_ll[1] = true;
    return f;
}

/* An intrinsic on integers: abs, or floor/ceil/round (the value itself). */
static mt_cu_form int_call(mt_cu *c, const mt_texpr *e) {
    const mt_texpr *x = e->args[0];
    mt_dtype t = x->dtype;
    if (e->intrin == IN_FLOOR || e->intrin == IN_CEIL || e->intrin == IN_ROUND ||
        (e->intrin == IN_ABS && !mt_dtype_is_signed_int(t)))
        return form_of(c, x);
    if (e->intrin != IN_ABS)
        mt_ice("cuda_c: T.%s on a %s operand (the float cast is missing)",
               mt_intrin_name(e->intrin), mt_dtype_str(t));
    mt_cu_form f = call(c, t == MT_INT64 ? "llabs" : "abs", x, NULL, NULL);
    f.ll = t == MT_INT64;
    return wrap8(c, f, t);
}

/* T.shfl_xor(v, m, w): every lane of the warp takes part (the verifier's
 * rule: no thread-dependent guard around it, whole warps in the block),
 * so the mask is the full warp's. float16 and bfloat16 values are computed
 * in float. */
static mt_cu_form shfl_form(mt_cu *c, const mt_texpr *e) {
    const char *post = mt_arena_printf(c->a, ", %lld, %lld)", (long long)e->args[1]->ival,
                                       (long long)e->args[2]->ival);
    mt_cu_form f = around("__shfl_xor_sync(0xffffffffu, ", e->args[0], post, C_ATOM, 0);
    f.ll = f.kid_ll[0] = e->dtype == MT_INT64;
    return f;
}

static mt_cu_form call_form(mt_cu *c, const mt_texpr *e) {
    if (e->intrin == IN_SHFL_XOR && e->nargs == 3) return shfl_form(c, e);
    static const char *const f32[IN_COUNT_] = {
        [IN_EXP] = "expf", [IN_LOG] = "logf", [IN_SQRT] = "sqrtf", [IN_SIN] = "sinf",
        [IN_COS] = "cosf", [IN_TANH] = "tanhf", [IN_ERF] = "erff", [IN_ABS] = "fabsf",
        [IN_FLOOR] = "floorf", [IN_CEIL] = "ceilf", [IN_ROUND] = "rintf", [IN_POW] = "powf",
        [IN_FMA] = "fmaf"};
    static const char *const f64[IN_COUNT_] = {
        [IN_EXP] = "exp", [IN_LOG] = "log", [IN_SQRT] = "sqrt", [IN_SIN] = "sin",
        [IN_COS] = "cos", [IN_TANH] = "tanh", [IN_ERF] = "erf", [IN_ABS] = "fabs",
        [IN_FLOOR] = "floor", [IN_CEIL] = "ceil", [IN_ROUND] = "rint", [IN_POW] = "pow",
        [IN_FMA] = "fma"};
    if ((unsigned)e->intrin >= IN_COUNT_ || e->nargs != mt_intrin_arity(e->intrin) || e->nargs > 3)
        mt_ice("cuda_c: intrinsic %d with %d arguments", (int)e->intrin, e->nargs);
    if (!mt_dtype_is_float(e->args[0]->dtype)) return int_call(c, e);
    bool d = e->args[0]->dtype == MT_FLOAT64;
    if (e->intrin == IN_RSQRT) /* 1 / sqrt, as on the CPU: rsqrtf is approximate */
        return around(d ? "1.0 / sqrt(" : "1.0f / sqrtf(", e->args[0], ")", C_MUL, 0);
    if (e->intrin == IN_SIGMOID)
        return call_helper(c, d ? H_SIGMOID_F64 : H_SIGMOID_F32, e->args[0], NULL);
    const char *fn = (d ? f64 : f32)[e->intrin];
    if (!fn) mt_ice("cuda_c: unknown intrinsic %d", (int)e->intrin);
    return call(c, fn, e->args[0], e->nargs > 1 ? e->args[1] : NULL,
                e->nargs > 2 ? e->args[2] : NULL);
}

/* How e prints. */
static mt_cu_form form_of(mt_cu *c, const mt_texpr *e) {
    if (e->lanes != 1 || e->kind == TE_RAMP || e->kind == TE_BROADCAST)
        mt_ice("cuda_c: a %d-lane %s: vectors are not printed for the GPU", e->lanes,
               mt_texpr_kind_str(e->kind));
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return imm_form(c, e);
    case TE_VAR: return var_form(c, e->var);
    case TE_SHUFFLE: return form_of(c, mt_cu_lane(c, e, 0)); /* one lane of its vectors */
    case TE_LOAD: return load_form(c, e);
    case TE_ADD: case TE_SUB: case TE_MUL: case TE_DIV: case TE_FLOORDIV: case TE_FLOORMOD:
    case TE_MIN: case TE_MAX:
        return arith_form(c, e);
    case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT: case TE_GE: return cmp_form(e);
    case TE_AND: return infix(e->a, " && ", e->b, C_AND, C_AND, C_EQ);
    case TE_OR: return infix(e->a, " || ", e->b, C_OR, C_OR, C_EQ);
    case TE_NOT: return around("!", e->a, "", C_UNARY, C_UNARY);
    case TE_NEG: return neg_form(c, e);
    case TE_SELECT: return select_form(e);
    case TE_CAST: return mt_cu_cast_form(c, e->a, e->a->dtype, e->dtype);
    case TE_CALL: return call_form(c, e);
    default: mt_ice("cuda_c: expression kind %d is not handled", (int)e->kind);
    }
}

/* ---- printing expressions ---------------------------------------------------- */

/* A kid needing binding min; as a long long when ll. */
static void put_kid(mt_cu *c, const mt_texpr *e, int min, bool ll) {
    mt_cu_form f = form_of(c, e);
    if (!ll || f.ll) {
        mt_cu_put_form(c, &f, min);
        return;
    }
    if (e->kind == TE_INT) {
        f = int_imm(c, e->dtype, e->ival, true);
        mt_cu_put_form(c, &f, min);
        return;
    }
    bool paren = min > C_UNARY;
    mt_sb_puts(&c->sb, paren ? "((long long)" : "(long long)");
    mt_cu_put_form(c, &f, C_UNARY);
    if (paren) mt_sb_putc(&c->sb, ')');
}

void mt_cu_put_form(mt_cu *c, const mt_cu_form *f, int min) {
    bool paren = f->prec < min;
    if (paren) mt_sb_putc(&c->sb, '(');
    mt_sb_puts(&c->sb, f->pre);
    for (int i = 0; i < f->n; i++) {
        if (i) mt_sb_puts(&c->sb, f->sep[i - 1]);
        put_kid(c, f->kid[i], f->kid_prec[i], f->kid_ll[i]);
    }
    mt_sb_puts(&c->sb, f->post);
    if (paren) mt_sb_putc(&c->sb, ')');
}

void mt_cu_put_expr(mt_cu *c, const mt_texpr *e, int min) {
    mt_cu_form f = form_of(c, e);
    mt_cu_put_form(c, &f, min);
}
