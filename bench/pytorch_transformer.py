#!/usr/bin/python3
"""PyTorch on trainscope's transformer, the reference for `trainscope train --dataset reverse --backend cpu`.

The same model and recipe as trainscope's defaults: a decoder-only transformer of GPT-2's shape (token and position
embeddings; per block pre-LayerNorm causal multi-head self-attention and a GELU (tanh) MLP of 4x the width, each added
to the residual stream; a final LayerNorm; the output projection tied to the token embedding, no bias), 2 blocks,
embed 64, 4 heads, context 32, on the digit reversal task (16 digits, the separator, their reverse; the loss over the
16 answer positions), GPT-2's initialisation, AdamW (lr 1e-3, weight decay 0.01, foreach=True), batch 128, fp32. Attention as PyTorch 1.13
computes it without a fused kernel: the (T x T) scores, masked, softmax, times V. It prints the median and the best
step time (wall clock around zero_grad + forward + loss + backward + optimizer step), the first steps left out as
warm-up, and with --steps-to-learn the steps until 95% of 1,000 held-out strings are reversed right.

PyTorch's best settings on this CPU as bench/pytorch_seed_mlp.py sets them (OMP_WAIT_POLICY=PASSIVE,
OPENBLAS_CORETYPE=SkylakeX unless --openblas-core says otherwise).

  /usr/bin/python3 bench/pytorch_transformer.py --threads 2

With --fortunes: the character model instead, on the text `trainscope train --dataset fortunes` reads (Debian's
fortunes package, the same eight files, cookies cleaned and split the same way, a byte per token, the last tenth of
the cookies held out, windows of --context laid end to end), trained --epochs over the training windows in a
shuffled order and evaluated on every held-out window: the held-out loss and the share of next characters right.

  /usr/bin/python3 bench/pytorch_transformer.py --fortunes --context 64 --batch 32 --threads 2
"""
import argparse
import math
import os
import statistics
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="intra-op threads (torch.set_num_threads), default 2")
    p.add_argument("--steps", type=int, default=30, help="timed training steps, default 30")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first, default 3")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--context", type=int, default=32, help="positions per sequence (even: digits = context / 2)")
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--openblas-core", default="SkylakeX", help="OPENBLAS_CORETYPE ('' leaves it unset)")
    p.add_argument("--steps-to-learn", action="store_true", help="train until 95%% of held-out strings are right")
    p.add_argument("--fortunes", nargs="?", const="/usr/share/games/fortunes", metavar="DIR",
                   help="the character model on the fortune files of DIR (default /usr/share/games/fortunes)")
    p.add_argument("--epochs", type=int, default=1, help="with --fortunes: epochs over the training windows")
    a = p.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if a.openblas_core:
        os.environ["OPENBLAS_CORETYPE"] = a.openblas_core
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        sys.exit("pytorch_transformer.py: PyTorch is not installed (Debian: apt-get install python3-torch)")
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    T, C, H, L, V = a.context, a.embed, a.heads, a.layers, 11
    n = T // 2
    if a.fortunes:
        corpus = fortunes_corpus(a.fortunes)
        V = len(corpus["vocab"])

    def reverse_batch(count, g):  # d1..dn | dn..d1: x the first 2n tokens, y the last 2n, the answer counted
        d = torch.randint(0, 10, (count, n), generator=g)
        seq = torch.cat([d, torch.full((count, 1), 10), d.flip(1)], 1)
        x, y = seq[:, :-1], seq[:, 1:].clone()
        y[:, :n] = -1  # the targets of the string and of the separator do not count: only the answer
        return x, y

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
            self.qkv, self.proj = torch.nn.Linear(C, 3 * C), torch.nn.Linear(C, C)
            self.fc, self.out = torch.nn.Linear(C, 4 * C), torch.nn.Linear(4 * C, C)

        def forward(self, x):
            B = x.shape[0]
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
            att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = torch.nn.Embedding(V, C), torch.nn.Embedding(T, C)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
            self.lnf = torch.nn.LayerNorm(C)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(T))
            for b in self.blocks:
                x = b(x)
            return self.lnf(x) @ self.wte.weight.t()  # tied output projection, no bias

    model = Model()
    with torch.no_grad():  # GPT-2's initialisation, as trainscope's (core::init_transformer)
        for name, w in model.named_parameters():
            if name.endswith("bias"):
                w.zero_()
            elif "ln" in name:
                w.fill_(1.0)
            else:
                std = 0.02 / math.sqrt(2 * L) if name.endswith(("proj.weight", "out.weight")) else 0.02
                w.normal_(0.0, std)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    g = torch.Generator().manual_seed(42)
    test_x, test_y = reverse_batch(1000, torch.Generator().manual_seed(7))

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1), ignore_index=-1)
        loss.backward()
        opt.step()
        return loss.item()

    if a.fortunes:
        train_fortunes(a, torch, F, model, opt, corpus, T, V)
        return
    if a.steps_to_learn:
        for s in range(1, 5001):
            step(*reverse_batch(a.batch, g))
            if s % 20 == 0:
                with torch.no_grad():
                    pred = model(test_x).argmax(-1)
                right = ((pred == test_y) | (test_y < 0)).all(1).float().mean().item()
                if right >= 0.95:
                    print(f"pytorch {torch.__version__}: {right:.1%} of held-out strings right after {s} steps")
                    return
        print("pytorch: not learned in 5000 steps")
        return
    times = []
    for s in range(a.warmup + a.steps):
        x, y = reverse_batch(a.batch, g)
        start = time.perf_counter()
        step(x, y)
        if s >= a.warmup:
            times.append(time.perf_counter() - start)
    print(f"pytorch {torch.__version__}, {a.threads} threads, batch {a.batch}, {L} blocks, embed {C}, {H} heads, "
          f"context {T}: step median {1e3 * statistics.median(times):.2f} ms, best {1e3 * min(times):.2f} ms "
          f"over {a.steps} steps")


