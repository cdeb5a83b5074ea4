"""@jit: Python functions compiled by libminitriton, run on NumPy arrays and
DLPack tensors.

The decorated function is never run by Python. Its source text (from
inspect, dedented, decorators dropped), with the sources of the @jit
functions it calls, is the kernel: minitriton's own parser reads it
(docs/language.md). So that diagnostics point into the Python file, the
source handed to the compiler puts each function of the entry's file at
its line in that file (empty lines before and between), and a diagnostic's
place is mapped back (_function_source, _error): the file, the line, and
the column moved right by the indentation that dedenting removed.

Compilation is lazy (first call, .compile(), or a dump) and happens once
per jit object; the C library's compile cache also makes a second jit
object over the same source and options cheap.

All kernels share one context per process (see context()): a context owns
a thread pool, a memory pool and the compile cache, and the C API lets
any number of threads compile and run on it at once; one per jit object
would start a thread pool per kernel.
"""
import ast
import ctypes
import inspect
import os
import threading

import numpy as np

from . import _dlpack
from ._lib import (
    DEVICE_CPU, DEVICE_CUDA, DTYPES, MAX_RANK, STAGES, STATUS_NAMES, TARGET_CPU, TARGET_CUDA,
    CacheStats, CompileOptions, CompileTimes, ContextOptions, Device, Diag, DiskCacheStats, lib,
    pylib,
)
from .errors import CompileError, MinitritonError, RunError

MT_ERR_UNAVAILABLE = STATUS_NAMES.index("MT_ERR_UNAVAILABLE")

__all__ = ["Tensor", "jit", "compile", "JITFunction", "Kernel", "Array", "context", "configure",
           "cache_stats", "disk_cache_stats", "from_dlpack"]

try:  # NumPy has no bfloat16; ml_dtypes (JAX's) adds one when installed
    import ml_dtypes as _ml_dtypes
    _BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # else the raw 16 bits, as np.save writes them: view("<u2")
    _BFLOAT16 = np.dtype("V2")
_NP_DTYPES = [np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32),
              np.dtype(np.int64), np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
              _BFLOAT16]
_c_i64 = ctypes.c_int64
_release = lib.mt_tensor_release  # for tensors whose release runs no Python code


# ---- annotations ----------------------------------------------------------------


class Tensor:
    """A tensor parameter's annotation: Tensor((2, 3), "float32"), also with
    keywords, Tensor(shape=(2, 3), dtype="float32"). A string dim ("n") is
    symbolic: bound by the arguments at each call. Python evaluates it when
    the function is defined; the compiler reads the same text."""

    def __init__(self, shape, dtype):
        if isinstance(shape, (int, str)):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)) or not all(isinstance(d, (int, str)) for d in shape):
            raise TypeError("Tensor shape must be a tuple of ints and dim names, got %r" % (shape,))
        if len(shape) > MAX_RANK:
            raise TypeError("Tensor rank %d is more than %d" % (len(shape), MAX_RANK))
        if str(dtype) not in DTYPES:
            raise TypeError("Tensor dtype must be one of %s, got %r" % (", ".join(DTYPES), dtype))
        self.shape = tuple(shape)
        self.dtype = str(dtype)

    def __repr__(self):
        return "Tensor(shape=%r, dtype=%r)" % (self.shape, self.dtype)

    def __eq__(self, other):
        return isinstance(other, Tensor) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


# ---- the context -----------------------------------------------------------------

_ctx_lock = threading.Lock()
_ctx = None
_ctx_opts = ContextOptions(0, 0)
_ctx_cache_dir = None  # the bytes _ctx_opts.cache_dir points at, kept alive


def configure(num_threads=0, cache_entries=0, cache_dir=None, cache_max_bytes=0):
    """Options of the process's context, before its first use: num_threads
    (0: one per CPU this process may run on) for the kernels' parallel
    loops, cache_entries (0: 256; negative: no compile cache), cache_dir
    (the disk cache of compiled code: None for the library's default,
    $MINITRITON_CACHE_DIR else ~/.cache/minitriton; "" for none) and
    cache_max_bytes (its bound; 0: 256 MiB; negative: no disk cache).
    Raises RuntimeError once the context exists."""
    global _ctx_cache_dir
    with _ctx_lock:
        if _ctx is not None:
            raise RuntimeError("minitriton.configure: the context already exists (call it before "
                               "the first compilation)")
        _ctx_opts.num_threads = int(num_threads)
        _ctx_opts.cache_entries = int(cache_entries)
        _ctx_cache_dir = None if cache_dir is None else os.fsencode(cache_dir)
        _ctx_opts.cache_dir = _ctx_cache_dir
        _ctx_opts.cache_max_bytes = int(cache_max_bytes)


