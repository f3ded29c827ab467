#!/usr/bin/python3
"""PyTorch on trainscope's CNN, the reference for `trainscope train --model cnn --backend cpu` (docs/benchmarks.md).

The same model and recipe: Conv2d(1, 32, 3, padding=1), ReLU, MaxPool2d(2), Conv2d(32, 64, 3, padding=1), ReLU,
MaxPool2d(2), flatten, Linear(3136, 128), ReLU, Linear(128, 10); cross-entropy, AdamW (lr 1e-3, weight decay 0.01),
batch 128, fp32, Fashion-MNIST pixels scaled to [0, 1] (no normalisation, as trainscope), the last partial batch of
an epoch dropped. --conv and --hidden change the shape as trainscope's options do.

Two measurements:
  --time (default)  the step time: the median and best wall time of zero_grad + forward + loss + backward + step over
                    --steps steps after --warmup, on the first training batches. Its best settings here are searched
                    with --memory-format (contiguous NCHW or channels_last, which oneDNN prefers); the environment
                    as pytorch_seed_mlp.py sets it: OMP_WAIT_POLICY=PASSIVE, and OPENBLAS_CORETYPE=SkylakeX on a CPU
                    with AVX-512 (unset on an AVX2-only CPU, where SkylakeX's kernels are illegal instructions).
  --epochs N        trains N epochs on the whole training set (shuffled per epoch by torch.manual_seed(--seed)) and
                    prints the test accuracy after each: the accuracy figure of the issue's recipe.

  /usr/bin/python3 bench/pytorch_cnn.py --threads 2                      # step time, 2 threads
  /usr/bin/python3 bench/pytorch_cnn.py --threads 2 --memory-format channels_last --json
  /usr/bin/python3 bench/pytorch_cnn.py --threads 2 --epochs 3           # accuracy after 3 epochs
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, images):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        raw = f.read()
    import numpy as np
    if images:
        n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
        return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, 1, rows, cols)
    return np.frombuffer(raw, dtype=np.uint8, offset=8)


def load(data_dir, split):
    def find(stem):
        for name in (stem + ".gz", stem):
            if os.path.exists(os.path.join(data_dir, name)):
                return os.path.join(data_dir, name)
        sys.exit(f"pytorch_cnn.py: {stem}[.gz] not found in {data_dir} (apt-get install dataset-fashion-mnist)")
    x = read_idx(find(f"{split}-images-idx3-ubyte"), True)
    y = read_idx(find(f"{split}-labels-idx1-ubyte"), False)
    return x, y


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="intra-op threads (torch.set_num_threads), default 2")
    p.add_argument("--conv", default="32,64", help="each convolution's channels, default 32,64")
    p.add_argument("--hidden", default="128", help="dense hidden sizes, default 128")
    p.add_argument("--batch", type=int, default=128, help="batch size, default 128")
    p.add_argument("--steps", type=int, default=20, help="--time: timed training steps, default 20")
    p.add_argument("--warmup", type=int, default=3, help="--time: untimed steps first, default 3")
    p.add_argument("--epochs", type=int, default=0, help="train N epochs and print the test accuracy (0: --time)")
    p.add_argument("--seed", type=int, default=42, help="torch.manual_seed: weights and batch order, default 42")
    p.add_argument("--memory-format", choices=["contiguous", "channels_last"], default="contiguous",
                   help="the activations' layout (channels_last: NHWC, as trainscope), default contiguous")
    p.add_argument("--data", default=DATA, help=f"Fashion-MNIST IDX directory, default {DATA}")
    p.add_argument("--omp-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY, default PASSIVE")
    p.add_argument("--openblas-core", default="auto",
                   help="OPENBLAS_CORETYPE; default auto: SkylakeX where the CPU has AVX-512 (OpenBLAS 0.3.21 does not "
                        "recognise Zen 4/5 and would take its AVX2 kernels), else unset ('': unset)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args()
    if a.threads < 1 or a.steps < 1 or a.warmup < 0 or a.batch < 1 or a.epochs < 0:
        p.error("--threads, --steps and --batch must be >= 1, --warmup and --epochs >= 0")

    os.environ["OMP_WAIT_POLICY"] = a.omp_wait_policy
    if a.openblas_core == "auto":
        with open("/proc/cpuinfo") as f:
            a.openblas_core = "SkylakeX" if " avx512f" in f.read() else ""
    if a.openblas_core:
        os.environ["OPENBLAS_CORETYPE"] = a.openblas_core
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    try:
        import torch
    except ImportError:
        sys.exit("pytorch_cnn.py: PyTorch is not installed (Debian: apt-get install python3-torch)")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format

    x_train, y_train = load(a.data, "train")
    x_test, y_test = load(a.data, "t10k")
    to_x = lambda x: torch.from_numpy(x.astype("float32") / 255.0).contiguous(memory_format=fmt)
    to_y = lambda y: torch.from_numpy(y.astype("int64"))

    layers, channels, size = [], 1, x_train.shape[2]
    for c in [int(v) for v in a.conv.split(",") if v]:
        layers += [torch.nn.Conv2d(channels, c, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2)]
        channels, size = c, size // 2
    layers.append(torch.nn.Flatten())
    features = channels * size * size
    for h in [int(v) for v in a.hidden.split(",") if v]:
        layers += [torch.nn.Linear(features, h), torch.nn.ReLU()]
        features = h
    layers.append(torch.nn.Linear(features, 10))
    model = torch.nn.Sequential(*layers).to(memory_format=fmt)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    common = {"framework": f"PyTorch {torch.__version__}", "threads": a.threads, "memory_format": a.memory_format,
              "openblas_coretype": a.openblas_core or "unset",
              "batch": a.batch, "conv": a.conv, "hidden": a.hidden}
    if a.epochs > 0:
        xs, ys, xt, yt = to_x(x_train), to_y(y_train), to_x(x_test), to_y(y_test)
        steps = len(xs) // a.batch
        accuracy = []
        for epoch in range(a.epochs):
            t0 = time.perf_counter()
            model.train()
            perm = torch.randperm(len(xs))
            for s in range(steps):
                idx = perm[s * a.batch:(s + 1) * a.batch]
                step(xs[idx].contiguous(memory_format=fmt), ys[idx])
            model.eval()
            with torch.no_grad():
                correct = sum(int((model(xt[i:i + 1000]).argmax(1) == yt[i:i + 1000]).sum())
                              for i in range(0, len(xt), 1000))
            accuracy.append(correct / len(xt))
            if not a.json:
                print(f"pytorch cnn: epoch {epoch + 1}/{a.epochs}: test accuracy {accuracy[-1]:.4f} "
                      f"({time.perf_counter() - t0:.1f} s)", flush=True)
        if a.json:
            print(json.dumps({**common, "epochs": a.epochs, "seed": a.seed, "test_accuracy": accuracy}))
        return

    n = a.batch * (a.warmup + a.steps)
    xs, ys = to_x(x_train[:n]), to_y(y_train[:n])
    ms = []
    for s in range(a.warmup + a.steps):
        xb = xs[s * a.batch:(s + 1) * a.batch]
        yb = ys[s * a.batch:(s + 1) * a.batch]
        t0 = time.perf_counter()
        loss = step(xb, yb)
        t1 = time.perf_counter()
        if s >= a.warmup:
            ms.append((t1 - t0) * 1e3)
    result = {**common, "steps": len(ms), "median_ms": statistics.median(ms), "best_ms": min(ms),
              "last_loss": float(loss)}
    if a.json:
        print(json.dumps(result))
    else:
        print(f"pytorch cnn: step time median {result['median_ms']:.2f} ms, best {result['best_ms']:.2f} ms "
              f"({result['steps']} steps after {a.warmup} warm-up; {result['framework']}, {a.threads} threads, "
              f"{a.memory_format}, batch {a.batch}, conv {a.conv}, hidden {a.hidden})")


if __name__ == "__main__":
    main()
