/*
 * test_primitives_reverse.c -- reverse_compute_inline, reverse_compute_at,
 * cache_read and cache_write with a copy block (src/schedule/
 * primitives_block.c, primitives_at.c, primitives_cache.c) on the fused
 * block-form functions of real kernels (blk_test.h).
 *
 * Per primitive: the printed result (golden text, verified in block form),
 * the refusals with their exact reasons (s.func untouched), and numerics:
 * the scheduled function, lowered and compiled, against a double reference
 * (the kernels' checks of blk_test.h), also after combining primitives.
 */
#include "blk_test.h"

/* Golden text; with MT_GOLD=1 in the environment, print it instead. */
#define GOLD(f, want)                                                      \
    do {                                                                   \
        const char *g__ = printed(f);                                      \
        if (getenv("MT_GOLD")) fprintf(stderr, "==== %d\n%s", __LINE__, g__); \
        else ASSERT_TEXT(g__, want);                                       \
    } while (0)

/* Refused with reason `why`, s->func as it was. */
#define REFUSED(call, s, why)                  \
    do {                                       \
        const mt_tfunc *f0__ = (s)->func;      \
        assert_false(call);                    \
        if (getenv("MT_GOLD")) fprintf(stderr, "==== %d\n%s\n", __LINE__, (s)->error); \
        else assert_string_equal((s)->error, why);  \
        assert_true((s)->func == f0__);        \
    } while (0)

/* f with its top-level items replaced. */
static mt_tfunc *with_items(mt_tfunc *f, mt_tstmt **items, int n) {
    mt_tfunc *h = MT_NEW(A, mt_tfunc);
    *h = *f;
    h->body = mt_ts_seq(A, items, n);
    return h;
}

/* A copy of block b named `name` storing value at b's index of buf. */
static mt_tstmt *writer(const mt_tstmt *b, const char *name, mt_tbuffer *buf, mt_texpr *value) {
    mt_tstmt *w = mt_ts_copy(A, b);
    w->name = name;
    w->body = mt_ts_store(A, buf, b->body->idx, b->body->nidx, value);
    return w;
}

/* Top-level item i of f, its innermost block replaced by blk. */
static mt_tstmt *item_with_block(mt_tfunc *f, int i, mt_tstmt *blk) {
    mt_sched s;
    mt_tfunc *g = MT_NEW(A, mt_tfunc);
    *g = *f;
    g->body = f->body->stmts[i];
    mt_sched_init(&s, A, g);
    const mt_tstmt *b = g->body;
    while (b->kind != TS_BLOCK) b = b->body;
    mt_sched_replace(&s, b, blk);
    return s.func->body;
}

/* ---- reverse_compute_inline ----------------------------------------------------------- */

