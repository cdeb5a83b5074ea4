/*
 * rule_reduce.h -- what rule_reduce.c and rule_reduce_match.c share: the
 * matched row-wise stages (see rule_reduce.c for the rule).
 */
#ifndef MT_SCHEDULE_RULE_REDUCE_H
#define MT_SCHEDULE_RULE_REDUCE_H

#include "schedule/lowered.h"
#include "schedule/schedule.h"

enum { RR_MAXST = 32, RR_MAXB = 32, RR_U = 4 };

typedef enum { ST_RED, ST_ROW, ST_ELT } st_kind;
typedef enum { F_ADD, F_MAX, F_MIN } f_kind;

typedef struct stage {
    st_kind kind;
    mt_tvar *ov[MT_MAX_RANK]; /* the block's outer iter vars, in O's order */
    mt_tvar *rv;              /* its inner iter var (NULL: none) */
    mt_texpr *rval;           /* what rv means in a ROW stage (0) */
    mt_tbuffer *buf;          /* written */
    mt_texpr *value;          /* ROW, ELT: the stored value; RED: E */
    mt_texpr *init;           /* RED: I */
    mt_texpr *tmpl;           /* RED: F(accv, ev) */
    mt_tvar *accv, *ev;
    f_kind fk;
    mt_tbuffer *also;         /* RED: E is also stored to also[o.., r] */
} stage;

/* A per-row value: its buffer and the scalar local that holds it. */
typedef struct rowval {
    mt_tbuffer *buf;
    mt_tbuffer *local;
    bool param;
} rowval;

typedef struct rr {
    mt_lw lw;
    mt_arena *a;
    mt_tfunc *f;
    int ns;                       /* outer axes */
    mt_texpr *O[MT_MAX_RANK];     /* their extents */
    mt_texpr *N;                  /* the row length */
    stage st[RR_MAXST];
    int nst;
    rowval rv[RR_MAXB];
    int nrv;
    mt_tbuffer *rows[RR_MAXB];    /* outputs written by ELT stages */
    int nrows;
    mt_texpr *oval[MT_MAX_RANK];  /* while generating: the current row's o.. */
    mt_texpr *M;                  /* while generating: the rows (int64) */
    mt_texpr *row;                /*   the current row's number */
    mt_tvar *rowvars[2];          /*   the loop variables it is made of */
    int block;                    /* rows per block (1: row by row; rule_reduce.c, "Blocks") */
    mt_texpr *rv_ix;              /* while generating: the element of the per-row values'
                                   * locals the current row uses (its place in the block) */
} rr;

/* The per-row value held in b, or NULL. */
static inline rowval *find_rv(rr *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->nrv; i++)
        if (c->rv[i].buf == b) return &c->rv[i];
    return NULL;
}

/* E of stage s with its iteration variables replaced: the outer ones by
 * c->oval, the inner one by r (a scalar or a T.Ramp; ROW stages: s->rval),
 * per-row values by element c->rv_ix (NULL: 0) of their local, other loads
 * flattened. */
mt_texpr *mt_rr_lower(rr *c, const stage *s, mt_texpr *e, mt_texpr *r);

/* e reads only per-row values and constants (then *call, when given: it
 * computes a transcendental of them). */
bool mt_rr_row_only(rr *c, const mt_texpr *e, bool *call);

/* F(x, y) of a RED stage. */
mt_texpr *mt_rr_fapply(rr *c, const stage *s, mt_texpr *x, mt_texpr *y);

/* The flat index of b[o.., r] for a row buffer b (r a scalar or a T.Ramp). */
mt_texpr *mt_rr_row_ix(rr *c, mt_tbuffer *b, mt_texpr *r);

/* All rows (rule_reduce.c): fn's statements for each row, c->oval set to
 * its outer indices; rows in parallel chunks of about 64 KiB (knobs
 * parallel, chunk_kib), or one plain loop when the whole is smaller. */
typedef mt_tstmt *(*mt_rr_row_fn)(rr *c, void *ctx);
mt_tstmt *mt_rr_rows(rr *c, mt_rr_row_fn fn, void *ctx);
/* The same with c->block > 1: blk(c, first row, rows, ctx) for each block of
 * c->block rows (fewer in the last block of a chunk when they do not divide). */
typedef mt_tstmt *(*mt_rr_block_fn)(rr *c, mt_texpr *first, mt_texpr *rows, void *ctx);
mt_tstmt *mt_rr_rows_blocked(rr *c, mt_rr_row_fn fn, mt_rr_block_fn blk, void *ctx);

/* Row number row alone: its outer indices (c->oval), then fn's statements
 * (for a block function's rows one by one). */
mt_tstmt *mt_rr_row(rr *c, mt_texpr *row, mt_rr_row_fn fn, void *ctx);

/* rule_argreduce.c: argmax / argmin over the last axis on the CPU, or f
 * itself when f is not that; tried by the row rule when its own stages
 * do not match. */
mt_tfunc *mt_argreduce_cpu(mt_arena *a, mt_tfunc *f);

/* The scheduled function: c->f with flat params, no allocations (the
 * rule's own are in body), body (stamped with f's place) and the attribute
 * "schedule": schedule. */
mt_tfunc *mt_rr_function(rr *c, mt_tstmt *body, const char *schedule);

/* Fills c->ns, O, N, st, rv, rows from c->f; false when the function is
 * not row-wise work this rule does exactly. */
bool mt_reduce_match(rr *c);

/* f with its one outermost reduce loop moved inside the spatial ones when
 * the loads use the reduce variable as their contiguous last index
 * (sum(x.T, axis=0)); NULL otherwise (rule_reduce_inner.c). */
mt_tfunc *mt_reduce_inner(mt_arena *a, mt_tfunc *f);

/* The sizes when no knob gives them (rule_reduce_defaults.c): the lanes of
 * dt (the target's step, fewer for a row shorter than one unrolled step),
 * the accumulators for vl lanes (at most the vectors of a row), and the
 * elements of a parallel chunk of rows (bytes / es, fewer when that makes
 * too few chunks for the cores; total: all the function's elements). */
int mt_rr_lanes(const rr *c, mt_dtype dt);
int mt_rr_accumulators(const rr *c, int vl);
int64_t mt_rr_chunk_elems(const rr *c, int64_t bytes, int64_t es, int64_t total);
/* The stage whose pass reads the row from memory: the first that is not a
 * ROW stage; -1: none. */
int mt_rr_memory_stage(const rr *c);
/* The stage whose pass would prefetch the next row's input: the next pass
 * after that one (not a ROW stage); -1: none. */
int mt_rr_prefetch_stage(const rr *c);
/* Whether it does (knob prefetch; else rows of PF_MIN bytes to a sixteenth
 * of L2 -- half of L2 when that pass computes an expanded function (exp, log, ...)
 * and stores nothing, a quarter of L1 when it stores a row -- when the
 * whole input is larger than L2, and more than one pass). */
bool mt_rr_prefetch(const rr *c);
/* Rows per parallel chunk as mt_rr_rows makes them: 0 when the rows run
 * as one plain loop, -1 when N is not a constant. */
int64_t mt_rr_chunk_rows(rr *c);
/* rule_reduce_prims.c: the schedule of one reduction (and ROW stages
 * after it) as a trace of primitives, or NULL where the lowered form is
 * used. */
mt_tfunc *mt_rr_primitives(rr *c);
/* Rows per block (knob block_rows; else rule_reduce_defaults.c): 1 is row
 * by row. */
int mt_rr_block(const rr *c);

#endif
