#!/usr/bin/env python3
"""The CUDA backend's training throughput beside every PyTorch variant on the same GPU.

    scripts/gpu_bench.py [--steps 100] [--device cuda:0] [--batches 100,1000]
                         [--go-output FILE | --go-test-binary PATH | --go-pairs avg/batch100=X,...]
                         [--json FILE]
    scripts/gpu_bench.py --device cpu --dry     # the CPU paths, a few steps

It takes parastream's pairs/s from BenchmarkGPUTrainStep (trainstep/cuda:
avg, lstmavg and gran, dimension 300, and the transformer of issue 19 at
dimension 512 with 6 blocks of 8 heads and filter 2,048; vocabulary
20,000, STS 2012 lengths, margin loss with MAX negatives, Adam, batch 100
and 1,000): from its output
saved in a file (--go-output), by running the compiled test binary
(--go-test-binary, as the GPU bundle does), or by `go test` in the
repository. Then it trains the same models on the same batches in PyTorch
(scripts/train_bench.py's Encoder, STS 2012 lengths) in every variant of
issue 15's table:

  eager          the step as written, torch.optim.Adam
  fused-adam     the same with torch.optim.Adam(fused=True)
  graph          forward, backward and Adam (capturable) captured as one
                 CUDA graph per batch shape (torch.cuda.CUDAGraph), replayed
                 after copying the batch into its static inputs
  (transformer   the same three variants of PyTorch's nn.TransformerEncoder:
                 norm_first=True, batch_first, relu, no dropout, eps 1e-6,
                 a final LayerNorm, sqrt(D)·e_t + the timing signal in, the
                 mean over each sentence's words out: compute/transformer.go's
                 model; the padding as src_key_padding_mask)
  cudnn          lstmavg and gran only: cuDNN's nn.LSTM (no peepholes, state
                 not held at padded steps: a different model) eager,
  cudnn-graph    and captured as a CUDA graph. They stand as the speed bar
                 of a recurrent encoder, not as the same model. PyTorch lets
                 cuDNN multiply on TF32 tensor cores by default
                 (torch.backends.cudnn.allow_tf32): these run so, where
                 parastream's default is float32 (--tf32 is its TF32)
  cudnn-graph-fp32  cudnn-graph with cuDNN's TF32 off: the same precision
                 as parastream's default

and prints pairs/s of each, the strongest PyTorch variant per row and the
ratio parastream / strongest (issue 15's target: at least 1.0, for avg,
lstmavg and gran; the transformer's ratio is printed with no target). No variant
reads the loss back each step (parastream's Step does): PyTorch runs
unsynchronised, the stronger bar; the clock stops after a synchronise.

--device cpu runs the variants that can run on the CPU (eager; fused Adam
where this PyTorch has it on the CPU; cuDNN's variant as nn.LSTM on the
CPU) and says which it skips and why (CUDA graphs need a GPU); --dry makes
that a check of the script: 2 steps, batch 8, dimension 32
(TestGPUBenchDryCPU in scripts/gpu_bundle runs it with Debian's PyTorch).

NOT RUN YET on a GPU: the CUDA paths (fused Adam, the graph captures,
cuDNN) were written on a machine without one; the GPU bundle runs them
(make gpu-bundle; docs/gpu.md, "Running on a GPU machine (the bundle)").
"""
import argparse
import contextlib
import gc
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_bench as tb  # noqa: E402  (the CPU benchmark's models and batches)

ROOT = tb.ROOT
MODELS = ["avg", "lstmavg", "gran", "transformer"]
TARGETED = {"avg", "lstmavg", "gran"}  # issue 15's target (ratio >= 1.0); issue 19 asks for the transformer's figure
# The transformer's sizes: Yang et al. 2018's (parastream's defaults for it,
# and BenchmarkGPUTrainStep's benchConfig); --dry makes them small.
TF = {"dim": 512, "layers": 6, "heads": 8, "filter": 2048}
TF_DRY = {"dim": 32, "layers": 2, "heads": 4, "filter": 128}
VARIANTS = ["eager", "fused-adam", "graph", "cudnn", "cudnn-graph", "cudnn-graph-fp32"]
CUDNN_NOTE = ("cudnn, cudnn-graph: cuDNN's nn.LSTM has no peepholes and does not hold the state at padded steps: "
              "a different model, standing as the speed bar of a recurrent encoder, not as parastream's model")


