#!/usr/bin/env python3
"""Reads a static export of parastream (`parastream export --format
sentence-transformers|model2vec DIR`) with an implementation of its own:
the safetensors header and tensor by json and struct, the token ids from
Hugging Face's tokenizer code (tools/interop/hf_tokenize.mjs), the mean as
sentence-transformers' StaticEmbedding (every id) or model2vec's
StaticModel (<unk> left out) computes it; and compares the vectors with
`parastream embed`'s on the same lines.

  python3 scripts/export_check.py --dir DIR --ids ids.jsonl --embed embed.txt
      [--pairs-gold gold.txt]

--ids: hf_tokenize.mjs's output for the lines; --embed: `parastream embed
--checkpoint CK < lines`; --pairs-gold: when the lines are pairs (1-2, 3-4,
...), their gold scores, one a line: the Pearson x100 of the cosines of
both sets of vectors is printed. Prints one line of key=value figures;
exits 1 when an in-vocabulary line differs by more than --tol.
"""
import argparse, json, math, os, struct, sys


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    (name, entry), = header.items()
    if entry["dtype"] != "F32":
        sys.exit(f"{path}: {name} is {entry['dtype']}, want F32")
    lo, hi = entry["data_offsets"]
    rows, dim = entry["shape"]
    flat = struct.unpack(f"<{(hi - lo) // 4}f", data[lo:hi])
    return name, [flat[i * dim:(i + 1) * dim] for i in range(rows)], dim


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def cos(u, v):
    nu, nv = math.sqrt(sum(a * a for a in u)), math.sqrt(sum(b * b for b in v))
    return sum(a * b for a, b in zip(u, v)) / (nu * nv) if nu and nv else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--embed", required=True)
    ap.add_argument("--pairs-gold")
    ap.add_argument("--tol", type=float, default=1e-5)
    a = ap.parse_args()
    if os.path.exists(os.path.join(a.dir, "0_StaticEmbedding")):
        fmt, mod = "sentence-transformers", os.path.join(a.dir, "0_StaticEmbedding")
        modules = json.load(open(os.path.join(a.dir, "modules.json")))
        assert modules[0]["type"] == "sentence_transformers.models.StaticEmbedding", modules
        want = "embedding.weight"
    else:
        fmt, mod = "model2vec", a.dir
        cfg = json.load(open(os.path.join(a.dir, "config.json")))
        assert cfg["model_type"] == "model2vec", cfg
        want = "embeddings"
    name, table, dim = read_safetensors(os.path.join(mod, "model.safetensors"))
    assert name == want, (name, want)
    tok = json.load(open(os.path.join(mod, "tokenizer.json")))
    unk = tok["model"]["vocab"][tok["model"]["unk_token"]]
    assert len(tok["model"]["vocab"]) == len(table), "a tokenizer id a row"
    ids = [json.loads(l)["ids"] for l in open(a.ids)]
    ref = [[float(x) for x in l.split()] for l in open(a.embed)]
    assert len(ids) == len(ref), (len(ids), len(ref))
    ours = []
    for seq in ids:
        if fmt == "model2vec":
            seq = [i for i in seq if i != unk]
        v = [0.0] * dim
        for i in seq:
            for k, x in enumerate(table[i]):
                v[k] += x
        ours.append([x / len(seq) for x in v] if seq else v)
    inv = [k for k, seq in enumerate(ids) if seq and unk not in seq]
    diff = [max(abs(x - y) for x, y in zip(ours[k], ref[k][:dim])) for k in inv]
    bad = [k for k, d in zip(inv, diff) if d > a.tol]
    out = {"format": fmt, "lines": len(ids), "in_vocabulary": len(inv), "max_abs_diff_in_vocabulary": max(diff) if diff else 0,
           "in_vocabulary_over_tol": len(bad), "unseen_lines": len(ids) - len(inv)}
    unseen = [k for k in range(len(ids)) if k not in set(inv)]
    if unseen:
        out["max_abs_diff_unseen"] = max(max(abs(x - y) for x, y in zip(ours[k], ref[k][:dim])) for k in unseen)
    if a.pairs_gold:
        gold = [float(l) for l in open(a.pairs_gold) if l.strip()]
        n = min(len(gold), len(ids) // 2)
        ce = [cos(ours[2 * i], ours[2 * i + 1]) for i in range(n)]
        cr = [cos(ref[2 * i][:dim], ref[2 * i + 1][:dim]) for i in range(n)]
        out["pairs"] = n
        out["pearson_export"] = round(100 * pearson(ce, gold[:n]), 2)
        out["pearson_embed"] = round(100 * pearson(cr, gold[:n]), 2)
    print(" ".join(f"{k}={v}" for k, v in out.items()))
    for k in bad[:5]:
        print(f"line {k + 1}: differs by {diff[inv.index(k)]:.3g}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
