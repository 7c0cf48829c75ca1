"""The search index's weights: each field scored with BM25, the fields combined, rounded to integers.

The BM25 weights are bm25s's (its default: the Lucene variant, k1 1.5, b 0.75, float32 scores), computed here
from the term counts in a few array operations over all the tools at once instead of by bm25s's loop over the
documents: the same formula with the same float arithmetic gives the same floats, bit for bit
(tests/test_search_weights.py compares them with bm25s's on GitHub's tools). An empty document counts as one
token, EMPTY, as bm25s's empty-token does. The documents are stem ids (search_index.Analyzer numbers each stem
once, for all fields). A stem's weight in a tool is its best field's (field weight times that field's BM25
score), stored as round(weight * scale); the combining is done on arrays, with the same float64 arithmetic and
rounding (half to even) as Python's `max(...)` and `round(...)` on each pair.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EMPTY = 0  # the stem id of an empty document's one token (bm25s's own empty token is "")
K1 = 1.5  # bm25s.BM25's defaults
B = 0.75
Postings = dict[str, list[list[int]]]  # stem -> [[tool numbers], [weights]], tool numbers ascending


def _numpy() -> None:
    if "numpy" not in sys.modules:  # nothing here uses its linear algebra: one BLAS thread, half the import's CPU
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def combined_postings(
    fields: Mapping[str, Sequence[Sequence[int]]],
    weights: Mapping[str, float],
    vocabulary: dict[str, int],
    scale: int,
) -> Postings:
    """stem -> its tools and integer weights (only those above 0), stems sorted. `fields`: field name -> each
    tool's stem ids in that field; `vocabulary`: stem -> id, with "" as EMPTY."""
    used = [(field, weight) for field, weight in sorted(weights.items()) if weight > 0 and any(fields[field])]
    if not used:
        return {}
    _numpy()
    import numpy as np

    documents = len(fields[used[0][0]])
    keys, counts, lengths = _counted([fields[field] for field, _ in used], documents, len(vocabulary))
    field, pair = keys % len(used), keys // len(used)
    del keys
    scores = bm25(pair // documents, pair % documents, field, counts, lengths)
    del counts
    values = np.multiply(scores, np.array([weight for _, weight in used])[field])  # as Python's float(score) * weight
    del scores, field
    starts = np.flatnonzero(np.concatenate(([True], pair[1:] != pair[:-1])))  # where a (stem, document) pair starts
    best = np.maximum.reduceat(values, starts)  # as Python's max(...) of the same floats
    pair = pair[starts]
    del values, starts
    return _postings(pair, best, documents, vocabulary, scale)


def _counted(
    fields: Sequence[Sequence[Sequence[int]]], documents: int, stems: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (stem, document, field) keys of `fields`' tokens, (stem * documents + document) * len(fields) + field,
    each once and ascending (one sort for all the fields), with how many times each occurs; and each field's
    document lengths, a row per field (an empty document counts as one token: EMPTY). `stems`: stem ids are
    below it. The keys are 32-bit integers when they fit (half the memory of a large API's million tokens)."""
    import numpy as np

    count = len(fields)
    kind = np.dtype(np.int32 if stems * documents * count < 2**31 else np.int64)
    lengths = np.array([np.fromiter(map(len, docs), dtype=np.int64, count=documents) for docs in fields])
    lengths[lengths == 0] = 1
    tokens = chain.from_iterable(doc or (EMPTY,) for docs in fields for doc in docs)
    keys = np.fromiter(tokens, dtype=kind, count=int(lengths.sum()))
    np.multiply(keys, documents * count, out=keys)
    places = np.add.outer(np.arange(count, dtype=kind), np.arange(documents, dtype=kind) * count)  # a row a field
    np.add(keys, np.repeat(places.ravel(), lengths.ravel()), out=keys)  # + document * len(fields) + field
    del places
    keys.sort()
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(starts, append=len(keys))
    return keys[starts], counts, lengths


def bm25(stems: np.ndarray, docs: np.ndarray, field: np.ndarray, counts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """bm25s's weight (float32) of each (stem, document, field) that occurs `counts` times: `lengths` holds each
    field's document lengths (a row per field). The float64 steps are bm25s's: tf / (norm + tf) times the idf."""
    import numpy as np

    fields, documents = lengths.shape
    stems_in = int(stems.max()) + 1
    slot = field * stems_in + stems
    idf = _idf(np.bincount(slot, minlength=fields * stems_in), documents)[slot]  # by the documents holding it
    del slot
    average = lengths.mean(axis=1, keepdims=True)  # as bm25s: numpy's mean of each field's lengths
    norm = K1 * ((1 - B) + B * lengths / average)  # per document, in bm25s's order of operations
    frequencies = counts.astype(np.float64)
    denominators = norm[field, docs]
    denominators += frequencies
    frequencies /= denominators
    del denominators
    frequencies *= idf
    scores: np.ndarray = frequencies.astype(np.float32)
    return scores


def _idf(frequencies: np.ndarray, documents: int) -> np.ndarray:
    """bm25s's Lucene idf (float32) of each document frequency: log(1 + (N - df + 0.5) / (df + 0.5)), with
    Python's math.log once per distinct frequency (numpy's log may differ in the last bit)."""
    import numpy as np

    distinct, where = np.unique(frequencies, return_inverse=True)
    values = [math.log(1 + (documents - df + 0.5) / (df + 0.5)) for df in distinct.tolist()]
    found: np.ndarray = np.array(values, dtype=np.float64).astype(np.float32)[where]
    return found


def _postings(keys: np.ndarray, best: np.ndarray, documents: int, vocabulary: dict[str, int], scale: int) -> Postings:
    """The `best` value of each (stem, document) key (stem * documents + document, ascending), scaled and rounded;
    those above 0 grouped by stem. Only the lists the index keeps become Python objects (a stem's slice of the
    arrays at a time)."""
    import numpy as np

    weights = np.rint(best * scale)  # round(): half to even, as Python's round of the same float
    del best
    kept = (weights > 0) & (keys // documents != vocabulary.get("", EMPTY))
    keys, weights = keys[kept], weights[kept].astype(np.int64)
    del kept
    stem_of, tools = keys // documents, keys % documents
    del keys
    bounds = np.flatnonzero(np.r_[True, stem_of[1:] != stem_of[:-1], True]).tolist()
    spans = dict(zip(stem_of[bounds[:-1]].tolist(), zip(bounds[:-1], bounds[1:])))
    out: Postings = {}
    for stem, number in sorted(vocabulary.items()):
        span = spans.get(number)
        if span is not None:
            start, end = span
            out[stem] = [tools[start:end].tolist(), weights[start:end].tolist()]
    return out
