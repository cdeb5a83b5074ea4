/*
 * rule_matmul_prims.c -- the matmul rule's packed schedule, and its
 * matrix-vector schedule (rule_matvec.c; at the end of this file), as
 * traces of schedule primitives, where primitives say them exactly.
 *
 * When. A plain C = A @ B (2-D, no batch, no prologue: A and B loads of
 * two different parameters, one dtype; B read as b[k, j] or, x @ w.T, as
 * b[j, k]), C a parameter or followed by one short elementwise epilogue
 * (epilogue_block), of constant M, N and K, N whole tiles of NR = nv
 * vectors of vl lanes in column blocks that divide it (N itself when
 * narrower than the rule's block NC, else the widest such block of at most
 * NC: even_blocks; 1024 x 768 x 768 to 2048 x 768 x 3072, blocks of 256
 * and 384 where NC = 320 or 512 left a last block of 128 or 256 columns,
 * within 1 % of the lowered form's blocks, or up to 1 % faster). A b read
 * along k is copied in vl x vl squares (pack_transposed: 1024^3, 512 x
 * 1024 x 4096, 2048^3, 300 x 3000 x 512, within 0.5 % of the lowered form;
 * relu(x @ w.T + b) at 1024 x 768 -> 3072 2 % faster). M may leave a last
 * tile of M % MR rows: the split's clamped last iteration, which
 * partition_tails peels into a tile of its own, as the lowered form has
 * one (1001 x 1024^2, 2047 x 256 x 2048, 135 and 143 x 1024^2, relu(x @ w
 * + b) at 1001 rows: within 1 % of it, 2026-11-29). K may leave a last K
 * block shorter than KC: the copy of a block is its T.min(KC, K - k0 * KC)
 * rows (the split's clamp), copied 8 at a time by a split of that extent,
 * a pair that compact_buffers reads as one box, so the copy stays one KC x
 * NC block (1024 x 1100 x 1024, 512 x 3000 x 512, 1001 x 1500 x 1024, 256
 * x 5000 x 256: within 1 %). The rule has chosen its packed path
 * (rule_matmul.c: gen_packed; not the few-rows or GEMV schedules) with the
 * knob values already settled, for more than a few rows (M > 128: with
 * fewer the copy of B dominates, and the lowered form's, 8 rows of B at a
 * time along them, ran 1.4x faster than panel by panel at 16 x 4096 by
 * 4096^2 on one thread). Everything else (column tails, long epilogues,
 * epilogues after K blocks, batches, casts, a transposed A) is the lowered
 * form of rule_matmul.c, which is one `apply_rule` step when printed.
 *
 * What. The same algorithm as the lowered form (GotoBLAS / BLIS): per
 * column block j0 and K block k0, B's block copied into panels of NR
 * columns (cache_read, compute_at, transform_layout to (j // NR, k, j %
 * NR)), its rows copied on threads; then the row tiles i0 on threads,
 * each MR x NR tile of C summed over the block in registers (use_fma;
 * unroll i1 and the vectors j2; vectorize j3), started from zero at the
 * first K block (decompose_reduction at k1, under `if k0 == 0`):
 *
 *     j3 = split(j, vl); j2 = split(.., nv); j0, j1 = split(.., NC / NR)
 *     k0, k1 = split(k, KC)                       (K blocked)
 *     i0, i1 = split(i, MR)
 *     reorder -> j0, k0, i0, j1, k1, i1, j2, j3
 *
 * Each primitive records itself (trace.h), so `--emit schedule` prints
 * the schedule and the printed text replays it. Measured against the
 * lowered form (in-process alternation on the Zen 5 VM, 2 threads,
 * 2026-11-29): 256^3 to 2048^3 and 1024 x 4096 x 1024 within 1 %, the
 * noise of the machine (docs/schedule.md, "The matmul rule").
 */
#include "schedule/block_util.h"
#include "schedule/matmul_internal.h"
#include "schedule/primitives.h"

/* The innermost `want` loops around block `name` (block_util.h). */
static bool last_loops(mt_sched *s, const char *name, mt_tvar **out, int want) {
    return mt_blk_last_loops(s, "matmul rule", name, out, want);
}

