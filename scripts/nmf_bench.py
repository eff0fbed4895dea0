#!/usr/bin/env python3
"""Compare featurize's NMF solver with scikit-learn's (solver "cd").

For each matrix, both solvers start from the same point (featurize.RandomInit,
passed to scikit-learn as init="custom"), minimise the same objective
0.5*||X - WH||_F^2 (lambda = 0: see docs/featurize.md, section NMF, for why the
L1 runs are not comparable one to one) with the same k and iteration budget.
The script prints, per matrix: each solver's time and final relative error
||X - WH||_F / ||X||_F (both computed here, by the same code), parastream's
time to reach scikit-learn's final error, and the ratio of that time to
scikit-learn's.

Usage: python3 scripts/nmf_bench.py [--quick] [--repeat N] [--json]
--json prints every run as one JSON object on stdout (the table on stderr):
tools/benchreport (make bench) reads it.
Run from the repository root; needs go, numpy, scipy and scikit-learn
(Debian: apt-get install python3-sklearn python3-scipy).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import numpy as np
    import scipy.io
    import scipy.sparse
    import sklearn
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning
except ImportError as e:  # the Makefile checks first; this is for direct runs
    sys.exit(f"nmf_bench: {e}; install python3-sklearn and python3-scipy")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUORA = os.path.join(ROOT, "..", "shared", "data", "corpora", "quora",
                     "quora_duplicate_questions.sample.tsv")


def rel_error(X, W, H):
    """||X - WH||_F / ||X||_F without forming WH, in float64."""
    X = X.tocoo()
    xx = float(X.data @ X.data)
    xwh = 0.0
    step = 200_000
    for s in range(0, X.nnz, step):
        r, c, v = X.row[s:s + step], X.col[s:s + step], X.data[s:s + step]
        xwh += float(v @ np.einsum("ij,ij->i", W[r], H[:, c].T))
    whwh = float(np.sum((W.T @ W) * (H @ H.T)))
    return np.sqrt(max(0.0, xx - 2 * xwh + whwh) / xx)


def go(tool, *args, env=None):
    out = subprocess.run([tool, *args], check=True, stdout=subprocess.PIPE, text=True,
                         env=None if env is None else {**os.environ, **env}).stdout
    return json.loads(out) if out.strip() else None


def run_sklearn(X, W0, H0, k, iters):
    model = NMF(n_components=k, solver="cd", init="custom", beta_loss="frobenius",
                alpha_W=0.0, alpha_H=0.0, l1_ratio=1.0, max_iter=iters, tol=0.0,
                shuffle=False)
    W0, H0 = W0.copy(), H0.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        W = model.fit_transform(X, W=W0, H=H0)
        secs = time.perf_counter() - t
    return secs, model.n_iter_, W, model.components_


def bench(tool, tmp, name, mtx, k, iters, repeat):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    go(tool, "init", "-x", mtx, "-k", str(k), "-seed", "1", "-out", d)
    X = scipy.io.mmread(mtx).tocsr().astype(np.float64)
    W0, H0 = np.load(os.path.join(d, "W0.npy")), np.load(os.path.join(d, "H0.npy"))
    rows = []
    for rep in range(repeat):
        sk_secs, sk_iters, W, H = run_sklearn(X, W0, H0, k, iters)
        sk_err = rel_error(X, W, H)
        fit = ["fit", "-x", mtx, "-init", d, "-k", str(k), "-iters", str(iters)]
        budget = go(tool, *fit, "-out", d)
        ps_err = rel_error(X, np.load(os.path.join(d, "W.npy")), np.load(os.path.join(d, "H.npy")))
        # Time to scikit-learn's error: stop there (allow 5x the budget).
        reach = go(tool, "fit", "-x", mtx, "-init", d, "-k", str(k),
                   "-iters", str(5 * iters), "-target", repr(sk_err))
        reached = reach["rel_errors"][-1] <= sk_err
        ps_to = reach["seconds"][-1]
        # The same on one thread: scikit-learn's cd solver runs on one.
        reach1 = go(tool, "fit", "-x", mtx, "-init", d, "-k", str(k),
                    "-iters", str(5 * iters), "-target", repr(sk_err), env={"GOMAXPROCS": "1"})
        reached1 = reach1["rel_errors"][-1] <= sk_err
        ps_to_1 = reach1["seconds"][-1]
        rows.append(dict(matrix=name, shape=f"{X.shape[0]}x{X.shape[1]}", nnz=X.nnz, k=k, iters=iters,
                         sk_secs=sk_secs, sk_iters=sk_iters, sk_err=sk_err,
                         ps_secs=budget["seconds"][-1], ps_err=ps_err, ps_err_go=budget["rel_error"],
                         ps_to=ps_to if reached else float("nan"), ps_to_iters=len(reach["seconds"]),
                         ratio=(ps_to / sk_secs) if reached else float("nan"),
                         workers=reach.get("workers", 0),
                         ps_to_1=ps_to_1 if reached1 else float("nan"),
                         ratio_1=(ps_to_1 / sk_secs) if reached1 else float("nan")))
        print(f"  {name} run {rep + 1}: sklearn {sk_secs:.2f} s err {sk_err:.6f}; "
              f"parastream {budget['seconds'][-1]:.2f} s err {ps_err:.6f}; "
              f"to sklearn's error {ps_to:.2f} s ({len(reach['seconds'])} it)", flush=True)
    return rows


def table(rows):
    head = ("matrix", "shape", "nnz", "k", "iters", "sklearn s", "sklearn err",
            "parastream s", "parastream err", "to sklearn err s (it)", "ratio")
    lines = [head]
    for r in rows:
        lines.append((r["matrix"], r["shape"], str(r["nnz"]), str(r["k"]), str(r["iters"]),
                      f"{r['sk_secs']:.2f}", f"{r['sk_err']:.6f}",
                      f"{r['ps_secs']:.2f}", f"{r['ps_err']:.6f}",
                      f"{r['ps_to']:.2f} ({r['ps_to_iters']})", f"{r['ratio']:.2f}"))
    w = [max(len(l[i]) for l in lines) for i in range(len(head))]
    out = []
    for n, l in enumerate(lines):
        out.append("| " + " | ".join(s.ljust(w[i]) for i, s in enumerate(l)) + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (x + 2) for x in w) + "|")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller budgets (a smoke run)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per matrix")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object (versions and every run) on stdout, the rest on stderr")
    args = ap.parse_args()
    if args.json:
        real_stdout = sys.stdout
        sys.stdout = sys.stderr
    print(f"nmf_bench: scikit-learn {sklearn.__version__}, scipy {scipy.__version__}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="nmfbench") as tmp:
        tool = os.path.join(tmp, "nmfbench")
        subprocess.run(["go", "build", "-o", tool, "./tools/nmfbench"], check=True, cwd=ROOT)
        rows = []
        if os.path.exists(QUORA):
            mtx = os.path.join(tmp, "quora.mtx")
            subprocess.run([tool, "quora", "-in", QUORA, "-out", mtx], check=True)
            rows += bench(tool, tmp, "quora", mtx, 50, 20 if args.quick else 100, args.repeat)
        else:
            print(f"nmf_bench: {QUORA} is absent: skipping the real-corpus matrix")
        mtx = os.path.join(tmp, "generated.mtx")
        shape = ["-rows", "5000", "-cols", "8000"] if args.quick else []
        subprocess.run([tool, "gen", *shape, "-density", "0.001", "-seed", "1", "-out", mtx], check=True)
        rows += bench(tool, tmp, "generated", mtx, 100, 10 if args.quick else 30, args.repeat)
    print()
    print(table(rows))
    print("\nratio: parastream's time to reach scikit-learn's final error / scikit-learn's time"
          " (target <= 1.0)")
    if args.json:
        res = {"sklearn": sklearn.__version__, "scipy": scipy.__version__, "numpy": np.__version__,
               "quick": args.quick, "runs": [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                                             for r in rows]}
        print(json.dumps(res), file=real_stdout)


if __name__ == "__main__":
    main()
