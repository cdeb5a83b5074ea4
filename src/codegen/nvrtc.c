/*
 * nvrtc.c -- CUDA C to a cubin through NVRTC loaded with dlopen (see
 * nvrtc.h).
 *
 * Loading. pthread_once runs load() the first time anything here needs
 * NVRTC: it tries the candidate libraries in order, keeps the first that
 * has every function in `syms`, and otherwise keeps a message naming what
 * it tried. The handle is never closed (NVRTC stays for the process). The
 * declarations below are our own: the few NVRTC types are an int result
 * and an opaque program pointer, so no NVRTC header is needed to build.
 *
 * A compile. One NVRTC program per call, with the options
 *
 *   --gpu-architecture=sm_XY   a real architecture: ptxas runs and the
 *                              result has a cubin (nvrtcGetCUBIN)
 *   -std=c++17                 the language of the code we emit (NVRTC
 *                              13's default, spelled out for 11.x and 12.x)
 *   --ptxas-options=-v         ptxas's per-kernel report, into the log
 *   --include-path=DIR         the toolkit's headers (cuda_fp16.h, cuda_bf16.h,
 *                              which the CUDA C of float16 / bfloat16 kernels includes: NVRTC 13
 *                              has no search path of its own): MT_CUDA_INCLUDE,
 *                              else the include/ beside the NVRTC library
 *                              (../include, ../../include), else
 *                              /usr/local/cuda/include; left out when none
 *                              has cuda_fp16.h
 *   -minimal                   (NVRTC 12.4 and later) without the language
 *                              features our CUDA C never uses (textures,
 *                              surfaces, the device runtime): its built-in
 *                              headers parse faster (the CUDA C++ front end
 *                              of a softmax: 29 ms without, 18 ms with, on
 *                              the development machine). Should NVRTC ever
 *                              refuse a program with it and take it without,
 *                              the program is compiled again without it, and
 *                              so is every later one in the process.
 *   --no-cache                 (NVRTC 12.9 and later) no NVRTC compile cache:
 *                              where a driver is installed, NVRTC keeps the
 *                              cubins it made and hands one back for the same
 *                              source and options without running ptxas, so
 *                              without the report (seen on an H100 with NVRTC
 *                              13.0: an identical second compile in a process
 *                              had an empty log). Keeping compiled code is
 *                              the caller's business (src/cache.c).
 *
 * ptxas's report, one block per entry function (NVRTC 13, sm_80):
 *
 *   ptxas info    : Compiling entry function 'red' for 'sm_80'
 *   ptxas info    : Function properties for red
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 22 registers, used 1 barriers, 128 bytes smem, 368 bytes cmem[0]
 *
 * parse_log reads it line by line: "Compiling entry function" opens a
 * kernel, "Used N registers" and "N bytes smem" belong to the open kernel,
 * and a stack/spill line belongs to the function whose "Function
 * properties" it follows (a device function that was not inlined has its
 * own block; it is not a kernel and is skipped). Items missing from a line
 * (sm_90 prints no smem for a kernel without shared memory) stay 0.
 */
#define _GNU_SOURCE /* dladdr */
#include "codegen/nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- our declarations of NVRTC ------------------------------------------------ */

typedef int nvrtc_result;          /* nvrtcResult: 0 is success */
typedef struct nvrtc_prog *nvrtc_prog;
enum {
    NVRTC_OK = 0,
    NVRTC_OUT_OF_MEMORY = 1,
    NVRTC_INVALID_OPTION = 5,
    NVRTC_COMPILATION = 6,
};

static struct {
    void *lib;               /* the library loaded, NULL if none */
    char why[320];           /* what was tried, when lib is NULL */
    int version;             /* major * 1000 + minor * 10 */
    char include[600];       /* "--include-path=DIR" of the toolkit's headers, "" if none */
    nvrtc_result (*Version)(int *major, int *minor);
    const char *(*GetErrorString)(nvrtc_result r);
    nvrtc_result (*CreateProgram)(nvrtc_prog *p, const char *src, const char *name, int nheaders,
                                  const char *const *headers, const char *const *include_names);
    nvrtc_result (*DestroyProgram)(nvrtc_prog *p);
    nvrtc_result (*CompileProgram)(nvrtc_prog p, int nopts, const char *const *opts);
    nvrtc_result (*GetCUBINSize)(nvrtc_prog p, size_t *size);
    nvrtc_result (*GetCUBIN)(nvrtc_prog p, char *cubin);
    nvrtc_result (*GetProgramLogSize)(nvrtc_prog p, size_t *size);
    nvrtc_result (*GetProgramLog)(nvrtc_prog p, char *log);
} nv;

