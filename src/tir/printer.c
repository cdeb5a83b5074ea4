/*
 * printer.c -- the loop IR as @T.prim_func source (DSL.md §2).
 *
 * A dump is meant to be valid minitriton source that parses back to the same
 * function, so the printer follows the TVMScript conventions the parser
 * accepts and makes every choice deterministic:
 *
 *  - Names. Variables and buffers share one Python namespace per function.
 *    Each distinct object (by pointer) gets its own name in order of first
 *    appearance: params, then symbolic dims, then function-level allocations,
 *    then the body in print order. A name already taken by another object gets
 *    "_1", "_2", ... appended (the first free one). "T" and Python keywords
 *    are never handed out, and characters that cannot be in an identifier are
 *    replaced by '_'. The name table is an open-addressing hash map keyed by
 *    pointer, plus the names in use (support/nameset.h), where each base
 *    remembers the first suffix still worth trying. (Probing from "_1"
 *    again for every object was quadratic in the objects of one base: the
 *    matmul rule's micro-kernels have hundreds of `xb`s, and printing the
 *    "tir-sched" dump took 44 % of an MLP's compile before LLVM.)
 *
 *  - Loops. A chain of two or more perfectly nested serial loops that start
 *    at 0, whose extents do not use the chain's own variables, prints as one
 *    `for i, j in T.grid(n, m):`. Other loops print as `range(n)` or
 *    `range(min, min + extent)`, `T.parallel`, `T.vectorized`, `T.unroll` or
 *    `T.thread_binding(n, thread="threadIdx.x")` (two bounds when min != 0).
 *    The printer keeps the stack of enclosing loops for the block rule below.
 *
 *  - Blocks. Iteration variables print as one `T.axis.remap("SR", [i, k])`
 *    when every one is bound to a plain enclosing loop variable whose loop
 *    starts at 0 and has the iteration extent; otherwise one line each,
 *    `v = T.axis.spatial(extent, value)` / `T.axis.reduce(...)`. Then come
 *    `T.where`, `T.reads`, `T.writes` (always, possibly empty), the block's
 *    `T.alloc_buffer`s, `with T.init():` and the body. A region dim prints as
 *    its min when the extent is 1, else as `min:min + extent`.
 *
 *  - Expressions. Python precedence decides parentheses (table in
 *    expr_prec): a left operand needs them when it binds looser, a right one
 *    when it binds looser or equally (no reassociation is implied), and
 *    comparisons always parenthesize comparison operands (Python would chain
 *    them). Immediates: float32 as a plain Python float (%.9g, ".0" added
 *    when it would read as an int), other floats as `T.float64(x)` with the
 *    shortest of %.15g..%.17g that reads back exactly; non-finite floats as
 *    `T.float32("inf")`; int64 plain, other ints `T.int32(3)`, bools
 *    `True`/`False`; the operand of a T.Cast spells out an int64 or float32
 *    immediate's type (`T.Cast("float32", T.int64(6))`: a plain 6 would
 *    read back as a literal of the cast's dtype). Integer TE_DIV prints
 *    `T.truncdiv(a, b)`.
 *
 *  - Buffers. A param prints `T.Buffer((2, 3), "float32")` with symbolic dims
 *    as strings (`("n", 784)`); rank 0 is `()` and is indexed `b[()]`.
 *    `T.alloc_buffer` shapes print as expressions, and scope= only when the
 *    scope is not global.
 *
 *  - Lowered statements: a let prints `x = value` and continues with its body
 *    at the same indentation; TS_ALLOC prints its `T.alloc_buffer` line the
 *    same way; an empty sequence prints `T.evaluate(0)`.
 *
 *  - Launches (after split_host_device): `T.launch("k_par0", a, n, grid=(n,))`,
 *    the callee's name, the arguments (buffers by name), then the extents
 *    that are set as `grid=`, `block=` (tuples), `shared=`, and `min=` when
 *    it is not 0. A vector param of a device function prints as
 *    `x: T.float32x4` (TVM's vector dtype); the function's kind is in its
 *    T.func_attr line.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/common.h"
#include "support/nameset.h"
#include "support/cnum.h"
#include "support/strbuf.h"
#include "tir/tir.h"

/* ---- name table ---------------------------------------------------------- */

typedef struct name_slot {
    const void *key;  /* the mt_tvar or mt_tbuffer; NULL = empty slot */
    const char *name; /* its printed name */
} name_slot;