class Skip(Exception):
    """A variant that cannot run here, with the reason."""


def batches(size, lens, rng, device):
    """train_bench's 8 batches of size pairs (sorted by length, padded to
    multiples of 8), on device."""
    tb.BATCH = size  # make_batches reads it when called
    return [(ids.to(device), mask.to(device)) for ids, mask in tb.make_batches(lens, rng)]


_PENALTIES = {}


def penalty(n, like):
    """-4 at each row's own column and its pair's (i + n mod 2n), made once
    per size on the device: no host value enters the step, which a CUDA
    graph could not capture."""
    key = (n, like.device, like.dtype)
    if key not in _PENALTIES:
        eye = torch.eye(2 * n, device=like.device, dtype=like.dtype)
        _PENALTIES[key] = -4 * (eye + torch.roll(eye, n, 1))
    return _PENALTIES[key]


def margin_loss(g, n):
    """train_bench.step's loss (margin 0.4 on cosines, MAX in-batch
    negatives on both sides) as device operations only, so that it can be
    captured in a CUDA graph."""
    u = torch.nn.functional.normalize(g, dim=1, eps=1e-12)
    c = u @ u.t()
    neg = (c + penalty(n, c)).max(1).values
    pos = (u[:n] * u[n:]).sum(1)
    return torch.relu(tb.DELTA - torch.cat([pos, pos]) + neg).sum() / n


class CuDNNEncoder(torch.nn.Module):
    """lstmavg or gran over cuDNN's nn.LSTM on the padded batch: the
    masked mean of the hidden states, or of x ⊙ σ(x·Wx + h·Wh + b) with
    the gates of all steps as two GEMMs (cuDNN-style). No peepholes."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.emb = torch.nn.Embedding(tb.VOCAB, tb.DIM)
        torch.nn.init.uniform_(self.emb.weight, -0.1, 0.1)
        self.lstm = torch.nn.LSTM(tb.DIM, tb.DIM, batch_first=True)
        if kind == "gran":
            self.gx = torch.nn.Linear(tb.DIM, tb.DIM)
            self.gh = torch.nn.Linear(tb.DIM, tb.DIM, bias=False)

    def forward(self, ids, mask):
        m = mask.unsqueeze(2)
        x = self.emb(ids) * m
        h, _ = self.lstm(x)
        if self.kind == "gran":
            h = x * torch.sigmoid(self.gx(x) + self.gh(h))
        return (h * m).sum(1) / mask.sum(1, keepdim=True)


def timing_signal(T, D):
    """compute.TimingSignal: sin(t·w_i) in the first D/2 units, cos(t·w_i)
    in the second, w_i = 10000^(-2i/D); (T, D)."""
    i = torch.arange(D // 2, dtype=torch.float64)
    w = torch.pow(10000.0, -2 * i / D)
    a = torch.arange(T, dtype=torch.float64).unsqueeze(1) * w
    return torch.cat([torch.sin(a), torch.cos(a)], 1).float()


class TransformerEncoder(torch.nn.Module):
    """parastream's transformer (trainstep/compute/transformer.go) as
    nn.TransformerEncoder: x_t = sqrt(D)·e_t + PE(t), pre-norm blocks
    (norm_first=True) of self-attention and a relu feed-forward layer, no
    dropout, layer norms with eps 1e-6, a final LayerNorm, padded keys
    masked (src_key_padding_mask), the mean over each sentence's words."""

    def __init__(self, dim, layers, heads, filter, vocab=tb.VOCAB):
        super().__init__()
        self.dim = dim
        self.emb = torch.nn.Embedding(vocab, dim)
        torch.nn.init.uniform_(self.emb.weight, -0.1, 0.1)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, dim_feedforward=filter, dropout=0.0, activation="relu",
                                                 layer_norm_eps=1e-6, batch_first=True, norm_first=True)
        kw = {"norm": torch.nn.LayerNorm(dim, eps=1e-6)}
        try:  # no nested tensors: they are an inference path, and a CUDA graph cannot hold their host work
            self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False, **kw)
        except TypeError:  # PyTorch before 1.12 has no such argument (and no nested tensors)
            self.enc = torch.nn.TransformerEncoder(layer, layers, **kw)
        self.register_buffer("pe", timing_signal(64, dim))

    def forward(self, ids, mask):
        x = self.emb(ids) * (self.dim ** 0.5) + self.pe[:ids.shape[1]]
        y = self.enc(x, src_key_padding_mask=mask == 0)
        return (y * mask.unsqueeze(2)).sum(1) / mask.sum(1, keepdim=True)


