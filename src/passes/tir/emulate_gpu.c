/*
 * emulate_gpu.c -- a GPU-scheduled function as a CPU function that computes
 * what the GPU would (the emulation behind `mtc --emulate`).
 *
 * A function in the GPU kernel form (tir.h, "GPU kernels") runs on the
 * CPU, MCUDA-style, once its index loops become ordinary loops:
 *
 *  - the outermost blockIdx loop becomes a parallel loop (blocks are
 *    independent: split_host_device then outlines it, and the CPU's
 *    threads run chunks of blocks); blockIdx loops inside it, serial;
 *  - every threadIdx loop becomes a serial loop over the block's threads.
 *
 * The form makes this exact. Phases are separated by barriers, and a
 * serial loop over the threads runs one phase for all threads before the
 * next phase starts: the barrier is the end of the loop (the loop fission
 * of MCUDA is already in the form: rules write one loop per phase). Within
 * a phase a thread sees only its own stores, so running the threads one
 * after the other gives what running them at once gives. Shared buffers
 * are allocated inside the block loop, so each block (each iteration of
 * the parallel loop) has its own. What runs outside the phases stores
 * nothing, so running it once per block is running it on every thread.
 *
 * A per-thread (local) buffer allocated outside the phases keeps each
 * thread's values from one phase to the next (the GPU matmul's
 * accumulators): here it becomes one buffer of a copy per thread, T times
 * its size for T threads per block, and the thread at linear index t
 * ((z * Y + y) * X + x) uses copy t: b[i] is b'[t * n + i].
 *
 * Warp shuffles. A store `v[i] = T.shfl_xor(x, m, w)` reads x as the
 * thread tx ^ m computed it at that same point of the phase (the
 * verifier keeps it directly in the phase: tir.h, IN_SHFL_XOR). So the
 * phase is split there into loops over the threads, the barrier-like
 * end of each loop standing for the warp's lockstep:
 *
 *     for tx: <the statements before>
 *     for tx: scratch[tx] = x                    every lane's value...
 *     for tx: v[i] = scratch[tx ^ m]             ...and its partner's,
 *             <the statements after>
 *
 * with the lets around the store repeated in each loop (one whose value
 * reads memory is computed once, into a value per thread the later loops
 * read), and a scratch of one value per thread and dtype per block. Since
 * a lane's partner lies in its own warp (m < w <= the warp size, which
 * divides the block), this is what the GPU computes; the values a thread
 * keeps across the split are in per-thread buffers, given a copy per
 * thread like any other (below).
 *
 * Tensor-core tiles. A fragment (scope wmma.*, tir.h) is the warp's, and
 * every lane of the warp holds all of it; here each thread gets a copy of
 * every fragment like any per-thread buffer, and each wmma intrinsic
 * becomes, in every thread, loops doing the warp's whole operation on the
 * thread's copy (`T.wmma_mma(acc[f], a[g], b[h])`: for i, j, k in 16^3:
 * acc[f + i * 16 + j] += float(a[g + i * 16 + k]) * float(b[h + k * 16 + j]),
 * k increasing; the products of float16 values are exact in float32). The
 * lanes thus compute the same fragments, and a wmma_store by each lane
 * writes the same values, so a lane that reads them after its store in the
 * same phase reads what the warp stored (the GPU's __syncwarp). 32 times
 * the work, and exact: no phase needs splitting.
 *
 * The result is for the host CPU: its target is `host`, and the rest of
 * the CPU pipeline (split_host_device, the LLVM backend) takes it as any
 * other function.
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "support/common.h"

enum { MAX_THREAD_LOOPS = 3, MAX_SPREAD = 64 };

/* A per-thread buffer allocated outside the phases and its copies. */
typedef struct spread {
    const mt_tbuffer *old;
    mt_tbuffer *copies;
    int64_t n;  /* elements of one copy */
} spread;

typedef struct emu {
    int blocks;  /* blockIdx loops around the statement being rewritten */
    int threads; /* threadIdx loops around it */
    mt_tvar *tvar[MAX_THREAD_LOOPS];   /* their variables, outermost first */
    int64_t text[MAX_THREAD_LOOPS];    /* and constant extents */
    char tdim[MAX_THREAD_LOOPS];       /* and dims: 'x', 'y', 'z' */
    spread sp[MAX_SPREAD];
    int nsp;
} emu;

