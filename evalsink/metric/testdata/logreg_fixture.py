"""Writes logreg_fixture.csv, the fixture of the logistic regression tests
(evalsink/logreg_test.go): 400 items of 20 raw (unstandardised) features,
a binary label and a 3-class label, each a noisy linear function of the
features so that the classes overlap. Deterministic (numpy's legacy
RandomState, seed 23); run with Debian's python3 and python3-numpy:

    /usr/bin/python3 evalsink/metric/testdata/logreg_fixture.py > evalsink/metric/testdata/logreg_fixture.csv
"""
import sys

import numpy as np

rng = np.random.RandomState(23)
n, d = 400, 20
# Features on different scales and offsets, two of them correlated.
scale = np.exp(rng.uniform(-1.5, 1.5, size=d))
offset = rng.normal(0, 1, size=d)
x = rng.normal(0, 1, size=(n, d)) * scale + offset
x[:, 1] = 0.8 * x[:, 0] + 0.2 * x[:, 1]
# Binary: logistic noise around a linear rule.
w = rng.normal(0, 1, size=d) / scale
z = (x - offset) @ w + 0.3
y2 = (z + rng.logistic(0, 1.5, size=n) > 0).astype(int)
# Three classes: Gumbel noise on three linear scores (a softmax model).
W = rng.normal(0, 1, size=(3, d)) / scale
Z = (x - offset) @ W.T + np.array([0.2, 0.0, -0.2])
y3 = np.argmax(Z + rng.gumbel(0, 1.2, size=(n, 3)), axis=1)
out = sys.stdout
out.write(",".join(["y2", "y3"] + ["x%d" % j for j in range(d)]) + "\n")
for i in range(n):
    out.write(",".join([str(y2[i]), str(y3[i])] + ["%.6f" % v for v in x[i]]) + "\n")
