/*
 * tir_passes.h -- every pass over loop functions (mt_tfunc), one signature.
 *
 *     mt_tfunc *mt_tir_<name>(mt_arena *a, mt_tfunc *f);
 *
 * A pass never modifies f or any node reachable from it (nodes are
 * immutable): it returns f itself when it changed nothing, otherwise a new
 * function sharing every untouched subtree with f. New nodes come from the
 * arena `a`. A pass that finds an input outside what it assumes reports it
 * with mt_ice (these are compiler-internal invariants, not user errors).
 *
 * The pass list, with the names dump_after uses, is passes/registry.c.
 * docs/tir.md describes each pass in more detail. split_host_device, which
 * adds functions, has a signature of its own (module passes, below) and
 * the pipeline calls it after the table's passes.
 */
#ifndef MT_PASSES_TIR_TIR_PASSES_H
#define MT_PASSES_TIR_TIR_PASSES_H

#include "tir/tir.h"

/* check_bounds -- assumes block form, the first TIR pass; the pipeline runs
 * it only with mt_compile_options.check_bounds. Functions the compiler made
 * (not hand_written) are returned as they are. Guarantees: every load and
 * store of a hand-written function that is not proven in bounds (over the
 * ranges of the loops around it) is preceded, at the outermost place its
 * index range can be carried to without passing an if, a T.where or a
 * block's init, by a TS_CHECK that is false exactly when the access (or,
 * hoisted, one the loops it was carried out of would make) leaves its
 * buffer; what the function computes when no check fails is unchanged
 * (check_bounds.c). */
mt_tfunc *mt_tir_check_bounds(mt_arena *a, mt_tfunc *f);

/* inline_producers -- assumes block form; the body is a sequence of
 * statements, typically loop nests each holding one block, and the
 * intermediates are in f->allocs. Guarantees: every block that fully writes
 * an intermediate with a pure spatial store (B[v0..vk] = expr, no init or
 * predicate, loops covering exactly its domain, sole writer of B) is
 * substituted into every later load of B and removed with its loop nest and
 * B's allocation; consumers' T.reads name the producer's inputs instead of B.
 * Everything else is left as it was. */
mt_tfunc *mt_tir_inline_producers(mt_arena *a, mt_tfunc *f);

/* lower_blocks -- assumes block form (blocks may nest). Guarantees: no
 * TS_BLOCK remains; iter vars are replaced by their bound values; a T.where
 * predicate becomes a TS_IF around the body (and the init); an init runs under
 * `if r0 == 0 and ...` (the reduce iter values at their first iteration)
 * before the body; block alloc_buffers become TS_ALLOC around the block's
 * statements, and f->allocs TS_ALLOC around the whole body (f->nallocs = 0).
 * Buffers keep their shapes (see flatten_buffers). */
mt_tfunc *mt_tir_lower_blocks(mt_arena *a, mt_tfunc *f);

/* compact_buffers -- assumes lowered form (multi-dimensional indices);
 * after lower_blocks, before flatten_buffers. Guarantees: an
 * allocation X of constant shape whose accesses all lie in one sequence P
 * (reached from the allocation through loops and lets whose bounds and
 * values read no X, and single touching items), where the first item
 * touching X is a perfect nest of loops from 0 (extents constant or a
 * split's T.min(c, ..), free of P's variables and of loads) around one
 * store X[o_0 + v_0, ...] (o_d free of P's variables and of loads; every
 * nest variable exactly one v_d; v_d absent: extent 1) that reads no X, and every later item
 * only loads X at o_d + r_d with r_d in [0, the extent of v_d) (over the
 * loops' ranges; for a T.min extent, r_d the variable of a loop from 0 of
 * that same extent), becomes a buffer of the box's shape (the constant
 * bounds; same name, dtype, scope) allocated around P, indexed by v_d and
 * r_d, when that is smaller; what is computed is unchanged (each execution
 * of P writes the whole box before reading it). Indices through // and %
 * are simplified first with the ranges around them. On a GPU target only
 * shared-scope X, with P under no threadIdx loop, W's loops possibly
 * thread loops, and a box as large as X moved too (into the block), up to
 * 48 KiB. Everything else is left as it was. */
