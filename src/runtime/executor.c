/*
 * executor.c -- checks the arguments, binds symbolic dims, allocates, and
 * runs the program through the devices (see executor.h).
 *
 * Preparation (mt_plan_prepare, once per plan). The devices the plan names
 * are numbered (the CPU first), every call's buffers are checked to live on
 * the call's device -- a value the planner forgot to copy is refused here,
 * as an internal error naming the kernel, the value and both devices,
 * rather than left to fault -- the host call interface of each call is
 * prepared for libffi, and the memory plan lays out one arena per device.
 *
 * A run (mt_plan_run) goes in steps, each a function below:
 *
 *   1. check_param: every argument before anything runs -- count, NULL,
 *      device (an argument on another device than its parameter's is an
 *      error naming both: nothing is copied implicitly), dtype, rank, each
 *      dim (constant, or symbolic: the first parameter that has the symbol
 *      binds it, the others must agree), C-contiguity;
 *   2. find_devices: the instance of each device (the CPU from the run's
 *      environment, others through its find_device);
 *   3. prepare_result: the caller's result slots are checked (device,
 *      dtype, shape, no overlap with an argument's memory); the others are
 *      made on their value's device (the CPU: from the context's pool), once
 *      per run even when a loop computes them many times;
 *   4. arena_open: intermediates and constants live in one arena per
 *      device per run, laid out by the memory plan (runtime/memplan.h; per
 *      run when shapes are symbolic), one block each from the device (the
 *      CPU's from the pool), with their tensor headers on the stack;
 *      constants are written through their device;
 *   5. run_program: kernel launches through the call's device, copies
 *      (mt_tensor_copy: host, device or cross-device), jumps on rank-0
 *      bools, integer loop tests and steps, assertions; scalars that
 *      control flow reads or writes go through their device when they are
 *      not in host memory;
 *   6. finish_results: results that are copies (a parameter or constant
 *      returned) are filled, devices other than the CPU are synchronized,
 *      and new results are handed to the caller.
 *
 * Nothing is written until every check of steps 1-3 passed. The arenas go
 * back to their devices at the end of the run; a result when the caller
 * releases it. Device memory is not zeroed: every value is written (by a
 * kernel, a copy or a constant) before it is read. The run sets the calling
 * thread's parallel-for pool and thread count to the context's for its
 * duration (runtime/parallel.h) and restores them afterwards.
 *
 * The CPU path stays the fast one: a CPU-only plan resolves no device,
 * control flow reads host scalars directly, and a launch is one indirect
 * call into the CPU device, which calls the kernel directly
 * (device_cpu.c).
 */
#include "runtime/executor.h"

#include <ffi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dlpack_internal.h"
#include "runtime/memplan.h"
#include "runtime/parallel.h"
#include "runtime/tensor.h"
#include "support/common.h"

enum { MAX_SYMS = 64, MAX_CALL_ARGS = 256, SMALL = 32, MAX_DEVS = MT_PLAN_MAX_DEVICES };

#include "support/asan.h"

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

static void clear_error(mt_run_error *err) {
    if (!err) return;
    err->param = err->result = -1;
    err->line = err->col = 0;
    err->msg[0] = 0;
}

/* ---- preparation ------------------------------------------------------------ */

/* The index of device d in table[0, *n), added when new. */
static int device_index(mt_device d, mt_device *table, int *n) {
    d = mt_device_norm(d);
    for (int i = 0; i < *n; i++)
        if (mt_device_eq(table[i], d)) return i;
    if (*n == MAX_DEVS) return -1;
    table[*n] = d;
    return (*n)++;
}

/* Numbers the plan's devices and checks that every call's buffers live on
 * the call's device. */
static mt_status prepare_devices(mt_plan *p, void *(*alloc)(void *, size_t), void *ctx,
                                 mt_run_error *err) {
    mt_device table[MAX_DEVS] = {{MT_DEVICE_CPU, 0}};
    int n = 1;
    char a[32], b[32];
    for (int i = 0; i < p->nvalues; i++)
        if ((p->values[i].dev = device_index(p->values[i].device, table, &n)) < 0)
            return fail(err, MT_ERR_LIMIT, -1, -1, "the plan names more than %d devices", MAX_DEVS);
    for (int c = 0; c < p->ncalls; c++)
        if ((p->calls[c].dev = device_index(p->calls[c].device, table, &n)) < 0)
            return fail(err, MT_ERR_LIMIT, -1, -1, "the plan names more than %d devices", MAX_DEVS);
    for (int i = 1; i < n; i++)
        if (table[i].type == MT_DEVICE_CPU)
            return fail(err, MT_ERR_INTERNAL, -1, -1, "the plan names %s: the CPU is cpu:0",
                        mt_device_str(table[i], a, sizeof a));
    for (int c = 0; c < p->ncalls; c++) {
        const mt_plan_call *call = &p->calls[c];
        for (int q = 0; q < call->nargs; q++) {
            const mt_plan_value *v = &p->values[call->args[q]];
            if (v->dev != call->dev)
                return fail(err, MT_ERR_INTERNAL, -1, -1,
                            "kernel '%s' runs on %s but its argument '%s' is on %s: the plan "
                            "lacks a copy",
                            call->name, mt_device_str(table[call->dev], a, sizeof a), v->name,
                            mt_device_str(table[v->dev], b, sizeof b));
        }
    }
    p->devices = alloc(ctx, sizeof *p->devices * (size_t)n);
    if (!p->devices) return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory");
    memcpy(p->devices, table, sizeof *table * (size_t)n);
    p->ndevices = n;
    return MT_OK;
}

