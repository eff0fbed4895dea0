#!/usr/bin/env python3
"""Compare training steps of avg, lstmavg and gran in PyTorch (CPU) with
parastream's gorgonia backend (BenchmarkTrainStep) on this machine.

The PyTorch models are the Go benchmark's: 20,000 x 300 word embeddings,
batches of 100 pairs with STS 2012 sentence lengths (from ../shared/data
when present, else uniform 4-24), zero-padded to multiples of 8 and masked;
avg is the masked mean, lstmavg the mean of the hidden states of a peephole
LSTM (hidden 300, state kept at padded steps), gran the mean of
x_t * sigmoid(x_t Wx + h_t Wh + b) over the same LSTM (Wieting & Gimpel
2017); the margin loss on cosine with MAX in-batch negatives on both sides
(delta 0.4, Eq. 2-5), dense Adam with lr 0.001.

Usage: scripts/train_bench.py [--steps N] [--threads T] [--models avg,lstmavg,gran]
(--torch-only also takes avg-sparseadam, lstmavg-nnlstm and gran-nnlstm: the
strongest PyTorch variants, beside which tools/benchreport puts its headlines)
       [--go-pairs avg=X,lstmavg=Y,gran=Z] [--blas auto|go|openblas] [--repeat N]
       [--torch-only [--json]]
Without --go-pairs it runs the Go benchmark first (go test -bench) on the
BLAS given (PARASTREAM_BENCH_BLAS; default auto: OpenBLAS, loaded at run
time, where the machine has it, else gonum) and prints the BLAS it ran on.
--repeat N measures each side N times, alternating, and prints every ratio
and their median. --torch-only measures PyTorch alone (--repeat times
each model), and with --json prints the rates as one JSON object on
stdout: tools/benchreport (make bench) takes the Go side from its own
go test run. Debian: apt-get install python3-torch; run it with
/usr/bin/python3.
"""
import argparse
import glob
import json
import os
import random
import re
import resource
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


def make_batches(lens, rng, vocab=VOCAB):
    """8 batches of 100 pairs, sorted by length like trainstep.Batches."""
    pairs = []
    for _ in range(8 * BATCH):
        a = [rng.randrange(vocab) for _ in range(rng.choice(lens))]
        b = [rng.randrange(vocab) for _ in range(rng.choice(lens))]
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


class Encoder(torch.nn.Module):
    """avg, lstmavg or gran over a vocab x 300 embedding (sparse: its
    gradient is the batch's rows, for SparseAdam)."""

    def __init__(self, kind, vocab=VOCAB, sparse=False):
        super().__init__()
        self.kind = kind
        self.emb = torch.nn.Embedding(vocab, DIM, sparse=sparse)
        torch.nn.init.uniform_(self.emb.weight, -0.1, 0.1)
        if kind != "avg":
            self.wx = torch.nn.Linear(DIM, 4 * DIM)
            self.wh = torch.nn.Linear(DIM, 4 * DIM, bias=False)
            self.peep = torch.nn.Parameter(torch.zeros(3, DIM))
        if kind == "gran":
            self.gx = torch.nn.Linear(DIM, DIM)
            self.gh = torch.nn.Linear(DIM, DIM, bias=False)

    def forward(self, ids, mask):
        x = self.emb(ids) * mask.unsqueeze(2)
        n = mask.sum(1, keepdim=True)
        if self.kind == "avg":
            return x.sum(1) / n
        B, T, _ = x.shape
        h = x.new_zeros(B, DIM)
        c = x.new_zeros(B, DIM)
        zx = self.wx(x)
        out = x.new_zeros(B, DIM)
        for t in range(T):
            zi, zf, zg, zo = (zx[:, t] + self.wh(h)).chunk(4, 1)
            i = torch.sigmoid(zi + self.peep[0] * c)
            f = torch.sigmoid(zf + self.peep[1] * c)
            c2 = f * c + i * torch.tanh(zg)
            h2 = torch.sigmoid(zo + self.peep[2] * c2) * torch.tanh(c2)
            m = mask[:, t:t + 1]
            c = m * c2 + (1 - m) * c
            h = m * h2 + (1 - m) * h
            if self.kind == "lstmavg":
                out = out + m * h2
            else:
                out = out + m * x[:, t] * torch.sigmoid(self.gx(x[:, t]) + self.gh(h2))
        return out / n


