/*
 * test_cuda_c.c -- src/codegen/cuda_c.c: GPU kernels (TIR) to CUDA C.
 *
 * Each test builds a kernel by hand in the form split_host_device makes
 * for a CUDA target (tir.h, "GPU kernels": loops bound to blockIdx and
 * threadIdx, a device function of kind "cuda_kernel" launched by a host
 * function), emits the translation unit with mt_cuda_c_emit, checks the
 * parts a GPU programmer reads (launch comment, signature, barriers,
 * conversions), and compiles the text with nvcc -c for sm_80 and sm_90.
 * nvcc is MT_NVCC, else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc;
 * without one the compile step skips the test (after its text checks). The
 * same text also goes through NVRTC when libnvrtc loads (not under the
 * sanitizers: NVRTC's own allocations would read as leaks).
 *
 * The elementwise kernel's whole text is golden: tests/golden/cuda_c/add.cu
 * (MT_UPDATE_GOLDEN=1 rewrites it; review the diff like code).
 * MT_SHOW_CUDA=1 prints every text. Helpers shared with test_cuda_c_gpu.c
 * are in cuda_c_util.h.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cuda_c_util.h"

/* The message of the internal error emitting k raises ("" when none). */
static const char *emit_error(mt_tfunc *k) {
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_cuda_c_emit(A, NULL, 0, &k, 1);
        mt_err_pop(&fr);
        return "";
    }
    mt_err_pop(&fr);
    assert_int_equal(fr.status, MT_ERR_INTERNAL);
    return mt_arena_strdup(A, fr.msg);
}