mt_tfunc *mt_tir_compact_buffers(mt_arena *a, mt_tfunc *f);
/* flatten_buffers -- assumes lowered form (no TS_BLOCK; mt_ice otherwise).
 * Guarantees: every buffer (params, f->allocs, TS_ALLOC) is one-dimensional
 * with extent prod(shape) (an expression when dims are symbolic; rank 0
 * becomes (1,)), every load and store has one row-major linear index of dtype
 * int64, and each old buffer maps to one new buffer of the same name, dtype
 * and scope. Buffers that are already 1-D are kept as they are. */
mt_tfunc *mt_tir_flatten_buffers(mt_arena *a, mt_tfunc *f);

/* partition -- assumes lowered, flattened form, before simplify.
 * Guarantees: a serial or vectorized loop with constant min and extent
 * whose body is stores, lets, ifs, evaluations and checks, and has a T.Select or if condition comparing the loop
 * variable plus a constant with a constant point P strictly inside its range
 * (`i < P`, `i + k >= c`, ...), is replaced by a sequence of two loops of the
 * same kind, [min, P) and, from 0, the rest (i := P + i_1), each partitioned
 * again, at most 8 parts per loop; the iterations run in the same order and
 * compute the same. The simplify that follows decides the conditions in
 * each part (concat: one plain copy per input). */
mt_tfunc *mt_tir_partition(mt_arena *a, mt_tfunc *f);
/* partition_tails -- assumes lowered, flattened form, before simplify.
 * Guarantees: on a CPU target, a serial, parallel or unrolled loop with
 * constant min m and extent N >= 2 whose body (at most 4096 statements)
 * holds an unrolled loop (or a vectorized loop with c <= 64) of extent T.min(c, R) (either order;
 * c a constant, R of the loop's variable and constants) with R >= c in
 * every iteration but the last and R < c in the last, is replaced by the
 * loop over [m, m + N - 1) and its body with the variable m + N - 1 and
 * fresh loop and let variables and allocations (the split's partial tile peeled; inner
 * loops first); same order, same
 * results. The simplify that follows folds the T.min in both parts. */
mt_tfunc *mt_tir_partition_tails(mt_arena *a, mt_tfunc *f);
/* simplify -- assumes either form. Guarantees: scalar constant subexpressions
 * are folded in their dtype (integers wrap, floordiv/floormod follow Python,
 * division by zero and float16 are left alone), algebraic identities
 * (x*1, x+0, x-0, int x*0, int x//1, x%1, not not x, (x+c1)+c2, and in int64
 * sums (x // c) * c + x % c -> x for constant c != 0) are applied,
 * integer floordiv, floormod, min, max and comparisons that the ranges of
 * the loop and let variables in scope decide are folded (tir/arith.h),
 * ifs with constant conditions keep only the live branch, bounds checks
 * whose condition folds to True are removed, trivially
 * substitutable lets are inlined, empty or zero-trip loops are removed and
 * sequences are flat with no no-op statements. An empty sequence is the no-op. */
mt_tfunc *mt_tir_simplify(mt_arena *a, mt_tfunc *f);
/* The same on one statement, with the ranges of the variables bound
 * around it (compact_buffers). */
struct mt_bounds;
mt_tstmt *mt_tir_simplify_stmt(mt_arena *a, const struct mt_bounds *outer, mt_tstmt *s);

/* remove_unit_loops -- assumes either form. Guarantees: no loop with a
 * constant extent of 1 remains except thread-bound ones; its variable is
 * replaced by the loop's min in the body. Leaves `0 + x`-like leftovers to
 * simplify. */
mt_tfunc *mt_tir_remove_unit_loops(mt_arena *a, mt_tfunc *f);

