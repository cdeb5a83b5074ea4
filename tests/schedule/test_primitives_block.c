/*
 * test_primitives_block.c -- compute_inline, compute_at, cache_write and
 * decompose_reduction (src/schedule/primitives_block.c) on the loop
 * functions of real kernels: each DSL source goes through the compiler
 * (mt_pipeline_run) and the test takes the fused block-form function before
 * inline_producers, so the blocks and intermediates are the compiler's own.
 *
 * Per primitive: the printed result (golden text), the refusals with their
 * exact reasons (s.func untouched), and numerics: the scheduled function is
 * lowered (lower_blocks, flatten_buffers, simplify, remove_unit_loops,
 * simplify), compiled and run on fixed inputs against a plain double
 * reference, within a stated tolerance.
 */
#include "blk_test.h"

static void test_compute_inline(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K1);
    check_k1(f);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_compute_inline(&s, "add"));
    assert_true(mt_sched_compute_inline(&s, "exp"));
    assert_true(mt_sched_compute_inline(&s, "multiply"));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i0, i1 in T.grid(8, 16):\n"
                "        with T.block(\"sum\"):\n"
                "            v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "            T.reads(a[v0, v1], b[v0, v1])\n"
                "            T.writes(lv2[v0])\n"
                "            with T.init():\n"
                "                lv2[v0] = 0.0\n"
                "            lv2[v0] = lv2[v0] + T.exp(a[v0, v1] + b[v0, v1]) * a[v0, v1]\n");
    check_k1(s.func);
    /* the same as the whole-function pass */
    ASSERT_TEXT(mt_tfunc_print(A, s.func), mt_tfunc_print(A, mt_tir_inline_producers(A, f)));

    /* refusals */
    mt_sched_init(&s, A, f);
    assert_false(mt_sched_compute_inline(&s, "sum"));
    assert_string_equal(s.error, "compute_inline: block 'sum' has reduce variable 'v1'");
    assert_false(mt_sched_compute_inline(&s, "nope"));
    assert_string_equal(s.error, "compute_inline: no block named 'nope'");
    assert_true(s.func == f);
    /* hand-made variants of the add block */
    const mt_tstmt *ad = block_of(f, "add");
    mt_tstmt *c = mt_ts_copy(A, ad);
    c->predicate = bin(TE_LT, V(ad->iters[1].var), I(8));
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: block 'add' has a T.where predicate");
    c = mt_ts_copy(A, ad);
    c->body = seq2(ad->body, ad->body);
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: the body of block 'add' is not a single store");
    c = mt_ts_copy(A, ad);
    mt_texpr *sw[2] = {ad->body->idx[1], ad->body->idx[0]};
    c->body = mt_ts_store(A, ad->body->buf, sw, 2, ad->body->value);
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: the indices of the store in block 'add' are not "
                                 "exactly its iteration variables");
    c = mt_ts_copy(A, ad);
    c->body = mt_ts_store(A, ad->body->buf, ad->body->idx, 2,
                          add(ad->body->value, mt_te_load(A, ad->body->buf, ad->body->idx, 2)));
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: block 'add' reads 'lv', the buffer it writes");
    c = mt_ts_copy(A, ad);
    c->body = mt_ts_store(A, ad->body->buf, ad->body->idx, 2,
                          add(ad->body->value, mt_te_cast(A, MT_FLOAT32, V(loop_of(f, "add", 0)))));
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: the value of block 'add' uses 'i0', which is not "
                                 "one of its iteration variables");
    /* the exp block writes lv too: a second writer of add's buffer */
    const mt_tstmt *ex = block_of(f, "exp");
    c = mt_ts_copy(A, ex);
    c->body = mt_ts_store(A, ad->body->buf, ex->body->idx, 2, ex->body->value);
    mt_sched_init(&s, A, patch(f, "exp", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: 'lv' has another writer, block 'exp'");
    /* multiply reads t; reading it in add too comes before exp writes it */
    c = mt_ts_copy(A, ad);
    c->body = mt_ts_store(A, ad->body->buf, ad->body->idx, 2,
                          add(ad->body->value, mt_te_load(A, ex->body->buf, ad->body->idx, 2)));
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "exp"));
    assert_string_equal(s.error, "compute_inline: block 'add' reads 't' before block 'exp' writes it");
    /* split: v1 is bound to i1_0 * 4 + i1_1, not a loop variable */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_split(&s, loop_of(f, "add", 1), I(4), NULL, NULL));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: iteration variable 'v1' of block 'add' is not "
                                 "bound to a loop variable");
    /* the output */
    mt_sched_init(&s, A, kernel("def f(a: Tensor((4,), \"float32\")):\n    return exp(a)\n"));
    assert_false(mt_sched_compute_inline(&s, "exp"));
    assert_string_equal(s.error, "compute_inline: block 'exp' writes 'lv', which the function does "
                                 "not allocate (a parameter or output)");
    /* two blocks named "add" */
    mt_sched_init(&s, A, kernel("def f(a: Tensor((4,), \"float32\")):\n    return a + a + a\n"));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: 2 blocks are named 'add'");
    c = mt_ts_copy(A, ad);
    c->init = ad->body;
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: block 'add' has an init");
    c = mt_ts_copy(A, ad);
    c->allocs = &ex->body->buf;
    c->nallocs = 1;
    mt_sched_init(&s, A, patch(f, "add", c));
    assert_false(mt_sched_compute_inline(&s, "add"));
    assert_string_equal(s.error, "compute_inline: block 'add' allocates buffers");
    TIR_GUARD_END();
}