typedef struct printer {
    mt_arena *a;
    mt_sb sb;
    name_slot *objs;   /* object -> name, open addressing */
    int objs_cap;      /* power of two */
    int objs_len;
    mt_nameset used;   /* names handed out (and reserved), each with its next suffix */
    MT_VEC(const mt_tstmt *) loops; /* enclosing TS_FOR, innermost last */
    bool canonical;    /* every variable and buffer named "v", "v_1", ...: mt_tfunc_print_canonical */
} printer;

static const char *const reserved_names[] = {
    "T",      "False", "None",   "True",    "and",    "as",     "assert", "async",
    "await",  "break", "class",  "continue", "def",   "del",    "elif",   "else",
    "except", "finally", "for",  "from",    "global", "if",     "import", "in",
    "is",     "lambda", "nonlocal", "not",  "or",     "pass",   "raise",  "return",
    "try",    "while", "with",   "yield",   "range",
};

static uint64_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static name_slot *obj_slot(printer *p, const void *key) {
    uint64_t mask = (uint64_t)p->objs_cap - 1;
    uint64_t i = hash_ptr(key) & mask;
    while (p->objs[i].key && p->objs[i].key != key) i = (i + 1) & mask;
    return &p->objs[i];
}

static void objs_grow(printer *p) {
    int ncap = p->objs_cap ? p->objs_cap * 2 : 64;
    name_slot *old = p->objs;
    int ocap = p->objs_cap;
    p->objs = MT_NEW_ARRAY(p->a, name_slot, ncap);
    p->objs_cap = ncap;
    for (int i = 0; i < ocap; i++)
        if (old[i].key) *obj_slot(p, old[i].key) = old[i];
}

/* `base` made into an identifier. */
static const char *sanitize(printer *p, const char *base) {
    if (!base || !*base) return "v";
    bool ok = !(base[0] >= '0' && base[0] <= '9');
    for (const char *c = base; *c && ok; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
             (*c >= '0' && *c <= '9') || *c == '_';
    if (ok) return base;
    size_t n = strlen(base);
    char *s = mt_arena_alloc(p->a, n + 2);
    char *d = s;
    if (base[0] >= '0' && base[0] <= '9') *d++ = '_';
    for (const char *c = base; *c; c++) {
        bool id = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_';
        *d++ = id ? *c : '_';
    }
    *d = 0;
    return s;
}

/* The name of object `key`, handing out a fresh one on first sight. */
static const char *name_of(printer *p, const void *key, const char *base) {
    if ((p->objs_len + 1) * 2 > p->objs_cap) objs_grow(p);
    name_slot *slot = obj_slot(p, key);
    if (slot->key) return slot->name;
    const char *name = mt_nameset_fresh(p->a, &p->used, p->canonical ? "v" : sanitize(p, base));
    slot->key = key;
    slot->name = name;
    p->objs_len++;
    return name;
}

static const char *var_name(printer *p, const mt_tvar *v) { return name_of(p, v, v->name); }
static const char *buf_name(printer *p, const mt_tbuffer *b) { return name_of(p, b, b->name); }

static void printer_init(printer *p, mt_arena *a) {
    memset(p, 0, sizeof *p);
    p->a = a;
    mt_sb_init(&p->sb, a);
    for (int i = 0; i < MT_ARRAY_LEN(reserved_names); i++) mt_nameset_add(a, &p->used, reserved_names[i]);
}

/* ---- expressions --------------------------------------------------------- */

/* Python binding strength, loosest first. */
enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_UNARY, P_ATOM };

static int expr_prec(const mt_texpr *e) {
    switch (e->kind) {
    case TE_INT:
        return e->dtype == MT_INT64 && e->ival < 0 ? P_UNARY : P_ATOM;
    case TE_FLOAT:
        return e->dtype == MT_FLOAT32 && isfinite(e->fval) && signbit(e->fval) ? P_UNARY
                                                                                : P_ATOM;
    case TE_ADD: case TE_SUB: return P_ADD;
    case TE_MUL: case TE_FLOORDIV: case TE_FLOORMOD: return P_MUL;
    case TE_DIV: return mt_dtype_is_float(e->dtype) ? P_MUL : P_ATOM;
    case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT: case TE_GE: return P_CMP;
    case TE_AND: return P_AND;
    case TE_OR: return P_OR;
    case TE_NOT: return P_NOT;
    case TE_NEG: return P_UNARY;
    default: return P_ATOM;
    }
}

