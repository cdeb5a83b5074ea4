#!/usr/bin/env python3
"""Puts minitriton's GPU timings (bench/gpu_bench.c's JSON) beside the
references measured in the same run (bench/gpu_reference.py's JSON) and
prints the goals' table of docs/performance.md with the measured ratios.

    python3 bench/gpu_ratios.py gpu_bench.json gpu_reference.json

Bandwidth goals compare GB/s with the largest D2D copy's; time goals are
reference time / our time (above 1: we are faster). Our time is the device
time (CUDA events around a run on a stream of the benchmark's) when
gpu_bench measured it, else the wall time of mt_kernel_run."""
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
    print("| workload | ours ms | reference | ref ms | ratio | goal |")
    print("|---|---:|---|---:|---:|---|")

    def row(name, shape, ref_name, goal, nbytes=None):
        o = ours.get((name, shape))
        r = refs.get((ref_name, shape)) if ref_name else None
        # the device time (CUDA events, as the references) when measured
        oms = (o.get("device_ms") or o["median_ms"]) if o else None
        if nbytes and oms and d2d:
            gbps = nbytes / (oms * 1e-3) / 1e9
            print(f"| {name} {shape} | {oms:.4f} | D2D copy {d2d:.0f} GB/s | - | "
                  f"{gbps / d2d:.2f} of copy ({gbps:.0f} GB/s) | {goal} |")
            return
        rms = r["median_ms"] if r and r.get("median_ms") else None
        ratio = f"{rms / oms:.2f}" if oms and rms else "-"
        print(f"| {name} {shape} | {oms if oms is None else f'{oms:.4f}'} | {ref_name} | "
              f"{rms if rms is None else f'{rms:.4f}'} | {ratio} | {goal} |")

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
    for batch in ("batch 4096", "batch 1"):
        row("MLP 784-128-10", batch, "torch eager MLP 784-128-10", "> 1 (torch eager)")


if __name__ == "__main__":
    main()