FORTUNE_FILES = ["literature", "science", "wisdom", "computers", "work", "people", "platitudes", "riddles"]


def clean_line(line):
    """A fortune's line as core/text_data.cpp cleans it: overstrike resolved, tabs as spaces, other control bytes
    dropped, trailing spaces dropped (bytes in, bytes out)."""
    out = bytearray()
    for b in line:
        if b == 8:  # backspace: the next byte is printed over the last one
            if out:
                out.pop()
        elif b == 9:
            out.append(32)
        elif b >= 0x20 and b != 0x7F:
            out.append(b)
    return bytes(out).rstrip(b" ")


def split_cookies(data):
    cookies, cookie = [], b""

    def finish(c):
        while c.endswith(b"\n\n"):
            c = c[:-1]
        if c:
            cookies.append(c)

    for line in data.split(b"\n"):
        if line.endswith(b"\r"):
            line = line[:-1]
        if line == b"%":
            finish(cookie)
            cookie = b""
            continue
        cleaned = clean_line(line)
        if not cookie and not cleaned:
            continue
        cookie += cleaned + b"\n"
    finish(cookie)
    return cookies


def fortunes_corpus(folder):
    """The corpus of core::read_fortunes: the files' cookies in order, each followed by a blank line; the last tenth
    of the cookies (at least one) held out."""
    cookies = []
    for name in FORTUNE_FILES:
        with open(os.path.join(folder, name), "rb") as f:
            cookies += split_cookies(f.read())
    held_out = min(max(int(len(cookies) * 0.1), 1), len(cookies) - 1)
    train_text = b"".join(c + b"\n" for c in cookies[: len(cookies) - held_out])
    text = train_text + b"".join(c + b"\n" for c in cookies[len(cookies) - held_out:])
    vocab = sorted(set(text))
    index = {b: i for i, b in enumerate(vocab)}
    return {"vocab": vocab, "tokens": [index[b] for b in text], "train_tokens": len(train_text)}


def train_fortunes(a, torch, F, model, opt, corpus, T, V):
    tokens = torch.tensor(corpus["tokens"], dtype=torch.long)
    split = corpus["train_tokens"]

    def windows(part):  # windows of T + 1 tokens laid end to end, as core::text_batch takes them
        count = (len(part) - 1) // T
        starts = torch.arange(count) * T
        idx = starts[:, None] + torch.arange(T + 1)[None, :]
        w = part[idx]
        return w[:, :-1], w[:, 1:]

    train_x, train_y = windows(tokens[:split])
    test_x, test_y = windows(tokens[split:])
    g = torch.Generator().manual_seed(42)
    steps = 0
    for epoch in range(a.epochs):
        order = torch.randperm(len(train_x), generator=g)
        for s in range(len(train_x) // a.batch):
            pick = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(train_x[pick]).reshape(-1, V), train_y[pick].reshape(-1))
            loss.backward()
            opt.step()
            steps += 1
    with torch.no_grad():
        losses, right, count = 0.0, 0, 0
        for s in range(0, len(test_x), 256):
            logits = model(test_x[s:s + 256])
            losses += F.cross_entropy(logits.reshape(-1, V), test_y[s:s + 256].reshape(-1), reduction="sum").item()
            right += (logits.argmax(-1) == test_y[s:s + 256]).sum().item()
            count += test_y[s:s + 256].numel()
    print(f"pytorch {torch.__version__}: fortunes, {len(train_x)} training / {len(test_x)} test windows of {T}, "
          f"vocab {V}; {steps} steps of batch {a.batch}: test loss {losses / count:.4f}, "
          f"test accuracy {right / count:.2%}")


if __name__ == "__main__":
    main()