static void test_reverse_compute_inline(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K1);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_reverse_compute_inline(&s, "exp"));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    t = T.alloc_buffer((8, 16), \"float32\")\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(t[v0, v1])\n"
        "            t[v0, v1] = T.exp(a[v0, v1] + b[v0, v1])\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "            T.reads(t[v0_1, v1_1], a[v0_1, v1_1])\n"
        "            T.writes(lv1[v0_1, v1_1])\n"
        "            lv1[v0_1, v1_1] = t[v0_1, v1_1] * a[v0_1, v1_1]\n"
        "    for i0_2, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_2, v1_2 = T.axis.remap(\"SR\", [i0_2, i1_2])\n"
        "            T.reads(lv1[v0_2, v1_2])\n"
        "            T.writes(lv2[v0_2])\n"
        "            with T.init():\n"
        "                lv2[v0_2] = 0.0\n"
        "            lv2[v0_2] = lv2[v0_2] + lv1[v0_2, v1_2]\n");
    check_k1(s.func);
    assert_true(mt_sched_reverse_compute_inline(&s, "multiply"));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(lv1[v0, v1])\n"
        "            lv1[v0, v1] = T.exp(a[v0, v1] + b[v0, v1]) * a[v0, v1]\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SR\", [i0_1, i1_1])\n"
        "            T.reads(lv1[v0_1, v1_1])\n"
        "            T.writes(lv2[v0_1])\n"
        "            with T.init():\n"
        "                lv2[v0_1] = 0.0\n"
        "            lv2[v0_1] = lv2[v0_1] + lv1[v0_1, v1_1]\n");
    check_k1(s.func);
    /* softmax's numerator: exp folded into subtract */
    mt_tfunc *g = kernel(K2);
    mt_sched_init(&s, A, g);
    assert_true(mt_sched_reverse_compute_inline(&s, "exp"));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_max_subtract_exp(x: T.Buffer((8, 16), \"float32\"), lv1: T.Buffer((8, 16), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    m = T.alloc_buffer((8, 1), \"float32\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"max\"):\n"
        "            v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
        "            T.reads(x[v0, v1])\n"
        "            T.writes(m[v0, 0])\n"
        "            with T.init():\n"
        "                m[v0, 0] = T.float32(\"-inf\")\n"
        "            m[v0, 0] = T.Select(x[v0, v1] > m[v0, 0] or x[v0, v1] != x[v0, v1], x[v0, v1], m[v0, 0])\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"subtract\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "            T.reads(x[v0_1, v1_1], m[v0_1, 0])\n"
        "            T.writes(lv1[v0_1, v1_1])\n"
        "            lv1[v0_1, v1_1] = T.exp(x[v0_1, v1_1] - m[v0_1, 0])\n");
    check_k2(s.func);

    /* refusals */
    mt_sched_init(&s, A, f);
    REFUSED(mt_sched_reverse_compute_inline(&s, "sum"), &s,
        "reverse_compute_inline: block 'sum' has reduce variable 'v1'");
    REFUSED(mt_sched_reverse_compute_inline(&s, "nope"), &s,
        "reverse_compute_inline: no block named 'nope'");
    REFUSED(mt_sched_reverse_compute_inline(&s, "add"), &s,
        "reverse_compute_inline: block 'add' reads no buffer the function allocates (no "
        "producer to inline into)");
    mt_sched_init(&s, A, g);
    REFUSED(mt_sched_reverse_compute_inline(&s, "subtract"), &s,
        "reverse_compute_inline: block 'subtract' reads 'm' at 'm[v0, 0]', not at its "
        "iteration variables in some order over the whole buffer (not a bijection)");
    /* the producer is a reduction */
    mt_tfunc *h = kernel("def f(x: Tensor((8, 16), \"float32\")):\n"
                         "    return exp(sum(x, axis=-1))\n");
    mt_sched_init(&s, A, h);
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: the producer of 'lv', block 'sum', is a reduction: its "
        "values are final only after its last reduce iteration");
    /* t read by multiply and add; add reads two intermediates */
    h = kernel("def f(a: Tensor((4, 6), \"float32\")):\n"
               "    t = exp(a)\n"
               "    return t * t + t\n");
    mt_sched_init(&s, A, h);
    REFUSED(mt_sched_reverse_compute_inline(&s, "multiply"), &s,
        "reverse_compute_inline: 't' is read by block 'add' too");
    REFUSED(mt_sched_reverse_compute_inline(&s, "add"), &s,
        "reverse_compute_inline: block 'add' reads 'lv' and 't', both allocated by the "
        "function (one producer wanted)");
    /* hand-made variants of exp (reads lv, writes t) */
    const mt_tstmt *ex = block_of(f, "exp"), *ad = block_of(f, "add");
    mt_tbuffer *lv = ad->body->buf, *t = ex->body->buf;
    mt_tstmt *c = mt_ts_copy(A, ex);
    c->predicate = bin(TE_LT, V(ex->iters[1].var), I(8));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' has a T.where predicate");
    c = mt_ts_copy(A, ex);
    c->init = ex->body;
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' has an init");
    c = mt_ts_copy(A, ex);
    c->body = seq2(ex->body, ex->body);
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: the body of block 'exp' is not a single store");
    c = writer(ex, "exp", t, add(ex->body->value, mt_te_load(A, t, ex->body->idx, 2)));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' reads 't', the buffer it writes");
    mt_texpr *other[2] = {ex->body->idx[0], I(0)};
    c = writer(ex, "exp", t, add(ex->body->value, mt_te_load(A, lv, other, 2)));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' reads 'lv' at more than one index");
    c = writer(ex, "exp", t, add(ex->body->value, mt_te_cast(A, MT_FLOAT32, V(loop_of(f, "exp", 0)))));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' uses 'i0', which is not one of its iteration "
        "variables");
    /* add writes lv transposed: not over the whole buffer */
    mt_texpr *sw[2] = {ad->body->idx[1], ad->body->idx[0]};
    c = mt_ts_copy(A, ad);
    c->body = mt_ts_store(A, lv, sw, 2, ad->body->value);
    mt_sched_init(&s, A, patch(f, "add", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: the producer of 'lv', block 'add', does not write it at "
        "its iteration variables in some order over the whole buffer");
    /* a second writer of lv */
    mt_tstmt *mu = (mt_tstmt *)block_of(f, "multiply");
    c = writer(mu, "multiply", lv, mu->body->value);
    mt_sched_init(&s, A, patch(f, "multiply", c));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: 'lv' has more than one writer (blocks 'add' and "
        "'multiply')");
    /* order: exp's nest first; no add at all; a block between writing a */
    mt_tstmt **it = f->body->stmts;
    mt_tstmt *items[5] = {it[1], it[0], it[2], it[3]};
    mt_sched_init(&s, A, with_items(f, items, 4));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'exp' reads 'lv' before block 'add' writes it");
    mt_sched_init(&s, A, with_items(f, it + 1, 3));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: no block writes 'lv'");
    mt_tbuffer *pa = f->params[param(f, "a")].buf;
    mt_tstmt *w = item_with_block(f, 0, writer(ad, "w", pa, F(1.0)));
    mt_tstmt *items2[5] = {it[0], it[1], w, it[2], it[3]};
    mt_sched_init(&s, A, with_items(f, items2, 5));
    REFUSED(mt_sched_reverse_compute_inline(&s, "multiply"), &s,
        "reverse_compute_inline: block 'w' writes 'a', which block 'multiply' reads, "
        "between blocks 'exp' and 'multiply'");
    /* ... or reading t, which exp writes, between add and exp */
    w = item_with_block(f, 0, writer(ad, "w", pa, mt_te_load(A, t, ad->body->idx, 2)));
    mt_tstmt *items3[5] = {it[0], w, it[1], it[2], it[3]};
    mt_sched_init(&s, A, with_items(f, items3, 5));
    REFUSED(mt_sched_reverse_compute_inline(&s, "exp"), &s,
        "reverse_compute_inline: block 'w' reads 't', which block 'exp' writes, between "
        "blocks 'add' and 'exp'");
    TIR_GUARD_END();
}