def check_transformer(path):
    """Loads parastream's transformer parameters, sentences and their
    embeddings (JSON written by trainstep/cuda's TestTransformerMatchesPyTorch)
    into TransformerEncoder in float64 and compares its embeddings: the
    PyTorch bar is the same model. wqkv (D, 3D) is in_proj_weight
    transposed, its q, k and v blocks PyTorch's; wo, w1 and w2 likewise."""
    with open(path, encoding="utf-8") as fh:
        d = json.load(fh)
    D = d["dim"]
    model = TransformerEncoder(D, d["layers"], d["heads"], d["filter"], vocab=d["vocab"]).double()
    model.train()  # the training path (PyTorch's inference fast path is another implementation); no dropout
    p = {k: torch.tensor(v, dtype=torch.float64) for k, v in d["params"].items()}

    def mat(name, rows, cols):
        return p[name].reshape(rows, cols).t().contiguous()
    with torch.no_grad():
        model.emb.weight.copy_(p["embeddings"].reshape(d["vocab"], D))
        for l, layer in enumerate(model.enc.layers):
            f = f"tf.{l}."
            F = d["filter"]
            layer.norm1.weight.copy_(p[f + "ln1.g"])
            layer.norm1.bias.copy_(p[f + "ln1.b"])
            layer.self_attn.in_proj_weight.copy_(mat(f + "wqkv", D, 3 * D))
            layer.self_attn.in_proj_bias.copy_(p[f + "bqkv"])
            layer.self_attn.out_proj.weight.copy_(mat(f + "wo", D, D))
            layer.self_attn.out_proj.bias.copy_(p[f + "bo"])
            layer.norm2.weight.copy_(p[f + "ln2.g"])
            layer.norm2.bias.copy_(p[f + "ln2.b"])
            layer.linear1.weight.copy_(mat(f + "w1", D, F))
            layer.linear1.bias.copy_(p[f + "b1"])
            layer.linear2.weight.copy_(mat(f + "w2", F, D))
            layer.linear2.bias.copy_(p[f + "b2"])
        model.enc.norm.weight.copy_(p["tf.lnf.g"])
        model.enc.norm.bias.copy_(p["tf.lnf.b"])
        seqs = d["seqs"]
        T = max(len(q) for q in seqs)
        ids = torch.zeros(len(seqs), T, dtype=torch.long)
        mask = torch.zeros(len(seqs), T, dtype=torch.float64)
        for r, q in enumerate(seqs):
            ids[r, :len(q)] = torch.tensor(q)
            mask[r, :len(q)] = 1
        got = model(ids, mask)
    want = torch.tensor(d["emb"], dtype=torch.float64)
    diff = (got - want).abs().max().item()
    tol = 1e-5 + 1e-3 * want.abs().max().item()
    verdict = "ok" if diff <= tol else "DIFFERENT"
    print(f"transformer check: {len(seqs)} sentences, max |PyTorch - parastream| {diff:.3g} (tolerance {tol:.3g}): {verdict}")
    if diff > tol:
        sys.exit(1)


