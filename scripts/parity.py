#!/usr/bin/python3
"""The PyTorch reference trainer of the parity harness (issue 13, item 1).

It trains the models of parastream's trainer (trainstep: avg, lstmavg with
the peephole LSTM of Gers et al. 2003, gran) on the same featurized rows,
with the same loss (margin, MAX negatives), initialisation and optimiser
(dense Adam), and writes its model in parastream's checkpoint format, so
that `parastream eval run` scores both with one code path.

Rows come from `parastream consume --n 0 --shuffle-buffer 1 > rows.jsonl`
(one JSON object a line with "id", "ids_a", "ids_b"); the configuration
from a parastream checkpoint's config.json; the initial parameters, with
--init, from a parastream checkpoint's model.safetensors (the step-0
checkpoint of `parastream train --save-initial`).

Two modes:
  (a) --trace FILE (parastream train --trace-ids): replays parastream's
      batches: batch i holds the rows of the trace's lines of step i, in
      their order (rows 0..n-1 the A sides, n..2n-1 the B sides).
  (b) without --trace: each of --epochs epochs is a full random shuffle of
      the rows (numpy's PCG64 seeded by --seed, one permutation an epoch)
      cut into batches of batch_size; a last batch of one row is merged into
      the batch before it (parastream's rule), a shorter last batch of two
      or more rows is trained as it is. Pairs with an empty side are left
      out and counted, as parastream does. --rows-of TRACE keeps only the
      rows parastream's run trained (its label-aware selection: Quora's
      is_duplicate 1 pairs by default), so that both train the same data.

The arithmetic follows trainstep/cpu (encoders.go, losses.go, model.go),
trainstep/compute (layout.go, batch.go, optim.go) in float32, step for
step, including gorgonia's Max: a MAX negative tied between several
columns (a sentence twice in the batch) sends its whole gradient to each
(see Reference.margin; --tie-grad one for torch.max's choice of one).
The mnrl loss (in-batch softmax over scaled cosines, --scale, --symmetric,
--matryoshka; not its hard negatives) is there too (Reference.mnrl).
Only these, the margin loss with MAX negatives or mnrl, Adam and no
regularisation are reproduced; other configurations are refused.

--check-against DIR prints the largest difference of every parameter and
of Adam's moments from a parastream checkpoint; --check-steps DIR checks
each step alone from parastream's own checkpoint of the step before (train
with --checkpoint-every 1). See docs/trainstep.md, "Reference parity".

Only /usr/bin/python3 with Debian's python3-torch and numpy are needed: the
safetensors files are read and written with numpy.
"""

import argparse
import json
import math
import os
import resource
import shutil
import struct
import sys
import tempfile
import time

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - the make target checks first
    sys.exit("parity.py: PyTorch is missing: apt-get install python3-torch (Debian), then run it with /usr/bin/python3")

ENCODERS = ("avg", "lstmavg", "gran")


def die(msg):
    sys.exit("parity.py: " + msg)


# ---------------------------------------------------------------------------
# safetensors, with numpy (trainstep/safetensors.go's layout)

