/*
 * planner.h -- from the optimized graph function and its compiled kernels
 * to the plan the executor runs (runtime/executor.h).
 *
 * This layer sits between the compiler and the runtime: it knows the graph
 * IR (graph/graph.h) and the run plan's format, and nothing of LLVM or of
 * the public API. The API (src/api.c) calls it once per compilation, after
 * code generation has given every lowered loop function an address.
 */
#ifndef MT_PLANNER_PLANNER_H
#define MT_PLANNER_PLANNER_H

#include "graph/graph.h"
#include "runtime/executor.h"
#include "support/arena.h"

/* Fills *plan for entry function f of module m: lowered[i] is m->tfuncs[i]
 * as compiled, at address fn_addrs[i]. Arrays live in arena a. Internal
 * errors (a callee that is not in the module, a symbolic dim no parameter
 * binds) go through mt_ice.
 *
 * With bound parameters (mt_gvar.bound), the bindings computed once from
 * them (mt_gfunc_bound_values) go to *once instead: its parameters are f's
 * bound parameters in order, its results the values of theirs that the
 * rest of f reads or returns (the hoisted values); *plan then takes f's
 * parameters followed by the hoisted values. once->ninstrs is 0 (and
 * *plan is f's whole program) when nothing is hoisted. */
void mt_plan_build(mt_arena *a, const mt_gmodule *m, const mt_gfunc *f, mt_tfunc *const *lowered,
                   void *const *fn_addrs, mt_plan *plan, mt_plan *once);

#endif