static int count(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

#define assert_has(text, needle)                                                       \
    do {                                                                               \
        if (!strstr((text), (needle)))                                                 \
            fail_msg("missing:\n%s\nin:\n%s", (needle), (text));                       \
    } while (0)
#define assert_lacks(text, needle)                                                     \
    do {                                                                               \
        if (strstr((text), (needle))) fail_msg("unexpected:\n%s\nin:\n%s", (needle), (text)); \
    } while (0)

/* ---- compiling the text ------------------------------------------------------- */

/* The text in a fresh file /tmp/mt_cuda_c_XXXXXX.cu (its name in path). */
static void write_temp(char *path, size_t cap, const char *text) {
    snprintf(path, cap, "/tmp/mt_cuda_c_XXXXXX.cu");
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* ---- NVRTC (dlopen'd; not under the sanitizers) ---- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MT_NO_NVRTC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MT_NO_NVRTC 1
#endif
#endif

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *,
                               const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_logsize_fn)(void *, size_t *);
typedef int (*nvrtc_log_fn)(void *, char *);
typedef int (*nvrtc_destroy_fn)(void **);

/* NVRTC compiles text for sm_arch, or the test fails; nothing when NVRTC
 * does not load. The include path is the toolkit's next to nvcc. */
static void nvrtc_ok(const char *text, const char *nvcc, int arch) {
#ifndef MT_NO_NVRTC
    static void *lib;
    if (!lib) lib = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    nvrtc_create_fn create = (nvrtc_create_fn)dlsym(lib, "nvrtcCreateProgram");
    nvrtc_compile_fn compile = (nvrtc_compile_fn)dlsym(lib, "nvrtcCompileProgram");
    nvrtc_logsize_fn logsize = (nvrtc_logsize_fn)dlsym(lib, "nvrtcGetProgramLogSize");
    nvrtc_log_fn getlog = (nvrtc_log_fn)dlsym(lib, "nvrtcGetProgramLog");
    nvrtc_destroy_fn destroy = (nvrtc_destroy_fn)dlsym(lib, "nvrtcDestroyProgram");
    if (!create || !compile || !logsize || !getlog || !destroy) return;
    const char *bin = strrchr(nvcc, '/');
    int dir = bin ? (int)(bin - nvcc) : 0;
    const char *opts[2] = {
        mt_arena_printf(A, "--gpu-architecture=sm_%d", arch),
        mt_arena_printf(A, "--include-path=%.*s/../include", dir, nvcc),
    };
    void *prog = NULL;
    assert_int_equal(create(&prog, text, "minitriton.cu", 0, NULL, NULL), 0);
    int rc = compile(prog, 2, opts);
    size_t n = 0;
    logsize(prog, &n);
    char *log = mt_arena_alloc(A, n + 1);
    getlog(prog, log);
    destroy(&prog);
    if (rc != 0) fail_msg("NVRTC (sm_%d) failed:\n%s\n--- source ---\n%s", arch, log, text);
#else
    (void)text, (void)nvcc, (void)arch;
#endif
}

/* nvcc -c compiles text for sm_80 and for sm_90 (and so does NVRTC), or
 * the test fails; without nvcc the test is skipped. */
static void compiles(const char *text) {
    if (getenv("MT_SHOW_CUDA")) printf("%s\n", text);
    const char *why = NULL;
    const char *nvcc = find_nvcc(&why);
    if (!nvcc) {
        printf("[  SKIPPED ] cannot compile CUDA: %s\n", why);
        skip();
    }
    char path[64];
    write_temp(path, sizeof path, text);
    static const int archs[] = {80, 90};
    for (int i = 0; i < 2; i++) {
        char *cmd = mt_arena_printf(A, "'%s' -c -arch=sm_%d -o '%s.o' '%s' > '%s.log' 2>&1", nvcc,
                                    archs[i], path, path, path);
        int rc = system(cmd);
        char *log = read_file(mt_arena_printf(A, "%s.log", path));
        unlink(mt_arena_printf(A, "%s.o", path));
        unlink(mt_arena_printf(A, "%s.log", path));
        if (rc != 0) {
            unlink(path);
            fail_msg("nvcc -c -arch=sm_%d failed (%d):\n%s\n--- source ---\n%s", archs[i], rc,
                     log ? log : "", text);
        }
        nvrtc_ok(text, nvcc, archs[i]);
    }
    unlink(path);
}

/* ---- golden text ---------------------------------------------------------------- */

static void golden(const char *name, const char *got) {
    const char *root = getenv("MT_SOURCE_DIR");
    char *path = mt_arena_printf(A, "%s/tests/golden/cuda_c/%s", root ? root : ".", name);
    if (getenv("MT_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
        printf("updated %s\n", path);
        return;
    }
    const char *want = read_file(path);
    if (!want) fail_msg("cannot read %s", path);
    if (strcmp(want, got) != 0)
        fail_msg("text differs from %s (MT_UPDATE_GOLDEN=1 rewrites it)\n--- got ---\n%s", path,
                 got);
}

/* ---- (1) elementwise add ------------------------------------------------------- */

static void test_elementwise(void **state) {
    (void)state;
    mt_tfunc *host, *k = add_kernel(&host);
    const char *s = emit1(host, k);
    assert_has(s, "\n// launch add_kernel0 grid=(mt_floordiv_i64(n + 255, 256), 1, 1) "
                  "block=(256, 1, 1) shared=0\n");
    assert_has(s, "extern \"C\" __global__ void __launch_bounds__(256) add_kernel0(const float "
                  "*__restrict__ a, const float *__restrict__ b, float *__restrict__ out, "
                  "long long n) {\n");
    assert_has(s, "    const long long bx = blockIdx.x;\n    const long long tx = threadIdx.x;\n");
    assert_has(s, "    if (bx * 256 + tx < n) {\n"
                  "        out[bx * 256 + tx] = a[bx * 256 + tx] + b[bx * 256 + tx];\n    }\n");
    assert_lacks(s, "__syncthreads");
    assert_lacks(s, "cuda_fp16");
    golden("add.cu", s);
    compiles(s);
}

/* ---- (2) block reduction --------------------------------------------------------- */

static void test_block_reduction(void **state) {
    (void)state;
    mt_tfunc *host, *k = reduce_kernel(&host);
    const char *s = emit1(host, k);
    assert_has(s, "// launch row_sum_kernel0 grid=(rows, 1, 1) block=(256, 1, 1) shared=0\n");
    assert_has(s, "__launch_bounds__(256) row_sum_kernel0(const float *__restrict__ a, "
                  "float *__restrict__ out, long long rows, long long m) {\n");
    assert_has(s, "\n    __shared__ __align__(16) float red[256];\n    float acc[1];\n");
    /* ten phases, a barrier between each two, none after the last */
    assert_int_equal(count(s, "const long long tx = threadIdx.x;"), 10);
    assert_int_equal(count(s, "__syncthreads();"), 9);
    assert_lacks(s, "tx_1"); /* each phase's index is `tx` again */
    assert_has(s, "    {\n        const long long tx = threadIdx.x;\n        acc[0] = 0.0f;\n");
    assert_has(s, "        const long long k_end = mt_floordiv_i64(m + 255, 256);\n"
                  "        for (long long k = 0; k < k_end; ++k) {\n"
                  "            if (k * 256 + tx < m) {\n"
                  "                acc[0] = acc[0] + a[bx * m + (k * 256 + tx)];\n");
    assert_has(s, "            red[tx] = red[tx] + red[tx + 128];\n");
    assert_has(s, "    }\n    __syncthreads();\n    {\n        const long long tx = threadIdx.x;\n"
                  "        if (tx < 64) {\n");
    /* the last phase is the end of the kernel: no braces, no barrier */
    assert_has(s, "    __syncthreads();\n    const long long tx = threadIdx.x;\n"
                  "    if (tx == 0) {\n        out[bx] = red[0];\n    }\n}\n");
    compiles(s);
}

/* Phases in a serial loop get their barrier even at the end of the kernel;
 * a phase that is not the whole rest of its block gets a block of its own;
 * a threadIdx loop narrower than the block is guarded. */
static void test_phase_in_loop(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64);
    mt_tbuffer *x = buf1("x", MT_FLOAT32, I(128));
    mt_tbuffer *sh = local("sh", MT_FLOAT32, 128, MT_SCOPE_SHARED);
    mt_tvar *bx = var("bx", MT_INT64), *it = var("it", MT_INT64);
    mt_tvar *t1 = var("t", MT_INT64), *t2 = var("t", MT_INT64);
    mt_tstmt *p1 = bound(t1, I(128), "threadIdx.x", st(sh, V(t1), ld(x, V(t1))));
    mt_tstmt *p2 = bound(t2, I(64), "threadIdx.x",
                         st(x, V(t2), bin(TE_ADD, ld(sh, V(t2)), ld(sh, bin(TE_ADD, V(t2), I(64))))));
    mt_tstmt *body = mt_ts_alloc(A, sh, loop(it, V(n), seq(2, p1, p2)));
    body = bound(bx, I(1), "blockIdx.x", body);
    mt_tfunc *k = kernel("iterate0", &x, 1, &n, 1, body);
    mt_tfunc *host = host_of(k, NULL, 0, launch(k, I(1), I(128)));
    const char *s = emit1(host, k);
    assert_int_equal(count(s, "__syncthreads();"), 2);
    assert_has(s, "    __shared__ __align__(16) float sh[128];\n"
                  "    for (long long it = 0; it < n; ++it) {\n"
                  "        {\n"
                  "            const long long t = threadIdx.x;\n"
                  "            sh[t] = x[t];\n"
                  "        }\n"
                  "        __syncthreads();\n"
                  "        const long long t = threadIdx.x;\n"
                  "        if (t < 64) {\n"
                  "            x[t] = sh[t] + sh[t + 64];\n"
                  "        }\n"
                  "        __syncthreads();\n"
                  "    }\n}\n");
    compiles(s);
}

/* ---- (3) float16 ------------------------------------------------------------------- */

static void test_float16(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64), *scale = var("scale", MT_FLOAT16);
    mt_tbuffer *x = buf1("x", MT_FLOAT16, V(n)), *y = buf1("y", MT_FLOAT16, V(n));
    mt_tbuffer *z = buf1("z", MT_FLOAT32, V(n));
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64), *e = var("e", MT_FLOAT16);
    mt_texpr *i = bin(TE_ADD, bin(TE_MUL, V(bx), I(256)), V(tx));
    /* e = exp(x[i]) * scale (float16, computed in float); y[i] = e + 0.1;
     * z[i] = float16(float32(e) * 3.0) */
    mt_tstmt *st_y = st(y, i, bin(TE_ADD, V(e), mt_te_float(A, MT_FLOAT16, 0.1)));
    mt_tstmt *st_z = st(z, i, mt_te_cast(A, MT_FLOAT16,
                                          bin(TE_MUL, mt_te_cast(A, MT_FLOAT32, V(e)), F32(3))));
    mt_tstmt *body = mt_ts_let(A, e, bin(TE_MUL, call1(IN_EXP, ld(x, i)), V(scale)),
                               seq(2, st_y, st_z));
    body = mt_ts_if(A, bin(TE_LT, i, V(n)), body, NULL);
    body = bound(bx, ceil256(V(n)), "blockIdx.x", bound(tx, I(256), "threadIdx.x", body));
    mt_tbuffer *bufs[] = {x, y, z};
    mt_tvar *vars[] = {n, scale};
    mt_tfunc *k = kernel("exp_half0", bufs, 3, vars, 2, body);
    const char *s = emit1(NULL, k);
    assert_has(s, "#include <cuda_fp16.h>\n");
    assert_has(s, "// launch exp_half0 (not launched)\n");
    assert_has(s, "extern \"C\" __global__ void exp_half0(const __half *__restrict__ x, "
                  "__half *__restrict__ y, float *__restrict__ z, long long n, __half scale) {\n");
    assert_has(s, "const float e = expf(__half2float(x[bx * 256 + tx])) * __half2float(scale);\n");
    assert_has(s, "y[bx * 256 + tx] = __float2half_rn(e + 0.0999755859f);\n");
    assert_has(s, "z[bx * 256 + tx] = __half2float(__float2half_rn(e * 3.0f));\n");
    compiles(s);
}

