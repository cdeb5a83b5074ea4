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
 *    llvm.loop.unroll.full (constant extent) or .enable. Thread-bound loops
 *    are a GPU construct and an internal error here.
 *    A parallel loop is an internal error: split_host_device (passes/tir)
 *    outlines parallel loops into parallel bodies before codegen.
 *  - TS_LAUNCH runs a parallel body (a device function of kind
 *    "parallel_body", tir.h: params begin, end, then its captures). The
 *    body becomes an internal function run(begin, end, captures...) whose
 *    buffer parameters are noalias nocapture (so the vectorizer sees the
 *    same facts as in the kernel), scalar ones in their compute types (a
 *    vector for a vector capture); a trampoline body(begin, end, closure)
 *    loads the captures from a struct {min, captures...} the kernel fills in
 *    an alloca of its entry block, and the kernel calls
 *    mt_parallel_for(extent, body, &closure) (runtime/parallel.h, resolved
 *    by address in jit.c). The body is generated where it is launched (it
 *    keeps the kernel's streaming plan), in the kernel's module or, when
 *    compiling on several threads, in a module of its own (mt_cg_split).
 *    Handing the buffers to the runtime is a capture, so a kernel that
 *    launches drops nocapture from its buffer parameters. A launch of a
 *    GPU kernel (kind "cuda_kernel", from a GPU program's host function)
 *    is a call of mt_gpu_launch (runtime/gpu_launch.h) with the kernel's
 *    name, its grid and block, and one pointer per argument slot; the
 *    kernel's code is CUDA C, made elsewhere (codegen/cuda_c.c). Launches
 *    of other kinds are internal errors.
 *  - TS_IF branches to then/else blocks that meet in a merge block.
 *  - TS_LET binds the value to its variable for the extent of the body.
 *  - TS_ALLOC gives the buffer a stack slot (an alloca in the entry block,
 *    64-byte aligned) when its size is a constant of at most 64 KiB, and a
 *    mt_kernel_malloc/free pair around the body otherwise; when that
 *    allocation fails the body is skipped and the executor fails the run
 *    with MT_ERR_NOMEM (runtime/parallel.h). Scope (local, shared, global)
 *    makes no difference on the CPU. In a GPU program's host function the
 *    buffer is device memory between kernels: mt_gpu_alloc / mt_gpu_free
 *    (runtime/gpu_launch.h), the body skipped when it fails.
 *  - TS_CHECK (a run-time bounds check, passes/tir/check_bounds.c)
 *    branches on its condition; the failing side, a block LLVM sees as
 *    cold, stores the index values and dims into an alloca and calls
 *    mt_kernel_oob (runtime/parallel.h) with the buffer's name, the access
 *    kind and place, then frees the heap buffers live there and returns:
 *    the function stops. A host function calls mt_kernel_stopped() after
 *    each launch of a parallel body that holds a check and stops too when
 *    a chunk did.
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
#include "target/target.h"
#include "support/common.h"
#include "support/ptrmap.h"

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

/* !{name} or !{name, i1 true}. */
static LLVMMetadataRef loop_prop(mt_cg *g, const char *name, bool with_value) {
    LLVMMetadataRef h[2];
    h[0] = LLVMMDStringInContext2(g->ctx, name, strlen(name));
    h[1] = LLVMValueAsMetadata(LLVMConstInt(g->t_i1, 1, 0));
    return LLVMMDNodeInContext2(g->ctx, h, with_value ? 2 : 1);
}

/* !llvm.loop !{self, props...} on the latch branch (at most 3 props). */
static void loop_md(mt_cg *g, LLVMValueRef br, LLVMMetadataRef *props, int n) {
    LLVMMetadataRef ops[4];
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->ctx, NULL, 0);
    ops[0] = tmp;
    for (int i = 0; i < n; i++) ops[i + 1] = props[i];
    LLVMMetadataRef id = LLVMMDNodeInContext2(g->ctx, ops, (size_t)n + 1);
    LLVMMetadataReplaceAllUsesWith(tmp, id); /* self reference; frees tmp */
    unsigned kind = LLVMGetMDKindIDInContext(g->ctx, "llvm.loop", 9);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(g->ctx, id));
}

/* Does the statement compute on vectors (an expression with lanes > 1)? */
static void find_vector_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->lanes > 1) *(bool *)v->ctx = true;
    else mt_tvisit_expr_children(v, e);
}

/* ... or contain a loop (a launch runs one)? */
static void find_loop(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_FOR || s->kind == TS_LAUNCH) *(bool *)v->ctx = true;
    else mt_tvisit_stmt_children(v, s);
}

static bool has_vector_code_or_loop(const mt_tstmt *s) {
    bool found = false;
    mt_tvisitor v = {find_vector_expr, find_loop, &found};
    mt_tvisit_stmt(&v, s);
    return found;
}

/* Does every store in a loop body index with the loop variable? Then its
 * iterations write different elements: no reduction through memory. */
typedef struct store_scan {
    const mt_tvar *var;
    bool found;    /* the var occurs in the expression scanned */
    bool all_use;  /* every store so far indexes with var */
} store_scan;

static void scan_var(mt_tvisitor *v, const mt_texpr *e) {
    store_scan *st = v->ctx;
    if (e->kind == TE_VAR && e->var == st->var) st->found = true;
    else mt_tvisit_expr_children(v, e);
}

