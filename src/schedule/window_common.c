/*
 * window_common.c -- window reads of an NCHW input, matched and packed
 * (window_internal.h has the form). Shared by the conv rule (rule_conv.c)
 * and the pool rule (rule_pool.c).
 *
 * Matching. Each spatial index must be a linear form `o * s + k * d - p`
 * of its output and kernel variables (s, d >= 1, p >= 0) and nothing else.
 * An axis whose index may leave the input (p > 0) must be guarded: the
 * load clamped to [0, size - 1] and both bounds, `0 <= i` and `i < size`,
 * terms of the select's condition, which may hold nothing else. An
 * unguarded axis must stay in range by itself.
 *
 * Packing. A packed row holds the padded input row split by column phase:
 * padded column j * s + q (s the column stride) at q * wq + j, so that
 * output columns ow.. read kernel column kw at (kw * d) % s * wq + ow +
 * (kw * d) / s, unit-stride. Rows outside the input are all fill.
 */
#include <string.h>

#include "schedule/window_internal.h"

/* ---- matching ------------------------------------------------------------------ */

/* An integer expression as sum(coef[k] * vars[k]) + k0 over nv (<= 8) variables. */
static bool lin(const mt_texpr *e, mt_tvar *const *vars, int nv, int64_t *coef, int64_t *k0) {
    int64_t ca[8], cb[8], ka, kb, v;
    switch (e->kind) {
    case TE_INT:
        memset(coef, 0, sizeof(int64_t) * (size_t)nv);
        *k0 = e->ival;
        return e->lanes == 1;
    case TE_VAR:
        memset(coef, 0, sizeof(int64_t) * (size_t)nv);
        *k0 = 0;
        for (int k = 0; k < nv; k++)
            if (vars[k] == e->var) {
                coef[k] = 1;
                return true;
            }
        return false;
    case TE_ADD: case TE_SUB:
        if (!lin(e->a, vars, nv, ca, &ka) || !lin(e->b, vars, nv, cb, &kb)) return false;
        for (int k = 0; k < nv; k++) coef[k] = e->kind == TE_ADD ? ca[k] + cb[k] : ca[k] - cb[k];
        *k0 = e->kind == TE_ADD ? ka + kb : ka - kb;
        return true;
    case TE_MUL:
        if (mt_te_is_const_int(e->b, &v) && lin(e->a, vars, nv, coef, k0)) {
        } else if (mt_te_is_const_int(e->a, &v) && lin(e->b, vars, nv, coef, k0)) {
        } else {
            return false;
        }
        for (int k = 0; k < nv; k++) coef[k] *= v;
        *k0 *= v;
        return true;
    default: return false;
    }
}

/* T.min(T.max(i, 0), hi) -> i (*clamped), else e itself. */
static const mt_texpr *strip_clamp(const mt_texpr *e, int64_t hi, bool *clamped) {
    int64_t v;
    *clamped = false;
    if (e->kind == TE_MIN && mt_te_is_const_int(e->b, &v) && v == hi && e->a->kind == TE_MAX &&
        mt_te_is_const_int(e->a->b, &v) && v == 0) {
        *clamped = true;
        return e->a->a;
    }
    return e;
}

typedef struct axis {
    const mt_texpr *index;     /* unclamped */
    bool guarded;              /* clamped, its bounds in the select's condition */
    bool lo_seen, hi_seen;
} axis;

enum { MAX_OTHERS = 5 };

static bool match_axis(win *w, int d, const mt_texpr *e, mt_tvar *o, mt_tvar *k, mt_tvar *const *others,
                       int nothers, axis *ax) {
    int64_t size = d ? w->W : w->H, coef[2 + MAX_OTHERS], k0;
    ax->index = strip_clamp(e, size - 1, &ax->guarded);
    mt_tvar *vars[2 + MAX_OTHERS] = {o, k};
    for (int q = 0; q < nothers; q++) vars[2 + q] = others[q];
    if (!lin(ax->index, vars, 2 + nothers, coef, &k0)) return false;
    for (int q = 2; q < 2 + nothers; q++)
        if (coef[q]) return false;
    w->s[d] = coef[0], w->d[d] = coef[1], w->p[d] = -k0;
    if (w->s[d] < 1 || w->d[d] < 1 || w->p[d] < 0) return false;
    int64_t out = d ? w->OW : w->OH, kk = d ? w->KW : w->KH;
    /* one output along the axis: its stride multiplies 0 (a stride of
     * 7777771 on an 8-wide input packed rows 7777771 wide, one phase of
     * code each: minutes and gigabytes; fuzz_graph finding) */
    if (out == 1) w->s[d] = 1;
    /* the packing writes one piece of code per column phase */
    if (d == 1 && w->s[d] > WIN_MAX_COL_STRIDE) return false;
    int64_t top = (out - 1) * w->s[d] + (kk - 1) * w->d[d] - w->p[d];
    if (!ax->guarded) return w->p[d] == 0 && top <= size - 1;
    return top <= size - 1 + w->p[d];
}