/* vectorize -- assumes lowered, flattened form. Guarantees: a `vectorized`
 * innermost loop from 0 whose body is stores and lets over float32/float64/
 * int32/int64 buffers, with its variable only in indices `b + i` or free of
 * it, becomes a loop of vector steps (T.Ramp / T.Broadcast, the target's vector step of the
 * widest element, halved while longer than a constant bound of the extent, down to 16 bytes) and a scalar tail loop; any other loop is left as it is. */
mt_tfunc *mt_tir_vectorize(mt_arena *a, mt_tfunc *f);

/* transpose_tiles -- assumes lowered, flattened form, after vectorize and
 * simplify. Guarantees: on CPU targets, a loop of N iterations (N a power
 * of two from 4 to 16) whose body is straight (sequences, lets, stores)
 * and loads N-lane vectors along another axis (a T.Ramp of base `b + i`,
 * b and the stride free of i and of the body's lets and reading no memory;
 * at most two such loads, of buffers the body does not store) is replaced
 * by N contiguous loads of the input rows, log2 N
 * rounds of T.Shuffle that transpose them in registers, and N copies of
 * the body; what it computes is unchanged. Anything else is left as it is. */
mt_tfunc *mt_tir_transpose_tiles(mt_arena *a, mt_tfunc *f);

/* tir_cse -- assumes lowered form. Guarantees: within each store, let,
 * evaluate and if condition, a subexpression of three or more nodes other
 * than a T.Ramp or integer/bool arithmetic that loads nothing (index and
 * predicate arithmetic stay visible to codegen) that occurred more than
 * once is computed once, by a let
 * (cse_v1, cse_v2, ...) in front of the statement; what the statement
 * computes is unchanged (its operators evaluate all operands, and nothing
 * writes memory within one statement). */
mt_tfunc *mt_tir_cse(mt_arena *a, mt_tfunc *f);

/* ---- module passes ----------------------------------------------------------
 * A pass that adds functions takes all of a program's functions at once. */

/* The functions of a program after split_host_device. */
typedef struct mt_tsplit {
    mt_tfunc **host;     /* [n]: host[i] is funcs[i] with its parallel loops launched */
    mt_tfunc **device;   /* the device functions made, in order of their launches */
    int ndevice;
    int *first_device;   /* [n + 1]: host[i] launches device[first_device[i] ..
                            first_device[i + 1]) */
} mt_tsplit;

/* split_host_device -- assumes lowered, flattened form, the last pass (it
 * runs after tir_cse), and no TS_LAUNCH yet. Guarantees: no MT_FOR_PARALLEL
 * loop remains. Each outermost parallel loop of constant extent other than 0
 * or 1 (or of a symbolic extent) is replaced by a TS_LAUNCH of a new device
 * function of kind "parallel_body" (tir.h): params (begin, end, captures...),
 * body the loop over [begin, end) as a serial loop, with every parallel loop
 * nested in it serial; the launch has grid[0] = the loop's extent, min = its
 * min, and one argument per capture (what the body uses that is bound
 * outside it: buffers, the variables of their shapes, sym vars, scalar
 * params, enclosing loop and let variables, in order of first use). Other
 * parallel loops become serial. host[i] is funcs[i] itself when it has no
 * parallel loop; device names are "<host>_par<k>", unique in the program.
 * The device functions share the host's nodes (variables, buffers, the loop
 * body). GPU kernels: each outermost loop bound to blockIdx (a function of a
 * CUDA target, tir.h "GPU kernels") is replaced by a TS_LAUNCH of a device
 * function "<host>_kernel<k>" of kind "cuda_kernel": params the captures,
 * body the loop itself; the launch's grid the blockIdx loops' extents, its
 * block the threadIdx loops' extents. */
void mt_tir_split_host_device(mt_arena *a, mt_tfunc *const *funcs, int n, mt_tsplit *out);

/* emulate_gpu -- f in the GPU kernel form (tir.h) as a CPU function for
 * target host: the outermost blockIdx loop parallel, every other index loop
 * serial (emulate_gpu.c). Functions of other targets are returned as they
 * are. Runs on the lowered form, before split_host_device. */
mt_tfunc *mt_tir_emulate_gpu(mt_arena *a, mt_tfunc *f, const mt_target_desc *host);

#endif