static bool tagged(const mt_tstmt *s, const char *prefix) {
    return s->for_kind == MT_FOR_THREAD && s->thread_tag &&
           strncmp(s->thread_tag, prefix, strlen(prefix)) == 0;
}

/* ---- per-thread buffers allocated outside the phases ------------------------------ */

static const spread *spread_of(const emu *e, const mt_tbuffer *b) {
    for (int i = e->nsp - 1; i >= 0; i--)
        if (e->sp[i].old == b) return &e->sp[i];
    return NULL;
}

/* The threads of a block: the product of the nested threadIdx loops' extents
 * of the first phase in s (every phase has the launch's block dims). */
static int64_t block_threads(const mt_tstmt *s) {
    while (s && !(s->kind == TS_FOR && tagged(s, "threadIdx."))) {
        if (s->kind == TS_SEQ) {
            const mt_tstmt *found = NULL;
            for (int i = 0; i < s->nstmts && !found; i++)
                if (block_threads(s->stmts[i]) > 0) found = s->stmts[i];
            s = found;
        } else if (s->kind == TS_FOR || s->kind == TS_ALLOC || s->kind == TS_LET) s = s->body;
        else if (s->kind == TS_IF) s = s->then_s;
        else s = NULL;
    }
    int64_t n = s ? 1 : 0, ext;
    for (; s && s->kind == TS_FOR && tagged(s, "threadIdx."); s = s->body) {
        if (!mt_te_is_const_int(s->extent, &ext)) mt_ice("emulate_gpu: a threadIdx loop of symbolic extent");
        n *= ext;
    }
    return n;
}

/* t * n + ix, t the linear index of the current thread: (z * Y + y) * X +
 * x, whatever order the phase nests its threadIdx loops in. */
static mt_texpr *thread_index(mt_arena *a, const emu *e, const spread *sp, mt_texpr *ix) {
    if (e->threads == 0) mt_ice("emulate_gpu: per-thread buffer '%s' used outside the phases", sp->old->name);
    mt_texpr *t = mt_te_i64(a, 0);
    for (const char *d = "zyx"; *d; d++)
        for (int i = 0; i < e->threads; i++)
            if (e->tdim[i] == *d)
                t = mt_te_bin(a, TE_ADD, mt_te_bin(a, TE_MUL, t, mt_te_i64(a, e->text[i])), mt_te_var(a, e->tvar[i]));
    mt_texpr *off = mt_te_bin(a, TE_MUL, t, mt_te_i64(a, sp->n));
    if (ix->kind == TE_RAMP) return mt_te_ramp(a, mt_te_bin(a, TE_ADD, off, ix->a), ix->b, ix->lanes);
    return mt_te_bin(a, TE_ADD, off, ix);
}

static mt_texpr *emu_expr(mt_tmutator *m, mt_texpr *e) {
    const spread *sp = e->kind == TE_LOAD ? spread_of(m->ctx, e->buf) : NULL;
    if (!sp) return mt_tmutate_expr_children(m, e);
    mt_texpr *ix = thread_index(m->arena, m->ctx, sp, mt_tmutate_expr(m, e->args[0]));
    return mt_te_load(m->arena, sp->copies, &ix, 1);
}

static mt_tstmt *spread_store(mt_tmutator *m, mt_tstmt *s, const spread *sp) {
    mt_texpr *ix = thread_index(m->arena, m->ctx, sp, mt_tmutate_expr(m, s->idx[0]));
    return mt_ts_store(m->arena, sp->copies, &ix, 1, mt_tmutate_expr(m, s->value));
}

static mt_tstmt *spread_alloc(mt_tmutator *m, mt_tstmt *s) {
    emu *e = m->ctx;
    int64_t n, t = block_threads(s->body);
    if (s->buf->ndim != 1 || !mt_te_is_const_int(s->buf->shape[0], &n) || t == 0 || e->nsp == MAX_SPREAD)
        mt_ice("emulate_gpu: per-thread buffer '%s' allocated outside the phases is not handled",
               s->buf->name);
    mt_texpr *size = mt_te_i64(m->arena, n * t);
    mt_tbuffer *copies = mt_tbuffer_new(m->arena, s->buf->name, s->buf->dtype, 1, &size);
    copies->scope = MT_SCOPE_LOCAL;
    e->sp[e->nsp++] = (spread){s->buf, copies, n};
    mt_tstmt *body = mt_tmutate_stmt(m, s->body);
    e->nsp--;
    return mt_ts_at(mt_ts_alloc(m->arena, copies, body), s->loc);
}

