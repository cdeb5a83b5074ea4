/*
 * executor.c -- checks the arguments, binds symbolic dims, allocates, calls
 * the kernels (see executor.h).
 *
 * Every argument is validated before anything runs: count, NULL tensors,
 * dtype, rank, each dim (constant, or symbolic: the first parameter that has
 * the symbol binds it, the others must agree), C-contiguity, and for a result
 * slot the caller filled: dtype, shape, and that it does not overlap an
 * argument's memory. Nothing is written until all checks pass.
 *
 * Then the program runs: kernel calls (direct, or through libffi; see
 * call_direct), copies, jumps on
 * rank-0 bools, integer loop tests and steps, assertions. Constants are
 * materialized as rank-0 tensors. Intermediates and constants live in one
 * arena per run, laid out by the memory plan (runtime/memplan.h; per run
 * when shapes are symbolic) and taken from the context's pool
 * (runtime/pool.h) in one call, with their tensor headers on the stack;
 * results the caller did not provide get a pool block each (once per run,
 * even when a loop computes them many times). The arena goes back to the
 * pool at the end of the run; a result when the caller releases it. A plan
 * without a memory plan gets a pool block per value. Pooled memory is not
 * zeroed: every value is
 * written (by a kernel, a copy or set_scalar) before it is read. The run sets
 * the calling thread's parallel-for thread count to the context's for its
 * duration (runtime/parallel.h) and restores it afterwards.
 */
#include "runtime/executor.h"

#include <ffi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/memplan.h"
#include "runtime/parallel.h"
#include "runtime/pool.h"
#include "runtime/tensor.h"

enum { MAX_SYMS = 64, MAX_CALL_ARGS = 256, SMALL = 32 };

#if defined(__SANITIZE_ADDRESS__)
#define MT_EXEC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_EXEC_ASAN 1
#endif
#endif
#ifdef MT_EXEC_ASAN
#include <sanitizer/asan_interface.h>
#endif

static ffi_type *dtype_ffi(mt_dtype dt) {
    switch (dt) {
    case MT_BOOL: case MT_UINT8: return &ffi_type_uint8;
    case MT_INT8: return &ffi_type_sint8;
    case MT_INT32: return &ffi_type_sint32;
    case MT_INT64: return &ffi_type_sint64;
    case MT_FLOAT16: return &ffi_type_uint16;
    case MT_FLOAT32: return &ffi_type_float;
    case MT_FLOAT64: return &ffi_type_double;
    default: return &ffi_type_pointer;
    }
}

int mt_plan_prepare(mt_plan *p, void *(*alloc)(void *ctx, size_t n), void *ctx) {
    for (int c = 0; c < p->ncalls; c++) {
        mt_plan_call *call = &p->calls[c];
        int n = call->nargs + call->nsyms;
        ffi_type **types = alloc(ctx, sizeof(ffi_type *) * (size_t)(n > 0 ? n : 1));
        for (int i = 0; i < call->nargs; i++) types[i] = &ffi_type_pointer;
        for (int i = 0; i < call->nsyms; i++) types[call->nargs + i] = &ffi_type_sint64;
        ffi_cif *cif = alloc(ctx, sizeof(ffi_cif));
        if (ffi_prep_cif(cif, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_void, types) != FFI_OK)
            return -1;
        call->cif = cif;
        call->arg_types = (void **)types;
    }
    (void)dtype_ffi; /* scalar params by value arrive with issue #3 */
    p->mem = mt_memplan_build(p, alloc, ctx);
    return p->mem ? 0 : -1;
}

