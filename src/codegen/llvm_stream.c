/*
 * llvm_stream.c -- streaming (non-temporal) stores for large outputs.
 *
 * A kernel that writes a buffer much larger than the last-level cache and
 * never reads it back gains nothing from having the lines in cache: a
 * normal store first reads each line from memory (write-allocate), then
 * evicts it again, so a row-wise layer_norm over 64 MiB moves 3 bytes for
 * every 2 it needs. A non-temporal store writes whole lines around the
 * caches. Measured on this machine (docs/performance.md): layer_norm
 * 4096 x 4096 on one thread 9.7-10.2 ms with normal stores, 6.8-7.0 ms with
 * streaming ones.
 *
 * Which stores. A buffer streams when it is a parameter of the loop
 * function (an output or an intermediate of the run), its shape is constant
 * and at least MT_STREAM_MIN_BYTES, and the function never loads from it,
 * nor do the parallel bodies it launches (a kernel that reads back what it
 * wrote would fetch it from memory again); the bodies keep the plan of the
 * kernel that launches them. Of its stores, the full-vector ones (a
 * unit-stride ramp of a multiple of the target's cache line, 64 bytes) stream; scalar tails and
 * narrower vectors do not.
 *
 * Alignment. x86's non-temporal vector stores need an address aligned to
 * the vector (LLVM only selects them for such stores), and a caller's
 * output tensor may sit anywhere. So each such store tests its address:
 * aligned, a streaming store; not, a normal one. The branch goes the same
 * way for every store of a row, so it is predicted; the kernels that
 * stream are bound by memory, not by these two instructions.
 *
 * Ordering. Non-temporal stores are weakly ordered: a function that made
 * any ends with an sfence before it returns, so the stores of a parallel
 * chunk are visible before the pool counts the chunk done, and those of a
 * kernel before the executor runs the next one. x86 targets only (other
 * targets keep normal stores).
 */
#include "codegen/llvm_internal.h"
#include "support/common.h"

/* The least size (bytes) of a streamed buffer: the size of a large
 * last-level cache (this machine: 32 MiB). Below it a buffer written now is
 * likely still cached when the next kernel reads it. */
enum { MT_STREAM_MIN_BYTES = 32 << 20 };

static bool const_bytes(const mt_tbuffer *b, int64_t *out) {
    int64_t n = mt_dtype_size(b->dtype);
    for (int d = 0; d < b->ndim; d++) {
        int64_t e;
        if (!mt_te_is_const_int(b->shape[d], &e) || e < 0 || !mt_mul_ok(n, e, &n)) return false;
    }
    *out = n;
    return true;
}

typedef struct reads {
    const mt_tbuffer *buf;
    bool found;
} reads;

static void find_load(mt_tvisitor *v, const mt_texpr *e) {
    reads *r = v->ctx;
    if (e->kind == TE_LOAD && e->buf == r->buf) r->found = true;
    if (!r->found) mt_tvisit_expr_children(v, e);
}

/* ... also in the parallel bodies the function launches (they share its
 * buffer objects). */
static void find_load_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_LAUNCH) mt_tvisit_stmt(v, s->launch->callee->body);
    mt_tvisit_stmt_children(v, s);
}

void mt_cg_stream_plan(mt_cg *g, const mt_tfunc *f) {
    g->nstream = 0;
    g->stream = MT_NEW_ARRAY(g->arena, const mt_tbuffer *, f->nparams > 0 ? f->nparams : 1);
    if (!g->x86) return; /* the fence below is x86's */
    for (int i = 0; i < f->nparams; i++) {
        const mt_tbuffer *b = f->params[i].buf;
        int64_t bytes;
        if (!b || !const_bytes(b, &bytes) || bytes < MT_STREAM_MIN_BYTES) continue;
        reads r = {b, false};
        mt_tvisitor v = {find_load, find_load_stmt, &r};
        if (f->body) mt_tvisit_stmt(&v, f->body);
        if (!r.found) g->stream[g->nstream++] = b;
    }
}

bool mt_cg_stream_store(mt_cg *g, const mt_tbuffer *buf, LLVMValueRef ptr, LLVMValueRef v,
                        int bytes) {
    int line = mt_tfunc_target(g->f)->cache_line_bytes; /* a store that fills whole lines */
    if (line <= 0 || bytes % line) return false; /* (a GPU target's host code: no line size) */
    bool streams = false;
    for (int i = 0; i < g->nstream; i++) streams |= g->stream[i] == buf;
    if (!streams) return false;
    LLVMBasicBlockRef nt = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "stream");
    LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "store");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "stored");
    LLVMValueRef low = LLVMBuildAnd(g->b, LLVMBuildPtrToInt(g->b, ptr, g->t_i64, ""),
                                    LLVMConstInt(g->t_i64, (unsigned long long)line - 1, 0), "");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, low, LLVMConstInt(g->t_i64, 0, 0), ""),
                    nt, plain);
    LLVMPositionBuilderAtEnd(g->b, nt);
    LLVMValueRef st = LLVMBuildStore(g->b, v, ptr);
    LLVMSetAlignment(st, (unsigned)line);
    LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 1, 0));
    LLVMSetMetadata(st, LLVMGetMDKindIDInContext(g->ctx, "nontemporal", 11),
                    LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, &one, 1)));
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, plain);
    st = LLVMBuildStore(g->b, v, ptr);
    LLVMSetAlignment(st, (unsigned)mt_dtype_size(buf->dtype));
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, done);
    g->streamed = true;
    return true;
}

void mt_cg_stream_fence(mt_cg *g) {
    if (!g->streamed) return;
    LLVMTypeRef ty = LLVMFunctionType(g->t_void, NULL, 0, 0);
    LLVMValueRef f = LLVMGetNamedFunction(g->mod, "llvm.x86.sse.sfence");
    if (!f) f = LLVMAddFunction(g->mod, "llvm.x86.sse.sfence", ty);
    LLVMBuildCall2(g->b, ty, f, NULL, 0, "");
}
