"""gpu_reference.py -- the GPU references of minitriton's future GPU benchmark.

Measures, on one NVIDIA GPU, in one run, what minitriton's CUDA kernels will be
compared with, and probes the pieces the future runtime will load itself
(libcuda and NVRTC through ctypes, no torch):

  references (torch eager unless said; CUDA events, warm-up, median of N):
    D2D copy        dst.copy_(src), 256 MiB and 1 GiB fp32 (GB/s: bytes read + written)
    elementwise     a+b+a and torch.exp(a)*b+1, 16M and 256M fp32 elements
                    (GB/s counting the minimal traffic: 2 reads + 1 write per element)
    softmax         torch.softmax(x, dim=-1), 4096x4096 and 32768x1024 fp32
    layer_norm      F.layer_norm(x, (N,), weight, bias), same shapes
                    (GB/s counting 1 read + 1 write of x)
    triton softmax  our own one-program-per-row Triton kernel, same shapes,
                    checked against torch.softmax (max abs error < 1e-5) first;
                    only if `import triton` works
    matmul          4096^3, fp32 with TF32 off (checked against fp64), fp16
    MLP             784-128-10 (linear, relu, linear), fp32, batch 4096 and 1
  device facts      name, capability, SMs, memory, versions (torch, CUDA, driver, triton)
  runtime probe     libcuda.so.1, cuDriverGetVersion, libnvrtc (where, which
                    version), an NVRTC compile to CUBIN and to PTX for the
                    device's arch (timed), cuModuleLoadData + cuLaunchKernel
                    of both on 32 floats, checked; run in a child process so
                    that a crash there cannot take the references with it.

Usage:
    python3 bench/gpu_reference.py [--quick] [--json PATH]

Markdown on stdout (at the end), progress on stderr. With --json, the same
data as JSON, rewritten after every section (a crash leaves what was done;
"status" says "complete" at the end). --quick: the smaller shapes only, fewer
repetitions. Every step is wrapped: a failure is reported in its row and the
script goes on; the exit status is 0 once the report is printed.

GB/s and TFLOP/s are decimal (1e9 bytes, 1e12 flop). Times are the median of
per-repetition CUDA event intervals, back to back (no synchronization between
repetitions); "best" is the minimum. Buffers of 64 MiB and more exceed the
50 MiB L2 of an H100/H200, except where said.
"""
import argparse
import ctypes
import ctypes.util
import glob
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

SCRIPT_VERSION = 1

# --------------------------------------------------------------------------
# Optional imports, at module level so that the Triton kernel below is a plain
# module-level function (what @triton.jit expects: its globals hold `tl`).
# torch is needed for the references; the probe child (--probe-child) imports
# neither: the future runtime will not have them either.

torch = None
F = None
triton = None
tl = None
TORCH_ERROR = None
TRITON_ERROR = None
_mt_row_softmax = None

if "--probe-child" not in sys.argv[1:]:
    try:
        import torch
        import torch.nn.functional as F
    except Exception as _e:  # noqa: BLE001
        torch = F = None
        TORCH_ERROR = f"{type(_e).__name__}: {_e}"
    if torch is not None:
        try:
            import triton
            import triton.language as tl
        except Exception as _e:  # noqa: BLE001
            triton = tl = None
            TRITON_ERROR = f"{type(_e).__name__}: {_e}"

if triton is not None:
    try:
        @triton.jit
        def _mt_row_softmax(dst, src, src_row_stride, dst_row_stride, n_cols,
                            BLOCK: tl.constexpr):
            # One program per row; the whole row lives in registers (BLOCK is
            # the next power of two of n_cols, the tail lanes masked off).
            row = tl.program_id(0).to(tl.int64)
            lane = tl.arange(0, BLOCK)
            inside = lane < n_cols
            v = tl.load(src + row * src_row_stride + lane, mask=inside,
                        other=-float("inf"))
            v = v - tl.max(v, axis=0)
            num = tl.exp(v)
            inv = 1.0 / tl.sum(num, axis=0)
            tl.store(dst + row * dst_row_stride + lane, num * inv, mask=inside)
    except Exception as _e:  # noqa: BLE001
        _mt_row_softmax = None
        TRITON_ERROR = f"defining the kernel: {type(_e).__name__}: {_e}"


def _triton_warps(block):
    if block <= 1024:
        return 4
    if block <= 4096:
        return 8
    return 16


def triton_softmax(x, out=None):
    rows, cols = x.shape
    if out is None:
        out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    _mt_row_softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols,
                             BLOCK=block, num_warps=_triton_warps(block))
    return out


# --------------------------------------------------------------------------
# Small helpers.

def log(msg):
    print(f"[gpu_reference] {msg}", file=sys.stderr, flush=True)


def errstr(e, limit=400):
    s = f"{type(e).__name__}: {e}"
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit] + "..."


def fmt(v, nd=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == 0.0:
            return "0"
        if abs(v) >= 100:
            return f"{v:.1f}"
        if abs(v) >= 1:
            return f"{v:.{nd}f}".rstrip("0").rstrip(".") if nd > 0 else f"{v:.0f}"
        return f"{v:.{nd}g}"
    return str(v)


def md_cell(v):
    return str(v).replace("|", "\\|").replace("\n", " ")


# --------------------------------------------------------------------------
# Timing.

class Config:
    def __init__(self, quick):
        self.quick = quick
        self.warmup = 2 if quick else 5
        self.target_s = 0.1 if quick else 0.4   # timed seconds per case
        self.min_reps = 5 if quick else 10
        self.max_reps = 30 if quick else 200
        self.deadline_s = 90 if quick else 150  # after this, min_reps only
        self.t0 = time.monotonic()
        # MLP batch 1: per-call time from loops of `inner` back-to-back calls
        self.loop_inner = 200 if quick else 1000
        self.loop_outer = 5 if quick else 15

    def late(self):
        return time.monotonic() - self.t0 > self.deadline_s


PREFILL_CYCLES = 40_000_000  # about 20 ms at the H100/H200's ~2 GHz
_SLEEP_STATE = {"ok": None}


def gpu_sleep():
    """torch.cuda._sleep (a private spin kernel, present since torch 1.x);
    remembered as unavailable after its first failure."""
    if _SLEEP_STATE["ok"] is False:
        return
    try:
        torch.cuda._sleep(PREFILL_CYCLES)
        _SLEEP_STATE["ok"] = True
    except Exception as e:  # noqa: BLE001
        _SLEEP_STATE["ok"] = False
        _SLEEP_STATE["error"] = errstr(e)


def cuda_time(cfg, fn):
    """Median and best of per-repetition CUDA event intervals, in ms."""
    for _ in range(cfg.warmup):
        fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    est_ms = max(s.elapsed_time(e), 1e-3)
    if cfg.late():
        reps = cfg.min_reps
    else:
        reps = int(cfg.target_s * 1e3 / est_ms)
        reps = max(cfg.min_reps, min(cfg.max_reps, reps))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    # Queue a GPU sleep first, so that the host enqueues the repetitions while
    # the GPU is busy: the events then time the kernels back to back, not the
    # host's launch overhead (which the MLP batch-1 loop measures instead).
    gpu_sleep()
    for i in range(reps):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) for a, b in zip(starts, ends))
    return {"median_ms": statistics.median(ts), "best_ms": ts[0], "reps": reps}