static mt_status fail(mt_run_error *err, mt_status st, int param, int result, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static mt_status fail(mt_run_error *err, mt_status st, int param, int result, const char *fmt, ...) {
    if (err) {
        err->param = param;
        err->result = result;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

static void shape_text(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

/* The concrete shape of value v once symbols are bound. */
static void value_shape(const mt_plan_value *v, const int64_t *symval, int64_t *shape) {
    for (int d = 0; d < v->ndim; d++)
        shape[d] = v->dims[d].sym >= 0 ? symval[v->dims[d].sym] : v->dims[d].value;
}

static bool ranges_overlap(const mt_tensor *x, const mt_tensor *y) {
    size_t nx, ny;
    if (!x->data || !y->data) return false;
    if (!mt_shape_nbytes(x->dtype, x->ndim, x->shape, &nx) ||
        !mt_shape_nbytes(y->dtype, y->ndim, y->shape, &ny) || nx == 0 || ny == 0)
        return false;
    const char *a = x->data, *b = y->data;
    return a < b + ny && b < a + nx;
}

static mt_status check_param(const mt_plan *p, int i, const mt_tensor *t, int64_t *symval,
                             int *symsrc, mt_run_error *err) {
    const mt_plan_value *v = &p->values[i];
    if (!t) return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' is NULL", v->name);
    if (t->dtype != v->dtype)
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has dtype %s, expected %s",
                    v->name, mt_dtype_str(t->dtype), mt_dtype_str(v->dtype));
    if (t->ndim != v->ndim)
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has rank %d, expected %d",
                    v->name, t->ndim, v->ndim);
    for (int d = 0; d < v->ndim; d++) {
        int s = v->dims[d].sym;
        if (s < 0) {
            if (t->shape[d] != v->dims[d].value) {
                char got[256];
                shape_text(got, sizeof got, t->ndim, t->shape);
                return fail(err, MT_ERR_INVALID_ARG, i, -1,
                            "argument '%s' has shape %s: dim %d is %lld, expected %lld", v->name,
                            got, d, (long long)t->shape[d], (long long)v->dims[d].value);
            }
        } else if (symsrc[s] < 0) {
            symval[s] = t->shape[d];
            symsrc[s] = i;
        } else if (symval[s] != t->shape[d]) {
            return fail(err, MT_ERR_INVALID_ARG, i, -1,
                        "symbolic dim '%s' is %lld in argument '%s' but %lld in argument '%s'",
                        p->sym_names[s], (long long)t->shape[d], v->name, (long long)symval[s],
                        p->values[symsrc[s]].name);
        }
    }
    if (!mt_tensor_is_contiguous(t))
        return fail(err, MT_ERR_INVALID_ARG, i, -1,
                    "argument '%s' is not C-contiguous; strided tensors are not supported yet",
                    v->name);
    size_t nbytes;
    if (!mt_shape_nbytes(t->dtype, t->ndim, t->shape, &nbytes))
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' is too large", v->name);
    if (nbytes > 0 && !t->data)
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has no data", v->name);
    return MT_OK;
}

/* A rank-0 tensor holding constant v. */
static void set_scalar(mt_tensor *t, const mt_plan_value *v) {
    void *d = t->data;
    switch (v->dtype) {
    case MT_BOOL: *(uint8_t *)d = v->iconst != 0; break;
    case MT_INT8: *(int8_t *)d = (int8_t)v->iconst; break;
    case MT_UINT8: *(uint8_t *)d = (uint8_t)v->iconst; break;
    case MT_INT32: *(int32_t *)d = (int32_t)v->iconst; break;
    case MT_INT64: *(int64_t *)d = v->iconst; break;
    case MT_FLOAT32: *(float *)d = (float)v->fconst; break;
    case MT_FLOAT64: *(double *)d = v->fconst; break;
    default: break; /* float16 constants never reach the plan (rank-0 scalars are cast) */
    }
}

/* The integer in a rank-0 tensor (bool and any integer dtype). */
static int64_t get_int(const mt_tensor *t) {
    const void *d = t->data;
    switch (t->dtype) {
    case MT_BOOL: case MT_UINT8: return *(const uint8_t *)d;
    case MT_INT8: return *(const int8_t *)d;
    case MT_INT32: return *(const int32_t *)d;
    case MT_INT64: return *(const int64_t *)d;
    case MT_FLOAT32: return (int64_t)*(const float *)d;
    case MT_FLOAT64: return (int64_t)*(const double *)d;
    default: return 0;
    }
}

static void put_int(mt_tensor *t, int64_t v) {
    switch (t->dtype) {
    case MT_INT8: *(int8_t *)t->data = (int8_t)v; break;
    case MT_UINT8: *(uint8_t *)t->data = (uint8_t)v; break;
    case MT_INT32: *(int32_t *)t->data = (int32_t)v; break;
    default: *(int64_t *)t->data = v; break;
    }
}

/* Direct calls. Every kernel parameter is a pointer or an int64 (tir.h:
 * buffers, then sym vars; scalar parameters are rank-0 buffers), and on the
 * LP64 ABIs below both are passed exactly like a uintptr_t (the next integer
 * register, then an 8-byte stack slot), so a kernel with up to
 * MAX_DIRECT_ARGS parameters is called through a function type with that
 * many uintptr_t parameters: the same machine-level call libffi would make,
 * without its per-call interpretation of the signature (measured in
 * docs/performance.md, "The run path"). Elsewhere, or with more parameters,
 * libffi makes the call. */
#if (defined(__x86_64__) && !defined(_WIN32)) || (defined(__aarch64__) && !defined(_WIN32))
#define MT_DIRECT_CALLS 1
enum { MAX_DIRECT_ARGS = 12 };

static bool call_direct(void *fn, int n, const uintptr_t *a) {
    typedef uintptr_t w;
    switch (n) {
    case 0: ((void (*)(void))fn)(); return true;
    case 1: ((void (*)(w))fn)(a[0]); return true;
    case 2: ((void (*)(w, w))fn)(a[0], a[1]); return true;
    case 3: ((void (*)(w, w, w))fn)(a[0], a[1], a[2]); return true;
    case 4: ((void (*)(w, w, w, w))fn)(a[0], a[1], a[2], a[3]); return true;
    case 5: ((void (*)(w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4]); return true;
    case 6: ((void (*)(w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5]); return true;
    case 7:
        ((void (*)(w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
        return true;
    case 8:
        ((void (*)(w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        return true;
    case 9:
        ((void (*)(w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                                  a[8]);
        return true;
    case 10:
        ((void (*)(w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                     a[7], a[8], a[9]);
        return true;
    case 11:
        ((void (*)(w, w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                        a[7], a[8], a[9], a[10]);
        return true;
    case 12:
        ((void (*)(w, w, w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5],
                                                           a[6], a[7], a[8], a[9], a[10], a[11]);
        return true;
    default: return false;
    }
}
#endif

static mt_status call_kernel(const mt_plan_call *call, mt_tensor **vals, const int64_t *symval,
                             mt_run_error *err) {
    if (call->nargs > MAX_CALL_ARGS || call->nsyms > MAX_SYMS)
        return fail(err, MT_ERR_INTERNAL, -1, -1, "kernel '%s' has too many arguments", call->name);
#ifdef MT_DIRECT_CALLS
    if (call->nargs + call->nsyms <= MAX_DIRECT_ARGS) {
        uintptr_t a[MAX_DIRECT_ARGS];
        for (int i = 0; i < call->nargs; i++) a[i] = (uintptr_t)vals[call->args[i]]->data;
        for (int i = 0; i < call->nsyms; i++) a[call->nargs + i] = (uintptr_t)symval[call->syms[i]];
        if (call_direct(call->fn, call->nargs + call->nsyms, a)) return MT_OK;
    }
#endif
    void *ptrs[MAX_CALL_ARGS];
    int64_t syms[MAX_SYMS];
    void *avalues[MAX_CALL_ARGS + MAX_SYMS];
    for (int i = 0; i < call->nargs; i++) {
        ptrs[i] = vals[call->args[i]]->data;
        avalues[i] = &ptrs[i];
    }
    for (int i = 0; i < call->nsyms; i++) {
        syms[i] = symval[call->syms[i]];
        avalues[call->nargs + i] = &syms[i];
    }
    ffi_call((ffi_cif *)call->cif, FFI_FN(call->fn), NULL, avalues);
    return MT_OK;
}

/* A run's arena: one block holding every value the memory plan places
 * (runtime/memplan.h), with a header per value. Tables live here for plans
 * of up to SMALL slots, in one heap block otherwise. */
typedef struct run_arena {
    const mt_memplan *m;
    mt_pool *pool;          /* where base came from (NULL: aligned_alloc) */
    char *base;
    size_t total, cap;
    const size_t *off, *bytes; /* per slot */
    mt_tensor *tens;        /* per slot */
    void *heap;             /* the tables, when not below */
    mt_tensor tens_s[SMALL];
    size_t off_s[SMALL], bytes_s[SMALL], size_s[SMALL];
    int scratch_s[2 * SMALL];
} run_arena;

#ifdef MT_EXEC_ASAN
/* Under AddressSanitizer only the slots live at instruction pc are
 * addressable: a kernel that touches a value outside its planned lifetime,
 * or runs past its end into a neighbour, is reported. */
static void arena_poison(const run_arena *ra, int pc) {
    if (!ra || !ra->base) return;
    ASAN_POISON_MEMORY_REGION(ra->base, ra->total);
    for (int i = 0; i < ra->m->n; i++)
        if (mt_memplan_live(ra->m, i, pc))
            ASAN_UNPOISON_MEMORY_REGION(ra->base + ra->off[i], ra->bytes[i]);
}
#endif

/* Sizes and places the planned values for this run (per run when shapes are
 * symbolic), takes one block from the pool and points vals[] at it. */
static mt_status arena_open(run_arena *ra, const mt_plan *p, const mt_run_env *env,
                            const int64_t *symval, mt_tensor **vals, mt_run_error *err) {
    const mt_memplan *m = p->mem;
    ra->m = m;
    ra->pool = env ? env->pool : NULL;
    int n = m->n;
    if (n == 0) return MT_OK;
    size_t *off = ra->off_s, *bytes = ra->bytes_s, *size = ra->size_s;
    int *scratch = ra->scratch_s;
    ra->tens = ra->tens_s;
    if (n > SMALL) {
        size_t un = (size_t)n;
        char *h = malloc(un * (sizeof(mt_tensor) + 3 * sizeof(size_t) + 2 * sizeof(int)));
        if (!h) return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory");
        ra->heap = h;
        ra->tens = (mt_tensor *)h;
        off = (size_t *)(h + un * sizeof(mt_tensor));
        bytes = off + un;
        size = bytes + un;
        scratch = (int *)(size + un);
    }
    if (m->is_static) {
        ra->off = m->offset;
        ra->bytes = m->bytes;
        ra->total = m->arena_bytes;
    } else {
        for (int i = 0; i < n; i++) {
            const mt_plan_value *v = &p->values[m->value[i]];
            int64_t shape[MT_MAX_RANK];
            value_shape(v, symval, shape);
            if (!mt_shape_nbytes(v->dtype, v->ndim, shape, &bytes[i]) ||
                bytes[i] > ((size_t)1 << 62))
                return fail(err, MT_ERR_NOMEM, -1, -1, "'%s' is too large", v->name);
            size[i] = mt_memplan_round(bytes[i]);
        }
        ra->total = mt_memplan_assign(m, size, off, scratch);
        ra->off = off;
        ra->bytes = bytes;
    }
    if (ra->total == SIZE_MAX) /* mt_memplan_assign: the sizes overflow a size_t */
        return fail(err, MT_ERR_NOMEM, -1, -1, "the run's intermediates are too large");
    if (ra->pool) {
        ra->base = mt_pool_alloc(ra->pool, ra->total, &ra->cap);
    } else {
        ra->base = aligned_alloc(64, ra->total); /* total is a multiple of 64 */
        ra->cap = ra->total;
    }
    if (!ra->base)
        return fail(err, MT_ERR_NOMEM, -1, -1, "cannot allocate the run's %zu-byte arena", ra->total);
    for (int i = 0; i < n; i++) {
        const mt_plan_value *v = &p->values[m->value[i]];
        int64_t shape[MT_MAX_RANK];
        value_shape(v, symval, shape);
        mt_tensor *t = &ra->tens[i];
        mt_tensor_init_view(t, ra->base + ra->off[i], v->dtype, v->ndim, shape, ra->bytes[i]);
        if (v->kind == MT_VAL_CONST) set_scalar(t, v);
        vals[m->value[i]] = t;
    }
    return MT_OK;
}

static void arena_close(run_arena *ra) {
    if (ra->base) {
#ifdef MT_EXEC_ASAN
        ASAN_UNPOISON_MEMORY_REGION(ra->base, ra->total);
#endif
        if (ra->pool) mt_pool_free(ra->pool, ra->base, ra->cap);
        else free(ra->base);
    }
    free(ra->heap);
}

static mt_status run_program(const mt_plan *p, mt_tensor **vals, const int64_t *symval,
                             const run_arena *ra, mt_run_error *err) {
    (void)ra;
    (void)mt_kernel_alloc_failed(); /* a flag left by code run outside a run */
    int pc = 0;
    while (pc < p->ninstrs) {
#ifdef MT_EXEC_ASAN
        arena_poison(ra, pc);
#endif
        const mt_instr *in = &p->instrs[pc++];
        switch (in->kind) {
        case MT_I_CALL: {
            mt_status st = call_kernel(&p->calls[in->a], vals, symval, err);
            if (st != MT_OK) return st;
            if (mt_kernel_alloc_failed()) /* it skipped work: its outputs are not right */
                return fail(err, MT_ERR_NOMEM, -1, -1,
                            "kernel '%s' could not allocate its scratch buffer (out of memory)",
                            p->calls[in->a].name);
            break;
        }
        case MT_I_COPY: {
            size_t n = 0;
            const mt_tensor *src = vals[in->b];
            mt_shape_nbytes(src->dtype, src->ndim, src->shape, &n);
            if (n && vals[in->a]->data != src->data) memmove(vals[in->a]->data, src->data, n);
            break;
        }
        case MT_I_JUMP: pc = in->target; break;
        case MT_I_JUMP_IF_NOT:
            if (!get_int(vals[in->a])) pc = in->target;
            break;
        case MT_I_LOOP_TEST: {
            int64_t i = get_int(vals[in->a]), stop = get_int(vals[in->b]), step = get_int(vals[in->c]);
            if (step == 0) {
                if (err) err->line = in->line, err->col = in->col;
                return fail(err, MT_ERR_RUNTIME, -1, -1, "range() step must not be zero");
            }
            if (!(step > 0 ? i < stop : i > stop)) pc = in->target;
            break;
        }
        case MT_I_LOOP_STEP: {
            /* past INT64_MAX (or MIN) the next test fails: saturate, never wrap */
            int64_t i = get_int(vals[in->a]), step = get_int(vals[in->c]), next;
            if (__builtin_add_overflow(i, step, &next)) next = step > 0 ? INT64_MAX : INT64_MIN;
            put_int(vals[in->a], next);
            break;
        }
        case MT_I_ASSERT:
            if (!get_int(vals[in->a])) {
                mt_status st = fail(err, MT_ERR_RUNTIME, -1, -1, "assertion failed%s%s",
                                    in->message && in->message[0] ? ": " : "",
                                    in->message ? in->message : "");
                if (err) err->line = in->line, err->col = in->col;
                return st;
            }
            break;
        }
    }
    return MT_OK;
}

/* A new tensor for the run: from the pool when there is one. */
static mt_tensor *new_tensor(const mt_run_env *env, const mt_plan_value *v, const int64_t *shape) {
    if (env && env->pool) return mt_pool_tensor(env->pool, v->dtype, v->ndim, shape);
    return mt_tensor_create(v->dtype, v->ndim, shape);
}

mt_status mt_plan_run(const mt_plan *p, const mt_run_env *env, mt_tensor *const *args, int nargs,
                      mt_tensor **results, int nresults, mt_run_error *err) {
    if (err) {
        err->param = err->result = -1;
        err->line = err->col = 0;
        err->msg[0] = 0;
    }
    if (nargs != p->nparams)
        return fail(err, MT_ERR_INVALID_ARG, -1, -1, "the kernel takes %d argument%s, got %d",
                    p->nparams, p->nparams == 1 ? "" : "s", nargs);
    if (nresults != p->nresults)
        return fail(err, MT_ERR_INVALID_ARG, -1, -1, "the kernel returns %d result%s, got %d slot%s",
                    p->nresults, p->nresults == 1 ? "" : "s", nresults, nresults == 1 ? "" : "s");
    if (nargs > 0 && !args) return fail(err, MT_ERR_INVALID_ARG, -1, -1, "args is NULL");
    if (nresults > 0 && !results) return fail(err, MT_ERR_INVALID_ARG, -1, -1, "results is NULL");
    if (p->nsyms > MAX_SYMS) return fail(err, MT_ERR_INTERNAL, -1, -1, "too many symbolic dims");

    int64_t symval[MAX_SYMS];
    int symsrc[MAX_SYMS];
    for (int s = 0; s < p->nsyms; s++) symsrc[s] = -1;
    for (int i = 0; i < p->nparams; i++) {
        mt_status st = check_param(p, i, args[i], symval, symsrc, err);
        if (st != MT_OK) return st;
    }

    /* the run's tables: on the stack for plans up to SMALL values */
    mt_tensor *vals_s[SMALL], *copies_s[SMALL];
    bool owned_s[SMALL];
    bool small = p->nvalues <= SMALL && nresults <= SMALL;
    mt_tensor **vals = vals_s, **copies = copies_s;
    bool *owned = owned_s; /* created by this run */
    if (small) {
        memset(vals_s, 0, sizeof *vals_s * (size_t)p->nvalues);
        memset(owned_s, 0, sizeof *owned_s * (size_t)p->nvalues);
        memset(copies_s, 0, sizeof *copies_s * (size_t)nresults);
    } else {
        vals = calloc((size_t)p->nvalues, sizeof *vals);
        owned = calloc((size_t)p->nvalues, sizeof *owned);
        copies = calloc((size_t)(nresults > 0 ? nresults : 1), sizeof *copies);
        if (!vals || !owned || !copies) {
            free(vals);
            free(owned);
            free(copies);
            return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory");
        }
    }
    mt_status st = MT_OK;
    for (int i = 0; i < p->nparams; i++) vals[i] = args[i];

    /* results: caller-provided slots, checked; the rest allocated */
    for (int r = 0; r < nresults && st == MT_OK; r++) {
        const mt_plan_value *v = &p->values[p->results[r]];
        int64_t shape[MT_MAX_RANK];
        value_shape(v, symval, shape);
        mt_tensor *t = results[r];
        bool is_copy = v->kind != MT_VAL_TEMP || vals[p->results[r]] != NULL;
        if (t) {
            bool same = t->dtype == v->dtype && t->ndim == v->ndim;
            for (int d = 0; same && d < v->ndim; d++) same = t->shape[d] == shape[d];
            if (!same) {
                char want[256], got[256];
                shape_text(want, sizeof want, v->ndim, shape);
                shape_text(got, sizeof got, t->ndim, t->shape);
                st = fail(err, MT_ERR_INVALID_ARG, -1, r,
                          "result %d is %s %s, expected %s %s", r, mt_dtype_str(t->dtype), got,
                          mt_dtype_str(v->dtype), want);
                break;
            }
            if (!mt_tensor_is_contiguous(t) || (!t->data && mt_tensor_numel(t) > 0)) {
                st = fail(err, MT_ERR_INVALID_ARG, -1, r, "result %d is not a contiguous tensor with data", r);
                break;
            }
            for (int i = 0; i < nargs; i++)
                if (ranges_overlap(t, args[i])) {
                    st = fail(err, MT_ERR_INVALID_ARG, i, r,
                              "result %d overlaps the memory of argument '%s'", r, p->values[i].name);
                    break;
                }
            for (int q = 0; q < r && st == MT_OK; q++)
                if (results[q] && ranges_overlap(t, results[q]))
                    st = fail(err, MT_ERR_INVALID_ARG, -1, r, "results %d and %d overlap", q, r);
            if (st != MT_OK) break;
            mt_tensor_retain(t);
        } else {
            t = new_tensor(env, v, shape);
            if (!t) {
                st = fail(err, MT_ERR_NOMEM, -1, r, "cannot allocate result %d", r);
                break;
            }
        }
        if (is_copy)
            copies[r] = t; /* filled after the calls */
        else {
            vals[p->results[r]] = t;
            owned[p->results[r]] = true;
        }
    }

    /* intermediates and constants: the planned ones in one arena, any
     * others (a plan without a memory plan) one pool block each */
    run_arena ra;
    ra.m = NULL;
    ra.base = NULL;
    ra.heap = NULL;
    if (st == MT_OK && p->mem) st = arena_open(&ra, p, env, symval, vals, err);
    for (int i = p->nparams; i < p->nvalues && st == MT_OK; i++) {
        if (vals[i]) continue;
        const mt_plan_value *v = &p->values[i];
        int64_t shape[MT_MAX_RANK];
        value_shape(v, symval, shape);
        vals[i] = new_tensor(env, v, shape);
        owned[i] = true;
        if (!vals[i]) {
            st = fail(err, MT_ERR_NOMEM, -1, -1, "cannot allocate '%s'", v->name);
            break;
        }
        if (v->kind == MT_VAL_CONST) set_scalar(vals[i], v);
    }

    if (st == MT_OK) {
        mt_thread_pool *prev_pool = mt_parallel_set_pool(env ? env->threads : NULL);
        int prev = mt_parallel_set_num_threads(env ? env->num_threads : 0);
        st = run_program(p, vals, symval, ra.m ? &ra : NULL, err);
        mt_parallel_set_num_threads(prev);
        mt_parallel_set_pool(prev_pool);
#ifdef MT_EXEC_ASAN
        if (ra.m) arena_poison(&ra, p->ninstrs); /* the constants stay readable */
#endif
    }
    for (int r = 0; r < nresults && st == MT_OK; r++)
        if (copies[r]) {
            const mt_tensor *src = vals[p->results[r]];
            size_t nbytes = 0;
            mt_shape_nbytes(src->dtype, src->ndim, src->shape, &nbytes);
            if (nbytes) memcpy(copies[r]->data, src->data, nbytes);
        }

    /* Hand new results to the caller: their reference moves from the run to
     * the caller. Everything else the run holds is released below. */
    if (st == MT_OK)
        for (int r = 0; r < nresults; r++) {
            if (results[r]) continue;
            if (copies[r]) {
                results[r] = copies[r];
                copies[r] = NULL;
            } else {
                results[r] = vals[p->results[r]];
                owned[p->results[r]] = false;
            }
        }
    for (int r = 0; r < nresults; r++)
        if (copies[r]) mt_tensor_release(copies[r]);
    for (int i = 0; i < p->nvalues; i++)
        if (owned[i] && vals[i]) mt_tensor_release(vals[i]);
    arena_close(&ra);
    if (!small) {
        free(vals);
        free(owned);
        free(copies);
    }
    return st;
}
