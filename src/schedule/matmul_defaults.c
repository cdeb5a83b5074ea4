/*
 * matmul_defaults.c -- the matmul rule's choices (rule_matmul.c) that depend
 * on the shapes and the target's machine facts, when no knob gives them.
 * docs/schedule.md ("The matmul rule", "Defaults from the shape") has the
 * measurements behind them.
 *
 *  - Tile rows. The register tile has at most `fit` rows (what the vector
 *    registers hold). For a constant M the rows are cut into M / MR tiles
 *    and one of M % MR rows; a short tile has too few independent FMA
 *    chains to cover the FMA latency (latency x pipes = MIN_CHAINS
 *    accumulators), so it costs as much as a taller one. Each height from
 *    fit down is costed in FMA issue slots per k, max(rows x nv,
 *    MIN_CHAINS) per tile; a shorter tile must be MARGIN_PCT cheaper. With
 *    AVX2 (fit 6): M = 32 takes 8 tiles of 4 (64 slots) rather than 5 of 6
 *    and one of 2 (68); M = 16, 48, 64, 100 and 1024 keep 6.
 *  - Threads. A parallel region costs a fork and a join: a few
 *    microseconds on a quiet machine, tens when a worker has to be woken
 *    (docs/performance.md, "Waking workers"). The packed schedule forks
 *    twice per column and K block (packing, then the row blocks), so each
 *    region's work -- 2 M x NC x KC flops for one batch index -- must give
 *    every core at least PAR_MIN_FLOPS (about 8 us of one AVX2 core), or the
 *    whole function runs on the calling thread: matmul 32^3 and 64^3, the
 *    batched 64 x (32x32 @ 32x32), whose 64 batch indices were 128 regions
 *    of 1 us each.
 *  - The packed block of B (KC x NC) within the target's L2 (it was 1 MiB,
 *    the L2 of the Zen 4/5 machines the rule was measured on; 512 KiB on
 *    Zen 3).
 *  - Few rows (a constant M <= FEW_ROWS_M of a row-major B): the copy of B
 *    costs about as much as the FMAs, and a copy reads each row of the
 *    block as one run, so the block is a page of a row wide (1024 float32)
 *    and as deep as the L2 budget allows; with threads, the column blocks
 *    go across them in one region (equal blocks, a multiple of the cores,
 *    at most a page wide each).
 */
#include "schedule/knobs.h"
#include "schedule/matmul_internal.h"

enum {
    MIN_CHAINS = 8,               /* FMA latency (4 cycles) x FMA pipes (2): Zen 3-5, Intel since Skylake */
    PAR_MIN_FLOPS = 1 << 19,      /* a core's share of a parallel region, at least */
    MARGIN_PCT = 5,               /* a shorter tile only when cheaper by this much: a taller one
                                   * loads less per FMA, which tile_cost leaves out */
    FEW_ROWS_M = 128,             /* M up to this: blocks for packing speed (mm_few_rows_blocks) */
    PAGE_BYTES = 4096,            /* a packed row of B at least this long: one run of memory */
    MIN_DEPTH = 64,               /* K blocks at least this deep */
};

static int64_t tile_cost(int rows, int nv) {
    int64_t s = (int64_t)rows * nv;
    return s > MIN_CHAINS ? s : MIN_CHAINS;
}

/* FMA slots per k of M rows in tiles of r: the full tiles and one of the
 * M % r rows. (Dividing the full tiles among the cores, to weigh the
 * M % r rows that run after a parallel loop, chose tiles of 4 for M = 64
 * on two threads, which measured 1.3x slower than 6: docs/schedule.md.) */
static int64_t rows_cost(const mm *c, int64_t M, int r) {
    return M / r * tile_cost(r, c->nv) + (M % r ? tile_cost((int)(M % r), c->nv) : 0);
}

int mm_rows_for_m(const mm *c, int fit) {
    int64_t M;
    if (fit <= 1 || !mt_te_is_const_int(c->ext[c->ns - 2], &M) || M <= 0) return fit;
    int best = fit;
    int64_t best_cost = rows_cost(c, M, fit);
    for (int r = fit - 1; r >= 1; r--) {
        int64_t cost = rows_cost(c, M, r);
        if (cost * 100 < best_cost * (100 - MARGIN_PCT)) best = r, best_cost = cost;
    }
    return best;
}

bool mm_packed_parallel(const mm *c) {
    if (!c->par || mt_knob_given(c->f, MM_RULE, "parallel")) return c->par;
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int64_t M, N, kd;
    if (!mt_te_is_const_int(c->ext[c->ns - 2], &M) || !mt_te_is_const_int(c->ext[c->ns - 1], &N) ||
        !mt_te_is_const_int(c->kcap, &kd))
        return true;
    int64_t cores = tg->cores > 1 ? tg->cores : 1;
    int64_t region = 2 * M * (N < c->ncblk ? N : c->ncblk) * kd;
    return cores > 1 && region / cores >= PAR_MIN_FLOPS;
}

bool mm_few_rows(const mm *c) {
    int64_t M;
    return mt_te_is_const_int(c->ext[c->ns - 2], &M) && M <= FEW_ROWS_M;
}

/* Few rows: column blocks across threads (gen_cols), unless asked for
 * A packed once (the knob pack_a=1: only the packed path packs A). */
bool mm_cols_parallel(const mm *c) {
    int64_t N;
    if (!mt_te_is_const_int(c->ext[c->ns - 1], &N)) return false;
    bool pack_a = mt_knob_get(c->f, MM_RULE, "pack_a", 0) != 0; /* given, and 1 */
    return mt_knob_get(c->f, MM_RULE, "par_cols", c->par && mm_few_rows(c) && !pack_a) != 0;
}

/* Column blocks of at most a page of a row of B, as many as a multiple of
 * the cores, equal, whole slivers: N = 1000 on 2 cores, 2 of 512; 4096, 4
 * of 1024; 4097, 6 of 688. */
static int64_t cols_width(const mm *c, int64_t run) {
    int64_t N, nr = (int64_t)c->nv * c->vl;
    mt_te_is_const_int(c->ext[c->ns - 1], &N);
    int64_t cores = mt_tfunc_target(c->f)->cores > 1 ? mt_tfunc_target(c->f)->cores : 1;
    int64_t blocks = cores * ((N + cores * run - 1) / (cores * run));
    int64_t w = (N + blocks - 1) / blocks;
    return w < nr ? nr : (w + nr - 1) / nr * nr;
}

bool mm_few_rows_blocks(const mm *c, bool cols, int64_t *kc, int64_t *nc) {
    int64_t size = (int64_t)mt_dtype_size(c->dt), run = PAGE_BYTES / size;
    if (!c->y_vec || !mm_few_rows(c)) return false; /* a B read along k is copied by slivers */
    int64_t width = cols ? cols_width(c, run) : run;
    int64_t depth = mm_pack_budget(c) / size / width / 16 * 16;
    *nc = width;
    *kc = depth > MIN_DEPTH ? depth : MIN_DEPTH;
    return true;
}

int64_t mm_pack_budget(const mm *c) {
    int64_t l2 = mt_tfunc_target(c->f)->l2_bytes;
    return l2 > 0 ? l2 : (int64_t)1 << 20;
}