/* The libffi call interface of each call's signature (pointers, then int64s),
 * for host code with more arguments than a direct call takes. */
static mt_status prepare_calls(mt_plan *p, void *(*alloc)(void *, size_t), void *ctx,
                               mt_run_error *err) {
    for (int c = 0; c < p->ncalls; c++) {
        mt_plan_call *call = &p->calls[c];
        if (call->nargs > MAX_CALL_ARGS || call->nsyms > MAX_SYMS)
            return fail(err, MT_ERR_LIMIT, -1, -1, "kernel '%s' has too many arguments",
                        call->name);
        int n = call->nargs + call->nsyms;
        ffi_type **types = alloc(ctx, sizeof(ffi_type *) * (size_t)(n > 0 ? n : 1));
        ffi_cif *cif = alloc(ctx, sizeof(ffi_cif));
        if (!types || !cif) return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory");
        for (int i = 0; i < call->nargs; i++) types[i] = &ffi_type_pointer;
        for (int i = 0; i < call->nsyms; i++) types[call->nargs + i] = &ffi_type_sint64;
        ffi_type *ret = call->is_extern ? &ffi_type_sint32 : &ffi_type_void;
        if (ffi_prep_cif(cif, FFI_DEFAULT_ABI, (unsigned)n, ret, types) != FFI_OK)
            return fail(err, MT_ERR_INTERNAL, -1, -1, "libffi refuses the signature of '%s'",
                        call->name);
        call->cif = cif;
        call->arg_types = (void **)types;
    }
    return MT_OK;
}

mt_status mt_plan_prepare(mt_plan *p, void *(*alloc)(void *ctx, size_t n), void *ctx,
                          mt_run_error *err) {
    clear_error(err);
    if (p->nsyms > MAX_SYMS) return fail(err, MT_ERR_LIMIT, -1, -1, "too many symbolic dims");
    mt_status st = prepare_devices(p, alloc, ctx, err);
    if (st == MT_OK) st = prepare_calls(p, alloc, ctx, err);
    if (st != MT_OK) return st;
    p->mem = mt_memplan_build(p, alloc, ctx);
    if (!p->mem) return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory for the memory plan");
    return MT_OK;
}

/* ---- a run: its state, arguments, devices, results ------------------------ */

typedef struct run {
    const mt_plan *p;
    const mt_run_env *env;
    mt_run_error *err;
    mt_dev *dev[MAX_DEVS];      /* per plan device (mt_plan.devices): its instance */
    int64_t symval[MAX_SYMS];   /* the symbolic dims, bound by the arguments */
    mt_tensor **vals;           /* per value: its tensor in this run */
    bool *owned;                /* per value: made by this run, released at its end */
    mt_tensor **copies;         /* per result: filled by a copy after the program */
    bool heap_tables;           /* vals, owned, copies are heap blocks, not the arrays below */
    mt_tensor *vals_s[SMALL];   /* the tables of plans of up to SMALL values and results */
    mt_tensor *copies_s[SMALL];
    bool owned_s[SMALL];
} run;

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

/* Devices as tensors and mt_plan_prepare keep them: normalized ({0, 0} is
 * never left), so a plain comparison does. */
static inline bool same_device(mt_device a, mt_device b) {
    return a.type == b.type && a.id == b.id;
}

/* Whether x and y share memory (addresses of different devices never do).
 * nbytes was validated when each tensor was made. */
static bool ranges_overlap(const mt_tensor *x, const mt_tensor *y) {
    size_t nx = x->nbytes, ny = y->nbytes;
    if (!x->data || !y->data || nx == 0 || ny == 0 || !same_device(x->device, y->device))
        return false;
    const char *a = x->data, *b = y->data;
    return a < b + ny && b < a + nx;
}

/* Argument i's dims against its parameter's: constants match, the first
 * argument with a symbol binds it, the others agree. */
static mt_status check_dims(const mt_plan *p, int i, const mt_tensor *t, int64_t *symval,
                            int *symsrc, mt_run_error *err) {
    const mt_plan_value *v = &p->values[i];
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
    return MT_OK;
}