static void scan_store(mt_tvisitor *v, const mt_tstmt *s) {
    store_scan *st = v->ctx;
    if (s->kind == TS_STORE) {
        mt_tvisitor ev = {scan_var, NULL, st};
        st->found = false;
        for (int i = 0; i < s->nidx; i++) mt_tvisit_expr(&ev, s->idx[i]);
        if (!st->found) st->all_use = false;
    }
    mt_tvisit_stmt_children(v, s);
}

static bool stores_indexed_by(const mt_tstmt *body, const mt_tvar *var) {
    store_scan st = {var, false, true};
    mt_tvisitor v = {NULL, scan_store, &st};
    mt_tvisit_stmt(&v, body);
    return st.all_use;
}

/* Loop metadata (see "Loop unrolling" in docs/codegen.md): unrolled loops ask
 * for it; an outer loop, or one whose body the schedule already wrote in
 * vectors, is not unrolled by LLVM; an innermost scalar loop, if the loop
 * vectorizer vectorizes it, leaves its vector loop alone too
 * (followup_vectorized: its interleave is all the unrolling it gets), and
 * keeps LLVM's unroller when it stays scalar. */
static void loop_hints(mt_cg *g, LLVMValueRef br, const mt_tstmt *s, bool const_ext) {
    LLVMMetadataRef props[3];
    int n = 0;
    if (s->for_kind == MT_FOR_UNROLLED) {
        props[n++] = loop_prop(g, const_ext ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable",
                               false);
    } else if (has_vector_code_or_loop(s->body)) {
        props[n++] = loop_prop(g, "llvm.loop.unroll.disable", false);
    } else {
        if (s->for_kind == MT_FOR_VECTORIZED)
            props[n++] = loop_prop(g, "llvm.loop.vectorize.enable", true);
        if (stores_indexed_by(s->body, s->var)) { /* independent iterations */
            const char *ic = "llvm.loop.interleave.count";
            LLVMMetadataRef p[2] = {LLVMMDStringInContext2(g->ctx, ic, strlen(ic)),
                                    LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 1, 0))};
            props[n++] = LLVMMDNodeInContext2(g->ctx, p, 2);
        }
        LLVMMetadataRef follow[2];
        const char *fv = "llvm.loop.vectorize.followup_vectorized";
        follow[0] = LLVMMDStringInContext2(g->ctx, fv, strlen(fv));
        follow[1] = loop_prop(g, "llvm.loop.unroll.disable", false);
        props[n++] = LLVMMDNodeInContext2(g->ctx, follow, 2);
    }
    loop_md(g, br, props, n);
}

/* The loop over [min, end) with s->var bound to the induction variable. */
static void gen_loop(mt_cg *g, const mt_tstmt *s, LLVMValueRef min, LLVMValueRef end,
                     bool const_ext) {
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef body = new_block(g, "loop"), exit = new_block(g, "loop.end");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, min, end, ""), body, exit);

    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef iv = LLVMBuildPhi(b, g->t_i64, s->var->name);
    bind_var(g, s->var, mt_cg_cast(g, iv, MT_INT64, s->var->dtype));
    gen_stmt(g, s->body);
    bind_var(g, s->var, NULL);

    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMValueRef next = LLVMBuildNSWAdd(b, iv, LLVMConstInt(g->t_i64, 1, 0), "");
    LLVMValueRef br =
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, end, ""), body, exit);
    loop_hints(g, br, s, const_ext);
    LLVMValueRef inc_v[2] = {min, next};
    LLVMBasicBlockRef inc_b[2] = {pre, latch};
    LLVMAddIncoming(iv, inc_v, inc_b, 2);
    LLVMPositionBuilderAtEnd(b, exit);
}

/* ---- launches of parallel bodies ------------------------------------------- */

static void param_attr(mt_cg *g, LLVMValueRef fn, unsigned idx, const char *name, uint64_t v);

/* The types of the generator in ctx. */
static void set_context(mt_cg *g, LLVMContextRef ctx) {
    g->ctx = ctx;
    g->t_void = LLVMVoidTypeInContext(ctx);
    g->t_i1 = LLVMInt1TypeInContext(ctx);
    g->t_i8 = LLVMInt8TypeInContext(ctx);
    g->t_i16 = LLVMInt16TypeInContext(ctx);
    g->t_i32 = LLVMInt32TypeInContext(ctx);
    g->t_i64 = LLVMInt64TypeInContext(ctx);
    g->t_half = LLVMHalfTypeInContext(ctx);
    g->t_f32 = LLVMFloatTypeInContext(ctx);
    g->t_f64 = LLVMDoubleTypeInContext(ctx);
    g->t_ptr = LLVMPointerTypeInContext(ctx, 0);
}

/* A new module in a new context for a parallel body; g generates into it
 * from now on (the caller restores g). */
