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
    return t == MT_FLOAT16 || t == MT_FLOAT32 || t == MT_FLOAT64;
}
static inline bool mt_dtype_is_int(mt_dtype t) {
    return t == MT_INT8 || t == MT_UINT8 || t == MT_INT32 || t == MT_INT64;
}
/* A signed integer dtype (floats are neither signed nor unsigned integers). */
static inline bool mt_dtype_is_signed_int(mt_dtype t) {
    return t == MT_INT8 || t == MT_INT32 || t == MT_INT64;
}
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

#endif
