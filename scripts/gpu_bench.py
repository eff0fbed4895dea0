#!/usr/bin/env python3
"""The CUDA backend's training throughput beside PyTorch on the same GPU.

NOT RUN YET: written on a machine without a GPU (issue 8); run it on the
GPU machine, where PyTorch with CUDA is installed:

    scripts/gpu_bench.py [--steps 50] [--device cuda:0] [--go-pairs avg/batch100=X,...]

It runs BenchmarkGPUTrainStep (trainstep/cuda: avg, lstmavg and gran,
dimension 300, vocabulary 20,000, STS 2012 lengths, margin loss with MAX
negatives, Adam) at batch 100 and 1,000, then the same models and batches in
PyTorch (scripts/train_bench.py's Encoder and step) on the same GPU, and
prints pairs/s and the Go/PyTorch ratios (the issue's target: at least 0.5).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_bench as tb  # noqa: E402  (the CPU benchmark's models and step)

ROOT = tb.ROOT


def batches(size, lens, rng, device):
    """train_bench's 8 batches, of size pairs, on device."""
    tb.BATCH = size  # make_batches reads it when called
    return [(ids.to(device), mask.to(device)) for ids, mask in tb.make_batches(lens, rng)]


def torch_pairs_per_sec(kind, size, steps, device):
    torch.manual_seed(1)
    model = tb.Encoder(kind).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    bs = batches(size, tb.sts_lengths(), random.Random(2), device)
    for ids, mask in bs:  # warm up (cuBLAS handles, allocator)
        tb.step(model, opt, ids, mask)
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    for i in range(steps):
        ids, mask = bs[i % len(bs)]
        tb.step(model, opt, ids, mask)  # loss.item() synchronises
    return steps * size / (time.perf_counter() - t0)


def go_pairs_per_sec(steps, device):
    cmd = ["go", "test", "-run", "^$", "-bench", "BenchmarkGPUTrainStep", "-benchtime", f"{steps}x", "-timeout", "60m", "./trainstep/cuda/"]
    env = dict(os.environ, PARASTREAM_BENCH_DEVICE=device)
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env).stdout
    got = {m.group(1): float(m.group(2)) for m in re.finditer(r"BenchmarkGPUTrainStep/(\w+/batch\d+)\S*\s+\d+\s+\d+ ns/op\s+([\d.]+) pairs/s", out)}
    if not got:
        sys.exit("no pairs/s in the Go benchmark's output (no GPU? see the SKIP line):\n" + out)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--go-pairs", help="Go pairs/s already measured, as avg/batch100=X,... (skips go test)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("PyTorch sees no GPU: run this on the GPU machine")
    go = dict((k, float(v)) for k, v in (kv.split("=") for kv in a.go_pairs.split(","))) if a.go_pairs else go_pairs_per_sec(a.steps, a.device)
    print(f"GPU training throughput on {torch.cuda.get_device_name(a.device)}: dim {tb.DIM}, vocab {tb.VOCAB}, STS 2012 lengths, margin/max, Adam")
    print(f"{'model':20} {'parastream cuda':>16} {'PyTorch ' + torch.__version__:>22} {'ratio':>7}")
    for key in sorted(go, key=lambda k: (int(k.split('batch')[1]), k)):
        kind, size = key.split("/batch")
        pt = torch_pairs_per_sec(kind, int(size), a.steps, a.device)
        print(f"{key:20} {go[key]:12.0f} p/s {pt:18.0f} p/s {go[key] / pt:7.2f}")


if __name__ == "__main__":
    main()
