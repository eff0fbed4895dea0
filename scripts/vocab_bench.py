#!/usr/bin/env python3
"""Step cost against the vocabulary: avg at batch 100, dim 300, STS 2012
lengths, with 20,000, 100,000 and 400,000 words, in PyTorch (CPU) with a
sparse embedding gradient and SparseAdam beside dense Adam, and in
parastream's CPU backend (BenchmarkVocabScaling: the sparse row update, the
default, beside --embedding-update dense).

A step of either sparse optimiser touches the batch's rows only, so its
cost should not grow with the vocabulary; the dense ones update every row.
The model and loss are scripts/train_bench.py's.

Usage: scripts/vocab_bench.py [--steps N] [--threads T] [--go-pairs FILE]
       scripts/vocab_bench.py --torch-only [--sizes 20000,400000] [--repeat N] [--json]
Without --go-pairs it runs the Go benchmark first (go test -bench
BenchmarkVocabScaling); FILE is that benchmark's output, if already run.
--torch-only measures PyTorch's SparseAdam alone at --sizes, --repeat
times each (tools/benchreport, make bench, has the Go side).
Debian: apt-get install python3-torch; run it with /usr/bin/python3.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

import torch

from train_bench import BATCH, DIM, ROOT, Encoder, make_batches, sts_lengths, timed_steps

SIZES = (20_000, 100_000, 400_000)


def torch_pairs_per_sec(vocab, sparse, steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = Encoder("avg", vocab=vocab, sparse=sparse)
    if sparse:
        opt = torch.optim.SparseAdam(list(model.parameters()), lr=0.001)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.001)
    batches = make_batches(sts_lengths(), random.Random(2), vocab=vocab)
    return timed_steps(model, opt, batches, batches[:2], steps)


def go_pairs_per_sec(steps, out=None):
    if out is None:
        cmd = ["go", "test", "-run", "XXX", "-bench", "BenchmarkVocabScaling", "-benchtime", f"{steps}x", "./trainstep/"]
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    got = {}
    for m in re.finditer(r"BenchmarkVocabScaling/(dense/)?vocab=(\d+)\S*\s+\d+\s+\d+ ns/op\s+([\d.]+) pairs/s", out):
        got[(m.group(1) is None, int(m.group(2)))] = float(m.group(3))
    missing = [(s, v) for s in (True, False) for v in SIZES if (s, v) not in got]
    if missing:
        sys.exit(f"could not find pairs/s of {missing} in the Go benchmark output:\n" + out)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="steps per size")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--go-pairs", help="a file holding BenchmarkVocabScaling's output (skips go test)")
    ap.add_argument("--torch-only", action="store_true",
                    help="measure PyTorch's SparseAdam alone (tools/benchreport has the Go side)")
    ap.add_argument("--sizes", default=",".join(str(v) for v in SIZES), help="with --torch-only: vocabulary sizes")
    ap.add_argument("--repeat", type=int, default=1, help="with --torch-only: measurements of each size")
    ap.add_argument("--json", action="store_true", help="with --torch-only: one JSON object on stdout")
    a = ap.parse_args()
    if a.torch_only:
        res = {"torch": torch.__version__, "threads": a.threads, "steps": a.steps, "optimizer": "SparseAdam", "sizes": {}}
        for v in (int(x) for x in a.sizes.split(",")):
            rates = [torch_pairs_per_sec(v, True, a.steps, a.threads) for _ in range(a.repeat)]
            res["sizes"][str(v)] = {"pairs_per_s": rates}
            print(f"vocab {v}: PyTorch SparseAdam {', '.join(f'{r:.0f}' for r in rates)} pairs/s",
                  file=sys.stderr if a.json else sys.stdout, flush=True)
        if a.json:
            print(json.dumps(res))
        return
    go = go_pairs_per_sec(a.steps, open(a.go_pairs).read() if a.go_pairs else None)
    pt = {(s, v): torch_pairs_per_sec(v, s, a.steps, a.threads) for s in (True, False) for v in SIZES}
    print(f"step cost against the vocabulary: avg, batch {BATCH}, dim {DIM}, STS 2012 lengths, margin/max, lr 0.001")
    print(f"{'vocab':>8} {'Go sparse':>12} {'Go dense':>12} {'PyTorch SparseAdam':>19} {'PyTorch Adam':>13} {'Go/PyTorch sparse':>18} {'dense':>6}")
    for v in SIZES:
        print(f"{v:8d} {go[(True, v)]:8.0f} p/s {go[(False, v)]:8.0f} p/s {pt[(True, v)]:15.0f} p/s {pt[(False, v)]:9.0f} p/s"
              f" {go[(True, v)] / pt[(True, v)]:18.2f} {go[(False, v)] / pt[(False, v)]:6.2f}")
    lo, hi = SIZES[0], SIZES[-1]
    print(f"400,000 over 20,000 words: Go sparse {go[(True, hi)] / go[(True, lo)]:.2f}, Go dense {go[(False, hi)] / go[(False, lo)]:.2f}, "
          f"PyTorch SparseAdam {pt[(True, hi)] / pt[(True, lo)]:.2f}, Adam {pt[(False, hi)] / pt[(False, lo)]:.2f}")
    print(f"(PyTorch {torch.__version__} CPU, {a.threads} threads)")


if __name__ == "__main__":
    main()