static void enter_part(mt_cg *g) {
    mt_cg_split *sp = g->split;
    if (sp->n == sp->cap) { /* the old array stays valid if this raises */
        int cap = sp->cap ? 2 * sp->cap : 4;
        mt_cg_part *parts = MT_NEW_ARRAY(g->arena, mt_cg_part, cap);
        if (sp->n) memcpy(parts, sp->parts, sizeof *parts * (size_t)sp->n);
        sp->parts = parts;
        sp->cap = cap;
    }
    mt_cg_part *p = &sp->parts[sp->n++];
    p->ctx = LLVMContextCreate();
    p->mod = LLVMModuleCreateWithNameInContext(sp->mod_name, p->ctx);
    p->b = LLVMCreateBuilderInContext(p->ctx);
    LLVMSetTarget(p->mod, sp->triple);
    LLVMSetDataLayout(p->mod, sp->data_layout);
    set_context(g, p->ctx);
    g->mod = p->mod;
    g->b = p->b;
}

/* The closure's field types in g's context: {i64 min, captures...}, a
 * capture (param 2 on of the parallel body d) a pointer for a buffer, else
 * the compute type of its dtype (a vector of its lanes). */
static LLVMTypeRef *closure_types(mt_cg *g, const mt_tfunc *d) {
    int nc = d->nparams - 2;
    LLVMTypeRef *ft = MT_NEW_ARRAY(g->arena, LLVMTypeRef, nc + 1);
    ft[0] = g->t_i64;
    for (int i = 0; i < nc; i++) {
        const mt_tparam *p = &d->params[i + 2];
        int lanes = p->lanes > 1 ? p->lanes : 1;
        ft[i + 1] = p->buf ? g->t_ptr : mt_cg_vec_type(mt_cg_type(g, p->var->dtype), lanes);
    }
    return ft;
}

static bool is_i64_var(const mt_tparam *p) {
    return p->var && p->var->dtype == MT_INT64 && p->lanes <= 1;
}

/* Is l a launch the CPU runs: of a parallel body (begin, end, captures...)
 * with an argument of the same sort per capture, over grid[0] only? */
static void check_launch(const mt_cg *g, const mt_tlaunch *l) {
    const mt_tfunc *d = l->callee;
    const char *kind = mt_tfunc_get_attr(d, MT_ATTR_KIND);
    if (!kind || strcmp(kind, MT_KIND_PARALLEL_BODY) != 0)
        mt_ice("codegen: %s launches '%s' of kind '%s': the CPU runs parallel bodies", g->f->name,
               d->name, kind ? kind : "none");
    bool cpu = l->grid[0] && !l->grid[1] && !l->grid[2] && !l->shared_bytes;
    for (int k = 0; k < 3; k++) cpu &= !l->block[k];
    if (!cpu)
        mt_ice("codegen: the launch of '%s' has GPU extents (block, shared, grid y/z)", d->name);
    if (d->nparams != l->nargs + 2 || d->nsym || !is_i64_var(&d->params[0]) ||
        !is_i64_var(&d->params[1]))
        mt_ice("codegen: '%s' is not (begin, end) and one param per argument of its launch (%d)",
               d->name, l->nargs);
    for (int i = 0; i < l->nargs; i++)
        if ((l->args[i].buf != NULL) != (d->params[i + 2].buf != NULL))
            mt_ice("codegen: argument %d of the launch of '%s' is a %s, its param not", i, d->name,
                   l->args[i].buf ? "buffer" : "value");
}

/* The value of launch argument i, of the closure field type ft. */
static LLVMValueRef launch_arg(mt_cg *g, const mt_tlaunch *l, int i, LLVMTypeRef ft) {
    const mt_targ *arg = &l->args[i];
    LLVMValueRef v = arg->buf ? mt_cg_map_get(&g->bufs, arg->buf) : mt_cg_expr(g, arg->value);
    if (!v) mt_ice("codegen: buffer '%s' used outside its scope", arg->buf->name);
    if (LLVMTypeOf(v) != ft)
        mt_ice("codegen: argument %d of the launch of '%s' does not have its param's type", i,
               l->callee->name);
    return v;
}

/* run(i64 begin, i64 end, captures...): internal, buffers noalias again,
 * and noinline: called once per chunk, it stays a function of its own, so
 * the noalias parameters keep their meaning without the alias scopes the
 * inliner would attach to every access (inlining a 4000-line body and the
 * alias queries through its scopes were a quarter of the optimization time
 * of a skinny matmul, docs/codegen.md). */
static LLVMValueRef declare_run(mt_cg *g, const mt_tfunc *d, LLVMTypeRef *ft, const char *name,
                                LLVMTypeRef *run_ty) {
    int nc = d->nparams - 2;
    LLVMTypeRef *pt = MT_NEW_ARRAY(g->arena, LLVMTypeRef, nc + 2);
    pt[0] = pt[1] = g->t_i64;
    for (int i = 0; i < nc; i++) pt[i + 2] = ft[i + 1];
    *run_ty = LLVMFunctionType(g->t_void, pt, (unsigned)nc + 2, 0);
    if (LLVMGetNamedFunction(g->mod, name)) mt_ice("codegen: two functions named '%s'", d->name);
    LLVMValueRef run = LLVMAddFunction(g->mod, name, *run_ty);
    LLVMSetLinkage(run, LLVMInternalLinkage);
    param_attr(g, run, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);
    param_attr(g, run, (unsigned)LLVMAttributeFunctionIndex, "noinline", 0);
    for (int i = 0; i < nc; i++) {
        const mt_tbuffer *buf = d->params[i + 2].buf;
        if (!buf) continue;
        unsigned ai = (unsigned)i + 3;
        param_attr(g, run, ai, "noalias", 0);
        param_attr(g, run, ai, "nocapture", 0);
        unsigned al = (unsigned)LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(g->mod),
                                                      mt_cg_mem_type(g, buf->dtype));
        if (al > 1) param_attr(g, run, ai, "align", al);
    }
    return run;
}