static void print_expr(printer *p, const mt_texpr *e, int min_prec);

static void put_string_lit(printer *p, const char *s) {
    mt_sb_putc(&p->sb, '"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') mt_sb_putc(&p->sb, '\\');
        if (*s == '\n') {
            mt_sb_puts(&p->sb, "\\n");
            continue;
        }
        mt_sb_putc(&p->sb, *s);
    }
    mt_sb_putc(&p->sb, '"');
}

/* Adds ".0" when the text would read back as an integer. */
static void put_float_text(printer *p, const char *txt) {
    mt_sb_puts(&p->sb, txt);
    if (!strpbrk(txt, ".eE")) mt_sb_puts(&p->sb, ".0");
}

static void put_float(printer *p, double v, mt_dtype dt) {
    char txt[40];
    if (!isfinite(v)) {
        mt_sb_printf(&p->sb, "T.%s(\"%s\")", mt_dtype_str(dt),
                     isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    if (dt == MT_FLOAT32) {
        mt_c_snprintf(txt, sizeof txt, "%.9g", v);
        put_float_text(p, txt);
        return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        mt_c_snprintf(txt, sizeof txt, "%.*g", digits, v);
        if (mt_c_strtod(txt, NULL) == v) break;
    }
    mt_sb_printf(&p->sb, "T.%s(", mt_dtype_str(dt));
    put_float_text(p, txt);
    mt_sb_putc(&p->sb, ')');
}

static void print_args(printer *p, mt_texpr *const *args, int n) {
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_puts(&p->sb, ", ");
        print_expr(p, args[i], 0);
    }
}

/* buf[i, j]; buf[()] for rank 0. */
static void print_access(printer *p, const mt_tbuffer *b, mt_texpr *const *idx, int n) {
    mt_sb_puts(&p->sb, buf_name(p, b));
    mt_sb_putc(&p->sb, '[');
    if (n == 0) mt_sb_puts(&p->sb, "()");
    print_args(p, idx, n);
    mt_sb_putc(&p->sb, ']');
}

static void print_call(printer *p, const char *fn, const mt_texpr *const *args, int n) {
    mt_sb_puts(&p->sb, fn);
    mt_sb_putc(&p->sb, '(');
    print_args(p, (mt_texpr *const *)args, n);
    mt_sb_putc(&p->sb, ')');
}

static void print_infix(printer *p, const mt_texpr *e, const char *op) {
    int prec = expr_prec(e);
    /* Comparisons chain in Python: keep comparison operands in parentheses. */
    print_expr(p, e->a, prec == P_CMP ? P_CMP + 1 : prec);
    mt_sb_printf(&p->sb, " %s ", op);
    print_expr(p, e->b, prec + 1);
}

static void print_expr(printer *p, const mt_texpr *e, int min_prec) {
    if (!e) {
        mt_sb_puts(&p->sb, "None");
        return;
    }
    bool paren = expr_prec(e) < min_prec;
    if (paren) mt_sb_putc(&p->sb, '(');
    switch (e->kind) {
    case TE_INT:
        if (e->dtype == MT_BOOL)
            mt_sb_puts(&p->sb, e->ival ? "True" : "False");
        else if (e->dtype == MT_INT64)
            mt_sb_printf(&p->sb, "%lld", (long long)e->ival);
        else
            mt_sb_printf(&p->sb, "T.%s(%lld)", mt_dtype_str(e->dtype), (long long)e->ival);
        break;
    case TE_FLOAT: put_float(p, e->fval, e->dtype); break;
    case TE_VAR: mt_sb_puts(&p->sb, var_name(p, e->var)); break;
    case TE_LOAD: print_access(p, e->buf, e->args, e->nargs); break;
    case TE_ADD: case TE_SUB: case TE_MUL: case TE_FLOORDIV: case TE_FLOORMOD:
    case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT: case TE_GE:
    case TE_AND: case TE_OR:
        print_infix(p, e, mt_texpr_kind_str(e->kind));
        break;
    case TE_DIV:
        if (mt_dtype_is_float(e->dtype)) {
            print_infix(p, e, "/");
        } else {
            const mt_texpr *ab[2] = {e->a, e->b};
            print_call(p, "T.truncdiv", ab, 2);
        }
        break;
    case TE_MIN: case TE_MAX: {
        const mt_texpr *ab[2] = {e->a, e->b};
        print_call(p, mt_texpr_kind_str(e->kind), ab, 2);
        break;
    }
    case TE_NOT:
        mt_sb_puts(&p->sb, "not ");
        print_expr(p, e->a, P_NOT);
        break;
    case TE_NEG:
        mt_sb_putc(&p->sb, '-');
        print_expr(p, e->a, P_UNARY + 1);
        break;
    case TE_SELECT: {
        const mt_texpr *args[3] = {e->cond, e->a, e->b};
        print_call(p, "T.Select", args, 3);
        break;
    }
    case TE_CAST: {
        /* an int64 or float32 immediate prints plain, which reads back as an
         * untyped literal that T.Cast would take as a literal of its dtype:
         * its type is spelled out (T.Cast("float32", T.int64(6))) */
        const mt_texpr *x = e->a;
        bool typed = x->lanes == 1 && ((x->kind == TE_INT && x->dtype == MT_INT64) ||
                                       (x->kind == TE_FLOAT && x->dtype == MT_FLOAT32 && isfinite(x->fval)));
        mt_sb_puts(&p->sb, "T.Cast(");
        put_string_lit(p, mt_dtype_str(e->dtype));
        mt_sb_printf(&p->sb, ", %s", typed ? (x->kind == TE_INT ? "T.int64(" : "T.float32(") : "");
        print_expr(p, x, 0);
        mt_sb_puts(&p->sb, typed ? "))" : ")");
        break;
    }
    case TE_CALL:
        mt_sb_printf(&p->sb, "T.%s(", mt_intrin_name(e->intrin));
        if (e->intrin == IN_SHFL_XOR) { /* T.shfl_xor(value, 16, 32): the immediates as literals */
            print_expr(p, e->args[0], 0);
            mt_sb_printf(&p->sb, ", %lld, %lld", (long long)e->args[1]->ival, (long long)e->args[2]->ival);
        } else if ((e->intrin == IN_WMMA_LOAD_A || e->intrin == IN_WMMA_LOAD_B || e->intrin == IN_WMMA_STORE) &&
                   e->nargs == 3 && e->args[2]->kind == TE_INT) { /* the ldm immediate as a literal */
            print_args(p, e->args, 2);
            mt_sb_printf(&p->sb, ", %lld", (long long)e->args[2]->ival);
        } else
            print_args(p, e->args, e->nargs);
        mt_sb_putc(&p->sb, ')');
        break;
    case TE_RAMP:
        mt_sb_puts(&p->sb, "T.Ramp(");
        print_expr(p, e->a, 0);
        mt_sb_puts(&p->sb, ", ");
        print_expr(p, e->b, 0);
        mt_sb_printf(&p->sb, ", %d)", e->lanes);
        break;
    case TE_SHUFFLE: /* T.Shuffle([x, y], [0, 16, 1, ...]) */
        mt_sb_puts(&p->sb, "T.Shuffle([");
        print_args(p, e->args, e->nargs);
        mt_sb_puts(&p->sb, "], [");
        for (int i = 0; i < e->lanes; i++) mt_sb_printf(&p->sb, "%s%d", i ? ", " : "", e->lane[i]);
        mt_sb_puts(&p->sb, "])");
        break;
    case TE_BROADCAST:
        mt_sb_puts(&p->sb, "T.Broadcast(");
        print_expr(p, e->a, 0);
        mt_sb_printf(&p->sb, ", %d)", e->lanes);
        break;
    default: mt_ice("printer: unknown expression kind %d", (int)e->kind);
    }
    if (paren) mt_sb_putc(&p->sb, ')');
}

/* `lo + ext`, folded when both are integer immediates; `ext` when lo is 0;
 * `hi` when ext is `hi - lo`. */
static void print_end(printer *p, const mt_texpr *lo, const mt_texpr *ext) {
    int64_t a, b, s;
    if (mt_te_is_const_int(lo, &a) && mt_te_is_const_int(ext, &b) && lo->dtype == MT_INT64 &&
        ext->dtype == MT_INT64 && !__builtin_add_overflow(a, b, &s)) {
        mt_sb_printf(&p->sb, "%lld", (long long)s);
        return;
    }
    if (mt_te_is_const_int(lo, &a) && a == 0) {
        print_expr(p, ext, 0);
        return;
    }
    if (ext->kind == TE_SUB && mt_texpr_equal(ext->b, lo)) { /* lo + (hi - lo) */
        print_expr(p, ext->a, 0);
        return;
    }
    mt_texpr sum = {0};
    sum.kind = TE_ADD;
    sum.dtype = lo->dtype;
    sum.lanes = 1;
    sum.a = (mt_texpr *)lo;
    sum.b = (mt_texpr *)ext;
    print_expr(p, &sum, 0);
}

/* ---- statements ---------------------------------------------------------- */

static void print_stmt(printer *p, const mt_tstmt *s, int ind);

static void line_start(printer *p, int ind) { mt_sb_indent(&p->sb, ind); }

static void print_shape_tuple(printer *p, const mt_tbuffer *b, bool sym_as_string) {
    mt_sb_putc(&p->sb, '(');
    for (int i = 0; i < b->ndim; i++) {
        if (i) mt_sb_puts(&p->sb, ", ");
        const mt_texpr *d = b->shape[i];
        if (sym_as_string && d->kind == TE_VAR)
            put_string_lit(p, var_name(p, d->var));
        else
            print_expr(p, d, 0);
    }
    if (b->ndim == 1) mt_sb_putc(&p->sb, ',');
    mt_sb_putc(&p->sb, ')');
}

/* name = T.alloc_buffer((..), "dtype"[, scope="..."]) */
static void print_alloc_line(printer *p, const mt_tbuffer *b, int ind) {
    line_start(p, ind);
    mt_sb_printf(&p->sb, "%s = T.alloc_buffer(", buf_name(p, b));
    print_shape_tuple(p, b, false);
    mt_sb_puts(&p->sb, ", ");
    put_string_lit(p, mt_dtype_str(b->dtype));
    if (b->scope != MT_SCOPE_GLOBAL && (unsigned)b->scope < MT_SCOPE_COUNT_)
        mt_sb_printf(&p->sb, ", scope=\"%s\"", mt_scope_str(b->scope));
    mt_sb_puts(&p->sb, ")\n");
}

typedef struct var_find {
    mt_tvar *const *vars;
    int n;
    bool found;
} var_find;

static void find_var_hook(mt_tvisitor *v, const mt_texpr *e) {
    var_find *vf = v->ctx;
    if (e->kind == TE_VAR)
        for (int i = 0; i < vf->n; i++)
            if (e->var == vf->vars[i]) vf->found = true;
    mt_tvisit_expr_children(v, e);
}

static bool uses_any(const mt_texpr *e, mt_tvar *const *vars, int n) {
    var_find vf = {vars, n, false};
    mt_tvisitor v = {find_var_hook, NULL, &vf};
    mt_tvisit_expr(&v, e);
    return vf.found;
}

static bool grid_loop(const mt_tstmt *s) {
    return s->kind == TS_FOR && s->for_kind == MT_FOR_SERIAL && s->min->kind == TE_INT &&
           s->min->ival == 0;
}

static void print_for(printer *p, const mt_tstmt *s, int ind) {
    const mt_tstmt *chain[64];
    mt_tvar *chain_vars[64];
    int n = 0;
    if (grid_loop(s)) {
        const mt_tstmt *c = s;
        while (n < 64 && grid_loop(c) && !uses_any(c->extent, chain_vars, n)) {
            chain[n] = c;
            chain_vars[n++] = c->var;
            c = c->body;
        }
    }
    if (n >= 2) {
        line_start(p, ind);
        mt_sb_puts(&p->sb, "for ");
        for (int i = 0; i < n; i++)
            mt_sb_printf(&p->sb, "%s%s", i ? ", " : "", var_name(p, chain[i]->var));
        mt_sb_puts(&p->sb, " in T.grid(");
        for (int i = 0; i < n; i++) {
            if (i) mt_sb_puts(&p->sb, ", ");
            print_expr(p, chain[i]->extent, 0);
        }
        mt_sb_puts(&p->sb, "):\n");
        for (int i = 0; i < n; i++) MT_VEC_PUSH(p->a, &p->loops, chain[i]);
        print_stmt(p, chain[n - 1]->body, ind + 4);
        p->loops.len -= n;
        return;
    }
    static const char *fns[] = {"range", "T.parallel", "T.vectorized", "T.unroll",
                                "T.thread_binding"};
    line_start(p, ind);
    mt_sb_printf(&p->sb, "for %s in %s(", var_name(p, s->var),
                 (unsigned)s->for_kind < 5 ? fns[s->for_kind] : "range");
    int64_t lo;
    if (mt_te_is_const_int(s->min, &lo) && lo == 0) {
        print_expr(p, s->extent, 0);
    } else {
        print_expr(p, s->min, 0);
        mt_sb_puts(&p->sb, ", ");
        print_end(p, s->min, s->extent);
    }
    if (s->for_kind == MT_FOR_THREAD) {
        mt_sb_puts(&p->sb, ", thread=");
        put_string_lit(p, s->thread_tag ? s->thread_tag : "");
    }
    mt_sb_puts(&p->sb, "):\n");
    MT_VEC_PUSH(p->a, &p->loops, s);
    print_stmt(p, s->body, ind + 4);
    p->loops.len--;
}

/* The enclosing loop that binds v, or NULL. */
static const mt_tstmt *enclosing_loop(const printer *p, const mt_tvar *v) {
    for (int i = p->loops.len - 1; i >= 0; i--)
        if (p->loops.data[i]->var == v) return p->loops.data[i];
    return NULL;
}

static bool remappable(const printer *p, const mt_titer *it, const mt_texpr *value) {
    if (!value || value->kind != TE_VAR) return false;
    const mt_tstmt *loop = enclosing_loop(p, value->var);
    int64_t lo;
    return loop && mt_te_is_const_int(loop->min, &lo) && lo == 0 &&
           mt_texpr_equal(loop->extent, it->extent);
}

static void print_region(printer *p, const mt_tregion *r) {
    mt_sb_puts(&p->sb, buf_name(p, r->buf));
    mt_sb_putc(&p->sb, '[');
    if (r->buf->ndim == 0) mt_sb_puts(&p->sb, "()");
    for (int d = 0; d < r->buf->ndim; d++) {
        if (d) mt_sb_puts(&p->sb, ", ");
        int64_t one;
        if (mt_te_is_const_int(r->extent[d], &one) && one == 1) {
            print_expr(p, r->min[d], 0);
        } else {
            print_expr(p, r->min[d], 0);
            mt_sb_putc(&p->sb, ':');
            print_end(p, r->min[d], r->extent[d]);
        }
    }
    mt_sb_putc(&p->sb, ']');
}

static void print_regions(printer *p, const char *fn, const mt_tregion *rs, int n, int ind) {
    line_start(p, ind);
    mt_sb_printf(&p->sb, "%s(", fn);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_puts(&p->sb, ", ");
        print_region(p, &rs[i]);
    }
    mt_sb_puts(&p->sb, ")\n");
}

