/*
 * matmul_internal.h -- what the matmul rules share (matmul_common.c):
 * the matched function (struct mm), index arithmetic that keeps T.Ramp
 * outermost, flattened loads and stores, operands at (i, j, k), the matcher
 * and the epilogue at the store. Used by rule_matmul.c (register tiles,
 * packing) and rule_matvec.c (small M, B transposed). Not a public API.
 */
#ifndef MT_SCHEDULE_MATMUL_INTERNAL_H
#define MT_SCHEDULE_MATMUL_INTERNAL_H

#include "schedule/knobs.h"
#include "schedule/lowered.h"
#include "schedule/schedule.h"
#include "support/common.h"

enum { MM_MAXS = MT_MAX_RANK, MM_MAXE = 8, MM_MAXV = 8, MM_MAXR = 16 };



/* ---- the matched function ------------------------------------------------------ */

typedef struct epi {
    mt_tvar *iv[MM_MAXS]; /* the nest's block iter vars, positionally the matmul's */
    mt_tbuffer *out;
    mt_texpr *value;
} epi;

typedef struct mm {
    mt_arena *a;
    mt_tfunc *f;
    mt_dtype dt;              /* accumulation dtype, C's */
    int vl;                   /* lanes of a 512-bit register */
    int ns;                   /* spatial dims of C: batch..., i, j */
    mt_tvar *sv[MM_MAXS];     /* the matmul block's spatial iter vars, in C's order */
    mt_texpr *ext[MM_MAXS];   /* their extents: M = ext[ns - 2], N = ext[ns - 1] */
    mt_tvar *kv;              /* the reduce iter var */
    mt_texpr *K;
    mt_texpr *X, *Y;          /* C += X(i, k) * Y(k, j) */
    mt_tbuffer *C;
    epi ep[MM_MAXE];
    int nep;
    mt_lw lw;                 /* index arithmetic and flat buffers (lowered.h) */
    mt_texpr *bv[MM_MAXS];    /* batch indices while generating */
    mt_tbuffer *P;            /* holds partial sums across K blocks (NULL: none) */
    bool y_vec;               /* Y(k, j..j+15) is unit-stride vector loads */
    bool x_kvec;              /* X(i, k..k+15) is unit-stride vector loads */
    bool y_kvec;              /* Y(k..k+15, j) is unit-stride vector loads (x @ w.T) */
    mt_tbuffer *bp;           /* the packed block of B */
    mt_tbuffer *ap_all;       /* A packed once a call, or NULL (rule_matmul.c, pack_a_all; knob pack_a) */
    mt_texpr *ap_depth;       /* its depth: K, or one K block (ap_blocked) */
    bool ap_blocked;
    mt_texpr *kcap;           /* its depth */
    int64_t kcblk, ncblk;     /* K and N block sizes */
    bool split;               /* K is blocked */
    bool epi_loop;            /* the epilogue runs in a loop over a copy of the tile (rule_matmul.c) */
    int nv;                   /* vector registers per tile row (knob nv) */
    int pack_rows;            /* rows of a row-major B packed together (knob pack_rows) */
    bool cols;                /* packed: column blocks across threads, each packed by its thread
                               * (rule_matmul.c, gen_cols; knob par_cols) */
    bool par;                 /* loops across threads at all (knob parallel) */
    bool wide;                /* column blocks in parallel when A is small (rule_matmul.c,
                               * gen_wide; the conv rule's pointwise layers ask for it) */
    mt_knobs chosen;          /* the knob values the schedules made chose (mt_tfunc.chosen) */
    int64_t m_below;          /* a symbolic M runs the schedule being made only when it is
                               * below this (the few-rows schedules); 0: any M */
    mt_texpr *nx_bv[MM_MAXS]; /* column blocks across threads (gen_cols) with a prefetch of
                               * the next item's block of B: that item's batch indices */
    bool own;                 /* c->f is the matched matmul itself (mm_match), which the
                               * primitives may schedule (not the conv rule's view) */
    mt_tfunc *prims;          /* the packed schedule made of primitives, when it fits */
} mm;

