"""The search index's postings: each stem's BM25 weight per tool, the best of its fields, as integers.

The weights are bm25s's defaults (the Lucene variant, k1 = 1.5, b = 0.75, scores in float32), computed for all
the documents of a field at once with numpy rather than document by document: the same operations in the same
order and precision, so the same figures (tests/test_search_weights.py checks them against bm25s itself), at a
fraction of the cost on a large API (one array operation per field instead of several per document).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]
    Floats32 = npt.NDArray[np.float32]

K1 = 1.5  # bm25s.BM25() defaults
B = 0.75


def _numpy() -> Any:
    """numpy, imported only where a search index is built. Nothing here uses its linear algebra: when this is the
    first import, its BLAS library is asked to start one thread rather than one per core (half the import's CPU)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy

    return numpy


def postings(fields: Iterable[tuple[float, Sequence[Sequence[str]]]], scale: int) -> dict[str, list[list[int]]]:
    """Stem -> [documents, weights], stems sorted, documents ascending: a weight is round(scale x the best of
    field weight x BM25 score over the fields); pairs whose weight rounds to 0 are left out, and stems left
    with none. `fields`: (field weight, each document's stems) per field, every field over the same documents."""
    np = _numpy()
    vocabulary: dict[str, int] = {}
    term_parts: list[Ints] = []
    doc_parts: list[Ints] = []
    value_parts: list[Floats] = []
    for weight, documents in fields:
        if not any(documents):
            continue
        terms, docs, scores = field_scores(documents, vocabulary)
        term_parts.append(terms)
        doc_parts.append(docs)
        value_parts.append(weight * scores.astype(np.float64))
    if not term_parts:
        return {}
    names = sorted(vocabulary)
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.array([vocabulary[name] for name in names], dtype=np.int64)] = np.arange(len(names), dtype=np.int64)
    terms = rank[np.concatenate(term_parts)]
    docs = np.concatenate(doc_parts)
    values = np.concatenate(value_parts)
    order = np.lexsort((docs, terms))  # by stem, then document
    terms, docs, values = terms[order], docs[order], values[order]
    first = np.ones(len(terms), dtype=bool)  # the first entry of each (stem, document)
    first[1:] = (terms[1:] != terms[:-1]) | (docs[1:] != docs[:-1])
    starts = np.flatnonzero(first)
    weights = np.rint(np.maximum.reduceat(values, starts) * scale)  # half to even, as round() does
    keep = weights > 0
    terms, docs, weights = terms[starts][keep], docs[starts][keep], weights[keep]
    del order, first, starts, keep
    bounds = [0, *(np.flatnonzero(terms[1:] != terms[:-1]) + 1).tolist(), len(terms)]
    weights = weights.astype(np.int64)
    return {  # Python ints made only for what is returned (not for every entry at once)
        names[int(terms[start])]: [docs[start:end].tolist(), weights[start:end].tolist()]
        for start, end in zip(bounds, bounds[1:])
        if end > start
    }


def field_scores(documents: Sequence[Sequence[str]], vocabulary: dict[str, int]) -> tuple[Ints, Ints, Floats32]:
    """(stem ids, documents, float32 scores), one entry per stem a document holds: BM25 over this field's
    documents alone (a document without stems counts as one word long, as bm25s's empty token makes it).
    New stems are added to `vocabulary`, which numbers the stems of all fields."""
    np = _numpy()
    flat = list(chain.from_iterable(documents))
    for stem in dict.fromkeys(flat):  # new stems numbered in the order they first occur
        if stem not in vocabulary:
            vocabulary[stem] = len(vocabulary)
    ids = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
    sizes = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
    owners = np.repeat(np.arange(len(documents), dtype=np.int64), sizes)
    lengths = np.maximum(sizes, 1)
    size = len(vocabulary)
    pairs, counts = np.unique(owners * size + ids, return_counts=True)
    docs, terms = pairs // size, pairs % size
    frequencies = np.bincount(terms, minlength=size)
    total = len(documents)
    idf = np.zeros(size, dtype=np.float32)
    for df in np.unique(frequencies[terms]).tolist():
        idf[frequencies == df] = math.log(1 + (total - df + 0.5) / (df + 0.5))
    average = lengths.mean()
    tf = counts.astype(np.float32)
    tfc = tf / (K1 * ((1 - B) + B * lengths[docs] / average) + tf)
    return terms, docs, (idf[terms] * tfc).astype(np.float32)