def cuda_time_loop(cfg, fn):
    """Per-call time of `inner` back-to-back calls (launch-bound cases):
    median and best over `outer` loops, from CUDA events around each loop,
    plus the host wall time per call (loop + synchronize)."""
    inner, outer = cfg.loop_inner, cfg.loop_outer
    for _ in range(max(cfg.warmup, 20)):
        fn()
    torch.cuda.synchronize()
    ev, host = [], []
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    for _ in range(outer):
        t = time.perf_counter()
        s.record()
        for _ in range(inner):
            fn()
        e.record()
        torch.cuda.synchronize()
        host.append((time.perf_counter() - t) / inner * 1e3)
        ev.append(s.elapsed_time(e) / inner)
    ev.sort()
    return {"median_ms": statistics.median(ev), "best_ms": ev[0],
            "reps": inner * outer, "host_ms_per_call": statistics.median(host)}


# --------------------------------------------------------------------------
# References.

SECTION_ORDER = ["copy", "elementwise", "softmax", "layer_norm",
                 "triton_softmax", "matmul", "mlp"]


class Report:
    def __init__(self, args):
        self.args = args
        self.data = {
            "script": "bench/gpu_reference.py",
            "script_version": SCRIPT_VERSION,
            "mode": "quick" if args.quick else "full",
            "status": "running",
            "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "elapsed_s": None,
            "device": {},
            "references": [],
            "probe": [],
            "errors": [],
        }
        self.t0 = time.monotonic()

    def save(self):
        self.data["elapsed_s"] = round(time.monotonic() - self.t0, 2)
        path = self.args.json
        if not path:
            return
        try:
            d = os.path.dirname(os.path.abspath(path))
            os.makedirs(d, exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(self.data, f, indent=1, default=str)
                f.write("\n")
            os.replace(tmp, path)
        except Exception as e:  # noqa: BLE001
            log(f"cannot write {path}: {errstr(e)}")

    def add(self, row):
        self.data["references"].append(row)
        r = row
        if r.get("error"):
            log(f"{r['section']} {r['name']} {r['shape']}: ERROR {r['error']}")
        else:
            log(f"{r['section']} {r['name']} {r['shape']}: "
                f"{fmt(r.get('median_ms'))} ms, {r.get('metric', '')}")


def make_row(section, name, shape, dtype, timing=None, nbytes=None, flops=None,
             per_call=False, check=None, note=None, error=None):
    row = {"section": section, "name": name, "shape": shape, "dtype": dtype,
           "median_ms": None, "best_ms": None, "reps": None, "bytes": nbytes,
           "flops": flops, "gbps": None, "tflops": None, "us_per_call": None,
           "metric": "", "check": check, "note": note, "error": error}
    if timing:
        row.update({k: timing[k] for k in ("median_ms", "best_ms", "reps")})
        if "host_ms_per_call" in timing:
            row["host_us_per_call"] = timing["host_ms_per_call"] * 1e3
        sec = timing["median_ms"] * 1e-3
        if nbytes:
            row["gbps"] = nbytes / sec / 1e9
            row["metric"] = f"{row['gbps']:.1f} GB/s"
        if flops:
            row["tflops"] = flops / sec / 1e12
            if not per_call:
                row["metric"] = f"{row['tflops']:.2f} TFLOP/s"
        if per_call:
            row["us_per_call"] = timing["median_ms"] * 1e3
            row["metric"] = f"{row['us_per_call']:.1f} us/call"
    return row


def run_case(rep, cfg, section, name, shape, dtype, setup, **kw):
    """setup() -> (fn, check_str_or_None); times fn with cuda_time."""
    loop = kw.pop("loop", False)
    try:
        fn, check = setup()
        if fn is None:  # the check failed: report it, do not time
            rep.add(make_row(section, name, shape, dtype, check=check,
                             error="check failed, not timed", **kw))
            return
        timing = (cuda_time_loop if loop else cuda_time)(cfg, fn)
        rep.add(make_row(section, name, shape, dtype, timing=timing,
                         check=check, **kw))
    except Exception as e:  # noqa: BLE001
        rep.add(make_row(section, name, shape, dtype, error=errstr(e), **kw))


def free_cuda():
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001
        pass


def bench_copy(rep, cfg):
    sizes = [256 << 20] if cfg.quick else [256 << 20, 1 << 30]
    for nb in sizes:
        n = nb // 4
        label = f"{nb >> 20} MiB" if nb < (1 << 30) else f"{nb >> 30} GiB"
        st = {}

        def setup():
            st["src"] = torch.rand(n, device="cuda", dtype=torch.float32)
            st["dst"] = torch.empty_like(st["src"])
            src, dst = st["src"], st["dst"]
            dst.copy_(src)
            ok = bool(torch.equal(dst[:1 << 20], src[:1 << 20]))
            return (lambda: dst.copy_(src)), ("ok" if ok else "MISMATCH")

        run_case(rep, cfg, "copy", "torch dst.copy_(src) D2D", label, "float32",
                 setup, nbytes=2 * nb, note="bytes read + written")
        st.clear()
        free_cuda()


def bench_elementwise(rep, cfg):
    sizes = [16 << 20] if cfg.quick else [16 << 20, 256 << 20]
    for n in sizes:
        st = {}

        def alloc():
            if "a" not in st:
                st["a"] = torch.rand(n, device="cuda", dtype=torch.float32)
                st["b"] = torch.rand(n, device="cuda", dtype=torch.float32)
            return st["a"], st["b"]

        def setup_add():
            a, b = alloc()
            return (lambda: a + b + a), None

        def setup_exp():
            a, b = alloc()
            return (lambda: torch.exp(a) * b + 1), None

        label = f"{n >> 20}M"
        note = "eager, {} kernels; GB/s from the minimal 2 reads + 1 write per element"
        run_case(rep, cfg, "elementwise", "torch a+b+a", label, "float32",
                 setup_add, nbytes=12 * n, note=note.format(2))
        run_case(rep, cfg, "elementwise", "torch exp(a)*b+1", label, "float32",
                 setup_exp, nbytes=12 * n, note=note.format(3))
        st.clear()
        free_cuda()


def row_shapes(cfg):
    return [(4096, 4096)] if cfg.quick else [(4096, 4096), (32768, 1024)]


def bench_softmax_layernorm(rep, cfg):
    for rows, cols in row_shapes(cfg):
        st = {}
        shape = f"{rows}x{cols}"
        nb = 2 * rows * cols * 4

        def setup_sm():
            x = torch.randn(rows, cols, device="cuda", dtype=torch.float32)
            st["x"] = x
            return (lambda: torch.softmax(x, dim=-1)), None

        def setup_ln():
            x = st.get("x")
            if x is None:
                x = torch.randn(rows, cols, device="cuda", dtype=torch.float32)
                st["x"] = x
            w = torch.randn(cols, device="cuda", dtype=torch.float32)
            b = torch.randn(cols, device="cuda", dtype=torch.float32)
            st["w"], st["b"] = w, b
            return (lambda: F.layer_norm(x, (cols,), w, b)), None

        run_case(rep, cfg, "softmax", "torch.softmax(dim=-1)", shape, "float32",
                 setup_sm, nbytes=nb, note="GB/s from 1 read + 1 write")
        run_case(rep, cfg, "layer_norm", "F.layer_norm(weight, bias)", shape,
                 "float32", setup_ln, nbytes=nb,
                 note="GB/s from 1 read + 1 write of x")
        st.clear()
        free_cuda()


def bench_triton_softmax(rep, cfg):
    if _mt_row_softmax is None:
        rep.add(make_row("triton_softmax", "triton row softmax (ours)", "-",
                         "float32", error=f"triton unavailable: {TRITON_ERROR}"))
        return
    # A shape whose row is not a power of two, for the masked lanes; checked
    # once (not timed) before the timed shapes.
    try:
        x = torch.randn(64, 1000, device="cuda", dtype=torch.float32) * 4
        err = (triton_softmax(x) - torch.softmax(x, dim=-1)).abs().max().item()
        rep.data.setdefault("triton_checks", []).append(
            {"shape": "64x1000", "max_abs_err": err, "ok": err < 1e-5})
        log(f"triton softmax 64x1000 check: max abs err {err:.3g}")
    except Exception as e:  # noqa: BLE001
        rep.data.setdefault("triton_checks", []).append(
            {"shape": "64x1000", "error": errstr(e)})
        log(f"triton softmax 64x1000 check: {errstr(e)}")
    for rows, cols in row_shapes(cfg):
        st = {}
        shape = f"{rows}x{cols}"
        block = triton.next_power_of_2(cols)

        def setup():
            x = torch.randn(rows, cols, device="cuda", dtype=torch.float32) * 4
            y = torch.empty_like(x)
            t = time.perf_counter()
            triton_softmax(x, y)  # first call: compiles
            torch.cuda.synchronize()
            st["first_call_ms"] = (time.perf_counter() - t) * 1e3
            err = (y - torch.softmax(x, dim=-1)).abs().max().item()
            check = f"max abs err {err:.3g} vs torch.softmax"
            if not err < 1e-5:
                return None, check + " (limit 1e-5)"
            st["x"], st["y"] = x, y
            return (lambda: triton_softmax(x, y)), check

        run_case(rep, cfg, "triton_softmax", "triton row softmax (ours)", shape,
                 "float32", setup, nbytes=2 * rows * cols * 4,
                 note=f"BLOCK={block} num_warps={_triton_warps(block)}, "
                      f"one program per row")
        if "first_call_ms" in st and rep.data["references"]:
            rep.data["references"][-1]["first_call_ms"] = st["first_call_ms"]
        st.clear()
        free_cuda()


def _tf32_state():
    """The TF32 settings as torch reports them (torch >= 2.9 has a second
    API, fp32_precision, and may raise when the two disagree)."""
    m = torch.backends.cuda.matmul
    s = {}
    for key, get in (("allow_tf32", lambda: m.allow_tf32),
                     ("fp32_precision", lambda: m.fp32_precision),
                     ("float32_matmul_precision",
                      lambda: torch.get_float32_matmul_precision())):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s[key] = get()
        except Exception as e:  # noqa: BLE001
            s[key] = f"<{type(e).__name__}>"
    return s


def _tf32_off(rep):
    """torch.backends.cuda.matmul.allow_tf32 = False (the legacy switch, as the
    issue says); the new switch fp32_precision = 'ieee' only if that fails.
    The fp32 matmul row checks the result against fp64 either way."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.backends.cuda.matmul.allow_tf32 = False
    except Exception as e:  # noqa: BLE001
        rep.data["errors"].append(f"allow_tf32 = False: {errstr(e)}")
        try:
            torch.backends.cuda.matmul.fp32_precision = "ieee"
        except Exception as e2:  # noqa: BLE001
            rep.data["errors"].append(f"fp32_precision = 'ieee': {errstr(e2)}")
    rep.data["device"]["tf32_after_setting"] = str(_tf32_state())


def bench_matmul(rep, cfg):
    n = 4096
    flops = 2 * n ** 3
    shape = f"{n}x{n}x{n}"
    for dt, name in ((torch.float32, "torch.matmul, TF32 off (cuBLAS)"),
                     (torch.float16, "torch.matmul fp16 (cuBLAS)")):
        st = {}

        def setup():
            g = torch.Generator(device="cuda")
            g.manual_seed(1)
            a = torch.randn(n, n, device="cuda", dtype=dt, generator=g)
            b = torch.randn(n, n, device="cuda", dtype=dt, generator=g)
            c = torch.empty(n, n, device="cuda", dtype=dt)
            torch.matmul(a, b, out=c)
            ref = torch.matmul(a.double(), b.double())
            rel = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            del ref
            check = f"max err / max |C| = {rel:.2g} vs fp64"
            # fp32 accumulation gives ~1e-6 here, TF32 inputs ~1e-3
            if dt == torch.float32 and rel > 1e-5:
                check += " (TF32-like: TF32 may be ON)"
            st.update(a=a, b=b, c=c)
            return (lambda: torch.matmul(a, b, out=c)), check

        run_case(rep, cfg, "matmul", name, shape,
                 "float32" if dt == torch.float32 else "float16", setup,
                 flops=flops,
                 note=(f"tf32 state {_tf32_state()}" if dt == torch.float32
                       else "fp16 in/out, cuBLAS default accumulation"))
        st.clear()
        free_cuda()


def bench_mlp(rep, cfg):
    g = torch.Generator(device="cuda")
    g.manual_seed(2)
    w0 = (torch.rand(128, 784, device="cuda", generator=g) - 0.5) * 0.1
    b0 = torch.rand(128, device="cuda", generator=g)
    w1 = (torch.rand(10, 128, device="cuda", generator=g) - 0.5) * 0.1
    b1 = torch.rand(10, device="cuda", generator=g)
    for batch in (4096, 1):
        def setup():
            x = torch.rand(batch, 784, device="cuda", generator=g)
            return (lambda: F.linear(F.relu(F.linear(x, w0, b0)), w1, b1)), None

        flops = 2 * batch * (784 * 128 + 128 * 10)
        if batch == 1:
            run_case(rep, cfg, "mlp", "torch eager MLP 784-128-10", f"batch {batch}",
                     "float32", setup, flops=flops, per_call=True, loop=True,
                     note=f"time per call, launch overhead included: "
                          f"{cfg.loop_inner} calls back to back "
                          f"(median of {cfg.loop_outer} loops); "
                          "F.linear, F.relu, F.linear; host_us_per_call in JSON")
        else:
            run_case(rep, cfg, "mlp", "torch eager MLP 784-128-10", f"batch {batch}",
                     "float32", setup, flops=flops, per_call=True,
                     note="GPU time per call; F.linear, F.relu, F.linear")
    free_cuda()


def device_facts(rep):
    d = rep.data["device"]
    d["python"] = platform.python_version()
    d["platform"] = platform.platform()
    d["torch"] = getattr(torch, "__version__", None) if torch else f"unavailable: {TORCH_ERROR}"
    if triton is not None:
        d["triton"] = getattr(triton, "__version__", None)
    else:
        d["triton"] = f"unavailable: {TRITON_ERROR or 'not tried (no torch)'}"
    if torch is None:
        return
    try:
        d["torch_cuda"] = torch.version.cuda
        d["cuda_available"] = torch.cuda.is_available()
        if not d["cuda_available"]:
            return
        d["device_count"] = torch.cuda.device_count()
        d["name"] = torch.cuda.get_device_name(0)
        cap = torch.cuda.get_device_capability(0)
        d["capability"] = f"{cap[0]}.{cap[1]}"
        p = torch.cuda.get_device_properties(0)
        d["sm_count"] = p.multi_processor_count
        d["total_memory_gib"] = round(p.total_memory / 2 ** 30, 2)
        for attr in ("L2_cache_size", "max_threads_per_multi_processor",
                     "warp_size", "shared_memory_per_block_optin",
                     "regs_per_multiprocessor", "clock_rate", "memory_clock_rate",
                     "memory_bus_width"):
            if hasattr(p, attr):
                d[attr] = getattr(p, attr)
        try:
            d["cudnn"] = torch.backends.cudnn.version()
        except Exception:  # noqa: BLE001
            pass
    except Exception as e:  # noqa: BLE001
        rep.data["errors"].append(f"device facts: {errstr(e)}")


def nvidia_smi_facts(rep):
    d = rep.data["device"]
    for q in ("name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,"
              "power.limit,pstate", "name,driver_version"):
        try:
            r = subprocess.run(["nvidia-smi", f"--query-gpu={q}",
                                "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30)
            if r.returncode == 0 and r.stdout.strip():
                d["nvidia_smi"] = r.stdout.strip().splitlines()[0]
                d["nvidia_smi_fields"] = q
                d["driver_version"] = d["nvidia_smi"].split(",")[1].strip()
                return
        except Exception as e:  # noqa: BLE001
            d["nvidia_smi"] = f"unavailable: {errstr(e)}"
            return
    d.setdefault("nvidia_smi", "query failed")


# --------------------------------------------------------------------------
# Runtime probe (runs in a child process: python3 gpu_reference.py --probe-child).
# Each step prints one line "MTPROBE {json}" at once.

KERNEL_SRC = b'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n'

c_int, c_uint, c_size_t, c_void_p, c_char_p, c_uint64 = (
    ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p,
    ctypes.c_char_p, ctypes.c_uint64)
P = ctypes.POINTER

# Driver API, by the exported symbol that cuda.h maps the name to.
_CU_SIGS = {
    "cuInit": [c_uint],
    "cuDriverGetVersion": [P(c_int)],
    "cuGetErrorName": [c_int, P(c_char_p)],
    "cuDeviceGetCount": [P(c_int)],
    "cuDeviceGet": [P(c_int), c_int],
    "cuDeviceGetName": [c_char_p, c_int, c_int],
    "cuDeviceGetAttribute": [P(c_int), c_int, c_int],
    "cuDevicePrimaryCtxRetain": [P(c_void_p), c_int],
    "cuDevicePrimaryCtxRelease_v2": [c_int],
    "cuCtxPushCurrent_v2": [c_void_p],
    "cuCtxPopCurrent_v2": [P(c_void_p)],
    "cuCtxSynchronize": [],
    "cuModuleLoadData": [P(c_void_p), c_void_p],
    "cuModuleGetFunction": [P(c_void_p), c_void_p, c_char_p],
    "cuModuleUnload": [c_void_p],
    "cuMemAlloc_v2": [P(c_uint64), c_size_t],
    "cuMemFree_v2": [c_uint64],
    "cuMemcpyHtoD_v2": [c_uint64, c_void_p, c_size_t],
    "cuMemcpyDtoH_v2": [c_void_p, c_uint64, c_size_t],
    # f, grid x y z, block x y z, shared bytes, stream, kernelParams, extra
    "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                       c_uint, c_void_p, P(c_void_p), P(c_void_p)],
}

_NVRTC_SIGS = {
    "nvrtcVersion": [P(c_int), P(c_int)],
    "nvrtcCreateProgram": [P(c_void_p), c_char_p, c_char_p, c_int, P(c_char_p),
                           P(c_char_p)],
    "nvrtcCompileProgram": [c_void_p, c_int, P(c_char_p)],
    "nvrtcGetProgramLogSize": [c_void_p, P(c_size_t)],
    "nvrtcGetProgramLog": [c_void_p, c_char_p],
    "nvrtcGetCUBINSize": [c_void_p, P(c_size_t)],
    "nvrtcGetCUBIN": [c_void_p, c_char_p],
    "nvrtcGetPTXSize": [c_void_p, P(c_size_t)],
    "nvrtcGetPTX": [c_void_p, c_char_p],
    "nvrtcDestroyProgram": [P(c_void_p)],
    "nvrtcGetNumSupportedArchs": [P(c_int)],
    "nvrtcGetSupportedArchs": [P(c_int)],
}

CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class ApiError(Exception):
    pass


def _bind(lib, sigs):
    """Returns {name: function} for the symbols that exist; missing ones are
    left out (calling them raises KeyError, reported by the step)."""
    fns = {}
    for name, argtypes in sigs.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            continue
        f.argtypes = argtypes
        f.restype = c_int
        fns[name] = f
    if "nvrtcGetErrorString" not in fns and hasattr(lib, "nvrtcGetErrorString"):
        f = lib.nvrtcGetErrorString
        f.argtypes = [c_int]
        f.restype = c_char_p
        fns["nvrtcGetErrorString"] = f
    return fns


def _lib_path(func, hint):
    """The file a loaded function comes from: dladdr, else /proc/self/maps."""
    try:
        class DlInfo(ctypes.Structure):
            _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p),
                        ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]
        dladdr = None
        for name in (None, "libdl.so.2"):
            try:
                dladdr = ctypes.CDLL(name).dladdr
                break
            except (OSError, AttributeError):
                continue
        if dladdr is not None:
            dladdr.argtypes = [c_void_p, P(DlInfo)]
            dladdr.restype = c_int
            info = DlInfo()
            if dladdr(ctypes.cast(func, c_void_p), ctypes.byref(info)) and info.dli_fname:
                return os.path.realpath(info.dli_fname.decode())
    except Exception:  # noqa: BLE001
        pass
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if hint in line:
                    return line.split()[-1]
    except Exception:  # noqa: BLE001
        pass
    return "?"


def _dedupe_paths(names):
    """Drops repeats; absolute paths also when they resolve to a file already
    listed (the lib64 -> targets/... symlinks)."""
    seen, out = set(), []
    for n in names:
        key = os.path.realpath(n) if os.path.isabs(n) else n
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


class Prober:
    def __init__(self):
        self.cu = None
        self.cu_lib = None
        self.dev = None
        self.ctx = None
        self.arch = None  # e.g. 90

    def emit(self, step, ok, detail, ms=None, **extra):
        d = {"step": step, "ok": ok, "detail": detail}
        if ms is not None:
            d["ms"] = round(ms, 3)
        d.update(extra)
        print("MTPROBE " + json.dumps(d, default=str), flush=True)

    def step(self, name, fn):
        """Runs fn() -> detail (str) or (detail, extra dict); emits the line.
        Returns (ok, value of extra.get('value'))."""
        t = time.perf_counter()
        try:
            r = fn()
            ok = True
        except Exception as e:  # noqa: BLE001
            r = errstr(e, 1500)
            ok = False
        ms = (time.perf_counter() - t) * 1e3
        extra = {}
        if isinstance(r, tuple):
            r, extra = r
        self.emit(name, ok, r, ms, **{k: v for k, v in extra.items() if k != "value"})
        return ok, extra.get("value")

    # -- driver ------------------------------------------------------------
    def cu_name(self, rc):
        try:
            s = c_char_p()
            if self.cu["cuGetErrorName"](rc, ctypes.byref(s)) == 0 and s.value:
                return s.value.decode()
        except Exception:  # noqa: BLE001
            pass
        return f"CUresult {rc}"

    def cucall(self, name, *args):
        if name not in self.cu:
            raise ApiError(f"{name}: symbol not found in libcuda")
        rc = self.cu[name](*args)
        if rc != 0:
            raise ApiError(f"{name} -> {self.cu_name(rc)} ({rc})")

    def load_libcuda(self):
        lib = ctypes.CDLL("libcuda.so.1")
        self.cu_lib = lib
        self.cu = _bind(lib, _CU_SIGS)
        missing = sorted(set(_CU_SIGS) - set(self.cu))
        path = _lib_path(lib.cuInit, "libcuda.so")
        return (f"loaded {path}" + (f"; missing symbols: {missing}" if missing else ""),
                {"fact": {"libcuda_path": path}})

    def driver_version(self):
        v = c_int()
        self.cucall("cuDriverGetVersion", ctypes.byref(v))
        s = f"{v.value // 1000}.{(v.value % 1000) // 10}"
        return f"{v.value} (CUDA {s})", {"fact": {"cuda_driver_api_version": s}}

    def init_device(self):
        self.cucall("cuInit", 0)
        n = c_int()
        self.cucall("cuDeviceGetCount", ctypes.byref(n))
        d = c_int()
        self.cucall("cuDeviceGet", ctypes.byref(d), 0)
        self.dev = d.value
        name = ctypes.create_string_buffer(256)
        self.cucall("cuDeviceGetName", name, 256, self.dev)
        mj, mn, sm = c_int(), c_int(), c_int()
        self.cucall("cuDeviceGetAttribute", ctypes.byref(mj),
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev)
        self.cucall("cuDeviceGetAttribute", ctypes.byref(mn),
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev)
        self.cucall("cuDeviceGetAttribute", ctypes.byref(sm),
                    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.dev)
        self.arch = mj.value * 10 + mn.value
        return (f"{n.value} device(s); device 0: {name.value.decode()}, "
                f"sm_{self.arch}, {sm.value} SMs")

    def ctx_retain(self):
        ctx = c_void_p()
        self.cucall("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), self.dev)
        self.ctx = ctx
        self.cucall("cuCtxPushCurrent_v2", ctx)
        return f"primary context {hex(ctx.value or 0)} retained and current"

    def load_and_run(self, image, what):
        """cuModuleLoadData(image) + cuModuleGetFunction('k') + a launch on 32
        floats; checks x[i] == 2*i. Returns (detail, (module, function))."""
        buf = ctypes.create_string_buffer(image, len(image))
        mod = c_void_p()
        t = time.perf_counter()
        self.cucall("cuModuleLoadData", ctypes.byref(mod), buf)
        load_ms = (time.perf_counter() - t) * 1e3
        fn = c_void_p()
        try:
            self.cucall("cuModuleGetFunction", ctypes.byref(fn), mod, b"k")
            self.launch_check(fn)
        except Exception:
            self.cu["cuModuleUnload"](mod)
            raise
        return (f"{what}: cuModuleLoadData {load_ms:.2f} ms, cuModuleGetFunction, "
                f"cuLaunchKernel <<<1,32>>>, x[i] == 2*i for 32 floats: ok"), (mod, fn)

    def launch_check(self, fn):
        n = 32
        host = (ctypes.c_float * n)(*[float(i) for i in range(n)])
        back = (ctypes.c_float * n)()
        dptr = c_uint64()
        self.cucall("cuMemAlloc_v2", ctypes.byref(dptr), n * 4)
        try:
            self.cucall("cuMemcpyHtoD_v2", dptr.value, host, n * 4)
            arg = c_uint64(dptr.value)  # CUdeviceptr, the kernel's float *x
            params = (c_void_p * 1)(ctypes.addressof(arg))
            self.cucall("cuLaunchKernel", fn, 1, 1, 1, n, 1, 1, 0, None, params, None)
            self.cucall("cuCtxSynchronize")
            self.cucall("cuMemcpyDtoH_v2", back, dptr.value, n * 4)
        finally:
            self.cu["cuMemFree_v2"](dptr.value)
        bad = [i for i in range(n) if back[i] != 2.0 * i]
        if bad:
            raise ApiError(f"wrong result at {bad[:5]}: got {[back[i] for i in bad[:5]]}")

    def launch_loop(self, fn, count=2000):
        n = 32
        dptr = c_uint64()
        self.cucall("cuMemAlloc_v2", ctypes.byref(dptr), n * 4)
        try:
            arg = c_uint64(dptr.value)
            params = (c_void_p * 1)(ctypes.addressof(arg))
            launch = self.cu["cuLaunchKernel"]
            self.cucall("cuCtxSynchronize")
            t = time.perf_counter()
            for _ in range(count):
                rc = launch(fn, 1, 1, 1, n, 1, 1, 0, None, params, None)
                if rc != 0:
                    raise ApiError(f"cuLaunchKernel -> {self.cu_name(rc)}")
            t1 = time.perf_counter()
            self.cucall("cuCtxSynchronize")
            t2 = time.perf_counter()
        finally:
            self.cu["cuMemFree_v2"](dptr.value)
        return (f"{count} launches: {(t1 - t) / count * 1e6:.2f} us/launch issued from "
                f"Python ctypes, {(t2 - t) / count * 1e6:.2f} us/launch incl. final sync")

    # -- NVRTC -------------------------------------------------------------
    @staticmethod
    def nvrtc_candidates():
        names = []
        found = ctypes.util.find_library("nvrtc")
        if found:
            names.append(found)
        names += ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"]
        pats = ["/usr/local/cuda*/lib64/libnvrtc.so*",
                "/usr/local/cuda*/targets/*/lib/libnvrtc.so*"]
        for p in sys.path:
            if p and os.path.isdir(os.path.join(p, "nvidia")):
                pats.append(os.path.join(p, "nvidia", "*", "lib", "libnvrtc.so*"))
        for pat in pats:
            names += sorted(glob.glob(pat))
        return found, _dedupe_paths(names)

    def nvrtc_err(self, fns, rc):
        try:
            s = fns["nvrtcGetErrorString"](rc)
            if s:
                return s.decode()
        except Exception:  # noqa: BLE001
            pass
        return f"nvrtcResult {rc}"

    def nvrtc_compile(self, fns, options, want):
        """Compiles KERNEL_SRC; want = 'cubin' or 'ptx'. Returns
        (image bytes, compile ms, total ms, log)."""
        def check(name, *args):
            rc = fns[name](*args)
            if rc != 0:
                raise ApiError(f"{name} -> {self.nvrtc_err(fns, rc)} ({rc})")

        t0 = time.perf_counter()
        prog = c_void_p()
        check("nvrtcCreateProgram", ctypes.byref(prog), KERNEL_SRC, b"k.cu", 0,
              None, None)
        try:
            opts = [o.encode() for o in options]
            arr = (c_char_p * len(opts))(*opts)
            t1 = time.perf_counter()
            rc = fns["nvrtcCompileProgram"](prog, len(opts), arr)
            t2 = time.perf_counter()
            logsz = c_size_t()
            log_text = ""
            if fns["nvrtcGetProgramLogSize"](prog, ctypes.byref(logsz)) == 0 and logsz.value > 1:
                lb = ctypes.create_string_buffer(logsz.value)
                fns["nvrtcGetProgramLog"](prog, lb)
                log_text = lb.value.decode(errors="replace").strip()
            if rc != 0:
                raise ApiError(f"nvrtcCompileProgram -> {self.nvrtc_err(fns, rc)} ({rc}); "
                               f"log: {log_text[:800]}")
            size = c_size_t()
            if want == "cubin":
                check("nvrtcGetCUBINSize", prog, ctypes.byref(size))
                buf = ctypes.create_string_buffer(size.value)
                check("nvrtcGetCUBIN", prog, buf)
                image = buf.raw[:size.value]
            else:
                check("nvrtcGetPTXSize", prog, ctypes.byref(size))
                buf = ctypes.create_string_buffer(size.value)
                check("nvrtcGetPTX", prog, buf)
                image = buf.raw[:size.value]  # includes the terminating NUL
            t3 = time.perf_counter()
        finally:
            fns["nvrtcDestroyProgram"](ctypes.byref(prog))
        return image, (t2 - t1) * 1e3, (t3 - t0) * 1e3, log_text

    def probe_nvrtc_lib(self, tag, fns, arch, have_ctx, runnable):
        """Steps for one NVRTC library. Appends a cubin function to runnable."""
        def archs():
            n = c_int()
            if "nvrtcGetNumSupportedArchs" not in fns:
                return "nvrtcGetSupportedArchs not exported"
            rc = fns["nvrtcGetNumSupportedArchs"](ctypes.byref(n))
            if rc != 0:
                raise ApiError(f"nvrtcGetNumSupportedArchs -> {self.nvrtc_err(fns, rc)}")
            a = (c_int * max(n.value, 1))()
            rc = fns["nvrtcGetSupportedArchs"](a)
            if rc != 0:
                raise ApiError(f"nvrtcGetSupportedArchs -> {self.nvrtc_err(fns, rc)}")
            lst = list(a)[:n.value]
            return (f"{lst}; device arch {arch} "
                    + ("supported" if arch in lst else "NOT in the list"))

        self.step(f"nvrtc[{tag}] supported archs", archs)

        results = {}
        for want, opt in (("cubin", f"--gpu-architecture=sm_{arch}"),
                          ("ptx", f"--gpu-architecture=compute_{arch}")):
            for attempt in ("first", "second"):
                def comp(want=want, opt=opt, attempt=attempt):
                    image, cms, tms, lg = self.nvrtc_compile(fns, [opt], want)
                    if attempt == "first":
                        results[want] = image
                    parts = [f"{opt}: nvrtcCompileProgram {cms:.2f} ms, create..get "
                             f"{tms:.2f} ms, {len(image)} bytes"]
                    if want == "ptx":
                        for line in image.decode(errors="replace").splitlines():
                            if line.startswith(".version") or line.startswith(".target"):
                                parts.append(line.strip())
                    if lg:
                        parts.append(f"log: {lg[:300]}")
                    return ("; ".join(parts),
                            {"compile_ms": round(cms, 3), "total_ms": round(tms, 3)})
                self.step(f"nvrtc[{tag}] compile {want} ({attempt} in process)", comp)
        if not have_ctx:
            return
        for want in ("cubin", "ptx"):
            if want not in results:
                continue

            def run(want=want):
                detail, (mod, fn) = self.load_and_run(results[want], want)
                if want == "cubin":
                    runnable.append((tag, mod, fn))
                else:
                    self.cu["cuModuleUnload"](mod)
                return detail
            self.step(f"nvrtc[{tag}] load {want} + launch", run)

    def run(self):
        ok, _ = self.step("load libcuda.so.1", self.load_libcuda)
        have_dev = have_ctx = False
        if ok:
            self.step("cuDriverGetVersion", self.driver_version)
            have_dev, _ = self.step("cuInit + device 0", self.init_device)
            if have_dev:
                have_ctx, _ = self.step("cuDevicePrimaryCtxRetain + cuCtxPushCurrent",
                                        self.ctx_retain)
        arch = self.arch
        if arch is None:
            arch = 90
            self.emit("arch for NVRTC", False,
                      "device arch unknown (driver probe failed): compiling for sm_90")

        found, cands = self.nvrtc_candidates()
        self.emit("find_library('nvrtc')", bool(found), repr(found))
        loaded = []  # (tag, fns)
        handles = {}
        for name in cands:
            def load(name=name):
                lib = ctypes.CDLL(name)
                path = _lib_path(lib.nvrtcVersion, "libnvrtc")
                fns = _bind(lib, _NVRTC_SIGS)
                mj, mn = c_int(), c_int()
                rc = fns["nvrtcVersion"](ctypes.byref(mj), ctypes.byref(mn))
                ver = f"{mj.value}.{mn.value}" if rc == 0 else f"nvrtcVersion rc {rc}"
                dup = handles.get(lib._handle)
                if dup is None:
                    handles[lib._handle] = ver
                    loaded.append((ver, fns))
                return (f"{path}; nvrtcVersion {ver}"
                        + (f" (same library as nvrtc[{dup}])" if dup else ""),
                        {"fact": {"nvrtc_" + ver: path}} if not dup else {})
            self.step(f"load {name}", load)

        runnable = []
        tags = set()
        for ver, fns in loaded:
            tag = ver if ver not in tags else f"{ver}#{len(tags)}"
            tags.add(tag)
            self.probe_nvrtc_lib(tag, fns, arch, have_ctx, runnable)
        if not loaded:
            self.emit("nvrtc", False, "no libnvrtc could be loaded")

        if runnable:
            tag, mod, fn = runnable[0]
            self.step(f"launch loop (cubin from nvrtc[{tag}])", lambda: self.launch_loop(fn))
        for _tag, mod, _fn in runnable:
            try:
                self.cu["cuModuleUnload"](mod)
            except Exception:  # noqa: BLE001
                pass
        if have_ctx:
            def release():
                old = c_void_p()
                self.cucall("cuCtxPopCurrent_v2", ctypes.byref(old))
                self.cucall("cuDevicePrimaryCtxRelease_v2", self.dev)
                return "ok"
            self.step("cuCtxPopCurrent + cuDevicePrimaryCtxRelease", release)

        self.probe_other_libs()

    def probe_other_libs(self):
        # cuBLAS (the future matmul reference path may call it directly).
        names = []
        f = ctypes.util.find_library("cublas")
        if f:
            names.append(f)
        names += ["libcublas.so", "libcublas.so.13", "libcublas.so.12"]
        names += sorted(glob.glob("/usr/local/cuda*/lib64/libcublas.so*"))
        for name in _dedupe_paths(names):
            def load(name=name):
                lib = ctypes.CDLL(name)
                fn = lib.cublasGetProperty
                fn.argtypes = [c_int, P(c_int)]
                fn.restype = c_int
                v = [c_int() for _ in range(3)]
                for i in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
                    fn(i, ctypes.byref(v[i]))
                return (f"{_lib_path(lib.cublasGetProperty, 'libcublas')}; "
                        f"cublasGetProperty {v[0].value}.{v[1].value}.{v[2].value}")
            self.step(f"load {name}", load)

        def nvcc():
            cands = _dedupe_paths(["nvcc", "/usr/local/cuda/bin/nvcc"]
                                  + sorted(glob.glob("/usr/local/cuda*/bin/nvcc")))
            out = []
            for c in cands:
                try:
                    r = subprocess.run([c, "--version"], capture_output=True,
                                       text=True, timeout=30)
                    rel = [ln for ln in r.stdout.splitlines() if "release" in ln]
                    out.append(f"{c}: {rel[0].strip() if rel else 'rc ' + str(r.returncode)}")
                except Exception as e:  # noqa: BLE001
                    out.append(f"{c}: {type(e).__name__}")
            if not any("release" in o for o in out):
                raise ApiError("; ".join(out))
            return "; ".join(out)
        self.step("nvcc --version", nvcc)

        def env():
            keys = ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
            return "; ".join(f"{k}={os.environ.get(k, '')}" for k in keys)
        self.step("environment", env)


def probe_child():
    try:
        Prober().run()
    except Exception as e:  # noqa: BLE001
        print("MTPROBE " + json.dumps({"step": "probe", "ok": False,
                                       "detail": errstr(e, 1500)}), flush=True)
    return 0


def run_probe(rep):
    """Runs the probe in a child process; collects its MTPROBE lines."""
    cmd = [sys.executable, os.path.abspath(__file__), "--probe-child"]
    t = time.perf_counter()
    out, rc, note = "", None, None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        out, rc = r.stdout, r.returncode
        if r.stderr.strip():
            note = "stderr: " + " ".join(r.stderr.split())[-600:]
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        note = "timed out after 120 s"
    except Exception as e:  # noqa: BLE001
        note = errstr(e)
    steps = []
    for line in out.splitlines():
        if line.startswith("MTPROBE "):
            try:
                steps.append(json.loads(line[len("MTPROBE "):]))
            except ValueError:
                steps.append({"step": "?", "ok": False, "detail": line[:300]})
    wall = (time.perf_counter() - t) * 1e3
    if rc != 0 or note:
        why = note or ""
        if rc is not None and rc < 0:
            why = f"killed by signal {-rc}; " + why
        elif rc:
            why = f"exit status {rc}; " + why
        steps.append({"step": "probe child process", "ok": rc == 0,
                      "detail": why.strip() or "ok", "ms": round(wall, 1)})
    else:
        steps.append({"step": "probe child process", "ok": True,
                      "detail": "exit status 0", "ms": round(wall, 1)})
    for s in steps:
        for k, v in (s.get("fact") or {}).items():
            rep.data["device"][k] = v
        log(f"probe: {s['step']}: {'ok' if s.get('ok') else 'FAILED'}: "
            f"{str(s.get('detail'))[:200]}")
    rep.data["probe"] = steps


# --------------------------------------------------------------------------
# Markdown.

def print_markdown(rep):
    d = rep.data
    out = []
    w = out.append
    w(f"# GPU references ({d['mode']} run)")
    w("")
    m = d.get("method") or {}
    w(f"`bench/gpu_reference.py` v{d['script_version']}, started {d['started_utc']}, "
      f"{d['elapsed_s']} s. Median of per-repetition CUDA event times after "
      f"{m.get('warmup_calls', '?')} warm-up calls, repetitions back to back "
      + ("behind a GPU sleep (kernel time, not launch overhead)"
         if m.get("gpu_sleep_before_reps") else
         f"(no GPU sleep before them: {m.get('gpu_sleep_error')})")
      + "; GB/s and TFLOP/s are decimal and computed from the median.")
    w("")
    w("## References")
    w("")
    copy_gbps = None
    for r in d["references"]:
        if r["section"] == "copy" and r.get("gbps"):
            copy_gbps = r["gbps"]  # the last, largest buffer
    w("| case | shape | dtype | median ms | best ms | reps | rate | vs D2D copy | check | note |")
    w("|---|---|---|---:|---:|---:|---|---:|---|---|")
    rows = sorted(d["references"], key=lambda r: SECTION_ORDER.index(r["section"])
                  if r["section"] in SECTION_ORDER else 99)
    for r in rows:
        vs = "-"
        if r.get("gbps") and copy_gbps and r["section"] != "copy":
            vs = f"{r['gbps'] / copy_gbps:.2f}"
        note = r.get("note") or ""
        if r.get("error"):
            note = f"ERROR: {r['error']}" + (f"; {note}" if note else "")
        if r.get("first_call_ms") is not None:
            note += f"; first call (compile) {r['first_call_ms']:.0f} ms"
        if r.get("host_us_per_call") is not None:
            note += f"; host {r['host_us_per_call']:.1f} us/call"
        w("| " + " | ".join(md_cell(x) for x in (
            r["name"], r["shape"], r["dtype"], fmt(r.get("median_ms"), 4),
            fmt(r.get("best_ms"), 4), r.get("reps") or "-", r.get("metric") or "-",
            vs, r.get("check") or "-", note)) + " |")
    if d.get("triton_checks"):
        w("")
        for c in d["triton_checks"]:
            if "error" in c:
                w(f"Triton softmax check {c['shape']}: ERROR {c['error']}")
            else:
                w(f"Triton softmax check {c['shape']} (masked tail): max abs err "
                  f"{c['max_abs_err']:.3g} ({'ok' if c['ok'] else 'FAILED, limit 1e-5'})")
    if copy_gbps:
        w("")
        w(f"\"vs D2D copy\": the row's GB/s over the largest D2D copy's "
          f"({copy_gbps:.1f} GB/s).")
    w("")
    w("## Device facts")
    w("")
    w("| fact | value |")
    w("|---|---|")
    for k, v in d["device"].items():
        w(f"| {md_cell(k)} | {md_cell(v)} |")
    w("")
    w("## Runtime probe (libcuda + NVRTC through ctypes, child process, no torch)")
    w("")
    if not d["probe"]:
        w("(not run)")
    w("| step | ok | ms | detail |")
    w("|---|---|---:|---|")
    for s in d["probe"]:
        w("| " + " | ".join(md_cell(x) for x in (
            s.get("step"), "ok" if s.get("ok") else "FAIL",
            fmt(s.get("ms"), 3), s.get("detail"))) + " |")
    if d["errors"]:
        w("")
        w("## Errors")
        w("")
        for e in d["errors"]:
            w(f"- {e}")
    w("")
    sys.stdout.write("\n".join(out))
    sys.stdout.flush()


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smaller shapes only, fewer repetitions")
    ap.add_argument("--json", metavar="PATH", default=None,
                    help="also write the data as JSON to PATH")
    ap.add_argument("--no-probe", action="store_true",
                    help="skip the libcuda/NVRTC runtime probe")
    ap.add_argument("--probe-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe_child:
        return probe_child()

    rep = Report(args)
    cfg = Config(args.quick)
    rep.save()

    # The probe first, before this process creates its CUDA context.
    if not args.no_probe:
        log("runtime probe (child process)")
        try:
            run_probe(rep)
        except Exception as e:  # noqa: BLE001
            rep.data["errors"].append(f"probe: {errstr(e)}")
        rep.save()

    device_facts(rep)
    nvidia_smi_facts(rep)
    rep.save()

    if torch is None:
        rep.data["errors"].append(f"torch unavailable: {TORCH_ERROR}; no references")
    elif not torch.cuda.is_available():
        rep.data["errors"].append("torch.cuda.is_available() is False; no references")
    else:
        _tf32_off(rep)
        sections = [("copy", bench_copy), ("elementwise", bench_elementwise),
                    ("softmax/layer_norm", bench_softmax_layernorm),
                    ("matmul", bench_matmul), ("mlp", bench_mlp),
                    # last: a bad kernel could leave the context unusable
                    ("triton softmax", bench_triton_softmax)]
        with torch.inference_mode():
            for name, fn in sections:
                log(f"section {name}")
                try:
                    fn(rep, cfg)
                except Exception as e:  # noqa: BLE001
                    rep.data["errors"].append(f"section {name}: {errstr(e)}")
                    log(f"section {name}: {errstr(e)}")
                free_cuda()
                rep.save()
    rep.data["method"] = {
        "warmup_calls": cfg.warmup, "timed_seconds_per_case": cfg.target_s,
        "reps_min": cfg.min_reps, "reps_max": cfg.max_reps,
        "gpu_sleep_before_reps": _SLEEP_STATE.get("ok"),
        "gpu_sleep_error": _SLEEP_STATE.get("error"),
        "gpu_sleep_cycles": PREFILL_CYCLES,
        "batch1_loop": f"{cfg.loop_outer} x {cfg.loop_inner} calls"}
    rep.data["status"] = "complete"
    rep.save()
    print_markdown(rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