/* The matmul rule's name for its knobs (schedule/knobs.h). */
#define MM_RULE "schedule_matmul"

typedef MT_VEC(mt_tstmt *) svec;

mt_texpr *mm_I(mm *c, int64_t v);
mt_texpr *mm_V(mm *c, mt_tvar *v);
mt_texpr *mm_Vl(mm *c, mt_tvar *v, int lanes);
mt_tvar *mm_ivar(mm *c, const char *name);
mt_texpr *mm_ceildiv(mm *c, mt_texpr *x, int64_t d);
mt_texpr *mm_fzero(mm *c, int lanes);
void mm_push(mm *c, svec *v, mt_tstmt *s);
mt_tstmt *mm_seq(mm *c, svec *v);
mt_tstmt *mm_seq2(mm *c, mt_tstmt *x, mt_tstmt *y);
mt_tstmt *mm_loop(mm *c, mt_tvar *v, mt_texpr *ext, mt_for_kind k, mt_tstmt *body);
mt_texpr *mm_lt(mm *c, mt_texpr *x, mt_texpr *y);
mt_texpr *mm_le(mm *c, mt_texpr *x, mt_texpr *y);
mt_texpr *mm_eq(mm *c, mt_texpr *x, mt_texpr *y);
mt_tbuffer *mm_local_buf(mm *c, const char *name, mt_texpr *extent, mt_dtype dt);
bool mm_is_param(mm *c, const mt_tbuffer *b);
mt_texpr *mm_load_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j);
mt_tstmt *mm_store_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j, mt_texpr *v);
mt_texpr *mm_operand(mm *c, mt_texpr *e, mt_texpr *i, mt_texpr *j, mt_texpr *k);
/* The element a prefetch of operand value e names: the load under its
 * casts (a float16 w read as float32), or NULL (not a plain scalar load);
 * *line: the elements of a cache line of that load's buffer. */
mt_texpr *mm_prefetchable(mm *c, mt_texpr *e, int *line);
bool mm_match(mm *c);
/* rule_matmul.c: the CPU schedule of a matched c (mm_match's, or one the
 * conv rule builds for a pointwise convolution), with c->f's params. */
mt_tfunc *mm_schedule_cpu(mm *c);
/* rule_matmul_prims.c: the packed schedule (its blocks, tile and threads
 * chosen: kcblk, ncblk, split, nv, par, and mr rows) as primitives on c->f,
 * or NULL where they do not say it exactly (tails, epilogues, batches). */
mt_tfunc *mm_packed_primitives(mm *c, int mr);

/* The pieces of mm_match the conv rule (rule_conv.c) matches with too. */
typedef struct mm_nest {
    int nloops;
    mt_tstmt *blk;
} mm_nest;
/* A perfect nest of serial loops from 0 around one block, each iter var
 * bound to one loop var over its loop's extent. */
bool mm_parse_nest(mt_tstmt *s, mm_nest *n);
/* idx is exactly the block's spatial iter vars, each once; fills sv. */
bool mm_spatial_index(const mt_tstmt *blk, mt_texpr *const *idx, int n, mt_tvar **sv);
/* An elementwise epilogue nest over C's shape (c->C, c->ns, c->ext, c->X,
 * c->Y set); appended to c->ep. */
bool mm_match_epilogue(mm *c, const mt_tstmt *blk);
/* Is b written by the function (C or an epilogue's output)? */
bool mm_written(mm *c, const mt_tbuffer *b);
/* The columns of a tile `width` wide in vectors of vl lanes: nv vectors,
 * lanes[v] wide at offset off[v] (the last one narrower for a tail). */
typedef struct mm_colset {
    int nv, width, lanes[MM_MAXV], off[MM_MAXV];
} mm_colset;
mm_colset mm_cols(int width, int vl);