def context():
    """The process's mt_context (a pointer), made on first use. It lives
    until the process exits."""
    global _ctx
    if _ctx is None:
        with _ctx_lock:
            if _ctx is None:
                c = lib.mt_context_create(ctypes.byref(_ctx_opts))
                if not c:
                    raise MinitritonError("minitriton: cannot create a context (out of memory, or "
                                          "LLVM cannot target this machine)")
                _ctx = c
    return _ctx


def cache_stats():
    """The compile cache's counters: hits, misses, evictions, entries, capacity."""
    s = CacheStats()
    lib.mt_context_cache_stats(context(), ctypes.byref(s))
    return {f: getattr(s, f) for f, _ in CacheStats._fields_}


def disk_cache_stats():
    """The disk cache's counters since the context was made: hits, misses,
    writes, errors, corrupt, evictions; and its dir (None when off) and
    max_bytes."""
    s = DiskCacheStats()
    lib.mt_context_disk_cache_stats(context(), ctypes.byref(s))
    d = {f: getattr(s, f) for f, _ in DiskCacheStats._fields_}
    d["dir"] = os.fsdecode(d["dir"]) if d["dir"] is not None else None
    return d


# ---- diagnostics -----------------------------------------------------------------


def _status_name(st):
    return STATUS_NAMES[st] if 0 <= st < len(STATUS_NAMES) else "MT_ERR_%d" % st


def _error(cls, diag, origin=None, prefix=None, filename=None):
    """The exception for a filled diag. origin (from _function_source) maps
    the place back to the Python file it came from: its name, its line, and
    the column with the indentation the compiler did not see."""
    text = diag.text.decode("utf-8", "replace")
    message = diag.message.decode("utf-8", "replace")
    line, col = diag.line, diag.col
    part = None
    for first, p in origin or ():
        if first <= line < first + len(p.text):
            part, offset = p, line - first
    if part is not None:
        filename = part.filename
        line = part.file_line + offset
        if col > 0:
            col += part.indent
        src = part.original[offset].rstrip("\r\n")
        text = "%s:%d:%d: error: %s\n%s\n%s^\n" % (filename, line, col, message, src,
                                                   " " * (col - 1 if col > 0 else 0))
    if prefix:
        text, message = prefix + text, prefix + message
    return cls(text.rstrip("\n"), message, _status_name(diag.status), line, col, filename)


# ---- the kernel's source ---------------------------------------------------------