static void test_cache_write(void **state) {
    TIR_GUARD();
    mt_tfunc *f = mt_tir_inline_producers(A, kernel(K1));
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_false(mt_sched_cache_write(&s, "sum", MT_SCOPE_SHARED, NULL));
    assert_string_equal(s.error, "cache_write: block 'sum' is a reduction: only scope local (a "
                                 "scalar accumulator) is supported for it");
    assert_true(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i0 in range(8):\n"
                "        lv2_local = T.alloc_buffer((), \"float32\", scope=\"local\")\n"
                "        for i1 in range(16):\n"
                "            with T.block(\"sum\"):\n"
                "                v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "                T.reads(a[v0, v1], b[v0, v1])\n"
                "                T.writes(lv2_local[()])\n"
                "                with T.init():\n"
                "                    lv2_local[()] = 0.0\n"
                "                lv2_local[()] = lv2_local[()] + T.exp(a[v0, v1] + b[v0, v1]) * a[v0, v1]\n"
                "        with T.block(\"sum_write_back\"):\n"
                "            v0_1 = T.axis.remap(\"S\", [i0])\n"
                "            T.reads(lv2_local[()])\n"
                "            T.writes(lv2[v0_1])\n"
                "            lv2[v0_1] = lv2_local[()]\n");
    check_k1(s.func);
    /* and parallel over rows: each row has its own accumulator */
    assert_true(mt_sched_parallel(&s, loop_of(s.func, "sum", 0)));
    check_k1(s.func);

    /* refusals */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_reorder(&s, loop_of(f, "sum", 0), loop_of(f, "sum", 1)));
    mt_sched s2 = s;
    assert_false(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_string_equal(s.error, "cache_write: the reduce loops of block 'sum' are not innermost "
                                 "under its spatial loops (loop 'i1')");
    assert_true(s.func == s2.func);
    const mt_tstmt *sum = block_of(f, "sum");
    mt_tstmt *c = mt_ts_copy(A, sum);
    c->init = NULL; /* rfactor's partial block: the accumulator starts from lv2's element */
    mt_sched_init(&s, A, patch(f, "sum", c));
    assert_true(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    const char *p = printed(s.func);
    assert_non_null(strstr(p, "T.reads(a[v0, v1], b[v0, v1], lv2[v0])\n"
                              "                T.writes(lv2_local[()])\n"
                              "                with T.init():\n"
                              "                    lv2_local[()] = lv2[v0]\n"));
    assert_non_null(strstr(p, "lv2[v0_1] = lv2_local[()]"));
    c = mt_ts_copy(A, sum);
    mt_texpr *other = I(0);
    c->body = mt_ts_store(A, sum->body->buf, sum->body->idx, 1,
                          add(sum->body->value, mt_te_load(A, sum->body->buf, &other, 1)));
    mt_sched_init(&s, A, patch(f, "sum", c));
    assert_false(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_string_equal(s.error, "cache_write: block 'sum' reads 'lv2' at another index than it writes");
    c = mt_ts_copy(A, sum);
    mt_texpr *red = V(sum->iters[1].var);
    c->body = mt_ts_store(A, sum->body->buf, &red, 1, sum->body->value);
    mt_sched_init(&s, A, patch(f, "sum", c));
    assert_false(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_string_equal(s.error, "cache_write: block 'sum' does not update one element of one "
                                 "buffer with one store and its init");
    c->init = mt_ts_store(A, sum->init->buf, &red, 1, sum->init->value);
    mt_sched_init(&s, A, patch(f, "sum", c));
    assert_false(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_string_equal(s.error, "cache_write: the index of 'lv2' in block 'sum' uses reduce "
                                 "variable 'v1'");
    TIR_GUARD_END();
}

static void test_decompose_reduction(void **state) {
    TIR_GUARD();
    mt_tfunc *f = mt_tir_inline_producers(A, kernel(K1));
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_decompose_reduction(&s, "sum", loop_of(f, "sum", 1)));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i0 in range(8):\n"
                "        with T.block(\"sum_init\"):\n"
                "            v0 = T.axis.remap(\"S\", [i0])\n"
                "            T.reads()\n"
                "            T.writes(lv2[v0])\n"
                "            lv2[v0] = 0.0\n"
                "        for i1 in range(16):\n"
                "            with T.block(\"sum_update\"):\n"
                "                v0_1, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "                T.reads(a[v0_1, v1], b[v0_1, v1])\n"
                "                T.writes(lv2[v0_1])\n"
                "                lv2[v0_1] = lv2[v0_1] + T.exp(a[v0_1, v1] + b[v0_1, v1]) * a[v0_1, v1]\n");
    check_k1(s.func);
    /* before the outer loop: the init gets its own copy of the row loop */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_decompose_reduction(&s, "sum", loop_of(f, "sum", 0)));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i0_init in range(8):\n"
                "        with T.block(\"sum_init\"):\n"
                "            v0 = T.axis.remap(\"S\", [i0_init])\n"
                "            T.reads()\n"
                "            T.writes(lv2[v0])\n"
                "            lv2[v0] = 0.0\n"
                "    for i0, i1 in T.grid(8, 16):\n"
                "        with T.block(\"sum_update\"):\n"
                "            v0_1, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "            T.reads(a[v0_1, v1], b[v0_1, v1])\n"
                "            T.writes(lv2[v0_1])\n"
                "            lv2[v0_1] = lv2[v0_1] + T.exp(a[v0_1, v1] + b[v0_1, v1]) * a[v0_1, v1]\n");
    check_k1(s.func);
    /* reordered (reduce loop outside): the init goes before the reduce
     * loop, or before the row loop inside it at its first iteration */
    mt_sched_init(&s, A, f);
    mt_tvar *i0 = loop_of(f, "sum", 0), *i1 = loop_of(f, "sum", 1);
    assert_true(mt_sched_reorder(&s, i0, i1));
    mt_tfunc *reordered = s.func;
    assert_true(mt_sched_decompose_reduction(&s, "sum", i0));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_add_exp_multiply_sum(a: T.Buffer((8, 16), \"float32\"), b: T.Buffer((8, 16), \"float32\"), lv2: T.Buffer((8,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i1 in range(16):\n"
                "        if i1 == 0:\n"
                "            for i0_init in range(8):\n"
                "                with T.block(\"sum_init\"):\n"
                "                    v0 = T.axis.remap(\"S\", [i0_init])\n"
                "                    T.reads()\n"
                "                    T.writes(lv2[v0])\n"
                "                    lv2[v0] = 0.0\n"
                "        for i0 in range(8):\n"
                "            with T.block(\"sum_update\"):\n"
                "                v0_1, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "                T.reads(a[v0_1, v1], b[v0_1, v1])\n"
                "                T.writes(lv2[v0_1])\n"
                "                lv2[v0_1] = lv2[v0_1] + T.exp(a[v0_1, v1] + b[v0_1, v1]) * a[v0_1, v1]\n");
    check_k1(s.func);
    mt_sched_init(&s, A, reordered);
    assert_true(mt_sched_decompose_reduction(&s, "sum", i1));
    check_k1(s.func);

    /* refusals */
    mt_sched_init(&s, A, mt_tir_inline_producers(A, kernel(K1)));
    mt_tfunc *g = kernel(K1);
    mt_sched_init(&s, A, g);
    assert_false(mt_sched_decompose_reduction(&s, "exp", loop_of(g, "exp", 0)));
    assert_string_equal(s.error, "decompose_reduction: block 'exp' has no init");
    const mt_tstmt *ex = block_of(g, "exp");
    mt_tstmt *ce = mt_ts_copy(A, ex);
    ce->init = ex->body;
    mt_sched_init(&s, A, patch(g, "exp", ce));
    assert_false(mt_sched_decompose_reduction(&s, "exp", loop_of(g, "exp", 0)));
    assert_string_equal(s.error, "decompose_reduction: block 'exp' is not a reduction (no reduce "
                                 "variable)");
    /* after cache_write the accumulator's allocation lies between */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_false(mt_sched_decompose_reduction(&s, "sum", loop_of(f, "sum", 0)));
    assert_string_equal(s.error, "decompose_reduction: a statement other than a loop lies between "
                                 "loop 'i0' and block 'sum'");
    assert_true(mt_sched_decompose_reduction(&s, "sum", loop_of(f, "sum", 1)));
    check_k1(s.func);
    mt_sched_init(&s, A, g);
    assert_false(mt_sched_decompose_reduction(&s, "sum", loop_of(g, "exp", 0)));
    assert_string_equal(s.error, "decompose_reduction: loop 'i0' is not an ancestor of block 'sum'");
    const mt_tstmt *sum = block_of(f, "sum");
    mt_tstmt *c = mt_ts_copy(A, sum);
    c->init = mt_ts_store(A, sum->init->buf, sum->init->idx, 1,
                          mt_te_cast(A, MT_FLOAT32, V(sum->iters[1].var)));
    mt_sched_init(&s, A, patch(f, "sum", c));
    assert_false(mt_sched_decompose_reduction(&s, "sum", i0));
    assert_string_equal(s.error, "decompose_reduction: the init of block 'sum' uses reduce variable 'v1'");
    mt_sched_init(&s, A, f);
    mt_tvar *fused;
    assert_true(mt_sched_fuse(&s, i0, i1, &fused));
    assert_false(mt_sched_decompose_reduction(&s, "sum", fused));
    assert_string_equal(s.error, "decompose_reduction: loop 'i0_i1_fused' binds both spatial and "
                                 "reduce variables of block 'sum'");
    TIR_GUARD_END();
}

static void test_compute_at(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K2);
    check_k2(f);
    mt_sched s;
    mt_sched_init(&s, A, f);
    mt_tvar *row = loop_of(f, "subtract", 0);
    assert_true(mt_sched_compute_at(&s, "max", row));
    ASSERT_TEXT(printed(s.func),
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
    /* max is now written inside the row loop around subtract: inlining
     * subtract would read m after later rows rewrote... it refuses */
    mt_sched s2 = s;
    assert_false(mt_sched_compute_inline(&s2, "subtract"));
    assert_string_equal(s2.error, "compute_inline: block 'max' writes 'm', which block 'subtract' "
                                  "reads, after it or in a loop around it");
    /* inline first, then compute_at into exp's row loop; then parallel rows */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_compute_inline(&s, "subtract"));
    assert_true(mt_sched_compute_at(&s, "max", loop_of(f, "exp", 0)));
    check_k2(s.func);
    assert_true(mt_sched_parallel(&s, loop_of(f, "exp", 0)));
    check_k2(s.func);
    /* under the inner loop: one max per element (redundant, still exact) */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_compute_at(&s, "max", loop_of(f, "subtract", 1)));
    check_k2(s.func);

    /* refusals */
    mt_sched_init(&s, A, f);
    assert_false(mt_sched_compute_at(&s, "max", loop_of(f, "exp", 0)));
    assert_string_equal(s.error, "compute_at: loop 'i0' is not an ancestor of block 'subtract'");
    assert_false(mt_sched_compute_at(&s, "exp", loop_of(f, "subtract", 0)));
    assert_string_equal(s.error, "compute_at: block 'exp' writes 'lv1', which the function does not "
                                 "allocate (a parameter or output)");
    assert_false(mt_sched_compute_at(&s, "max", loop_of(f, "max", 0)));
    assert_string_equal(s.error, "compute_at: block 'max' is already under loop 'i0'");
    assert_false(mt_sched_compute_at(&s, "subtract", loop_of(f, "max", 0)));
    assert_string_equal(s.error, "compute_at: loop 'i0' is not an ancestor of block 'exp'");
    assert_true(s.func == f);
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_parallel(&s, row));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: loop 'i0' is not serial");
    /* a consumer that reads m at two indices, the second's region not of
     * a form compute_at derives (the hull of several: test_user_schedule's
     * test_compute_at_stencil) */
    const mt_tstmt *sb = block_of(f, "subtract");
    mt_tstmt *c = mt_ts_copy(A, sb);
    mt_texpr *mi[2] = {bin(TE_FLOORDIV, V(sb->iters[1].var), I(2)), I(0)};
    c->body = mt_ts_store(A, sb->body->buf, sb->body->idx, 2,
                          sub(sb->body->value, mt_te_load(A, block_of(f, "max")->body->buf, mi, 2)));
    mt_sched_init(&s, A, patch(f, "subtract", c));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_non_null(strstr(s.error, "compute_at: cannot derive the region of 'm' that loop 'i0' needs from index "
                                    "'i1 // 2' of dim 0"));
    /* reading m[v0, v1 % 1]: the constant column is not what the loop needs */
    const mt_tstmt *mx = block_of(f, "max");
    mt_texpr *mi2[2] = {V(sb->iters[0].var), bin(TE_FLOORMOD, V(sb->iters[1].var), I(1))};
    c = mt_ts_copy(A, sb);
    c->body = mt_ts_store(A, sb->body->buf, sb->body->idx, 2,
                          sub(mt_te_load(A, sb->body->value->a->buf, sb->body->idx, 2),
                              mt_te_load(A, mx->body->buf, mi2, 2)));
    mt_tfunc *g = patch(f, "subtract", c);
    mt_sched_init(&s, A, g);
    assert_false(mt_sched_compute_at(&s, "max", loop_of(g, "subtract", 1)));
    assert_string_equal(s.error, "compute_at: block 'max' writes dim 1 of 'm' at 0 only, and loop "
                                 "'i1' needs more");
    /* no reader; a second reader; a second store */
    c = mt_ts_copy(A, sb);
    c->body = mt_ts_store(A, sb->body->buf, sb->body->idx, 2, sb->body->value->a);
    mt_sched_init(&s, A, patch(f, "subtract", c));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: no block reads 'm'");
    const mt_tstmt *ex = block_of(f, "exp");
    c = mt_ts_copy(A, ex);
    mt_texpr *mi3[2] = {ex->body->idx[0], I(0)};
    c->body = mt_ts_store(A, ex->body->buf, ex->body->idx, 2,
                          add(ex->body->value, mt_te_load(A, mx->body->buf, mi3, 2)));
    mt_sched_init(&s, A, patch(f, "exp", c));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: loop 'i0' is not an ancestor of block 'exp', which touches "
                                 "'m' too");
    c = mt_ts_copy(A, mx);
    c->body = seq2(mx->body, mx->body);
    mt_sched_init(&s, A, patch(f, "max", c));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: block 'max' does not write one buffer with one store");
    /* split rows of max: v0 = i0_0 * 4 + i0_1 is not a loop of its own */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_split(&s, loop_of(f, "max", 0), I(4), NULL, NULL));
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: block 'max' writes dim 0 of 'm' at 'v0', not at an "
                                 "iteration variable bound to a loop of its own");
    /* the consumer's nest first: the producer does not come before it */
    mt_tfunc *h = MT_NEW(A, mt_tfunc);
    *h = *f;
    mt_tstmt *items[3] = {f->body->stmts[1], f->body->stmts[0], f->body->stmts[2]};
    h->body = mt_ts_seq(A, items, 3);
    mt_sched_init(&s, A, h);
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: loop 'i0' does not come after the loop nest of block "
                                 "'max' in the same sequence");
    /* a block between them writes x, which max reads */
    mt_tstmt *w = mt_ts_copy(A, ex);
    w->name = "w";
    w->body = mt_ts_store(A, sb->body->value->a->buf, ex->body->idx, 2, F(1.0));
    mt_tstmt *wl = mt_ts_copy(A, f->body->stmts[2]);
    wl->body = mt_ts_copy(A, wl->body);
    wl->body->body = w;
    mt_tstmt *items2[4] = {f->body->stmts[0], wl, f->body->stmts[1], f->body->stmts[2]};
    h->body = mt_ts_seq(A, items2, 4);
    mt_sched_init(&s, A, h);
    assert_false(mt_sched_compute_at(&s, "max", row));
    assert_string_equal(s.error, "compute_at: block 'w' writes 'x', which block 'max' reads, between "
                                 "them");
    TIR_GUARD_END();
}

