/*
 * llvm.c -- lowered TIR functions to an LLVM module (statements, functions).
 *
 * Input is the lowered form of tir.h: no blocks, every buffer flat and
 * accessed with one index (or none, for a rank-0 buffer). Each mt_tfunc
 * becomes one externally visible function
 *
 *     void <prefix><name>(ptr noalias nocapture align(E) p0, ..., T s, ...,
 *                         i64 sym0, ...)
 *
 * following the calling convention of tir.h: buffer params are pointers to
 * their element type (alignment E = the element size, all a wrapped host
 * buffer promises), scalar params are passed by value in their dtype (bool as
 * `i1 zeroext` like C's _Bool, int8 signext, uint8 zeroext, float16 as `half`),
 * then one i64 per sym var. Functions are nounwind.
 *
 * Statements walk the tree keeping the builder at the end of the "current"
 * block; nothing but the final `ret` terminates a block early.
 *
 *  - TS_FOR is a guarded, rotated loop over an i64 induction variable, the
 *    form the loop vectorizer expects without further canonicalization:
 *
 *        pre:  end = min + extent; br (min < end), body, exit
 *        body: iv = phi [min, pre], [next, latch] ... body ...
 *        latch: next = iv + 1 (nsw); br (next < end), body, exit  !llvm.loop
 *
 *    A loop variable of another integer dtype is the truncated iv. Vectorized
 *    loops carry llvm.loop.vectorize.enable, unrolled ones
 *    llvm.loop.unroll.full (constant extent) or .enable. Parallel loops run
 *    serially for now (TODO(#4): call the runtime parallel-for,
 *    mt_parallel_for in src/runtime, with the body outlined into a closure).
 *    Thread-bound loops are a GPU construct and an internal error here.
 *  - TS_IF branches to then/else blocks that meet in a merge block.
 *  - TS_LET binds the value to its variable for the extent of the body.
 *  - TS_ALLOC gives the buffer a stack slot (an alloca in the entry block,
 *    64-byte aligned) when its size is a constant of at most 64 KiB, and a
 *    malloc/free pair around the body otherwise. Scope (local, shared,
 *    global) makes no difference on the CPU.
 *  - TS_STORE and TS_EVAL defer to llvm_expr.c.
 *  - TS_BLOCK and any other kind is an internal error ("lowering must run
 *    first"), raised only after the module is disposed.
 *
 * The module is verified (LLVMVerifyModule) before it is handed back; a
 * verifier failure is an internal error carrying the verifier's message.
 */
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>

#include "codegen/llvm_internal.h"
#include "support/common.h"

/* Stack allocations up to this many bytes; larger or symbolic ones use malloc. */
#define MT_CG_MAX_ALLOCA 65536

static void gen_stmt(mt_cg *g, const mt_tstmt *s);

static LLVMBasicBlockRef new_block(mt_cg *g, const char *name) {
    return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

static LLVMValueRef gen_i64(mt_cg *g, const mt_texpr *e) {
    if (!mt_dtype_is_int(e->dtype) || e->lanes != 1)
        mt_ice("codegen: loop bound of dtype %s with %d lanes", mt_dtype_str(e->dtype), e->lanes);
    return mt_cg_cast(g, mt_cg_expr(g, e), e->dtype, MT_INT64);
}

static void bind_var(mt_cg *g, const mt_tvar *v, LLVMValueRef val) {
    mt_cg_map_put(g->arena, &g->vars, v, val);
}

/* !llvm.loop !{self, !{hint, true}} on the latch branch. */
static void loop_hint(mt_cg *g, LLVMValueRef br, const char *hint, bool with_value) {
    LLVMMetadataRef ops[2];
    LLVMMetadataRef h[2];
    h[0] = LLVMMDStringInContext2(g->ctx, hint, strlen(hint));
    h[1] = LLVMValueAsMetadata(LLVMConstInt(g->t_i1, 1, 0));
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->ctx, NULL, 0);
    ops[0] = tmp;
    ops[1] = LLVMMDNodeInContext2(g->ctx, h, with_value ? 2 : 1);
    LLVMMetadataRef id = LLVMMDNodeInContext2(g->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, id); /* self reference; frees tmp */
    unsigned kind = LLVMGetMDKindIDInContext(g->ctx, "llvm.loop", 9);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(g->ctx, id));
}