/* The functions load() needs, by name, and where each goes. */
static const struct {
    const char *name;
    void **slot;
} syms[] = {
    {"nvrtcVersion", (void **)&nv.Version},
    {"nvrtcGetErrorString", (void **)&nv.GetErrorString},
    {"nvrtcCreateProgram", (void **)&nv.CreateProgram},
    {"nvrtcDestroyProgram", (void **)&nv.DestroyProgram},
    {"nvrtcCompileProgram", (void **)&nv.CompileProgram},
    {"nvrtcGetCUBINSize", (void **)&nv.GetCUBINSize},
    {"nvrtcGetCUBIN", (void **)&nv.GetCUBIN},
    {"nvrtcGetProgramLogSize", (void **)&nv.GetProgramLogSize},
    {"nvrtcGetProgramLog", (void **)&nv.GetProgramLog},
};

static const char *const candidates[] = {
    "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
    "/usr/local/cuda/lib64/libnvrtc.so",
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void set_msg(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_msg(char *buf, size_t len, const char *fmt, ...) {
    if (!buf || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Opens path and finds every symbol; false (nothing kept) if either fails,
 * with the reason in why. */
static bool try_library(const char *path, char *why, size_t len) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *d = dlerror();
        set_msg(why, len, "%s", d ? d : path);
        return false;
    }
    for (int i = 0; i < (int)(sizeof syms / sizeof syms[0]); i++) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot) {
            set_msg(why, len, "%s has no %s", path, syms[i].name);
            dlclose(lib);
            return false;
        }
    }
    nv.lib = lib;
    return true;
}

/* Does dir hold cuda_fp16.h? Then it is the include path. */
static bool try_include(const char *dir) {
    char path[600];
    if (!dir || !*dir || snprintf(path, sizeof path, "%s/cuda_fp16.h", dir) >= (int)sizeof path)
        return false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    fclose(f);
    snprintf(nv.include, sizeof nv.include, "--include-path=%s", dir);
    return true;
}

/* The toolkit's headers (see the top of the file). */
static void find_include(void) {
    if (try_include(getenv("MT_CUDA_INCLUDE"))) return;
    Dl_info info;
    if (dladdr((void *)nv.CompileProgram, &info) && info.dli_fname) {
        char dir[500];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
            char cand[560];
            snprintf(cand, sizeof cand, "%s/../include", dir);
            if (try_include(cand)) return;
            snprintf(cand, sizeof cand, "%s/../../include", dir);
            if (try_include(cand)) return;
        }
    }
    try_include("/usr/local/cuda/include");
}

static void load(void) {
    char why[256];
    const char *env = getenv("MT_NVRTC_LIBRARY");
    if (env && *env) {
        if (!try_library(env, why, sizeof why))
            set_msg(nv.why, sizeof nv.why, "NVRTC not found (MT_NVRTC_LIBRARY=%s: %s)", env, why);
    } else {
        for (int i = 0; i < (int)(sizeof candidates / sizeof candidates[0]); i++)
            if (try_library(candidates[i], why, sizeof why)) break;
        if (!nv.lib)
            set_msg(nv.why, sizeof nv.why,
                    "NVRTC not found (libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12, "
                    "libnvrtc.so.11.2, /usr/local/cuda/lib64/libnvrtc.so): install the CUDA "
                    "toolkit or set MT_NVRTC_LIBRARY");
    }
    int major = 0, minor = 0;
    if (nv.lib && nv.Version(&major, &minor) == NVRTC_OK) nv.version = major * 1000 + minor * 10;
    if (nv.lib) find_include();
}

static bool loaded(char *why, size_t len) {
    pthread_once(&load_once, load);
    if (!nv.lib) set_msg(why, len, "%s", nv.why);
    return nv.lib != NULL;
}

bool mt_nvrtc_available(char *why, size_t len) { return loaded(why, len); }

int mt_nvrtc_version(void) { return loaded(NULL, 0) ? nv.version : 0; }

/* ---- ptxas's report ------------------------------------------------------------ */

/* The number before " <what>" in line ("128 bytes smem"), or 0. */
static int number_before(const char *line, const char *what) {
    const char *at = strstr(line, what);
    if (!at) return 0;
    while (at > line && at[-1] == ' ') at--;
    const char *digits = at;
    while (digits > line && digits[-1] >= '0' && digits[-1] <= '9') digits--;
    return digits < at ? atoi(digits) : 0;
}