/* The loop that binds iteration variable v of block b. */
static mt_tvar *loop_of(const mt_tstmt *b, const mt_tvar *v) {
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].var == v) return b->iter_values[i]->var;
    return NULL;
}

/* e is p[d0, d1], p a parameter of the dtype of C. */
static bool plain_load(mm *c, const mt_texpr *e, const mt_tvar *d0, const mt_tvar *d1) {
    return e->kind == TE_LOAD && e->nargs == 2 && e->dtype == c->dt && e->lanes == 1 && mm_is_param(c, e->buf) &&
           e->args[0]->kind == TE_VAR && e->args[0]->var == d0 && e->args[1]->kind == TE_VAR &&
           e->args[1]->var == d1;
}

static bool divides(int64_t d, const mt_texpr *e) {
    int64_t v;
    return d > 0 && mt_te_is_const_int(e, &v) && v > 0 && v % d == 0;
}

/* The body's statements under C's allocation: the matmul's nest, and with
 * an epilogue the epilogue's (NULL: none). */
static mt_tstmt *nest_at(mt_tstmt *body, int i) {
    while (body->kind == TS_ALLOC) body = body->body;
    if (body->kind != TS_SEQ) return i == 0 ? body : NULL;
    return i < body->nstmts ? body->stmts[i] : NULL;
}

static bool matmul_nest(mt_tstmt *body, mm_nest *n) {
    mt_tstmt *s = nest_at(body, 0);
    return s->kind == TS_FOR && mm_parse_nest(s, n);
}

/* The epilogue's nest is loops (rows, columns) around block e, the inner
 * loop the one that indexes its output's last dim (what epilogue()
 * vectorizes; a loop function may write its loops (j, i)). */
static bool rows_then_columns(mt_tstmt *nest, const mt_tstmt *e) {
    mm_nest n;
    if (!nest || nest->kind != TS_FOR || !mm_parse_nest(nest, &n) || n.blk != e || n.nloops != 2) return false;
    const mt_tstmt *st = e->body;
    const mt_tvar *inner = nest->body->var;
    for (int i = 0; i < e->niters; i++)
        if (e->iter_values[i]->var == inner)
            return st->kind == TS_STORE && st->nidx == 2 && st->idx[1]->kind == TE_VAR && st->idx[1]->var == e->iters[i].var;
    return false;
}

/* The function's one block after the matmul's, when it is an epilogue
 * the primitives may take: K one block (the epilogue then follows the
 * tile's k loop), one output of C's dtype, its iterations spatial, its
 * math short (not c->epi_loop: see epilogue()). NULL for a plain matmul;
 * *ok false for anything else. */
static const mt_tstmt *epilogue_block(mm *c, const mm_nest *n, bool *ok) {
    *ok = c->nep == 0 && c->P == c->C;
    if (c->nep == 0) return NULL;
    *ok = false;
    mt_blk_stmts all = mt_blk_blocks_under(c->a, c->f->body);
    if (c->nep != 1 || c->split || c->epi_loop || all.len != 2 || c->ep[0].out->dtype != c->dt ||
        !mm_is_param(c, c->ep[0].out))
        return NULL;
    const mt_tstmt *e = all.data[0] == n->blk ? all.data[1] : all.data[0];
    for (int i = 0; i < e->niters; i++)
        if (e->iters[i].kind != MT_ITER_SPATIAL) return NULL;
    *ok = e->niters == 2 && rows_then_columns(nest_at(c->f->body, 1), e);
    return e;
}

/* The column block: N itself when narrower than the rule's block nc,
 * else, when N is whole tiles of nr, the widest block of whole tiles at
 * most nc that divides N into at most twice the blocks nc would (768
 * columns of 32, nc = 320: 3 blocks of 256, not 320 + 320 + 128), so
 * that no block is a column tail; nc when there is none. */
static int64_t even_blocks(int64_t N, int64_t nc, int nr) {
    if (N <= nc) return N;
    if (N % nr || nc < nr) return nc;
    int64_t tiles = N / nr, nb = (N + nc - 1) / nc;
    for (int64_t b = nb; b <= 2 * nb && b <= tiles; b++)
        if (tiles % b == 0) return N / b;
    return nc;
}