static void gen_for(mt_cg *g, const mt_tstmt *s) {
    if (s->for_kind == MT_FOR_THREAD)
        mt_ice("codegen: loop over '%s' is bound to %s: not a CPU loop", s->var->name,
               s->thread_tag ? s->thread_tag : "a thread");
    if (!mt_dtype_is_int(s->var->dtype))
        mt_ice("codegen: loop variable '%s' of dtype %s", s->var->name,
               mt_dtype_str(s->var->dtype));
    LLVMBuilderRef b = g->b;
    int64_t ext_c;
    bool const_ext = mt_te_is_const_int(s->extent, &ext_c);
    LLVMValueRef min = gen_i64(g, s->min);
    if (const_ext && ext_c <= 0) return;
    if (const_ext && ext_c == 1) {
        bind_var(g, s->var, mt_cg_cast(g, min, MT_INT64, s->var->dtype));
        gen_stmt(g, s->body);
        bind_var(g, s->var, NULL);
        return;
    }
    LLVMValueRef end = LLVMBuildNSWAdd(b, min, gen_i64(g, s->extent), "end");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef body = new_block(g, "loop"), exit = new_block(g, "loop.end");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, min, end, ""), body, exit);

    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef iv = LLVMBuildPhi(b, g->t_i64, s->var->name);
    bind_var(g, s->var, mt_cg_cast(g, iv, MT_INT64, s->var->dtype));
    /* TODO(#4): MT_FOR_PARALLEL should outline the body and call the runtime
     * parallel-for (mt_parallel_for); until then it runs serially. */
    gen_stmt(g, s->body);
    bind_var(g, s->var, NULL);

    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMValueRef next = LLVMBuildNSWAdd(b, iv, LLVMConstInt(g->t_i64, 1, 0), "");
    LLVMValueRef br =
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, end, ""), body, exit);
    if (s->for_kind == MT_FOR_VECTORIZED)
        loop_hint(g, br, "llvm.loop.vectorize.enable", true);
    else if (s->for_kind == MT_FOR_UNROLLED)
        loop_hint(g, br, const_ext ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable", false);
    LLVMValueRef inc_v[2] = {min, next};
    LLVMBasicBlockRef inc_b[2] = {pre, latch};
    LLVMAddIncoming(iv, inc_v, inc_b, 2);
    LLVMPositionBuilderAtEnd(b, exit);
}

static void gen_if(mt_cg *g, const mt_tstmt *s) {
    if (s->cond->lanes != 1) mt_ice("codegen: if on a %d-lane condition", s->cond->lanes);
    LLVMBuilderRef b = g->b;
    LLVMValueRef c = mt_cg_cast(g, mt_cg_expr(g, s->cond), s->cond->dtype, MT_BOOL);
    LLVMBasicBlockRef then_b = new_block(g, "then");
    LLVMBasicBlockRef else_b = s->else_s ? new_block(g, "else") : NULL;
    LLVMBasicBlockRef merge = new_block(g, "endif");
    LLVMBuildCondBr(b, c, then_b, else_b ? else_b : merge);
    LLVMPositionBuilderAtEnd(b, then_b);
    gen_stmt(g, s->then_s);
    LLVMBuildBr(b, merge);
    if (else_b) {
        LLVMPositionBuilderAtEnd(b, else_b);
        gen_stmt(g, s->else_s);
        LLVMBuildBr(b, merge);
    }
    LLVMPositionBuilderAtEnd(b, merge);
}

static LLVMValueRef runtime_fn(mt_cg *g, const char *name, LLVMTypeRef ret,
                               LLVMTypeRef *params, int n, LLVMTypeRef *fnty) {
    *fnty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
    if (!fn) {
        fn = LLVMAddFunction(g->mod, name, *fnty);
        unsigned k = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(g->ctx, k, 0));
    }
    return fn;
}

