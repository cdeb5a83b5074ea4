/*
 * mtc.c -- the minitriton command-line driver (docs/mtc.md is its manual).
 *
 *     mtc [options] FILE.py
 *
 * compiles FILE.py with mt_jit_compile (--time-passes prints how long each
 * phase took), prints the stages asked for with --emit, and with --run (or any option that implies it) runs the kernel on
 * tensors read from .npy files or filled with seeded random data, then prints
 * the results the way NumPy's print() does, writes them to .npy files, or
 * times the kernel.
 *
 * The program is a straight line: parse options (every usage error is found
 * before anything is compiled), read the source, compile, dump, build the
 * arguments, run, report. Exit statuses: 0 ok, 1 compile error (including an
 * unavailable --emit stage), 2 usage error (bad option, unreadable source,
 * a parameter with no data, a symbolic dim with no size), 3 runtime error
 * (a bad .npy file, a dtype/shape mismatch, a failing run, an output that
 * cannot be written).
 *
 * Printing: mtc_print.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "minitriton.h"
#include "mtc_print.h"
#include "npy.h"

static const char USAGE[] =
    "usage: mtc [options] FILE.py\n"
    "\n"
    "Compile a minitriton kernel; print its stages; run it on .npy or random data.\n"
    "\n"
    "  --entry NAME            entry function (default: the last graph function)\n"
    "  --target cpu|cuda       code generation target (default: cpu)\n"
    "  --arch sm_80|sm_86|sm_89|sm_90\n"
    "                          GPU architecture for --target cuda (default: the GPU's, else sm_90)\n"
    "  --emulate               run the GPU kernels of --target cuda on the CPU, under\n"
    "                          the CUDA execution model (see docs/gpu.md)\n"
    "  --check-bounds          check the loads and stores of hand-written loop functions\n"
    "                          at run time (an access outside its buffer fails the run)\n"
    "  --emit STAGE[,STAGE...] print stages: ast graph graph-opt tir tir-sched\n"
    "                          llvm asm cuda plan dot (Graphviz) schedule (how\n"
    "                          each kernel was scheduled, as @T.schedule text)\n"
    "  --dump-after PASS[,PASS...]|all\n"
    "                          print the IR after those passes (a pass that runs\n"
    "                          twice prints twice: simplify#1, simplify#2)\n"
    "  --run                   run the kernel and print its results\n"
    "  --input NAME=FILE.npy   data for parameter NAME (a scalar takes a 0-d array)\n"
    "  --param NAME=FILE.npy   bind parameter NAME to FILE's data at compile time\n"
    "                          (model weights: the kernel no longer takes it)\n"
    "  --random                fill parameters without --input with random data\n"
    "  --seed N                seed for --random (default 0)\n"
    "  --dim NAME=N            size of symbolic dim NAME for --random\n"
    "  --output FILE.npy       write the (single) result to FILE.npy\n"
    "  --output-dir DIR        write results to DIR/out0.npy, DIR/out1.npy, ...\n"
    "  --bench N               time N runs after one warm-up; print median/min/max\n"
    "  --time-passes           print the compile time of each phase on stderr\n"
    "  --warm N                also compile N more times (cache off) and print the\n"
    "                          phases of the median warm compile (implies\n"
    "                          --time-passes)\n"
    "  --threads N             threads for parallel loops (default: all cores)\n"
    "  --tuning-log FILE       compile with the knobs of the tuning log FILE\n"
    "  --tune TRIALS           first tune every kernel on this machine, measuring at\n"
    "                          most TRIALS candidates each, and write the best knobs\n"
    "                          to --tuning-log FILE (needs it)\n"
    "  --tune-seconds S        at most S seconds of tuning per kernel (default 60)\n"
    "  --cache-dir DIR         the disk cache of compiled code (default:\n"
    "                          $MINITRITON_CACHE_DIR, else ~/.cache/minitriton)\n"
    "  --no-disk-cache         compile without the disk cache\n"
    "  -h, --help              print this help\n"
    "  --version               print the minitriton version\n"
    "\n"
    "--input, --random, --output, --output-dir and --bench imply --run.\n"
    "Options take their value as '--opt value' or '--opt=value'.\n"
    "FILE.py may be '-' to read the source from standard input.\n"
    "\n"
    "exit status: 0 ok, 1 compile error, 2 usage error, 3 runtime error\n";

/* ---- small utilities ---------------------------------------------------- */

/* Parses a whole decimal integer in [lo, hi]. */
static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* ---- options --------------------------------------------------------------- */

typedef struct name_value {
    char *name;  /* parameter or dim name */
    char *value; /* file path (--input) */
    int64_t n;   /* size (--dim) */
    bool used;   /* matched a parameter or dim of the kernel */
} name_value;