/* Does the function take the primitives (the top)? *nc: the column
 * block, N itself when N is narrower than the rule's block; *epi: the
 * epilogue's block, or NULL. */
static bool fits(mm *c, mm_nest *n, int64_t *nc, const mt_tstmt **epi) {
    mt_tvar *i = c->sv[0], *j = c->sv[1];
    int nr = c->nv * c->vl;
    int64_t M, N, K;
    bool ok;
    if (!mt_te_is_const_int(c->ext[1], &N)) return false;
    *nc = even_blocks(N, c->ncblk, nr);
    return c->own && c->ns == 2 && !c->ap_all && !c->cols &&
           !mm_few_rows(c) &&
           plain_load(c, c->X, i, c->kv) && (plain_load(c, c->Y, c->kv, j) || plain_load(c, c->Y, j, c->kv)) &&
           c->X->buf != c->Y->buf &&
           mt_te_is_const_int(c->ext[0], &M) && divides(*nc, c->ext[1]) && *nc % nr == 0 &&
           mt_te_is_const_int(c->K, &K) && matmul_nest(c->f->body, n) && ((*epi = epilogue_block(c, n, &ok)), ok);
}

/* Reorders the nest whose loops are cur[0..n) (outermost first) into the
 * order of want[0..n), swapping neighbours. */
static bool order(mt_sched *s, mt_tvar **cur, mt_tvar *const *want, int n) {
    for (int pass = 0; pass < n; pass++)
        for (int q = 0; q + 1 < n; q++) {
            int a = 0, b = 0;
            while (a < n && want[a] != cur[q]) a++;
            while (b < n && want[b] != cur[q + 1]) b++;
            if (a == n || b == n) return false;
            if (a < b) continue;
            if (!mt_sched_reorder(s, cur[q], cur[q + 1])) return false;
            mt_tvar *t = cur[q];
            cur[q] = cur[q + 1], cur[q + 1] = t;
        }
    return true;
}

/* B's block into panels of nr columns, pack_rows rows of the block at a
 * time (each row one run of memory: panel by panel, each row of a panel
 * was a new page at N = 4096, 5-7 % slower at 256 and 512 x 4096 by
 * 4096^2; one row at a time, 4 % slower at 256 x 256 by 256 x 2048 --
 * the lowered form's kr streams in flight), the groups of rows on
 * threads:
 *
 *     ax1_0, ax1_1, ax1_2 = split(ax1, [.., nv, vl]); ax0_0, ax0_1 = split(ax0, pack_rows)
 *     reorder -> ax0_0, ax1_0, ax0_1, ax1_1, ax1_2   (ax0_0 parallel, ax0_1 and ax1_1 unrolled) */
/* B read along k (x @ w.T: b[j, k]): its block copied into the same
 * panels, vl columns (rows of b) by vl rows at a time, the vl loads of a
 * square along b's rows, unit-stride:
 *
 *     ax0_0, ax0_1, ax0_2 = split(ax0, [.., nv, vl]); ax1_0, ax1_1 = split(ax1, vl)
 *     reorder -> ax0_0, ax1_0, ax0_1, ax1_1, ax0_2   (ax0_0 parallel, ax0_1 unrolled, ax0_2 vectorized)
 *
 * a loop of vl stores of vl lanes whose loads run down a column of b,
 * which transpose_tiles turns into vl row loads and a transpose in
 * registers, as the lowered form's squares (1024^3, 1 and 2 threads:
 * within 1 %). */
static bool pack_transposed(mt_sched *s, mm *c, const char *cache, mt_tvar *const *pl) {
    mt_arena *a = s->arena;
    mt_tvar *p0, *p1, *p2, *q0, *q1;
    if (!mt_sched_split(s, pl[0], mt_te_i64(a, c->vl), &p0, &p2) ||
        !mt_sched_split(s, p0, mt_te_i64(a, c->nv), &p0, &p1) || !mt_sched_split(s, pl[1], mt_te_i64(a, c->vl), &q0, &q1))
        return false;
    mt_tvar *cur[5], *want[5] = {p0, q0, p1, q1, p2};
    if (!last_loops(s, cache, cur, 5) || !order(s, cur, want, 5)) return false;
    if (!mt_sched_unroll(s, p1) || !mt_sched_vectorize(s, p2)) return false;
    return !c->par || mt_sched_parallel(s, p0);
}