def read_safetensors(path):
    """Returns ({name: float32 array}, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        die(f"{path}: not a safetensors file (shorter than its header length)")
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    body = memoryview(data)[8 + n:]
    dtypes = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
    out = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        if e["dtype"] == "BF16":
            raw = np.frombuffer(body[lo:hi], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        elif e["dtype"] in dtypes:
            arr = np.frombuffer(body[lo:hi], dtype=np.dtype(dtypes[e["dtype"]]).newbyteorder("<"))
        else:
            die(f"{path}: tensor {name}: dtype {e['dtype']} not read here")
        out[name] = arr.astype(np.float32).reshape(e["shape"])
    # parastream packs an optimiser tensor of mostly zero rows: its non-zero
    # rows under its name, their row numbers in NAME@rows, and its row count
    # in the metadata under rows:NAME (trainstep/sparsestate.go).
    for key, rows in meta.items():
        if not key.startswith("rows:") or key[5:] not in out:
            continue
        name = key[5:]
        vals, idx = out[name], out.pop(name + "@rows").astype(np.int64)
        full = np.zeros((int(rows), vals.shape[1]), dtype=np.float32)
        full[idx] = vals
        out[name] = full
    return out, meta


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: array} as F32, tensors in name order, the header padded
    with spaces to a multiple of 8 bytes (as trainstep.WriteSafetensors)."""
    header = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    off = 0
    blobs = []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
        blobs.append(a)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if len(hj) % 8:
        hj += b" " * (8 - len(hj) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for a in blobs:
            f.write(a.tobytes())
        f.flush()
        os.fsync(f.fileno())


# ---------------------------------------------------------------------------
# configuration and parameters (trainstep/compute/config.go, layout.go)

def load_config(path):
    with open(path) as f:
        cfg = json.load(f)
    problems = []
    if cfg.get("encoder") not in ENCODERS:
        problems.append(f"encoder {cfg.get('encoder')!r}: the reference has {', '.join(ENCODERS)}")
    if cfg.get("loss") not in ("margin", "mnrl"):
        problems.append(f"loss {cfg.get('loss')!r}: the reference trains the margin and mnrl losses only")
    if cfg.get("negatives", "max") != "max":
        problems.append(f"negatives {cfg.get('negatives')!r}: the reference takes MAX negatives only "
                        "(rand and mix draw from parastream's PCG stream)")
    if cfg.get("optimizer") != "adam":
        problems.append(f"optimizer {cfg.get('optimizer')!r}: the reference has adam only")
    if cfg.get("embedding_update", "dense") not in ("dense", "sparse"):
        problems.append(f"embedding_update {cfg.get('embedding_update')!r}: the reference has sparse and dense")
    if cfg.get("context"):
        problems.append(f"context {cfg.get('context')!r}: the reference has no topic context")
    for k in ("dropout", "word_dropout", "scramble", "lambda_c", "lambda_w"):
        if cfg.get(k, 0):
            problems.append(f"{k} {cfg[k]}: the reference has no regularisation; train with {k} 0")
    for k in ("dim", "hidden", "vocab", "batch_size", "max_len", "margin" if cfg.get("loss") == "margin" else "scale", "lr", "beta1", "beta2", "eps"):
        if not cfg.get(k):
            problems.append(f"{k} missing or 0: give a config.json written by parastream (defaults filled)")
    if problems:
        die(f"config {path}: " + "; ".join(problems))
    # compute.Config.Defaults: the recurrent encoders start as the average.
    if cfg["encoder"] != "avg":
        cfg.setdefault("recurrent_init", "avg")
        if cfg["recurrent_init"] not in ("avg", "glorot"):
            die(f"config {path}: recurrent_init {cfg['recurrent_init']!r}: use avg or glorot")
    cfg.setdefault("decay", 1)
    if not cfg["decay"]:
        cfg["decay"] = 1
    return cfg


def layout(cfg):
    """[(name, shape, init)] in parastream's Layout order."""
    d, h, v = cfg["dim"], cfg["hidden"], cfg["vocab"]
    ps = [("embeddings", (v, d), "emb")]
    if cfg["encoder"] in ("lstmavg", "gran"):
        ps += [("lstm.wx", (d, 4 * h), "glorot"), ("lstm.wh", (h, 4 * h), "glorot"), ("lstm.b", (4 * h,), "zero"),
               ("lstm.pi", (h,), "zero"), ("lstm.pf", (h,), "zero"), ("lstm.po", (h,), "zero")]
    if cfg["encoder"] == "gran":
        ps += [("gran.wx", (d, d), "glorot"), ("gran.wh", (h, d), "glorot"), ("gran.b", (d,), "zero")]
    return ps


def draw_params(cfg, seed):
    """Parameters drawn from parastream's distributions (uniform ±0.1
    embeddings, Glorot uniform matrices, zero biases and peepholes, forget
    bias 1; recurrent_init avg as start_as_average) with numpy's generator: the same distribution as
    compute.InitParams, not the same numbers (those come from Go's PCG)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape, init in layout(cfg):
        if init == "emb":
            a = (0.2 * rng.random(shape) - 0.1).astype(np.float32)
        elif init == "glorot":
            lim = math.sqrt(6 / (shape[0] + shape[1]))
            a = (lim * (2 * rng.random(shape) - 1)).astype(np.float32)
        else:
            a = np.zeros(shape, np.float32)
        if name.endswith("lstm.b"):
            h = shape[0] // 4
            a[h:2 * h] = 1
        if cfg.get("recurrent_init") == "avg":
            start_as_average(name, a)
        out[name] = a
    return out


def start_as_average(name, a):
    """compute.startAsAverage for lstmavg and gran: recurrent_init avg's
    start, h_t ≈ 0.9·x_t and the GRAN gate open."""
    if name.endswith("lstm.wx"):
        h = a.shape[1] // 4
        a[:, 2 * h:3 * h] = 0
        n = min(a.shape[0], h)
        a[np.arange(n), 2 * h + np.arange(n)] = 1
    elif name.endswith("lstm.wh"):
        a[:] = 0
    elif name.endswith("lstm.b"):
        h = a.shape[0] // 4
        a[:h], a[h:2 * h], a[3 * h:] = 3, -3, 3
    elif name.endswith("gran.b"):
        a[:] = 3


def check_params(cfg, params, where):
    want = {n: s for n, s, _ in layout(cfg)}
    if set(params) != set(want):
        die(f"{where}: parameters {sorted(params)}, the {cfg['encoder']} model has {sorted(want)}")
    for n, s in want.items():
        if tuple(params[n].shape) != tuple(s):
            die(f"{where}: parameter {n} has shape {list(params[n].shape)}, want {list(s)}")


# ---------------------------------------------------------------------------
# the model (trainstep/cpu/encoders.go, losses.go)

class Reference:
    def __init__(self, cfg, params, tie_grad="all", tie_ulps=0):
        self.cfg = cfg
        self.tie_grad = tie_grad
        self.tie_ulps = tie_ulps
        self.p = {n: torch.tensor(a, dtype=torch.float32).requires_grad_(True) for n, a in params.items()}
        self.names = [n for n, _, _ in layout(cfg)]
        f32 = np.float32
        self.b1, self.b2 = f32(cfg["beta1"]), f32(cfg["beta2"])
        self.omb1, self.omb2 = f32(1) - self.b1, f32(1) - self.b2
        self.eps = f32(cfg["eps"])
        self.m = {n: torch.zeros_like(t) for n, t in self.p.items()}
        self.v = {n: torch.zeros_like(t) for n, t in self.p.items()}
        # compute.CatchUp of the sparse update: each embedding row's last
        # update step, and the learning rates from their first steps.
        self.last = np.zeros(self.p["embeddings"].shape[0], dtype=np.float32)
        self.lrs = []  # [(first step, lr)]
        self.torch_adam = None
        self.buf = {}
        self.ties = 0  # rows whose max negative was tied (several columns share the max)
        self.near_ties = 0  # rows with a column within 4 ulps of the max, not tied

    def use_torch_adam(self):
        c = self.cfg
        self.torch_adam = torch.optim.Adam([self.p[n] for n in self.names], lr=c["lr"],
                                           betas=(c["beta1"], c["beta2"]), eps=c["eps"])

    def inputs(self, seqs):
        """Token ids (R, T) zero-padded to the longest, the (T, R, 1) mask
        and the (R, 1) 1/len, as model.feed binds them."""
        T = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), T), np.int64)
        mask = np.zeros((T, len(seqs), 1), np.float32)
        inv = np.zeros((len(seqs), 1), np.float32)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = s
            mask[:len(s), r] = 1
            inv[r] = np.float32(1 / len(s))  # float64 1/len rounded to float32, as T(f)
        return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(inv)

    def encode(self, seqs):
        ids, mask, inv = self.inputs(seqs)
        p = self.p
        # x: (T, R, dim), padded steps zero (model.feed copies rows of the
        # embeddings into a zeroed tensor).
        x = torch.nn.functional.embedding(ids.t(), p["embeddings"]) * mask
        if self.cfg["encoder"] == "avg":
            # gorgonia sums axis 0 in order (reduceFirstF32): x_0 + x_1 + …;
            # the same order gives parastream's g(s) bit for bit.
            xs = x.unbind(0)  # one backward for all steps (x[t] would zero-fill x per step)
            s = xs[0]
            for t in range(1, len(xs)):
                s = s + xs[t]
            return s * inv
        hs = self.lstm(x, mask)
        if self.cfg["encoder"] == "lstmavg":
            return self.average(hs, mask, inv)
        # gran: a_t = x_t ⊙ σ(x_t·Wx + h_t·Wh + b), averaged.
        T, R, d = x.shape
        xg = (x.reshape(T * R, d) @ p["gran.wx"] + p["gran.b"]).reshape(T, R, -1)
        xs, xgs = x.unbind(0), xg.unbind(0)
        a = [xs[t] * torch.sigmoid(xgs[t] + hs[t] @ p["gran.wh"]) for t in range(T)]
        return self.average(a, mask, inv)

    def lstm(self, x, mask):
        """The peephole LSTM of encoderGraph.lstm: h_t for every t, the state
        carried unchanged through padded steps (prev + m⊙(next−prev))."""
        p = self.p
        H = self.cfg["hidden"]
        T, R, d = x.shape
        xw = (x.reshape(T * R, d) @ p["lstm.wx"] + p["lstm.b"]).reshape(T, R, 4 * H).unbind(0)
        h = x.new_zeros(R, H)
        c = x.new_zeros(R, H)
        hs = []
        for t in range(T):
            z = xw[t] + h @ p["lstm.wh"]
            i = torch.sigmoid(z[:, :H] + c * p["lstm.pi"])
            f = torch.sigmoid(z[:, H:2 * H] + c * p["lstm.pf"])
            g = torch.tanh(z[:, 2 * H:3 * H])
            cn = f * c + i * g
            o = torch.sigmoid(z[:, 3 * H:] + cn * p["lstm.po"])
            hn = o * torch.tanh(cn)
            m = mask[t]
            c = c + m * (cn - c)
            h = h + m * (hn - h)
            hs.append(h)
        return hs

    @staticmethod
    def average(vs, mask, inv):
        s = None
        for t, v in enumerate(vs):
            v = mask[t] * v
            s = v if s is None else s + v
        return s * inv

    def embed_rows(self, seqs):
        """g(s) of every row, and for each row the group of rows whose g(s)
        is equal to it bit for bit. Identical sentences are encoded once, so
        that their rows are equal, as gonum's row-by-row kernels make them
        in parastream (a batched matmul may round equal rows apart)."""
        uniq, keys = {}, []
        for s in seqs:
            keys.append(uniq.setdefault(tuple(s), len(uniq)))
        emb = self.encode([list(k) for k in uniq])
        raw = np.ascontiguousarray(emb.detach().numpy())
        _, same = np.unique(raw.view(np.dtype((np.void, raw.dtype.itemsize * raw.shape[1]))).ravel(), return_inverse=True)
        keys = torch.tensor(keys)
        return torch.nn.functional.embedding(keys, emb), torch.from_numpy(same.ravel())[keys]

    def margin(self, emb, n, groups):
        """Eq. 2-5 of Wieting & Gimpel (2017) as encoderGraph.margin: rows
        0..n-1 the A sides, n..2n-1 the B sides; MAX negatives with −4 on
        each row's own pair; loss (1/n) Σ over the 2n rows of
        relu(δ − pos + neg).

        Ties: a sentence that appears twice in the batch outside row r's
        pair (or, under avg, a permutation of it) gives two equal columns of
        C. gorgonia's Max sends the whole gradient to every column equal to
        the max (op_reduction.go, maxOp.SymDiff), and in parastream such
        columns are equal bit for bit (gonum computes each C[r, j] the same
        way); here the matmul may round them apart by an ulp, so the tied
        columns are those outside the pair whose g(s) equals the max
        column's bit for bit (groups). --tie-grad one sends the gradient to
        the max's column only, as torch.max does."""
        nrm = torch.sqrt((emb * emb).sum(1) + np.float32(1e-12))
        u = emb / nrm[:, None]
        C = u @ u.t()
        pos = (u[:n] * u[n:]).sum(1)
        pos2 = torch.cat([pos, pos])
        pen = torch.zeros(2 * n, 2 * n)
        r = torch.arange(2 * n)
        pen[r, r % n] = -4
        pen[r, r % n + n] = -4
        X = C + pen
        mx, arg = X.max(1)
        tied = (groups[None, :] == groups[arg][:, None]) & (pen == 0)
        # Rows with another column within 4 ulps of the max but a different
        # g(s): whether parastream ties them depends on gonum's rounding.
        ulp4 = torch.from_numpy(np.spacing(np.abs(mx.detach().numpy())) * np.float32(4))
        near = (X.detach() >= (mx.detach() - ulp4)[:, None]) & (pen == 0) & ~tied
        self.near_ties += int(near.any(1).sum())
        if self.tie_ulps > 0:
            # Near-equal columns (a permutation under avg, or rows that
            # differ in the last bits) that gonum's rounding makes equal.
            tol = torch.from_numpy(np.spacing(np.abs(mx.detach().numpy())) * np.float32(self.tie_ulps))
            tied |= (X.detach() >= (mx.detach() - tol)[:, None]) & (pen == 0)
        self.ties += int((tied.sum(1) > 1).sum())
        if self.tie_grad == "all":
            neg = mx.detach() + ((X - X.detach()) * tied.to(X.dtype)).sum(1)
        else:
            neg = mx
        h = torch.relu(np.float32(self.cfg["margin"]) - pos2 + neg)
        return h.sum() / np.float32(n)

    def mnrl(self, emb, n):
        """The mnrl loss as encoderGraph.mnrl (trainstep/cpu/mnrl.go): rows
        0..n-1 the A sides, n..2n-1 the B sides; for each Matryoshka prefix
        d (the whole embedding without --matryoshka) the mean over the rows
        of the cross-entropy of softmax_j(scale·cos(a_i, b_j)) with target
        i, averaged with the one from b to a under --symmetric, summed over
        the prefixes. (Hard negatives are not replayed here.)"""
        scale = np.float32(self.cfg["scale"])
        dims = self.cfg.get("matryoshka") or [emb.shape[1]]
        target = torch.arange(n)
        total = 0
        for d in dims:
            x = emb[:, :d]
            u = x / torch.sqrt((x * x).sum(1) + np.float32(1e-12))[:, None]
            a, b = u[:n], u[n:]
            term = torch.nn.functional.cross_entropy(scale * (a @ b.t()), target)
            if self.cfg.get("symmetric"):
                term = (term + torch.nn.functional.cross_entropy(scale * (b @ a.t()), target)) * np.float32(0.5)
            total = total + term
        return total

    def step(self, pairs, step, lr):
        """One optimiser step on pairs [(ids_a, ids_b)]; returns the loss."""
        n = len(pairs)
        L = self.cfg["max_len"]
        seqs = [a[:L] for a, _ in pairs] + [b[:L] for _, b in pairs]
        for name in self.names:
            self.p[name].grad = None
        if self.cfg.get("embedding_update", "dense") == "sparse" and self.torch_adam is None:
            # compute.CatchUp.Prepare: the batch's rows owed steps take them
            # before the forward pass reads them.
            rows = np.array(sorted({int(i) for s in seqs for i in s}), dtype=np.int64)
            seen = step - 1
            owed = rows[(self.last[rows] > 0) & (self.last[rows] < seen)] if seen > 0 else rows[:0]
            self.apply_catch_up(owed, *self.catch_up(owed, step, None, through=seen, mark=seen))
        emb, groups = self.embed_rows(seqs)
        loss = self.mnrl(emb, n) if self.cfg["loss"] == "mnrl" else self.margin(emb, n, groups)
        loss.backward()
        # The batch's distinct embedding rows: a sparse update steps only
        # those (compute.Config.EmbeddingUpdate, the default).
        self.rows = torch.tensor(sorted({int(i) for s in seqs for i in s}), dtype=torch.long)
        # compute.HeldCellBias: the LSTM's cell-input bias is held at its
        # initial value unless train_cell_bias.
        if not self.cfg.get("train_cell_bias") and "lstm.b" in self.p and self.p["lstm.b"].grad is not None:
            H = self.p["lstm.b"].shape[0] // 4
            self.p["lstm.b"].grad[2 * H:3 * H] = 0
        if not math.isfinite(loss.item()):
            die(f"step {step}: loss {loss.item()}: not finite")
        with torch.no_grad():
            if self.torch_adam is not None:
                for g in self.torch_adam.param_groups:
                    g["lr"] = lr
                self.torch_adam.step()
            else:
                self.adam(step, lr)
        return loss.item()

    def adam(self, step, lr):
        """compute.Optimizer's Adam, operation for operation in float32:
        m = β1·m + (1−β1)·g; v = β2·v + ((1−β2)·g)·g;
        w −= (lr·(m·c1)) / (sqrt(v·c2) + ε), c1 = 1/(1−β1^t), c2 = 1/(1−β2^t)
        rounded to float32 from float64, dense over every parameter. Two
        buffers a parameter, reused: a fresh temporary of the embeddings'
        size each operation costs more than the arithmetic."""
        c1 = float(np.float32(1 / (1 - math.pow(float(self.cfg["beta1"]), step))))
        c2 = float(np.float32(1 / (1 - math.pow(float(self.cfg["beta2"]), step))))
        a = float(np.float32(lr))
        b1, b2, omb1, omb2, eps = (float(x) for x in (self.b1, self.b2, self.omb1, self.omb2, self.eps))
        sparse = self.cfg.get("embedding_update", "dense") == "sparse"
        for name in self.names:
            w, g, m, v = self.p[name], self.p[name].grad, self.m[name], self.v[name]
            if g is None:
                g = torch.zeros_like(w)
            if name == "embeddings" and sparse:
                # compute.Optimizer.StepRows: only the batch's rows and their
                # moments move, each first caught up with the steps it sat
                # out (compute.CatchUp): w −= s·m/√v, m ·= d1, v ·= d2.
                r = self.rows
                wr, gr, mr, vr = w.index_select(0, r), g.index_select(0, r), m.index_select(0, r), v.index_select(0, r)
                d1, d2, sz = self.catch_up(r.numpy(), step, lr)
                sz, d1, d2 = (torch.from_numpy(x).unsqueeze(1) for x in (sz, d1, d2))
                move = (sz * mr) / vr.sqrt()
                wr.sub_(torch.where((sz != 0) & (vr > 0), move, torch.zeros_like(move)))
                mr.mul_(d1)
                vr.mul_(d2)
                mr.mul_(b1).add_(gr * omb1)
                vr.mul_(b2).add_((gr * omb2) * gr)
                wr.sub_(((mr * c1) * a) / ((vr * c2).sqrt_().add_(eps)))
                w.index_copy_(0, r, wr)
                m.index_copy_(0, r, mr)
                v.index_copy_(0, r, vr)
                continue
            if name not in self.buf:
                self.buf[name] = (torch.empty_like(w), torch.empty_like(w))
            t1, t2 = self.buf[name]
            torch.mul(g, omb1, out=t1)
            m.mul_(b1).add_(t1)
            torch.mul(g, omb2, out=t1)
            t1.mul_(g)
            v.mul_(b2).add_(t1)
            torch.mul(v, c2, out=t2)
            t2.sqrt_().add_(eps)
            torch.mul(m, c1, out=t1)
            t1.mul_(a).div_(t2)  # (m·c1)·lr = lr·(m·c1): one product, exactly
            w.sub_(t1)

    def catch_up(self, rows, step, lr, through=None, mark=None):
        """compute.CatchUp.Factors for Adam: per row, d1 = β1^k, d2 = β2^k
        (k the steps it sat out) and s = Σ_j lr_u·√(1−β2^u)/(1−β1^u)·(β1/√β2)^j
        over u = t0 + j, cut after N terms; float64, then float32. With
        through and mark (CatchUp.Flush): the steps through `through`,
        the rows marked updated at `mark`, no rate recorded."""
        b1, b2 = float(self.cfg["beta1"]), float(self.cfg["beta2"])
        if lr is not None:
            lr32 = float(np.float32(lr))  # kept as float32, as the checkpoint keeps it
            if not self.lrs or self.lrs[-1][1] != lr32:
                self.lrs.append((step, lr32))
        through = step - 1 if through is None else through
        mark = step if mark is None else mark
        t0 = self.last[rows].astype(np.int64)
        skipped = np.maximum(through - t0, 0)
        self.last[rows] = mark
        r = b1 / math.sqrt(b2)
        n = 4096 if not 0 < r < 1 else max(1, min(4096, math.ceil(math.log(1e-7) / math.log(r))))
        froms = np.array([f for f, _ in self.lrs], dtype=np.int64)
        rates = np.array([x for _, x in self.lrs], dtype=np.float64)
        total = np.zeros(len(rows))
        rj = 1.0
        for j in range(1, min(int(skipped.max(initial=0)), n) + 1):
            rj *= r
            u = (t0 + j).astype(np.float64)
            lr_u = rates[np.maximum(np.searchsorted(froms, t0 + j, side="right") - 1, 0)]
            h = lr_u * np.sqrt(1 - np.power(b2, u)) / (1 - np.power(b1, u))
            total = np.where(j <= skipped, total + h * rj, total)
        d1 = np.power(b1, skipped.astype(np.float64)).astype(np.float32)
        d2 = np.power(b2, skipped.astype(np.float64)).astype(np.float32)
        return d1, d2, total.astype(np.float32)

    def flush(self, step):
        """compute.CatchUp.Flush: every embedding row updated before step
        catches up through step (the sparse update only)."""
        if self.cfg.get("embedding_update", "dense") != "sparse" or self.torch_adam is not None:
            return
        rows = np.nonzero((self.last > 0) & (self.last < step))[0]
        self.apply_catch_up(rows, *self.catch_up(rows, step + 1, None, through=step, mark=step))

    def apply_catch_up(self, rows, d1, d2, sz):
        """compute.CatchUpRow on the listed embedding rows: w −= s·m/√v of
        the row's last update, then m ·= d1, v ·= d2."""
        if len(rows) == 0:
            return
        r = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        with torch.no_grad():
            w, m, v = self.p["embeddings"], self.m["embeddings"], self.v["embeddings"]
            wr, mr, vr = w.index_select(0, r), m.index_select(0, r), v.index_select(0, r)
            sz, d1, d2 = (torch.from_numpy(x).unsqueeze(1) for x in (sz, d1, d2))
            move = (sz * mr) / vr.sqrt()
            wr.sub_(torch.where((sz != 0) & (vr > 0), move, torch.zeros_like(move)))
            w.index_copy_(0, r, wr)
            m.index_copy_(0, r, mr.mul_(d1))
            v.index_copy_(0, r, vr.mul_(d2))

    def set_params(self, params):
        with torch.no_grad():
            for n in self.names:
                self.p[n].copy_(torch.from_numpy(params[n].copy()))

    def set_moments(self, st, where):
        for n in self.names:
            for slot, dst in (("adam.m/", self.m), ("adam.v/", self.v)):
                if slot + n not in st:
                    die(f"{where}: optimizer.safetensors has no {slot}{n}: cannot continue Adam from it")
                dst[n].copy_(torch.from_numpy(st[slot + n].copy()))
        if "lazy.last/embeddings" in st:
            self.last = st["lazy.last/embeddings"].astype(np.float32).copy()
            lr = st.get("lazy.lr/embeddings", np.zeros(0, dtype=np.float32))
            self.lrs = [(int(lr[i]), float(lr[i + 1])) for i in range(0, len(lr), 2)]

    def params(self):
        return {n: t.detach().numpy().copy() for n, t in self.p.items()}

    def state(self):
        if self.torch_adam is not None:
            st = self.torch_adam.state
            m = {n: st[self.p[n]]["exp_avg"] for n in self.names if self.p[n] in st}
            v = {n: st[self.p[n]]["exp_avg_sq"] for n in self.names if self.p[n] in st}
        else:
            m, v = self.m, self.v
        out = {}
        for n in self.names:
            if n in m:
                out["adam.m/" + n] = m[n].numpy().copy()
                out["adam.v/" + n] = v[n].numpy().copy()
        return out


# ---------------------------------------------------------------------------
# data

def refuse_hard_negatives(ck):
    """Dies when the checkpoint's run (its run.json) trained with
    --hard-negatives: the trace names the pairs, not the negatives the
    trainer drew for them, so the reference cannot train the same batches."""
    try:
        with open(os.path.join(ck, "run.json")) as f:
            flags = json.load(f).get("flags", {})
    except (OSError, ValueError):
        return  # no run.json (a checkpoint written by the reference): nothing to check
    if flags.get("hard-negatives") == "true":
        die(f"{ck}: the run trained with --hard-negatives, which the reference does not replay; "
            "compare a run without it")


def read_rows(path):
    """{id: (ids_a, ids_b)} and the ids in file order."""
    rows, order = {}, []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                die(f"{path}:{ln}: {e}")
            pair = (r.get("ids_a") or [], r.get("ids_b") or [])
            rid = r["id"]
            if rid in rows:
                if rows[rid] != pair:
                    die(f"{path}:{ln}: row {rid} twice with different ids")
                continue
            rows[rid] = pair
            order.append(rid)
    if not rows:
        die(f"{path}: no rows")
    if not any(a for a, _ in rows.values()):
        die(f"{path}: no row has token ids (ids_a): consume a featurized dataset "
            "(parastream featurize, publish its output) with a parastream that prints ids")
    return rows, order


def read_trace(path):
    """[(step, epoch, [ids])] from `parastream train --trace-ids`, steps
    1, 2, … in order."""
    steps = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                die(f"{path}:{ln}: want <step>\\t<epoch>\\t<row id>, got {line!r}")
            s, e, rid = int(parts[0]), int(parts[1]), parts[2]
            if steps and steps[-1][0] == s:
                steps[-1][2].append(rid)
                continue
            want = steps[-1][0] + 1 if steps else 1
            if s != want:
                die(f"{path}:{ln}: step {s} where step {want} was expected: the trace must come from one fresh run "
                    "(a resumed run repeats its lost steps; delete the trace before training)")
            steps.append((s, e, [rid]))
    if not steps:
        die(f"{path}: empty trace")
    return steps


def batches_own_order(rows, order, cfg, epochs, seed):
    """Mode (b): [(epoch, [(a, b)])] in training order."""
    kept = [rows[i] for i in order if rows[i][0] and rows[i][1]]
    skipped = len(order) - len(kept)
    size = cfg["batch_size"]
    rng = np.random.default_rng(seed)
    out = []
    for e in range(1, epochs + 1):
        perm = rng.permutation(len(kept))
        bs = [[kept[j] for j in perm[lo:lo + size]] for lo in range(0, len(kept), size)]
        if len(bs) > 1 and len(bs[-1]) == 1:
            bs[-2].extend(bs.pop())
        out += [(e, b) for b in bs]
    return out, skipped


# ---------------------------------------------------------------------------
# checkpoints

def write_checkpoint(out, cfg_path, vocab_path, ref, step, epoch, mode):
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(out) + ".", suffix=".tmp", dir=parent)
    os.chmod(tmp, 0o755)
    cfg = ref.cfg
    meta = {"format": "pt", "producer": "parastream scripts/parity.py (pytorch-reference, mode " + mode + ")",
            "encoder": cfg["encoder"], "loss": cfg["loss"], "step": step}
    ref.flush(step)  # as parastream's trainer before a checkpoint (compute.Flusher)
    write_safetensors(os.path.join(tmp, "model.safetensors"), ref.params(), meta)
    write_safetensors(os.path.join(tmp, "optimizer.safetensors"), ref.state(), {"optimizer": cfg["optimizer"]})
    shutil.copyfile(cfg_path, os.path.join(tmp, "config.json"))
    if vocab_path and os.path.exists(vocab_path):
        shutil.copyfile(vocab_path, os.path.join(tmp, "vocab.txt"))
    with open(os.path.join(tmp, "trainer.json"), "w") as f:
        json.dump({"version": 1, "step": step, "epoch": epoch, "backend": "pytorch-reference"}, f)
        f.write("\n")
    if os.path.exists(out):
        old = tmp + ".old"
        os.rename(out, old)
        shutil.rmtree(old)
    os.rename(tmp, out)