typedef struct options {
    const char *file;            /* FILE.py, "-" for stdin */
    const char *entry;           /* --entry or NULL */
    mt_target target;            /* --target */
    const char *arch;            /* --arch or NULL */
    bool emulate;                /* --emulate */
    bool check_bounds;           /* --check-bounds */
    mt_stage emit[MT_STAGE_COUNT_];
    int nemit;                   /* stages in emit, in the order given */
    const char *dump_after;      /* --dump-after or NULL */
    bool run;                    /* --run or implied */
    bool random;                 /* --random */
    uint64_t seed;               /* --seed */
    name_value *inputs;          /* --input NAME=FILE */
    int ninputs;
    name_value *params;          /* --param NAME=FILE */
    int nparams;
    name_value *dims;            /* --dim NAME=N */
    int ndims;
    const char *output;          /* --output FILE */
    const char *output_dir;      /* --output-dir DIR */
    int bench;                   /* --bench N; 0 when absent */
    bool time_passes;            /* --time-passes */
    int warm;                    /* --warm N; 0 when absent */
    int threads;                 /* --threads N; 0 = all cores */
    const char *cache_dir;       /* --cache-dir DIR; NULL: the library's default */
    bool no_disk_cache;          /* --no-disk-cache */
    const char *tuning_log;      /* --tuning-log FILE or NULL */
    int tune;                    /* --tune TRIALS; 0 when absent */
    double tune_seconds;         /* --tune-seconds S; 0: the library's default */
} options;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("mtc: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'mtc --help' for more information.\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* NAME=VALUE split in place; false when either side is empty. */
static bool split_eq(char *arg, char **name, char **value) {
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) return false;
    *eq = 0;
    *name = arg;
    *value = eq + 1;
    return true;
}

static name_value *add_nv(name_value **arr, int *n) {
    *arr = realloc(*arr, (size_t)(*n + 1) * sizeof **arr);
    if (!*arr) exit(EXIT_RUNTIME);
    name_value *nv = &(*arr)[(*n)++];
    memset(nv, 0, sizeof *nv);
    return nv;
}

static name_value *find_nv(name_value *arr, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(arr[i].name, name)) return &arr[i];
    return NULL;
}

/* parse_options results besides "go on" (-1) and exit statuses (>= 0). */
enum { OPT_HELP = -2, OPT_VERSION = -3 };

/* Parses argv into o. Returns -1 to go on, OPT_HELP, OPT_VERSION, or an exit
 * status after printing why. */