static void print_block(printer *p, const mt_tstmt *s, int ind) {
    line_start(p, ind);
    mt_sb_puts(&p->sb, "with T.block(");
    put_string_lit(p, s->name ? s->name : "");
    mt_sb_puts(&p->sb, "):\n");
    int in = ind + 4;
    bool remap = s->niters > 0;
    for (int i = 0; i < s->niters && remap; i++)
        remap = remappable(p, &s->iters[i], s->iter_values ? s->iter_values[i] : NULL);
    if (remap) {
        line_start(p, in);
        for (int i = 0; i < s->niters; i++)
            mt_sb_printf(&p->sb, "%s%s", i ? ", " : "", var_name(p, s->iters[i].var));
        mt_sb_puts(&p->sb, " = T.axis.remap(\"");
        for (int i = 0; i < s->niters; i++)
            mt_sb_putc(&p->sb, s->iters[i].kind == MT_ITER_REDUCE ? 'R' : 'S');
        mt_sb_puts(&p->sb, "\", [");
        for (int i = 0; i < s->niters; i++)
            mt_sb_printf(&p->sb, "%s%s", i ? ", " : "", var_name(p, s->iter_values[i]->var));
        mt_sb_puts(&p->sb, "])\n");
    } else {
        for (int i = 0; i < s->niters; i++) {
            line_start(p, in);
            mt_sb_printf(&p->sb, "%s = T.axis.%s(", var_name(p, s->iters[i].var),
                         s->iters[i].kind == MT_ITER_REDUCE ? "reduce" : "spatial");
            print_expr(p, s->iters[i].extent, 0);
            mt_sb_puts(&p->sb, ", ");
            print_expr(p, s->iter_values ? s->iter_values[i] : NULL, 0);
            mt_sb_puts(&p->sb, ")\n");
        }
    }
    if (s->predicate) {
        line_start(p, in);
        mt_sb_puts(&p->sb, "T.where(");
        print_expr(p, s->predicate, 0);
        mt_sb_puts(&p->sb, ")\n");
    }
    print_regions(p, "T.reads", s->reads, s->nreads, in);
    print_regions(p, "T.writes", s->writes, s->nwrites, in);
    for (int i = 0; i < s->nallocs; i++) print_alloc_line(p, s->allocs[i], in);
    if (s->init) {
        line_start(p, in);
        mt_sb_puts(&p->sb, "with T.init():\n");
        print_stmt(p, s->init, in + 4);
    }
    print_stmt(p, s->body, in);
}