def compare(title, ours, theirs, init, where, masks=None):
    """Prints, per tensor of ours, the largest |reference − parastream|, the
    largest |parastream value|, how far training moved it (max |p − p0|, when
    init is given), the two ratios and, with masks, the largest difference
    over the entries a mask keeps; returns the largest relative difference
    (difference / largest value)."""
    print(title)
    extra = f" {'max|ref-ps| √v̂>100ε':>21}" if masks else ""
    print(f"  {'tensor':<22} {'shape':<13} {'max|ref-ps|':>11} {'max|ps|':>10} {'max|ps-p0|':>10} {'rel':>9} {'of move':>9}{extra}")
    worst = 0.0
    stats = {"max_abs": 0.0, "masked_max_abs": 0.0, "masked_rel": 0.0}
    for name in sorted(ours):
        if name not in theirs:
            die(f"{where}: no tensor {name}")
        a, b = ours[name], theirs[name]
        if a.shape != b.shape:
            die(f"{where}: {name} has shape {list(b.shape)}, the reference {list(a.shape)}")
        d = np.abs(a - b)
        diff = float(d.max()) if a.size else 0.0
        scale = float(np.abs(b).max()) if b.size else 0.0
        moved = float(np.abs(b - init[name]).max()) if init is not None else float("nan")
        rel = diff / scale if scale else diff
        worst = max(worst, rel)
        stats["max_abs"] = max(stats["max_abs"], diff)
        of_move = diff / moved if moved else float("nan")
        line = f"  {name:<22} {str(list(a.shape)):<13} {diff:11.3e} {scale:10.3e} {moved:10.3e} {rel:9.2e} {of_move:9.2e}"
        if masks:
            m = masks.get(name)
            kept = float(d[m].max()) if m is not None and m.any() else float("nan")
            share = float(m.mean()) if m is not None else float("nan")
            if kept == kept:
                stats["masked_max_abs"] = max(stats["masked_max_abs"], kept)
                stats["masked_rel"] = max(stats["masked_rel"], kept / scale if scale else kept)
            line += f" {kept:11.3e} ({share:6.1%})"
        print(line)
    compare.stats = stats
    return worst


