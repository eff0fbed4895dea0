"""Independent check of evalsink's correlations (evalsink/scipy_test.go).

Reads JSON from stdin: {"sets": [{"name": ..., "pred": [...], "gold": [...]}],
"pools": {"<name>": [set indexes]}}, and prints JSON: for each set and each
pool (all its sets' pairs together) scipy's Pearson r and Spearman rho.
"""
import json
import sys

from scipy import stats

doc = json.load(sys.stdin)
out = {"sets": [], "pools": {}}
for s in doc["sets"]:
    out["sets"].append({
        "name": s["name"],
        "pearson": float(stats.pearsonr(s["pred"], s["gold"])[0]),
        "spearman": float(stats.spearmanr(s["pred"], s["gold"])[0]),
    })
for name, idx in doc["pools"].items():
    pred = [p for i in idx for p in doc["sets"][i]["pred"]]
    gold = [g for i in idx for g in doc["sets"][i]["gold"]]
    out["pools"][name] = {
        "pearson": float(stats.pearsonr(pred, gold)[0]),
        "spearman": float(stats.spearmanr(pred, gold)[0]),
    }
json.dump(out, sys.stdout)