/* cond is an `and` of `0 <= index` and `index < size` of guarded axes. */
static bool match_cond(win *w, const mt_texpr *e, axis *ax) {
    if (e->kind == TE_AND) return match_cond(w, e->a, ax) && match_cond(w, e->b, ax);
    int64_t k;
    for (int d = 0; d < 2; d++) {
        if (!ax[d].guarded) continue;
        if (e->kind == TE_LE && mt_te_is_const_int(e->a, &k) && k == 0 && mt_texpr_equal(e->b, ax[d].index)) {
            ax[d].lo_seen = true;
            return true;
        }
        if (e->kind == TE_LT && mt_te_is_const_int(e->b, &k) && k == (d ? w->W : w->H) &&
            mt_texpr_equal(e->a, ax[d].index)) {
            ax[d].hi_seen = true;
            return true;
        }
    }
    return false;
}

bool win_match(win *w, const mt_texpr *X, mt_tvar *oh, mt_tvar *kh, mt_tvar *ow, mt_tvar *kw,
               mt_tvar *const *others, int nothers) {
    const mt_texpr *cond = NULL, *ld = X;
    w->fill = NULL;
    if (nothers > MAX_OTHERS) return false;
    if (X->kind == TE_SELECT) cond = X->cond, ld = X->a, w->fill = X->b;
    if (ld->kind != TE_LOAD || ld->buf->ndim != 4 || ld->lanes != 1) return false;
    w->x = ld->buf;
    w->load = ld;
    int64_t dims[4];
    for (int d = 1; d < 4; d++)
        if (!mt_te_is_const_int(w->x->shape[d], &dims[d])) return false;
    w->C = dims[1], w->H = dims[2], w->W = dims[3];
    axis ax[2];
    memset(ax, 0, sizeof ax);
    if (!match_axis(w, 0, ld->args[2], oh, kh, others, nothers, &ax[0]) ||
        !match_axis(w, 1, ld->args[3], ow, kw, others, nothers, &ax[1]))
        return false;
    if (!cond) return !ax[0].guarded && !ax[1].guarded;
    if (!match_cond(w, cond, ax)) return false;
    for (int d = 0; d < 2; d++)
        if (ax[d].guarded != (ax[d].lo_seen && ax[d].hi_seen)) return false;
    return ax[0].guarded || ax[1].guarded;
}

/* ---- packing ---------------------------------------------------------------------- */

bool win_needs_pack(const win *w) { return w->p[0] || w->p[1] || w->s[1] != 1; }

void win_pack_layout(win *w) {
    w->wq = (w->W + 2 * w->p[1] + w->s[1] - 1) / w->s[1];
    w->wp = w->wq * w->s[1];
}

static mt_texpr *add(mm *c, mt_texpr *x, mt_texpr *y) { return mt_lw_add(&c->lw, x, y); }
static mt_texpr *mul(mm *c, mt_texpr *x, int64_t k) { return mt_lw_mul(&c->lw, x, mm_I(c, k)); }
static mt_texpr *flat_load(mm *c, mt_tbuffer *b, mt_texpr *ix) {
    return mt_te_load(c->a, mt_lw_flat(&c->lw, b)->flat, &ix, 1);
}

