/*
 * builder_extern.c -- calls of host functions:
 *
 *     y = call_dps_packed("my_norm", (x, w), out_sinfo=Tensor(("n", 64), "float32"))
 *     a, b = call_dps_packed("split2", (x,), out_sinfo=[Tensor(...), Tensor(...)])
 *
 * The name is a string literal naming a function the host registered on the
 * context (mt_context_register_extern) with the dtype and rank of each input
 * and output; the inputs are a tuple of tensors (or one tensor); out_sinfo
 * gives each output's shape and dtype, as a parameter annotation does. The
 * call is checked here against the registration -- the name, the number of
 * inputs and outputs, each one's dtype and rank -- and a symbolic dim of an
 * output must be a dim of some input, so that a run knows its size. The
 * binding is opaque to the graph passes: never folded, fused or legalized.
 */
#include <string.h>

#include "graph/builder_internal.h"
#include "support/common.h"
#include "support/strbuf.h"

enum { MAX_EXTERN_VALUES = 32 };

static const mt_gextern *find_extern(builder *b, const mt_ast *name_arg) {
    if (name_arg->kind != AST_STR)
        mt_fail(MT_ERR_TYPE, name_arg->loc, "the first argument of call_dps_packed must be the host "
                "function's name as a string");
    const char *name = name_arg->str;
    static const mt_build_options none;
    const mt_build_options *o = b->opts ? b->opts : &none;
    for (int i = 0; i < o->nexterns; i++)
        if (strcmp(o->externs[i]->name, name) == 0) return o->externs[i];
    mt_sb known;
    mt_sb_init(&known, b->arena);
    for (int i = 0; i < o->nexterns && i < 8; i++)
        mt_sb_printf(&known, "%s'%s'", i ? ", " : "", o->externs[i]->name);
    if (o->nexterns > 8) mt_sb_puts(&known, ", ...");
    mt_fail(MT_ERR_NAME, name_arg->loc, "no host function '%s' is registered on the context%s%s%s",
            name, o->nexterns ? " (registered: " : "; register it with mt_context_register_extern",
            mt_sb_str(&known), o->nexterns ? ")" : "");
}

static const char *rank_text(builder *b, int ndim) {
    return ndim < 0 ? "any rank" : mt_arena_printf(b->arena, "rank %d", ndim);
}

/* The i-th of ext's inputs (or outputs, at i >= nin) given type t at loc. */
static void check_type(builder *b, const mt_gextern *ext, int i, const mt_gtype *t, const char *what,
                       mt_loc loc) {
    bool out = i >= ext->nin;
    int k = out ? i - ext->nin : i;
    if (t->dtype == ext->dtypes[i] && (ext->ndims[i] < 0 || ext->ndims[i] == t->ndim)) return;
    mt_fail(MT_ERR_TYPE, loc, "%s %d of host function '%s' must be %s of %s, got %s %s %s",
            out ? "output" : "input", k, ext->name, mt_dtype_str(ext->dtypes[i]),
            rank_text(b, ext->ndims[i]), what, mt_dtype_str(t->dtype), mt_shape_str(b->arena, t));
}

static int inputs(builder *b, const mt_gextern *ext, const mt_ast *args, mt_gvar **in) {
    const mt_ast_list *l = &args->items;
    bool tuple = args->kind == AST_TUPLE || args->kind == AST_LIST;
    int n = tuple ? l->len : 1;
    if (n != ext->nin)
        mt_fail(MT_ERR_TYPE, args->loc, "host function '%s' takes %d input%s, got %d", ext->name,
                ext->nin, ext->nin == 1 ? "" : "s", n);
    for (int i = 0; i < n; i++) {
        const mt_ast *e = tuple ? l->data[i] : args;
        in[i] = mt_b_expr(b, e);
        if (in[i]->is_const && in[i]->weak)
            mt_fail(MT_ERR_TYPE, e->loc, "input %d of host function '%s' must be a tensor, not a literal",
                    i, ext->name);
        check_type(b, ext, i, &in[i]->type, mt_ast_unparse(b->arena, e, 40), e->loc);
    }
    return n;
}

/* A symbolic dim of an output must be one the inputs carry. */
static void check_dims(const mt_gtype *t, mt_gvar *const *in, int nin, mt_loc loc) {
    for (int d = 0; d < t->ndim; d++) {
        if (!t->dims[d].sym) continue;
        bool found = false;
        for (int i = 0; i < nin && !found; i++)
            for (int e = 0; e < in[i]->type.ndim && !found; e++)
                found = in[i]->type.dims[e].sym && strcmp(in[i]->type.dims[e].sym, t->dims[d].sym) == 0;
        if (!found)
            mt_fail(MT_ERR_SHAPE, loc, "symbolic dimension \"%s\" of out_sinfo is no dimension of an input; "
                    "a run could not know its size", t->dims[d].sym);
    }
}

static const mt_ast *out_sinfo(const mt_ast *call) {
    for (int i = 0; i < call->kw.len; i++) {
        const mt_ast *k = call->kw.data[i];
        if (strcmp(k->name, "out_sinfo") != 0)
            mt_fail(MT_ERR_TYPE, k->loc, "call_dps_packed() got an unexpected keyword argument '%s'", k->name);
        return k->lhs;
    }
    mt_fail(MT_ERR_TYPE, call->loc, "call_dps_packed needs out_sinfo=Tensor(shape, dtype): the outputs' types");
}

int mt_b_extern_call(builder *b, const mt_ast *call, mt_gvar **out, int max, const char *const *names) {
    if (call->items.len != 2)
        mt_fail(MT_ERR_TYPE, call->loc, "call_dps_packed takes a name and a tuple of inputs, got %d "
                "positional arguments", call->items.len);
    const mt_gextern *ext = find_extern(b, call->items.data[0]);
    const mt_ast *sinfo = out_sinfo(call);
    mt_gvar *in[MAX_EXTERN_VALUES];
    if (ext->nin > MAX_EXTERN_VALUES || ext->nout > MAX_EXTERN_VALUES || ext->nout > max)
        mt_fail(MT_ERR_LIMIT, call->loc, "host function '%s' has more values than a call can take", ext->name);
    int nin = inputs(b, ext, call->items.data[1], in);
    bool many = sinfo->kind == AST_LIST || sinfo->kind == AST_TUPLE;
    int nout = many ? sinfo->items.len : 1;
    if (nout != ext->nout)
        mt_fail(MT_ERR_TYPE, sinfo->loc, "host function '%s' has %d output%s, out_sinfo gives %d", ext->name,
                ext->nout, ext->nout == 1 ? "" : "s", nout);
    for (int k = 0; k < nout; k++) {
        const mt_ast *s = many ? sinfo->items.data[k] : sinfo;
        mt_loc at = s->kind == AST_CALL ? s->lhs->loc : s->loc; /* Tensor, not its '(' */
        mt_gtype t = mt_b_sinfo(b, s);
        check_type(b, ext, ext->nin + k, &t, "out_sinfo says", at);
        check_dims(&t, in, nin, at);
        const char *name = names ? names[k] : NULL;
        out[k] = mt_gvar_new(b->arena, name ? mt_b_fresh_name(b, name) : mt_b_temp_name(b), &t, call->loc);
        out[k]->temp = !name;
    }
    mt_gbinding *bd = mt_gbinding_extern(b->arena, out, nout, ext, in, nin, call->loc);
    bd->device = b->device;
    mt_b_add_binding(b, bd, call->loc);
    return nout;
}