/* ---- warp shuffles ---------------------------------------------------------------- */

enum { MAX_LETS = 64 };

typedef MT_VEC(mt_tstmt *) svec;

typedef struct splitter {
    mt_arena *a;
    const mt_tstmt *phase;           /* the threadIdx.x loop being split */
    int64_t threads;
    mt_tvar *let_var[MAX_LETS];      /* the lets around the statement being collected */
    mt_texpr *let_val[MAX_LETS];     /* (a value that reads memory: its copy in kept) */
    int nlets;
    svec kept;                       /* allocations of let values kept per thread */
    mt_tbuffer *scratch[MT_DTYPE_COUNT_]; /* a value per thread, per dtype */
    svec group;                      /* statements of the loop being gathered */
    svec out;                        /* the loops made */
} splitter;

static mt_tstmt *in_lets(splitter *sp, mt_tstmt *s) {
    for (int i = sp->nlets - 1; i >= 0; i--) s = mt_ts_let(sp->a, sp->let_var[i], sp->let_val[i], s);
    return s;
}

static void flush(splitter *sp) {
    if (!sp->group.len) return;
    mt_tstmt *l = mt_ts_for(sp->a, sp->phase->var, sp->phase->min, sp->phase->extent, MT_FOR_THREAD,
                            mt_ts_seq(sp->a, sp->group.data, sp->group.len));
    l->thread_tag = sp->phase->thread_tag;
    MT_VEC_PUSH(sp->a, &sp->out, mt_ts_at(l, sp->phase->loc));
    sp->group.len = 0;
}

/* tx ^ m for a power of two m: tx + m when bit m of tx is clear, else tx - m. */
static mt_texpr *partner(mt_arena *a, mt_tvar *tx, int64_t m) {
    mt_texpr *t = mt_te_var(a, tx), *M = mt_te_i64(a, m);
    mt_texpr *bit = mt_te_bin(a, TE_FLOORMOD, mt_te_bin(a, TE_FLOORDIV, t, M), mt_te_i64(a, 2));
    return mt_te_bin(a, TE_SUB, mt_te_bin(a, TE_ADD, t, M), mt_te_bin(a, TE_MUL, bit, mt_te_i64(a, 2 * m)));
}

/* s = `v[i] = T.shfl_xor(x, m, w)`: two loops, scratch[tx] = x, then v[i] = scratch[tx ^ m]. */
static void split_shuffle(splitter *sp, mt_tstmt *s) {
    const mt_texpr *sh = s->value;
    if (sh->kind != TE_CALL || sh->intrin != IN_SHFL_XOR || s->nidx != 1)
        mt_ice("emulate_gpu: a warp shuffle that is not the whole value of a flat store");
    mt_arena *a = sp->a;
    mt_tbuffer **scr = &sp->scratch[sh->dtype];
    if (!*scr) {
        mt_texpr *n = mt_te_i64(a, sp->threads);
        *scr = mt_tbuffer_new(a, "shfl_scratch", sh->dtype, 1, &n);
        (*scr)->scope = MT_SCOPE_SHARED;
    }
    mt_texpr *me = mt_te_var(a, sp->phase->var), *other = partner(a, sp->phase->var, sh->args[1]->ival);
    flush(sp);
    MT_VEC_PUSH(a, &sp->group, in_lets(sp, mt_ts_store(a, *scr, &me, 1, sh->args[0])));
    flush(sp);
    mt_tstmt *use = mt_ts_store(a, s->buf, s->idx, 1, mt_te_load(a, *scr, &other, 1));
    MT_VEC_PUSH(a, &sp->group, in_lets(sp, mt_ts_at(use, s->loc))); /* the statements after join it */
}

/* A let's value that reads memory is evaluated once, where the let is,
 * into a value per thread that nothing writes again: the loops after a
 * split read it there (recomputed, it could see later stores). */
static mt_texpr *keep_value(splitter *sp, const mt_tstmt *s) {
    mt_arena *a = sp->a;
    mt_texpr *n = mt_te_i64(a, sp->threads), *me = mt_te_var(a, sp->phase->var);
    mt_tbuffer *b = mt_tbuffer_new(a, s->var->name, s->var->dtype, 1, &n);
    b->scope = MT_SCOPE_SHARED;
    MT_VEC_PUSH(a, &sp->kept, mt_ts_alloc(a, b, NULL));
    MT_VEC_PUSH(a, &sp->group, in_lets(sp, mt_ts_store(a, b, &me, 1, s->value)));
    return mt_te_load(a, b, &me, 1);
}

