"""The search index's BM25 figures (surface/search_weights.py) are bm25s's own, to the last bit: each field scored
by bm25s.BM25() (its defaults), and the postings built from them the way the index always combined fields."""

from __future__ import annotations

import random

import bm25s
import pytest

from codegen.surface.search_weights import field_scores, postings


def bm25s_scores(documents: list[list[str]]) -> dict[tuple[str, int], float]:
    """(stem, document) -> score, as bm25s computes them (an empty document indexed as the empty token)."""
    model = bm25s.BM25()
    model.index([doc or [""] for doc in documents], show_progress=False)
    data, indices, indptr = (model.scores[key].tolist() for key in ("data", "indices", "indptr"))
    out = {}
    for term, tid in model.vocab_dict.items():
        if term:
            for doc, score in zip(indices[indptr[tid] : indptr[tid + 1]], data[indptr[tid] : indptr[tid + 1]]):
                out[(term, doc)] = score
    return out


def corpus(seed: int, documents: int, words: int) -> list[list[str]]:
    """Documents of 0-60 words drawn from a skewed vocabulary (some words in most documents, most in few)."""
    rng = random.Random(seed)
    vocabulary = [f"w{n}" for n in range(words)]
    weights = [1 / (rank + 1) for rank in range(words)]
    return [rng.choices(vocabulary, weights, k=rng.choice([0, 1, 2, 3, 5, 8, 13, 30, 60])) for _ in range(documents)]


@pytest.mark.parametrize("seed, documents, words", [(1, 7, 5), (2, 300, 50), (3, 3000, 2000)])
def test_field_scores_are_bm25s_scores(seed: int, documents: int, words: int) -> None:
    docs = corpus(seed, documents, words)
    vocabulary: dict[str, int] = {"unused": 0}  # numbering shared with other fields: ids need not start at 0
    terms, owners, scores = field_scores(docs, vocabulary)
    names = {i: name for name, i in vocabulary.items()}
    ours = {(names[t], d): s for t, d, s in zip(terms.tolist(), owners.tolist(), scores.tolist())}
    assert ours == bm25s_scores(docs)


def test_postings_keep_each_stems_best_field() -> None:
    fields = [(weight, corpus(seed, 400, 60)) for seed, weight in [(4, 1.0), (5, 0.5), (6, 2.0), (7, 1.2)]]
    best: dict[str, dict[int, float]] = {}
    for weight, docs in fields:
        for (term, doc), score in bm25s_scores(docs).items():
            best.setdefault(term, {})[doc] = max(best.get(term, {}).get(doc, 0.0), weight * score)
    expected = {}
    for term in sorted(best):
        pairs = [(doc, round(score * 100)) for doc, score in sorted(best[term].items()) if round(score * 100) > 0]
        if pairs:
            expected[term] = [[doc for doc, _ in pairs], [w for _, w in pairs]]
    assert postings(fields, 100) == expected
    assert postings([(1.0, [[], []])], 100) == {}
