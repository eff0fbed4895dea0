"""Fits scikit-learn's LogisticRegression(penalty="l2", solver="lbfgs",
fit_intercept=True) as the logistic regression tests of evalsink compare
against (evalsink/logreg_test.go). Reads JSON on stdin:

    {"sets": [{"name": ..., "x": [[...]], "y": [...], "test_x": [[...]],
               "test_y": [...], "cs": [...]}]}

and writes, for each set and C, the coefficients, intercepts, the
objective divided by C n (mean loss + |W|^2 / (2 C n)), the largest
component of its gradient at scikit-learn's solution, and the accuracy on
the test items, as JSON on stdout. Fitted to tol 1e-10 (scipy's L-BFGS-B
may stop earlier on its relative function tolerance: the gradient written
says how close it got).

    /usr/bin/python3 evalsink/metric/testdata/sklearn_check.py --pin evalsink/metric/testdata/logreg_fixture.csv

prints instead the Go literals of TestLogRegAgainstSklearnPinned: the
fixture's first 300 items train, the last 100 are held out, C 0.25, 1, 8.
"""
import json
import sys

import numpy as np
import sklearn
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression


def objective(x, y, coef, intercept, c):
    n = x.shape[0]
    if coef.shape[0] == 1:
        z = x @ coef[0] + intercept[0]
        loss = np.logaddexp(0, z) - y * z
        r = 1 / (1 + np.exp(-z)) - y
        gw = x.T @ r / n + coef[0] / (c * n)
        grad = np.concatenate([gw, [r.sum() / n]])
    else:
        z = x @ coef.T + intercept
        lse = logsumexp(z, axis=1)
        loss = lse - z[np.arange(n), y]
        p = np.exp(z - lse[:, None])
        p[np.arange(n), y] -= 1
        gw = p.T @ x / n + coef / (c * n)
        grad = np.concatenate([gw.ravel(), p.sum(axis=0) / n])
    f = loss.mean() + (coef ** 2).sum() / (2 * c * n)
    return f, float(np.abs(grad).max())


def fixture_request(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    x = a[:, 2:]
    sets = []
    for name, col in (("binary", 0), ("3-class", 1)):
        y = a[:, col].astype(int)
        sets.append({"name": name, "x": x[:300], "y": y[:300], "test_x": x[300:], "test_y": y[300:], "cs": [0.25, 1, 8]})
    return {"sets": sets}


def pin(out):
    for f in out["fits"]:
        coef = ", ".join("{" + ", ".join("%.10g" % v for v in row[:4]) + "}" for row in f["coef"])
        icpt = ", ".join("%.10g" % v for v in f["intercept"])
        print('\t\t{Name: "%s", C: %g, Accuracy: %g, Objective: %.12f, Grad: %.2g, Iterations: %d,' % (
            f["name"], f["c"], f["accuracy"], f["objective"], f["grad"], f["iterations"]))
        print("\t\t\tCoef: [][]float64{%s}, Intercept: []float64{%s}}," % (coef, icpt))


def main():
    pinning = len(sys.argv) == 3 and sys.argv[1] == "--pin"
    req = fixture_request(sys.argv[2]) if pinning else json.load(sys.stdin)
    out = {"sklearn": sklearn.__version__, "fits": []}
    for s in req["sets"]:
        x, y = np.array(s["x"], dtype=float), np.array(s["y"], dtype=int)
        tx, ty = np.array(s["test_x"], dtype=float), np.array(s["test_y"], dtype=int)
        for c in s["cs"]:
            clf = LogisticRegression(C=c, penalty="l2", solver="lbfgs", fit_intercept=True, tol=1e-10, max_iter=100000)
            clf.fit(x, y)
            f, g = objective(x, y, clf.coef_, clf.intercept_, c)
            out["fits"].append({
                "name": s["name"], "c": c,
                "coef": clf.coef_.tolist(), "intercept": clf.intercept_.tolist(),
                "objective": f, "grad": g,
                "accuracy": float(np.mean(clf.predict(tx) == ty)),
                "iterations": int(np.max(clf.n_iter_)),
            })
    if pinning:
        pin(out)
    else:
        json.dump(out, sys.stdout)


main()