static mt_status check_param(const mt_plan *p, int i, const mt_tensor *t, int64_t *symval,
                             int *symsrc, mt_run_error *err) {
    const mt_plan_value *v = &p->values[i];
    if (!t) return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' is NULL", v->name);
    mt_device want = p->devices[v->dev];
    if (!same_device(t->device, want)) {
        char got[32], exp[32];
        return fail(err, MT_ERR_INVALID_ARG, i, -1,
                    "argument '%s' is on %s but the kernel expects it on %s", v->name,
                    mt_device_str(t->device, got, sizeof got),
                    mt_device_str(want, exp, sizeof exp));
    }
    if (t->dtype != v->dtype)
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has dtype %s, expected %s",
                    v->name, mt_dtype_str(t->dtype), mt_dtype_str(v->dtype));
    if (t->ndim != v->ndim)
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has rank %d, expected %d",
                    v->name, t->ndim, v->ndim);
    mt_status st = check_dims(p, i, t, symval, symsrc, err);
    if (st != MT_OK) return st;
    if (!mt_tensor_is_contiguous(t))
        return fail(err, MT_ERR_INVALID_ARG, i, -1,
                    "argument '%s' is not C-contiguous; strided tensors are not supported yet",
                    v->name);
    if (t->nbytes > 0 && !t->data) /* sizes were validated when the tensor was made */
        return fail(err, MT_ERR_INVALID_ARG, i, -1, "argument '%s' has no data", v->name);
    return MT_OK;
}

/* Step 1: the call's shape, then every argument (binding the symbols). */
static mt_status check_run(run *r, mt_tensor *const *args, int nargs, mt_tensor **results,
                           int nresults) {
    const mt_plan *p = r->p;
    mt_run_error *err = r->err;
    if (!p->devices)
        return fail(err, MT_ERR_INTERNAL, -1, -1, "the plan was not prepared (mt_plan_prepare)");
    if (nargs != p->nparams)
        return fail(err, MT_ERR_INVALID_ARG, -1, -1, "the kernel takes %d argument%s, got %d",
                    p->nparams, p->nparams == 1 ? "" : "s", nargs);
    if (nresults != p->nresults)
        return fail(err, MT_ERR_INVALID_ARG, -1, -1,
                    "the kernel returns %d result%s, got %d slot%s", p->nresults,
                    p->nresults == 1 ? "" : "s", nresults, nresults == 1 ? "" : "s");
    if (nargs > 0 && !args) return fail(err, MT_ERR_INVALID_ARG, -1, -1, "args is NULL");
    if (nresults > 0 && !results) return fail(err, MT_ERR_INVALID_ARG, -1, -1, "results is NULL");
    if (p->nsyms > MAX_SYMS) return fail(err, MT_ERR_INTERNAL, -1, -1, "too many symbolic dims");
    int symsrc[MAX_SYMS];
    for (int s = 0; s < p->nsyms; s++) symsrc[s] = -1;
    for (int i = 0; i < p->nparams; i++) {
        mt_status st = check_param(p, i, args[i], r->symval, symsrc, err);
        if (st != MT_OK) return st;
    }
    return MT_OK;
}

/* Step 2: the instance of every device the plan names. */
static mt_status find_devices(run *r) {
    const mt_run_env *env = r->env;
    r->dev[0] = env && env->cpu ? env->cpu : mt_dev_cpu_heap();
    for (int i = 1; i < r->p->ndevices; i++) {
        mt_device where = r->p->devices[i];
        char name[32];
        mt_device_str(where, name, sizeof name);
        mt_dev_err e;
        mt_status st = mt_dev_fail(&e, MT_ERR_UNAVAILABLE, "this run has no device %s", name);
        r->dev[i] = NULL;
        if (env && env->find_device) st = env->find_device(env->find_ctx, where, &r->dev[i], &e);
        if (st == MT_OK && (!r->dev[i] || !mt_device_eq(r->dev[i]->where, where)))
            st = mt_dev_fail(&e, MT_ERR_INTERNAL, "find_device did not give %s", name);
        if (st != MT_OK) return fail(r->err, st, -1, -1, "the kernel runs on %s: %s", name, e.msg);
    }
    return MT_OK;
}

/* The run's tables: on the stack for plans of up to SMALL values. */
static mt_status tables_open(run *r, int nresults) {
    size_t nv = (size_t)r->p->nvalues, nr = (size_t)nresults;
    r->heap_tables = nv > SMALL || nr > SMALL;
    if (!r->heap_tables) {
        r->vals = r->vals_s;
        r->owned = r->owned_s;
        r->copies = r->copies_s;
        memset(r->vals_s, 0, sizeof *r->vals_s * nv);
        memset(r->owned_s, 0, sizeof *r->owned_s * nv);
        memset(r->copies_s, 0, sizeof *r->copies_s * nr);
        return MT_OK;
    }
    r->vals = calloc(nv, sizeof *r->vals);
    r->owned = calloc(nv, sizeof *r->owned);
    r->copies = calloc(nr > 0 ? nr : 1, sizeof *r->copies);
    if (r->vals && r->owned && r->copies) return MT_OK;
    free(r->vals);
    free(r->owned);
    free(r->copies);
    return fail(r->err, MT_ERR_NOMEM, -1, -1, "out of memory");
}

static void tables_close(run *r) {
    if (!r->heap_tables) return;
    free(r->vals);
    free(r->owned);
    free(r->copies);
}

/* A result slot the caller filled: its device, type and shape, and that it
 * shares no memory with an argument or an earlier result. */