static int parse_options(int argc, char **argv, options *o) {
    static const struct {
        const char *name; /* without the leading "--" */
        bool arg;         /* takes a value */
    } table[] = {
        {"entry", true},  {"target", true}, {"arch", true}, {"emit", true},       {"run", false},
        {"input", true},  {"random", false}, {"seed", true},      {"dim", true},
        {"output", true}, {"output-dir", true}, {"bench", true},  {"help", false},
        {"version", false}, {"time-passes", false}, {"warm", true}, {"threads", true},
        {"emulate", false}, {"dump-after", true}, {"param", true}, {"cache-dir", true},
        {"no-disk-cache", false}, {"check-bounds", false}, {"tune", true}, {"tuning-log", true},
        {"tune-seconds", true},
    };
    bool only_files = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_files || a[0] != '-' || !strcmp(a, "-")) {
            if (o->file) return usage_error("more than one source file ('%s', '%s')", o->file, a);
            o->file = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_files = true;
            continue;
        }
        if (!strcmp(a, "-h")) return OPT_HELP;
        if (a[1] != '-') return usage_error("unknown option '%s'", a);
        char *name = a + 2, *val = NULL, *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        int k = -1;
        for (int j = 0; j < (int)(sizeof table / sizeof table[0]); j++)
            if (strlen(table[j].name) == nlen && !strncmp(table[j].name, name, nlen)) k = j;
        if (k < 0) return usage_error("unknown option '--%.*s'", (int)nlen, name);
        const char *opt = table[k].name;
        if (table[k].arg) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else return usage_error("option '--%s' needs a value", opt);
        } else if (eq) {
            return usage_error("option '--%s' takes no value", opt);
        }
        if (!strcmp(opt, "help")) return OPT_HELP;
        if (!strcmp(opt, "version")) return OPT_VERSION;
        if (!strcmp(opt, "emulate")) {
            o->emulate = true;
        } else if (!strcmp(opt, "check-bounds")) {
            o->check_bounds = true;
        } else if (!strcmp(opt, "run")) {
            o->run = true;
        } else if (!strcmp(opt, "time-passes")) {
            o->time_passes = true;
        } else if (!strcmp(opt, "no-disk-cache")) {
            o->no_disk_cache = true;
        } else if (!strcmp(opt, "cache-dir")) {
            if (!*val) return usage_error("--cache-dir needs a directory (--no-disk-cache turns it off)");
            o->cache_dir = val;
        } else if (!strcmp(opt, "random")) {
            o->random = o->run = true;
        } else if (!strcmp(opt, "entry")) {
            if (!*val) return usage_error("--entry needs a function name");
            o->entry = val;
        } else if (!strcmp(opt, "target")) {
            if (!strcmp(val, "cpu")) o->target = MT_TARGET_CPU;
            else if (!strcmp(val, "cuda")) o->target = MT_TARGET_CUDA;
            else return usage_error("unknown target '%s' (cpu or cuda)", val);
        } else if (!strcmp(opt, "arch")) {
            o->arch = val;
        } else if (!strcmp(opt, "dump-after")) {
            if (!*val) return usage_error("--dump-after needs a pass name or 'all'");
            o->dump_after = val;
        } else if (!strcmp(opt, "emit")) {
            char *list = strdup(val), *save = NULL;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                mt_stage st;
                if (mt_stage_from_str(tok, &st) != 0) {
                    int rc = usage_error("unknown stage '%s' (ast graph graph-opt tir tir-sched "
                                         "llvm asm cuda plan dot schedule)", tok);
                    free(list);
                    return rc;
                }
                bool dup = false;
                for (int j = 0; j < o->nemit; j++) dup |= o->emit[j] == st;
                if (!dup) o->emit[o->nemit++] = st;
            }
            free(list);
            if (o->nemit == 0) return usage_error("--emit needs at least one stage");
        } else if (!strcmp(opt, "input")) {
            char *n, *v;
            if (!split_eq(val, &n, &v))
                return usage_error("--input wants NAME=FILE.npy, not '%s'", val);
            if (find_nv(o->inputs, o->ninputs, n)) return usage_error("--input %s given twice", n);
            if (find_nv(o->params, o->nparams, n))
                return usage_error("'%s' is given both by --param and --input", n);
            name_value *nv = add_nv(&o->inputs, &o->ninputs);
            nv->name = n;
            nv->value = v;
            o->run = true;
        } else if (!strcmp(opt, "param")) {
            char *n, *v;
            if (!split_eq(val, &n, &v))
                return usage_error("--param wants NAME=FILE.npy, not '%s'", val);
            if (find_nv(o->params, o->nparams, n)) return usage_error("--param %s given twice", n);
            if (find_nv(o->inputs, o->ninputs, n))
                return usage_error("'%s' is given both by --param and --input", n);
            name_value *nv = add_nv(&o->params, &o->nparams);
            nv->name = n;
            nv->value = v;
        } else if (!strcmp(opt, "dim")) {
            char *n, *v;
            long long x;
            if (!split_eq(val, &n, &v) || !parse_int(v, 0, INT64_MAX, &x))
                return usage_error("--dim wants NAME=N with N >= 0, not '%s'", val);
            if (find_nv(o->dims, o->ndims, n)) return usage_error("--dim %s given twice", n);
            name_value *nv = add_nv(&o->dims, &o->ndims);
            nv->name = n;
            nv->n = x;
        } else if (!strcmp(opt, "seed")) {
            char *end;
            errno = 0;
            unsigned long long x = strtoull(val, &end, 10);
            if (!*val || *end || errno || val[0] == '-')
                return usage_error("--seed wants a non-negative integer, not '%s'", val);
            o->seed = x;
        } else if (!strcmp(opt, "output")) {
            o->output = val;
            o->run = true;
        } else if (!strcmp(opt, "output-dir")) {
            o->output_dir = val;
            o->run = true;
        } else if (!strcmp(opt, "warm")) {
            long long x;
            if (!parse_int(val, 1, 1000, &x))
                return usage_error("--warm wants a number of compiles from 1 to 1000, not '%s'", val);
            o->warm = (int)x;
            o->time_passes = true;
        } else if (!strcmp(opt, "bench")) {
            long long x;
            if (!parse_int(val, 1, 1000000000, &x))
                return usage_error("--bench wants a positive number of runs, not '%s'", val);
            o->bench = (int)x;
            o->run = true;
        } else if (!strcmp(opt, "tune")) {
            long long x;
            if (!parse_int(val, 1, 100000, &x))
                return usage_error("--tune wants a number of trials from 1 to 100000, not '%s'", val);
            o->tune = (int)x;
        } else if (!strcmp(opt, "tune-seconds")) {
            char *end;
            double x = strtod(val, &end);
            if (!*val || *end || !(x > 0) || x > 1e6)
                return usage_error("--tune-seconds wants a positive number of seconds, not '%s'", val);
            o->tune_seconds = x;
        } else if (!strcmp(opt, "tuning-log")) {
            if (!*val) return usage_error("--tuning-log needs a file name");
            o->tuning_log = val;
        } else if (!strcmp(opt, "threads")) {
            long long x;
            if (!parse_int(val, 1, 256, &x))
                return usage_error("--threads wants a number of threads from 1 to 256, not '%s'", val);
            o->threads = (int)x;
        }
    }
    if (!o->file) return usage_error("no source file given");
    if (o->output && o->output_dir)
        return usage_error("--output and --output-dir exclude each other");
    if (o->arch && o->target != MT_TARGET_CUDA)
        return usage_error("--arch is for --target cuda");
    if (o->emulate && o->target != MT_TARGET_CUDA)
        return usage_error("--emulate is for --target cuda");
    if (o->tune && !o->tuning_log) return usage_error("--tune needs --tuning-log FILE to write to");
    if (o->tune_seconds && !o->tune) return usage_error("--tune-seconds is for --tune");
    return -1;
}

/* ---- source ---------------------------------------------------------------- */

/* The whole file (or stdin) as a NUL-terminated string; NULL with errno. */
static char *read_source(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    sbuf s = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_putn(&s, buf, n);
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        sb_free(&s);
        errno = EIO;
        return NULL;
    }
    sb_grow(&s, 0);
    s.p[s.len] = 0;
    *len = s.len;
    return s.p;
}

