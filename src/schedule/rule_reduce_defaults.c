/*
 * rule_reduce_defaults.c -- the row-reduction rule's (rule_reduce.c) sizes
 * when no knob gives them: the lanes of a vector and the accumulators from
 * the row length, the rows of a parallel chunk from the whole function's
 * size and the target's cores. docs/schedule.md ("The row-reduction rule",
 * "Defaults from the shape") has the measurements behind them.
 *
 *  - Lanes. A row shorter than one unrolled step (RR_U accumulators of the
 *    target's lanes: 64 float32 with AVX2 or AVX-512) leaves the wide
 *    vectors mostly unused: with 16 lanes a row of 7 is 7 scalar steps, a
 *    row of 20 one vector and 4 scalars. For such rows the lanes are the
 *    power of two, from the target's down to one 16-byte register (4
 *    float32), with the fewest operations per row: a vector step costs its
 *    registers' worth (16 lanes on AVX2 are 2 registers), each element of
 *    the tail one, and folding the lanes log2(lanes); ties keep the wider.
 *    Rows of 7: 4 lanes (a vector and 3 scalars); 20: 4 lanes (5 vectors);
 *    3: unchanged (no vector fits). Longer rows and symbolic rows keep the
 *    target's lanes.
 *  - Accumulators: no more than the vectors of a row (a row of 7 in lanes
 *    of 4 has one vector: one accumulator, nothing to combine).
 *  - Chunks. A parallel chunk is at least 64 KiB of rows unless that makes
 *    fewer than CHUNKS_PER_CORE chunks per core: then smaller, down to
 *    MIN_CHUNK bytes, so that the runtime can even out a thread that is
 *    late (a softmax over 16384 rows of 3, 192 KiB, was 4 chunks, one of
 *    them a single row, so one thread had twice the other's rows). The rows
 *    are then spread evenly over the chunks.
 *  - Prefetch. Only the first pass over a row reads it from memory (the
 *    later ones find it in L1 or L2), so while they run the memory system
 *    idles: the hardware prefetchers follow demand misses and stop with
 *    them. The second pass therefore prefetches the next row's input, a
 *    line per vector step (rule_reduce.c): the first that finds the row in
 *    cache, so the next row has the longest time to arrive before the next
 *    first pass asks for it (softmax's pass of the exps, layer_norm's
 *    variance). Measured on the project machine (2026-11-28, a hand-written
 *    AVX2 layer_norm, one thread, under load): rows of 512 B to 16 KiB took
 *    10-23 % less time; rows of 128 B none (demand misses come often
 *    enough), rows of 128 KiB none (the passes read L2, whose own
 *    prefetcher keeps up). So: rows of PF_MIN bytes to L2 / 16, an input
 *    larger than L2, and at least two passes. A second pass (a reduction)
 *    that computes an expanded function (mt_intrin_is_expanded: exp, log,
 *    tanh, ...; log_softmax's sum of exps) leaves the memory system idle
 *    for longer: there rows up to L2 / 2. Where a pass stores a row that a later one reads back (softmax's
 *    exps), that is traffic of its own: rows up to L1 / 4. The JIT's
 *    kernels, the same kernel with prefetch=0 and =1 alternated (Zen 5, 1
 *    and 2 threads, 64 MiB inputs, 2026-11-28; docs/schedule.md has the
 *    table): the time with the prefetch over the time without, log_softmax
 *    0.76-0.86 on rows of 1000 to 131072 floats; softmax 0.89 and 1.02 on
 *    rows of 1000, 0.98-1.06 on longer ones; layer_norm 0.81 and 0.86 on
 *    rows of 1000, 1.01 on rows of 4097, 0.90-1.06 on longer ones.
 *  - Blocks (rule_reduce.c, "Blocks"). Rows of at least one 16-byte vector
 *    (shorter ones stay scalar, and LLVM's loop vectorizer takes the plain
 *    loop over them across rows: softmax over rows of 3 was 1.3x slower in
 *    blocks) and at most PF_MIN bytes (longer rows get the prefetch, and
 *    rows of 512 floats gained little or nothing from blocks), in more than
 *    one pass, at least two blocks of rows: blocks of BLOCK_ROWS rows, fewer
 *    (down to BLOCK_MIN) while a block is over L1 / 4. A given prefetch=1
 *    keeps rows one by one. Measured: docs/schedule.md, "Defaults from the
 *    shape" (softmax, log_softmax, layer_norm over rows of 7 to 128).
 */
#include "schedule/knobs.h"
#include "schedule/rule_reduce.h"

#define RULE "schedule_reduce"

enum {
    MIN_VEC_BYTES = 16,      /* the narrowest vector register: SSE, NEON */
    MIN_CHUNK = 8192,        /* bytes of a parallel chunk when 64 KiB leave too few */
    CHUNKS_PER_CORE = 8,     /* the runtime's chunks per thread range (docs/performance.md) */
    PF_MIN = 512,            /* bytes of the shortest row whose next row is prefetched */
    BLOCK_ROWS = 16,         /* rows per block of short rows, at most */
    BLOCK_MIN = 4,           /* ... and at least */
};

static int log2i(int v) {
    int n = 0;
    while (v > 1) v >>= 1, n++;
    return n;
}

/* Operations per row with vl lanes; rl lanes are one register. */
static int64_t row_cost(int64_t n, int vl, int rl) {
    int64_t per_vec = vl > rl ? vl / rl : 1;
    return n / vl * per_vec + n % vl + (n >= vl ? log2i(vl) : 0);
}