/* bfloat16: __nv_bfloat16 in memory (cuda_bf16.h), computed in float; the
 * conversions round once from float64 and int64 (__double2bfloat16,
 * __ll2bfloat16_rn), a bfloat16 copy moves the bits, a bfloat16 immediate
 * is rounded to bfloat16 (0.1 -> 0.100097656). */
static void test_bfloat16(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64), *scale = var("scale", MT_BFLOAT16);
    mt_tbuffer *x = buf1("x", MT_BFLOAT16, V(n)), *y = buf1("y", MT_BFLOAT16, V(n));
    mt_tbuffer *z = buf1("z", MT_FLOAT32, V(n)), *d = buf1("d", MT_FLOAT64, V(n));
    mt_tbuffer *q = buf1("q", MT_INT64, V(n)), *h = buf1("h", MT_FLOAT16, V(n)), *w = buf1("w", MT_BFLOAT16, V(n));
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64), *e = var("e", MT_BFLOAT16);
    mt_texpr *i = bin(TE_ADD, bin(TE_MUL, V(bx), I(256)), V(tx));
    mt_tstmt *st_y = st(y, i, bin(TE_ADD, V(e), mt_te_float(A, MT_BFLOAT16, 0.1)));
    mt_tstmt *st_z = st(z, i, mt_te_cast(A, MT_BFLOAT16,
                                          bin(TE_MUL, mt_te_cast(A, MT_FLOAT32, V(e)), F32(3))));
    mt_tstmt *st_d = st(d, i, mt_te_cast(A, MT_FLOAT64, mt_te_cast(A, MT_BFLOAT16, ld(d, i))));
    mt_tstmt *st_q = st(z, i, mt_te_cast(A, MT_FLOAT32, mt_te_cast(A, MT_BFLOAT16, ld(q, i))));
    mt_tstmt *st_h = st(h, i, mt_te_cast(A, MT_FLOAT16, ld(x, i)));
    mt_tstmt *st_w = st(w, i, ld(x, i));
    mt_tstmt *body = mt_ts_let(A, e, bin(TE_MUL, call1(IN_EXP, ld(x, i)), V(scale)),
                               seq(6, st_y, st_z, st_d, st_q, st_h, st_w));
    body = mt_ts_if(A, bin(TE_LT, i, V(n)), body, NULL);
    body = bound(bx, ceil256(V(n)), "blockIdx.x", bound(tx, I(256), "threadIdx.x", body));
    mt_tbuffer *bufs[] = {x, y, z, d, q, h, w};
    mt_tvar *vars[] = {n, scale};
    mt_tfunc *k = kernel("exp_bf16", bufs, 7, vars, 2, body);
    const char *s = emit1(NULL, k);
    assert_has(s, "#include <cuda_bf16.h>\n");
    assert_has(s, "const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, ");
    assert_has(s, "__nv_bfloat16 scale) {\n");
    assert_has(s, "const float e = expf(__bfloat162float(x[bx * 256 + tx])) * __bfloat162float(scale);\n");
    assert_has(s, "y[bx * 256 + tx] = __float2bfloat16_rn(e + 0.100097656f);\n");
    assert_has(s, "z[bx * 256 + tx] = __bfloat162float(__float2bfloat16_rn(e * 3.0f));\n");
    assert_has(s, "__double2bfloat16(d[bx * 256 + tx])");
    assert_has(s, "__ll2bfloat16_rn(q[bx * 256 + tx])");
    assert_has(s, "__float2half_rn(__bfloat162float(x[bx * 256 + tx]))");
    assert_has(s, "w[bx * 256 + tx] = x[bx * 256 + tx];\n");
    compiles(s);
}

/* ---- (4) integers: floor division, select, min/max, casts ---------------------------- */