static mt_status check_result(const run *r, int ri, const mt_tensor *t, const int64_t *shape,
                              mt_tensor *const *args, int nargs, mt_tensor *const *results) {
    const mt_plan *p = r->p;
    const mt_plan_value *v = &p->values[p->results[ri]];
    mt_device want = p->devices[v->dev];
    char a[256], b[256];
    if (!same_device(t->device, want))
        return fail(r->err, MT_ERR_INVALID_ARG, -1, ri,
                    "result %d is on %s but the kernel returns it on %s", ri,
                    mt_device_str(t->device, a, sizeof a), mt_device_str(want, b, sizeof b));
    bool same = t->dtype == v->dtype && t->ndim == v->ndim;
    for (int d = 0; same && d < v->ndim; d++) same = t->shape[d] == shape[d];
    if (!same) {
        shape_text(a, sizeof a, v->ndim, shape);
        shape_text(b, sizeof b, t->ndim, t->shape);
        return fail(r->err, MT_ERR_INVALID_ARG, -1, ri, "result %d is %s %s, expected %s %s", ri,
                    mt_dtype_str(t->dtype), b, mt_dtype_str(v->dtype), a);
    }
    if (t->read_only)
        return fail(r->err, MT_ERR_INVALID_ARG, -1, ri,
                    "result %d is read-only (imported so through DLPack)", ri);
    if (!mt_tensor_is_contiguous(t) || (!t->data && mt_tensor_numel(t) > 0))
        return fail(r->err, MT_ERR_INVALID_ARG, -1, ri,
                    "result %d is not a contiguous tensor with data", ri);
    for (int i = 0; i < nargs; i++)
        if (ranges_overlap(t, args[i]))
            return fail(r->err, MT_ERR_INVALID_ARG, i, ri,
                        "result %d overlaps the memory of argument '%s'", ri, p->values[i].name);
    for (int q = 0; q < ri; q++)
        if (results[q] && ranges_overlap(t, results[q]))
            return fail(r->err, MT_ERR_INVALID_ARG, -1, ri, "results %d and %d overlap", q, ri);
    return MT_OK;
}

/* Step 3: result ri's tensor: the caller's (checked) or a new one on its
 * value's device. A result that is a parameter, a constant or a value
 * returned twice is filled by a copy at the end. */
static mt_status prepare_result(run *r, int ri, mt_tensor *const *args, int nargs,
                                mt_tensor *const *results) {
    const mt_plan *p = r->p;
    int id = p->results[ri];
    const mt_plan_value *v = &p->values[id];
    int64_t shape[MT_MAX_RANK];
    value_shape(v, r->symval, shape);
    bool is_copy = v->kind != MT_VAL_TEMP || r->vals[id] != NULL;
    mt_tensor *t = results[ri];
    if (t) {
        mt_status st = check_result(r, ri, t, shape, args, nargs, results);
        if (st != MT_OK) return st;
        mt_tensor_retain(t);
    } else if (!(t = mt_tensor_create_on(r->dev[v->dev], v->dtype, v->ndim, shape))) {
        return fail(r->err, MT_ERR_NOMEM, -1, ri, "cannot allocate result %d", ri);
    }
    if (is_copy) {
        r->copies[ri] = t;
    } else {
        r->vals[id] = t;
        r->owned[id] = true;
    }
    return MT_OK;
}

/* ---- scalars: constants and control flow -------------------------------------- */

/* A rank-0 value of any dtype on its way to or from a device. */
typedef union scalar_buf {
    uint8_t u8;
    int8_t i8;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
} scalar_buf;

/* Writes a rank-0 value of dtype dt (ints from iv, floats from fv) to buf;
 * returns its size (0: float16, which never reaches the plan: rank-0
 * scalars are cast; bfloat16 is written all the same, rounded once). */
static size_t encode_scalar(mt_dtype dt, int64_t iv, double fv, void *buf) {
    switch (dt) {
    case MT_BOOL: *(uint8_t *)buf = iv != 0; return 1;
    case MT_INT8: *(int8_t *)buf = (int8_t)iv; return 1;
    case MT_UINT8: *(uint8_t *)buf = (uint8_t)iv; return 1;
    case MT_INT32: *(int32_t *)buf = (int32_t)iv; return 4;
    case MT_INT64: *(int64_t *)buf = iv; return 8;
    case MT_FLOAT32: *(float *)buf = (float)fv; return 4;
    case MT_FLOAT64: *(double *)buf = fv; return 8;
    case MT_BFLOAT16: *(uint16_t *)buf = mt_bf16_from_double(fv); return 2;
    default: return 0;
    }
}

/* The integer in a rank-0 value at d (bool and any integer dtype; floats
 * truncated). */
static int64_t decode_int(mt_dtype dt, const void *d) {
    switch (dt) {
    case MT_BOOL: case MT_UINT8: return *(const uint8_t *)d;
    case MT_INT8: return *(const int8_t *)d;
    case MT_INT32: return *(const int32_t *)d;
    case MT_INT64: return *(const int64_t *)d;
    case MT_FLOAT32: return (int64_t)*(const float *)d;
    case MT_FLOAT64: return (int64_t)*(const double *)d;
    case MT_BFLOAT16: return (int64_t)mt_bf16_to_float(*(const uint16_t *)d);
    default: return 0;
    }
}

/* Value id <- the scalar (iv, fv): in place in host memory, else through
 * its device. */
