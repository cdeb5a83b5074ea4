"""Loading libminitriton and declaring its C functions (ctypes).

Where the library is looked for, in order (the first that loads wins):

1. the environment variable MINITRITON_LIBRARY: a path to the .so file
   (when it is set, nothing else is tried);
2. the build tree of the repository this package was installed from
   (recorded by setup.py at install time: <repo>/build/libminitriton.so),
   and the build tree next to this file when it is imported from a clone
   without installing (python/minitriton/ -> ../../build);
3. the system: ctypes.util.find_library("minitriton") (the linker's cache,
   after `cmake --install` and ldconfig), the plain soname through the
   dynamic loader's search (LD_LIBRARY_PATH, ld.so.conf), and the
   default prefixes /usr/local/lib and /usr/lib.

When none loads, ImportError lists every place tried and why it failed.
"""
import ctypes
import ctypes.util
import os

SONAME = "libminitriton.so.0"

# ---- C types -----------------------------------------------------------------

MAX_RANK = 8


class Diag(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("line", ctypes.c_int),
        ("col", ctypes.c_int),
        ("message", ctypes.c_char * 512),
        ("text", ctypes.c_char * 2048),
    ]


class ContextOptions(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int), ("cache_entries", ctypes.c_int),
                ("cache_dir", ctypes.c_char_p), ("cache_max_bytes", ctypes.c_int64)]


class CompileOptions(ctypes.Structure):
    _fields_ = [
        ("filename", ctypes.c_char_p),
        ("entry", ctypes.c_char_p),
        ("target", ctypes.c_int),
        ("opt_level", ctypes.c_int),
        ("unroll_threshold", ctypes.c_int),
        ("dump_after", ctypes.c_char_p),
        ("arch", ctypes.c_char_p),
        ("emulate", ctypes.c_int),
        ("params", ctypes.c_void_p),  # bound parameters: not used from Python (NULL, 0)
        ("nparams", ctypes.c_int),
        ("check_bounds", ctypes.c_int),
        ("schedule", ctypes.c_void_p),  # a C schedule callback: not used from Python (NULL)
        ("schedule_user", ctypes.c_void_p),
        ("tuning_log", ctypes.c_char_p),
    ]


class Device(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("id", ctypes.c_int32)]


class CompileTimes(ctypes.Structure):
    _fields_ = [
        ("frontend_ms", ctypes.c_double),
        ("graph_ms", ctypes.c_double),
        ("tir_ms", ctypes.c_double),
        ("irgen_ms", ctypes.c_double),
        ("opt_ms", ctypes.c_double),
        ("jit_ms", ctypes.c_double),
        ("total_ms", ctypes.c_double),
        ("llvm_threads", ctypes.c_int),
        ("cuda_ms", ctypes.c_double),
        ("nvrtc_ms", ctypes.c_double),
        ("disk_read_ms", ctypes.c_double),
        ("disk_write_ms", ctypes.c_double),
        ("disk", ctypes.c_int),
    ]


class DiskCacheStats(ctypes.Structure):
    _fields_ = [
        ("hits", ctypes.c_int64),
        ("misses", ctypes.c_int64),
        ("writes", ctypes.c_int64),
        ("errors", ctypes.c_int64),
        ("corrupt", ctypes.c_int64),
        ("evictions", ctypes.c_int64),
        ("dir", ctypes.c_char_p),
        ("max_bytes", ctypes.c_int64),
    ]


class CacheStats(ctypes.Structure):
    _fields_ = [
        ("hits", ctypes.c_int64),
        ("misses", ctypes.c_int64),
        ("evictions", ctypes.c_int64),
        ("entries", ctypes.c_int),
        ("capacity", ctypes.c_int),
    ]