static void test_integers(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_INT64, V(n)), *b = buf1("b", MT_INT64, V(n));
    mt_tbuffer *f = buf1("f", MT_FLOAT32, V(n)), *d = buf1("d", MT_FLOAT64, V(n));
    mt_tbuffer *q = buf1("q", MT_INT32, V(n)), *c8 = buf1("c8", MT_INT8, V(n));
    mt_tbuffer *u8 = buf1("u8", MT_UINT8, V(n));
    mt_tbuffer *o = buf1("o", MT_INT64, bin(TE_MUL, V(n), I(8)));
    mt_tbuffer *o8 = buf1("o8", MT_INT8, V(n)), *ou = buf1("ou", MT_UINT8, V(n));
    mt_tbuffer *oq = buf1("oq", MT_INT32, V(n)), *ob = buf1("ob", MT_BOOL, V(n));
    mt_tbuffer *of = buf1("of", MT_FLOAT32, V(n));
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64), *i = var("i", MT_INT64);
    mt_texpr *ai = ld(a, V(i)), *bi = ld(b, V(i));
    mt_texpr *oi = bin(TE_MUL, V(i), I(8));
    mt_texpr *q32 = ld(q, V(i)), *c = ld(c8, V(i)), *u = ld(u8, V(i));
    mt_tstmt *stores[] = {
        st(o, oi, bin(TE_FLOORDIV, ai, bi)),
        st(o, bin(TE_ADD, oi, I(1)), bin(TE_FLOORMOD, ai, bi)),
        st(o, bin(TE_ADD, oi, I(2)), mt_te_select(A, bin(TE_LT, ai, bi), ai, bin(TE_DIV, ai, I(-3)))),
        st(o, bin(TE_ADD, oi, I(3)), bin(TE_MIN, ai, bin(TE_MAX, bi, I(3)))),
        st(o, bin(TE_ADD, oi, I(4)), mt_te_cast(A, MT_INT64, ld(f, V(i)))),
        st(o, bin(TE_ADD, oi, I(5)), bin(TE_ADD, mt_te_cast(A, MT_INT64, q32),
                                         bin(TE_MUL, I(3000000), I(1000000)))),
        st(o, bin(TE_ADD, oi, I(6)), bin(TE_SUB, mt_te_unary(A, TE_NEG, ai), I(INT64_MIN))),
        st(o, bin(TE_ADD, oi, I(7)), mt_te_select(A, bin(TE_GE, ai, I(0)), I(1), I(-1))),
        st(o8, V(i), bin(TE_ADD, c, mt_te_int(A, MT_INT8, 100))),
        st(o8, V(i), bin(TE_FLOORDIV, c, mt_te_int(A, MT_INT8, -1))),
        st(ou, V(i), bin(TE_SUB, u, mt_te_int(A, MT_UINT8, 200))),
        st(oq, V(i), bin(TE_FLOORMOD, q32, mt_te_int(A, MT_INT32, 7))),
        st(oq, V(i), mt_te_cast(A, MT_INT32, ld(d, V(i)))),
        st(oq, V(i), bin(TE_MIN, q32, mt_te_cast(A, MT_INT32, c))),
        st(ob, V(i), bin(TE_AND, bin(TE_NE, ai, bi), mt_te_unary(A, TE_NOT, bin(TE_LT, q32, mt_te_int(A, MT_INT32, 0))))),
        st(ob, V(i), mt_te_cast(A, MT_BOOL, ld(f, V(i)))),
        st(of, V(i), bin(TE_FLOORMOD, ld(f, V(i)), F32(2.5))),
        st(of, V(i), mt_te_cast(A, MT_FLOAT32, bin(TE_FLOORDIV, ld(d, V(i)), mt_te_float(A, MT_FLOAT64, 0.5)))),
        st(of, V(i), mt_te_cast(A, MT_FLOAT32, u)),
        st(o8, V(i), mt_te_cast(A, MT_INT8, ld(f, V(i)))),
        st(ou, V(i), mt_te_cast(A, MT_UINT8, ld(d, V(i)))),
    };
    mt_tstmt *body = mt_ts_let(A, i, bin(TE_ADD, bin(TE_MUL, V(bx), I(64)), V(tx)),
                               mt_ts_if(A, bin(TE_LT, V(i), V(n)),
                                        mt_ts_seq(A, stores, MT_ARRAY_LEN(stores)), NULL));
    body = bound(bx, bin(TE_FLOORDIV, bin(TE_ADD, V(n), I(63)), I(64)), "blockIdx.x",
                 bound(tx, I(64), "threadIdx.x", body));
    mt_tbuffer *bufs[] = {a, b, f, d, q, c8, u8, o, o8, ou, oq, ob, of};
    mt_tfunc *k = kernel("ints0", bufs, MT_ARRAY_LEN(bufs), &n, 1, body);
    const char *s = emit1(NULL, k);
    assert_has(s, "long long mt_floordiv_i64(long long a, long long b) {\n");
    assert_has(s, "long long mt_floormod_i64(long long a, long long b) {\n");
    assert_has(s, "o[i * 8] = mt_floordiv_i64(a[i], b[i]);\n");
    assert_has(s, "o[i * 8 + 1] = mt_floormod_i64(a[i], b[i]);\n");
    assert_has(s, "o[i * 8 + 2] = a[i] < b[i] ? a[i] : mt_truncdiv_i64(a[i], -3);\n");
    assert_has(s, "o[i * 8 + 3] = min(a[i], max(b[i], 3LL));\n");
    assert_has(s, "o[i * 8 + 4] = mt_cvt_i64(f[i]);\n");
    assert_has(s, "o[i * 8 + 5] = (long long)q[i] + 3000000LL * 1000000;\n");
    assert_has(s, "o[i * 8 + 6] = -a[i] - (-9223372036854775807LL - 1);\n");
    assert_has(s, "o[i * 8 + 7] = a[i] >= 0 ? 1LL : -1;\n");
    assert_has(s, "o8[i] = (signed char)(c8[i] + 100);\n");
    assert_has(s, "o8[i] = (signed char)mt_floordiv_i32(c8[i], -1);\n");
    assert_has(s, "ou[i] = (unsigned char)(u8[i] - 200);\n");
    assert_has(s, "oq[i] = mt_floormod_i32(q[i], 7);\n");
    assert_has(s, "oq[i] = mt_cvt_i32(d[i]);\n");
    assert_has(s, "oq[i] = min(q[i], (int)c8[i]);\n");
    assert_has(s, "ob[i] = a[i] != b[i] && !(q[i] < 0);\n");
    assert_has(s, "ob[i] = f[i] != 0.0f;\n");
    assert_has(s, "of[i] = mt_floormod_f32(f[i], 2.5f);\n");
    assert_has(s, "of[i] = (float)floor(d[i] / 0.5);\n");
    assert_has(s, "of[i] = (float)u8[i];\n");
    assert_has(s, "o8[i] = mt_cvt_i8(f[i]);\n");
    assert_has(s, "ou[i] = mt_cvt_u8(d[i]);\n");
    assert_has(s, "const long long i = bx * 64 + tx;\n");
    /* only the helpers used */
    assert_lacks(s, "mt_sigmoid");
    assert_lacks(s, "mt_truncdiv_i32");
    compiles(s);
}

