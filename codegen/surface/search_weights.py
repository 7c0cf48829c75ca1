"""The search index's weights: each field scored with BM25 by bm25s's functions, fields combined, rounded to integers.

The documents come as stem ids (search_analyzer.Analyzer numbers each stem once, for all fields). Each field's weights
are the ones bm25s's index stores, computed a document length at a time rather than a document at a time
(_field_scores). A stem's weight in a tool is its best field's (field weight times that field's BM25 score), stored
as round(weight * scale); the combining is done on arrays, with the same float64 arithmetic and rounding (half to
even) as Python's `max(...)` and `round(...)` on each pair.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EMPTY = 0  # the stem id of an empty document's one token (bm25s's own empty token is "")
Postings = dict[str, list[list[int]]]  # stem -> [[tool numbers], [weights]], tool numbers ascending


def load_libraries() -> None:
    """Import bm25s and numpy: only where a search index is built (~0.15 s of a small API's run)."""
    if "numpy" not in sys.modules:  # nothing here uses its linear algebra: one BLAS thread, half the import's CPU
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import bm25s  # noqa: F401
    from bm25s import scoring  # noqa: F401


def _field_scores(documents: Sequence[Sequence[int]], vocabulary: dict[str, int]) -> tuple[Any, Any, Any] | None:
    """bm25s's BM25 weight of each (stem id, document) of one field, as arrays (weights, stem ids, documents).

    bm25s's own index walks the documents one by one (a dozen small array operations each: most of a large API's
    generation time in this module). Here the same library functions score all documents of one length at once:
    its idf function once per distinct document frequency, its term-frequency function once per distinct document
    length, with the arguments and dtypes its loop passes, so every weight is the float32 bm25s stores (tests
    compare with `BM25.index`). A method that needs bm25s's non-occurrence scores goes through `BM25.index`."""
    if not any(documents):
        return None
    load_libraries()
    import bm25s
    import numpy as np
    from bm25s import scoring

    model = bm25s.BM25()
    corpus = [doc or (EMPTY,) for doc in documents]
    selectors = _selectors(scoring)
    if selectors is None or model.method in model.methods_requiring_nonoccurrence:
        return _indexed(model, corpus, vocabulary)
    idf_select, tfc_select = selectors
    lengths = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
    average = np.array([len(doc) for doc in corpus]).mean()  # as bm25s computes it (a numpy float64)
    ids = np.fromiter(chain.from_iterable(corpus), dtype=np.int64, count=int(lengths.sum()))
    size = len(vocabulary)
    pairs, counts = np.unique(
        np.repeat(np.arange(len(corpus), dtype=np.int64), lengths) * size + ids, return_counts=True
    )
    docs, stems = np.divmod(pairs, size)
    del pairs, ids
    frequency = np.bincount(stems, minlength=size)  # documents holding each stem (a pair is one stem in one document)
    present = np.flatnonzero(frequency)
    idf_of = idf_select(model.idf_method)
    by_frequency = {df: idf_of(df, N=len(corpus)) for df in set(frequency[present].tolist())}
    idf = np.zeros(size, dtype=model.dtype)
    idf[present] = [by_frequency[df] for df in frequency[present].tolist()]  # Python floats, as bm25s assigns them
    tfc_of = tfc_select(model.method)
    term_frequencies = counts.astype(model.dtype)
    pair_lengths = lengths[docs]
    order = np.argsort(pair_lengths, kind="stable")
    bounds = np.flatnonzero(np.r_[True, np.diff(pair_lengths[order]) != 0, True]).tolist()
    weights = np.empty(len(counts), dtype=model.dtype)
    for start, end in zip(bounds[:-1], bounds[1:]):
        span = order[start:end]
        tfc = tfc_of(
            tf_array=term_frequencies[span],
            l_d=int(pair_lengths[span[0]]),
            l_avg=average,
            k1=model.k1,
            b=model.b,
            delta=model.delta,
        )
        weights[span] = idf[stems[span]] * tfc
    return weights, stems, docs


def _selectors(scoring: Any) -> tuple[Any, Any] | None:
    """bm25s's selectors of its idf and term-frequency functions, where this bm25s has them (else its index is used,
    a document at a time)."""
    idf_select = getattr(scoring, "_select_idf_scorer", None)
    tfc_select = getattr(scoring, "_select_tfc_scorer", None)
    return (idf_select, tfc_select) if callable(idf_select) and callable(tfc_select) else None


def _indexed(model: Any, corpus: list[Sequence[int]], vocabulary: dict[str, int]) -> tuple[Any, Any, Any]:
    """_field_scores's arrays from bm25s's index itself."""
    import numpy as np

    model.index((corpus, vocabulary), show_progress=False)
    data, indices, indptr = model.scores["data"], model.scores["indices"], model.scores["indptr"]
    return data, np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr)), indices


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
        data, stems, docs = found
        keys.append(stems.astype(np.int64) * documents + docs.astype(np.int64))
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