static mt_status write_scalar(run *r, int id, int64_t iv, double fv) {
    mt_tensor *t = r->vals[id];
    if (!t->dev) {
        encode_scalar(t->dtype, iv, fv, t->data);
        return MT_OK;
    }
    scalar_buf buf;
    size_t n = encode_scalar(t->dtype, iv, fv, &buf);
    mt_dev_err e;
    mt_status st = t->dev->ops->copy_h2d(t->dev, t->data, &buf, n, &e);
    if (st == MT_OK) return MT_OK;
    char dn[32];
    return fail(r->err, st, -1, -1, "writing '%s' on %s: %s", r->p->values[id].name,
                mt_device_str(t->device, dn, sizeof dn), e.msg);
}

/* The integer in value id: read in place in host memory, else through its
 * device. */
static mt_status read_int(run *r, int id, int64_t *out) {
    const mt_tensor *t = r->vals[id];
    if (!t->dev) {
        *out = decode_int(t->dtype, t->data);
        return MT_OK;
    }
    scalar_buf buf = {.i64 = 0};
    mt_dev_err e;
    size_t n = t->nbytes < sizeof buf ? t->nbytes : sizeof buf;
    mt_status st = t->dev->ops->copy_d2h(t->dev, &buf, t->data, n, &e);
    *out = decode_int(t->dtype, &buf);
    if (st == MT_OK) return MT_OK;
    char dn[32];
    return fail(r->err, st, -1, -1, "reading '%s' on %s: %s", r->p->values[id].name,
                mt_device_str(t->device, dn, sizeof dn), e.msg);
}

static mt_status set_const(run *r, int id) {
    const mt_plan_value *v = &r->p->values[id];
    return write_scalar(r, id, v->iconst, v->fconst);
}

/* ---- the arenas ------------------------------------------------------------- */

/* A run's arenas: one block per device holding every value the memory plan
 * places there (runtime/memplan.h), with a header per value. Tables live
 * here for plans of up to SMALL slots, in one heap block otherwise. */
typedef struct run_arena {
    const mt_memplan *m;       /* NULL: not open */
    int n;                     /* arenas: one per plan device */
    mt_dev *dev[MAX_DEVS];     /* each arena's device */
    char *base[MAX_DEVS];      /* each arena's block (NULL: no slot there) */
    size_t total[MAX_DEVS];    /* each arena's size */
    size_t cap[MAX_DEVS];      /* each block's size, as its device gave it */
    const size_t *off, *bytes; /* per slot: its offset in its arena, its size */
    mt_tensor *tens;           /* per slot: its header */
    size_t *off_tab, *bytes_tab, *size_tab; /* per slot: the tables a symbolic layout fills */
    int *scratch;              /* 2 per slot: mt_memplan_assign's */
    void *heap;                /* the tables, when not below */
    mt_tensor tens_s[SMALL];
    size_t off_s[SMALL], bytes_s[SMALL], size_s[SMALL];
    int scratch_s[2 * SMALL];
} run_arena;

#ifdef MT_ASAN
/* Under AddressSanitizer only the slots live at instruction pc are
 * addressable in the CPU's arena: a kernel that touches a value outside its
 * planned lifetime, or runs past its end into a neighbour, is reported.
 * (Other devices' memory is not the host's to check.) */
static void arena_poison(const run_arena *ra, int pc) {
    if (ra->n == 0 || !ra->base[0]) return; /* not open, or nothing on the CPU */
    MT_POISON(ra->base[0], ra->total[0]);
    for (int i = 0; i < ra->m->n; i++)
        if (ra->m->arena[i] == 0 && mt_memplan_live(ra->m, i, pc))
            MT_UNPOISON(ra->base[0] + ra->off[i], ra->bytes[i]);
}
#endif

/* Points the per-slot tables at the arrays above, or at one heap block for
 * plans of more than SMALL slots. */
static mt_status arena_tables(run_arena *ra, mt_run_error *err) {
    int n = ra->m->n;
    ra->tens = ra->tens_s;
    ra->off_tab = ra->off_s;
    ra->bytes_tab = ra->bytes_s;
    ra->size_tab = ra->size_s;
    ra->scratch = ra->scratch_s;
    if (n <= SMALL) return MT_OK;
    size_t un = (size_t)n;
    char *h = malloc(un * (sizeof(mt_tensor) + 3 * sizeof(size_t) + 2 * sizeof(int)));
    if (!h) return fail(err, MT_ERR_NOMEM, -1, -1, "out of memory");
    ra->heap = h;
    ra->tens = (mt_tensor *)h;
    ra->off_tab = (size_t *)(h + un * sizeof(mt_tensor));
    ra->bytes_tab = ra->off_tab + un;
    ra->size_tab = ra->bytes_tab + un;
    ra->scratch = (int *)(ra->size_tab + un);
    return MT_OK;
}

/* Each slot's offset and size and each arena's size: the plan's own when
 * every shape is constant, else laid out for this run's symbols. */