static bool pack(mt_sched *s, mm *c, const char *blk, mt_tvar *at, int nr) {
    mt_arena *a = s->arena;
    const char *cache;
    bool tr = c->Y->args[0]->var != c->kv; /* b[j, k] */
    if (!mt_sched_cache_read(s, blk, c->Y->buf->name, MT_SCOPE_GLOBAL, &cache) || !mt_sched_compute_at(s, cache, at))
        return false;
    mt_index_map *m = MT_NEW(a, mt_index_map);
    m->nparams = 2, m->nouts = 3;
    m->params = MT_NEW_ARRAY(a, mt_tvar *, 2);
    m->outs = MT_NEW_ARRAY(a, mt_texpr *, 3);
    m->params[tr] = mt_tvar_new(a, "k", MT_INT64), m->params[!tr] = mt_tvar_new(a, "j", MT_INT64);
    mt_texpr *k = mt_te_var(a, m->params[tr]), *j = mt_te_var(a, m->params[!tr]), *w = mt_te_i64(a, nr);
    m->outs[0] = mt_te_bin(a, TE_FLOORDIV, j, w), m->outs[1] = k, m->outs[2] = mt_te_bin(a, TE_FLOORMOD, j, w);
    const mt_tbuffer *pb = NULL;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, "matmul rule", cache, &path)) return false;
    pb = path.data[path.len - 1]->body->buf;
    mt_tvar *pl[2], *p0, *p1, *pv = NULL, *r0 = NULL, *r1 = NULL;
    if (!mt_sched_transform_layout(s, cache, pb->name, m) || !last_loops(s, cache, pl, 2)) return false;
    if (tr) return pack_transposed(s, c, cache, pl);
    if (!mt_sched_split(s, pl[1], mt_te_i64(a, nr), &p0, &p1)) return false;
    /* a panel's row as nv vectors, unrolled (left to vectorize, a loop of
     * nv: 1-2 % slower at K = 256) */
    if (c->nv > 1 && !mt_sched_split(s, p1, mt_te_i64(a, c->vl), &pv, &p1)) return false;
    int64_t rows = c->kcblk, kr = c->pack_rows; /* the rows: the block's depth (fits: constant) */
    if (!c->split && !mt_te_is_const_int(c->K, &rows)) return false;
    if (kr > 1 && rows > kr && rows % kr == 0) {
        if (!mt_sched_split(s, pl[0], mt_te_i64(a, kr), &r0, &r1) || !mt_sched_reorder(s, r1, p0) ||
            !mt_sched_unroll(s, r1))
            return false;
        pl[0] = r0;
    }
    if ((pv && !mt_sched_unroll(s, pv)) || !mt_sched_vectorize(s, p1)) return false;
    return !c->par || mt_sched_parallel(s, pl[0]);
}

/* The epilogue on each register tile as the k loop leaves it (under j1,
 * after k1), its rows and vectors unrolled: the tile of C then lives only
 * there, compact_buffers makes it a local tile at constant offsets and
 * SROA registers, as in the lowered form (relu(x @ w + b), 512 x 1024 x
 * 1024: within 0.7 % of it). A long epilogue (c->epi_loop: gelu's erf,
 * exp, tanh) is the lowered form's, which copies the registers to a tile
 * in L1 and runs one copy of the math in a loop over it: as a loop here,
 * the tile's variable offsets kept C in memory through the k loop (2x
 * slower), and cache_write cannot make the copy of a tile whose reduce
 * loop is outside its rows. */
static bool epilogue(mt_sched *s, mm *c, const mt_tstmt *e, mt_tvar *j1) {
    const char *name = mt_blk_bname(e);
    mt_tvar *l[2], *v0, *v1;
    return mt_sched_reverse_compute_at(s, name, j1) && last_loops(s, name, l, 2) &&
           mt_sched_split(s, l[1], mt_te_i64(s->arena, c->vl), &v0, &v1) && mt_sched_unroll(s, l[0]) &&
           mt_sched_unroll(s, v0) && mt_sched_vectorize(s, v1);
}