/* ---- arguments ------------------------------------------------------------- */

/* A deterministic 64-bit generator (splitmix64). */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Floats uniform in [-1, 1), ints in [-10, 10] (uint8 in [0, 10]), bools 0/1. */
static void fill_random(mt_tensor *t, uint64_t *state) {
    mt_dtype dt = mt_tensor_dtype(t);
    int64_t n = mt_tensor_numel(t);
    char *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_random(state);
        switch (dt) {
        case MT_FLOAT64: ((double *)p)[i] = (double)(r >> 11) * 0x1p-52 - 1.0; break;
        case MT_FLOAT32: ((float *)p)[i] = (float)(r >> 40) * 0x1p-23f - 1.0f; break;
        case MT_FLOAT16:
            ((uint16_t *)p)[i] = double_to_half((double)(r >> 53) * 0x1p-10 - 1.0);
            break;
        case MT_BFLOAT16:
            ((uint16_t *)p)[i] = double_to_bf16((double)(r >> 56) * 0x1p-7 - 1.0);
            break;
        case MT_INT64: ((int64_t *)p)[i] = (int64_t)(r % 21) - 10; break;
        case MT_INT32: ((int32_t *)p)[i] = (int32_t)(r % 21) - 10; break;
        case MT_INT8: ((int8_t *)p)[i] = (int8_t)((int)(r % 21) - 10); break;
        case MT_UINT8: ((uint8_t *)p)[i] = (uint8_t)(r % 11); break;
        default: ((uint8_t *)p)[i] = (uint8_t)(r >> 63); break;
        }
    }
}