static mt_status arena_layout(run_arena *ra, const run *r) {
    const mt_memplan *m = ra->m;
    if (m->is_static) {
        ra->off = m->offset;
        ra->bytes = m->bytes;
        for (int a = 0; a < ra->n; a++) ra->total[a] = m->arena_size[a];
    } else {
        for (int i = 0; i < m->n; i++) {
            const mt_plan_value *v = &r->p->values[m->value[i]];
            int64_t shape[MT_MAX_RANK];
            value_shape(v, r->symval, shape);
            if (!mt_shape_nbytes(v->dtype, v->ndim, shape, &ra->bytes_tab[i]) ||
                ra->bytes_tab[i] > ((size_t)1 << 62))
                return fail(r->err, MT_ERR_NOMEM, -1, -1, "'%s' is too large", v->name);
            ra->size_tab[i] = mt_memplan_round(ra->bytes_tab[i]);
        }
        ra->total[0] = mt_memplan_assign(m, ra->size_tab, ra->off_tab, ra->scratch);
        if (ra->n > 1 && ra->total[0] != SIZE_MAX)
            mt_memplan_arena_sizes(m, ra->size_tab, ra->off_tab, ra->total);
        ra->off = ra->off_tab;
        ra->bytes = ra->bytes_tab;
    }
    for (int a = 0; a < ra->n; a++)
        if (ra->total[a] == SIZE_MAX) /* mt_memplan_assign: the sizes overflow a size_t */
            return fail(r->err, MT_ERR_NOMEM, -1, -1, "the run's intermediates are too large");
    return MT_OK;
}

/* Step 4: lays the arenas out, takes a block per arena from its device and
 * points the planned values' headers into them; writes the constants. */
static mt_status arena_open(run_arena *ra, run *r) {
    const mt_memplan *m = r->p->mem;
    ra->m = m;
    if (m->n == 0) return MT_OK;
    ra->n = m->narenas;
    for (int a = 0; a < ra->n; a++) ra->base[a] = NULL;
    mt_status st = arena_tables(ra, r->err);
    if (st == MT_OK) st = arena_layout(ra, r);
    for (int a = 0; a < ra->n && st == MT_OK; a++) {
        ra->dev[a] = r->dev[a];
        mt_dev_err e;
        void *base = NULL;
        if (ra->total[a] &&
            ra->dev[a]->ops->alloc(ra->dev[a], ra->total[a], &base, &ra->cap[a], &e) != MT_OK)
            return fail(r->err, MT_ERR_NOMEM, -1, -1,
                        "cannot allocate the run's %zu-byte arena (%s)", ra->total[a], e.msg);
        ra->base[a] = base;
    }
    for (int i = 0; i < m->n && st == MT_OK; i++) {
        const mt_plan_value *v = &r->p->values[m->value[i]];
        int64_t shape[MT_MAX_RANK];
        value_shape(v, r->symval, shape);
        mt_tensor *t = &ra->tens[i];
        mt_tensor_init_view(t, ra->base[m->arena[i]] + ra->off[i], v->dtype, v->ndim, shape,
                            ra->bytes[i], ra->dev[m->arena[i]]);
        r->vals[m->value[i]] = t;
        if (v->kind == MT_VAL_CONST) st = set_const(r, m->value[i]);
    }
    return st;
}

static void arena_close(run_arena *ra) {
    for (int a = 0; a < ra->n; a++) {
        if (!ra->base[a]) continue;
#ifdef MT_ASAN
        if (a == 0) MT_UNPOISON(ra->base[0], ra->total[0]);
#endif
        ra->dev[a]->ops->free(ra->dev[a], ra->base[a], ra->cap[a]);
    }
    if (ra->heap) free(ra->heap);
}

/* Values neither the caller nor the arena holds (a plan without a memory
 * plan): a block each on their device. */
static mt_status alloc_unplanned(run *r) {
    const mt_plan *p = r->p;
    for (int i = p->nparams; i < p->nvalues; i++) {
        if (r->vals[i]) continue;
        const mt_plan_value *v = &p->values[i];
        int64_t shape[MT_MAX_RANK];
        value_shape(v, r->symval, shape);
        r->vals[i] = mt_tensor_create_on(r->dev[v->dev], v->dtype, v->ndim, shape);
        if (!r->vals[i]) return fail(r->err, MT_ERR_NOMEM, -1, -1, "cannot allocate '%s'", v->name);
        r->owned[i] = true;
        if (v->kind == MT_VAL_CONST) {
            mt_status st = set_const(r, i);
            if (st != MT_OK) return st;
        }
    }
    return MT_OK;
}

/* ---- the program -------------------------------------------------------------- */

/* A kernel launch on the call's device: buffer addresses, then the
 * symbolic dims it takes. */
/* A host function: a DLTensor per value, after the device finished the
 * work before it (the function may read device memory on its own). */
static mt_status exec_extern(run *r, const mt_plan_call *call) {
    DLTensor dl[MAX_CALL_ARGS];
    void *ptrs[MAX_CALL_ARGS], *argv[MAX_CALL_ARGS];
    mt_dev *d = r->dev[call->dev];
    mt_dev_err e = {""};
    if (d->ops->sync && d->ops->sync(d, &e) != MT_OK)
        return fail(r->err, MT_ERR_RUNTIME, -1, -1, "before host function '%s': %s", call->name, e.msg);
    for (int i = 0; i < call->nargs; i++) {
        mt_tensor_to_dltensor(r->vals[call->args[i]], &dl[i]);
        ptrs[i] = &dl[i];
        argv[i] = &ptrs[i];
    }
    ffi_sarg ret = 0;
    ffi_call(call->cif, FFI_FN(call->fn), &ret, argv);
    if ((int32_t)ret != 0)
        return fail(r->err, MT_ERR_RUNTIME, -1, -1, "host function '%s' failed (it returned %d)",
                    call->name, (int)(int32_t)ret);
    return MT_OK;
}

