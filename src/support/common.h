/*
 * common.h -- small shared helpers: dtype facts, checked integer arithmetic.
 */
#ifndef MT_SUPPORT_COMMON_H
#define MT_SUPPORT_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"

#define MT_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static inline bool mt_dtype_is_float(mt_dtype t) {
    return t == MT_FLOAT16 || t == MT_BFLOAT16 || t == MT_FLOAT32 || t == MT_FLOAT64;
}
/* A 16-bit float, float16 or bfloat16: stored in 16 bits, computed in
 * float32 and rounded (to nearest even) where stored or cast to it. */
static inline bool mt_dtype_is_half(mt_dtype t) { return t == MT_FLOAT16 || t == MT_BFLOAT16; }
static inline bool mt_dtype_is_int(mt_dtype t) {
    return t == MT_INT8 || t == MT_UINT8 || t == MT_INT32 || t == MT_INT64;
}
/* A signed integer dtype (floats are neither signed nor unsigned integers). */
static inline bool mt_dtype_is_signed_int(mt_dtype t) {
    return t == MT_INT8 || t == MT_INT32 || t == MT_INT64;
}
/* ---- bfloat16 on the host ------------------------------------------------
 * A bfloat16 is the upper 16 bits of a float32 (sign, 8 exponent bits, 7
 * mantissa bits). Conversions to it round to nearest even, as CUDA's
 * __float2bfloat16_rn (cvt.rn.bf16.f32) does; overflow gives inf, float32
 * subnormals round like any other value (bfloat16 has float32's exponent
 * range), and every NaN becomes the canonical NaN 0x7fff (CUDA's too).
 * From float64 the value is rounded once: to float32 rounding to odd (the
 * inexact result's last bit set), then to nearest even -- the result of
 * rounding the double directly (CUDA's __double2bfloat16). The generated
 * code does the same with integer instructions (llvm_expr.c). */
static inline float mt_bf16_to_float(uint16_t h) {
    union { uint32_t u; float f; } x = {(uint32_t)h << 16};
    return x.f;
}
static inline uint16_t mt_bf16_from_float(float f) {
    union { float f; uint32_t u; } x = {f};
    if ((x.u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    return (uint16_t)((x.u + 0x7fffu + ((x.u >> 16) & 1u)) >> 16);
}
static inline uint16_t mt_bf16_from_double(double d) {
    union { float f; uint32_t u; } x = {(float)d};
    double back = (double)x.f;
    if (d != d || back == d) return mt_bf16_from_float(x.f);
    if ((d > 0 && back > d) || (d < 0 && back < d)) x.u--; /* toward zero */
    x.u |= 1u;                                              /* sticky: round to odd */
    return mt_bf16_from_float(x.f);
}
/* d rounded to the nearest bfloat16 (ties to even), as a double. */
static inline double mt_bf16_round(double d) { return (double)mt_bf16_to_float(mt_bf16_from_double(d)); }

/* Two devices are the same device. */
static inline bool mt_device_equal(mt_device x, mt_device y) { return x.type == y.type && x.id == y.id; }

/* "cpu", "cuda:1", "test:0" into buf (cap bytes); returns buf. The zero
 * device {0, 0} (the program's default device, graph/graph.h) is "default". */
const char *mt_device_name(mt_device d, char *buf, int cap);

static inline int mt_dtype_bits(mt_dtype t) { return (int)mt_dtype_size(t) * 8; }

/* The smallest and largest value of an integer or bool dtype (int64's for
 * any other dtype). */
static inline int64_t mt_dtype_min(mt_dtype t) {
    switch (t) {
    case MT_BOOL: case MT_UINT8: return 0;
    case MT_INT8: return INT8_MIN;
    case MT_INT32: return INT32_MIN;
    default: return INT64_MIN;
    }
}
static inline int64_t mt_dtype_max(mt_dtype t) {
    switch (t) {
    case MT_BOOL: return 1;
    case MT_INT8: return INT8_MAX;
    case MT_UINT8: return UINT8_MAX;
    case MT_INT32: return INT32_MAX;
    default: return INT64_MAX;
    }
}

/* v as an integer or bool dtype holds it, the way the generated code does:
 * truncated to the dtype's width and read back in its signedness (200 as
 * int8 is -56, 300 as uint8 is 44), bool as v != 0. */
static inline int64_t mt_int_wrap(mt_dtype t, uint64_t v) {
    switch (t) {
    case MT_BOOL: return v != 0;
    case MT_INT8: return (int8_t)(uint8_t)v;
    case MT_UINT8: return (uint8_t)v;
    case MT_INT32: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
    }
}

/* v truncated toward zero into int64_t, saturating at INT64_MIN/MAX, NaN as
 * 0: a plain cast of a double outside the range is undefined behaviour, and a
 * literal such as 1e308 reaches the compiler's constant folding. */
static inline int64_t mt_f64_to_i64(double v) {
    if (v != v) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v < -0x1p63) return INT64_MIN;
    return (int64_t)v;
}

/* a * b, false on int64 overflow. */
static inline bool mt_mul_ok(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* A fuzzing build (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, the libFuzzer
 * convention; CMake's MT_FUZZ sets it) divides the compiler's size limits
 * by MT_FUZZ_LIMIT_SCALE (the builder's op and statement counts, the points
 * transform_layout checks a map over): an input at a limit then costs a
 * sixteenth of the time, and the harnesses spend their executions on many
 * inputs instead of a few that reach the limit (seconds each under ASan).
 * The code paths are the same; only the numbers differ. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
enum { MT_FUZZ_LIMIT_SCALE = 16 };
#else
enum { MT_FUZZ_LIMIT_SCALE = 1 };
#endif

#endif