/* The phase's statements, in order, each in the lets around it. */
static void collect(splitter *sp, mt_tstmt *s) {
    if (!mt_tstmt_has_shuffle(s)) {
        MT_VEC_PUSH(sp->a, &sp->group, in_lets(sp, s));
    } else if (s->kind == TS_SEQ) {
        for (int i = 0; i < s->nstmts; i++) collect(sp, s->stmts[i]);
    } else if (s->kind == TS_LET && sp->nlets < MAX_LETS && !mt_texpr_has_shuffle(s->value)) {
        sp->let_var[sp->nlets] = s->var;
        sp->let_val[sp->nlets] = mt_texpr_reads_memory(s->value) ? keep_value(sp, s) : s->value;
        sp->nlets++;
        collect(sp, s->body);
        sp->nlets--;
    } else if (s->kind == TS_STORE) {
        split_shuffle(sp, s);
    } else {
        mt_ice("emulate_gpu: a warp shuffle under a statement of kind %d in its phase", (int)s->kind);
    }
}

/* The phase s (a threadIdx.x loop holding shuffles) as loops split at each. */
static mt_tstmt *split_phase(mt_arena *a, mt_tstmt *s) {
    splitter sp;
    memset(&sp, 0, sizeof sp);
    sp.a = a, sp.phase = s;
    if (!mt_te_is_const_int(s->extent, &sp.threads)) mt_ice("emulate_gpu: a phase of symbolic extent with shuffles");
    collect(&sp, s->body);
    flush(&sp);
    mt_tstmt *r = mt_ts_seq(a, sp.out.data, sp.out.len);
    for (int t = 0; t < MT_DTYPE_COUNT_; t++)
        if (sp.scratch[t]) r = mt_ts_alloc(a, sp.scratch[t], r);
    for (int i = 0; i < sp.kept.len; i++) r = mt_ts_alloc(a, sp.kept.data[i]->buf, r);
    return mt_ts_at(r, s->loc);
}

/* ---- tensor-core tiles ------------------------------------------------------------- */

typedef struct wx {
    mt_arena *a;
    mt_tvar *v[3]; /* r, c (or i, j), k */
} wx;

static mt_texpr *wI(wx *w, int64_t v) { return mt_te_i64(w->a, v); }
static mt_texpr *wV(wx *w, int i) { return mt_te_var(w->a, w->v[i]); }
static mt_texpr *wadd(wx *w, mt_texpr *x, mt_texpr *y) { return mt_te_bin(w->a, TE_ADD, x, y); }
static mt_texpr *wmul(wx *w, mt_texpr *x, int64_t y) { return mt_te_bin(w->a, TE_MUL, x, wI(w, y)); }

/* addr's buffer at its offset + x * sx + y * sy. */
static mt_texpr *wat(wx *w, const mt_texpr *addr, int x, int64_t sx, int y, int64_t sy) {
    mt_texpr *ix = wadd(w, addr->args[0], wadd(w, wmul(w, wV(w, x), sx), wmul(w, wV(w, y), sy)));
    return mt_te_load(w->a, addr->buf, &ix, 1);
}

static mt_tstmt *wstore(wx *w, const mt_texpr *addr, int x, int64_t sx, int y, int64_t sy, mt_texpr *v) {
    const mt_texpr *ld = wat(w, addr, x, sx, y, sy);
    return mt_ts_store(w->a, addr->buf, ld->args, 1, v);
}

/* for v[0], v[1] in 16 x 16 (and v[2] when k): body. */
static mt_tstmt *wloops(wx *w, mt_tstmt *body, bool k) {
    for (int i = k ? 2 : 1; i >= 0; i--) body = mt_ts_for(w->a, w->v[i], wI(w, 0), wI(w, 16), MT_FOR_SERIAL, body);
    return body;
}

/* The warp's operation e (a wmma intrinsic) as loops, on the fragments'
 * elements (r, c) at r * 16 + c (tir.h). */