/* "float32 (n, 784)" for parameter i, symbolic dims by name. */
static void param_sig(const mt_kernel *k, int i, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s (", mt_dtype_str(mt_kernel_param_dtype(k, i)));
    int nd = mt_kernel_param_ndim(k, i);
    for (int a = 0; a < nd && n < cap; a++) {
        int64_t d = mt_kernel_param_dim(k, i, a);
        const char *dn = mt_kernel_param_dim_name(k, i, a);
        if (d < 0) n += (size_t)snprintf(buf + n, cap - n, "%s%s", a ? ", " : "", dn ? dn : "?");
        else n += (size_t)snprintf(buf + n, cap - n, "%s%lld", a ? ", " : "", (long long)d);
    }
    if (n < cap) snprintf(buf + n, cap - n, nd == 1 ? ",)" : ")");
}

static void tensor_sig(const mt_tensor *t, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s (", mt_dtype_str(mt_tensor_dtype(t)));
    int nd = mt_tensor_ndim(t);
    for (int a = 0; a < nd && n < cap; a++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", a ? ", " : "",
                              (long long)mt_tensor_shape(t)[a]);
    if (n < cap) snprintf(buf + n, cap - n, nd == 1 ? ",)" : ")");
}

/* A symbolic dim's size: from --dim, or bound by an earlier --input. */
typedef struct binding {
    const char *name;  /* dim name */
    int64_t value;     /* its size */
    const char *from;  /* "--dim" or the parameter that bound it */
} binding;

typedef struct bindings {
    binding b[64 * MT_MAX_RANK];
    int n;
} bindings;

static binding *find_binding(bindings *bs, const char *name) {
    for (int i = 0; i < bs->n; i++)
        if (!strcmp(bs->b[i].name, name)) return &bs->b[i];
    return NULL;
}

/* Builds args[0..nparams) from --input and --random. Returns -1 on success or
 * an exit status (message printed). */
static int build_args(const mt_kernel *k, options *o, mt_tensor **args) {
    int np = mt_kernel_num_params(k);
    bindings *bs = xcalloc(1, sizeof *bs);
    int rc = -1;
    for (int d = 0; d < o->ndims; d++) {
        bs->b[bs->n++] = (binding){o->dims[d].name, o->dims[d].n, "--dim"};
    }
    /* Every --input and --dim must name something of the kernel. */
    for (int j = 0; j < o->ninputs; j++) {
        for (int i = 0; i < np; i++)
            if (!strcmp(mt_kernel_param_name(k, i), o->inputs[j].name)) o->inputs[j].used = true;
        if (!o->inputs[j].used) {
            sbuf names = {0};
            for (int i = 0; i < np; i++) {
                sb_puts(&names, i ? ", " : "");
                sb_puts(&names, mt_kernel_param_name(k, i));
            }
            fprintf(stderr, "mtc: --input %s: kernel '%s' has no parameter '%s' (it has: %s)\n",
                    o->inputs[j].name, mt_kernel_name(k), o->inputs[j].name,
                    np ? sb_str(&names) : "none");
            sb_free(&names);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    for (int d = 0; d < o->ndims; d++) {
        for (int i = 0; i < np; i++)
            for (int a = 0; a < mt_kernel_param_ndim(k, i); a++) {
                const char *dn = mt_kernel_param_dim_name(k, i, a);
                if (mt_kernel_param_dim(k, i, a) < 0 && dn && !strcmp(dn, o->dims[d].name))
                    o->dims[d].used = true;
            }
        if (!o->dims[d].used) {
            fprintf(stderr, "mtc: --dim %s: no parameter of kernel '%s' has a dim named '%s'\n",
                    o->dims[d].name, mt_kernel_name(k), o->dims[d].name);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    /* Pass 1: inputs from files, checked against the parameter's type. */
    for (int i = 0; i < np; i++) {
        const char *pname = mt_kernel_param_name(k, i);
        name_value *in = find_nv(o->inputs, o->ninputs, pname);
        if (!in) continue;
        char err[1024];
        mt_tensor *t = mt_npy_load(in->value, err, sizeof err);
        if (!t) {
            fprintf(stderr, "mtc: parameter '%s': %s\n", pname, err);
            rc = EXIT_RUNTIME;
            goto out;
        }
        args[i] = t;
        char want[512], got[512];
        param_sig(k, i, want, sizeof want);
        tensor_sig(t, got, sizeof got);
        int nd = mt_kernel_param_ndim(k, i);
        bool ok = mt_tensor_dtype(t) == mt_kernel_param_dtype(k, i) && mt_tensor_ndim(t) == nd;
        for (int a = 0; ok && a < nd; a++) {
            int64_t d = mt_kernel_param_dim(k, i, a), have = mt_tensor_shape(t)[a];
            if (d >= 0) {
                ok = d == have;
                continue;
            }
            const char *dn = mt_kernel_param_dim_name(k, i, a);
            binding *b = dn ? find_binding(bs, dn) : NULL;
            if (b && b->value != have) {
                fprintf(stderr,
                        "mtc: parameter '%s': dim %d ('%s') is %lld in %s, but '%s' is %lld "
                        "(from %s)\n",
                        pname, a, dn, (long long)have, in->value, dn, (long long)b->value,
                        b->from);
                rc = EXIT_RUNTIME;
                goto out;
            }
            if (!b && dn && bs->n < (int)(sizeof bs->b / sizeof bs->b[0]))
                bs->b[bs->n++] = (binding){dn, have, pname};
        }
        if (!ok) {
            fprintf(stderr, "mtc: parameter '%s': expected %s, got %s from %s\n", pname, want, got,
                    in->value);
            rc = EXIT_RUNTIME;
            goto out;
        }
    }
    /* Pass 2: the rest, random or missing. */
    uint64_t state = o->seed;
    for (int i = 0; i < np; i++) {
        if (args[i]) continue;
        const char *pname = mt_kernel_param_name(k, i);
        char want[512];
        param_sig(k, i, want, sizeof want);
        if (!o->random) {
            fprintf(stderr,
                    "mtc: parameter '%s' (%s) has no data: give --input %s=FILE.npy or "
                    "--random\n",
                    pname, want, pname);
            rc = EXIT_USAGE;
            goto out;
        }
        int nd = mt_kernel_param_ndim(k, i);
        int64_t shape[MT_MAX_RANK];
        for (int a = 0; a < nd; a++) {
            shape[a] = mt_kernel_param_dim(k, i, a);
            if (shape[a] >= 0) continue;
            const char *dn = mt_kernel_param_dim_name(k, i, a);
            binding *b = dn ? find_binding(bs, dn) : NULL;
            if (!b) {
                fprintf(stderr,
                        "mtc: parameter '%s' (%s): symbolic dim '%s' has no size: give --dim "
                        "%s=N\n",
                        pname, want, dn ? dn : "?", dn ? dn : "NAME");
                rc = EXIT_USAGE;
                goto out;
            }
            shape[a] = b->value;
        }
        args[i] = mt_tensor_create(mt_kernel_param_dtype(k, i), nd, shape);
        if (!args[i]) {
            fprintf(stderr, "mtc: parameter '%s': cannot allocate %s\n", pname, want);
            rc = EXIT_RUNTIME;
            goto out;
        }
        fill_random(args[i], &state);
    }
out:
    free(bs);
    return rc;
}

/* ---- outputs --------------------------------------------------------------- */

/* mkdir -p; 0 or -1 with errno. */
static int make_dirs(const char *path) {
    char *p = strdup(path);
    if (!p) return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
    struct stat st;
    if (rc == 0 && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
        errno = ENOTDIR;
        rc = -1;
    }
    free(p);
    return rc;
}

static int write_outputs(const options *o, mt_tensor **res, int nres) {
    char err[1024];
    if (o->output) {
        if (mt_npy_save(o->output, res[0], err, sizeof err) < 0) {
            fprintf(stderr, "mtc: %s\n", err);
            return EXIT_RUNTIME;
        }
        return EXIT_OK;
    }
    if (make_dirs(o->output_dir) < 0) {
        fprintf(stderr, "mtc: cannot create directory %s: %s\n", o->output_dir, strerror(errno));
        return EXIT_RUNTIME;
    }
    for (int r = 0; r < nres; r++) {
        size_t plen = strlen(o->output_dir) + 32;
        char *path = xcalloc(plen, 1);
        snprintf(path, plen, "%s/out%d.npy", o->output_dir, r);
        int bad = mt_npy_save(path, res[r], err, sizeof err) < 0;
        free(path);
        if (bad) {
            fprintf(stderr, "mtc: %s\n", err);
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

static void print_results(mt_tensor **res, int nres) {
    sbuf out = {0};
    for (int r = 0; r < nres; r++) {
        if (nres > 1) {
            char h[32];
            snprintf(h, sizeof h, "result %d:\n", r);
            sb_puts(&out, h);
        }
        format_array(res[r], &out);
        sb_puts(&out, "\n");
    }
    fwrite(sb_str(&out), 1, out.len, stdout);
    sb_free(&out);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int report_run_error(mt_status st, const mt_diag *d) {
    if (d->text[0]) {
        fputs(d->text, stderr);
        if (d->text[strlen(d->text) - 1] != '\n') fputc('\n', stderr);
    } else {
        fprintf(stderr, "mtc: run failed: %s%s%s\n", mt_status_str(st), d->message[0] ? ": " : "",
                d->message);
    }
    return EXIT_RUNTIME;
}

/* *t replaced by its copy on device `where` (nothing when it is there). */
static mt_status move_to(mt_kernel *k, mt_tensor **t, mt_device where, mt_diag *d) {
    mt_device at = mt_tensor_device(*t);
    if (at.type == where.type && at.id == where.id) return MT_OK;
    mt_tensor *moved;
    mt_status st = mt_kernel_tensor_to(k, *t, where, &moved, d);
    if (st != MT_OK) return st;
    mt_tensor_release(*t);
    *t = moved;
    return MT_OK;
}

/* Runs (and benches) the kernel, then prints or writes the results. */
static int run_kernel(mt_kernel *k, options *o) {
    int np = mt_kernel_num_params(k), nres = mt_kernel_num_results(k);
    if (o->output && nres != 1) {
        fprintf(stderr, "mtc: --output writes one result, but kernel '%s' returns %d (use "
                        "--output-dir)\n", mt_kernel_name(k), nres);
        return EXIT_USAGE;
    }
    mt_tensor **args = xcalloc((size_t)np, sizeof *args);
    mt_tensor **res = xcalloc((size_t)nres, sizeof *res);
    double *times = NULL;
    int rc = build_args(k, o, args);
    if (rc >= 0) goto out;
    rc = EXIT_OK;
    mt_diag d;
    memset(&d, 0, sizeof d);
    mt_status st = MT_OK;
    for (int i = 0; i < np && st == MT_OK; i++)
        st = move_to(k, &args[i], mt_kernel_param_device(k, i), &d);
    if (st == MT_OK) st = mt_kernel_run(k, args, np, res, nres, &d);
    if (st != MT_OK) {
        rc = report_run_error(st, &d);
        goto out;
    }
    if (o->bench) {
        /* The run above was the warm-up; the timed runs write the same result
         * tensors in place, so allocation is not timed. */
        times = xcalloc((size_t)o->bench, sizeof *times);
        for (int b = 0; b < o->bench; b++) {
            double t0 = now_ms();
            st = mt_kernel_run(k, args, np, res, nres, &d);
            times[b] = now_ms() - t0;
            if (st != MT_OK) {
                rc = report_run_error(st, &d);
                goto out;
            }
        }
        qsort(times, (size_t)o->bench, sizeof *times, cmp_double);
        int n = o->bench;
        double med = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
        printf("median %.4f ms (min %.4f, max %.4f) over %d runs\n", med, times[0], times[n - 1],
               n);
    }
    for (int r = 0; r < nres && st == MT_OK; r++)
        st = move_to(k, &res[r], (mt_device){MT_DEVICE_CPU, 0}, &d);
    if (st != MT_OK) {
        rc = report_run_error(st, &d);
        goto out;
    }
    if (o->output || o->output_dir) rc = write_outputs(o, res, nres);
    else if (!o->bench) print_results(res, nres);
out:
    for (int i = 0; i < np; i++) mt_tensor_release(args[i]);
    for (int i = 0; i < nres; i++) mt_tensor_release(res[i]);
    free(args);
    free(res);
    free(times);
    return rc;
}

/* ---- main ------------------------------------------------------------------ */

/* --time-passes: the phases of k's compilation, then the whole, on stderr. */
static void print_compile_times(const mt_kernel *k, const char *title) {
    mt_compile_times t;
    if (mt_kernel_compile_times(k, &t) != MT_OK) return;
    const struct {
        const char *name;
        double ms;
    } rows[] = {
        {"frontend (parse, build graph)", t.frontend_ms},
        {"graph passes (fusion)", t.graph_ms},
        {"TIR passes (schedule, lower)", t.tir_ms},
        {"LLVM IR generation", t.irgen_ms},
        {"LLVM optimization", t.opt_ms},
        {"JIT code generation", t.jit_ms},
        {"CUDA C (target cuda)", t.cuda_ms},
        {"NVRTC (target cuda)", t.nvrtc_ms},
        {"disk cache read (key, verify)", t.disk_read_ms},
        {"disk cache write", t.disk_write_ms},
    };
    double sum = 0;
    fflush(stdout);
    fprintf(stderr, "mtc: %s of '%s'\n", title, mt_kernel_name(k));
    fprintf(stderr, "  %-32s %10s %6s\n", "phase", "ms", "%");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fprintf(stderr, "  %-32s %10.3f %5.1f%%\n", rows[i].name, rows[i].ms,
                t.total_ms > 0 ? 100 * rows[i].ms / t.total_ms : 0.0);
        sum += rows[i].ms;
    }
    double other = t.total_ms > sum ? t.total_ms - sum : 0;
    fprintf(stderr, "  %-32s %10.3f %5.1f%%\n", "other (executor plan)", other,
            t.total_ms > 0 ? 100 * other / t.total_ms : 0.0);
    fprintf(stderr, "  %-32s %10.3f\n", "compile total", t.total_ms);
    static const char *const disk[] = {
        "off", "hit (machine code read from disk: LLVM did not run)",
        "miss (compiled, entry written)", "miss (compiled; the entry could not be written)"};
    fprintf(stderr, "  %-32s %s\n", "disk cache", t.disk >= 0 && t.disk <= 3 ? disk[t.disk] : "?");
    if (t.llvm_threads > 1 && t.disk != MT_DISK_HIT)
        fprintf(stderr, "  (LLVM optimized and compiled the kernel's modules on %d threads)\n",
                t.llvm_threads);
}

/* --warm N: N more compiles of src in a context without a cache and with
 * ctx's thread count (LLVM compiles on up to that many threads); prints the
 * phases of the median one (by wall time), the spread, and one cached
 * compile in ctx (which holds the first compile). */
static void time_warm(mt_context *ctx, const char *src, const mt_compile_options *co, int n,
                      int threads) {
    mt_context_options wo = {threads, -1};
    wo.cache_dir = ""; /* no disk cache either: each warm compile runs LLVM */
    mt_context *wctx = mt_context_create(&wo);
    mt_kernel **ks = calloc((size_t)n, sizeof *ks);
    double *ms = calloc((size_t)n, sizeof *ms), *sorted = calloc((size_t)n, sizeof *sorted);
    if (!wctx || !ks || !ms || !sorted) {
        fprintf(stderr, "mtc: --warm: out of memory\n");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        ks[i] = mt_jit_compile(wctx, src, co, NULL);
        ms[i] = sorted[i] = now_ms() - t0;
        if (!ks[i]) {
            fprintf(stderr, "mtc: --warm: a compile failed\n");
            goto done;
        }
    }
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    int med = 0;
    for (int i = 0; i < n; i++)
        if (ms[i] == sorted[n / 2]) med = i;
    char title[96];
    snprintf(title, sizeof title, "warm compile (median of %d, cache off)", n);
    print_compile_times(ks[med], title);
    fprintf(stderr, "  %-32s %10.3f .. %.3f\n", "warm wall, min .. max", sorted[0],
            sorted[n - 1]);
    double t0 = now_ms();
    mt_kernel *c = mt_jit_compile(ctx, src, co, NULL);
    double us = (now_ms() - t0) * 1e3;
    if (c) fprintf(stderr, "  %-32s %10.3f us\n", "cached compile (same context)", us);
    mt_kernel_release(c);
done:
    for (int i = 0; ks && i < n; i++) mt_kernel_release(ks[i]);
    free(ks);
    free(ms);
    free(sorted);
    mt_context_destroy(wctx);
}

/* Prints the --dump-after dumps in the order the passes ran. */
static void print_pass_dumps(mt_kernel *k) {
    for (int i = 0; i < mt_kernel_num_pass_dumps(k); i++) {
        const char *text = mt_kernel_pass_dump_at(k, i);
        printf(";; ---- after %s ----\n%s", mt_kernel_pass_dump_name(k, i), text);
        size_t n = strlen(text);
        if (n > 0 && text[n - 1] != '\n') fputc('\n', stdout);
    }
}

/* Prints the --emit stages; EXIT_COMPILE when one was unavailable. */
static int emit_stages(mt_kernel *k, const options *o) {
    int rc = EXIT_OK;
    for (int i = 0; i < o->nemit; i++) {
        mt_stage st = o->emit[i];
        const char *text = mt_kernel_dump(k, st);
        if (!text) {
            const char *why = mt_kernel_dump_unavailable(k, st);
            fflush(stdout);
            fprintf(stderr, "mtc: stage '%s' is not available: %s\n", mt_stage_str(st),
                    why && *why ? why : "no reason given");
            rc = EXIT_COMPILE;
            continue;
        }
        if (o->nemit > 1) printf(";; ---- %s ----\n", mt_stage_str(st));
        fputs(text, stdout);
        size_t n = strlen(text);
        if (n > 0 && text[n - 1] != '\n') fputc('\n', stdout);
    }
    fflush(stdout);
    return rc;
}

static void print_diag(const mt_diag *diag, const char *fname) {
    if (diag->text[0]) {
        fputs(diag->text, stderr);
        if (diag->text[strlen(diag->text) - 1] != '\n') fputc('\n', stderr);
    } else {
        fprintf(stderr, "%s: error: %s\n", fname, diag->message[0] ? diag->message : mt_status_str(diag->status));
    }
}

/* One line per tuned kernel. */
static void report_tuned(void *user, const mt_tune_result *r) {
    (void)user;
    printf("tuned %s (%s): default %.4f ms, tuned %.4f ms (%.2fx), %d trials, knobs: %s\n", r->func, r->rule,
           r->default_ms, r->best_ms, r->best_ms > 0 ? r->default_ms / r->best_ms : 1.0, r->trials,
           r->knobs[0] ? r->knobs : "(the default's)");
    fflush(stdout);
}

/* --tune: tunes the program into o->tuning_log. An exit status. */
static int tune(mt_context *ctx, const char *src, const mt_compile_options *co, const options *o, mt_diag *diag) {
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.log = o->tuning_log;
    to.trials = o->tune;
    if (o->tune_seconds > 0) to.seconds = o->tune_seconds;
    to.report = report_tuned;
    mt_status st = mt_tune(ctx, src, co, &to, diag);
    if (st == MT_OK) return EXIT_OK;
    print_diag(diag, co->filename);
    return st == MT_ERR_IO || st == MT_ERR_RUNTIME ? EXIT_RUNTIME : EXIT_COMPILE;
}

int main(int argc, char **argv) {
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse_options(argc, argv, &o);
    if (rc == OPT_HELP) {
        fputs(USAGE, stdout);
        rc = EXIT_OK;
        goto done;
    }
    if (rc == OPT_VERSION) {
        printf("mtc (minitriton) %s\n", mt_version());
        rc = EXIT_OK;
        goto done;
    }
    if (rc != -1) goto done;

    size_t srclen = 0;
    char *src = read_source(o.file, &srclen);
    if (!src) {
        fprintf(stderr, "mtc: cannot read %s: %s\n", o.file, strerror(errno));
        rc = EXIT_USAGE;
        goto done;
    }
    const char *fname = strcmp(o.file, "-") ? o.file : "<stdin>";
    if (strlen(src) != srclen) {
        /* the library takes a C string: a NUL would end the source early */
        int line = 1, col = 1;
        for (const char *c = src; *c; c++) {
            if (*c == '\n') line++, col = 1;
            else col++;
        }
        fprintf(stderr, "%s:%d:%d: error: the source contains a NUL byte\n", fname, line, col);
        free(src);
        rc = EXIT_COMPILE;
        goto done;
    }

    double t_ctx = now_ms();
    mt_context_options copts = {0};
    copts.num_threads = o.threads;
    copts.cache_dir = o.no_disk_cache ? "" : o.cache_dir;
    mt_context *ctx = mt_context_create(&copts);
    t_ctx = now_ms() - t_ctx;
    if (!ctx) {
        fprintf(stderr, "mtc: cannot create a minitriton context (out of memory, or LLVM "
                        "cannot target this machine)\n");
        free(src);
        rc = EXIT_RUNTIME;
        goto done;
    }
    mt_compile_options co;
    mt_compile_options_init(&co);
    co.filename = fname;
    co.entry = o.entry;
    co.target = o.target;
    co.arch = o.arch;
    co.emulate = o.emulate;
    co.check_bounds = o.check_bounds;
    co.dump_after = o.dump_after;
    mt_bound_param *bound = o.nparams ? calloc((size_t)o.nparams, sizeof *bound) : NULL;
    for (int i = 0; i < o.nparams; i++) {
        char err[1024];
        bound[i].name = o.params[i].name;
        if (!(bound[i].value = mt_npy_load(o.params[i].value, err, sizeof err))) {
            fprintf(stderr, "mtc: --param %s: %s\n", o.params[i].name, err);
            rc = EXIT_RUNTIME;
            goto params_done;
        }
    }
    co.params = bound;
    co.nparams = o.nparams;
    mt_diag diag;
    memset(&diag, 0, sizeof diag);
    if (o.tune && (rc = tune(ctx, src, &co, &o, &diag)) != EXIT_OK) goto params_done;
    co.tuning_log = o.tuning_log;
    double t_compile = now_ms();
    mt_kernel *k = mt_jit_compile(ctx, src, &co, &diag);
    t_compile = now_ms() - t_compile;
    if (k && o.time_passes) {
        print_compile_times(k, "compile time (the first in this process)");
        fprintf(stderr, "  %-32s %10.3f\n", "context creation (LLVM setup)", t_ctx);
        fprintf(stderr, "  %-32s %10.3f\n", "mt_jit_compile call (wall)", t_compile);
        if (o.warm) time_warm(ctx, src, &co, o.warm, o.threads);
    }
    if (!k) {
        print_diag(&diag, fname);
        rc = EXIT_COMPILE;
    } else {
        print_pass_dumps(k);
        rc = emit_stages(k, &o);
        if (rc == EXIT_OK && o.run) rc = run_kernel(k, &o);
        mt_kernel_release(k);
    }
params_done: /* the kernel holds copies of the bound values */
    for (int i = 0; i < o.nparams; i++) mt_tensor_release((mt_tensor *)bound[i].value);
    free(bound);
    mt_context_destroy(ctx);
    free(src);
done:
    free(o.inputs);
    free(o.params);
    free(o.dims);
    fflush(stdout);
    return rc;
}
