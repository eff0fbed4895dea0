#!/usr/bin/env python3
"""Checks result files written by `parastream eval run --format mteb`
against MTEB's result schema, as MTEB's own TaskResult model states it
(mteb/results/task_result.py: dataset_revision and task_name strings,
mteb_version a string or null, scores a dict of split to a list of
dicts, each with main_score, hf_subset a string and languages a list,
evaluation_time a number or null, everything JSON-serialisable) and the
results repository's layout (<model, "/" as "__">/<revision>/<Task>.json
beside model_meta.json, whose name and revision match the folders).

  python3 scripts/mteb_check.py DIR...   (each DIR a <model>/<revision> folder)

Prints a line per file; exits 1 on the first problem.
"""
import json, os, sys


def fail(path, why):
    sys.exit(f"{path}: {why}")


def check_task(path):
    d = json.load(open(path))
    for key, kinds in [("dataset_revision", (str,)), ("task_name", (str,)), ("mteb_version", (str, type(None))),
                       ("scores", (dict,)), ("evaluation_time", (int, float, type(None)))]:
        if key not in d:
            fail(path, f"no {key}")
        if not isinstance(d[key], kinds):
            fail(path, f"{key} is {type(d[key]).__name__}")
    if d["task_name"] + ".json" != os.path.basename(path):
        fail(path, f"task_name {d['task_name']} does not name the file")
    for split, entries in d["scores"].items():
        if not isinstance(entries, list) or not entries:
            fail(path, f"scores[{split}] is not a list of scores")
        for e in entries:
            if not isinstance(e, dict) or "main_score" not in e:
                fail(path, f"scores[{split}]: an entry without main_score")
            if not isinstance(e.get("hf_subset"), str) or not isinstance(e.get("languages"), list):
                fail(path, f"scores[{split}]: hf_subset must be a string and languages a list")
            if not isinstance(e["main_score"], (int, float)) or not -1 <= e["main_score"] <= 1:
                fail(path, f"scores[{split}]: main_score {e['main_score']} is not a correlation in [-1, 1]")
    json.dumps(d)
    return d


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for folder in sys.argv[1:]:
        meta_path = os.path.join(folder, "model_meta.json")
        meta = json.load(open(meta_path))
        rev = os.path.basename(os.path.normpath(folder))
        model = os.path.basename(os.path.dirname(os.path.normpath(folder)))
        if meta.get("revision") != rev or meta.get("name", "").replace("/", "__") != model:
            fail(meta_path, f"name {meta.get('name')} revision {meta.get('revision')} do not match the folders {model}/{rev}")
        tasks = [f for f in sorted(os.listdir(folder)) if f.endswith(".json") and f != "model_meta.json"]
        if not tasks:
            fail(folder, "no task results")
        for t in tasks:
            d = check_task(os.path.join(folder, t))
            main_scores = {s: [round(e["main_score"], 4) for e in es] for s, es in d["scores"].items()}
            print(f"{os.path.join(folder, t)}: ok, {d['task_name']} main_score {main_scores}")


if __name__ == "__main__":
    main()