/* ---- reverse_compute_at ----------------------------------------------------------------- */

static void test_reverse_compute_at(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K2);
    mt_sched s;
    mt_sched_init(&s, A, f);
    mt_tvar *row = loop_of(f, "max", 0);
    assert_true(mt_sched_reverse_compute_at(&s, "subtract", row));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_max_subtract_exp(x: T.Buffer((8, 16), \"float32\"), lv1: T.Buffer((8, 16), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    m = T.alloc_buffer((8, 1), \"float32\")\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0 in range(8):\n"
        "        for i1 in range(16):\n"
        "            with T.block(\"max\"):\n"
        "                v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
        "                T.reads(x[v0, v1])\n"
        "                T.writes(m[v0, 0])\n"
        "                with T.init():\n"
        "                    m[v0, 0] = T.float32(\"-inf\")\n"
        "                m[v0, 0] = T.Select(x[v0, v1] > m[v0, 0] or x[v0, v1] != x[v0, v1], x[v0, v1], m[v0, 0])\n"
        "        for i1_1 in range(16):\n"
        "            with T.block(\"subtract\"):\n"
        "                v0_1, v1_1 = T.axis.remap(\"SS\", [i0, i1_1])\n"
        "                T.reads(x[v0_1, v1_1], m[v0_1, 0])\n"
        "                T.writes(lv[v0_1, v1_1])\n"
        "                lv[v0_1, v1_1] = x[v0_1, v1_1] - m[v0_1, 0]\n"
        "    for i0_1, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"exp\"):\n"
        "            v0_2, v1_2 = T.axis.remap(\"SS\", [i0_1, i1_2])\n"
        "            T.reads(lv[v0_2, v1_2])\n"
        "            T.writes(lv1[v0_2, v1_2])\n"
        "            lv1[v0_2, v1_2] = T.exp(lv[v0_2, v1_2])\n");
    check_k2(s.func);
    assert_true(mt_sched_reverse_compute_at(&s, "exp", row));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_max_subtract_exp(x: T.Buffer((8, 16), \"float32\"), lv1: T.Buffer((8, 16), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    m = T.alloc_buffer((8, 1), \"float32\")\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0 in range(8):\n"
        "        for i1 in range(16):\n"
        "            with T.block(\"max\"):\n"
        "                v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
        "                T.reads(x[v0, v1])\n"
        "                T.writes(m[v0, 0])\n"
        "                with T.init():\n"
        "                    m[v0, 0] = T.float32(\"-inf\")\n"
        "                m[v0, 0] = T.Select(x[v0, v1] > m[v0, 0] or x[v0, v1] != x[v0, v1], x[v0, v1], m[v0, 0])\n"
        "        for i1_1 in range(16):\n"
        "            with T.block(\"subtract\"):\n"
        "                v0_1, v1_1 = T.axis.remap(\"SS\", [i0, i1_1])\n"
        "                T.reads(x[v0_1, v1_1], m[v0_1, 0])\n"
        "                T.writes(lv[v0_1, v1_1])\n"
        "                lv[v0_1, v1_1] = x[v0_1, v1_1] - m[v0_1, 0]\n"
        "        for i1_2 in range(16):\n"
        "            with T.block(\"exp\"):\n"
        "                v0_2, v1_2 = T.axis.remap(\"SS\", [i0, i1_2])\n"
        "                T.reads(lv[v0_2, v1_2])\n"
        "                T.writes(lv1[v0_2, v1_2])\n"
        "                lv1[v0_2, v1_2] = T.exp(lv[v0_2, v1_2])\n");
    check_k2(s.func);
    assert_true(mt_sched_parallel(&s, row));
    check_k2(s.func);

    /* per element, and per tile of a split column loop */
    mt_tfunc *g = kernel(K1);
    mt_sched_init(&s, A, g);
    assert_true(mt_sched_reverse_compute_at(&s, "exp", loop_of(g, "add", 1)));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t = T.alloc_buffer((8, 16), \"float32\")\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(lv[v0, v1])\n"
        "            lv[v0, v1] = a[v0, v1] + b[v0, v1]\n"
        "        with T.block(\"exp\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(lv[v0_1, v1_1])\n"
        "            T.writes(t[v0_1, v1_1])\n"
        "            t[v0_1, v1_1] = T.exp(lv[v0_1, v1_1])\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0_2, v1_2 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "            T.reads(t[v0_2, v1_2], a[v0_2, v1_2])\n"
        "            T.writes(lv1[v0_2, v1_2])\n"
        "            lv1[v0_2, v1_2] = t[v0_2, v1_2] * a[v0_2, v1_2]\n"
        "    for i0_2, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_3, v1_3 = T.axis.remap(\"SR\", [i0_2, i1_2])\n"
        "            T.reads(lv1[v0_3, v1_3])\n"
        "            T.writes(lv2[v0_3])\n"
        "            with T.init():\n"
        "                lv2[v0_3] = 0.0\n"
        "            lv2[v0_3] = lv2[v0_3] + lv1[v0_3, v1_3]\n");
    check_k1(s.func);
    mt_sched_init(&s, A, g);
    mt_tvar *o, *in;
    assert_true(mt_sched_split(&s, loop_of(g, "add", 1), I(4), &o, &in));
    mt_sched s2 = s;
    /* under i0 the two split loops tile the whole row, [0, 4 * 4): exp
     * follows the add's nest with a loop over the 16 columns */
    mt_tvar *add_row = loop_of(g, "add", 0);
    assert_true(mt_sched_reverse_compute_at(&s2, "exp", add_row));
    const char *moved = mt_tstmt_print(A, mt_sched_get_loop(&s2, add_row));
    if (!strstr(moved, "    for i1 in range(16):\n        with T.block(\"exp\"):\n"))
        fail_msg("got:\n%s", moved);
    check_k1(verified(s2.func));
    assert_true(mt_sched_reverse_compute_at(&s, "exp", o));
    ASSERT_TEXT(mt_tstmt_print(A, mt_sched_get_loop(&s, o)),
                "for i1_0 in range(4):\n"
                "    for i1_1 in range(4):\n"
                "        with T.block(\"add\"):\n"
                "            v0 = T.axis.spatial(8, i0)\n"
                "            v1 = T.axis.spatial(16, i1_0 * 4 + i1_1)\n"
                "            T.reads(a[v0, v1], b[v0, v1])\n"
                "            T.writes(lv[v0, v1])\n"
                "            lv[v0, v1] = a[v0, v1] + b[v0, v1]\n"
                "    for i1 in range(4):\n"
                "        with T.block(\"exp\"):\n"
                "            v0_1 = T.axis.spatial(8, i0)\n"
                "            v1_1 = T.axis.spatial(16, i1_0 * 4 + i1)\n"
                "            T.reads(lv[v0_1, v1_1])\n"
                "            T.writes(t[v0_1, v1_1])\n"
                "            t[v0_1, v1_1] = T.exp(lv[v0_1, v1_1])\n");
    check_k1(verified(s.func));

    /* the broadcast: each b element's column of x + t */
    mt_tfunc *h = kernel(K3);
    mt_sched_init(&s, A, h);
    assert_true(mt_sched_reverse_compute_at(&s, "add", loop_of(h, "multiply", 0)));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_multiply_add(b: T.Buffer((16,), \"float32\"), x: T.Buffer((8, 16), \"float32\"), lv: T.Buffer((8, 16), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"broadcast\"})\n"
        "    t = T.alloc_buffer((16,), \"float32\")\n"
        "    for i0 in range(16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0 = T.axis.remap(\"S\", [i0])\n"
        "            T.reads(b[v0])\n"
        "            T.writes(t[v0])\n"
        "            t[v0] = b[v0] * 2.0\n"
        "        for i0_1 in range(8):\n"
        "            with T.block(\"add\"):\n"
        "                v0_1, v1 = T.axis.remap(\"SS\", [i0_1, i0])\n"
        "                T.reads(x[v0_1, v1], t[v1])\n"
        "                T.writes(lv[v0_1, v1])\n"
        "                lv[v0_1, v1] = x[v0_1, v1] + t[v1]\n");
    float **bufs = run(s.func);
    int ix = param(h, "x"), ib = param(h, "b");
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++)
            assert_true(bufs[2][i * 16 + j] == (float)(input(ix, i * 16 + j) + 2 * input(ib, j)));
    free_bufs(bufs, 3);

    /* refusals */
    mt_sched_init(&s, A, f);
    REFUSED(mt_sched_reverse_compute_at(&s, "subtract", loop_of(f, "max", 1)), &s,
        "reverse_compute_at: loop 'i1' binds a reduce variable of block 'max': 'm' is "
        "final only after it");
    REFUSED(mt_sched_reverse_compute_at(&s, "exp", row), &s,
        "reverse_compute_at: block 'exp' reads nothing that is written under loop 'i0'");
    REFUSED(mt_sched_reverse_compute_at(&s, "max", row), &s,
        "reverse_compute_at: block 'max' is already under loop 'i0'");
    REFUSED(mt_sched_reverse_compute_at(&s, "nope", row), &s,
        "reverse_compute_at: no block named 'nope'");
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_parallel(&s, row));
    REFUSED(mt_sched_reverse_compute_at(&s, "subtract", row), &s,
        "reverse_compute_at: loop 'i0' is not serial");
    mt_sched_init(&s, A, g);
    assert_true(mt_sched_split(&s, loop_of(g, "exp", 1), I(4), NULL, NULL));
    REFUSED(mt_sched_reverse_compute_at(&s, "exp", loop_of(g, "add", 0)), &s,
        "reverse_compute_at: block 'exp' reads dim 1 of 'lv' at 'v1', not at an iteration "
        "variable bound to a loop of its own");
    /* the consumer's nest before the producer's; a block between writes x */
    mt_tstmt **it = f->body->stmts;
    mt_tstmt *items[4] = {it[1], it[0], it[2]};
    mt_sched_init(&s, A, with_items(f, items, 3));
    REFUSED(mt_sched_reverse_compute_at(&s, "subtract", row), &s,
        "reverse_compute_at: loop 'i0' does not come before the loop nest of block "
        "'subtract' in the same sequence");
    const mt_tstmt *ex = block_of(f, "exp"), *sb = block_of(f, "subtract");
    mt_tbuffer *px = f->params[param(f, "x")].buf;
    mt_tstmt *w = item_with_block(f, 2, writer(ex, "w", px, F(1.0)));
    mt_tstmt *items2[4] = {it[0], w, it[1], it[2]};
    mt_sched_init(&s, A, with_items(f, items2, 4));
    REFUSED(mt_sched_reverse_compute_at(&s, "subtract", row), &s,
        "reverse_compute_at: block 'w' writes 'x', which block 'subtract' reads, between "
        "them");
    /* ... or one reading lv, which subtract writes */
    w = item_with_block(f, 2, writer(ex, "w", ex->body->buf, mt_te_load(A, sb->body->buf, ex->body->idx, 2)));
    items2[1] = w;
    mt_sched_init(&s, A, with_items(f, items2, 4));
    REFUSED(mt_sched_reverse_compute_at(&s, "subtract", row), &s,
        "reverse_compute_at: block 'w' reads 'lv', which block 'subtract' writes, between "
        "them");
    /* two buffers written under the loop */
    mt_tfunc *k = kernel("def f(a: Tensor((4, 6), \"float32\")):\n"
                         "    t = exp(a)\n"
                         "    u = t + 1.0\n"
                         "    return u * t\n");
    mt_sched_init(&s, A, k);
    assert_true(mt_sched_reverse_compute_at(&s, "add", loop_of(k, "exp", 0)));
    REFUSED(mt_sched_reverse_compute_at(&s, "multiply", loop_of(k, "exp", 0)), &s,
        "reverse_compute_at: block 'multiply' reads 'u' and 't', both written under loop "
        "'i0' (one producer wanted)");
    /* a producer with a predicate */
    const mt_tstmt *mu = block_of(h, "multiply");
    mt_tstmt *c = mt_ts_copy(A, mu);
    c->predicate = bin(TE_LT, V(mu->iters[0].var), I(20));
    mt_sched_init(&s, A, patch(h, "multiply", c));
    REFUSED(mt_sched_reverse_compute_at(&s, "add", loop_of(h, "multiply", 0)), &s,
        "reverse_compute_at: block 'multiply' has a T.where predicate: the region it "
        "writes is not exact");
    TIR_GUARD_END();
}

