/*
 * tir_test.h -- shared helpers for the loop IR tests: an arena per test, a
 * guard that turns mt_fail/mt_ice into a test failure, and small builders
 * for hand-written functions.
 */
#ifndef MT_TESTS_TIR_TEST_H
#define MT_TESTS_TIR_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/arena.h"
#include "support/diag.h"
#include "tir/tir.h"

static mt_arena *A;

static int tir_setup(void **state) {
    (void)state;
    A = mt_arena_create();
    return A ? 0 : -1;
}

static int tir_teardown(void **state) {
    (void)state;
    mt_arena_destroy(A);
    A = NULL;
    return 0;
}

#define TIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, tir_setup, tir_teardown)

/* Opens an error frame in the calling test: a compiler error fails the test. */
#define TIR_GUARD()                                                  \
    mt_errframe guard_;                                              \
    if (!MT_TRY(&guard_)) fail_msg("compiler error: %s", guard_.msg)
#define TIR_GUARD_END() mt_err_pop(&guard_)

/* Compares with a golden text and prints both on mismatch. */
#define ASSERT_TEXT(got, want)                                                  \
    do {                                                                        \
        const char *g_ = (got), *w_ = (want);                                   \
        if (strcmp(g_, w_) != 0) {                                              \
            print_error("---- got:\n%s---- want:\n%s----\n", g_, w_);          \
            fail();                                                             \
        }                                                                       \
    } while (0)

/* ---- expression builders ------------------------------------------------- */

static inline mt_texpr *I(int64_t v) { return mt_te_i64(A, v); }
static inline mt_texpr *F(double v) { return mt_te_float(A, MT_FLOAT32, v); }
static inline mt_texpr *V(mt_tvar *v) { return mt_te_var(A, v); }
static inline mt_tvar *ivar(const char *name) { return mt_tvar_new(A, name, MT_INT64); }
static inline mt_texpr *bin(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    return mt_te_bin(A, k, x, y);
}
static inline mt_texpr *add(mt_texpr *x, mt_texpr *y) { return bin(TE_ADD, x, y); }
static inline mt_texpr *mul(mt_texpr *x, mt_texpr *y) { return bin(TE_MUL, x, y); }
static inline mt_texpr *sub(mt_texpr *x, mt_texpr *y) { return bin(TE_SUB, x, y); }

static inline mt_tbuffer *buf2(const char *name, int64_t d0, int64_t d1) {
    int64_t s[2] = {d0, d1};
    return mt_tbuffer_new_const(A, name, MT_FLOAT32, 2, s);
}
static inline mt_tbuffer *buf1(const char *name, int64_t d0) {
    return mt_tbuffer_new_const(A, name, MT_FLOAT32, 1, &d0);
}

/* b[x0, ..., x(n-1)] with n = b->ndim. */
static inline mt_texpr *ld(mt_tbuffer *b, ...) {
    mt_texpr *idx[MT_MAX_RANK];
    va_list ap;
    va_start(ap, b);
    for (int i = 0; i < b->ndim; i++) idx[i] = va_arg(ap, mt_texpr *);
    va_end(ap);
    return mt_te_load(A, b, idx, b->ndim);
}

static inline mt_tstmt *st(mt_tbuffer *b, mt_texpr *value, ...) {
    mt_texpr *idx[MT_MAX_RANK];
    va_list ap;
    va_start(ap, value);
    for (int i = 0; i < b->ndim; i++) idx[i] = va_arg(ap, mt_texpr *);
    va_end(ap);
    return mt_ts_store(A, b, idx, b->ndim, value);
}

static inline mt_tstmt *seq2(mt_tstmt *x, mt_tstmt *y) {
    mt_tstmt *s[2] = {x, y};
    return mt_ts_seq(A, s, 2);
}

