/*
 * infer.h -- shape/dtype rules of the ops (named in graph/ops.def) and the
 * helpers they share. Internal to the graph layer.
 */
#ifndef MT_GRAPH_INFER_H
#define MT_GRAPH_INFER_H

#include "graph/graph.h"

#define MT_EWISE(id, name, sig, pattern, infer, compute) mt_gtype infer(mt_infer_ctx *c);
#define MT_OP(id, name, sig, pattern, infer, legalize) mt_gtype infer(mt_infer_ctx *c);
#include "graph/ops.def"

/* "'x'", "a literal", "a float32 constant": how a message names a value. */
const char *mt_describe_value(mt_arena *a, const mt_gvar *v);

/* A weak constant re-made with dtype dt (other is the operand it meets, for
 * the message); anything else is returned as it is. */
mt_gvar *mt_settle_const(mt_infer_ctx *c, mt_gvar *v, mt_dtype dt, const mt_gvar *other);

/* The dtype two operands meet at (weak literals take the other's), or an
 * error naming both. Settles the literals in c->args[i], c->args[j]. */
mt_dtype mt_unify_dtypes(mt_infer_ctx *c, int i, int j);

/* NumPy broadcasting of two types' shapes (dtype of the result: x's). */
mt_gtype mt_broadcast_types(mt_infer_ctx *c, const mt_gvar *x, const mt_gvar *y);

/* Normalizes axis (may be negative) for rank ndim, or reports it at c->loc. */
int mt_norm_axis(mt_infer_ctx *c, int64_t axis, int ndim);

/* Requires c->nargs == n. */
void mt_check_arity(mt_infer_ctx *c, int n);

#endif
