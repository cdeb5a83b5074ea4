/*
 * fuzz_front.c -- libFuzzer harnesses over the compiler's front half, which
 * stop before LLVM and so run thousands of times faster than fuzz_compile
 * (which pays LLVM's code generation for every input that compiles):
 *
 *   fuzz_tir     (FUZZ_TIR) the loop-function parser, the TIR verifier and
 *                user schedules: every @T.prim_func of the input built into
 *                TIR (mt_tir_from_module, which verifies each one), then
 *                every @T.schedule(f) of the input run on the function f
 *                it names (schedule/sched_from_ast.h: the interpreter and
 *                the primitives), the result verified;
 *   fuzz_graph   the whole pipeline up to code generation (mt_pipeline_run:
 *                parse, graph build and passes, fusion, loop functions,
 *                schedule rules, TIR passes, the split into host and device
 *                functions) for the CPU target, and for target cuda
 *                emulated on one input in four (by a hash of the input);
 *                the dumps that the pipeline prints on demand ("ast",
 *                "tir", "tir-sched": mt_pipeline_dump) are printed for one
 *                input in eight (other bits of the hash), so the printers
 *                stay under this harness (fuzz_compile prints every stage
 *                of every input) without costing every execution.
 *
 * Each input is parsed as source bytes (a NUL is just a byte the lexer
 * refuses). Every outcome must be a value or a user error through mt_fail;
 * MT_ERR_INTERNAL is a finding (the harness traps so libFuzzer keeps the
 * input) unless MT_FUZZ_ALLOW_ICE=1. One arena per input, freed whatever
 * happened: LeakSanitizer checks that nothing escapes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/parser.h"
#include "pipeline.h"
#include "schedule/sched_from_ast.h"
#include "support/arena.h"
#include "support/diag.h"
#include "target/target.h"
#include "tir/from_ast.h"
#include "tir/verify.h"

static int allow_ice = -1;

static void check(const mt_errframe *f) {
    if (allow_ice < 0) allow_ice = getenv("MT_FUZZ_ALLOW_ICE") != NULL;
    if (f->status == MT_OK || !f->msg[0]) __builtin_trap(); /* a failure says what */
    if (f->status == MT_ERR_INTERNAL && !allow_ice) {
        fprintf(stderr, "fuzz: internal error: %s\n", f->msg); /* what the finding is, beside its input */
        __builtin_trap();
    }
}

#ifdef FUZZ_TIR
static void schedule(mt_arena *a, const mt_ast *def, mt_tfunc *const *fs, int n) {
    const mt_ast *arg = mt_schedule_decorator_arg(def);
    for (int i = 0; arg && arg->kind == AST_NAME && i < n; i++) {
        if (strcmp(fs[i]->name, arg->name) != 0) continue;
        mt_tfunc *g = mt_schedule_from_ast(a, fs[i], def, arg, NULL);
        const char *err = mt_tir_verify(a, g, MT_TIR_BLOCK);
        if (err) { /* a primitive broke the function */
            fprintf(stderr, "fuzz_tir: the schedule of '%s' made TIR the verifier refuses: %s\n", g->name, err);
            __builtin_trap();
        }
    }
}

static void body(mt_arena *a, const uint8_t *data, size_t size) {
    mt_ast *m = mt_parse(a, (const char *)data, size, NULL);
    int n;
    mt_tfunc **fs = mt_tir_from_module(a, m, &n);
    for (int i = 0; i < m->body.len; i++)
        if (m->body.data[i]->kind == AST_FUNCDEF) schedule(a, m->body.data[i], fs, n);
}
#else
static void body(mt_arena *a, const uint8_t *data, size_t size) {
    static mt_target_desc host, gpu;
    static int ready;
    if (!ready) {
        mt_target_host_cpu(&host, "znver4", "+sse2,+avx,+avx2,+fma,+avx512f", 2);
        mt_target_cuda(&gpu, "sm_90");
        ready = 1;
    }
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    mt_pipeline_targets t = {&host, NULL, false, NULL, 0, NULL, 0};
    if (h % 4 == 3) t.gpu = &gpu, t.emulate = true;
    mt_compiled c;
    mt_pipeline_run(a, (const char *)data, size, NULL, &t, &c);
    if (h / 4 % 8 == 0) {
        static const mt_stage lazy[] = {MT_STAGE_AST, MT_STAGE_TIR, MT_STAGE_TIR_SCHED};
        for (size_t i = 0; i < sizeof lazy / sizeof lazy[0]; i++)
            if (!mt_pipeline_dump(a, &c, lazy[i])) __builtin_trap(); /* a compiled kernel has each */
    }
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mt_arena *a = mt_arena_create();
    if (!a) return 0;
    mt_errframe f;
    if (MT_TRY(&f)) {
        body(a, data, size);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        check(&f);
    }
    mt_arena_destroy(a);
    return 0;
}