def make(kind, variant, device):
    """The model and optimiser of a variant (Skip where it cannot run)."""
    torch.manual_seed(1)
    if variant.startswith("cudnn"):
        if kind in ("avg", "transformer"):
            raise Skip(f"no recurrence in {kind}")
        model = CuDNNEncoder(kind).to(device)
    elif kind == "transformer":
        model = TransformerEncoder(**TF).to(device)
    else:
        model = tb.Encoder(kind).to(device)
    graph = variant.endswith("graph")
    if graph and device.type != "cuda":
        raise Skip("CUDA graphs need a GPU")
    kw = {}
    if variant == "fused-adam":
        kw["fused"] = True
    if graph:
        kw["capturable"] = True
    try:
        opt = torch.optim.Adam(model.parameters(), lr=0.001, **kw)
    except (RuntimeError, TypeError, ValueError) as e:  # fused Adam on the CPU: PyTorch 2.4 and later
        raise Skip(f"torch {torch.__version__} refuses Adam({', '.join(f'{k}=True' for k in kw)}) on {device}: {e}")
    return model, opt


def train_step(model, opt, ids, mask):
    """One step, nothing read back."""
    loss = margin_loss(model(ids, mask), ids.shape[0] // 2)
    opt.zero_grad(set_to_none=False)
    loss.backward()
    opt.step()
    return loss


def graphed(model, opt, bs, device):
    """One CUDA graph per batch shape, sharing a memory pool: each a whole
    step (zeroing the gradients in place, forward, backward, Adam) on
    static inputs. Returns step(ids, mask) that copies the batch in and
    replays its shape's graph."""
    # Warm-up on a side stream (as torch.cuda.graphs asks), every shape
    # once: gradients and Adam's state exist, statically, before capture,
    # and cuBLAS and cuDNN have made their plans.
    s = torch.cuda.Stream(device)
    s.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(s):
        for ids, mask in bs:
            train_step(model, opt, ids, mask)
    torch.cuda.current_stream(device).wait_stream(s)
    graphs, pool = {}, None
    for ids, mask in bs:
        key = tuple(ids.shape)
        if key in graphs:
            continue
        sid, smask = ids.clone(), mask.clone()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            train_step(model, opt, sid, smask)
        pool = g.pool()
        graphs[key] = (g, sid, smask)

    def step(ids, mask):
        g, sid, smask = graphs[tuple(ids.shape)]
        sid.copy_(ids, non_blocking=True)
        smask.copy_(mask, non_blocking=True)
        g.replay()
    return step, len(graphs)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def cudnn_fp32(on):
    """cuDNN without TF32 while on (PyTorch's default lets it use TF32)."""
    if not on:
        yield
        return
    rnn = getattr(torch.backends.cudnn, "rnn", None)  # PyTorch 2.9's finer switch, where it is
    old, old_rnn = torch.backends.cudnn.allow_tf32, getattr(rnn, "fp32_precision", None)
    torch.backends.cudnn.allow_tf32 = False
    if old_rnn is not None:
        rnn.fp32_precision = "ieee"
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = old
        if old_rnn is not None:
            rnn.fp32_precision = old_rnn


def tf32_state():
    """PyTorch's TF32 switches as this process has them."""
    state = (f"TF32: matmul {torch.backends.cuda.matmul.allow_tf32} (torch.backends.cuda.matmul.allow_tf32), "
             f"cuDNN {torch.backends.cudnn.allow_tf32} (torch.backends.cudnn.allow_tf32; cudnn-graph-fp32 sets it False)")
    rnn = getattr(getattr(torch.backends.cudnn, "rnn", None), "fp32_precision", None)  # PyTorch 2.9's finer switch
    return state + (f"; cuDNN RNNs' fp32_precision {rnn}" if rnn is not None else "")


def torch_pairs_per_sec(kind, variant, size, steps, device, lens):
    """pairs/s of variant (raises Skip), and a note."""
    with cudnn_fp32(variant.endswith("-fp32")):
        return measure(kind, variant.removesuffix("-fp32"), size, steps, device, lens)


def measure(kind, variant, size, steps, device, lens):
    """torch_pairs_per_sec of a variant without its -fp32."""
    model, opt = make(kind, variant, device)
    bs = batches(size, lens, random.Random(2), device)
    note = ""
    if variant.endswith("graph"):
        step, n = graphed(model, opt, bs, device)
        note = f"{n} graphs"
    else:
        def step(ids, mask):
            train_step(model, opt, ids, mask)
    for ids, mask in bs:  # warm up: every shape once (cuBLAS, cuDNN plans, the allocator)
        step(ids, mask)
    sync(device)
    t0 = time.perf_counter()
    for i in range(steps):
        ids, mask = bs[i % len(bs)]
        step(ids, mask)
    sync(device)
    secs = time.perf_counter() - t0
    if variant.endswith("graph"):  # the graphs trained the model: check it is finite
        with torch.no_grad():
            ids, mask = bs[0]
            loss = margin_loss(model(ids, mask), ids.shape[0] // 2).item()
        if loss != loss:
            raise RuntimeError(f"{kind} {variant}: loss NaN after the graphed steps")
    return steps * size / secs, note


BENCH_LINE = re.compile(r"BenchmarkGPUTrainStep/(\w+/batch\d+)\S*\s+\d+\s+[\d.]+ ns/op(?:\s+[\d.eE+]+ [^\s]+)*?\s+([\d.eE+]+) pairs/s")


def parse_go(out):
    """{"avg/batch100": pairs/s} from BenchmarkGPUTrainStep's output (the
    median where -count ran a benchmark more than once)."""
    runs = {}
    for m in BENCH_LINE.finditer(out):
        runs.setdefault(m.group(1), []).append(float(m.group(2)))
    return {k: statistics.median(v) for k, v in runs.items()}


def go_pairs_per_sec(a):
    if a.go_pairs:
        return {k: float(v) for k, v in (kv.split("=") for kv in a.go_pairs.split(","))}, "given"
    if a.go_output:
        with open(a.go_output, encoding="utf-8") as fh:
            out = fh.read()
        src = a.go_output
    else:
        env = dict(os.environ, PARASTREAM_BENCH_DEVICE=a.device)
        if a.go_test_binary:
            cmd = [a.go_test_binary, "-test.run", "^$", "-test.bench", "BenchmarkGPUTrainStep", "-test.benchtime", f"{a.steps}x", "-test.timeout", "30m"]
        else:
            cmd = ["go", "test", "-run", "^$", "-bench", "BenchmarkGPUTrainStep", "-benchtime", f"{a.steps}x", "-timeout", "60m", "./trainstep/cuda/"]
        r = subprocess.run(cmd, cwd=None if a.go_test_binary else ROOT, capture_output=True, text=True, env=env)
        out, src = r.stdout + r.stderr, " ".join(cmd)
    got = parse_go(out)
    if not got:
        sys.exit(f"gpu_bench: no BenchmarkGPUTrainStep pairs/s in {src} (no GPU? see its SKIP line):\n{out[-3000:]}")
    dev = re.search(r"bench_test\.go:\d+: (.*)", out)
    return got, (dev.group(1).strip() if dev else src)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100, help="timed steps of each variant (and the Go benchmark's -benchtime Nx)")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--batches", default="100,1000")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--dry", action="store_true", help="a check of the script: 2 steps, batch 8, dimension 32, no Go side unless given")
    ap.add_argument("--go-output", help="BenchmarkGPUTrainStep's output, saved (the bundle's bench.txt)")
    ap.add_argument("--go-test-binary", help="trainstep/cuda's compiled test binary (go test -c) to run the benchmark with")
    ap.add_argument("--go-pairs", help="parastream pairs/s already measured, as avg/batch100=X,...")
    ap.add_argument("--json", help="also write the table here as JSON")
    ap.add_argument("--check-transformer", metavar="FILE",
                    help="compare TransformerEncoder's embeddings with parastream's in FILE (JSON), then exit")
    a = ap.parse_args()
    if a.check_transformer:
        check_transformer(a.check_transformer)
        return
    device = torch.device(a.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit(f"gpu_bench: PyTorch {torch.__version__} sees no GPU (torch.cuda.is_available() is false): "
                 "run it on the GPU machine, or --device cpu --dry to check the script")
    sizes = [int(s) for s in a.batches.split(",")]
    if a.dry:
        a.steps, sizes, tb.DIM = 2, [8], 32
        TF.update(TF_DRY)
    models, variants = a.models.split(","), a.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            sys.exit(f"gpu_bench: unknown variant {v} (have {', '.join(VARIANTS)})")
    go, go_src = {}, "not run (--dry)"
    if not a.dry or a.go_output or a.go_pairs:
        go, go_src = go_pairs_per_sec(a)
    lens = tb.sts_lengths()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"GPU training throughput on {name}: dim {tb.DIM}, vocab {tb.VOCAB}, {len(lens)} STS 2012 sentence lengths"
          f"{'' if len(lens) != 2000 else ' (absent: synthetic 4-24)'}, margin/max, Adam; PyTorch {torch.__version__}, {a.steps} steps each")
    if "transformer" in models:
        print(f"transformer: dim {TF['dim']}, {TF['layers']} blocks of {TF['heads']} heads, filter {TF['filter']} "
              "(nn.TransformerEncoder, norm_first=True, no dropout)")
    print(f"parastream: {go_src}")
    print(tf32_state())
    print(CUDNN_NOTE)
    width = max(12, *(len(v) + 2 for v in variants))
    head = f"{'model':18} {'parastream':>12}" + "".join(f" {v:>{width}}" for v in variants) + f" {'strongest':>12} {'ratio':>6}"
    print(head)
    rows, skipped, failed = [], {}, []
    for size in sizes:
        for kind in models:
            key = f"{kind}/batch{size}"
            got = {}
            for v in variants:
                try:
                    got[v], note = torch_pairs_per_sec(kind, v, size, a.steps, device, lens)
                except Skip as e:
                    skipped.setdefault(str(e), []).append(f"{key} {v}")
                except Exception as e:  # noqa: BLE001  (one variant's failure leaves the others' figures)
                    failed.append(f"{key} {v}: {type(e).__name__}: {e}")
                    print(f"FAILED {key} {v}: {type(e).__name__}: {e}", flush=True)
                gc.collect()
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            best = max(got, key=got.get) if got else None
            ps = go.get(key)
            ratio = ps / got[best] if ps and best else None
            line = f"{key:18} {ps if ps else float('nan'):12.0f}" + "".join(
                f" {got[v]:{width}.0f}" if v in got else f" {'-':>{width}}" for v in variants)
            line += f" {best or '-':>12} {ratio if ratio else float('nan'):6.2f}"
            if ratio is not None and kind not in TARGETED:
                line += "  (no target)"
            elif ratio is not None:
                line += "  ok (>= 1.0)" if ratio >= 1.0 else "  BELOW 1.0"
            elif not a.dry:
                line += "  NO RATIO"
                failed.append(f"{key}: no ratio ({'no parastream figure in ' + go_src if not ps else 'no PyTorch variant ran'})")
            print(line, flush=True)
            rows.append({"row": key, "parastream": ps, "torch": got, "strongest": best, "ratio": ratio})
    for why, what in skipped.items():
        print(f"skipped ({why}): {', '.join(what)}")
    print("ratio: parastream / the strongest PyTorch variant of the row (issue 15's target: at least 1.0; none for the transformer)")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"device": name, "torch": torch.__version__, "steps": a.steps, "parastream_source": go_src, "rows": rows,
                       "failed": failed}, fh, indent=1)
    if failed:
        sys.exit("gpu_bench: variants failed, so the strongest may be missing from their rows:\n  " + "\n  ".join(failed))
    if a.dry and not any(r["torch"] for r in rows):
        sys.exit("gpu_bench: --dry ran no variant")


if __name__ == "__main__":
    main()
