/*
 * cuda_c_helpers.c -- the device functions the CUDA C may call
 * (cuda_c_helpers.h): Python's integer division and modulo, saturating
 * float-to-int conversions and the sigmoid, with the CPU backend's
 * semantics (codegen/cuda_c_expr.c), and the vector loads and stores that
 * check their address's alignment (codegen/cuda_c_mem.c).
 */
#include "codegen/cuda_c_helpers.h"

const char *const mt_cu_helper_name[H_COUNT_] = {
    "mt_truncdiv_i32", "mt_floordiv_i32", "mt_floormod_i32",
    "mt_truncdiv_i64", "mt_floordiv_i64", "mt_floormod_i64",
    "mt_floormod_f32", "mt_floormod_f64",
    "mt_cvt_i8", "mt_cvt_u8", "mt_cvt_i32", "mt_cvt_i64",
    "mt_sigmoid_f32", "mt_sigmoid_f64",
    "mt_load_float4", "mt_load_float2", "mt_load_int4", "mt_load_int2", "mt_load_double2",
    "mt_load_longlong2", "mt_load_half8", "mt_load_bf16x8",
    "mt_store_float4", "mt_store_float2", "mt_store_int4", "mt_store_int2", "mt_store_double2",
    "mt_store_longlong2", "mt_store_half8", "mt_store_bf16x8",
};

const char *const mt_cu_vec_type_name[VECTOR_TYPES] = {"float4", "float2", "int4",    "int2",
                                                        "double2", "longlong2", "mt_half8", "mt_bf16x8"};

#define DEV "static __device__ __forceinline__ "

#define TRUNCDIV(T, U, S)                                                              \
    "/* a / b on " #T ", truncating; x / 0 == 0 and MIN / -1 == MIN (as on the CPU). */\n" \
    DEV #T " mt_truncdiv_" S "(" #T " a, " #T " b) {\n"                                 \
    "    return b == 0 ? 0 : b == -1 ? (" #T ")(0 - (" #U ")a) : a / b;\n"               \
    "}\n"
#define FLOORDIV(T, U, S)                                                              \
    "/* Python's a // b on " #T ": toward -inf; x // 0 == 0, MIN // -1 == MIN. */\n"      \
    DEV #T " mt_floordiv_" S "(" #T " a, " #T " b) {\n"                                 \
    "    if (b == 0) return 0;\n"                                                      \
    "    if (b == -1) return (" #T ")(0 - (" #U ")a);\n"                                \
    "    " #T " q = a / b, r = a % b;\n"                                               \
    "    return r != 0 && (r ^ b) < 0 ? q - 1 : q;\n"                                  \
    "}\n"
#define FLOORMOD(T, S)                                                                 \
    "/* Python's a % b on " #T ": the sign of b; x % 0 == 0. */\n"                      \
    DEV #T " mt_floormod_" S "(" #T " a, " #T " b) {\n"                                 \
    "    if (b == 0 || b == -1) return 0;\n"                                           \
    "    " #T " r = a % b;\n"                                                          \
    "    return r != 0 && (r ^ b) < 0 ? r + b : r;\n"                                  \
    "}\n"
#define CVT(T, S, HI, MAX, LO, MIN)                                                    \
    "/* float to " S ": truncated, saturating, NaN to 0 (as on the CPU). */\n"          \
    DEV #T " mt_cvt_" S "(float x) {\n"                                                 \
    "    return x != x ? 0 : x >= " HI "f ? " MAX " : x < " LO "f ? " MIN " : (" #T ")x;\n" \
    "}\n"                                                                              \
    DEV #T " mt_cvt_" S "(double x) {\n"                                                \
    "    return x != x ? 0 : x >= " HI " ? " MAX " : x < " LO " ? " MIN " : (" #T ")x;\n" \
    "}\n"