static void test_compute_at_range(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K3);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_compute_at(&s, "multiply", loop_of(f, "add", 0)));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def fused_multiply_add(b: T.Buffer((16,), \"float32\"), x: T.Buffer((8, 16), \"float32\"), lv: T.Buffer((8, 16), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"broadcast\"})\n"
                "    t = T.alloc_buffer((16,), \"float32\")\n"
                "    for i0 in range(8):\n"
                "        for i0_1 in range(16):\n"
                "            with T.block(\"multiply\"):\n"
                "                v0 = T.axis.remap(\"S\", [i0_1])\n"
                "                T.reads(b[v0])\n"
                "                T.writes(t[v0])\n"
                "                t[v0] = b[v0] * 2.0\n"
                "        for i1 in range(16):\n"
                "            with T.block(\"add\"):\n"
                "                v0_1, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "                T.reads(x[v0_1, v1], t[v1])\n"
                "                T.writes(lv[v0_1, v1])\n"
                "                lv[v0_1, v1] = x[v0_1, v1] + t[v1]\n");
    /* x + 2 b is exact in float for these inputs (eighths) */
    float **bufs = run(s.func);
    int ix = param(f, "x"), ib = param(f, "b");
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++)
            assert_true(bufs[2][i * 16 + j] == (float)(input(ix, i * 16 + j) + 2 * input(ib, j)));
    free_bufs(bufs, 3);
    /* every row iteration now writes all of t: rows cannot run in parallel */
    mt_sched s3 = s;
    assert_false(mt_sched_parallel(&s3, loop_of(f, "add", 0)));
    assert_string_equal(s3.error, "parallel: no spatial variable of block 'multiply' depends on "
                                  "loop 'i0': its iterations write the same elements");
    /* split the consumer's column loop: under i1_0 the region is
     * [i1_0 * 4, i1_0 * 4 + 4); under the row loop the two split loops
     * tile [0, 16), the whole of t */
    mt_sched_init(&s, A, f);
    mt_tvar *o, *in;
    assert_true(mt_sched_split(&s, loop_of(f, "add", 1), I(4), &o, &in));
    mt_sched s2 = s;
    assert_true(mt_sched_compute_at(&s2, "multiply", loop_of(f, "add", 0)));
    const char *row = mt_tstmt_print(A, mt_sched_get_loop(&s2, loop_of(f, "add", 0)));
    if (!strstr(row, "    for i0_1 in range(16):\n        with T.block(\"multiply\"):\n"))
        fail_msg("got:\n%s", row);
    assert_true(mt_sched_compute_at(&s, "multiply", o));
    ASSERT_TEXT(mt_tstmt_print(A, mt_sched_get_loop(&s, o)),
                "for i1_0 in range(4):\n"
                "    for i0 in range(4):\n"
                "        with T.block(\"multiply\"):\n"
                "            v0 = T.axis.spatial(16, i1_0 * 4 + i0)\n"
                "            T.reads(b[v0])\n"
                "            T.writes(t[v0])\n"
                "            t[v0] = b[v0] * 2.0\n"
                "    for i1_1 in range(4):\n"
                "        with T.block(\"add\"):\n"
                "            v0_1 = T.axis.spatial(8, i0_1)\n"
                "            v1 = T.axis.spatial(16, i1_0 * 4 + i1_1)\n"
                "            T.reads(x[v0_1, v1], t[v1])\n"
                "            T.writes(lv[v0_1, v1])\n"
                "            lv[v0_1, v1] = x[v0_1, v1] + t[v1]\n");
    bufs = run(s.func);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++)
            assert_true(bufs[2][i * 16 + j] == (float)(input(ix, i * 16 + j) + 2 * input(ib, j)));
    free_bufs(bufs, 3);
    TIR_GUARD_END();
}