/* body_fn(begin, end, closure): loads the captures, calls run(min + begin,
 * min + end, captures...). */
static void gen_trampoline(mt_cg *g, LLVMValueRef body_fn, LLVMValueRef run, LLVMTypeRef run_ty,
                           LLVMTypeRef *ft, int nc) {
    LLVMBuilderRef b = g->b;
    LLVMTypeRef clo_ty = LLVMStructTypeInContext(g->ctx, ft, (unsigned)nc + 1, 0);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, body_fn, "entry"));
    LLVMValueRef *ra = MT_NEW_ARRAY(g->arena, LLVMValueRef, nc + 2);
    LLVMValueRef cp = LLVMGetParam(body_fn, 2);
    LLVMValueRef m0 = LLVMBuildLoad2(b, g->t_i64, LLVMBuildStructGEP2(b, clo_ty, cp, 0, ""), "min");
    ra[0] = LLVMBuildNSWAdd(b, m0, LLVMGetParam(body_fn, 0), "begin");
    ra[1] = LLVMBuildNSWAdd(b, m0, LLVMGetParam(body_fn, 1), "end");
    for (int i = 0; i < nc; i++)
        ra[i + 2] = LLVMBuildLoad2(b, ft[i + 1],
                                   LLVMBuildStructGEP2(b, clo_ty, cp, (unsigned)i + 1, ""), "");
    LLVMBuildCall2(b, run_ty, run, ra, (unsigned)nc + 2, "");
    LLVMBuildRetVoid(b);
}

/* Is s `for v in range(begin, end - begin)`, with begin and end d's first
 * two params: the loop of a parallel body, run over [begin, end) as is? */
static bool body_loop(const mt_tfunc *d, const mt_tstmt *s) {
    if (s->kind != TS_FOR || s->for_kind != MT_FOR_SERIAL || !mt_dtype_is_int(s->var->dtype))
        return false;
    const mt_texpr *e = s->extent;
    return s->min->kind == TE_VAR && s->min->var == d->params[0].var && e->kind == TE_SUB &&
           e->a->kind == TE_VAR && e->a->var == d->params[1].var && mt_texpr_equal(e->b, s->min);
}

/* run's body: the parallel body d in a fresh scope holding only its params.
 * It keeps the launching kernel's streaming plan (llvm_stream.c). */
static void gen_run(mt_cg *g, const mt_tfunc *d, LLVMValueRef run) {
    LLVMBuilderRef b = g->b;
    g->fn = run;
    g->f = d;
    g->vars.slots = NULL, g->vars.cap = g->vars.used = 0;
    g->bufs.slots = NULL, g->bufs.cap = g->bufs.used = 0;
    g->heaps = NULL, g->nheaps = g->capheaps = 0;
    g->entry = new_block(g, "entry");
    LLVMBasicBlockRef rb = new_block(g, "body");
    for (int i = 0; i < d->nparams; i++) {
        const mt_tparam *p = &d->params[i];
        LLVMValueRef v = LLVMGetParam(run, (unsigned)i);
        const char *pn = p->buf ? p->buf->name : p->var->name;
        LLVMSetValueName2(v, pn, strlen(pn));
        if (p->buf) mt_cg_map_put(g->arena, &g->bufs, p->buf, v);
        else bind_var(g, p->var, v);
    }
    LLVMPositionBuilderAtEnd(b, rb);
    g->streamed = false;
    if (body_loop(d, d->body))
        gen_loop(g, d->body, LLVMGetParam(run, 0), LLVMGetParam(run, 1), false);
    else
        gen_stmt(g, d->body);
    mt_cg_stream_fence(g);
    LLVMBuildRetVoid(b);
    LLVMPositionBuilderAtEnd(b, g->entry);
    LLVMBuildBr(b, rb);
}

/* The parallel body d: body_fn (declared as body_ref in the kernel's module)
 * and run, in this module or, with g->split, in a part of its own (body_fn
 * external there, so that the kernel's module can call it), where the
 * closure types are made again in the part's context. */
static void gen_body(mt_cg *g, const mt_tfunc *d, LLVMValueRef body_ref, const char *body_name,
                     LLVMTypeRef *ft) {
    mt_cg saved = *g;
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(g->b);
    const char *run_name = mt_arena_printf(g->arena, "%s%s", g->prefix, d->name);
    LLVMValueRef body_fn = body_ref;
    if (g->split) {
        enter_part(g);
        ft = closure_types(g, d);
        LLVMTypeRef pt[3] = {g->t_i64, g->t_i64, g->t_ptr};
        body_fn = LLVMAddFunction(g->mod, body_name, LLVMFunctionType(g->t_void, pt, 3, 0));
        param_attr(g, body_fn, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);
    }
    LLVMTypeRef run_ty;
    LLVMValueRef run = declare_run(g, d, ft, run_name, &run_ty);
    gen_trampoline(g, body_fn, run, run_ty, ft, d->nparams - 2);
    gen_run(g, d, run);
    if (g->split) { /* the part is done: its builder goes */
        mt_cg_part *p = &g->split->parts[g->split->n - 1];
        LLVMDisposeBuilder(p->b);
        p->b = NULL;
    }
    *g = saved;
    LLVMPositionBuilderAtEnd(g->b, cur);
}