static mt_tstmt *wmma_loops(mt_arena *a, const mt_texpr *e) {
    wx w = {a, {mt_tvar_new(a, "wr", MT_INT64), mt_tvar_new(a, "wc", MT_INT64), mt_tvar_new(a, "wk", MT_INT64)}};
    mt_texpr *const *g = e->args;
    int64_t ldm = e->nargs == 3 ? g[2]->ival : 0;
    switch (e->intrin) {
    case IN_WMMA_FILL: return wloops(&w, wstore(&w, g[0], 0, 16, 1, 1, g[1]), false);
    case IN_WMMA_LOAD_A: return wloops(&w, wstore(&w, g[0], 0, 16, 1, 1, wat(&w, g[1], 1, ldm, 0, 1)), false);
    case IN_WMMA_LOAD_B: return wloops(&w, wstore(&w, g[0], 0, 16, 1, 1, wat(&w, g[1], 0, ldm, 1, 1)), false);
    case IN_WMMA_STORE: return wloops(&w, wstore(&w, g[0], 0, ldm, 1, 1, wat(&w, g[1], 0, 16, 1, 1)), false);
    case IN_WMMA_MMA: {
        mt_texpr *x = mt_te_cast(a, MT_FLOAT32, wat(&w, g[1], 0, 16, 2, 1));
        mt_texpr *y = mt_te_cast(a, MT_FLOAT32, wat(&w, g[2], 2, 16, 1, 1));
        mt_texpr *sum = mt_te_bin(a, TE_ADD, wat(&w, g[0], 0, 16, 1, 1), mt_te_bin(a, TE_MUL, x, y));
        return wloops(&w, wstore(&w, g[0], 0, 16, 1, 1, sum), true);
    }
    default: mt_ice("emulate_gpu: intrinsic T.%s is not a wmma one", mt_intrin_name(e->intrin));
    }
}

/* ---- index loops ------------------------------------------------------------------- */

static mt_tstmt *emu_stmt(mt_tmutator *m, mt_tstmt *s) {
    emu *e = m->ctx;
    bool per_thread = s->kind == TS_ALLOC && (s->buf->scope == MT_SCOPE_LOCAL || mt_scope_is_fragment(s->buf->scope));
    if (per_thread && e->blocks > 0 && e->threads == 0) return spread_alloc(m, s);
    if (mt_tstmt_is_wmma(s)) return mt_tmutate_stmt(m, mt_ts_at(wmma_loops(m->arena, s->value), s->loc));
    const spread *sp = s->kind == TS_STORE ? spread_of(e, s->buf) : NULL;
    if (sp) return spread_store(m, s, sp);
    if (s->kind != TS_FOR || s->for_kind != MT_FOR_THREAD) return mt_tmutate_stmt_children(m, s);
    bool block = tagged(s, "blockIdx.");
    if (!block && !tagged(s, "threadIdx."))
        mt_ice("emulate_gpu: loop bound to unknown index '%s'", s->thread_tag ? s->thread_tag : "?");
    if (!block && e->threads == 0 && mt_tstmt_has_shuffle(s->body)) return mt_tmutate_stmt(m, split_phase(m->arena, s));
    int *depth = block ? &e->blocks : &e->threads;
    mt_for_kind kind = block && e->blocks == 0 ? MT_FOR_PARALLEL : MT_FOR_SERIAL;
    if (!block) {
        if (e->threads == MAX_THREAD_LOOPS || !mt_te_is_const_int(s->extent, &e->text[e->threads]))
            mt_ice("emulate_gpu: threadIdx loops nested too deep or of symbolic extent");
        e->tvar[e->threads] = s->var;
        e->tdim[e->threads] = s->thread_tag[strlen("threadIdx.")];
    }
    (*depth)++;
    mt_tstmt *r = mt_ts_copy(m->arena, mt_tmutate_stmt_children(m, s));
    (*depth)--;
    r->for_kind = kind;
    r->thread_tag = NULL;
    return r;
}

mt_tfunc *mt_tir_emulate_gpu(mt_arena *a, mt_tfunc *f, const mt_target_desc *host) {
    if (mt_tfunc_target(f)->kind != MT_TARGET_CUDA) return f;
    emu e;
    memset(&e, 0, sizeof e);
    mt_tmutator m = {a, emu_expr, emu_stmt, &e};
    mt_tfunc *g = mt_tfunc_with_body(a, f, f->body ? mt_tmutate_stmt(&m, f->body) : NULL);
    if (g == f) {
        g = MT_NEW(a, mt_tfunc);
        *g = *f;
    }
    g->target = host;
    return g;
}