# enums of minitriton.h, in their order there
STATUS_NAMES = [
    "MT_OK", "MT_ERR_SYNTAX", "MT_ERR_NAME", "MT_ERR_TYPE", "MT_ERR_SHAPE",
    "MT_ERR_UNSUPPORTED", "MT_ERR_INVALID_ARG", "MT_ERR_RUNTIME", "MT_ERR_NOMEM",
    "MT_ERR_LIMIT", "MT_ERR_IO", "MT_ERR_UNAVAILABLE", "MT_ERR_INTERNAL",
]
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64", "bfloat16"]
TARGET_CPU, TARGET_CUDA = 0, 1
DEVICE_CPU, DEVICE_CUDA, DEVICE_TEST = 1, 2, 12

_p = ctypes.c_void_p
_i = ctypes.c_int
_s = ctypes.c_char_p
_diag = ctypes.POINTER(Diag)

# name: (restype, argtypes). Functions that may call a DLPack producer's
# deleter (which may need the GIL) are also in PYFUNCS, bound through
# PyDLL, which keeps the GIL held during the call. Every function used must
# be declared: ctypes would pass a pointer as a C int without argtypes.
FUNCS = {
    "mt_version": (_s, []),
    "mt_context_create": (_p, [ctypes.POINTER(ContextOptions)]),
    "mt_context_destroy": (None, [_p]),
    "mt_context_cache_stats": (_i, [_p, ctypes.POINTER(CacheStats)]),
    "mt_context_disk_cache_stats": (_i, [_p, ctypes.POINTER(DiskCacheStats)]),
    "mt_compile_options_init": (None, [ctypes.POINTER(CompileOptions)]),
    "mt_jit_compile": (_p, [_p, _s, ctypes.POINTER(CompileOptions), _diag]),
    "mt_kernel_run": (_i, [_p, ctypes.POINTER(_p), _i, ctypes.POINTER(_p), _i, _diag]),
    "mt_kernel_dump": (_s, [_p, _i]),
    "mt_kernel_dump_unavailable": (_s, [_p, _i]),
    "mt_kernel_pass_dump": (_s, [_p, _s]),
    "mt_kernel_num_params": (_i, [_p]),
    "mt_kernel_num_results": (_i, [_p]),
    "mt_kernel_param_name": (_s, [_p, _i]),
    "mt_kernel_param_dtype": (_i, [_p, _i]),
    "mt_kernel_param_ndim": (_i, [_p, _i]),
    "mt_kernel_param_dim": (ctypes.c_int64, [_p, _i, _i]),
    "mt_kernel_param_dim_name": (_s, [_p, _i, _i]),
    "mt_kernel_result_dtype": (_i, [_p, _i]),
    "mt_kernel_result_ndim": (_i, [_p, _i]),
    "mt_kernel_result_dim": (ctypes.c_int64, [_p, _i, _i]),
    "mt_kernel_name": (_s, [_p]),
    "mt_kernel_param_device": (Device, [_p, _i]),
    "mt_kernel_result_device": (Device, [_p, _i]),
    "mt_kernel_tensor_to": (_i, [_p, _p, Device, ctypes.POINTER(_p), _diag]),
    "mt_kernel_compile_times": (_i, [_p, ctypes.POINTER(CompileTimes)]),
    "mt_kernel_release": (None, [_p]),
    "mt_tensor_wrap": (_p, [_p, _i, _i, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]),
    "mt_tensor_retain": (None, [_p]),
    "mt_tensor_release": (None, [_p]),  # for tensors whose release runs no Python code
    "mt_tensor_data": (_p, [_p]),
    "mt_tensor_dtype": (_i, [_p]),
    "mt_tensor_ndim": (_i, [_p]),
    "mt_tensor_shape": (ctypes.POINTER(ctypes.c_int64), [_p]),
    "mt_tensor_strides": (ctypes.POINTER(ctypes.c_int64), [_p]),
    "mt_tensor_numel": (ctypes.c_int64, [_p]),
    "mt_tensor_device": (Device, [_p]),
    "mt_tensor_to_dlpack": (_p, [_p, _diag]),
    "mt_tensor_to_dlpack_versioned": (_p, [_p, _diag]),
    "mt_status_str": (_s, [_i]),
    "mt_stage_str": (_s, [_i]),
    "mt_kernel_num_pass_dumps": (_i, [_p]),
    "mt_kernel_pass_dump_name": (_s, [_p, _i]),
    "mt_kernel_pass_dump_at": (_s, [_p, _i]),
}
# newer than the first 0.1 library: a library without them still loads
OPTIONAL = {"mt_kernel_num_pass_dumps", "mt_kernel_pass_dump_name", "mt_kernel_pass_dump_at",
            "mt_context_disk_cache_stats"}
