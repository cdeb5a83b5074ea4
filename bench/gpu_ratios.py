#!/usr/bin/env python3
"""Puts minitriton's GPU timings (bench/gpu_bench.c's JSON) beside the
references measured in the same run (bench/gpu_reference.py's JSON) and
prints the goals' table of docs/performance.md with the measured ratios.

    python3 bench/gpu_ratios.py gpu_bench.json gpu_reference.json

Bandwidth goals compare GB/s with the largest D2D copy's; time goals are
reference time / our time (above 1: we are faster). Our time is the device
time (CUDA events around a run on a stream of the benchmark's) when
gpu_bench measured it, else the wall time of mt_kernel_run: for each case
both the queued time (runs queued back to back without waiting, CUDA
events around each: the references' protocol) and the device time of one
run that waits (its host work before the first launch included); the
ratio is from the queued time, and in parentheses from the run's."""
import json
import sys


def load(path, key=None):
    try:
        with open(path) as f:
            d = json.load(f)
        return d[key] if key else d
    except Exception as e:  # a missing or partial file: say so in the table
        print(f"(cannot read {path}: {e})")
        return []


def main():
    ours = {(r["name"], r["shape"]): r for r in load(sys.argv[1])}
    refs = {(r["name"], r["shape"]): r for r in load(sys.argv[2], "references")}
    copies = [r["gbps"] for (n, _), r in refs.items() if "D2D" in n and r.get("gbps")]
    d2d = max(copies) if copies else None
    print("| workload | ours: queued ms | ours: run ms | reference | ref ms | ratio (run's) | goal |")
    print("|---|---:|---:|---|---:|---:|---|")

    def fmt(v):
        return "-" if v is None else f"{v:.4f}"

    def row(name, shape, ref_name, goal, nbytes=None, queued=True):
        o = ours.get((name, shape))
        r = refs.get((ref_name, shape)) if ref_name else None
        run = (o.get("device_ms") or o["median_ms"]) if o else None
        q = (o.get("queued_ms") or None) if o and queued else None
        if nbytes and run and d2d:
            rates = [nbytes / (t * 1e-3) / 1e9 / d2d for t in (q or run, run)]
            print(f"| {name} {shape} | {fmt(q)} | {fmt(run)} | D2D copy {d2d:.0f} GB/s | - | "
                  f"{rates[0]:.2f} ({rates[1]:.2f}) of copy | {goal} |")
            return
        rms = r["median_ms"] if r and r.get("median_ms") else None
        ratio = f"{rms / (q or run):.2f} ({rms / run:.2f})" if run and rms else "-"
        print(f"| {name} {shape} | {fmt(q)} | {fmt(run)} | {ref_name} | {fmt(rms)} | {ratio} | {goal} |")

    for shape, n in (("16M", 1 << 24), ("256M", 1 << 28)):
        row("a+b+a", shape, None, ">= 0.90 of D2D", 12 * n)
        row("exp(a)*b+1", shape, None, ">= 0.90 of D2D", 12 * n)
    for shape in ("4096x4096", "32768x1024"):
        row("softmax", shape, "torch.softmax(dim=-1)", ">= 1 (torch)")
        row("softmax", shape, "triton row softmax (ours)", ">= 1 (Triton)")
        row("layer_norm", shape, "F.layer_norm(weight, bias)", ">= 1 (torch)")
    row("sum(x)", "4096x4096", None, "(no goal: a pass over x)", 4 << 24)
    row("sum(x, axis=0)", "x16 columns", None, "(no goal: a pass over x)", 4 << 24)
    row("matmul fp32", "4096x4096x4096", "torch.matmul, TF32 off (cuBLAS)", ">= 0.70 of cuBLAS")
    row("matmul fp16", "4096x4096x4096", "torch.matmul fp16 (cuBLAS)", ">= 0.50 of cuBLAS")
    row("MLP 784-128-10", "batch 4096", "torch eager MLP 784-128-10", "> 1 (torch eager)")
    # batch 1: the reference is torch's time per call with its launches (a loop of calls): ours, a run's
    row("MLP 784-128-10", "batch 1", "torch eager MLP 784-128-10", "> 1 (torch eager)", queued=False)


if __name__ == "__main__":
    main()