#define VEC_LOAD(T, V, BYTES, MASK, LOADS)                                                \
    "/* *p as one " #V " where p is " #BYTES "-byte aligned, else element by element. */\n"    \
    DEV #V " mt_load_" #V "(const " #T " *p) {\n"                                             \
    "    if (((unsigned long long)p & " #MASK ") == 0) return *(const " #V " *)p;\n"         \
    "    " #V " v;\n" LOADS "    return v;\n"                                                \
    "}\n"
#define VEC_STORE(T, V, BYTES, MASK, STORES)                                                \
    "/* *p = v as one " #V " where p is " #BYTES "-byte aligned, else element by element. */\n" \
    DEV "void mt_store_" #V "(" #T " *p, " #V " v) {\n"                                     \
    "    if (((unsigned long long)p & " #MASK ") == 0) {\n"                                 \
    "        *(" #V " *)p = v;\n"                                                          \
    "        return;\n"                                                                   \
    "    }\n" STORES "}\n"
/* 8 16-bit floats (H: __half or __nv_bfloat16, H2 its pair type) as four
 * pairs, defined once whichever helper comes first; the aligned path moves
 * them as one uint4 (one 128-bit access: a struct of pairs copied whole
 * becomes four 32-bit ones in nvcc 13). */
#define VEC8_TYPE(V, S, H2)                                                                    \
    "#ifndef MT_" S "_DEFINED\n#define MT_" S "_DEFINED\n"                               \
    "struct __align__(16) " #V " { " #H2 " a, b, c, d; };\n#endif\n"
#define VEC8_LOAD(H, H2, V, S, PAIR)                                                           \
    VEC8_TYPE(V, S, H2)                                                                        \
    "/* *p as one uint4 where p is 16-byte aligned, else element by element. */\n"          \
    DEV #V " mt_load_" S "(const " #H " *p) {\n"                                           \
    "    " #V " v;\n"                                                                      \
    "    if (((unsigned long long)p & 15) == 0) {\n"                                       \
    "        const uint4 u = *(const uint4 *)p;\n"                                         \
    "        v.a = *(const " #H2 " *)&u.x;\n        v.b = *(const " #H2 " *)&u.y;\n"        \
    "        v.c = *(const " #H2 " *)&u.z;\n        v.d = *(const " #H2 " *)&u.w;\n"        \
    "        return v;\n"                                                                  \
    "    }\n"                                                                              \
    "    v.a = " PAIR "(p[0], p[1]);\n    v.b = " PAIR "(p[2], p[3]);\n"                    \
    "    v.c = " PAIR "(p[4], p[5]);\n    v.d = " PAIR "(p[6], p[7]);\n"                    \
    "    return v;\n"                                                                      \
    "}\n"
#define VEC8_STORE(H, H2, V, S)                                                                \
    VEC8_TYPE(V, S, H2)                                                                        \
    "/* *p = v as one uint4 where p is 16-byte aligned, else element by element. */\n"      \
    DEV "void mt_store_" S "(" #H " *p, " #V " v) {\n"                                     \
    "    if (((unsigned long long)p & 15) == 0) {\n"                                       \
    "        uint4 u;\n"                                                                   \
    "        u.x = *(const unsigned *)&v.a;\n        u.y = *(const unsigned *)&v.b;\n"      \
    "        u.z = *(const unsigned *)&v.c;\n        u.w = *(const unsigned *)&v.d;\n"      \
    "        *(uint4 *)p = u;\n"                                                           \
    "        return;\n"                                                                    \
    "    }\n"                                                                              \
    "    p[7] = v.d.y;\n    p[6] = v.d.x;\n    p[5] = v.c.y;\n    p[4] = v.c.x;\n"           \
    "    p[3] = v.b.y;\n    p[2] = v.b.x;\n    p[1] = v.a.y;\n    p[0] = v.a.x;\n"           \
    "}\n"