/* ---- cache_read ------------------------------------------------------------------------- */

static void test_cache_read(void **state) {
    TIR_GUARD();
    mt_tfunc *f = mt_tir_inline_producers(A, kernel(K1));
    mt_sched s;
    mt_sched_init(&s, A, f);
    const char *cb = NULL;
    assert_true(mt_sched_cache_read(&s, "sum", "a", MT_SCOPE_SHARED, &cb));
    assert_string_equal(cb, "a_shared");
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    a_shared = T.alloc_buffer((8, 16), \"float32\", scope=\"shared\")\n"
        "    for ax0, ax1 in T.grid(8, 16):\n"
        "        with T.block(\"a_shared\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
        "            T.reads(a[v0, v1])\n"
        "            T.writes(a_shared[v0, v1])\n"
        "            a_shared[v0, v1] = a[v0, v1]\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SR\", [i0, i1])\n"
        "            T.reads(a_shared[v0_1, v1_1], b[v0_1, v1_1])\n"
        "            T.writes(lv2[v0_1])\n"
        "            with T.init():\n"
        "                lv2[v0_1] = 0.0\n"
        "            lv2[v0_1] = lv2[v0_1] + T.exp(a_shared[v0_1, v1_1] + b[v0_1, v1_1]) * a_shared[v0_1, v1_1]\n");
    check_k1(s.func);
    /* the copy of one row per row */
    mt_sched s2 = s;
    assert_true(mt_sched_compute_at(&s2, "a_shared", loop_of(f, "sum", 0)));
    GOLD(s2.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    a_shared = T.alloc_buffer((8, 16), \"float32\", scope=\"shared\")\n"
        "    for i0 in range(8):\n"
        "        for ax1 in range(16):\n"
        "            with T.block(\"a_shared\"):\n"
        "                v0, v1 = T.axis.remap(\"SS\", [i0, ax1])\n"
        "                T.reads(a[v0, v1])\n"
        "                T.writes(a_shared[v0, v1])\n"
        "                a_shared[v0, v1] = a[v0, v1]\n"
        "        for i1 in range(16):\n"
        "            with T.block(\"sum\"):\n"
        "                v0_1, v1_1 = T.axis.remap(\"SR\", [i0, i1])\n"
        "                T.reads(a_shared[v0_1, v1_1], b[v0_1, v1_1])\n"
        "                T.writes(lv2[v0_1])\n"
        "                with T.init():\n"
        "                    lv2[v0_1] = 0.0\n"
        "                lv2[v0_1] = lv2[v0_1] + T.exp(a_shared[v0_1, v1_1] + b[v0_1, v1_1]) * a_shared[v0_1, v1_1]\n");
    check_k1(s2.func);
    /* a cache of the cache: the names stay unique */
    assert_true(mt_sched_cache_read(&s, "a_shared", "a", MT_SCOPE_LOCAL, &cb));
    assert_string_equal(cb, "a_local");
    assert_true(mt_sched_cache_read(&s, "a_local", "a", MT_SCOPE_LOCAL, &cb));
    assert_string_equal(cb, "a_local_1");
    check_k1(verified(s.func));
    /* an intermediate: the copy goes right after its producer */
    mt_tfunc *g = kernel(K1);
    mt_sched_init(&s, A, g);
    assert_true(mt_sched_cache_read(&s, "multiply", "t", MT_SCOPE_LOCAL, NULL));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t = T.alloc_buffer((8, 16), \"float32\")\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t_local = T.alloc_buffer((8, 16), \"float32\", scope=\"local\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(lv[v0, v1])\n"
        "            lv[v0, v1] = a[v0, v1] + b[v0, v1]\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"exp\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "            T.reads(lv[v0_1, v1_1])\n"
        "            T.writes(t[v0_1, v1_1])\n"
        "            t[v0_1, v1_1] = T.exp(lv[v0_1, v1_1])\n"
        "    for ax0, ax1 in T.grid(8, 16):\n"
        "        with T.block(\"t_local\"):\n"
        "            v0_2, v1_2 = T.axis.remap(\"SS\", [ax0, ax1])\n"
        "            T.reads(t[v0_2, v1_2])\n"
        "            T.writes(t_local[v0_2, v1_2])\n"
        "            t_local[v0_2, v1_2] = t[v0_2, v1_2]\n"
        "    for i0_2, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0_3, v1_3 = T.axis.remap(\"SS\", [i0_2, i1_2])\n"
        "            T.reads(t_local[v0_3, v1_3], a[v0_3, v1_3])\n"
        "            T.writes(lv1[v0_3, v1_3])\n"
        "            lv1[v0_3, v1_3] = t_local[v0_3, v1_3] * a[v0_3, v1_3]\n"
        "    for i0_3, i1_3 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_4, v1_4 = T.axis.remap(\"SR\", [i0_3, i1_3])\n"
        "            T.reads(lv1[v0_4, v1_4])\n"
        "            T.writes(lv2[v0_4])\n"
        "            with T.init():\n"
        "                lv2[v0_4] = 0.0\n"
        "            lv2[v0_4] = lv2[v0_4] + lv1[v0_4, v1_4]\n");
    check_k1(s.func);

    /* refusals */
    mt_sched_init(&s, A, f);
    REFUSED(mt_sched_cache_read(&s, "sum", "zz", MT_SCOPE_LOCAL, NULL), &s,
        "cache_read: block 'sum' does not read a buffer named 'zz'");
    REFUSED(mt_sched_cache_read(&s, "sum", "lv2", MT_SCOPE_LOCAL, NULL), &s,
        "cache_read: block 'sum' writes 'lv2' itself (a copy would not see its updates)");
    REFUSED(mt_sched_cache_read(&s, "nope", "a", MT_SCOPE_LOCAL, NULL), &s,
        "cache_read: no block named 'nope'");
    mt_tfunc *h = kernel(K2);
    mt_sched_init(&s, A, h);
    assert_true(mt_sched_compute_at(&s, "max", loop_of(h, "subtract", 0)));
    REFUSED(mt_sched_cache_read(&s, "subtract", "m", MT_SCOPE_LOCAL, NULL), &s,
        "cache_read: block 'max' writes 'm' in the same loop nest as block 'subtract' (a "
        "copy made before it would not hold what it reads)");
    mt_tstmt **it = g->body->stmts;
    mt_tstmt *items[4] = {it[0], it[2], it[1], it[3]};
    mt_sched_init(&s, A, with_items(g, items, 4));
    REFUSED(mt_sched_cache_read(&s, "multiply", "t", MT_SCOPE_LOCAL, NULL), &s,
        "cache_read: block 'exp' writes 't' after block 'multiply' (a copy made before it "
        "would not hold what it reads)");
    TIR_GUARD_END();
}

/* ---- cache_write (a copy block) ------------------------------------------------------------ */

static void test_cache_write_copy(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K1);
    mt_sched s;
    mt_sched_init(&s, A, f);
    const char *cb = NULL;
    assert_true(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, &cb));
    assert_string_equal(cb, "t_local");
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t = T.alloc_buffer((8, 16), \"float32\")\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t_local = T.alloc_buffer((8, 16), \"float32\", scope=\"local\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(lv[v0, v1])\n"
        "            lv[v0, v1] = a[v0, v1] + b[v0, v1]\n"
        "    for i0_1, i1_1 in T.grid(8, 16):\n"
        "        with T.block(\"exp\"):\n"
        "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "            T.reads(lv[v0_1, v1_1])\n"
        "            T.writes(t_local[v0_1, v1_1])\n"
        "            t_local[v0_1, v1_1] = T.exp(lv[v0_1, v1_1])\n"
        "    for ax0, ax1 in T.grid(8, 16):\n"
        "        with T.block(\"t_local\"):\n"
        "            v0_2, v1_2 = T.axis.remap(\"SS\", [ax0, ax1])\n"
        "            T.reads(t_local[v0_2, v1_2])\n"
        "            T.writes(t[v0_2, v1_2])\n"
        "            t[v0_2, v1_2] = t_local[v0_2, v1_2]\n"
        "    for i0_2, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0_3, v1_3 = T.axis.remap(\"SS\", [i0_2, i1_2])\n"
        "            T.reads(t[v0_3, v1_3], a[v0_3, v1_3])\n"
        "            T.writes(lv1[v0_3, v1_3])\n"
        "            lv1[v0_3, v1_3] = t[v0_3, v1_3] * a[v0_3, v1_3]\n"
        "    for i0_3, i1_3 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_4, v1_4 = T.axis.remap(\"SR\", [i0_3, i1_3])\n"
        "            T.reads(lv1[v0_4, v1_4])\n"
        "            T.writes(lv2[v0_4])\n"
        "            with T.init():\n"
        "                lv2[v0_4] = 0.0\n"
        "            lv2[v0_4] = lv2[v0_4] + lv1[v0_4, v1_4]\n");
    check_k1(s.func);
    /* the copy per row, under exp's row loop */
    assert_true(mt_sched_reverse_compute_at(&s, "t_local", loop_of(f, "exp", 0)));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
        "    lv = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t = T.alloc_buffer((8, 16), \"float32\")\n"
        "    lv1 = T.alloc_buffer((8, 16), \"float32\")\n"
        "    t_local = T.alloc_buffer((8, 16), \"float32\", scope=\"local\")\n"
        "    for i0, i1 in T.grid(8, 16):\n"
        "        with T.block(\"add\"):\n"
        "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
        "            T.reads(a[v0, v1], b[v0, v1])\n"
        "            T.writes(lv[v0, v1])\n"
        "            lv[v0, v1] = a[v0, v1] + b[v0, v1]\n"
        "    for i0_1 in range(8):\n"
        "        for i1_1 in range(16):\n"
        "            with T.block(\"exp\"):\n"
        "                v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
        "                T.reads(lv[v0_1, v1_1])\n"
        "                T.writes(t_local[v0_1, v1_1])\n"
        "                t_local[v0_1, v1_1] = T.exp(lv[v0_1, v1_1])\n"
        "        for ax1 in range(16):\n"
        "            with T.block(\"t_local\"):\n"
        "                v0_2, v1_2 = T.axis.remap(\"SS\", [i0_1, ax1])\n"
        "                T.reads(t_local[v0_2, v1_2])\n"
        "                T.writes(t[v0_2, v1_2])\n"
        "                t[v0_2, v1_2] = t_local[v0_2, v1_2]\n"
        "    for i0_2, i1_2 in T.grid(8, 16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0_3, v1_3 = T.axis.remap(\"SS\", [i0_2, i1_2])\n"
        "            T.reads(t[v0_3, v1_3], a[v0_3, v1_3])\n"
        "            T.writes(lv1[v0_3, v1_3])\n"
        "            lv1[v0_3, v1_3] = t[v0_3, v1_3] * a[v0_3, v1_3]\n"
        "    for i0_3, i1_3 in T.grid(8, 16):\n"
        "        with T.block(\"sum\"):\n"
        "            v0_4, v1_4 = T.axis.remap(\"SR\", [i0_3, i1_3])\n"
        "            T.reads(lv1[v0_4, v1_4])\n"
        "            T.writes(lv2[v0_4])\n"
        "            with T.init():\n"
        "                lv2[v0_4] = 0.0\n"
        "            lv2[v0_4] = lv2[v0_4] + lv1[v0_4, v1_4]\n");
    check_k1(s.func);
    /* the output */
    mt_tfunc *h = kernel(K3);
    mt_sched_init(&s, A, h);
    assert_true(mt_sched_cache_write(&s, "add", MT_SCOPE_GLOBAL, &cb));
    assert_string_equal(cb, "lv_global");
    assert_true(mt_sched_reverse_compute_at(&s, cb, loop_of(h, "add", 0)));
    GOLD(s.func,
        "@T.prim_func\n"
        "def fused_multiply_add(b: T.Buffer((16,), \"float32\"), x: T.Buffer((8, 16), \"float32\"), lv: T.Buffer((8, 16), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"broadcast\"})\n"
        "    t = T.alloc_buffer((16,), \"float32\")\n"
        "    lv_global = T.alloc_buffer((8, 16), \"float32\")\n"
        "    for i0 in range(16):\n"
        "        with T.block(\"multiply\"):\n"
        "            v0 = T.axis.remap(\"S\", [i0])\n"
        "            T.reads(b[v0])\n"
        "            T.writes(t[v0])\n"
        "            t[v0] = b[v0] * 2.0\n"
        "    for i0_1 in range(8):\n"
        "        for i1 in range(16):\n"
        "            with T.block(\"add\"):\n"
        "                v0_1, v1 = T.axis.remap(\"SS\", [i0_1, i1])\n"
        "                T.reads(x[v0_1, v1], t[v1])\n"
        "                T.writes(lv_global[v0_1, v1])\n"
        "                lv_global[v0_1, v1] = x[v0_1, v1] + t[v1]\n"
        "        for ax1 in range(16):\n"
        "            with T.block(\"lv_global\"):\n"
        "                v0_2, v1_1 = T.axis.remap(\"SS\", [i0_1, ax1])\n"
        "                T.reads(lv_global[v0_2, v1_1])\n"
        "                T.writes(lv[v0_2, v1_1])\n"
        "                lv[v0_2, v1_1] = lv_global[v0_2, v1_1]\n");
    float **bufs = run(s.func);
    int ix = param(h, "x"), ib = param(h, "b");
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++)
            assert_true(bufs[2][i * 16 + j] == (float)(input(ix, i * 16 + j) + 2 * input(ib, j)));
    free_bufs(bufs, 3);

    /* refusals */
    const mt_tstmt *ex = block_of(f, "exp"), *ad = block_of(f, "add");
    mt_tbuffer *t = ex->body->buf;
    mt_tstmt *c = mt_ts_copy(A, ex);
    c->predicate = bin(TE_LT, V(ex->iters[1].var), I(8));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: block 'exp' has a T.where predicate");
    c = mt_ts_copy(A, ex);
    c->init = ex->body;
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: block 'exp' has an init");
    c = mt_ts_copy(A, ex);
    c->body = seq2(ex->body, ex->body);
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: the body of block 'exp' is not a single store");
    mt_texpr *sw[2] = {ex->body->idx[1], ex->body->idx[0]};
    c = mt_ts_copy(A, ex);
    c->body = mt_ts_store(A, t, sw, 2, ex->body->value);
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: block 'exp' does not write all of 't' (its index is not its "
        "iteration variables in some order over the whole buffer)");
    c = writer(ex, "exp", t, add(ex->body->value, mt_te_load(A, t, ex->body->idx, 2)));
    mt_sched_init(&s, A, patch(f, "exp", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: block 'exp' reads 't', the buffer it writes");
    c = writer(ad, "add", t, ad->body->value);
    mt_sched_init(&s, A, patch(f, "add", c));
    REFUSED(mt_sched_cache_write(&s, "exp", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: 't' has another writer, block 'add'");
    mt_sched_init(&s, A, h);
    assert_true(mt_sched_compute_at(&s, "multiply", loop_of(h, "add", 0)));
    REFUSED(mt_sched_cache_write(&s, "multiply", MT_SCOPE_LOCAL, NULL), &s,
        "cache_write: block 'add' reads 't' in the same loop nest as block 'multiply' "
        "(before the copy would write it)");
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_reverse_compute_inline),
        TIR_TEST(test_reverse_compute_at),
        TIR_TEST(test_cache_read),
        TIR_TEST(test_cache_write_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
