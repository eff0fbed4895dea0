#!/usr/bin/env python3
"""Compare one training step of the avg model in PyTorch (CPU) with
parastream's gorgonia backend (BenchmarkTrainStep/avg) on this machine.

The PyTorch model is the same as the Go benchmark's: 20,000 x 300 word
embeddings, batch of 100 pairs with STS 2012 sentence lengths (from
../shared/data when present, else uniform 4-24), zero-padded, masked mean
(avg), the margin loss on cosine with MAX in-batch negatives on both sides
(delta 0.4; Wieting & Gimpel 2017, Eq. 2-5), dense Adam with lr 0.001.

Usage: scripts/train_bench.py [--steps N] [--threads T] [--go-pairs X]
Without --go-pairs it runs the Go benchmark first (go test -bench).
Debian: apt-get install python3-torch; run it with /usr/bin/python3.
"""
import argparse
import glob
import os
import random
import re
import subprocess
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB, DIM, BATCH, DELTA = 20000, 300, 100, 0.4


def sts_lengths():
    lens = []
    for f in glob.glob(os.path.join(ROOT, "..", "shared", "data", "eval", "sts", "2012", "STS.input.*.txt")):
        with open(f, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                for s in line.rstrip("\n").split("\t"):
                    n = len(s.split())
                    if n:
                        lens.append(n)
    if not lens:
        rng = random.Random(1)
        lens = [4 + rng.randrange(21) for _ in range(2000)]
    return lens


def make_batches(lens, rng):
    """8 batches of 100 pairs, sorted by length like trainstep.Batches."""
    pairs = []
    for _ in range(8 * BATCH):
        a = [rng.randrange(VOCAB) for _ in range(rng.choice(lens))]
        b = [rng.randrange(VOCAB) for _ in range(rng.choice(lens))]
        pairs.append((a, b))
    pairs.sort(key=lambda p: min(max(len(p[0]), len(p[1])), 64))
    out = []
    for i in range(0, len(pairs), BATCH):
        chunk = pairs[i:i + BATCH]
        seqs = [p[0][:64] for p in chunk] + [p[1][:64] for p in chunk]
        T = (max(len(s) for s in seqs) + 7) // 8 * 8
        ids = torch.zeros(len(seqs), T, dtype=torch.long)
        mask = torch.zeros(len(seqs), T)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = torch.tensor(s)
            mask[r, :len(s)] = 1
        out.append((ids, mask))
    return out


def step(emb, opt, ids, mask):
    n = ids.shape[0] // 2
    x = emb(ids) * mask.unsqueeze(2)
    g = x.sum(1) / mask.sum(1, keepdim=True)
    u = torch.nn.functional.normalize(g, dim=1, eps=1e-12)
    c = u @ u.t()
    pen = torch.zeros_like(c)
    idx = torch.arange(2 * n)
    pen[idx, idx] = -4
    pen[idx, (idx + n) % (2 * n)] = -4
    neg = (c + pen).max(1).values
    pos = (u[:n] * u[n:]).sum(1)
    loss = torch.relu(DELTA - torch.cat([pos, pos]) + neg).sum() / n
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def torch_pairs_per_sec(steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    emb = torch.nn.Embedding(VOCAB, DIM)
    torch.nn.init.uniform_(emb.weight, -0.1, 0.1)
    opt = torch.optim.Adam(emb.parameters(), lr=0.001)
    batches = make_batches(sts_lengths(), random.Random(2))
    for ids, mask in batches:  # warm up
        step(emb, opt, ids, mask)
    t0 = time.perf_counter()
    for i in range(steps):
        ids, mask = batches[i % len(batches)]
        step(emb, opt, ids, mask)
    return steps * BATCH / (time.perf_counter() - t0)


def go_pairs_per_sec(steps):
    cmd = ["go", "test", "-run", "XXX", "-bench", "BenchmarkTrainStep/^avg$", "-benchtime", f"{steps}x", "./trainstep/"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    m = re.search(r"BenchmarkTrainStep/avg\S*\s+\d+\s+\d+ ns/op\s+([\d.]+) pairs/s", out)
    if not m:
        sys.exit("could not find pairs/s in the Go benchmark output:\n" + out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--go-pairs", type=float, help="Go pairs/s already measured (skips go test)")
    a = ap.parse_args()
    go = a.go_pairs if a.go_pairs else go_pairs_per_sec(a.steps)
    pt = torch_pairs_per_sec(a.steps, a.threads)
    print(f"avg, batch {BATCH}, dim {DIM}, vocab {VOCAB}, margin/max, Adam")
    print(f"  gorgonia (Go):       {go:10.1f} pairs/s")
    print(f"  PyTorch {torch.__version__} CPU, {a.threads} threads: {pt:10.1f} pairs/s")
    print(f"  ratio Go/PyTorch:    {go / pt:10.3f}")


if __name__ == "__main__":
    main()