/* Allocates buf (NULL when it lives on the stack); returns what to free. */
static LLVMValueRef alloc_begin(mt_cg *g, const mt_tbuffer *buf) {
    if (buf->ndim > 1)
        mt_ice("codegen: allocated buffer '%s' has %d dims: flatten_buffers must run first",
               buf->name, buf->ndim);
    LLVMTypeRef mem = mt_cg_mem_type(g, buf->dtype);
    int64_t esize = (int64_t)LLVMABISizeOfType(LLVMGetModuleDataLayout(g->mod), mem), n = 1;
    if (buf->ndim == 0 || mt_te_is_const_int(buf->shape[0], &n)) {
        int64_t bytes;
        if (n < 1) n = 1;
        if (mt_mul_ok(n, esize, &bytes) && bytes <= MT_CG_MAX_ALLOCA) {
            LLVMBasicBlockRef cur = LLVMGetInsertBlock(g->b);
            LLVMPositionBuilderAtEnd(g->b, g->entry);
            LLVMValueRef p = LLVMBuildAlloca(g->b, LLVMArrayType2(mem, (uint64_t)n), buf->name);
            LLVMSetAlignment(p, 64);
            LLVMPositionBuilderAtEnd(g->b, cur);
            mt_cg_map_put(g->arena, &g->bufs, buf, p);
            return NULL;
        }
    }
    LLVMValueRef count = gen_i64(g, buf->shape[0]);
    LLVMValueRef bytes = LLVMBuildMul(g->b, count, LLVMConstInt(g->t_i64, (unsigned long long)esize, 0), "");
    LLVMTypeRef fnty;
    LLVMValueRef fn = runtime_fn(g, "malloc", g->t_ptr, &g->t_i64, 1, &fnty);
    LLVMValueRef p = LLVMBuildCall2(g->b, fnty, fn, &bytes, 1, buf->name);
    mt_cg_map_put(g->arena, &g->bufs, buf, p);
    return p;
}

static void alloc_end(mt_cg *g, const mt_tbuffer *buf, LLVMValueRef heap) {
    mt_cg_map_put(g->arena, &g->bufs, buf, NULL);
    if (!heap) return;
    LLVMTypeRef fnty;
    LLVMValueRef fn = runtime_fn(g, "free", g->t_void, &g->t_ptr, 1, &fnty);
    LLVMBuildCall2(g->b, fnty, fn, &heap, 1, "");
}

static void gen_stmt(mt_cg *g, const mt_tstmt *s) {
    switch (s->kind) {
    case TS_FOR: gen_for(g, s); return;
    case TS_STORE:
        mt_cg_store(g, s->buf, s->idx, s->nidx, mt_cg_expr(g, s->value), s->value->dtype);
        return;
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) gen_stmt(g, s->stmts[i]);
        return;
    case TS_IF: gen_if(g, s); return;
    case TS_LET:
        bind_var(g, s->var, mt_cg_cast(g, mt_cg_expr(g, s->value), s->value->dtype, s->var->dtype));
        gen_stmt(g, s->body);
        bind_var(g, s->var, NULL);
        return;
    case TS_ALLOC: {
        LLVMValueRef heap = alloc_begin(g, s->buf);
        gen_stmt(g, s->body);
        alloc_end(g, s->buf, heap);
        return;
    }
    case TS_EVAL: mt_cg_expr(g, s->value); return;
    case TS_BLOCK:
        mt_ice("codegen: block '%s' in %s: lower_blocks must run before codegen",
               s->name ? s->name : "?", g->f->name);
    default: break;
    }
    mt_ice("codegen: statement kind %d is not handled", (int)s->kind);
}

/* ---- functions ------------------------------------------------------------- */

static void param_attr(mt_cg *g, LLVMValueRef fn, unsigned idx, const char *name, uint64_t v) {
    unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(g->ctx, k, v));
}

static LLVMTypeRef param_type(mt_cg *g, const mt_tparam *p) {
    if (p->buf) return g->t_ptr;
    if (p->var->dtype == MT_FLOAT16) return g->t_half;
    return mt_cg_type(g, p->var->dtype);
}