/* T.launch("k_par0", captures..., grid=(n,), min=m)  becomes
 *
 *     closure = {m, captures...}            (an alloca of the kernel)
 *     mt_parallel_for(n, body_fn, &closure)
 *
 * and the parallel body is generated (gen_body). In run, buffer pointers
 * are parameters again, so they keep noalias (they are the kernel's
 * buffers, or its allocations, all distinct), and run stays a function
 * of its own (noinline), so they keep that meaning. */
static void gen_gpu_launch(mt_cg *g, const mt_tlaunch *l);
static LLVMValueRef runtime_fn(mt_cg *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                               int n, LLVMTypeRef *fnty);

static void gen_stop_if_stopped(mt_cg *g);

static void gen_launch(mt_cg *g, const mt_tlaunch *l) {
    const mt_tfunc *d = l->callee;
    const char *kind = mt_tfunc_get_attr(d, MT_ATTR_KIND);
    if (kind && strcmp(kind, MT_KIND_CUDA_KERNEL) == 0 &&
        mt_tfunc_target(g->f)->kind == MT_TARGET_CUDA) { /* a GPU program's host */
        gen_gpu_launch(g, l);
        return;
    }
    check_launch(g, l);
    LLVMValueRef min = l->min ? gen_i64(g, l->min) : LLVMConstInt(g->t_i64, 0, 0);
    LLVMValueRef n = gen_i64(g, l->grid[0]);
    int nc = l->nargs;
    LLVMTypeRef *ft = closure_types(g, d);
    LLVMValueRef *vals = MT_NEW_ARRAY(g->arena, LLVMValueRef, nc > 0 ? nc : 1);
    for (int i = 0; i < nc; i++) vals[i] = launch_arg(g, l, i, ft[i + 1]);
    LLVMTypeRef clo_ty = LLVMStructTypeInContext(g->ctx, ft, (unsigned)nc + 1, 0);
    LLVMTypeRef body_pt[3] = {g->t_i64, g->t_i64, g->t_ptr};
    const char *body_name = mt_arena_printf(g->arena, "%s%s.body", g->prefix, d->name);
    LLVMValueRef body_ref =
        LLVMAddFunction(g->mod, body_name, LLVMFunctionType(g->t_void, body_pt, 3, 0));
    param_attr(g, body_ref, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);
    if (!g->split) LLVMSetLinkage(body_ref, LLVMInternalLinkage);
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
    LLVMPositionBuilderAtEnd(b, g->entry);
    LLVMValueRef clo = LLVMBuildAlloca(b, clo_ty, "closure");
    LLVMPositionBuilderAtEnd(b, cur);
    LLVMBuildStore(b, min, LLVMBuildStructGEP2(b, clo_ty, clo, 0, ""));
    for (int i = 0; i < nc; i++)
        LLVMBuildStore(b, vals[i], LLVMBuildStructGEP2(b, clo_ty, clo, (unsigned)i + 1, ""));
    LLVMTypeRef pf_pt[3] = {g->t_i64, g->t_ptr, g->t_ptr};
    LLVMTypeRef pf_ty = LLVMFunctionType(g->t_void, pf_pt, 3, 0);
    LLVMValueRef pf = LLVMGetNamedFunction(g->mod, "mt_parallel_for");
    if (!pf) {
        pf = LLVMAddFunction(g->mod, "mt_parallel_for", pf_ty);
        param_attr(g, pf, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);
    }
    LLVMValueRef args[3] = {n, body_ref, clo};
    LLVMBuildCall2(b, pf_ty, pf, args, 3, "");
    g->nlaunch++;
    gen_body(g, d, body_ref, body_name, ft);
    if (d->body && mt_tstmt_has_check(d->body)) gen_stop_if_stopped(g);
}

static void gen_for(mt_cg *g, const mt_tstmt *s) {
    if (s->for_kind == MT_FOR_PARALLEL)
        mt_ice("codegen: parallel loop over '%s' in %s: split_host_device must run first",
               s->var->name, g->f->name);
    if (s->for_kind == MT_FOR_THREAD)
        mt_ice("codegen: loop over '%s' is bound to %s: not a CPU loop", s->var->name,
               s->thread_tag ? s->thread_tag : "a thread");
    if (!mt_dtype_is_int(s->var->dtype))
        mt_ice("codegen: loop variable '%s' of dtype %s", s->var->name,
               mt_dtype_str(s->var->dtype));
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
    LLVMValueRef ext = gen_i64(g, s->extent);
    gen_loop(g, s, min, LLVMBuildNSWAdd(g->b, min, ext, "end"), const_ext);
}

/* T.launch of a GPU kernel from a host function (runtime/gpu_launch.h):
 *
 *     slots = {a0, a1, ...}            (an alloca of the entry block each)
 *     args = {&slot0, &slot1, ...}
 *     mt_gpu_launch("name", gx, gy, gz, bx, by, bz, shared, args)
 *
 * The kernel itself is CUDA C (codegen/cuda_c.c), not generated here. */