/* ---- (5) every intrinsic --------------------------------------------------------------- */

static void test_intrinsics(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64);
    mt_tbuffer *x = buf1("x", MT_FLOAT32, V(n)), *xd = buf1("xd", MT_FLOAT64, V(n));
    mt_tbuffer *xh = buf1("xh", MT_FLOAT16, V(n)), *xi = buf1("xi", MT_INT32, V(n));
    mt_tbuffer *y = buf1("y", MT_FLOAT32, V(n)), *yd = buf1("yd", MT_FLOAT64, V(n));
    mt_tbuffer *yh = buf1("yh", MT_FLOAT16, V(n)), *yi = buf1("yi", MT_INT32, V(n));
    mt_tvar *tx = var("tx", MT_INT64), *bx = var("bx", MT_INT64);
    mt_tstmt *stores[3 * IN_COUNT_ + 4];
    int ns = 0;
    mt_tbuffer *ins[] = {x, xd, xh}, *outs[] = {y, yd, yh};
    for (int t = 0; t < 3; t++) {
        for (int fn = 0; fn < IN_MATH_COUNT_; fn++) {
            mt_texpr *args[3];
            for (int k = 0; k < 3; k++) args[k] = ld(ins[t], V(tx));
            stores[ns++] = st(outs[t], V(tx), mt_te_call(A, (mt_intrin)fn, args,
                                                        mt_intrin_arity((mt_intrin)fn)));
        }
    }
    mt_intrin int_fns[] = {IN_ABS, IN_FLOOR, IN_CEIL, IN_ROUND};
    for (int k = 0; k < 4; k++) stores[ns++] = st(yi, V(tx), call1(int_fns[k], ld(xi, V(tx))));
    mt_tstmt *body = bound(bx, I(1), "blockIdx.x",
                           bound(tx, I(32), "threadIdx.x", mt_ts_seq(A, stores, ns)));
    mt_tbuffer *bufs[] = {x, xd, xh, xi, y, yd, yh, yi};
    mt_tfunc *k = kernel("intrinsics0", bufs, 8, &n, 1, body);
    const char *s = emit1(NULL, k);
    static const char *const want[] = {
        "y[tx] = expf(x[tx]);", "y[tx] = logf(x[tx]);", "y[tx] = sqrtf(x[tx]);",
        "y[tx] = 1.0f / sqrtf(x[tx]);", "y[tx] = sinf(x[tx]);", "y[tx] = cosf(x[tx]);",
        "y[tx] = tanhf(x[tx]);", "y[tx] = mt_sigmoid_f32(x[tx]);", "y[tx] = erff(x[tx]);",
        "y[tx] = fabsf(x[tx]);", "y[tx] = floorf(x[tx]);", "y[tx] = ceilf(x[tx]);",
        "y[tx] = rintf(x[tx]);", "y[tx] = powf(x[tx], x[tx]);",
        "y[tx] = fmaf(x[tx], x[tx], x[tx]);",
        "yd[tx] = exp(xd[tx]);", "yd[tx] = 1.0 / sqrt(xd[tx]);", "yd[tx] = mt_sigmoid_f64(xd[tx]);",
        "yd[tx] = rint(xd[tx]);", "yd[tx] = fma(xd[tx], xd[tx], xd[tx]);",
        "yh[tx] = __float2half_rn(tanhf(__half2float(xh[tx])));",
        "yh[tx] = __float2half_rn(mt_sigmoid_f32(__half2float(xh[tx])));",
        "yi[tx] = abs(xi[tx]);", "yi[tx] = xi[tx];",
    };
    for (int w = 0; w < MT_ARRAY_LEN(want); w++) assert_has(s, want[w]);
    assert_int_equal(count(s, "yi[tx] = xi[tx];"), 3);
    compiles(s);
}

/* Warp shuffles: __shfl_xor_sync over the full warp, of each dtype
 * (float16 computed in float, int64 as long long). */