/* Zeros at the first K block, in the tile's registers. */
static bool init_tile(mt_sched *s, const char *blk, mt_tvar *k1, int nv) {
    if (!mt_sched_decompose_reduction(s, blk, k1)) return false;
    mt_tvar *l[3];
    int n = nv > 1 ? 3 : 2;
    if (!last_loops(s, s->made, l, n)) return false;
    for (int q = 0; q + 1 < n; q++)
        if (!mt_sched_unroll(s, l[q])) return false;
    return mt_sched_vectorize(s, l[n - 1]);
}

static bool schedule(mt_sched *s, mm *c, int mr, int64_t nc, const mm_nest *n, const mt_tstmt *epi) {
    mt_arena *a = s->arena;
    const char *blk = n->blk->name;
    int nr = c->nv * c->vl;
    mt_tvar *li = loop_of(n->blk, c->sv[0]), *lj = loop_of(n->blk, c->sv[1]), *lk = loop_of(n->blk, c->kv);
    mt_tvar *j0, *j1, *j2 = NULL, *j3, *t, *k0 = NULL, *k1 = lk, *i0, *i1;
    if (!mt_sched_split(s, lj, mt_te_i64(a, c->vl), &t, &j3)) return false;
    if (c->nv > 1 && !mt_sched_split(s, t, mt_te_i64(a, c->nv), &t, &j2)) return false;
    if (!mt_sched_split(s, t, mt_te_i64(a, nc / nr), &j0, &j1)) return false;
    if (c->split && !mt_sched_split(s, lk, mt_te_i64(a, c->kcblk), &k0, &k1)) return false;
    if (!mt_sched_split(s, li, mt_te_i64(a, mr), &i0, &i1)) return false;
    /* the nest (i, k, j as legalized, or any order) now has exactly these loops */
    mt_tvar *cur[8], *want[8] = {j0, k0, i0, j1, k1, i1, j2, j3};
    int nw = 0;
    for (int q = 0; q < 8; q++)
        if (want[q]) want[nw++] = want[q];
    if (!last_loops(s, blk, cur, nw)) return false;
    if (!order(s, cur, want, nw) || !mt_sched_use_fma(s, blk) || !pack(s, c, blk, k0 ? k0 : j0, nr) ||
        (epi && !epilogue(s, c, epi, j1)) || !init_tile(s, blk, k1, c->nv))
        return false;
    if (c->par && !mt_sched_parallel(s, i0)) return false;
    return mt_sched_unroll(s, i1) && (!j2 || mt_sched_unroll(s, j2)) && mt_sched_vectorize(s, j3);
}

mt_tfunc *mm_packed_primitives(mm *c, int mr) {
    mm_nest n;
    int64_t nc;
    const mt_tstmt *epi = NULL;
    if (!fits(c, &n, &nc, &epi)) return NULL;
    mt_sched s;
    mt_sched_init(&s, c->a, c->f);
    return schedule(&s, c, mr, nc, &n, epi) ? s.func : NULL;
}

/* ---- the matrix-vector schedule (rule_matvec.c) ----------------------------------------- */

/*
 * x @ w.T for few rows (w (N, K) read along k), as rule_matvec.c's lowered
 * form: per block of JB columns and row i, JB dot products in vl-lane
 * partial sums over k, one vector of x shared by the JB rows of w, then
 * each folded across its lanes; the blocks in parallel chunks:
 *
 *     k0, k1 = split(k, vl); rfactor(k1)           partial sums C_rf[i, j, vl]
 *     j0, j1 = split(j, JB); reorder -> j0, i, k0, j1, k1
 *     reverse_compute_at(C, i); compute_at(zeros, i); (epilogue at i)
 *     use_fma; unroll(j1); vectorize(k1)
 *     the combination: unroll its columns, vectorize its lanes (a fold)
 *     c0, c1 = split(j0, blocks per chunk); parallel(c0)
 *
 * A last partial vector of K (K % vl) is partition_tails' peel of k0, its
 * elements into lanes of the partial sums. Whole blocks only (N % JB ==
 * 0: a last partial block would sit under the parallel loop, where the
 * lowered form runs it after), K at least vl, constant shapes.
 */
