"""The search index's weights: each field scored with BM25 by bm25s, the fields combined, rounded to integers.

The documents reach bm25s as stem ids (search_index.Analyzer numbers each stem once, for all fields, and each
text's stems once), so bm25s neither builds a vocabulary nor converts tokens for each of the eight fields. A
stem's weight in a tool is its best field's (field weight times that field's BM25 score), stored as
round(weight * scale); the combining is done on arrays, with the same float64 arithmetic and rounding (half
to even) as Python's `max(...)` and `round(...)` on each pair.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EMPTY = 0  # the stem id of an empty document's one token (bm25s's own empty token is "")
Postings = dict[str, list[list[int]]]  # stem -> [[tool numbers], [weights]], tool numbers ascending


def _field_scores(documents: Sequence[Sequence[int]], vocabulary: dict[str, int]) -> tuple[Any, Any, Any] | None:
    """bm25s's (data, indices, indptr) of one field: the BM25 weight of each (stem id, document), by stem id."""
    if not any(documents):
        return None
    if "numpy" not in sys.modules:  # nothing here uses its linear algebra: one BLAS thread, half the import's CPU
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import bm25s  # with numpy: only where a search index is built (~0.25 s of a small API's run)

    model = bm25s.BM25()
    model.index(([doc or (EMPTY,) for doc in documents], vocabulary), show_progress=False)
    scores = model.scores
    return scores["data"], scores["indices"], scores["indptr"]


def combined_postings(
    fields: Mapping[str, Sequence[Sequence[int]]],
    weights: Mapping[str, float],
    vocabulary: dict[str, int],
    scale: int,
) -> Postings:
    """stem -> its tools and integer weights (only those above 0), stems sorted. `fields`: field name -> each
    tool's stem ids in that field; `vocabulary`: stem -> id, with "" as EMPTY."""
    import numpy as np

    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    documents = max((len(docs) for docs in fields.values()), default=0)
    for field, weight in sorted(weights.items()):
        found = _field_scores(fields[field], vocabulary) if weight > 0 else None
        if found is None:
            continue
        data, indices, indptr = found
        stems = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        keys.append(stems * documents + indices.astype(np.int64))
        values.append(data.astype(np.float64) * weight)  # as Python's float(score) * weight
    if not keys:
        return {}
    all_keys, all_values = np.concatenate(keys), np.concatenate(values)
    del keys[:], values[:]
    return _postings(all_keys, all_values, documents, vocabulary, scale)


def _postings(keys: np.ndarray, values: np.ndarray, documents: int, vocabulary: dict[str, int], scale: int) -> Postings:
    """The best value of each (stem, document) key, scaled and rounded; those above 0 grouped by stem. Only the
    lists the index keeps become Python objects (a stem's slice of the arrays at a time)."""
    import numpy as np

    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    del order
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    best = np.maximum.reduceat(values, starts)
    keys = keys[starts]
    del values, starts
    weights = np.rint(best * scale)  # round(): half to even, as Python's round of the same float
    kept = (weights > 0) & (keys // documents != vocabulary.get("", EMPTY))
    keys, weights = keys[kept], weights[kept].astype(np.int64)
    stem_of, tools = keys // documents, keys % documents
    del keys, kept
    bounds = np.flatnonzero(np.r_[True, stem_of[1:] != stem_of[:-1], True]).tolist()
    spans = dict(zip(stem_of[bounds[:-1]].tolist(), zip(bounds[:-1], bounds[1:])))
    out: Postings = {}
    for stem, number in sorted(vocabulary.items()):
        span = spans.get(number)
        if span is not None:
            start, end = span
            out[stem] = [tools[start:end].tolist(), weights[start:end].tolist()]
    return out