static void test_shuffles(void **state) {
    (void)state;
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_INT32, MT_INT64};
    mt_tbuffer *xs[5], *ys[5];
    mt_tstmt *stores[5];
    mt_tvar *tx = var("tx", MT_INT64);
    for (int k = 0; k < 5; k++) {
        xs[k] = buf1(mt_arena_printf(A, "x%d", k), dts[k], I(64));
        ys[k] = buf1(mt_arena_printf(A, "y%d", k), dts[k], I(64));
        stores[k] = st(ys[k], V(tx), mt_te_shfl_xor(A, ld(xs[k], V(tx)), 16 >> k, 32));
    }
    mt_tstmt *body = bound(var("bx", MT_INT64), I(1), "blockIdx.x",
                           bound(tx, I(64), "threadIdx.x", mt_ts_seq(A, stores, 5)));
    mt_tbuffer *bufs[] = {xs[0], xs[1], xs[2], xs[3], xs[4], ys[0], ys[1], ys[2], ys[3], ys[4]};
    const char *s = emit1(NULL, kernel("shfl0", bufs, 10, NULL, 0, body));
    static const char *const want[] = {
        "y0[tx] = __shfl_xor_sync(0xffffffffu, x0[tx], 16, 32);",
        "y1[tx] = __shfl_xor_sync(0xffffffffu, x1[tx], 8, 32);",
        "y2[tx] = __float2half_rn(__shfl_xor_sync(0xffffffffu, __half2float(x2[tx]), 4, 32));",
        "y3[tx] = __shfl_xor_sync(0xffffffffu, x3[tx], 2, 32);",
        "y4[tx] = __shfl_xor_sync(0xffffffffu, x4[tx], 1, 32);",
    };
    for (int w = 0; w < MT_ARRAY_LEN(want); w++) assert_has(s, want[w]);
    compiles(s);
}

/* ---- immediates, names, other forms ------------------------------------------------------ */

static void test_immediates(void **state) {
    (void)state;
    mt_tbuffer *y = buf1("y", MT_FLOAT32, I(16)), *yd = buf1("yd", MT_FLOAT64, I(16));
    mt_tbuffer *yh = buf1("yh", MT_FLOAT16, I(16));
    mt_tvar *tx = var("tx", MT_INT64);
    double f32s[] = {INFINITY, -INFINITY, NAN, -0.0, 1e-45, 3.4028234663852886e38, 0.1, 16777217.0};
    double f64s[] = {-INFINITY, 0.1, -0.0, 5e-324, 1e300};
    mt_tstmt *stores[32];
    int ns = 0;
    for (int k = 0; k < MT_ARRAY_LEN(f32s); k++) stores[ns++] = st(y, I(k), F32(f32s[k]));
    for (int k = 0; k < MT_ARRAY_LEN(f64s); k++)
        stores[ns++] = st(yd, I(k), mt_te_float(A, MT_FLOAT64, f64s[k]));
    stores[ns++] = st(yh, I(0), mt_te_float(A, MT_FLOAT16, 65519.0));
    stores[ns++] = st(yh, I(1), mt_te_float(A, MT_FLOAT16, 65520.0));
    stores[ns++] = st(yh, I(2), mt_te_float(A, MT_FLOAT16, 3e-8));
    stores[ns++] = st(y, I(9), mt_te_unary(A, TE_NEG, mt_te_unary(A, TE_NEG, F32(2))));
    stores[ns++] = st(y, I(10), bin(TE_SUB, F32(1), F32(-2)));
    mt_tstmt *body = bound(tx, I(1), "threadIdx.x", mt_ts_seq(A, stores, ns));
    body = bound(var("bx", MT_INT64), I(1), "blockIdx.x", body);
    mt_tbuffer *bufs[] = {y, yd, yh};
    mt_tfunc *k = kernel("imms0", bufs, 3, NULL, 0, body);
    const char *s = emit1(NULL, k);
    static const char *const want[] = {
        "y[0] = __int_as_float(0x7f800000);", "y[1] = -__int_as_float(0x7f800000);",
        "y[2] = __int_as_float(0x7fc00000);", "y[3] = -0.0f;", "y[4] = 1.40129846e-45f;",
        "y[5] = 3.40282347e+38f;", "y[6] = 0.100000001f;", "y[7] = 16777216.0f;",
        "yd[0] = -__longlong_as_double(0x7ff0000000000000LL);", "yd[1] = 0.1;", "yd[2] = -0.0;",
        "yd[3] = 4.94065645841247e-324;", "yd[4] = 1e+300;",
        "yh[0] = __float2half_rn(65504.0f);", "yh[1] = __float2half_rn(__int_as_float(0x7f800000));",
        "yh[2] = __float2half_rn(5.96046448e-08f);", "y[9] = -(-2.0f);", "y[10] = 1.0f - -2.0f;",
    };
    for (int w = 0; w < MT_ARRAY_LEN(want); w++) assert_has(s, want[w]);
    compiles(s);
}

/* TIR names that repeat, are C keywords, CUDA builtins or called functions. */
static void test_names(void **state) {
    (void)state;
    mt_tvar *n = var("int", MT_INT64), *v1 = var("exp", MT_FLOAT32), *v2 = var("exp", MT_FLOAT32);
    mt_tbuffer *a1 = buf1("a", MT_FLOAT32, V(n)), *a2 = buf1("a", MT_FLOAT32, V(n));
    mt_tbuffer *kw = buf1("float", MT_FLOAT32, V(n)), *odd = buf1("0x.y", MT_FLOAT32, V(n));
    mt_tbuffer *tmp = local("__tmp", MT_FLOAT32, 4, MT_SCOPE_LOCAL);
    mt_tvar *tx = var("threadIdx", MT_INT64), *bx = var("min", MT_INT64);
    mt_tstmt *inner = mt_ts_let(A, v2, bin(TE_ADD, V(v1), ld(tmp, I(0))),
                                seq(2, st(kw, bin(TE_ADD, V(tx), V(bx)), V(v2)), st(odd, V(tx), call1(IN_EXP, V(v2)))));
    mt_tstmt *body = mt_ts_let(A, v1, bin(TE_MUL, ld(a1, V(tx)), ld(a2, V(tx))),
                               seq(2, st(tmp, I(0), V(v1)), inner));
    body = mt_ts_alloc(A, tmp, body);
    body = bound(bx, I(1), "blockIdx.x", bound(tx, I(32), "threadIdx.x", body));
    mt_tbuffer *bufs[] = {a1, a2, kw, odd};
    mt_tfunc *k = kernel("float", bufs, 4, &n, 1, body);
    mt_tfunc *host = host_of(k, NULL, 0, launch(k, I(1), I(32)));
    const char *s = emit1(host, k);
    assert_has(s, "// launch float_1 grid=(1, 1, 1) block=(32, 1, 1) shared=0\n");
    assert_has(s, "__launch_bounds__(32) float_1(const float *__restrict__ a, const float "
                  "*__restrict__ a_1, float *__restrict__ float_2, float *__restrict__ v0x_y, "
                  "long long int_1) {\n");
    assert_has(s, "const long long min_1 = blockIdx.x;\n");
    assert_has(s, "const long long threadIdx_1 = threadIdx.x;\n");
    assert_has(s, "float _tmp[4];\n");
    assert_has(s, "const float exp_1 = a[threadIdx_1] * a_1[threadIdx_1];\n");
    assert_has(s, "const float exp_2 = exp_1 + _tmp[0];\n");
    assert_has(s, "v0x_y[threadIdx_1] = expf(exp_2);\n");
    compiles(s);
}