/* T.launch("callee", args..., grid=(x, y), block=(x,), shared=n, min=m):
 * only the extents that are set, and min when it is not 0. */
static void print_dims(printer *p, const char *key, mt_texpr *const *d) {
    int n = d[2] ? 3 : d[1] ? 2 : d[0] ? 1 : 0;
    if (!n) return;
    mt_sb_printf(&p->sb, ", %s=(", key);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_puts(&p->sb, ", ");
        if (d[i]) print_expr(p, d[i], 0);
        else mt_sb_putc(&p->sb, '1');
    }
    mt_sb_puts(&p->sb, n == 1 ? ",)" : ")");
}

static void print_launch(printer *p, const mt_tlaunch *l, int ind) {
    line_start(p, ind);
    mt_sb_puts(&p->sb, "T.launch(");
    put_string_lit(p, l->callee->name ? l->callee->name : "");
    for (int i = 0; i < l->nargs; i++) {
        mt_sb_puts(&p->sb, ", ");
        if (l->args[i].buf) mt_sb_puts(&p->sb, buf_name(p, l->args[i].buf));
        else print_expr(p, l->args[i].value, 0);
    }
    print_dims(p, "grid", l->grid);
    print_dims(p, "block", l->block);
    if (l->shared_bytes) {
        mt_sb_puts(&p->sb, ", shared=");
        print_expr(p, l->shared_bytes, 0);
    }
    int64_t m;
    if (l->min && !(mt_te_is_const_int(l->min, &m) && m == 0)) {
        mt_sb_puts(&p->sb, ", min=");
        print_expr(p, l->min, 0);
    }
    mt_sb_puts(&p->sb, ")\n");
}