/* (v0, v1, ...) into buf: "(3, 4)", "(5,)", "()"; "..." past what was kept. */
static void put_tuple(char *buf, size_t size, const int64_t *v, int n, int n_all) {
    size_t len = 0;
    len += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (len < size) snprintf(buf + len, size - len, "%s)", n_all > n ? ", ..." : n_all == 1 ? "," : "");
}

/* A kernel stopped at a failed bounds check (runtime/parallel.h): the run
 * fails at the access's place. */
static mt_status fail_oob(run *r, const mt_oob_record *o) {
    char idx[256], dims[256];
    put_tuple(idx, sizeof idx, o->idx, o->ndim, o->ndim_all);
    put_tuple(dims, sizeof dims, o->dims, o->ndim, o->ndim_all);
    mt_status st = fail(r->err, MT_ERR_RUNTIME, -1, -1,
                        "out-of-bounds %s '%s': index %s is outside its shape %s",
                        o->store ? "store to" : "load from", o->name, idx, dims);
    if (r->err) r->err->line = o->line, r->err->col = o->col;
    return st;
}

static mt_status exec_call(run *r, const mt_plan_call *call) {
    if (call->is_extern) return exec_extern(r, call);
    uint64_t words[MAX_CALL_ARGS + MAX_SYMS];
    for (int i = 0; i < call->nargs; i++)
        words[i] = (uint64_t)(uintptr_t)r->vals[call->args[i]]->data;
    for (int i = 0; i < call->nsyms; i++)
        words[call->nargs + i] = (uint64_t)r->symval[call->syms[i]];
    mt_dev_launch l = {.fn = call->fn,
                       .name = call->name,
                       .nptrs = call->nargs,
                       .nscalars = call->nsyms,
                       .args = words,
                       .dims = call->dims,
                       .host_cif = call->cif,
                       .host_code = r->env && r->env->gpu_program,
                       .nkernels = r->env ? r->env->ngpu_kernels : 0,
                       .kernel_names = r->env ? r->env->gpu_kernel_names : NULL,
                       .kernels = r->env ? r->env->gpu_kernels : NULL};
    mt_dev *d = r->dev[call->dev];
    mt_dev_err e;
    mt_status st = d->ops->launch(d, &l, &e);
    if (st != MT_OK) {
        char dn[32];
        return fail(r->err, st, -1, -1, "kernel '%s' on %s: %s", call->name,
                    mt_device_str(d->where, dn, sizeof dn), e.msg);
    }
    if (mt_kernel_alloc_failed()) /* it skipped work: its outputs are not right */
        return fail(r->err, MT_ERR_NOMEM, -1, -1,
                    "kernel '%s' could not allocate its scratch buffer (out of memory)",
                    call->name);
    mt_oob_record oob;
    if (mt_kernel_take_oob(&oob)) return fail_oob(r, &oob);
    return MT_OK;
}

/* value a <- value b, on whatever devices they live. */
static mt_status exec_copy(run *r, const mt_instr *in) {
    mt_dev_err e;
    mt_status st = mt_tensor_copy(r->vals[in->a], r->vals[in->b], &e);
    if (st == MT_OK) return MT_OK;
    return fail(r->err, st, -1, -1, "copying '%s' to '%s': %s", r->p->values[in->b].name,
                r->p->values[in->a].name, e.msg);
}

static mt_status exec_loop_test(run *r, const mt_instr *in, int *pc) {
    int64_t i, stop, step;
    mt_status st = read_int(r, in->a, &i);
    if (st == MT_OK) st = read_int(r, in->b, &stop);
    if (st == MT_OK) st = read_int(r, in->c, &step);
    if (st != MT_OK) return st;
    if (step == 0) {
        if (r->err) r->err->line = in->line, r->err->col = in->col;
        return fail(r->err, MT_ERR_RUNTIME, -1, -1, "range() step must not be zero");
    }
    if (!(step > 0 ? i < stop : i > stop)) *pc = in->target;
    return MT_OK;
}

static mt_status exec_loop_step(run *r, const mt_instr *in) {
    /* past INT64_MAX (or MIN) the next test fails: saturate, never wrap */
    int64_t i, step, next;
    mt_status st = read_int(r, in->a, &i);
    if (st == MT_OK) st = read_int(r, in->c, &step);
    if (st != MT_OK) return st;
    if (__builtin_add_overflow(i, step, &next)) next = step > 0 ? INT64_MAX : INT64_MIN;
    return write_scalar(r, in->a, next, (double)next);
}

static mt_status exec_assert(run *r, const mt_instr *in) {
    int64_t ok;
    mt_status st = read_int(r, in->a, &ok);
    if (st != MT_OK || ok) return st;
    st = fail(r->err, MT_ERR_RUNTIME, -1, -1, "assertion failed%s%s",
              in->message && in->message[0] ? ": " : "", in->message ? in->message : "");
    if (r->err) r->err->line = in->line, r->err->col = in->col;
    return st;
}

