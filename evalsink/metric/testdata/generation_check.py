"""Independent check of evalsink's generation metrics (evalsink/generation_check_test.go).

Reads JSON from stdin: {"hyps": [[token, ...], ...], "refs": [[[token, ...], ...], ...],
"words": [word, ...], "meteor": [[hyp tokens, ref tokens], ...]}, and prints JSON:

Each tool is imported only when its inputs are given.

- "sacrebleu": null without sacrebleu (or without "hyps"), else {"version", "bleu": [BLEU-1..4], "ter",
  "ter_sentences": [[edits, average reference length], ...]}: sacrebleu's BLEU
  (tokenize='none', max_ngram_order=n, default 'exp' smoothing) and TER
  (case_sensitive=True) on the tokens joined by spaces, a sentence with fewer
  references than the most padded with None;
- "nltk": null without NLTK (or without "words" and "meteor"), else {"version", "stems": [...], "meteor": [...]}: the
  Porter stem of each word (PorterStemmer in ORIGINAL_ALGORITHM mode) and
  nltk.translate.meteor_score.single_meteor_score of each pair with that stemmer and
  no synonyms (a WordNet that knows no word).
"""
import json
import sys

doc = json.load(sys.stdin)
out = {"sacrebleu": None, "nltk": None}

sacrebleu = None
if doc.get("hyps"):
    try:
        import sacrebleu
        from sacrebleu.metrics import BLEU, TER
    except ImportError:
        pass

if sacrebleu is not None:
    hyps = [" ".join(h) for h in doc["hyps"]]
    width = max(len(r) for r in doc["refs"])
    streams = [[" ".join(r[k]) if k < len(r) else None for r in doc["refs"]] for k in range(width)]
    res = {"version": sacrebleu.__version__, "bleu": [], "ter_sentences": []}
    for n in range(1, 5):
        res["bleu"].append(BLEU(tokenize="none", max_ngram_order=n).corpus_score(hyps, streams).score)
    # TER once: sacrebleu's per-sentence statistics (the fewest edits, the average
    # reference length) and its corpus score from their sums, as corpus_score does.
    ter = TER(case_sensitive=True)
    stats = ter._extract_corpus_statistics(hyps, streams)
    res["ter_sentences"] = [[float(e), float(n)] for e, n in stats]
    res["ter"] = ter._aggregate_and_compute(stats).score
    out["sacrebleu"] = res

nltk = None
if doc.get("words") or doc.get("meteor"):
    try:
        import nltk
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import single_meteor_score
    except ImportError:
        pass

if nltk is not None:
    stemmer = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)

    class NoWordNet:
        def synsets(self, *args, **kwargs):
            return []

    out["nltk"] = {
        "version": nltk.__version__,
        "stems": [stemmer.stem(w) for w in doc.get("words", [])],
        "meteor": [single_meteor_score(r, h, preprocess=lambda x: x, stemmer=stemmer, wordnet=NoWordNet())
                   for h, r in doc.get("meteor", [])],
    }

json.dump(out, sys.stdout)