/* ---- kernel 4: reductions over every axis and over (0, 2) ------------------------ */

static const char K4[] = "def f(x: Tensor((6, 10), \"float32\")):\n    return sum(x)\n";
static const char K5[] = "def f(x: Tensor((4, 6, 10), \"float32\")):\n    return max(x, axis=(0, 2))\n";

/* sum of the 60 inputs: partials (per chunk and lane) summed in order, then
 * in order of (chunk, lane); within the bound of any summation order,
 * 59 u sum |x| (tolerance 61 u). */
static void check_k4(mt_tfunc *f) {
    float **bufs = run(f);
    double ref = 0, scale = 0;
    for (int e = 0; e < 60; e++) ref += input(0, e), scale += fabs(input(0, e));
    check(bufs[f->nparams - 1], &ref, &scale, 1, 61.0 / (1 << 24));
    free_bufs(bufs, f->nparams);
}

/* max over axes 0 and 2: exact. */
static void check_k5(mt_tfunc *f) {
    float **bufs = run(f);
    double ref[6], scale[6];
    for (int j = 0; j < 6; j++) {
        ref[j] = -INFINITY, scale[j] = 1;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 10; k++) ref[j] = fmax(ref[j], input(0, (i * 6 + j) * 10 + k));
    }
    check(bufs[f->nparams - 1], ref, scale, 6, 0);
    free_bufs(bufs, f->nparams);
}