PYFUNCS = {
    "mt_tensor_release": (None, [_p]),
    "mt_tensor_from_dlpack": (_p, [_p, _diag]),
    "mt_tensor_from_dlpack_versioned": (_p, [_p, _diag]),
}


def _candidates():
    """(description, path or name) pairs, in the order they are tried."""
    env = os.environ.get("MINITRITON_LIBRARY")
    if env:
        yield "MINITRITON_LIBRARY", env
    try:
        from . import _install_info  # written by setup.py
        build_dir = _install_info.BUILD_DIR
    except ImportError:
        build_dir = None
    if build_dir:
        yield "the build tree of the repository it was installed from", os.path.join(build_dir, "libminitriton.so")
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(repo, "include", "minitriton.h")):
        tree = os.path.join(repo, "build", "libminitriton.so")
        if not build_dir or os.path.abspath(tree) != os.path.abspath(os.path.join(build_dir, "libminitriton.so")):
            yield "the build tree of the repository it is imported from", tree
    found = ctypes.util.find_library("minitriton")
    if found:
        yield 'ctypes.util.find_library("minitriton")', found
    else:
        yield 'ctypes.util.find_library("minitriton")', None
    yield "the dynamic loader's search path", SONAME
    for prefix in ("/usr/local/lib", "/usr/lib"):
        yield "the default prefix " + prefix, os.path.join(prefix, SONAME)


def _load():
    tried = []
    env = os.environ.get("MINITRITON_LIBRARY")
    for what, name in _candidates():
        if env and what != "MINITRITON_LIBRARY":
            break  # a library named explicitly is the only one tried
        if name is None:
            tried.append("%s: found nothing" % what)
            continue
        if os.sep in name and not os.path.exists(name):
            tried.append("%s: %s does not exist" % (what, name))
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append("%s: %s: %s" % (what, name, e))
    raise ImportError(
        "minitriton: cannot find the shared library libminitriton.so; tried:\n  - "
        + "\n  - ".join(tried)
        + ("\nMINITRITON_LIBRARY is set, so nothing else was tried." if env else "")
        + "\nBuild it (cmake --build build --target minitriton) in the repository the package "
        "was installed from, install it (cmake --install build), or set MINITRITON_LIBRARY "
        "to its path."
    )


lib, path = _load()
pylib = ctypes.PyDLL(path, handle=lib._handle)  # same library, calls keep the GIL

for _name, (_res, _args) in FUNCS.items():
    try:
        _f = getattr(lib, _name)
    except AttributeError:
        if _name in OPTIONAL:
            continue
        raise ImportError("minitriton: %s has no %s (a library older than this package)"
                          % (path, _name)) from None
    _f.restype, _f.argtypes = _res, _args
for _name, (_res, _args) in PYFUNCS.items():
    _f = getattr(pylib, _name)
    _f.restype, _f.argtypes = _res, _args

VERSION = lib.mt_version().decode()
if VERSION.split(".")[:2] != ["0", "1"]:
    raise ImportError(
        "minitriton: %s is version %s; this package is for the 0.1 C API" % (path, VERSION)
    )

# The stages mt_kernel_dump knows, by their mtc --emit names, in enum order.
STAGES = []
while len(STAGES) < 64:
    _n = lib.mt_stage_str(len(STAGES)).decode()
    if _n == "unknown":
        break
    STAGES.append(_n)