static void gen_gpu_launch(mt_cg *g, const mt_tlaunch *l) {
    LLVMBuilderRef b = g->b;
    int n = l->nargs;
    LLVMTypeRef arr_ty = LLVMArrayType2(g->t_ptr, (uint64_t)(n > 0 ? n : 1));
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
    LLVMPositionBuilderAtEnd(b, g->entry);
    LLVMValueRef arr = LLVMBuildAlloca(b, arr_ty, "kargs");
    LLVMValueRef *slots = MT_NEW_ARRAY(g->arena, LLVMValueRef, n > 0 ? n : 1);
    LLVMValueRef *vals = MT_NEW_ARRAY(g->arena, LLVMValueRef, n > 0 ? n : 1);
    LLVMPositionBuilderAtEnd(b, cur);
    for (int i = 0; i < n; i++) {
        const mt_targ *arg = &l->args[i];
        vals[i] = arg->buf ? mt_cg_map_get(&g->bufs, arg->buf) : mt_cg_expr(g, arg->value);
        if (!vals[i]) mt_ice("codegen: buffer '%s' used outside its scope", arg->buf->name);
    }
    LLVMPositionBuilderAtEnd(b, g->entry);
    for (int i = 0; i < n; i++) slots[i] = LLVMBuildAlloca(b, LLVMTypeOf(vals[i]), "karg");
    LLVMPositionBuilderAtEnd(b, cur);
    for (int i = 0; i < n; i++) {
        LLVMBuildStore(b, vals[i], slots[i]);
        LLVMValueRef ix[2] = {LLVMConstInt(g->t_i64, 0, 0), LLVMConstInt(g->t_i64, (unsigned)i, 0)};
        LLVMBuildStore(b, slots[i], LLVMBuildGEP2(b, arr_ty, arr, ix, 2, ""));
    }
    LLVMValueRef a[9];
    a[0] = LLVMBuildGlobalStringPtr(b, l->callee->name, "kname");
    for (int k = 0; k < 3; k++) {
        a[1 + k] = l->grid[k] ? gen_i64(g, l->grid[k]) : LLVMConstInt(g->t_i64, 1, 0);
        a[4 + k] = l->block[k] ? gen_i64(g, l->block[k]) : LLVMConstInt(g->t_i64, 1, 0);
    }
    a[7] = l->shared_bytes ? gen_i64(g, l->shared_bytes) : LLVMConstInt(g->t_i64, 0, 0);
    a[8] = arr;
    LLVMTypeRef pt[9] = {g->t_ptr, g->t_i64, g->t_i64, g->t_i64, g->t_i64,
                         g->t_i64, g->t_i64, g->t_i64, g->t_ptr};
    LLVMTypeRef fnty;
    LLVMValueRef fn = runtime_fn(g, "mt_gpu_launch", g->t_void, pt, 9, &fnty);
    LLVMBuildCall2(b, fnty, fn, a, 9, "");
    g->nlaunch++;
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
    bool gpu = mt_tfunc_target(g->f)->kind == MT_TARGET_CUDA; /* a GPU program's host */
    if (!gpu && (buf->ndim == 0 || mt_te_is_const_int(buf->shape[0], &n))) {
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
    /* mt_kernel_malloc (runtime/parallel.h): malloc that checks count * esize
     * and records a failure for the executor; noalias like malloc's result */
    LLVMValueRef args[2] = {buf->ndim ? gen_i64(g, buf->shape[0]) : LLVMConstInt(g->t_i64, 1, 0),
                            LLVMConstInt(g->t_i64, (unsigned long long)esize, 0)};
    LLVMTypeRef fnty, pt[2] = {g->t_i64, g->t_i64};
    /* on a GPU: device memory between its kernels (runtime/gpu_launch.h) */
    LLVMValueRef fn = runtime_fn(g, gpu ? "mt_gpu_alloc" : "mt_kernel_malloc", g->t_ptr, pt, 2, &fnty);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(g->ctx, noalias, 0));
    LLVMValueRef p = LLVMBuildCall2(g->b, fnty, fn, args, 2, buf->name);
    mt_cg_map_put(g->arena, &g->bufs, buf, p);
    return p;
}

static void free_heap(mt_cg *g, LLVMValueRef heap) {
    LLVMTypeRef fnty;
    bool gpu = mt_tfunc_target(g->f)->kind == MT_TARGET_CUDA;
    LLVMValueRef fn = runtime_fn(g, gpu ? "mt_gpu_free" : "free", g->t_void, &g->t_ptr, 1, &fnty);
    LLVMBuildCall2(g->b, fnty, fn, &heap, 1, "");
}

/* heap (NULL: on the stack) is live until alloc_end. */
static void push_heap(mt_cg *g, LLVMValueRef heap) {
    if (!heap) return;
    if (g->nheaps == g->capheaps) {
        int cap = g->capheaps ? 2 * g->capheaps : 8;
        LLVMValueRef *h = MT_NEW_ARRAY(g->arena, LLVMValueRef, cap);
        if (g->nheaps) memcpy(h, g->heaps, sizeof *h * (size_t)g->nheaps);
        g->heaps = h, g->capheaps = cap;
    }
    g->heaps[g->nheaps++] = heap;
}