/* A let bound twice in one block (an unrolled body shares its nodes), an
 * unrolled loop, an if/else chain, an evaluate, a bool param, several
 * kernels, a parallel body (ignored), a kernel launched twice. */
static void test_statements(void **state) {
    (void)state;
    mt_tvar *n = var("n", MT_INT64), *flag = var("flag", MT_BOOL), *t = var("t", MT_FLOAT32);
    mt_tbuffer *x = buf1("x", MT_FLOAT32, V(n));
    mt_tvar *tx = var("tx", MT_INT64), *u = var("u", MT_INT64), *j = var("j", MT_INT64);
    mt_tstmt *let = mt_ts_let(A, t, ld(x, V(tx)), st(x, V(tx), bin(TE_MUL, V(t), V(t))));
    mt_tstmt *unrolled = mt_ts_for(A, u, I(0), I(4), MT_FOR_UNROLLED, st(x, V(u), F32(1)));
    mt_tstmt *ifs = mt_ts_if(A, V(flag), st(x, I(0), F32(1)),
                             mt_ts_if(A, bin(TE_GT, V(n), I(3)), st(x, I(1), F32(2)),
                                      st(x, I(2), F32(3))));
    mt_tstmt *ranged = mt_ts_for(A, j, V(tx), bin(TE_SUB, V(n), V(tx)), MT_FOR_SERIAL,
                                 mt_ts_eval(A, call1(IN_EXP, ld(x, V(j)))));
    mt_tstmt *body = bound(tx, I(32), "threadIdx.x", seq(5, let, let, unrolled, ifs, ranged));
    body = bound(var("bx", MT_INT64), I(2), "blockIdx.x", body);
    mt_tvar *vars[] = {n, flag};
    mt_tfunc *k1 = kernel("first", &x, 1, vars, 2, body);
    mt_tfunc *k2 = kernel("second", &x, 1, vars, 2, body);
    mt_tfunc *par = mt_tfunc_new(A, "cpu_par0");
    mt_tfunc_set_attr(A, par, MT_ATTR_KIND, MT_KIND_PARALLEL_BODY);
    mt_tstmt *l1 = launch(k1, I(2), I(32)), *l2 = launch(k1, I(4), I(32));
    l1->launch->grid[1] = V(n);
    l1->launch->shared_bytes = I(1024);
    mt_tfunc *host = host_of(k1, &n, 1, seq(2, l1, l2));
    mt_tfunc *dev[] = {k1, par, k2};
    const char *s = emit(&host, 1, dev, 3);
    assert_has(s, "// launch first grid=(2, n, 1) block=(32, 1, 1) shared=1024\n");
    assert_has(s, "// launch second (not launched)\n");
    assert_lacks(s, "cpu_par0");
    assert_has(s, "__launch_bounds__(32) first(float *__restrict__ x, long long n, bool flag)");
    assert_has(s, "extern \"C\" __global__ void second(float *__restrict__ x, long long n, "
                  "bool flag)");
    assert_has(s, "    const float t = x[tx];\n    x[tx] = t * t;\n"
                  "    const float t_1 = x[tx];\n    x[tx] = t_1 * t_1;\n");
    assert_has(s, "    #pragma unroll\n    for (long long u = 0; u < 4; ++u) {\n");
    assert_has(s, "    if (flag) {\n        x[0] = 1.0f;\n    } else if (n > 3) {\n"
                  "        x[1] = 2.0f;\n    } else {\n        x[2] = 3.0f;\n    }\n");
    assert_has(s, "    for (long long j = tx; j < n; ++j) {\n        (void)expf(x[j]);\n    }\n");
    compiles(s);
}

/* The one vector form printed: a 4-lane copy is one float4 load and four
 * scalar stores (into a per-thread array that stays in registers). */
static void test_vector_copy(void **state) {
    (void)state;
    mt_tbuffer *x = buf1("x", MT_FLOAT32, I(64));
    mt_tbuffer *sh = mt_tbuffer_new(A, "sh", MT_FLOAT32, 1, (mt_texpr *[]){I(64)});
    mt_tbuffer *r = mt_tbuffer_new(A, "r", MT_FLOAT32, 1, (mt_texpr *[]){I(4)});
    sh->scope = MT_SCOPE_SHARED;
    r->scope = MT_SCOPE_LOCAL;
    mt_tvar *tx = var("tx", MT_INT64), *bx = var("bx", MT_INT64);
    mt_texpr *from = mt_te_load(A, sh, (mt_texpr *[]){mt_te_ramp(A, mt_te_bin(A, TE_MUL, V(tx), I(4)), I(1), 4)}, 1);
    mt_tstmt *body[3] = {st(sh, V(tx), mt_te_load(A, x, (mt_texpr *[]){V(tx)}, 1)),
                         st(r, mt_te_ramp(A, I(0), I(1), 4), from),
                         st(x, V(tx), mt_te_load(A, r, (mt_texpr *[]){I(3)}, 1))};
    mt_tstmt *ph = mt_ts_alloc(A, r, mt_ts_seq(A, body + 1, 2));
    mt_tstmt *s = mt_ts_seq(A, (mt_tstmt *[]){bound(tx, I(16), "threadIdx.x", body[0]),
                                              bound(tx, I(16), "threadIdx.x", ph)}, 2);
    mt_tfunc *k = kernel("vcopy0", &x, 1, NULL, 0, bound(bx, I(1), "blockIdx.x", mt_ts_alloc(A, sh, s)));
    const char *t = emit1(NULL, k);
    assert_has(t, "__shared__ __align__(16) float sh[64];\n");
    assert_has(t, "const float4 vec = *(const float4 *)&sh[tx * 4];\n");
    assert_has(t, "r[0] = vec.x;\n");
    assert_has(t, "r[3] = vec.w;\n");
    compiles(t);
}