static void gen_func(mt_cg *g, const mt_tfunc *f, const char *prefix) {
    int np = f->nparams + f->nsym;
    LLVMTypeRef *pt = MT_NEW_ARRAY(g->arena, LLVMTypeRef, np > 0 ? np : 1);
    for (int i = 0; i < f->nparams; i++) pt[i] = param_type(g, &f->params[i]);
    for (int i = 0; i < f->nsym; i++) pt[f->nparams + i] = g->t_i64;
    LLVMTypeRef fnty = LLVMFunctionType(g->t_void, pt, (unsigned)np, 0);
    const char *name = mt_arena_printf(g->arena, "%s%s", prefix, f->name);
    if (LLVMGetNamedFunction(g->mod, name)) mt_ice("codegen: two functions named '%s'", f->name);
    LLVMValueRef fn = LLVMAddFunction(g->mod, name, fnty);
    g->fn = fn;
    g->f = f;
    g->vars.used = g->vars.cap = 0;
    g->bufs.used = g->bufs.cap = 0;
    param_attr(g, fn, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);

    g->entry = new_block(g, "entry");
    LLVMBasicBlockRef body = new_block(g, "body");
    LLVMPositionBuilderAtEnd(g->b, body);
    for (int i = 0; i < f->nparams; i++) {
        const mt_tparam *p = &f->params[i];
        LLVMValueRef v = LLVMGetParam(fn, (unsigned)i);
        unsigned ai = (unsigned)i + 1;
        if (p->buf) {
            LLVMSetValueName2(v, p->buf->name, strlen(p->buf->name));
            param_attr(g, fn, ai, "noalias", 0);
            param_attr(g, fn, ai, "nocapture", 0);
            unsigned al = (unsigned)LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(g->mod),
                                                          mt_cg_mem_type(g, p->buf->dtype));
            if (al > 1) param_attr(g, fn, ai, "align", al);
            mt_cg_map_put(g->arena, &g->bufs, p->buf, v);
        } else {
            mt_dtype t = p->var->dtype;
            LLVMSetValueName2(v, p->var->name, strlen(p->var->name));
            if (t == MT_BOOL || t == MT_UINT8) param_attr(g, fn, ai, "zeroext", 0);
            if (t == MT_INT8) param_attr(g, fn, ai, "signext", 0);
            if (t == MT_FLOAT16) v = LLVMBuildFPExt(g->b, v, g->t_f32, "");
            bind_var(g, p->var, v);
        }
    }
    for (int i = 0; i < f->nsym; i++) {
        LLVMValueRef v = LLVMGetParam(fn, (unsigned)(f->nparams + i));
        LLVMSetValueName2(v, f->sym_vars[i]->name, strlen(f->sym_vars[i]->name));
        bind_var(g, f->sym_vars[i], mt_cg_cast(g, v, MT_INT64, f->sym_vars[i]->dtype));
    }
    LLVMValueRef *heap = MT_NEW_ARRAY(g->arena, LLVMValueRef, f->nallocs > 0 ? f->nallocs : 1);
    for (int i = 0; i < f->nallocs; i++) heap[i] = alloc_begin(g, f->allocs[i]);
    if (f->body) gen_stmt(g, f->body);
    for (int i = f->nallocs - 1; i >= 0; i--) alloc_end(g, f->allocs[i], heap[i]);
    LLVMBuildRetVoid(g->b);
    LLVMPositionBuilderAtEnd(g->b, g->entry);
    LLVMBuildBr(g->b, body);
}

/* ---- the module ------------------------------------------------------------ */

typedef struct build_state {
    LLVMModuleRef mod;  /* disposed on error */
    LLVMBuilderRef b;   /* always disposed */
} build_state;

LLVMModuleRef mt_llvm_build_module(mt_arena *a, LLVMContextRef ctx, const char *mod_name,
                                   const char *prefix, const char *triple,
                                   const char *data_layout, mt_tfunc *const *funcs, int n) {
    /* In the arena so that it survives the longjmp with its current values. */
    build_state *st = MT_NEW(a, build_state);
    mt_cg *g = MT_NEW(a, mt_cg);
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        st->mod = LLVMModuleCreateWithNameInContext(mod_name, ctx);
        st->b = LLVMCreateBuilderInContext(ctx);
        LLVMSetTarget(st->mod, triple);
        LLVMSetDataLayout(st->mod, data_layout);
        g->arena = a;
        g->ctx = ctx;
        g->mod = st->mod;
        g->b = st->b;
        g->t_void = LLVMVoidTypeInContext(ctx);
        g->t_i1 = LLVMInt1TypeInContext(ctx);
        g->t_i8 = LLVMInt8TypeInContext(ctx);
        g->t_i32 = LLVMInt32TypeInContext(ctx);
        g->t_i64 = LLVMInt64TypeInContext(ctx);
        g->t_half = LLVMHalfTypeInContext(ctx);
        g->t_f32 = LLVMFloatTypeInContext(ctx);
        g->t_f64 = LLVMDoubleTypeInContext(ctx);
        g->t_ptr = LLVMPointerTypeInContext(ctx, 0);
        for (int i = 0; i < n; i++) gen_func(g, funcs[i], prefix);
        LLVMDisposeBuilder(st->b);
        st->b = NULL;
        char *msg = NULL;
        if (LLVMVerifyModule(st->mod, LLVMReturnStatusAction, &msg)) {
            const char *m = mt_arena_strdup(a, msg ? msg : "");
            LLVMDisposeMessage(msg);
            mt_ice("codegen: LLVM verifier: %s", m);
        }
        LLVMDisposeMessage(msg);
        mt_err_pop(&fr);
        return st->mod;
    }
    mt_err_pop(&fr);
    if (st->b) LLVMDisposeBuilder(st->b);
    if (st->mod) LLVMDisposeModule(st->mod);
    mt_fail(fr.status, fr.loc, "%s", fr.msg);
}