/* The text between the first pair of quotes after key, into name. */
static bool quoted_after(const char *line, const char *key, char *name, size_t cap) {
    const char *at = strstr(line, key);
    if (!at) return false;
    at += strlen(key);
    const char *end = strchr(at, '\'');
    if (!end) return false;
    size_t n = (size_t)(end - at) < cap - 1 ? (size_t)(end - at) : cap - 1;
    memcpy(name, at, n);
    name[n] = 0;
    return true;
}

static bool same_name(const char *kernel, const char *text) {
    return strncmp(kernel, text, sizeof ((mt_nvrtc_kernel_info *)0)->name - 1) == 0;
}

/* One line of the report (see the top of the file); *cur is the open
 * kernel, *props the one the next stack/spill line describes (-1: none). */
#define PROPS "Function properties for "

static bool parse_line(const char *line, mt_nvrtc_out *out, int *cap, int *cur, int *props) {
    char name[128];
    if (quoted_after(line, "Compiling entry function '", name, sizeof name)) {
        if (out->nkernels == *cap) {
            int cap2 = *cap ? 2 * *cap : 4;
            mt_nvrtc_kernel_info *k = realloc(out->kernels, sizeof *k * (size_t)cap2);
            if (!k) return false;
            out->kernels = k;
            *cap = cap2;
        }
        *cur = out->nkernels++;
        out->kernels[*cur] = (mt_nvrtc_kernel_info){0};
        memcpy(out->kernels[*cur].name, name, sizeof name);
        *props = -1;
    } else if (strstr(line, PROPS)) {
        const char *fn = strstr(line, PROPS) + strlen(PROPS);
        *props = *cur >= 0 && same_name(out->kernels[*cur].name, fn) ? *cur : -1;
    } else if (strstr(line, "bytes stack frame") && *props >= 0) {
        mt_nvrtc_kernel_info *k = &out->kernels[*props];
        k->stack_bytes = number_before(line, "bytes stack frame");
        k->spill_store_bytes = number_before(line, "bytes spill stores");
        k->spill_load_bytes = number_before(line, "bytes spill loads");
    } else if (strstr(line, "Used ") && strstr(line, " registers") && *cur >= 0) {
        mt_nvrtc_kernel_info *k = &out->kernels[*cur];
        k->registers = atoi(strstr(line, "Used ") + strlen("Used "));
        k->shared_bytes = number_before(line, "bytes smem");
    }
    return true;
}

/* out->kernels from out->log; false when out of memory. */
static bool parse_log(mt_nvrtc_out *out) {
    int cap = 0, cur = -1, props = -1;
    char line[512];
    for (const char *p = out->log; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t keep = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, p, keep);
        line[keep] = 0;
        if (!parse_line(line, out, &cap, &cur, &props)) return false;
        p += n + (nl != NULL);
    }
    return true;
}

/* ---- a compile ----------------------------------------------------------------- */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The program's log into out->log (NULL when empty or out of memory). */
static void take_log(nvrtc_prog p, mt_nvrtc_out *out) {
    size_t n = 0;
    if (nv.GetProgramLogSize(p, &n) != NVRTC_OK || n <= 1) return;
    out->log = malloc(n);
    if (out->log && nv.GetProgramLog(p, out->log) != NVRTC_OK) {
        free(out->log);
        out->log = NULL;
    }
    if (out->log) out->log[n - 1] = 0;
}

/* The log's first lines (up to `lines` of them) into err. */
static void log_head(const char *log, int lines, char *err, size_t errlen, size_t at) {
    if (!log || !err || at >= errlen) return;
    const char *end = log;
    for (int i = 0; i < lines && *end; i++) {
        const char *nl = strchr(end, '\n');
        end = nl ? nl + 1 : end + strlen(end);
    }
    while (end > log && (end[-1] == '\n' || end[-1] == ' ')) end--;
    set_msg(err + at, errlen - at, "%.*s", (int)(end - log), log);
}

/* Why the compile failed, as a status and a message. */
static mt_status compile_failed(nvrtc_result r, int sm, const mt_nvrtc_out *out, char *err,
                                size_t errlen) {
    mt_status st = r == NVRTC_COMPILATION      ? MT_ERR_INTERNAL
                   : r == NVRTC_INVALID_OPTION ? MT_ERR_UNSUPPORTED
                   : r == NVRTC_OUT_OF_MEMORY  ? MT_ERR_NOMEM
                                               : MT_ERR_INTERNAL;
    if (r == NVRTC_COMPILATION)
        set_msg(err, errlen, "the generated CUDA C does not compile (NVRTC %d.%d): ",
                nv.version / 1000, nv.version % 1000 / 10);
    else if (r == NVRTC_INVALID_OPTION)
        set_msg(err, errlen, "NVRTC %d.%d refuses the options for sm_%d: ", nv.version / 1000,
                nv.version % 1000 / 10, sm);
    else
        set_msg(err, errlen, "nvrtcCompileProgram: %s", nv.GetErrorString(r));
    if (err && (r == NVRTC_COMPILATION || r == NVRTC_INVALID_OPTION))
        log_head(out->log, 4, err, errlen, strlen(err));
    return st;
}

