/*
 * primitives_fma.c -- use_fma: a block's multiply-adds become fused
 * multiply-adds (see primitives_block.c for the conventions, docs/schedule.md
 * "Primitives" for the output and refusals).
 *
 *     C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
 *  -> C[vi, vj] = T.fma(A[vi, vk], B[vk, vj], C[vi, vj])
 *
 * Code generation never contracts a * b + c on its own (the CPU's results
 * are those of the operations as written), so a loop function that wants
 * the FMA units writes T.fma; this is the same for a block it did not
 * write (a compiler-made matmul), one step of a schedule. It changes the
 * rounding (one instead of two: the product is not rounded), as the default
 * matmul rule's code does; the result is the exact a * b + c rounded once.
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

typedef struct fma_count {
    int n;
} fma_count;

static bool fusable(const mt_texpr *e) {
    return e->kind == TE_MUL && (e->dtype == MT_FLOAT32 || e->dtype == MT_FLOAT64);
}

/* x + a * b or a * b + x (float32, float64) -> T.fma(a, b, x), innermost first. */
static mt_texpr *fma_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_ADD || (r->dtype != MT_FLOAT32 && r->dtype != MT_FLOAT64)) return r;
    mt_texpr *p = fusable(r->b) ? r->b : fusable(r->a) ? r->a : NULL;
    if (!p || p->lanes != r->lanes) return r;
    mt_texpr *args[3] = {p->a, p->b, p == r->b ? r->a : r->b};
    ((fma_count *)m->ctx)->n++;
    return mt_te_call(m->arena, IN_FMA, args, 3);
}

bool mt_sched_use_fma_do(mt_sched *s, const char *name) {
    static const char P[] = "use_fma";
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    fma_count c = {0};
    mt_tmutator m = {s->arena, fma_expr, NULL, &c};
    mt_tstmt *body = mt_tmutate_stmt(&m, b->body);
    if (!c.n)
        return mt_sched_refuse(s, "%s: block '%s' has no float32 or float64 multiply-add "
                                  "(x + a * b) to fuse", P, name);
    mt_tstmt *nb = mt_ts_copy(s->arena, b);
    nb->body = body;
    mt_sched_replace(s, b, nb);
    return true;
}