class _Part:
    """One function's text as the compiler gets it, and where it came from."""

    def __init__(self, fn):
        self.fn = fn
        try:
            lines, start = inspect.getsourcelines(fn)
            self.filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except (OSError, TypeError) as e:
            raise CompileError(
                "minitriton: cannot get the source of %s (%s): define kernels in a file, or pass "
                "the source text to minitriton.compile()" % (getattr(fn, "__qualname__", fn), e)
            ) from None
        first = next((l for l in lines if l.strip()), "")
        prefix = first[:len(first) - len(first.lstrip())]
        self.indent = len(prefix)
        # the first line's indentation off every line that has it (lines that
        # do not, inside a string or a comment, are kept as they are)
        text_lines = [l[self.indent:] if l.startswith(prefix) else l for l in lines]
        def_line, end_line = 1, len(text_lines)
        self.node = None
        try:
            for node in ast.parse("".join(text_lines)).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    def_line, end_line = node.lineno, node.end_lineno or end_line
                    self.node = node
                    break
        except SyntaxError:
            pass  # the compiler will say where
        self.text = [l if l.endswith("\n") else l + "\n" for l in text_lines[def_line - 1:end_line]]
        self.original = lines[def_line - 1:end_line]  # for diagnostics: the file's own lines
        self.file_line = start + def_line - 1           # the def's line in its file

    def called_names(self):
        if self.node is None:
            return []
        return [n.func.id for n in ast.walk(self.node)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _lookup(fn, name):
    """What `name` means where fn was defined: a closure cell, else a global."""
    code = getattr(fn, "__code__", None)
    if code is not None and fn.__closure__ and name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell
            return None
    return getattr(fn, "__globals__", {}).get(name)


def _function_source(fn):
    """(source for the compiler, origin) for a @jit function and the @jit
    functions it calls (found by name where each was defined, recursively).

    The functions of the entry's file are placed at their lines in that
    file (empty lines before and between them), the others after them; the
    origin maps each line of the source back to its file, line and
    indentation: [(first source line, part)]."""
    parts = [_Part(fn)]
    seen = {id(fn)}
    i = 0
    while i < len(parts):
        for name in parts[i].called_names():
            obj = _lookup(parts[i].fn, name)
            if isinstance(obj, JITFunction) and id(obj.fn) not in seen:
                seen.add(id(obj.fn))
                parts.append(_Part(obj.fn))
        i += 1
    home = parts[0].filename
    local = sorted((p for p in parts if p.filename == home), key=lambda p: p.file_line)
    others = [p for p in parts if p.filename != home]
    out, origin, line = [], [], 1  # line: the source line the next text goes on
    for p in local:
        if p.file_line < line:  # overlapping (one inside another): after the rest
            others.insert(0, p)
            continue
        out.append("\n" * (p.file_line - line))
        line = p.file_line
        origin.append((line, p))
        out.extend(p.text)
        line += len(p.text)
    for p in others:
        out.append("\n")
        line += 1
        origin.append((line, p))
        out.extend(p.text)
        line += len(p.text)
    return "".join(out), origin


# ---- arrays ----------------------------------------------------------------------


_NP_CODES = {d: i for i, d in enumerate(_NP_DTYPES)}  # a non-native byte order is another dtype


def _mt_dtype(np_dtype):
    return _NP_CODES.get(np_dtype, -1)


def _shape_of(t):
    n = lib.mt_tensor_ndim(t)
    return tuple(lib.mt_tensor_shape(t)[:n]) if n else ()


_c_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_wrap_c = lib.mt_tensor_wrap


def _data_pointer(a):
    """The address of a's first element (a non-empty, C-contiguous array)."""
    if a.flags.writeable and a.dtype.kind != "V":  # (ml_dtypes' bfloat16 has no buffer format)
        return _addressof(_c_char_from_buffer(a))  # a third of a.ctypes.data's time
    return a.ctypes.data


def _wrap_array(a, code):
    """mt_tensor_wrap of a C-contiguous array of dtype code (NULL: no memory)."""
    shape = (_c_i64 * (a.ndim or 1))(*a.shape)
    return _wrap_c(_data_pointer(a) if a.size else None, code, a.ndim, shape, None)


class _HostBuffer:
    """Owns one reference on a host mt_tensor and shows its memory to NumPy
    (__array_interface__): the array made from it keeps it as its base, and
    the tensor goes back to the library's pool when the array is freed."""

    __slots__ = ("_t", "_release", "__array_interface__", "__weakref__")

    def __init__(self, t, shape, dtype, release):
        self._t = t
        self._release = release
        self.__array_interface__ = {
            "version": 3, "shape": shape, "typestr": dtype.str,
            "data": (lib.mt_tensor_data(t), False), "strides": None,
        }

    def __del__(self):
        t, self._t = self._t, None
        if t and self._release is not None:
            self._release(t)


def _host_array(t, dtype=None, release=None):
    """A NumPy array over host tensor t, taking over the caller's reference
    (dropped with `release`: lib's, or pylib's for an imported tensor)."""
    release = release or _release
    shape = _shape_of(t)
    if dtype is None:
        dtype = _NP_DTYPES[lib.mt_tensor_dtype(t)]
    if 0 in shape:  # no memory to share
        release(t)
        return np.empty(shape, dtype)
    a = np.asarray(_HostBuffer(t, shape, dtype, release))
    return a if a.dtype == dtype else a.view(dtype)  # bfloat16: the interface says '<V2'


class Array:
    """A tensor held by minitriton: a GPU kernel's result (on cuda:0, or on
    the emulated GPU of an emulated kernel), or what from_dlpack() imported.

    Pass it to a kernel (no copy when it is on the parameter's device),
    copy it to the host with .numpy(), or hand it to another framework
    through DLPack (__dlpack__, __dlpack_device__): torch.from_dlpack(a),
    cupy.from_dlpack(a), np.from_dlpack(a) for a host Array. The emulated
    GPU's memory cannot be shared (it is not CUDA memory): __dlpack__
    raises BufferError there."""

    def __init__(self, t, kernel=None, emulated=False, imported=False):
        self._t = t              # one reference, released with the Array
        # an imported tensor's last release calls its producer's deleter,
        # which may need the GIL: released through the GIL-holding binding
        self._release = pylib.mt_tensor_release if imported else lib.mt_tensor_release
        self._kernel = kernel    # the Kernel whose device the tensor is on (copies go through it)
        self._emulated = emulated
        self.shape = _shape_of(t)
        self.dtype = _NP_DTYPES[lib.mt_tensor_dtype(t)]
        d = lib.mt_tensor_device(t)
        self._device = (d.type, d.id)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def device(self):
        """"cpu", "cuda:N" (and "cuda:N (emulated)" for the emulated GPU)."""
        kind, ordinal = self._device
        if kind == DEVICE_CPU:
            return "cpu"
        name = "cuda:%d" % ordinal if kind == DEVICE_CUDA else "device %d:%d" % self._device
        return name + " (emulated)" if self._emulated else name

    def __repr__(self):
        return "minitriton.Array(shape=%r, dtype=%s, device=%r)" % (self.shape, self.dtype, self.device)

    def __del__(self):
        t, self._t = getattr(self, "_t", None), None
        if t and getattr(self, "_release", None) is not None:
            self._release(t)

    def numpy(self):
        """A host copy as a NumPy array (a view without copying for a host Array)."""
        if self._device[0] == DEVICE_CPU:
            lib.mt_tensor_retain(self._t)
            return _host_array(self._t, release=self._release)
        if self._kernel is None:
            raise RunError("minitriton: this Array is on %s, which no kernel of this process "
                           "can copy from" % self.device)
        out = ctypes.c_void_p()
        diag = Diag()
        st = lib.mt_kernel_tensor_to(self._kernel._k, self._t, Device(DEVICE_CPU, 0),
                                     ctypes.byref(out), ctypes.byref(diag))
        if st:
            raise _error(RunError, diag)
        return _host_array(out.value)

    def __array__(self, dtype=None, copy=None):
        if self._device[0] != DEVICE_CPU:
            raise TypeError("minitriton.Array on %s: copy it to the host with .numpy()" % self.device)
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        return a.copy() if copy else a

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self._emulated:
            raise BufferError("minitriton.Array on the emulated GPU: its memory is not CUDA "
                              "memory; copy it to the host with .numpy()")
        if dl_device is not None and tuple(dl_device) != self._device:
            raise BufferError("minitriton.Array is on %s; it is not exported to another device"
                              % self.device)
        if copy:
            raise BufferError("minitriton.Array exports its memory without copying only")
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        diag = Diag()
        fn = lib.mt_tensor_to_dlpack_versioned if versioned else lib.mt_tensor_to_dlpack
        m = fn(self._t, ctypes.byref(diag))
        if not m:
            raise BufferError(diag.text.decode("utf-8", "replace"))
        return _dlpack.make_capsule(m, versioned)


def from_dlpack(obj):
    """An Array over a DLPack producer's memory, without copying (the
    producer's memory stays alive as long as the Array)."""
    return Array(_import_dlpack(obj, "from_dlpack"), imported=True)


def _import_dlpack(obj, what):
    cap = _dlpack.consume(obj)
    ptr, versioned = _dlpack.take_capsule(cap)
    diag = Diag()
    fn = pylib.mt_tensor_from_dlpack_versioned if versioned else pylib.mt_tensor_from_dlpack
    t = fn(ptr, ctypes.byref(diag))
    if not t:  # still the capsule's: its destructor calls the producer's deleter
        raise _error(RunError, diag, prefix="%s: " % what)
    _dlpack.mark_used(cap, versioned)
    return t


# ---- kernels ---------------------------------------------------------------------


_TARGETS = {"cpu": TARGET_CPU, "gpu": TARGET_CUDA, "cuda": TARGET_CUDA}


class Kernel:
    """A compiled kernel: call it, dump its stages, read its signature.

    Made by @jit (from a function) or minitriton.compile (from source text).
    Safe to call from several threads at once (each call has its own
    tensors); the GIL is released while it compiles and runs."""

    def __init__(self, source, name=None, target="cpu", emulate=False, arch=None, opt_level=3,
                 unroll_threshold=16, dump_after=None, filename=None, entry=None, _origin=None):
        if target not in _TARGETS:
            raise ValueError("target must be 'cpu' or 'gpu' (also 'cuda'), got %r" % (target,))
        if emulate and _TARGETS[target] != TARGET_CUDA:
            raise ValueError("emulate=True is for target='gpu'")
        if arch is not None and _TARGETS[target] != TARGET_CUDA:
            raise ValueError("arch is for target='gpu'")
        self._source = source
        self._origin = _origin
        self.name = name or entry or "kernel"
        self.target = "gpu" if _TARGETS[target] == TARGET_CUDA else "cpu"
        self.emulate = bool(emulate)
        self._opts = dict(target=_TARGETS[target], emulate=int(bool(emulate)), arch=arch,
                          opt_level=int(opt_level), unroll_threshold=int(unroll_threshold),
                          dump_after=dump_after, filename=filename, entry=entry)
        self._k = None
        self._lock = threading.Lock()

    # -- compiling

    @property
    def source(self):
        """The source text handed to the compiler."""
        return self._source() if callable(self._source) else self._source

    def compile(self):
        """Compiles now (else the first call or dump does); raises CompileError."""
        if self._k is None:
            with self._lock:
                if self._k is None:
                    self._k = self._compile()
        return self

    def _compile(self):
        src = self.source
        if callable(self._source):  # resolved once
            self._source = src
        o = self._opts
        opts = CompileOptions()
        lib.mt_compile_options_init(ctypes.byref(opts))
        keep = []  # the bytes the options point at, alive during the call

        def cstr(s):
            b = s.encode() if isinstance(s, str) else s
            keep.append(b)
            return b

        if o["filename"]:
            opts.filename = cstr(o["filename"])
        if o["entry"]:
            opts.entry = cstr(o["entry"])
        if o["arch"]:
            opts.arch = cstr(o["arch"])
        if o["dump_after"]:
            d = o["dump_after"]
            opts.dump_after = cstr(d if isinstance(d, str) else ",".join(d))
        opts.target, opts.emulate = o["target"], o["emulate"]
        opts.opt_level, opts.unroll_threshold = o["opt_level"], o["unroll_threshold"]
        diag = Diag()
        k = lib.mt_jit_compile(context(), cstr(src), ctypes.byref(opts), ctypes.byref(diag))
        if not k:
            raise _error(CompileError, diag, self._origin, filename=self._filename())
        self._np = lib.mt_kernel_num_params(k)
        self._nr = lib.mt_kernel_num_results(k)
        self._param_names = [lib.mt_kernel_param_name(k, i).decode() for i in range(self._np)]
        self._param_ndim = [lib.mt_kernel_param_ndim(k, i) for i in range(self._np)]
        self._param_dtype = [lib.mt_kernel_param_dtype(k, i) for i in range(self._np)]
        self._param_dev = [lib.mt_kernel_param_device(k, i) for i in range(self._np)]
        self._param_on_cpu = [d.type == DEVICE_CPU for d in self._param_dev]
        self._result_dtype = [lib.mt_kernel_result_dtype(k, i) for i in range(self._nr)]
        self._result_on_cpu = [lib.mt_kernel_result_device(k, i).type == DEVICE_CPU
                               for i in range(self._nr)]
        return k

    def __del__(self):
        k, self._k = getattr(self, "_k", None), None
        if k and lib is not None:
            lib.mt_kernel_release(k)

    def _filename(self):
        return self._opts["filename"] or "<source>"

    # -- introspection

    def dump(self, stage="tir"):
        """The text of a stage: one of minitriton.STAGES (ast, graph,
        graph-opt, tir, tir-sched, llvm, asm, cuda, plan, dot). Raises ValueError for another name and
        MinitritonError (status MT_ERR_UNAVAILABLE) when the stage does not
        exist for this kernel (cuda for a CPU kernel), saying why."""
        if stage not in STAGES:
            raise ValueError("unknown stage %r; stages: %s" % (stage, ", ".join(STAGES)))
        self.compile()
        i = STAGES.index(stage)
        text = lib.mt_kernel_dump(self._k, i)
        if text is None:
            why = lib.mt_kernel_dump_unavailable(self._k, i).decode()
            raise MinitritonError("%s: no %s dump: %s" % (self.name, stage, why), why,
                                  "MT_ERR_UNAVAILABLE")
        return text.decode()

    def pass_dump(self, name):
        """The IR after pass `name`, recorded when dump_after named it; None
        otherwise. A pass that ran more than once: "simplify#2" is its
        second run, the bare name its last."""
        self.compile()
        text = lib.mt_kernel_pass_dump(self._k, name.encode())
        return None if text is None else text.decode()

    def pass_dumps(self):
        """[(name, text)] of every recorded pass dump, in the order the
        passes ran ("simplify#1", "simplify#2" for a pass run twice)."""
        self.compile()
        if not hasattr(lib, "mt_kernel_num_pass_dumps"):
            raise MinitritonError("%s: this libminitriton cannot list its pass dumps (too old)"
                                  % self.name)
        k = self._k
        return [(lib.mt_kernel_pass_dump_name(k, i).decode(), lib.mt_kernel_pass_dump_at(k, i).decode())
                for i in range(lib.mt_kernel_num_pass_dumps(k))]

    def _signature_dims(self, ndim, dim, dim_name):
        return tuple(dim(a) if dim(a) >= 0 else (dim_name(a) or b"?").decode() for a in range(ndim))

    @property
    def params(self):
        """[(name, Tensor)] in order; a scalar parameter is a rank-0 Tensor."""
        self.compile()
        k = self._k
        return [(self._param_names[i], Tensor(self._signature_dims(
            self._param_ndim[i], lambda a: lib.mt_kernel_param_dim(k, i, a),
            lambda a: lib.mt_kernel_param_dim_name(k, i, a)), DTYPES[self._param_dtype[i]]))
            for i in range(self._np)]

    @property
    def results(self):
        """[Tensor] of the results; a symbolic dim shows as "?"."""
        self.compile()
        k = self._k
        out = []
        for i in range(self._nr):
            nd = lib.mt_kernel_result_ndim(k, i)
            dims = tuple(lib.mt_kernel_result_dim(k, i, a) for a in range(nd))
            out.append(Tensor(tuple(d if d >= 0 else "?" for d in dims),
                              DTYPES[lib.mt_kernel_result_dtype(k, i)]))
        return out

    def compile_times(self):
        """Milliseconds of each phase of the compilation (mt_compile_times)."""
        self.compile()
        t = CompileTimes()
        lib.mt_kernel_compile_times(self._k, ctypes.byref(t))
        return {f: getattr(t, f) for f, _ in CompileTimes._fields_}

    # -- running

    def __call__(self, *args, out=None, **kwargs):
        self.compile()
        args = self._bind(args, kwargs)
        owned = []  # (mt_tensor, its release function): references this call holds
        keep = []   # arrays that tensors of this call borrow (converted arguments)
        outs = []
        try:
            argv = (ctypes.c_void_p * max(self._np, 1))()
            for i, a in enumerate(args):
                if type(a) is np.ndarray and self._param_on_cpu[i]:
                    # the common case, inline: a C-contiguous array of a known dtype
                    code = _NP_CODES.get(a.dtype, -1)
                    if code >= 0 and a.flags.c_contiguous and a.ndim <= MAX_RANK:
                        t = _wrap_array(a, code)
                        if t:
                            owned.append((t, _release))
                            argv[i] = t
                            continue
                argv[i] = self._argument(i, a, owned, keep)
            outs = self._out_slots(out, keep)
            resv = (ctypes.c_void_p * max(self._nr, 1))()
            for i, (t, _) in enumerate(outs):
                resv[i] = t
            diag = Diag()
            st = lib.mt_kernel_run(self._k, argv, self._np, resv, self._nr, ctypes.byref(diag))
            if st == MT_ERR_UNAVAILABLE and self.target == "gpu" and not self.emulate:
                raise self._gpu_error(diag, "cannot run")
            if st:
                raise _error(RunError, diag, self._origin, filename=self._filename())
            fresh = [i for i in range(self._nr) if outs[i][1] is None]
            owned.extend((resv[i], _release) for i in fresh)  # released if wrapping one fails
            results = [o for _, o in outs]
            for i in fresh:
                results[i] = self._result(i, resv[i])  # the result owns the reference now
                owned.remove((resv[i], _release))
        finally:
            for t, release in owned:
                release(t)
            for t, release in outs:
                if t:
                    (release._release if isinstance(release, Array) else _release)(t)
        return results[0] if self._nr == 1 else tuple(results)

    def _gpu_error(self, diag, what):
        msg = diag.message.decode("utf-8", "replace")
        if diag.status == MT_ERR_UNAVAILABLE:
            msg = ("%s(): %s: no GPU is available here (%s); @jit(target=\"gpu\", emulate=True) "
                   "runs the same GPU kernels on the CPU" % (self.name, what, msg))
        else:
            msg = "%s(): %s: %s" % (self.name, what, msg)
        return RunError(msg, msg, _status_name(diag.status))

    def _bind(self, args, kwargs):
        if not kwargs and len(args) == self._np:
            return args
        bound = list(args) + [None] * (self._np - len(args))
        if len(args) > self._np:
            raise TypeError("%s() takes %d arguments (%s), got %d" % (
                self.name, self._np, ", ".join(self._param_names), len(args)))
        have = [True] * len(args) + [False] * (self._np - len(args))
        for key, v in kwargs.items():
            if key not in self._param_names:
                raise TypeError("%s() got an unexpected keyword argument '%s'" % (self.name, key))
            i = self._param_names.index(key)
            if have[i]:
                raise TypeError("%s() got multiple values for argument '%s'" % (self.name, key))
            bound[i], have[i] = v, True
        missing = [n for n, h in zip(self._param_names, have) if not h]
        if missing:
            raise TypeError("%s() missing argument%s: %s" % (
                self.name, "s" if len(missing) > 1 else "", ", ".join(repr(m) for m in missing)))
        return bound

    def _argument(self, i, a, owned, keep):
        """An mt_tensor (a new reference, put in owned) for argument i; the
        arrays it borrows go into keep, alive until the run is over."""
        name = self._param_names[i]
        dev = self._param_dev[i]
        if isinstance(a, Array):
            lib.mt_tensor_retain(a._t)
            owned.append((a._t, a._release))
            return a._t
        if isinstance(a, (bool, int, float, np.generic)) and not isinstance(a, np.ndarray):
            a = self._scalar(i, a)
        elif isinstance(a, (list, tuple)):
            a = np.asarray(a, dtype=_NP_DTYPES[self._param_dtype[i]])
        if isinstance(a, np.ndarray):
            t = self._wrap(name, a, keep)
            owned.append((t, _release))
        elif hasattr(a, "__dlpack__"):
            t = _import_dlpack(a, "argument '%s'" % name)
            owned.append((t, pylib.mt_tensor_release))  # its deleter may need the GIL
        else:
            raise TypeError("%s(): argument '%s' is a %s; expected a NumPy array, a DLPack tensor "
                            "(__dlpack__), a minitriton.Array%s" % (
                                self.name, name, type(a).__name__,
                                " or a Python scalar" if self._param_ndim[i] == 0 else ""))
        if dev.type == DEVICE_CPU:
            return t  # the run checks the argument's device
        d = lib.mt_tensor_device(t)
        if (d.type, d.id) == (DEVICE_CPU, 0):
            # a host argument of a GPU parameter: copied there for this call
            moved = ctypes.c_void_p()
            diag = Diag()
            st = lib.mt_kernel_tensor_to(self._k, t, dev, ctypes.byref(moved), ctypes.byref(diag))
            if st:
                raise self._gpu_error(diag, "cannot copy argument '%s' to the GPU" % name)
            owned.append((moved.value, _release))
            return moved.value
        return t

    def _scalar(self, i, v):
        name = self._param_names[i]
        if self._param_ndim[i] != 0:
            raise RunError("%s(): argument '%s' is a scalar (%r) but the parameter is a rank-%d "
                           "tensor" % (self.name, name, v, self._param_ndim[i]))
        dt = _NP_DTYPES[self._param_dtype[i]]
        if isinstance(v, np.generic):
            return np.asarray(v)  # its own dtype: the run checks it
        if dt.kind in "iu":
            if isinstance(v, float):
                raise RunError("%s(): argument '%s' is the float %r; the parameter is %s"
                               % (self.name, name, v, dt.name))
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                raise RunError("%s(): argument '%s' = %d is out of range for %s (%d to %d)"
                               % (self.name, name, v, dt.name, info.min, info.max))
        elif dt.kind == "b" and not isinstance(v, bool):
            raise RunError("%s(): argument '%s' is %r; the parameter is bool"
                           % (self.name, name, v))
        return np.asarray(v, dtype=dt)

    def _wrap(self, what, a, keep, writable=False):
        code = _mt_dtype(a.dtype)
        if code < 0:
            raise RunError("%s(): %s has dtype %s, which minitriton does not have (it has %s)"
                           % (self.name, "argument '%s'" % what if not writable else what,
                              a.dtype, ", ".join(DTYPES)))
        if a.ndim > MAX_RANK:
            raise RunError("%s(): argument '%s' has rank %d, more than %d"
                           % (self.name, what, a.ndim, MAX_RANK))
        if not a.flags.c_contiguous:
            if writable:
                raise RunError("%s(): %s is not C-contiguous; results are written in place only "
                               "into C-contiguous arrays" % (self.name, what))
            a = np.ascontiguousarray(a)  # a strided argument is copied (documented)
        if writable and not a.flags.writeable:
            raise RunError("%s(): %s is read-only" % (self.name, what))
        keep.append(a)
        t = _wrap_array(a, code)
        if not t:
            raise MemoryError("minitriton: cannot wrap an array")
        return t

    def _out_slots(self, out, keep):
        """[(mt_tensor or None, the object to return)] per result."""
        if out is None:
            return [(None, None)] * self._nr
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != self._nr:
            raise TypeError("%s(): out= has %d arrays; the kernel has %d results"
                            % (self.name, len(outs), self._nr))
        slots = []
        try:
            for i, o in enumerate(outs):
                if o is None:
                    slots.append((None, None))
                elif isinstance(o, Array):
                    lib.mt_tensor_retain(o._t)
                    slots.append((o._t, o))
                elif isinstance(o, np.ndarray):
                    slots.append((self._wrap("out[%d]" % i, o, keep, writable=True), o))
                else:
                    raise TypeError("%s(): out[%d] is a %s; expected a NumPy array or a "
                                    "minitriton.Array" % (self.name, i, type(o).__name__))
        except BaseException:
            for t, o in slots:
                if t:
                    (o._release if isinstance(o, Array) else _release)(t)
            raise
        return slots

    def _result(self, i, t):
        if self._result_on_cpu[i]:
            return _host_array(t, _NP_DTYPES[self._result_dtype[i]])
        return Array(t, self, self.emulate)

    def __repr__(self):
        return "<minitriton kernel %s target=%s%s>" % (
            self.name, self.target, " (emulated)" if self.emulate else "")


class JITFunction(Kernel):
    """What @jit returns: a Kernel whose source is the decorated function's."""

    def __init__(self, fn, **options):
        self.fn = fn

        def source():
            src, origin = _function_source(fn)
            self._origin = origin
            self._opts["filename"] = self._opts["filename"] or origin[0][1].filename
            return src

        super().__init__(source, name=fn.__name__, entry=fn.__name__, **options)
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = getattr(fn, "__module__", None)
        self.__wrapped__ = fn


def jit(fn=None, *, target="cpu", emulate=False, arch=None, opt_level=3, unroll_threshold=16,
        dump_after=None):
    """Compiles a function written in minitriton's kernel language.

        @jit
        def add(a: Tensor((2, 3), "float32"), b: Tensor((2, 3), "float32")):
            return a + b

        @jit(target="gpu", emulate=True)     # the GPU schedule, run on the CPU
        def softmax_rows(x: Tensor(("n", 128), "float32")):
            return softmax(x)

    target: "cpu" (default) or "gpu" (an NVIDIA GPU; "cuda" also works);
    emulate: with target="gpu", run under the CPU emulation of the CUDA
    execution model; arch: "sm_80" ... "sm_90" for target="gpu";
    opt_level 0..3; unroll_threshold; dump_after: pass names whose IR to
    keep (pass_dump). Compiles on the first call, .compile() or dump()."""
    options = dict(target=target, emulate=emulate, arch=arch, opt_level=opt_level,
                   unroll_threshold=unroll_threshold, dump_after=dump_after)
    if fn is None:
        return lambda f: JITFunction(f, **options)
    if not callable(fn):
        raise TypeError("@jit decorates a function; for options write @jit(target=...)")
    return JITFunction(fn, **options)


def compile(source, entry=None, filename=None, **options):
    """A Kernel from source text (several functions may call each other;
    entry names the one to compile, else the last), compiled now."""
    k = Kernel(source, entry=entry, filename=filename, **options)
    if entry is None:
        k.name = "kernel"
    k.compile()
    if entry is None:
        k.name = lib.mt_kernel_name(k._k).decode()
    return k