/* (x0, x1) -- a tuple; (x0,) for one, () for none. */
static void print_tuple(printer *p, mt_texpr *const *xs, int n) {
    mt_sb_putc(&p->sb, '(');
    print_args(p, xs, n);
    mt_sb_puts(&p->sb, n == 1 ? ",)" : ")");
}

/* T.check_bounds(cond, "load", "x", (i0, i1), (d0, d1)) */
static void print_check(printer *p, const mt_tstmt *s, int ind) {
    line_start(p, ind);
    mt_sb_puts(&p->sb, "T.check_bounds(");
    print_expr(p, s->cond, 0);
    mt_sb_puts(&p->sb, s->check_store ? ", \"store\", " : ", \"load\", ");
    put_string_lit(p, s->name);
    mt_sb_puts(&p->sb, ", ");
    print_tuple(p, s->idx, s->nidx);
    mt_sb_puts(&p->sb, ", ");
    print_tuple(p, s->dims, s->nidx);
    mt_sb_puts(&p->sb, ")\n");
}

static void print_stmt(printer *p, const mt_tstmt *s, int ind) {
    if (!s) {
        line_start(p, ind);
        mt_sb_puts(&p->sb, "T.evaluate(0)\n");
        return;
    }
    switch (s->kind) {
    case TS_FOR: print_for(p, s, ind); break;
    case TS_BLOCK: print_block(p, s, ind); break;
    case TS_STORE:
        line_start(p, ind);
        print_access(p, s->buf, s->idx, s->nidx);
        mt_sb_puts(&p->sb, " = ");
        print_expr(p, s->value, 0);
        mt_sb_putc(&p->sb, '\n');
        break;
    case TS_SEQ:
        if (s->nstmts == 0) {
            line_start(p, ind);
            mt_sb_puts(&p->sb, "T.evaluate(0)\n");
        }
        for (int i = 0; i < s->nstmts; i++) print_stmt(p, s->stmts[i], ind);
        break;
    case TS_IF:
        line_start(p, ind);
        mt_sb_puts(&p->sb, "if ");
        print_expr(p, s->cond, 0);
        mt_sb_puts(&p->sb, ":\n");
        print_stmt(p, s->then_s, ind + 4);
        if (s->else_s) {
            line_start(p, ind);
            mt_sb_puts(&p->sb, "else:\n");
            print_stmt(p, s->else_s, ind + 4);
        }
        break;
    case TS_LET:
        line_start(p, ind);
        mt_sb_printf(&p->sb, "%s = ", var_name(p, s->var));
        print_expr(p, s->value, 0);
        mt_sb_putc(&p->sb, '\n');
        print_stmt(p, s->body, ind);
        break;
    case TS_ALLOC:
        print_alloc_line(p, s->buf, ind);
        print_stmt(p, s->body, ind);
        break;
    case TS_EVAL:
        line_start(p, ind);
        mt_sb_puts(&p->sb, "T.evaluate(");
        print_expr(p, s->value, 0);
        mt_sb_puts(&p->sb, ")\n");
        break;
    case TS_LAUNCH: print_launch(p, s->launch, ind); break;
    case TS_CHECK: print_check(p, s, ind); break;
    default: mt_ice("printer: unknown statement kind %d", (int)s->kind);
    }
}