def check_against(ref, init_params, other_dir, tol):
    """Compares the parameters with a parastream checkpoint's and, where it
    has them, Adam's moments (after step 1, adam.m is 0.1·gradient: it
    compares the gradients themselves). Adam divides by √v̂ + ε: where √v̂ is
    not far above ε (gradients of 1e-8 and less), a rounding difference of
    the gradient changes the step a lot, so the largest difference is also
    given over the entries with √v̂ > 100ε (and their share). Returns the
    largest relative difference of the parameters."""
    other, meta = read_safetensors(os.path.join(other_dir, "model.safetensors"))
    opt_path = os.path.join(other_dir, "optimizer.safetensors")
    theirs_opt = read_safetensors(opt_path)[0] if os.path.exists(opt_path) else {}
    masks = None
    try:
        with open(os.path.join(other_dir, "trainer.json")) as f:
            t = json.load(f)["step"]
    except (OSError, KeyError, ValueError):
        t = 0
    cfg = ref.cfg
    if t > 0 and all("adam.v/" + n in theirs_opt for n in ref.names):
        c2 = 1 / (1 - cfg["beta2"] ** t)
        masks = {n: np.sqrt(theirs_opt["adam.v/" + n].astype(np.float64) * c2) > 100 * cfg["eps"] for n in ref.names}
    worst = compare(f"check against {other_dir} (step {meta.get('step', '?')}): parameters",
                    ref.params(), other, init_params, other_dir, masks)
    pstats = compare.stats
    ours = {k: v for k, v in ref.state().items() if k in theirs_opt}
    w = float("nan")
    if ours:
        w = compare("  Adam moments (m: average of the gradient, v: of its square)", ours, theirs_opt, None, opt_path)
        print(f"  largest relative difference of the moments {w:.3e}")
    verdict = ""
    if tol is not None:
        verdict = "  within" if worst <= tol else "  OVER"
        verdict += f" the tolerance {tol:g}"
    print(f"  largest relative difference of the parameters {worst:.3e}{verdict}")
    print(f"summary check: params_max_abs={pstats['max_abs']:.3e} params_rel={worst:.3e} "
          f"params_max_abs_sqrtv_over_100eps={pstats['masked_max_abs']:.3e} params_rel_sqrtv_over_100eps={pstats['masked_rel']:.3e} "
          f"moments_rel={w:.3e}")
    return worst


