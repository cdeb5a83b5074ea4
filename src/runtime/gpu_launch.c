/*
 * gpu_launch.c -- the GPU frame of the calling thread (gpu_launch.h).
 */
#include "runtime/gpu_launch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static _Thread_local mt_gpu_frame *tl_frame;

void mt_gpu_frame_push(mt_gpu_frame *f) {
    f->prev = tl_frame;
    f->status = MT_OK;
    f->msg[0] = 0;
    f->nlive = 0;
    tl_frame = f;
}

void mt_gpu_frame_pop(mt_gpu_frame *f) { tl_frame = f->prev; }

static void record(mt_gpu_frame *f, mt_status st, const char *fmt, ...) {
    if (!f || f->status != MT_OK) return;
    f->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

static void *find(const mt_gpu_frame *f, const char *name) {
    for (int i = 0; i < f->nkernels; i++)
        if (f->names[i] && strcmp(f->names[i], name) == 0) return f->fns[i];
    return NULL;
}

/* A launch dimension as CUDA takes it; false when out of range. */
static bool dim(int64_t v, uint32_t *out) {
    if (v < 0 || v > (int64_t)UINT32_MAX) return false;
    *out = (uint32_t)v;
    return true;
}

void mt_gpu_launch(const char *kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                   int64_t bz, int64_t shared, void **args) {
    mt_gpu_frame *f = tl_frame;
    if (!f) return; /* not run by a GPU device: cannot happen through the executor */
    if (f->status != MT_OK) return;
    void *fn = find(f, kernel);
    if (!fn) {
        record(f, MT_ERR_INTERNAL, "kernel '%s' is not in the loaded module", kernel);
        return;
    }
    uint32_t g[3], b[3], sh = 0;
    int64_t gv[3] = {gx, gy, gz}, bv[3] = {bx, by, bz};
    bool ok = dim(shared, &sh);
    for (int k = 0; k < 3; k++) ok = ok && dim(gv[k], &g[k]) && dim(bv[k], &b[k]);
    if (!ok) {
        record(f, MT_ERR_LIMIT, "launch of '%s': grid (%lld, %lld, %lld) is past the GPU's limits",
               kernel, (long long)gx, (long long)gy, (long long)gz);
        return;
    }
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2]) return;
    char msg[200] = "";
    mt_status st = f->launch(f->dev, fn, g, b, sh, args, msg, (int)sizeof msg);
    if (st != MT_OK) record(f, st, "launch of '%s': %s", kernel, msg);
}

void *mt_gpu_alloc(int64_t count, int64_t esize) {
    mt_gpu_frame *f = tl_frame;
    if (!f || f->status != MT_OK) return NULL;
    int64_t bytes;
    if (count < 0 || esize <= 0 || __builtin_mul_overflow(count, esize, &bytes)) {
        record(f, MT_ERR_NOMEM, "a buffer of %lld x %lld bytes is too large", (long long)count,
               (long long)esize);
        return NULL;
    }
    void *p = NULL;
    size_t cap = 0;
    char msg[200] = "";
    mt_status st = f->alloc(f->dev, bytes > 0 ? bytes : 1, &p, &cap, msg, (int)sizeof msg);
    if (st != MT_OK) record(f, st, "%s", msg);
    else if (f->nlive < MT_GPU_FRAME_LIVE) f->live[f->nlive].ptr = p, f->live[f->nlive++].cap = cap;
    return st == MT_OK ? p : NULL;
}

void mt_gpu_free(void *ptr) {
    mt_gpu_frame *f = tl_frame;
    if (!f || !ptr) return;
    size_t cap = 0;
    for (int i = 0; i < f->nlive; i++)
        if (f->live[i].ptr == ptr) {
            cap = f->live[i].cap;
            f->live[i] = f->live[--f->nlive];
            break;
        }
    f->free(f->dev, ptr, cap);
}
