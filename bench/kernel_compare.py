#!/usr/bin/env python3
"""Per-kernel before/after of two trainscope builds, back to back in one run (docs/benchmarks.md, "Memory-bound
kernels"): for each configuration, `train --epochs 1 --limit N --report --trace --trace-steps 10000` with build A, then
with build B, alternating, ROUNDS times. Each kernel's figure is the median over every step of all rounds (the trace's
per-dispatch durations summed per step; the first step left out as warm-up), GB/s = the kernel table's compulsory
bytes per step / that time. Prints a markdown table, the load average before each run, and whether the two builds'
per-step losses were bit-identical.

  bench/kernel_compare.py BEFORE/trainscope AFTER/trainscope [--rounds 2] [--limit 12800] [--config "gpu fp32" ...]

A configuration is "BACKEND PRECISION [extra train options]", e.g. "gpu fp16 --unfused" or "cpu fp32 --threads 1".
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

DEFAULT_CONFIGS = ["gpu fp32", "gpu fp16", "gpu bf16", "gpu fp32 --unfused", "gpu fp16 --unfused",
                   "gpu bf16 --unfused", "cpu fp32", "cpu fp32 --unfused", "cpu bf16"]


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(binary, config, limit, workdir, tag):
    """One training run; returns ({kernel: {step: ms}}, {kernel: bytes per step}, step losses)."""
    backend, precision, *extra = config.split()
    report, trace = os.path.join(workdir, tag + ".json"), os.path.join(workdir, tag + ".trace.json")
    cmd = [binary, "train", "--backend", backend, "--precision", precision, "--epochs", "1", "--limit", str(limit),
           "--report", report, "--trace", trace, "--trace-steps", "10000", *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    ms = collections.defaultdict(lambda: collections.defaultdict(float))
    nbytes = collections.defaultdict(lambda: collections.defaultdict(float))
    for e in events:
        if e.get("cat") != "kernel" or e["args"]["step"] == 0:
            continue
        step = e["args"]["step"]
        for name in (e["name"], "(all kernels)"):
            ms[name][step] += e["dur"] / 1000.0
            nbytes[name][step] += e["args"]["bytes"]
    with open(report) as f:
        losses = json.load(f)["backends"][0]["step_losses"]
    return ms, {k: statistics.median(v.values()) for k, v in nbytes.items()}, losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=int, default=12800, help="training samples per run (one epoch)")
    ap.add_argument("--config", action="append", help="repeatable; default: " + ", ".join(DEFAULT_CONFIGS))
    args = ap.parse_args()
    configs = args.config or DEFAULT_CONFIGS
    for b in (args.before, args.after):
        if not os.access(b, os.X_OK):
            sys.exit(f"kernel_compare: {b} is not an executable trainscope")
    steps = collections.defaultdict(lambda: collections.defaultdict(list))  # (config, kernel) -> build -> [ms]
    nbytes, identical = {}, collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as workdir:
        for r in range(1, args.rounds + 1):
            for config in configs:
                losses = {}
                for build, binary in (("before", args.before), ("after", args.after)):
                    print(f"round {r}, {config}, {build}: load {load_average()}", file=sys.stderr)
                    ms, per_step_bytes, losses[build] = run(binary, config, args.limit, workdir, f"{build}-{r}")
                    for kernel, by_step in ms.items():
                        steps[(config, kernel)][build].extend(by_step.values())
                        nbytes[(config, kernel)] = per_step_bytes[kernel]
                identical[config].append(losses["before"] == losses["after"])
    print(f"load at the end: {load_average()}")
    print("| run | kernel | before ms/step | after ms/step | speed-up | before GB/s | after GB/s |")
    print("|---|---|---|---|---|---|---|")
    for (config, kernel), v in sorted(steps.items()):
        if len(v) < 2:  # a kernel one of the builds does not run
            continue
        a, b = statistics.median(v["before"]), statistics.median(v["after"])
        gbps = lambda t: nbytes[(config, kernel)] / (t * 1e6)
        print(f"| {config} | {kernel} | {a:.4f} | {b:.4f} | {a / b:.2f}x | {gbps(a):.2f} | {gbps(b):.2f} |")
    for config, same in identical.items():
        print(f"{config}: per-step losses {'bit-identical' if all(same) else 'DIFFER'} in {len(same)} round(s)")


if __name__ == "__main__":
    main()