class NNLSTMEncoder(torch.nn.Module):
    """lstmavg or gran with torch.nn.LSTM (fused, no peepholes) for the
    recurrence: not the same model, a speed bar for the Python loop above."""

    def __init__(self, kind, vocab=VOCAB):
        super().__init__()
        self.kind = kind
        self.emb = torch.nn.Embedding(vocab, DIM)
        torch.nn.init.uniform_(self.emb.weight, -0.1, 0.1)
        self.lstm = torch.nn.LSTM(DIM, DIM, batch_first=True)
        if kind == "gran":
            self.gx = torch.nn.Linear(DIM, DIM)
            self.gh = torch.nn.Linear(DIM, DIM, bias=False)

    def forward(self, ids, mask):
        x = self.emb(ids) * mask.unsqueeze(2)
        n = mask.sum(1, keepdim=True)
        h, _ = self.lstm(x)
        m = mask.unsqueeze(2)
        if self.kind == "lstmavg":
            return (h * m).sum(1) / n
        return (x * torch.sigmoid(self.gx(x) + self.gh(h)) * m).sum(1) / n


def build(kind):
    """The model and optimiser of a --models name: avg, lstmavg, gran (the
    same models as parastream's, dense Adam); avg-sparseadam (a sparse
    embedding gradient and SparseAdam, the strongest PyTorch variant of the
    sparse step); lstmavg-nnlstm, gran-nnlstm (torch.nn.LSTM)."""
    if kind == "avg-sparseadam":
        model = Encoder("avg", sparse=True)
        return model, torch.optim.SparseAdam(list(model.emb.parameters()), lr=0.001)
    if kind.endswith("-nnlstm"):
        model = NNLSTMEncoder(kind.removesuffix("-nnlstm"))
    else:
        model = Encoder(kind)
    return model, torch.optim.Adam(model.parameters(), lr=0.001)


def step(model, opt, ids, mask):
    n = ids.shape[0] // 2
    g = model(ids, mask)
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