static void alloc_end(mt_cg *g, const mt_tbuffer *buf, LLVMValueRef heap) {
    mt_cg_map_put(g->arena, &g->bufs, buf, NULL);
    if (!heap) return;
    if (g->nheaps > 0 && g->heaps[g->nheaps - 1] == heap) g->nheaps--;
    free_heap(g, heap);
}

/* The function stops here: frees the heap buffers live here and returns. */
static void gen_stop(mt_cg *g) {
    for (int i = g->nheaps - 1; i >= 0; i--) free_heap(g, g->heaps[i]);
    mt_cg_stream_fence(g);
    LLVMBuildRetVoid(g->b);
}

/* After a parallel body with checks: stop when one of its chunks stopped. */
static void gen_stop_if_stopped(mt_cg *g) {
    LLVMTypeRef fnty;
    LLVMValueRef fn = runtime_fn(g, "mt_kernel_stopped", g->t_i1, NULL, 0, &fnty);
    LLVMValueRef stopped = LLVMBuildCall2(g->b, fnty, fn, NULL, 0, "stopped");
    LLVMBasicBlockRef stop = new_block(g, "stop"), cont = new_block(g, "go");
    LLVMBuildCondBr(g->b, stopped, stop, cont);
    LLVMPositionBuilderAtEnd(g->b, stop);
    gen_stop(g);
    LLVMPositionBuilderAtEnd(g->b, cont);
}

/* T.check_bounds: see the top of the file. */
static void gen_check(mt_cg *g, const mt_tstmt *s) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef ok = mt_cg_cast(g, mt_cg_expr(g, s->cond), s->cond->dtype, MT_BOOL);
    LLVMBasicBlockRef oob = new_block(g, "oob"), cont = new_block(g, "inbounds");
    LLVMBuildCondBr(b, ok, cont, oob);
    LLVMPositionBuilderAtEnd(b, oob);
    int n = s->nidx;
    LLVMTypeRef arr_ty = LLVMArrayType2(g->t_i64, (uint64_t)(2 * n > 0 ? 2 * n : 1));
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
    LLVMPositionBuilderAtEnd(b, g->entry);
    LLVMValueRef arr = LLVMBuildAlloca(b, arr_ty, "oob.vals");
    LLVMPositionBuilderAtEnd(b, cur);
    for (int i = 0; i < 2 * n; i++) {
        LLVMValueRef v = gen_i64(g, i < n ? s->idx[i] : s->dims[i - n]);
        LLVMValueRef ix[2] = {LLVMConstInt(g->t_i64, 0, 0), LLVMConstInt(g->t_i64, (unsigned)i, 0)};
        LLVMBuildStore(b, v, LLVMBuildGEP2(b, arr_ty, arr, ix, 2, ""));
    }
    LLVMValueRef a[6] = {LLVMBuildGlobalStringPtr(b, s->name, "oob.name"),
                         LLVMConstInt(g->t_i32, s->check_store ? 1 : 0, 0),
                         LLVMConstInt(g->t_i32, (unsigned)s->loc.line, 0),
                         LLVMConstInt(g->t_i32, (unsigned)s->loc.col, 0),
                         LLVMConstInt(g->t_i32, (unsigned)n, 0), arr};
    LLVMTypeRef pt[6] = {g->t_ptr, g->t_i32, g->t_i32, g->t_i32, g->t_i32, g->t_ptr};
    LLVMTypeRef fnty;
    LLVMValueRef fn = runtime_fn(g, "mt_kernel_oob", g->t_void, pt, 6, &fnty);
    param_attr(g, fn, (unsigned)LLVMAttributeFunctionIndex, "cold", 0);
    LLVMBuildCall2(b, fnty, fn, a, 6, "");
    gen_stop(g);
    LLVMPositionBuilderAtEnd(b, cont);
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
        push_heap(g, heap);
        if (!heap) { /* on the stack */
            gen_stmt(g, s->body);
            alloc_end(g, s->buf, heap);
            return;
        }
        /* out of memory: skip the body (the executor fails the run) */
        LLVMBasicBlockRef ok = new_block(g, "alloc.ok"), done = new_block(g, "alloc.done");
        LLVMBuildCondBr(g->b, LLVMBuildIsNotNull(g->b, heap, ""), ok, done);
        LLVMPositionBuilderAtEnd(g->b, ok);
        gen_stmt(g, s->body);
        alloc_end(g, s->buf, heap);
        LLVMBuildBr(g->b, done);
        LLVMPositionBuilderAtEnd(g->b, done);
        return;
    }
    case TS_EVAL:
        if (mt_tstmt_is_prefetch(s)) mt_cg_prefetch(g, s->value);
        else mt_cg_expr(g, s->value);
        return;
    case TS_LAUNCH: gen_launch(g, s->launch); return;
    case TS_CHECK: gen_check(g, s); return;
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
    if (p->var->dtype == MT_BFLOAT16) return g->t_i16;
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
    g->nlaunch = 0;
    g->heaps = NULL, g->nheaps = g->capheaps = 0;
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
            if (t == MT_BFLOAT16) v = mt_cg_bf16_to_float(g, v);
            bind_var(g, p->var, v);
        }
    }
    for (int i = 0; i < f->nsym; i++) {
        LLVMValueRef v = LLVMGetParam(fn, (unsigned)(f->nparams + i));
        LLVMSetValueName2(v, f->sym_vars[i]->name, strlen(f->sym_vars[i]->name));
        bind_var(g, f->sym_vars[i], mt_cg_cast(g, v, MT_INT64, f->sym_vars[i]->dtype));
    }
    LLVMValueRef *heap = MT_NEW_ARRAY(g->arena, LLVMValueRef, f->nallocs > 0 ? f->nallocs : 1);
    for (int i = 0; i < f->nallocs; i++) push_heap(g, heap[i] = alloc_begin(g, f->allocs[i]));
    mt_cg_stream_plan(g, f);
    g->streamed = false;
    if (f->body) gen_stmt(g, f->body);
    for (int i = f->nallocs - 1; i >= 0; i--) alloc_end(g, f->allocs[i], heap[i]);
    mt_cg_stream_fence(g);
    LLVMBuildRetVoid(g->b);
    /* A launch hands the buffer pointers to mt_parallel_for in its closure:
     * that is a capture, so the promise is withdrawn. */
    if (g->nlaunch > 0) {
        unsigned k = LLVMGetEnumAttributeKindForName("nocapture", 9);
        for (int i = 0; i < f->nparams; i++)
            if (f->params[i].buf) LLVMRemoveEnumAttributeAtIndex(fn, (unsigned)i + 1, k);
    }
    LLVMPositionBuilderAtEnd(g->b, g->entry);
    LLVMBuildBr(g->b, body);
}