mt_tstmt *mm_final_stores(mm *c, mt_texpr *i, mt_texpr *j, mt_texpr *mval);
mt_tstmt *mm_wrap_batch(mm *c, mt_tstmt *(*gen)(mm *));
bool mm_vec_loads(const mt_texpr *e);
/* Is operand X (y false) or Y read contiguously along k (along_k) or along
 * its row (column) index? */
bool mm_operand_contiguous(mm *c, bool y, bool along_k);

/* The GPU rules' shared parts (gpu_matmul.c, gpu_gemv.c). mm_i64: e as an
 * int64. mm_batch_vars: fresh batch indices into c->bv (before the body is
 * built). mm_grid: body inside one blockIdx.x loop over every block: the
 * n tile indices tile[i] (count[i] of each, tile[0] fastest) and the batch
 * indices, let from the block's number (one grid dim, whose limit is
 * 2^31 - 1: y and z stop at 65535). mm_scheduled: c->f with flat params,
 * no allocations, body (stamped with f's place) and the attribute
 * "schedule" (none when schedule is NULL); every rule built on mm uses it. */
mt_texpr *mm_i64(mm *c, mt_texpr *e);
void mm_batch_vars(mm *c);
mt_tstmt *mm_grid(mm *c, mt_tvar *const *tile, mt_texpr *const *count, int n, mt_tstmt *body);
mt_tfunc *mm_scheduled(mm *c, mt_tstmt *body, const char *schedule);

/* rule_matvec.c: the matrix-vector schedule for few rows times a B read
 * along k (x @ w.T); fits says whether the operands allow it. */
bool mm_matvec_fits(mm *c);
int mm_matvec_max_m(void);
mt_tstmt *mm_gen_matvec(mm *c);
/* Its columns per block (JB), and, for constant N and K, the blocks per
 * parallel chunk (*nch: the chunks; es: the element's bytes). */
int mm_matvec_jb(void);
int64_t mm_matvec_chunk(int64_t N, int64_t K, int64_t es, int64_t *nch);
/* rule_matmul_prims.c: that schedule as primitives on c->f (constant
 * shapes, whole blocks of JB columns, K at least a vector, one short
 * epilogue or none), or NULL. */
mt_tfunc *mm_matvec_primitives(mm *c);

/* rule_gemv.c: the skinny schedule for few rows times a row-major B
 * (x @ w); fits says whether the operands allow it. */
bool mm_gemv_fits(mm *c);
int mm_gemv_max_m(void);
mt_tstmt *mm_gen_gemv(mm *c);

/* matmul_defaults.c: the matmul rule's choices from the shapes and the
 * target when no knob gives them. mm_rows_for_m: the register tile's rows,
 * at most fit, that cut a constant M into the cheapest tiles.
 * mm_packed_parallel: c->par for the packed schedule (its blocks chosen):
 * false when a parallel region's work is too small for the cores.
 * mm_pack_budget: bytes the packed block of B may take (the target's L2). */
int mm_rows_for_m(const mm *c, int fit);
bool mm_packed_parallel(const mm *c);
int64_t mm_pack_budget(const mm *c);
/* mm_cols_parallel: the packed path's column blocks across threads
 * (knob par_cols; default: c->par and few rows, a constant M of at most
 * FEW_ROWS_M; a constant N either way). mm_few_rows_blocks: the blocks
 * of B for few rows of a row-major B: a page of a row of B wide, or (cols) as many equal
 * blocks up to that width as make a multiple of the cores; as deep as the
 * budget allows; false (kc and nc unchanged) when the rows are not few. */
bool mm_cols_parallel(const mm *c);
/* A constant M of at most FEW_ROWS_M (the packing speed decides). */
bool mm_few_rows(const mm *c);
bool mm_few_rows_blocks(const mm *c, bool cols, int64_t *kc, int64_t *nc);

#endif