/* ---- functions ----------------------------------------------------------- */

static const char *print_func(mt_arena *a, const mt_tfunc *f, bool canonical);

const char *mt_tfunc_print(mt_arena *a, const mt_tfunc *f) { return print_func(a, f, false); }

const char *mt_tfunc_print_canonical(mt_arena *a, const mt_tfunc *f) {
    mt_tfunc g = *f;
    g.name = "main";
    return print_func(a, &g, true);
}

static const char *print_func(mt_arena *a, const mt_tfunc *f, bool canonical) {
    printer p;
    printer_init(&p, a);
    p.canonical = canonical;
    /* Names in order of first appearance: params, symbolic dims, allocs. */
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].buf)
            buf_name(&p, f->params[i].buf);
        else
            var_name(&p, f->params[i].var);
    }
    for (int i = 0; i < f->nsym; i++) var_name(&p, f->sym_vars[i]);
    for (int i = 0; i < f->nallocs; i++) buf_name(&p, f->allocs[i]);

    mt_sb_printf(&p.sb, "@T.prim_func\ndef %s(", f->name ? f->name : "main");
    for (int i = 0; i < f->nparams; i++) {
        if (i) mt_sb_puts(&p.sb, ", ");
        const mt_tbuffer *b = f->params[i].buf;
        if (b) {
            mt_sb_printf(&p.sb, "%s: T.Buffer(", buf_name(&p, b));
            print_shape_tuple(&p, b, true);
            mt_sb_puts(&p.sb, ", ");
            put_string_lit(&p, mt_dtype_str(b->dtype));
            mt_sb_putc(&p.sb, ')');
        } else {
            const mt_tvar *v = f->params[i].var;
            mt_sb_printf(&p.sb, "%s: T.%s", var_name(&p, v), mt_dtype_str(v->dtype));
            if (f->params[i].lanes > 1) mt_sb_printf(&p.sb, "x%d", f->params[i].lanes);
        }
    }
    mt_sb_puts(&p.sb, "):\n");
    if (f->nattrs) {
        mt_sb_puts(&p.sb, "    T.func_attr({");
        for (int i = 0; i < f->nattrs; i++) {
            if (i) mt_sb_puts(&p.sb, ", ");
            put_string_lit(&p, f->attrs[i].key);
            mt_sb_puts(&p.sb, ": ");
            put_string_lit(&p, f->attrs[i].value);
        }
        mt_sb_puts(&p.sb, "})\n");
    }
    for (int i = 0; i < f->nallocs; i++) print_alloc_line(&p, f->allocs[i], 4);
    print_stmt(&p, f->body, 4);
    return mt_sb_str(&p.sb);
}

const char *mt_tstmt_print(mt_arena *a, const mt_tstmt *s) {
    printer p;
    printer_init(&p, a);
    print_stmt(&p, s, 0);
    return mt_sb_str(&p.sb);
}

const char *mt_texpr_print(mt_arena *a, const mt_texpr *e) {
    printer p;
    printer_init(&p, a);
    print_expr(&p, e, 0);
    return mt_sb_str(&p.sb);
}
