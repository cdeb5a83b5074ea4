#!/usr/bin/env python3
"""Plots of the benchmark's output, for docs/performance.md.

    ./scripts/bench.sh > bench.md
    ./scripts/bench.sh --sweep > sweep.md
    /usr/bin/python3 scripts/bench_plots.py bench.md sweep.md docs/images

Reads the Markdown tables mt_bench and mt_sweep print and writes three SVG
files into the output directory:

  bench_share.svg    each kernel at 2 threads as a share of its reference
                     (memory bandwidth, the floor of a row op, OpenBLAS,
                     NumPy): 1.0 is the reference's speed, more is faster
  bench_compile.svg  each kernel's warm compile, split into its phases
  sweep_ratios.svg   every sweep case's NumPy time / minitriton's time,
                     sorted, on a log scale, with 1.0 (NumPy's speed) marked

Either input may be '-' to skip it. Needs matplotlib (Debian's
python3-matplotlib, which scripts/bench.sh installs).
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def tables(path):
    """{heading: [rows as lists of cells]} for every Markdown table, keyed by
    the nearest heading above it (the first table under a heading)."""
    out, heading, rows = {}, "", None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if rows is None:
                rows = [cells]
            elif not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
        elif rows is not None:
            out.setdefault(heading, rows)
            rows = None
    if rows is not None:
        out.setdefault(heading, rows)
    return out


def share(vs):
    """A 'vs reference' cell as a share of the reference's speed."""
    m = re.match(r"([\d.]+) % of (bw|BLAS)", vs)
    if m:
        return float(m.group(1)) / 100
    m = re.match(r"([\d.]+)x (floor|BLAS MLP|NumPy)", vs)
    if m and float(m.group(1)) > 0:
        return 1 / float(m.group(1))  # time / reference time: its inverse
    return None


def ms(cell):
    m = re.match(r"([\d.]+) (ms|µs)", cell)
    if not m:
        return None
    return float(m.group(1)) / (1000 if m.group(2) == "µs" else 1)


def plot_share(t, path):
    rows = t.get("Kernels")
    if not rows:
        return False
    head = rows[0]
    names, vals = [], []
    for r in rows[1:]:
        row = dict(zip(head, r))
        s = share(row.get("vs reference", ""))
        if row.get("threads") == "2" and s is not None:
            names.append(row["kernel"])
            vals.append(s)
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1.2))
    ax.barh(names[::-1], vals[::-1], color="#4c72b0")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlabel("share of the reference's speed (2 threads; 1.0 = the reference)")
    ax.set_title("mt_bench: kernels against bandwidth, OpenBLAS and NumPy")
    fig.tight_layout()
    fig.savefig(path)
    return True


def plot_compile(t, path):
    rows = t.get("Compile latency")
    if not rows:
        return False
    head = rows[0]
    phases = ["frontend", "graph", "TIR", "IR gen", "LLVM opt", "JIT codegen"]
    names, parts = [], {p: [] for p in phases}
    for r in rows[1:]:
        row = dict(zip(head, r))
        if "did not compile" in row.get("first", ""):
            continue
        names.append(row["kernel"])
        for p in phases:
            try:
                parts[p].append(float(row.get(p, "0")))
            except ValueError:
                parts[p].append(0.0)
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1.2))
    left = [0.0] * len(names)
    for p in phases:
        ax.barh(names[::-1], parts[p][::-1], left=left[::-1], label=p)
        left = [a + b for a, b in zip(left, parts[p])]
    ax.set_xlabel("warm compile, ms (median of 3; phases)")
    ax.set_title("mt_bench: compile latency")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    return True


def plot_sweep(path_in, path):
    ratios = []
    for line in open(path_in, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # the case tables' rows (10 cells); the work list at the end repeats
        # the cases slower than NumPy in 5 cells and is left out
        if len(cells) < 10 or not line.startswith("| `"):
            continue
        m = re.match(r"\**([\d.]+)x\**", cells[4])
        if m:
            ratios.append((cells[1], float(m.group(1))))
    if not ratios:
        return False
    # a sweep run on several thread counts: the 2-thread rows (the goals')
    if any(t == "2" for t, _ in ratios):
        ratios = [(t, r) for t, r in ratios if t == "2"]
    ratios = [r for _, r in ratios]
    ratios.sort()
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar(range(len(ratios)), ratios, color=["#c44e52" if r < 1 else "#4c72b0" for r in ratios])
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xlabel("sweep cases, sorted")
    ax.set_ylabel("NumPy time / minitriton time")
    ax.set_title("mt_sweep: %d cases against NumPy, 2 threads (red: slower than NumPy)" % len(ratios))
    fig.tight_layout()
    fig.savefig(path)
    return True


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    bench, sweep, outdir = argv[1:]
    made = []
    if bench != "-":
        t = tables(bench)
        if plot_share(t, outdir + "/bench_share.svg"):
            made.append("bench_share.svg")
        if plot_compile(t, outdir + "/bench_compile.svg"):
            made.append("bench_compile.svg")
    if sweep != "-" and plot_sweep(sweep, outdir + "/sweep_ratios.svg"):
        made.append("sweep_ratios.svg")
    if not made:
        sys.exit("bench_plots: no table found in the inputs")
    for m in made:
        print(outdir + "/" + m)


if __name__ == "__main__":
    main(sys.argv)