int mt_rr_lanes(const rr *c, mt_dtype dt) {
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int full = mt_target_lanes(tg, dt);
    int64_t n;
    if (mt_knob_given(c->f, RULE, "lanes")) return (int)mt_knob_get(c->f, RULE, "lanes", full);
    if (!mt_te_is_const_int(c->N, &n) || n >= (int64_t)RR_U * full) return full;
    int rl = mt_target_register_lanes(tg, dt), es = (int)mt_dtype_size(dt);
    int lo = MIN_VEC_BYTES / es > 1 ? MIN_VEC_BYTES / es : 1, best = full;
    for (int vl = full / 2; vl >= lo; vl /= 2)
        if (row_cost(n, vl, rl) < row_cost(n, best, rl)) best = vl;
    return best;
}

int mt_rr_accumulators(const rr *c, int vl) {
    int64_t n;
    if (mt_knob_given(c->f, RULE, "accumulators") || !mt_te_is_const_int(c->N, &n))
        return (int)mt_knob_get(c->f, RULE, "accumulators", RR_U);
    int64_t v = n / vl;
    return v >= RR_U ? RR_U : v > 1 ? (int)v : 1;
}

int64_t mt_rr_chunk_elems(const rr *c, int64_t bytes, int64_t es, int64_t total) {
    int64_t per = bytes / es;
    if (mt_knob_given(c->f, RULE, "chunk_kib") || total <= 0) return per;
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int64_t want = (int64_t)CHUNKS_PER_CORE * (tg->cores > 0 ? tg->cores : 1);
    if (total / per >= want) return per;
    int64_t small = total / want, floor = MIN_CHUNK / es;
    return small > floor ? small : floor;
}

int mt_rr_prefetch_stage(const rr *c) {
    int first = mt_rr_memory_stage(c);
    for (int i = first + 1; first >= 0 && i < c->nst; i++)
        if (c->st[i].kind != ST_ROW) return i;
    return -1;
}

int mt_rr_memory_stage(const rr *c) {
    for (int i = 0; i < c->nst; i++)
        if (c->st[i].kind != ST_ROW) return i;
    return -1;
}

static void find_transcendental(mt_tvisitor *v, const mt_texpr *e) {
    bool *found = v->ctx;
    if (e->kind == TE_CALL && mt_intrin_is_expanded(e->intrin)) *found = true;
    if (!*found) mt_tvisit_expr_children(v, e);
}

/* The longest row (bytes) whose next row the pass of stage i prefetches. */
static int64_t pf_max_row(const rr *c, int i) {
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    for (int k = 0; k < c->nst; k++) /* a stored row read back later (softmax's exps) */
        if (c->st[k].also && tg->l1d_bytes > 0) return tg->l1d_bytes / 4;
    bool found = false;
    mt_tvisitor v = {find_transcendental, NULL, &found};
    mt_tvisit_expr(&v, c->st[i].value);
    return tg->l2_bytes / (found && c->st[i].kind == ST_RED ? 2 : 16);
}

bool mt_rr_prefetch(const rr *c) {
    if (c->block > 1) return false; /* blocks of rows: no next row to fetch early */
    if (mt_knob_given(c->f, RULE, "prefetch")) return mt_knob_get(c->f, RULE, "prefetch", 0) != 0;
    int pf = mt_rr_prefetch_stage(c);
    if (pf < 0 || c->st[c->nst - 1].kind != ST_ELT) return false;
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int64_t es = (int64_t)mt_dtype_size(c->st[0].buf->dtype), n, row, total, o;
    if (!mt_te_is_const_int(c->N, &n)) return true; /* a symbolic row: assumed long enough */
    if (__builtin_mul_overflow(n, es, &row) || row < PF_MIN || (tg->l2_bytes > 0 && row > pf_max_row(c, pf)))
        return false;
    total = row;
    for (int k = 0; k < c->ns; k++) {
        if (!mt_te_is_const_int(c->O[k], &o)) return true; /* symbolic rows: assumed many */
        if (__builtin_mul_overflow(total, o, &total)) return true;
    }
    return total > tg->l2_bytes;
}

int mt_rr_block(const rr *c) {
    if (mt_knob_given(c->f, RULE, "block_rows")) return (int)mt_knob_get(c->f, RULE, "block_rows", 1);
    if (mt_knob_given(c->f, RULE, "prefetch") && mt_knob_get(c->f, RULE, "prefetch", 0)) return 1;
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int64_t n, es = (int64_t)mt_dtype_size(c->st[0].buf->dtype), rows = 1, o;
    /* (rows shorter than the narrowest vector stay scalar, and LLVM's loop
     * vectorizer takes the plain loop over them across rows) */
    int passes = 0;
    for (int i = 0; i < c->nst; i++) passes += c->st[i].kind != ST_ROW;
    if (passes < 2 || !mt_te_is_const_int(c->N, &n) || n * es < MIN_VEC_BYTES || n * es > PF_MIN ||
        tg->l1d_bytes <= 0)
        return 1;
    for (int k = 0; k < c->ns; k++) {
        if (!mt_te_is_const_int(c->O[k], &o)) { rows = INT64_MAX; break; }
        rows *= o;
    }
    int b = BLOCK_ROWS;
    while (b >= BLOCK_MIN && (int64_t)b * n * es > tg->l1d_bytes / 4) b /= 2;
    return b >= BLOCK_MIN && rows >= 2 * b ? b : 1;
}