/* Step 5: the program, from instruction 0 to the end. */
static mt_status run_program(run *r, const run_arena *ra) {
    const mt_plan *p = r->p;
    (void)ra;
    (void)mt_kernel_alloc_failed(); /* a flag left by code run outside a run */
    (void)mt_kernel_take_oob(NULL);
    int pc = 0;
    while (pc < p->ninstrs) {
#ifdef MT_ASAN
        arena_poison(ra, pc);
#endif
        const mt_instr *in = &p->instrs[pc++];
        mt_status st = MT_OK;
        int64_t cond;
        switch (in->kind) {
        case MT_I_CALL: st = exec_call(r, &p->calls[in->a]); break;
        case MT_I_COPY: st = exec_copy(r, in); break;
        case MT_I_JUMP: pc = in->target; break;
        case MT_I_JUMP_IF_NOT:
            st = read_int(r, in->a, &cond);
            if (st == MT_OK && !cond) pc = in->target;
            break;
        case MT_I_LOOP_TEST: st = exec_loop_test(r, in, &pc); break;
        case MT_I_LOOP_STEP: st = exec_loop_step(r, in); break;
        case MT_I_ASSERT: st = exec_assert(r, in); break;
        }
        if (st != MT_OK) return st;
    }
    return MT_OK;
}

/* The program with the context's parallel-for pool and thread count. */
static mt_status run_on_threads(run *r, const run_arena *ra) {
    const mt_run_env *env = r->env;
    mt_thread_pool *prev_pool = mt_parallel_set_pool(env ? env->threads : NULL);
    int prev = mt_parallel_set_num_threads(env ? env->num_threads : 0);
    mt_status st = run_program(r, ra);
    mt_parallel_set_num_threads(prev);
    mt_parallel_set_pool(prev_pool);
#ifdef MT_ASAN
    arena_poison(ra, r->p->ninstrs); /* the constants stay readable */
#endif
    return st;
}

/* ---- the end of a run ----------------------------------------------------------- */

/* Step 6: the results that are copies, then every device other than the
 * CPU synchronized, so that the results are there when the run returns
 * (unless env->no_wait: then the devices' work stays queued). */
static mt_status finish_results(run *r, int nresults) {
    mt_dev_err e;
    for (int ri = 0; ri < nresults; ri++) {
        if (!r->copies[ri]) continue;
        mt_status st = mt_tensor_copy(r->copies[ri], r->vals[r->p->results[ri]], &e);
        if (st != MT_OK) return fail(r->err, st, -1, ri, "result %d: %s", ri, e.msg);
    }
    for (int a = 1; a < r->p->ndevices && !(r->env && r->env->no_wait); a++) {
        mt_dev *d = r->dev[a];
        if (d->ops->host_memory) continue;
        mt_status st = d->ops->sync(d, &e);
        char dn[32];
        if (st != MT_OK)
            return fail(r->err, st, -1, -1, "synchronizing %s: %s",
                        mt_device_str(d->where, dn, sizeof dn), e.msg);
    }
    return MT_OK;
}

/* New results go to the caller: their reference moves from the run to it. */
static void hand_over(run *r, mt_tensor **results, int nresults) {
    for (int ri = 0; ri < nresults; ri++) {
        if (results[ri]) continue;
        if (r->copies[ri]) {
            results[ri] = r->copies[ri];
            r->copies[ri] = NULL;
        } else {
            results[ri] = r->vals[r->p->results[ri]];
            r->owned[r->p->results[ri]] = false;
        }
    }
}

/* Everything the run still holds. */
static void release_run(run *r, int nresults) {
    for (int ri = 0; ri < nresults; ri++)
        if (r->copies[ri]) mt_tensor_release(r->copies[ri]);
    for (int i = 0; i < r->p->nvalues; i++)
        if (r->owned[i] && r->vals[i]) mt_tensor_release(r->vals[i]);
}

mt_status mt_plan_run(const mt_plan *p, const mt_run_env *env, mt_tensor *const *args, int nargs,
                      mt_tensor **results, int nresults, mt_run_error *err) {
    run r;
    r.p = p;
    r.env = env;
    r.err = err;
    clear_error(err);
    mt_status st = check_run(&r, args, nargs, results, nresults);
    if (st == MT_OK) st = find_devices(&r);
    if (st == MT_OK) st = tables_open(&r, nresults);
    if (st != MT_OK) return st;
    for (int i = 0; i < p->nparams; i++) r.vals[i] = args[i];
    for (int ri = 0; ri < nresults && st == MT_OK; ri++)
        st = prepare_result(&r, ri, args, nargs, results);
    run_arena ra;
    ra.m = NULL;
    ra.n = 0;
    ra.heap = NULL;
    if (st == MT_OK && p->mem) st = arena_open(&ra, &r);
    if (st == MT_OK) st = alloc_unplanned(&r);
    if (st == MT_OK) st = run_on_threads(&r, &ra);
    if (st == MT_OK) st = finish_results(&r, nresults);
    if (st == MT_OK) hand_over(&r, results, nresults);
    release_run(&r, nresults);
    arena_close(&ra);
    tables_close(&r);
    return st;
}