#define LOAD4 "    v.x = p[0];\n    v.y = p[1];\n    v.z = p[2];\n    v.w = p[3];\n"
#define LOAD2 "    v.x = p[0];\n    v.y = p[1];\n"
/* The stores of the unaligned path go last element first: in field order,
 * NVVM sinks the last one (the same address and value on both paths) out
 * of both, and the aligned path is then split into a v2 and two scalar
 * stores instead of one v4 (nvcc 13, sm_80 and sm_90). */
#define STORE4 "    p[3] = v.w;\n    p[2] = v.z;\n    p[1] = v.y;\n    p[0] = v.x;\n"
#define STORE2 "    p[1] = v.y;\n    p[0] = v.x;\n"

const char *const mt_cu_helper_text[H_COUNT_] = {
    TRUNCDIV(int, unsigned, "i32"),
    FLOORDIV(int, unsigned, "i32"),
    FLOORMOD(int, "i32"),
    TRUNCDIV(long long, unsigned long long, "i64"),
    FLOORDIV(long long, unsigned long long, "i64"),
    FLOORMOD(long long, "i64"),
    "/* Python's a % b on float: a - floor(a / b) * b, each step rounded (as on the CPU). */\n"
    DEV "float mt_floormod_f32(float a, float b) {\n"
    "    return __fsub_rn(a, __fmul_rn(floorf(__fdiv_rn(a, b)), b));\n"
    "}\n",
    "/* Python's a % b on double: a - floor(a / b) * b, each step rounded (as on the CPU). */\n"
    DEV "double mt_floormod_f64(double a, double b) {\n"
    "    return __dsub_rn(a, __dmul_rn(floor(__ddiv_rn(a, b)), b));\n"
    "}\n",
    CVT(signed char, "i8", "128.0", "127", "-128.0", "-128"),
    CVT(unsigned char, "u8", "256.0", "255", "0.0", "0"),
    CVT(int, "i32", "2147483648.0", "2147483647", "-2147483648.0", "(-2147483647 - 1)"),
    CVT(long long, "i64", "9223372036854775808.0", "9223372036854775807LL",
        "-9223372036854775808.0", "(-9223372036854775807LL - 1)"),
    "/* 1 / (1 + exp(-x)), accurate in both tails, never NaN for a number (as on the CPU). */\n"
    DEV "float mt_sigmoid_f32(float x) {\n"
    "    float e = expf(-fabsf(x)), s = 1.0f / (1.0f + e);\n"
    "    return x >= 0.0f ? s : e * s;\n"
    "}\n",
    "/* 1 / (1 + exp(-x)) (as on the CPU for float64). */\n"
    DEV "double mt_sigmoid_f64(double x) {\n"
    "    return 1.0 / (1.0 + exp(-x));\n"
    "}\n",
    VEC_LOAD(float, float4, 16, 15, LOAD4),
    VEC_LOAD(float, float2, 8, 7, LOAD2),
    VEC_LOAD(int, int4, 16, 15, LOAD4),
    VEC_LOAD(int, int2, 8, 7, LOAD2),
    VEC_LOAD(double, double2, 16, 15, LOAD2),
    VEC_LOAD(long long, longlong2, 16, 15, LOAD2),
    VEC8_LOAD(__half, __half2, mt_half8, "half8", "__halves2half2"),
    VEC8_LOAD(__nv_bfloat16, __nv_bfloat162, mt_bf16x8, "bf16x8", "__halves2bfloat162"),
    VEC_STORE(float, float4, 16, 15, STORE4),
    VEC_STORE(float, float2, 8, 7, STORE2),
    VEC_STORE(int, int4, 16, 15, STORE4),
    VEC_STORE(int, int2, 8, 7, STORE2),
    VEC_STORE(double, double2, 16, 15, STORE2),
    VEC_STORE(long long, longlong2, 16, 15, STORE2),
    VEC8_STORE(__half, __half2, mt_half8, "half8"),
    VEC8_STORE(__nv_bfloat16, __nv_bfloat162, mt_bf16x8, "bf16x8"),
};