static bool matvec_fits(mm *c, mm_nest *n, const mt_tstmt **epi) {
    int64_t M, N, K;
    bool ok;
    return c->own && c->ns == 2 && plain_load(c, c->X, c->sv[0], c->kv) && plain_load(c, c->Y, c->sv[1], c->kv) &&
           c->X->buf != c->Y->buf && mt_te_is_const_int(c->ext[0], &M) && mt_te_is_const_int(c->ext[1], &N) &&
           mt_te_is_const_int(c->K, &K) && N % mm_matvec_jb() == 0 && K >= c->vl && !c->split &&
           matmul_nest(c->f->body, n) && ((*epi = epilogue_block(c, n, &ok)), ok);
}

/* The combination, the zeros and the epilogue under row loop i. The
 * combination's init first, a nest of its own (then C of a block is one
 * box compact_buffers makes a JB-element local when an epilogue reads it). */
static bool matvec_row_parts(mt_sched *s, const char *blk, const char *zeros, const mt_tstmt *epi) {
    mt_tvar *l[2];
    if (!last_loops(s, blk, l, 2) || !mt_sched_decompose_reduction(s, blk, l[0]) || !mt_sched_vectorize(s, l[1]) ||
        !mt_sched_unroll(s, l[0]) || !last_loops(s, s->made, l, 1) || !mt_sched_unroll(s, l[0]))
        return false;
    if (!last_loops(s, zeros, l, 2) || !mt_sched_unroll(s, l[0]) || !mt_sched_vectorize(s, l[1])) return false;
    return !epi || (last_loops(s, mt_blk_bname(epi), l, 1) && mt_sched_unroll(s, l[0]));
}

static bool matvec_schedule(mt_sched *s, mm *c, const mm_nest *n, const mt_tstmt *epi) {
    mt_arena *a = s->arena;
    const char *blk = n->blk->name;
    int jb = mm_matvec_jb();
    int64_t N, K, nch;
    mt_te_is_const_int(c->ext[1], &N), mt_te_is_const_int(c->K, &K);
    int64_t bpc = mm_matvec_chunk(N, K, (int64_t)mt_dtype_size(c->dt), &nch);
    mt_tvar *li = loop_of(n->blk, c->sv[0]), *lj = loop_of(n->blk, c->sv[1]), *lk = loop_of(n->blk, c->kv);
    mt_tvar *k0, *k1, *j0, *j1, *cur[5];
    if (!mt_sched_split(s, lk, mt_te_i64(a, c->vl), &k0, &k1) || !mt_sched_rfactor(s, blk, &k1, 1)) return false;
    const char *rf = s->made;
    /* rfactor put the zeros of the partial sums first */
    const char *zeros = mt_blk_bname(mt_blk_blocks_under(a, s->func->body).data[0]);
    mt_tvar *want[5];
    if (!mt_sched_split(s, lj, mt_te_i64(a, jb), &j0, &j1) || !last_loops(s, rf, cur, 5)) return false;
    want[0] = j0, want[1] = li, want[2] = k0, want[3] = j1, want[4] = k1;
    if (!order(s, cur, want, 5) || !mt_sched_reverse_compute_at(s, blk, li) || !mt_sched_compute_at(s, zeros, li) ||
        (epi && !mt_sched_reverse_compute_at(s, mt_blk_bname(epi), li)))
        return false;
    if (!mt_sched_use_fma(s, rf) || !mt_sched_unroll(s, j1) || !mt_sched_vectorize(s, k1) ||
        !matvec_row_parts(s, blk, zeros, epi))
        return false;
    mt_tvar *c0 = j0;
    if (!c->par || nch < 2) return true;
    return (bpc == 1 || mt_sched_split(s, j0, mt_te_i64(a, bpc), &c0, NULL)) && mt_sched_parallel(s, c0);
}

mt_tfunc *mm_matvec_primitives(mm *c) {
    mm_nest n;
    const mt_tstmt *epi = NULL;
    if (!matvec_fits(c, &n, &epi)) return NULL;
    mt_sched s;
    mt_sched_init(&s, c->a, c->f);
    return matvec_schedule(&s, c, &n, epi) ? s.func : NULL;
}