/* A region of b: dim k is [mins[k], mins[k] + exts[k]). */
static inline mt_tregion region(mt_tbuffer *b, mt_texpr *const *mins, mt_texpr *const *exts) {
    mt_tregion r = {b, MT_NEW_ARRAY(A, mt_texpr *, b->ndim + 1),
                    MT_NEW_ARRAY(A, mt_texpr *, b->ndim + 1)};
    for (int k = 0; k < b->ndim; k++) {
        r.min[k] = mins[k];
        r.extent[k] = exts[k];
    }
    return r;
}

/* The single point b[x0, ...]. */
static inline mt_tregion point(mt_tbuffer *b, ...) {
    mt_texpr *mins[MT_MAX_RANK], *exts[MT_MAX_RANK];
    va_list ap;
    va_start(ap, b);
    for (int i = 0; i < b->ndim; i++) {
        mins[i] = va_arg(ap, mt_texpr *);
        exts[i] = I(1);
    }
    va_end(ap);
    return region(b, mins, exts);
}

/* ---- loop nests ---------------------------------------------------------- */

/* A perfect nest of serial loops i0.. around one block with iter vars v0..
 * bound one to one (kinds "SSR"...). Fill the fields, then nest_build. */
typedef struct nest {
    int n;
    mt_tvar *loop[MT_MAX_RANK];
    mt_tvar *it[MT_MAX_RANK];
    mt_texpr *ext[MT_MAX_RANK];
    mt_texpr *v[MT_MAX_RANK]; /* V(it[k]) */
    const char *kinds;
    mt_tregion reads[8], writes[4];
    int nreads, nwrites;
    mt_tstmt *init;
} nest;

static inline void nest_init(nest *n, const char *kinds, ...) {
    memset(n, 0, sizeof *n);
    n->kinds = kinds;
    n->n = (int)strlen(kinds);
    va_list ap;
    va_start(ap, kinds);
    for (int k = 0; k < n->n; k++) {
        char nm[16];
        n->ext[k] = va_arg(ap, mt_texpr *);
        snprintf(nm, sizeof nm, "i%d", k);
        n->loop[k] = ivar(nm);
        snprintf(nm, sizeof nm, "v%d", k);
        n->it[k] = ivar(nm);
        n->v[k] = V(n->it[k]);
    }
    va_end(ap);
}

static inline mt_tstmt *nest_block(nest *n, const char *name, mt_tstmt *body) {
    mt_tstmt *b = mt_ts_block(A, name);
    b->niters = n->n;
    b->iters = MT_NEW_ARRAY(A, mt_titer, n->n + 1);
    b->iter_values = MT_NEW_ARRAY(A, mt_texpr *, n->n + 1);
    for (int k = 0; k < n->n; k++) {
        b->iters[k].var = n->it[k];
        b->iters[k].extent = n->ext[k];
        b->iters[k].kind = n->kinds[k] == 'R' ? MT_ITER_REDUCE : MT_ITER_SPATIAL;
        b->iter_values[k] = V(n->loop[k]);
    }
    b->reads = MT_NEW_ARRAY(A, mt_tregion, n->nreads + 1);
    memcpy(b->reads, n->reads, sizeof(mt_tregion) * (size_t)n->nreads);
    b->nreads = n->nreads;
    b->writes = MT_NEW_ARRAY(A, mt_tregion, n->nwrites + 1);
    memcpy(b->writes, n->writes, sizeof(mt_tregion) * (size_t)n->nwrites);
    b->nwrites = n->nwrites;
    b->init = n->init;
    b->body = body;
    return b;
}

static inline mt_tstmt *nest_loops(nest *n, mt_tstmt *inner) {
    for (int k = n->n - 1; k >= 0; k--)
        inner = mt_ts_for(A, n->loop[k], I(0), n->ext[k], MT_FOR_SERIAL, inner);
    return inner;
}

static inline mt_tstmt *nest_build(nest *n, const char *name, mt_tstmt *body) {
    return nest_loops(n, nest_block(n, name, body));
}

#endif