/* Vectors in global memory (what the vectorize pass leaves): lane by lane,
 * a unit-stride access of a CUDA vector type through the helpers that
 * check its alignment, others (a stride, 3 lanes, int8) element by element;
 * a vector let a const per lane. (Their numbers: test_cuda_c_gpu.) */
static void test_vector_global(void **state) {
    (void)state;
    mt_tbuffer *x = buf1("x", MT_FLOAT32, I(1024)), *y = buf1("y", MT_FLOAT32, I(1024));
    mt_tbuffer *d = buf1("d", MT_FLOAT64, I(1024)), *c = buf1("c", MT_INT8, I(1024));
    mt_tvar *tx = var("tx", MT_INT64), *bx = var("bx", MT_INT64), *t = var("t", MT_FLOAT32);
    mt_texpr *base = mt_te_bin(A, TE_MUL, V(tx), I(4));
    mt_texpr *xv = mt_te_load(A, x, (mt_texpr *[]){mt_te_ramp(A, base, I(1), 4)}, 1);
    mt_texpr *tv = mt_te_copy(A, V(t));
    tv->lanes = 4;
    mt_texpr *strided = mt_te_load(A, x, (mt_texpr *[]){mt_te_ramp(A, V(tx), I(2), 2)}, 1);
    mt_tstmt *body[4] = {
        st(y, mt_te_ramp(A, base, I(1), 4), mt_te_bin(A, TE_ADD, tv, mt_te_broadcast(A, F32(1), 4))),
        st(d, mt_te_ramp(A, V(tx), I(1), 2), mt_te_cast(A, MT_FLOAT64, strided)),
        st(y, mt_te_ramp(A, I(512), I(1), 3), mt_te_broadcast(A, F32(2), 3)),
        st(c, mt_te_ramp(A, base, I(1), 4), mt_te_broadcast(A, mt_te_int(A, MT_INT8, 7), 4))};
    mt_tstmt *let = mt_ts_let(A, t, xv, mt_ts_seq(A, body, 4));
    mt_tfunc *k = kernel("vglobal0", (mt_tbuffer *[]){x, y, d, c}, 4, NULL, 0,
                         bound(bx, I(1), "blockIdx.x", bound(tx, I(64), "threadIdx.x", let)));
    const char *text = emit1(NULL, k);
    assert_has(text, "static __device__ __forceinline__ float4 mt_load_float4(const float *p) {\n"
                     "    if (((unsigned long long)p & 15) == 0) return *(const float4 *)p;\n");
    assert_has(text, "const float4 x_v = mt_load_float4(&x[tx * 4]);\n");
    assert_has(text, "const float t = x_v.x;\n");
    assert_has(text, "const float t_3 = x_v.w;\n");
    assert_has(text, "float4 y_v;\n");
    assert_has(text, "y_v.w = t_3 + 1.0f;\n");
    assert_has(text, "mt_store_float4(&y[tx * 4], y_v);\n");
    assert_has(text, "d_v.y = (double)x[tx + 2];\n");       /* a strided load: element by element */
    assert_has(text, "mt_store_double2(&d[tx], d_v);\n");
    assert_has(text, "y[514] = 2.0f;\n");                     /* 3 lanes: no type */
    assert_has(text, "c[tx * 4 + 3] = 7;\n");                  /* int8: no helper */
    assert_null(strstr(text, "mt_load_double2"));            /* only the helpers used */
    compiles(text);
}

/* What cannot be printed is an internal error, not a crash. */
static void test_errors(void **state) {
    (void)state;
    mt_tbuffer *x = buf1("x", MT_FLOAT32, I(64));
    mt_tvar *tx = var("tx", MT_INT64);
    mt_tbuffer *big = mt_tbuffer_new(A, "big", MT_FLOAT32, 1, (mt_texpr *[]){V(tx)});
    mt_tfunc *k = kernel(
"alloc0", &x, 1, NULL, 0,
               bound(tx, I(32), "threadIdx.x", mt_ts_alloc(A, big, st(big, I(0), F32(0)))));
    assert_non_null(strstr(emit_error(k), "no constant size"));

    mt_tstmt *bad = mt_ts_for(A, tx, I(0), I(32), MT_FOR_THREAD, st(x, V(tx), F32(0)));
    bad->thread_tag = "warp.x";
    k = kernel("tag0", &x, 1, NULL, 0, bad);
    assert_non_null(strstr(emit_error(k), "unknown thread tag"));

    mt_tvar *stray = var("stray", MT_INT64);
    k = kernel("scope0", &x, 1, NULL, 0, bound(tx, I(32), "threadIdx.x", st(x, V(stray), F32(0))));
    assert_non_null(strstr(emit_error(k), "'stray' is used outside its scope"));
}

static int setup(void **state) {
    (void)state;
    A = mt_arena_create();
    return A ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    mt_arena_destroy(A);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block_reduction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phase_in_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_float16, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bfloat16, setup, teardown),
        cmocka_unit_test_setup_teardown(test_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intrinsics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shuffles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_immediates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vector_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vector_global, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
