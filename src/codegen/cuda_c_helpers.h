/*
 * cuda_c_helpers.h -- the device functions the CUDA C of codegen/cuda_c.c
 * may call, as text: each is printed once, before the kernels, when a
 * kernel calls it (internal to the codegen layer).
 */
#ifndef MT_CODEGEN_CUDA_C_HELPERS_H
#define MT_CODEGEN_CUDA_C_HELPERS_H

typedef enum helper {
    H_TRUNCDIV_I32, H_FLOORDIV_I32, H_FLOORMOD_I32,
    H_TRUNCDIV_I64, H_FLOORDIV_I64, H_FLOORMOD_I64,
    H_FLOORMOD_F32, H_FLOORMOD_F64,
    H_CVT_I8, H_CVT_U8, H_CVT_I32, H_CVT_I64,
    H_SIGMOID_F32, H_SIGMOID_F64,
    H_LOAD_FLOAT4, H_LOAD_FLOAT2, H_LOAD_INT4, H_LOAD_INT2, H_LOAD_DOUBLE2, H_LOAD_LONGLONG2,
    H_LOAD_HALF8, H_LOAD_BF16X8,
    H_STORE_FLOAT4, H_STORE_FLOAT2, H_STORE_INT4, H_STORE_INT2, H_STORE_DOUBLE2, H_STORE_LONGLONG2,
    H_STORE_HALF8, H_STORE_BF16X8,
    H_COUNT_
} helper;

/* The CUDA vector types the H_LOAD_* helpers read, in order (H_STORE_*
 * write them: VECTOR_TYPES helpers later). CUDA has none for 8 16-bit
 * floats: mt_half8 and mt_bf16x8 are the helpers' own, four pairs a, b,
 * c, d (__half2, __nv_bfloat162), moved as one uint4. */
enum { VECTOR_TYPES = H_STORE_FLOAT4 - H_LOAD_FLOAT4 };

extern const char *const mt_cu_helper_name[H_COUNT_]; /* the C name each helper defines */
extern const char *const mt_cu_helper_text[H_COUNT_]; /* its definition */
extern const char *const mt_cu_vec_type_name[VECTOR_TYPES];

#endif