/* (The printed results of rfactor parse back: the partial group index
 * (vc * 3 + vq) * 8 + vl of a clamped tail exceeds x's dims over its block
 * variables' declared domains, but the loops never reach it, and from_ast
 * refuses only an index that is provably out of bounds.) */
static void test_rfactor(void **state) {
    TIR_GUARD();
    mt_tfunc *f = kernel(K4);
    check_k4(f);
    mt_sched s;
    mt_sched_init(&s, A, f);
    /* the 60 elements in lanes of 8 (a tail of 4), the 8 groups in 3 chunks */
    mt_tvar *fu, *fo, *fi, *c, *rf[2];
    assert_true(mt_sched_fuse(&s, loop_of(f, "sum", 0), loop_of(f, "sum", 1), &fu));
    assert_true(mt_sched_split(&s, fu, I(8), &fo, &fi));
    assert_true(mt_sched_split(&s, fo, I(3), &c, NULL));
    rf[0] = c, rf[1] = fi;
    assert_true(mt_sched_rfactor(&s, "sum", rf, 2));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def sum(x: T.Buffer((6, 10), \"float32\"), lv: T.Buffer((), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    lv_rf = T.alloc_buffer((3, 8), \"float32\")\n"
                "    for i0_i1_fused_0_0_rf_init, i0_i1_fused_1_rf_init in T.grid(3, 8):\n"
                "        with T.block(\"sum_rf_init\"):\n"
                "            vi0_i1_fused_0_0_rf_init, vi0_i1_fused_1_rf_init = T.axis.remap(\"SS\", [i0_i1_fused_0_0_rf_init, i0_i1_fused_1_rf_init])\n"
                "            T.reads()\n"
                "            T.writes(lv_rf[vi0_i1_fused_0_0_rf_init, vi0_i1_fused_1_rf_init])\n"
                "            lv_rf[vi0_i1_fused_0_0_rf_init, vi0_i1_fused_1_rf_init] = 0.0\n"
                "    for i0_i1_fused_0_0 in range(3):\n"
                "        for i0_i1_fused_0_1 in range(T.min(3, 8 - i0_i1_fused_0_0 * 3)):\n"
                "            for i0_i1_fused_1 in range(T.min(8, 60 - (i0_i1_fused_0_0 * 3 + i0_i1_fused_0_1) * 8)):\n"
                "                with T.block(\"sum_rf\"):\n"
                "                    vi0_i1_fused_0_0 = T.axis.spatial(3, i0_i1_fused_0_0)\n"
                "                    vi0_i1_fused_0_1 = T.axis.reduce(3, i0_i1_fused_0_1)\n"
                "                    vi0_i1_fused_1 = T.axis.spatial(8, i0_i1_fused_1)\n"
                "                    T.reads(x[((vi0_i1_fused_0_0 * 3 + vi0_i1_fused_0_1) * 8 + vi0_i1_fused_1) // 10, ((vi0_i1_fused_0_0 * 3 + vi0_i1_fused_0_1) * 8 + vi0_i1_fused_1) % 10], lv_rf[vi0_i1_fused_0_0, vi0_i1_fused_1])\n"
                "                    T.writes(lv_rf[vi0_i1_fused_0_0, vi0_i1_fused_1])\n"
                "                    lv_rf[vi0_i1_fused_0_0, vi0_i1_fused_1] = lv_rf[vi0_i1_fused_0_0, vi0_i1_fused_1] + x[((vi0_i1_fused_0_0 * 3 + vi0_i1_fused_0_1) * 8 + vi0_i1_fused_1) // 10, ((vi0_i1_fused_0_0 * 3 + vi0_i1_fused_0_1) * 8 + vi0_i1_fused_1) % 10]\n"
                "    for i0_i1_fused_0_0_rf, i0_i1_fused_1_rf in T.grid(3, 8):\n"
                "        with T.block(\"sum\"):\n"
                "            vi0_i1_fused_0_0_rf, vi0_i1_fused_1_rf = T.axis.remap(\"RR\", [i0_i1_fused_0_0_rf, i0_i1_fused_1_rf])\n"
                "            T.reads(lv_rf[vi0_i1_fused_0_0_rf, vi0_i1_fused_1_rf])\n"
                "            T.writes(lv[()])\n"
                "            with T.init():\n"
                "                lv[()] = 0.0\n"
                "            lv[()] = lv[()] + lv_rf[vi0_i1_fused_0_0_rf, vi0_i1_fused_1_rf]\n");
    check_k4(s.func);
    /* the chunks and the lanes are independent now */
    assert_true(mt_sched_parallel(&s, c));
    assert_true(mt_sched_vectorize(&s, fi));
    check_k4(s.func);

    /* max over (0, 2): partials per lane of the last axis, per output */
    mt_tfunc *g = kernel(K5);
    check_k5(g);
    mt_sched_init(&s, A, g);
    mt_tvar *i0 = loop_of(g, "max", 0), *i1 = loop_of(g, "max", 1), *ko, *ki;
    assert_true(mt_sched_split(&s, loop_of(g, "max", 2), I(4), &ko, &ki));
    assert_true(mt_sched_rfactor(&s, "max", &ki, 1));
    ASSERT_TEXT(printed(s.func),
                "@T.prim_func\n"
                "def max(x: T.Buffer((4, 6, 10), \"float32\"), lv: T.Buffer((6,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    lv_rf = T.alloc_buffer((6, 4), \"float32\")\n"
                "    for i1_rf_init, i2_1_rf_init in T.grid(6, 4):\n"
                "        with T.block(\"max_rf_init\"):\n"
                "            vi1_rf_init, vi2_1_rf_init = T.axis.remap(\"SS\", [i1_rf_init, i2_1_rf_init])\n"
                "            T.reads()\n"
                "            T.writes(lv_rf[vi1_rf_init, vi2_1_rf_init])\n"
                "            lv_rf[vi1_rf_init, vi2_1_rf_init] = T.float32(\"-inf\")\n"
                "    for i0, i1, i2_0 in T.grid(4, 6, 3):\n"
                "        for i2_1 in range(T.min(4, 10 - i2_0 * 4)):\n"
                "            with T.block(\"max_rf\"):\n"
                "                v1 = T.axis.spatial(6, i1)\n"
                "                vi0 = T.axis.reduce(4, i0)\n"
                "                vi2_0 = T.axis.reduce(3, i2_0)\n"
                "                vi2_1 = T.axis.spatial(4, i2_1)\n"
                "                T.reads(x[vi0, v1, vi2_0 * 4 + vi2_1], lv_rf[v1, vi2_1])\n"
                "                T.writes(lv_rf[v1, vi2_1])\n"
                "                lv_rf[v1, vi2_1] = T.Select(x[vi0, v1, vi2_0 * 4 + vi2_1] > lv_rf[v1, vi2_1] or x[vi0, v1, vi2_0 * 4 + vi2_1] != x[vi0, v1, vi2_0 * 4 + vi2_1], x[vi0, v1, vi2_0 * 4 + vi2_1], lv_rf[v1, vi2_1])\n"
                "    for i1_rf, i2_1_rf in T.grid(6, 4):\n"
                "        with T.block(\"max\"):\n"
                "            vi1_rf, vi2_1_rf = T.axis.remap(\"SR\", [i1_rf, i2_1_rf])\n"
                "            T.reads(lv_rf[vi1_rf, vi2_1_rf])\n"
                "            T.writes(lv[vi1_rf])\n"
                "            with T.init():\n"
                "                lv[vi1_rf] = T.float32(\"-inf\")\n"
                "            lv[vi1_rf] = T.Select(lv_rf[vi1_rf, vi2_1_rf] > lv[vi1_rf] or lv_rf[vi1_rf, vi2_1_rf] != lv_rf[vi1_rf, vi2_1_rf], lv_rf[vi1_rf, vi2_1_rf], lv[vi1_rf])\n");
    check_k5(s.func);
    assert_true(mt_sched_reorder(&s, i0, i1));
    assert_true(mt_sched_parallel(&s, i1));
    assert_true(mt_sched_vectorize(&s, ki));
    check_k5(s.func);

    /* refusals */
    mt_sched_init(&s, A, g);
    assert_false(mt_sched_rfactor(&s, "nope", &i0, 1));
    assert_string_equal(s.error, "rfactor: no block named 'nope'");
    assert_false(mt_sched_rfactor(&s, "max", &i0, 0));
    assert_string_equal(s.error, "rfactor: 0 loops named (1 to 64)");
    assert_false(mt_sched_rfactor(&s, "max", &i1, 1));
    assert_string_equal(s.error, "rfactor: loop 'i1' binds no reduce variable of block 'max'");
    mt_tvar *z = mt_tvar_new(A, "z", MT_INT64), *twice[2] = {i0, i0};
    assert_false(mt_sched_rfactor(&s, "max", &z, 1));
    assert_string_equal(s.error, "rfactor: loop 'z' is not an ancestor of block 'max'");
    assert_false(mt_sched_rfactor(&s, "max", twice, 2));
    assert_string_equal(s.error, "rfactor: loop 'i0' is named twice");
    assert_true(s.func == g);
    assert_true(mt_sched_unroll(&s, i0));
    assert_false(mt_sched_rfactor(&s, "max", &i0, 1));
    assert_string_equal(s.error, "rfactor: loop 'i0' is not serial");
    mt_sched_init(&s, A, g);
    assert_true(mt_sched_split(&s, i1, I(4), NULL, NULL));
    assert_false(mt_sched_rfactor(&s, "max", &i0, 1));
    assert_string_equal(s.error, "rfactor: spatial variable 'v1' of block 'max' is not bound to a "
                                 "loop over its whole domain");
    mt_sched_init(&s, A, g);
    mt_tvar *k0;
    assert_true(mt_sched_split(&s, loop_of(g, "max", 2), I(4), &k0, &ki));
    mt_tstmt *kl = mt_ts_copy(A, mt_sched_get_loop(&s, ki)); /* range(10 - k0 * 4): no bound */
    kl->extent = sub(I(10), mul(V(k0), I(4)));
    mt_sched_replace(&s, mt_sched_get_loop(&s, ki), kl);
    assert_false(mt_sched_rfactor(&s, "max", &ki, 1));
    assert_string_equal(s.error, "rfactor: the extent of loop 'i2_1' depends on other loops and has "
                                 "no bound free of them");
    /* a loop binding a spatial and a reduce variable */
    const mt_tstmt *mb = block_of(g, "max");
    mt_tstmt *cm = mt_ts_copy(A, mb);
    cm->iter_values = MT_NEW_ARRAY(A, mt_texpr *, 3);
    cm->iter_values[0] = add(V(i0), bin(TE_FLOORDIV, V(i1), I(8)));
    cm->iter_values[1] = V(i1);
    cm->iter_values[2] = mb->iter_values[2];
    mt_sched_init(&s, A, patch(g, "max", cm));
    assert_false(mt_sched_rfactor(&s, "max", &i0, 1));
    assert_string_equal(s.error, "rfactor: loop 'i1' binds both spatial and reduce variables of "
                                 "block 'max'");
    /* a sum whose init is not 0; a product; no init; not a reduction */
    const mt_tstmt *sb = block_of(f, "sum");
    mt_tstmt *cs = mt_ts_copy(A, sb);
    cs->init = mt_ts_store(A, sb->init->buf, NULL, 0, mt_te_float(A, MT_FLOAT32, 1.0));
    mt_tvar *s0 = loop_of(f, "sum", 0);
    mt_sched_init(&s, A, patch(f, "sum", cs));
    assert_false(mt_sched_rfactor(&s, "sum", &s0, 1));
    assert_string_equal(s.error, "rfactor: the init of block 'sum' is not 0, the identity of its sum");
    cs = mt_ts_copy(A, sb);
    cs->body = mt_ts_store(A, sb->body->buf, NULL, 0, mul(sb->body->value->a, sb->body->value->b));
    mt_sched_init(&s, A, patch(f, "sum", cs));
    assert_false(mt_sched_rfactor(&s, "sum", &s0, 1));
    assert_string_equal(s.error, "rfactor: block 'sum' is not B = F(B, e) with F +, T.max, T.min or "
                                 "a NaN-propagating max or min select, e not reading 'lv'");
    cs = mt_ts_copy(A, sb);
    cs->init = NULL;
    mt_sched_init(&s, A, patch(f, "sum", cs));
    assert_false(mt_sched_rfactor(&s, "sum", &s0, 1));
    assert_string_equal(s.error, "rfactor: block 'sum' has no init");
    mt_tfunc *h = kernel(K1);
    mt_sched_init(&s, A, h);
    mt_tvar *e0 = loop_of(h, "exp", 0);
    assert_false(mt_sched_rfactor(&s, "exp", &e0, 1));
    assert_string_equal(s.error, "rfactor: block 'exp' is not a reduction (no reduce variable)");
    /* after cache_write the accumulator's allocation lies in the nest */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_cache_write(&s, "sum", MT_SCOPE_LOCAL, NULL));
    assert_false(mt_sched_rfactor(&s, "sum", &s0, 1));
    assert_string_equal(s.error, "rfactor: block 'sum' is not alone in a perfect loop nest of the "
                                 "function's body");
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_compute_inline),
        TIR_TEST(test_cache_write),
        TIR_TEST(test_decompose_reduction),
        TIR_TEST(test_compute_at),
        TIR_TEST(test_compute_at_range),
        TIR_TEST(test_rfactor),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