mt_tstmt *win_pack(win *w, mm *c, mt_tbuffer *xp, mt_texpr *n, mt_texpr *ch0, int64_t nch, mt_texpr *oh,
                   mt_texpr *fill) {
    mt_arena *a = c->a;
    mt_tvar *ch = mm_ivar(c, "pc"), *kh = mm_ivar(c, "pkh");
    mt_texpr *ih = add(c, add(c, mul(c, oh, w->s[0]), mul(c, mm_V(c, kh), w->d[0])), mm_I(c, -w->p[0]));
    mt_texpr *dst = mul(c, add(c, mul(c, mm_V(c, ch), w->KH), mm_V(c, kh)), w->wp);
    mt_texpr *plane = add(c, mul(c, n, w->C), add(c, ch0, mm_V(c, ch)));
    mt_texpr *src = mul(c, add(c, mul(c, plane, w->H), ih), w->W);
    svec rowv = {0};
    if (w->s[1] == 1) { /* the pads, then a contiguous copy LLVM vectorizes */
        int64_t right = w->wp - w->W - w->p[1];
        for (int side = 0; side < 2; side++) {
            int64_t cnt = side ? right : w->p[1];
            if (cnt <= 0) continue;
            mt_tvar *z = mm_ivar(c, "pz");
            mt_texpr *ix = add(c, add(c, dst, mm_I(c, side ? w->p[1] + w->W : 0)), mm_V(c, z));
            mm_push(c, &rowv, mm_loop(c, z, mm_I(c, cnt), MT_FOR_SERIAL, mt_ts_store(a, xp, &ix, 1, fill)));
        }
        mt_tvar *j = mm_ivar(c, "pj");
        mt_texpr *di = add(c, add(c, dst, mm_I(c, w->p[1])), mm_V(c, j));
        mm_push(c, &rowv, mm_loop(c, j, mm_I(c, w->W), MT_FOR_SERIAL,
                                   mt_ts_store(a, xp, &di, 1, flat_load(c, w->x, add(c, src, mm_V(c, j))))));
    } else { /* each phase q: padded column j * s + q; columns in [lo, hi) are in x */
        for (int64_t q = 0; q < w->s[1]; q++) {
            int64_t lo = 0, hi = 0;
            while (lo < w->wq && lo * w->s[1] + q - w->p[1] < 0) lo++;
            for (hi = lo; hi < w->wq && hi * w->s[1] + q - w->p[1] < w->W;) hi++;
            mt_texpr *base = add(c, dst, mm_I(c, q * w->wq));
            int64_t from[3] = {0, lo, hi}, to[3] = {lo, hi, w->wq};
            for (int part = 0; part < 3; part++) {
                if (to[part] <= from[part]) continue;
                mt_tvar *jj = mm_ivar(c, "pj");
                mt_texpr *j = add(c, mm_V(c, jj), mm_I(c, from[part]));
                mt_texpr *di = add(c, base, j), *val = fill;
                if (part == 1) val = flat_load(c, w->x, add(c, src, add(c, mul(c, j, w->s[1]), mm_I(c, q - w->p[1]))));
                mm_push(c, &rowv, mm_loop(c, jj, mm_I(c, to[part] - from[part]), MT_FOR_SERIAL,
                                           mt_ts_store(a, xp, &di, 1, val)));
            }
        }
    }
    mt_tstmt *row = mm_seq(c, &rowv);
    if (w->p[0] > 0) {
        mt_tvar *z = mm_ivar(c, "pz");
        mt_texpr *zi = add(c, dst, mm_V(c, z));
        mt_tstmt *fills = mm_loop(c, z, mm_I(c, w->wp), MT_FOR_SERIAL, mt_ts_store(a, xp, &zi, 1, fill));
        mt_texpr *in = mt_te_bin(a, TE_AND, mt_te_bin(a, TE_LE, mm_I(c, 0), ih), mt_te_bin(a, TE_LT, ih, mm_I(c, w->H)));
        row = mt_ts_if(a, in, row, fills);
    }
    mt_tstmt *kloop = mm_loop(c, kh, mm_I(c, w->KH), MT_FOR_SERIAL, row);
    return nch == 1 ? mt_ts_let(a, ch, mm_I(c, 0), kloop) : mm_loop(c, ch, mm_I(c, nch), MT_FOR_SERIAL, kloop);
}

mt_texpr *win_input(win *w, mm *c, mt_tbuffer *xp, mt_texpr *n, mt_texpr *ch, mt_texpr *oh, mt_texpr *kh,
                    int64_t kw, mt_texpr *ow0, int off, int lanes) {
    mt_texpr *ow = mt_lw_ramp(&c->lw, add(c, ow0, mm_I(c, off)), lanes);
    if (xp) {
        int64_t o = kw * w->d[1], phase = o % w->s[1];
        mt_texpr *row = add(c, mul(c, ch, w->KH), kh);
        mt_texpr *ix = add(c, add(c, mul(c, row, w->wp), mm_I(c, phase * w->wq + o / w->s[1])), ow);
        return mt_te_load(c->a, xp, &ix, 1);
    }
    mt_texpr *ih = add(c, mul(c, oh, w->s[0]), mul(c, kh, w->d[0]));
    mt_texpr *plane = add(c, mul(c, n, w->C), ch);
    mt_texpr *ix = add(c, add(c, mul(c, add(c, mul(c, plane, w->H), ih), w->W), mm_I(c, kw * w->d[1])), ow);
    return flat_load(c, w->x, ix);
}