/* The cubin into out->image. */
static mt_status take_cubin(nvrtc_prog p, mt_nvrtc_out *out, char *err, size_t errlen) {
    size_t n = 0;
    nvrtc_result r = nv.GetCUBINSize(p, &n);
    if (r != NVRTC_OK || n == 0) {
        set_msg(err, errlen, "nvrtcGetCUBINSize: %s", r ? nv.GetErrorString(r) : "no cubin");
        return MT_ERR_INTERNAL;
    }
    out->image = malloc(n);
    if (!out->image) {
        set_msg(err, errlen, "out of memory (a %zu-byte cubin)", n);
        return MT_ERR_NOMEM;
    }
    r = nv.GetCUBIN(p, out->image);
    if (r != NVRTC_OK) {
        set_msg(err, errlen, "nvrtcGetCUBIN: %s", nv.GetErrorString(r));
        return MT_ERR_INTERNAL;
    }
    out->size = n;
    return MT_OK;
}

/* Whether -minimal may be given: until NVRTC refused a program with it that
 * it took without (top of the file). */
static _Atomic int minimal_ok = 1;

/* One nvrtcCompileProgram of src; *r its result, the log into out. */
static nvrtc_prog compile_once(const char *src, const char *name, int sm, bool minimal, mt_nvrtc_out *out,
                               nvrtc_result *r) {
    char arch[40];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", sm);
    const char *opts[6] = {arch, "-std=c++17", "--ptxas-options=-v"};
    int nopts = 3;
    if (nv.version >= 12090) opts[nopts++] = "--no-cache"; /* see the top of the file */
    if (nv.include[0]) opts[nopts++] = nv.include;
    if (minimal) opts[nopts++] = "-minimal";
    free(out->log);
    out->log = NULL;
    nvrtc_prog p = NULL;
    *r = nv.CreateProgram(&p, src, name, 0, NULL, NULL);
    if (*r != NVRTC_OK) return NULL;
    *r = nv.CompileProgram(p, nopts, opts);
    take_log(p, out);
    return p;
}

static mt_status compile(const char *src, const char *name, int sm, mt_nvrtc_out *out, char *err,
                         size_t errlen) {
    bool minimal = nv.version >= 12040 && minimal_ok;
    nvrtc_result r;
    nvrtc_prog p = compile_once(src, name, sm, minimal, out, &r);
    if (p && (r == NVRTC_COMPILATION || r == NVRTC_INVALID_OPTION) && minimal) { /* without -minimal: taken? */
        nv.DestroyProgram(&p);
        p = compile_once(src, name, sm, false, out, &r);
        if (r == NVRTC_OK) minimal_ok = 0;
    }
    if (!p) {
        set_msg(err, errlen, "nvrtcCreateProgram: %s", nv.GetErrorString(r));
        return r == NVRTC_OUT_OF_MEMORY ? MT_ERR_NOMEM : MT_ERR_INTERNAL;
    }
    mt_status st = r != NVRTC_OK ? compile_failed(r, sm, out, err, errlen) : take_cubin(p, out, err, errlen);
    if (st == MT_OK && !parse_log(out)) {
        set_msg(err, errlen, "out of memory reading ptxas's report");
        st = MT_ERR_NOMEM;
    }
    nv.DestroyProgram(&p);
    return st;
}

mt_status mt_nvrtc_compile(const char *src, const char *name, int sm, mt_nvrtc_out *out,
                           char *err, size_t errlen) {
    if (out) *out = (mt_nvrtc_out){0};
    if (!src || !out) {
        set_msg(err, errlen, "mt_nvrtc_compile: no source or no out");
        return MT_ERR_INVALID_ARG;
    }
    if (sm < 10 || sm > 999) {
        set_msg(err, errlen, "sm_%d is not a compute capability", sm);
        return MT_ERR_INVALID_ARG;
    }
    if (!loaded(err, errlen)) return MT_ERR_UNAVAILABLE;
    double t0 = now_ms();
    mt_status st = compile(src, name ? name : "kernel.cu", sm, out, err, errlen);
    out->ms = now_ms() - t0;
    return st;
}

void mt_nvrtc_out_free(mt_nvrtc_out *out) {
    if (!out) return;
    free(out->image);
    free(out->log);
    free(out->kernels);
    *out = (mt_nvrtc_out){0};
}
