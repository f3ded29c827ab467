#!/usr/bin/python3
"""PyTorch on the seed-mlp benchmark, the reference for `trainscope train --preset seed-mlp --backend cpu`.

The same shape and recipe as trainscope's preset: MLP 1024-2048-2048-10, GELU (tanh approximation), AdamW
(lr 1e-3, weight decay 0.01, foreach=True: PyTorch's faster multi-tensor update), batch 512, cross-entropy, random
inputs in [0, 1) and random labels from a fixed seed, fp32. It prints the median and the best step time (wall clock
around zero_grad + forward + loss + backward + optimizer step), the first steps left out as warm-up.

PyTorch's best settings on this CPU (Debian's python3-torch 1.13, BLAS = OpenBLAS): OMP_WAIT_POLICY=PASSIVE (its
OpenMP threads then sleep instead of spinning between kernels) and OPENBLAS_CORETYPE=SkylakeX (OpenBLAS 0.3.21 does
not recognise the CPU and would pick its AVX2 Haswell kernels). Both must be set before torch is imported; this script
sets them (see --omp-wait-policy, --openblas-core) unless they are already in the environment with --keep-env.

  /usr/bin/python3 bench/pytorch_seed_mlp.py --threads 2            # the comparison of docs/benchmarks.md
  /usr/bin/python3 bench/pytorch_seed_mlp.py --threads 2 --json     # one JSON object instead of the text line
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="intra-op threads (torch.set_num_threads), default 2")
    p.add_argument("--steps", type=int, default=20, help="timed training steps, default 20")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first, default 3")
    p.add_argument("--omp-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY, default PASSIVE")
    p.add_argument("--openblas-core", default="SkylakeX",
                   help="OPENBLAS_CORETYPE, default SkylakeX ('' leaves it unset: OpenBLAS's own choice)")
    p.add_argument("--keep-env", action="store_true", help="keep OMP_WAIT_POLICY/OPENBLAS_CORETYPE as they are")
    p.add_argument("--no-foreach", action="store_true", help="AdamW with foreach=False (the per-tensor loop)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args()
    if a.threads < 1 or a.steps < 1 or a.warmup < 0:
        p.error("--threads and --steps must be >= 1, --warmup >= 0")

    if not a.keep_env:
        os.environ["OMP_WAIT_POLICY"] = a.omp_wait_policy
        if a.openblas_core:
            os.environ["OPENBLAS_CORETYPE"] = a.openblas_core
        else:
            os.environ.pop("OPENBLAS_CORETYPE", None)
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)  # a GEMM is one BLAS call, threaded by OpenBLAS itself
    try:
        import torch
    except ImportError:
        sys.exit("pytorch_seed_mlp.py: PyTorch is not installed (Debian: apt-get install python3-torch)")
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)

    batch, features, hidden, classes = 512, 1024, 2048, 10
    samples = batch * (a.steps + a.warmup)
    g = torch.Generator().manual_seed(42)
    x = torch.rand(samples, features, generator=g)
    y = torch.randint(0, classes, (samples,), generator=g)
    model = torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.GELU(approximate="tanh"),
        torch.nn.Linear(hidden, hidden), torch.nn.GELU(approximate="tanh"),
        torch.nn.Linear(hidden, classes))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=not a.no_foreach)
    loss_fn = torch.nn.CrossEntropyLoss()

    ms = []
    for step in range(a.warmup + a.steps):
        xb, yb = x[step * batch:(step + 1) * batch], y[step * batch:(step + 1) * batch]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if step >= a.warmup:
            ms.append((t1 - t0) * 1e3)

    result = {
        "framework": f"PyTorch {torch.__version__}",
        "threads": a.threads,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "adamw_foreach": not a.no_foreach,
        "steps": len(ms),
        "median_ms": statistics.median(ms),
        "best_ms": min(ms),
        "last_loss": float(loss),
    }
    if a.json:
        print(json.dumps(result))
    else:
        print(f"pytorch seed-mlp: step time median {result['median_ms']:.2f} ms, best {result['best_ms']:.2f} ms "
              f"({result['steps']} steps after {a.warmup} warm-up; {result['framework']}, {a.threads} threads, "
              f"OMP_WAIT_POLICY={result['omp_wait_policy']}, OPENBLAS_CORETYPE={result['openblas_coretype'] or 'unset'}, "
              f"AdamW foreach={result['adamw_foreach']})")


if __name__ == "__main__":
    main()