def torch_pairs_per_sec(kind, steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model, opt = build(kind)
    batches = make_batches(sts_lengths(), random.Random(2))
    return timed_steps(model, opt, batches, batches, steps)


def timed_steps(model, opt, batches, warm_up, steps):
    """pairs/s of steps steps over batches (cycled), after a step on each
    of warm_up."""
    for ids, mask in warm_up:
        step(model, opt, ids, mask)
    t0 = time.perf_counter()
    for i in range(steps):
        ids, mask = batches[i % len(batches)]
        step(model, opt, ids, mask)
    return steps * BATCH / (time.perf_counter() - t0)


def torch_measure(kind, steps, threads):
    """pairs/s and peak RSS (MiB) of torch_pairs_per_sec in a child of its
    own (forked: getrusage's peak is per process)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rate = torch_pairs_per_sec(kind, steps, threads)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        os.write(w, f"{rate} {peak}".encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        out = fh.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not out:
        sys.exit(f"the PyTorch {kind} child failed (status {status})")
    rate, peak = out.split()
    return float(rate), float(peak)


def go_pairs_per_sec(models, steps, blas):
    """pairs/s and peak RSS (MiB) of each model, and the device line the
    benchmark logged."""
    pattern = "BenchmarkTrainStep/^(" + "|".join(models) + ")$"
    cmd = ["go", "test", "-run", "XXX", "-bench", pattern, "-benchtime", f"{steps}x", "./trainstep/"]
    env = dict(os.environ)
    if blas:
        env["PARASTREAM_BENCH_BLAS"] = blas
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True, env=env).stdout
    got, peak = {}, {}
    for m in re.finditer(r"BenchmarkTrainStep/(\w+)\S*\s+\d+\s+\d+ ns/op\s+([\d.]+) pairs/s(?:\s+([\d.]+) peak-RSS-MiB)?", out):
        got[m.group(1)] = float(m.group(2))
        if m.group(3):
            peak[m.group(1)] = float(m.group(3))
    missing = [k for k in models if k not in got]
    if missing:
        sys.exit(f"could not find pairs/s of {missing} in the Go benchmark output:\n" + out)
    dev = re.search(r"device: (.*)", out)
    return got, peak, dev.group(1).strip() if dev else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=0, help="steps per model (default: 30 for avg, 4 for the recurrent ones)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--models", default="avg,lstmavg,gran")
    ap.add_argument("--blas", default="", help="the Go side's BLAS: auto (default), go or openblas")
    ap.add_argument("--repeat", type=int, default=1, help="measurements of each side, alternating")
    ap.add_argument("--go-pairs", help="Go pairs/s already measured, as avg=X,lstmavg=Y (skips go test)")
    ap.add_argument("--torch-only", action="store_true",
                    help="measure PyTorch alone (the Go side comes from elsewhere: tools/benchreport)")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object on stdout (the table goes to stderr)")
    a = ap.parse_args()
    models = a.models.split(",")
    steps = lambda k: a.steps or (30 if k.startswith("avg") else 4)
    if a.torch_only:
        torch_only(a, models, steps)
        return
    given = None
    if a.go_pairs:
        given = {k: float(v) for k, v in (kv.split("=") for kv in a.go_pairs.split(","))}
    print(f"training throughput, batch {BATCH}, dim {DIM}, vocab {VOCAB}, STS 2012 lengths, margin/max, Adam")
    print(f"{'model':10} {'Go':>12} {'PyTorch ' + torch.__version__:>18} {'Go/PyTorch':>11} {'Go peak RSS':>12} {'PyTorch peak':>13}")
    devices = set()
    for k in models:
        ratios = []
        for _ in range(a.repeat):
            gp = f"{'-':>12}"
            if given:
                go = given[k]
            else:  # one go test a model: a peak RSS of its own
                got, peak, dev = go_pairs_per_sec([k], steps(k), a.blas)
                go = got[k]
                devices.add(dev)
                if k in peak:
                    gp = f"{peak[k]:8.0f} MiB"
            pt, pt_peak = torch_measure(k, steps(k), a.threads)
            ratios.append(go / pt)
            print(f"{k:10} {go:8.1f} p/s {pt:14.1f} p/s {go / pt:11.3f} {gp} {pt_peak:9.0f} MiB", flush=True)
        if a.repeat > 1:
            rs = sorted(ratios)
            print(f"{k:10} ratio min {rs[0]:.3f} median {rs[len(rs) // 2] if len(rs) % 2 else (rs[len(rs) // 2 - 1] + rs[len(rs) // 2]) / 2:.3f} max {rs[-1]:.3f} over {len(rs)} runs")
    for d in sorted(devices):
        print(f"(Go on {d})")
    print(f"(PyTorch CPU, {a.threads} threads; peak RSS: the benchmark's process, VmHWM, and the PyTorch child's, getrusage)")


def torch_only(a, models, steps):
    """--torch-only: a.repeat measurements of each model in PyTorch, as
    JSON with --json (pairs/s and peak RSS of every repeat)."""
    out = sys.stderr if a.json else sys.stdout
    res = {"torch": torch.__version__, "threads": a.threads, "batch": BATCH, "dim": DIM, "vocab": VOCAB, "models": {}}
    for k in models:
        rates, peaks = [], []
        for _ in range(a.repeat):
            pt, pt_peak = torch_measure(k, steps(k), a.threads)
            rates.append(pt)
            peaks.append(pt_peak)
            print(f"{k:10} PyTorch {torch.__version__} {pt:10.1f} pairs/s, peak RSS {pt_peak:.0f} MiB ({steps(k)} steps)", file=out, flush=True)
        res["models"][k] = {"steps": steps(k), "pairs_per_s": rates, "peak_rss_mib": peaks}
    if a.json:
        print(json.dumps(res))


if __name__ == "__main__":
    main()
