/*
 * printer.c -- graph IR to TVMScript-style text (see graph.h for a sample).
 *
 * The output is meant for people and golden tests: stable, one binding per
 * line, constants inline as R.const(value, "dtype"), loop functions named
 * through `cls.` as TVMScript does inside an IRModule.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "support/common.h"
#include "support/strbuf.h"

static void put_const(mt_sb *sb, const mt_gvar *v) {
    mt_dtype dt = v->type.dtype;
    if (mt_dtype_is_float(dt)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.9g", v->fconst);
        if (isfinite(v->fconst) && !strpbrk(buf, ".e")) strcat(buf, ".0");
        mt_sb_printf(sb, "R.const(%s, \"%s\")", buf, mt_dtype_str(dt));
    } else if (dt == MT_BOOL) {
        mt_sb_printf(sb, "R.const(%s, \"bool\")", v->iconst ? "True" : "False");
    } else {
        mt_sb_printf(sb, "R.const(%lld, \"%s\")", (long long)v->iconst, mt_dtype_str(dt));
    }
}

static void put_value(mt_sb *sb, const mt_gvar *v) {
    if (v->is_const)
        put_const(sb, v);
    else
        mt_sb_puts(sb, v->name);
}

static void put_ints(mt_sb *sb, const char *key, const int64_t *v, int n) {
    mt_sb_printf(sb, ", %s=[", key);
    for (int i = 0; i < n; i++) mt_sb_printf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
    mt_sb_putc(sb, ']');
}

/* The attributes that are set, as keywords: axis=[1], keepdims=True, ... */
static void put_attrs(mt_sb *sb, const mt_gattrs *at) {
    if (!at) return;
    if (at->has_axes) put_ints(sb, "axis", at->axes, at->naxes);
    if (at->keepdims) mt_sb_puts(sb, ", keepdims=True");
    if (at->nshape) {
        mt_sb_puts(sb, ", shape=(");
        for (int i = 0; i < at->nshape; i++) {
            if (i) mt_sb_puts(sb, ", ");
            if (at->shape[i].sym)
                mt_sb_printf(sb, "\"%s\"", at->shape[i].sym);
            else
                mt_sb_printf(sb, "%lld", (long long)at->shape[i].value);
        }
        mt_sb_puts(sb, at->nshape == 1 ? ",)" : ")");
    }
    if (at->has_dtype) mt_sb_printf(sb, ", dtype=\"%s\"", mt_dtype_str(at->dtype));
    if (at->has_value) mt_sb_printf(sb, ", value=%.9g", at->value);
    if (at->str) mt_sb_printf(sb, ", mode=\"%s\"", at->str);
    if (at->nslice) {
        put_ints(sb, "begin", at->begin, at->nslice);
        put_ints(sb, "end", at->end, at->nslice);
        put_ints(sb, "strides", at->step, at->nslice);
    }
}

static void put_binding(mt_sb *sb, mt_arena *a, const mt_gbinding *b, int indent) {
    mt_sb_indent(sb, indent);
    for (int i = 0; i < b->nouts; i++) mt_sb_printf(sb, "%s%s", i ? ", " : "", b->outs[i]->name);
    mt_sb_puts(sb, " = ");
    if (b->kind == MT_CALL_OP) {
        mt_sb_printf(sb, "R.%s(", b->op->name);
        for (int i = 0; i < b->nargs; i++) {
            if (i) mt_sb_puts(sb, ", ");
            put_value(sb, b->args[i]);
        }
        put_attrs(sb, b->attrs);
        mt_sb_puts(sb, ")\n");
        return;
    }
    mt_sb_printf(sb, "R.call_tir(cls.%s, (", b->callee->name);
    for (int i = 0; i < b->nargs; i++) {
        if (i) mt_sb_puts(sb, ", ");
        put_value(sb, b->args[i]);
    }
    if (b->nargs == 1) mt_sb_putc(sb, ',');
    mt_sb_puts(sb, "), out_sinfo=");
    if (b->nouts > 1) mt_sb_putc(sb, '[');
    for (int i = 0; i < b->nouts; i++) {
        if (i) mt_sb_puts(sb, ", ");
        mt_sb_puts(sb, mt_gtype_str(a, &b->outs[i]->type));
    }
    if (b->nouts > 1) mt_sb_putc(sb, ']');
    mt_sb_puts(sb, ")\n");
}

static void put_func(mt_sb *sb, mt_arena *a, const mt_gfunc *f) {
    mt_sb_printf(sb, "@R.function\ndef %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        if (i) mt_sb_puts(sb, ", ");
        mt_sb_printf(sb, "%s: %s", f->params[i]->name, mt_gtype_str(a, &f->params[i]->type));
    }
    mt_sb_puts(sb, "):\n");
    for (int bi = 0; bi < f->nblocks; bi++) {
        const mt_gblock *blk = f->blocks[bi];
        if (blk->nbindings == 0) continue;
        int indent = 4;
        if (blk->dataflow) {
            mt_sb_puts(sb, "    with R.dataflow():\n");
            indent = 8;
        }
        for (int i = 0; i < blk->nbindings; i++) put_binding(sb, a, blk->bindings[i], indent);
        if (blk->dataflow) {
            /* R.output names the block's values used after it: the returns. */
            mt_sb_puts(sb, "        R.output(");
            int n = 0;
            for (int o = 0; o < f->noutputs; o++) {
                const mt_gvar *v = f->outputs[o];
                bool here = false;
                for (int i = 0; i < blk->nbindings && !here; i++)
                    for (int k = 0; k < blk->bindings[i]->nouts; k++)
                        if (blk->bindings[i]->outs[k] == v) here = true;
                bool dup = false;
                for (int p = 0; p < o; p++)
                    if (f->outputs[p] == v) dup = true;
                if (here && !dup) mt_sb_printf(sb, "%s%s", n++ ? ", " : "", v->name);
            }
            mt_sb_puts(sb, ")\n");
        }
    }
    mt_sb_puts(sb, "    return ");
    if (f->noutputs != 1) mt_sb_putc(sb, '(');
    for (int i = 0; i < f->noutputs; i++) {
        if (i) mt_sb_puts(sb, ", ");
        put_value(sb, f->outputs[i]);
    }
    if (f->noutputs != 1) mt_sb_putc(sb, ')');
    mt_sb_putc(sb, '\n');
}

const char *mt_gfunc_print(mt_arena *a, const mt_gfunc *f) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    put_func(&sb, a, f);
    return mt_sb_str(&sb);
}

const char *mt_gmodule_print(mt_arena *a, const mt_gmodule *m, bool with_tir) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    for (int i = 0; i < m->nfuncs; i++) {
        if (i) mt_sb_putc(&sb, '\n');
        put_func(&sb, a, m->funcs[i]);
    }
    if (with_tir)
        for (int i = 0; i < m->ntfuncs; i++) {
            mt_sb_putc(&sb, '\n');
            mt_sb_puts(&sb, mt_tfunc_print(a, m->tfuncs[i]));
        }
    return mt_sb_str(&sb);
}