def check_steps(cfg, plan, ckdir, args):
    """Step k of the plan from parastream's checkpoint of step k−1
    (parameters and Adam's moments), compared with its checkpoint of step k,
    for every k whose two checkpoints exist (train with --checkpoint-every 1).
    Each step starts from parastream's own state, so differences cannot pile
    up: this checks the step's arithmetic over many batches. Returns the
    largest relative differences (parameters where √v̂ > 100ε, all
    parameters, moments)."""
    def ck(k):
        return os.path.join(ckdir, f"step-{k:08d}")
    steps = sorted(int(d[5:]) for d in os.listdir(ckdir) if d.startswith("step-") and d[5:].isdigit())
    todo = [k for k in steps if k >= 1 and k - 1 in steps and k <= len(plan)]
    if args.max_steps:
        todo = todo[:args.max_steps]
    if not todo:
        die(f"{ckdir}: no two checkpoints of consecutive steps (train with --checkpoint-every 1 --save-initial)")
    ref = None
    first_epoch = plan[0][0]
    print(f"parity.py: checking {len(todo)} steps one by one, each from parastream's state ({ckdir})")
    print(f"  {'step':>5} {'loss ref':>9} {'rel √v̂>100ε':>12} {'rel all':>9} {'rel m,v':>9} {'ties':>5}")
    worst = [0.0, 0.0, 0.0]
    agree = []
    for k in todo:
        params, _ = read_safetensors(os.path.join(ck(k - 1), "model.safetensors"))
        moments, _ = read_safetensors(os.path.join(ck(k - 1), "optimizer.safetensors"))
        if ref is None:
            ref = Reference(cfg, params, args.tie_grad, args.tie_ulps)
        ref.set_params(params)
        ref.ties = 0
        if k > 1:
            ref.set_moments(moments, ck(k - 1))
        else:
            for t in list(ref.m.values()) + list(ref.v.values()):
                t.zero_()
        e, batch = plan[k - 1]
        loss = ref.step(batch, k, cfg["lr"] * math.pow(cfg["decay"], e - first_epoch))
        ref.flush(k)  # parastream's checkpoint of step k is flushed (compute.Flusher)
        theirs, _ = read_safetensors(os.path.join(ck(k), "model.safetensors"))
        topt, _ = read_safetensors(os.path.join(ck(k), "optimizer.safetensors"))
        c2 = 1 / (1 - cfg["beta2"] ** k)
        ours = ref.params()
        rel_m = rel_a = rel_s = 0.0
        for n in ref.names:
            d = np.abs(ours[n] - theirs[n])
            scale = float(np.abs(theirs[n]).max()) or 1.0
            rel_a = max(rel_a, float(d.max()) / scale)
            mask = np.sqrt(topt["adam.v/" + n].astype(np.float64) * c2) > 100 * cfg["eps"]
            if mask.any():
                rel_m = max(rel_m, float(d[mask].max()) / scale)
        for name, t in ref.state().items():
            scale = float(np.abs(topt[name]).max()) or 1.0
            rel_s = max(rel_s, float(np.abs(t - topt[name]).max()) / scale)
        worst = [max(worst[0], rel_m), max(worst[1], rel_a), max(worst[2], rel_s)]
        ok = rel_m <= 1e-5 and rel_s <= 1e-4
        if ok:
            agree.append((rel_m, rel_a, rel_s))
        print(f"  {k:5d} {loss:9.5f} {rel_m:12.2e} {rel_a:9.2e} {rel_s:9.2e} {ref.ties:5d}{'' if ok else '  DIFFERS'}", flush=True)
    print(f"  largest over the steps: {worst[0]:.2e} (parameters where √v̂ > 100ε), {worst[1]:.2e} (all parameters), "
          f"{worst[2]:.2e} (Adam's moments), relative to each tensor's largest value")
    ag = [max(x[i] for x in agree) if agree else float("nan") for i in range(3)]
    print(f"  {len(agree)} of {len(todo)} steps agree (parameters where √v̂ > 100ε within 1e-5, moments within 1e-4); "
          f"over those: {ag[0]:.2e}, {ag[1]:.2e}, {ag[2]:.2e}")
    print(f"summary steps: steps={len(todo)} agree={len(agree)} agree_params_rel_sqrtv_over_100eps={ag[0]:.3e} "
          f"agree_params_rel={ag[1]:.3e} agree_moments_rel={ag[2]:.3e} worst_params_rel={worst[1]:.3e} worst_moments_rel={worst[2]:.3e}")
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See docs/trainstep.md, \"Reference parity\".")
    ap.add_argument("--rows", required=True, help="rows JSONL from `parastream consume --n 0 --shuffle-buffer 1`")
    ap.add_argument("--config", help="a parastream config.json (default: --init's)")
    ap.add_argument("--init", help="a parastream checkpoint whose parameters start training: the step-0 one of --save-initial, "
                                   "or one of step k (with Adam's moments: training continues with the plan's step k+1); "
                                   "without it they are drawn from parastream's distributions with --seed")
    ap.add_argument("--vocab", help="vocab.txt copied into the output (default: beside --config)")
    ap.add_argument("--trace", help="mode (a): replay the batches of `parastream train --trace-ids FILE`")
    ap.add_argument("--rows-of", metavar="TRACE",
                    help="mode (b): shuffle only the rows this trace of `parastream train --trace-ids` trained (the run's own "
                         "selection: its label-aware pairs), not every row of --rows")
    ap.add_argument("--epochs", type=int, default=1, help="mode (b): passes over the rows (default 1)")
    ap.add_argument("--seed", type=int, default=1, help="mode (b): shuffle seed; also the draw without --init (default 1)")
    ap.add_argument("--max-steps", type=int, default=0, help="train at most this many steps (0: all)")
    ap.add_argument("--out", help="checkpoint directory to write (parastream's format); required but with --check-steps")
    ap.add_argument("--check-steps", metavar="DIR",
                    help="with --trace: check each step k alone, from parastream's checkpoint DIR/step-(k-1) to DIR/step-k "
                         "(parastream train --checkpoint-every 1 --save-initial); writes nothing")
    ap.add_argument("--check-against", help="a parastream checkpoint to compare the final parameters with")
    ap.add_argument("--check-tolerance", type=float, help="with --check-against: exit 3 when the largest relative difference exceeds this")
    ap.add_argument("--tie-grad", choices=("all", "one"), default="all",
                    help="a tied MAX negative: the gradient reaches every tied column (all: gorgonia's Max, parastream) or one (torch.max)")
    ap.add_argument("--tie-ulps", type=float, default=0,
                    help="with --tie-grad all, also count as tied the columns within this many ulps of the max (default 0: bit-equal g(s) only)")
    ap.add_argument("--torch-adam", action="store_true", help="use torch.optim.Adam instead of compute.Optimizer's update written out")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (default 1: on a shared 2-core box more threads spin against each other, 4x slower measured)")
    ap.add_argument("--quiet", action="store_true", help="no per-epoch lines")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    cfg_path = args.config or (os.path.join(args.init, "config.json") if args.init else None)
    if not cfg_path:
        die("--config or --init is needed for the model configuration")
    if os.path.isdir(cfg_path):
        cfg_path = os.path.join(cfg_path, "config.json")
    cfg = load_config(cfg_path)
    vocab_path = args.vocab or os.path.join(os.path.dirname(cfg_path), "vocab.txt")
    start, moments = 0, None
    if args.init:
        refuse_hard_negatives(args.init)
        params, _ = read_safetensors(os.path.join(args.init, "model.safetensors"))
        check_params(cfg, params, args.init)
        try:
            with open(os.path.join(args.init, "trainer.json")) as f:
                start = int(json.load(f).get("step", 0))
        except (OSError, ValueError) as e:
            die(f"{args.init}: trainer.json: {e}")
        if start > 0:
            # A later checkpoint: continue from it, Adam's moments included.
            moments, _ = read_safetensors(os.path.join(args.init, "optimizer.safetensors"))
            if args.torch_adam:
                die("--torch-adam starts from step 0 only: give the step-0 checkpoint")
    else:
        params = draw_params(cfg, args.seed)
    init = {k: v.copy() for k, v in params.items()}
    rows, order = read_rows(args.rows)

    skipped = 0
    if args.trace:
        mode = "a"
        plan = []
        for s, e, ids in read_trace(args.trace):
            missing = [i for i in ids if i not in rows]
            if missing:
                die(f"{args.trace}: step {s}: {len(missing)} row ids not in {args.rows} (first {missing[0]!r}): "
                    "dump the rows of the dataset and split the run trained on")
            plan.append((e, [rows[i] for i in ids]))
        first_epoch = plan[0][0]
    else:
        mode = "b"
        if args.rows_of:
            trained = {i for _, _, ids in read_trace(args.rows_of) for i in ids}
            missing = trained - set(order)
            if missing:
                die(f"{args.rows_of}: {len(missing)} row ids not in {args.rows}: dump the rows of the dataset and split the run trained on")
            print(f"parity.py: mode (b) keeps the {len(trained)} of {len(order)} rows that {args.rows_of} trained")
            order = [i for i in order if i in trained]
        plan, skipped = batches_own_order(rows, order, cfg, args.epochs, args.seed)
        first_epoch = 1
    for e, b in plan:
        if len(b) < 2:
            die("a batch of fewer than 2 pairs: in-batch negatives need 2")
        for a, bb in b:
            if not a or not bb:
                die("a traced row has an empty side: parastream leaves those out; is --rows the same dataset?")
            for t in list(a[:cfg["max_len"]]) + list(bb[:cfg["max_len"]]):
                if not 0 <= t < cfg["vocab"]:
                    die(f"token id {t} outside the vocabulary [0, {cfg['vocab']})")
    # An epoch is finished (trainer.json's epoch) once its last step in the
    # plan ran; the trace's last epoch counts as finished.
    last_of = {e: i for i, (e, _) in enumerate(plan)}
    if start > len(plan):
        die(f"--init is at step {start}, the plan has {len(plan)} steps")
    if args.check_steps:
        if mode != "a":
            die("--check-steps needs --trace: it replays parastream's batches")
        check_steps(cfg, plan, args.check_steps, args)
        return
    if not args.out:
        die("--out is required")
    plan = plan[start:start + args.max_steps] if args.max_steps else plan[start:]

    ref = Reference(cfg, params, args.tie_grad, args.tie_ulps)
    if args.torch_adam:
        if cfg.get("embedding_update", "dense") == "sparse":
            die("--torch-adam is dense Adam: the run's embedding_update is sparse (train it with --embedding-update dense to compare)")
        ref.use_torch_adam()
    if moments is not None:
        ref.set_moments(moments, args.init)
    print(f"parity.py: mode ({mode}) {'replaying ' + args.trace if mode == 'a' else f'own order, seed {args.seed}'}: "
          f"{cfg['encoder']} dim {cfg['dim']} hidden {cfg['hidden']} vocab {cfg['vocab']} batch {cfg['batch_size']} "
          f"lr {cfg['lr']:g}, {len(rows)} rows ({skipped} with an empty side left out), {len(plan)} steps, "
          f"init {'from ' + args.init if args.init else 'drawn'}{f' (step {start})' if start else ''}, ties: gradient to {args.tie_grad}, "
          f"adam: {'torch.optim.Adam' if args.torch_adam else 'compute.Optimizer'}", flush=True)

    step = start
    cur, e_loss, e_steps, e_pairs, e_start = None, 0.0, 0, 0, time.monotonic()
    total_start = time.monotonic()

    def epoch_line():
        if e_steps and not args.quiet:
            dt = time.monotonic() - e_start
            print(f"epoch {cur}: {e_steps} steps, mean loss {e_loss / e_steps:.5f}, {e_pairs} pairs, "
                  f"{e_pairs / max(dt, 1e-9):.1f} pairs/s, {ref.ties} rows with a tied max negative so far "
                  f"({ref.near_ties} with a near-tie)", flush=True)

    for e, b in plan:
        if e != cur:
            epoch_line()
            cur, e_loss, e_steps, e_pairs, e_start = e, 0.0, 0, 0, time.monotonic()
        step += 1
        lr = cfg["lr"] * math.pow(cfg["decay"], e - first_epoch)
        e_loss += ref.step(b, step, lr)
        e_steps += 1
        e_pairs += len(b)
    epoch_line()
    epoch_done = sum(1 for i in last_of.values() if i < step)
    total = time.monotonic() - total_start
    write_checkpoint(args.out, cfg_path, vocab_path, ref, step, epoch_done, mode)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"parity.py: {step} steps, {sum(len(b) for _, b in plan)} pairs in {total:.1f} s "
          f"({sum(len(b) for _, b in plan) / max(total, 1e-9):.1f} pairs/s), {ref.ties} rows with a tied max negative, "
          f"{ref.near_ties} with a near-tie (another sentence within 4 ulps of the max); "
          f"peak RSS {rss:.0f} MiB; wrote {args.out}", flush=True)
    if args.check_against:
        worst = check_against(ref, init if args.init else None, args.check_against, args.check_tolerance)
        if args.check_tolerance is not None and worst > args.check_tolerance:
            sys.exit(3)


if __name__ == "__main__":
    main()