/* ---- the module ------------------------------------------------------------ */

/* Raises the LLVM verifier's complaint about mod, if any. */
static void verify(mt_arena *a, LLVMModuleRef mod) {
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        const char *m = mt_arena_strdup(a, msg ? msg : "");
        LLVMDisposeMessage(msg);
        mt_ice("codegen: LLVM verifier: %s", m);
    }
    LLVMDisposeMessage(msg);
}

typedef struct build_state {
    LLVMModuleRef mod;  /* disposed on error */
    LLVMBuilderRef b;   /* always disposed */
} build_state;

LLVMModuleRef mt_llvm_build_module(mt_arena *a, LLVMContextRef ctx, const char *mod_name,
                                   const char *prefix, const char *triple, const char *features,
                                   const char *data_layout, mt_tfunc *const *funcs, int n,
                                   mt_cg_split *split) {
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
        set_context(g, ctx);
        g->mod = st->mod;
        g->b = st->b;
        g->x86 = triple && (strncmp(triple, "x86_64", 6) == 0 || strncmp(triple, "i686", 4) == 0);
        g->avx512 = g->x86 && mt_target_has_feature(features, "avx512f");
        g->prefix = prefix;
        g->split = split;
        int first_part = split ? split->n : 0;
        if (split) {
            split->mod_name = mod_name;
            split->triple = triple;
            split->data_layout = data_layout;
        }
        for (int i = 0; i < n; i++) gen_func(g, funcs[i], prefix);
        LLVMDisposeBuilder(st->b);
        st->b = NULL;
        verify(a, st->mod);
        for (int i = first_part; split && i < split->n; i++) verify(a, split->parts[i].mod);
        mt_err_pop(&fr);
        return st->mod;
    }
    mt_err_pop(&fr);
    if (st->b) LLVMDisposeBuilder(st->b);
    if (st->mod) LLVMDisposeModule(st->mod);
    mt_fail(fr.status, fr.loc, "%s", fr.msg);
}

/* ---- the program's launches ------------------------------------------------- */

typedef struct launch_count {
    mt_arena *a;
    mt_ptrmap n;     /* device function -> 1 + times launched */
    const char *bad; /* a launched function that is not a device function given */
} launch_count;

static void count_launch(mt_tvisitor *v, const mt_tstmt *s) {
    launch_count *lc = v->ctx;
    if (s->kind == TS_LAUNCH) {
        if (mt_ptrmap_get(&lc->n, s->launch->callee) == 0) lc->bad = s->launch->callee->name;
        else mt_ptrmap_add(lc->a, &lc->n, s->launch->callee, 1);
    }
    mt_tvisit_stmt_children(v, s);
}

void mt_llvm_check_launches(mt_arena *a, const mt_codegen_in *in) {
    launch_count lc = {a, {0}, NULL};
    for (int i = 0; i < in->ndevice; i++) mt_ptrmap_add(a, &lc.n, in->device[i], 1);
    mt_tvisitor v = {NULL, count_launch, &lc};
    for (int i = 0; i < in->nhost; i++) mt_tvisit_stmt(&v, in->host[i]->body);
    for (int i = 0; i < in->ndevice; i++) mt_tvisit_stmt(&v, in->device[i]->body);
    if (lc.bad) mt_ice("codegen: '%s' is launched but not given as a device function", lc.bad);
    for (int i = 0; i < in->ndevice; i++) {
        int k = mt_ptrmap_get(&lc.n, in->device[i]) - 1;
        if (k != 1)
            mt_ice("codegen: device function '%s' is launched %d times (the CPU backend: once)",
                   in->device[i]->name, k);
    }
}
