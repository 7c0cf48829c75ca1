"""The search index's weights and text analysis, against what they reproduce: bm25s's per-field BM25 weights combined
as plain Python would (on GitHub's operations), and the analysis of a whole text (search_index analyses it piece by
piece)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import bm25s
import numpy as np
import pytest

from codegen.surface.search_analyzer import STOPWORDS, Analyzer
from codegen.surface.search_analyzer import split_words as _words
from codegen.surface.search_index import SCALE
from codegen.surface.search_weights import EMPTY, Postings, _field_scores, combined_postings

from conftest import PETSTORE
from named_specs import named_specs

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@pytest.fixture(scope="module")
def github_fields() -> tuple[dict[str, list[tuple[int, ...]]], dict[str, int]]:
    """Texts of GitHub's operations as stem ids, field by field (one field mostly empty, one all empty), and the
    vocabulary."""
    path = named_specs().get("github", "")
    if not Path(path).is_file():
        pytest.skip("corpus missing github: run tools/fetch-corpus")
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    operations = [op for item in document["paths"].values() for method, op in item.items() if method in METHODS]
    operations = operations[::2]  # half of them: enough for every case, in half the time
    analyzer = Analyzer()
    texts = {
        "summary": [str(op.get("summary", "")) for op in operations],
        "description": [str(op.get("description", ""))[:1500] for op in operations],
        "name": [str(op.get("operationId", "")) for op in operations],
        "params": [json.dumps(op.get("parameters", []))[:800] for op in operations],
        "deprecated": ["deprecated" if op.get("deprecated") else "" for op in operations],
        "nothing": ["" for _ in operations],
    }
    return {field: analyzer.all_ids(values) for field, values in texts.items()}, analyzer.vocabulary


def bm25s_scores(documents: Sequence[Sequence[int]], vocabulary: dict[str, int]) -> tuple[np.ndarray, ...]:
    """bm25s's (stem ids, document numbers, float32 weights) of one field, by stem then document."""
    model = bm25s.BM25()
    model.index(([doc or (EMPTY,) for doc in documents], vocabulary), show_progress=False)
    data, indices, indptr = model.scores["data"], model.scores["indices"], model.scores["indptr"]
    stems = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((indices, stems))
    return stems[order], indices[order], data[order]


def reference_postings(
    fields: Mapping[str, Sequence[Sequence[int]]], weights: Mapping[str, float], vocabulary: dict[str, int]
) -> Postings:
    """combined_postings as plain Python over bm25s's weights: each (stem, tool)'s best field, rounded."""
    best: dict[tuple[int, int], float] = {}
    for field, weight in weights.items():
        if weight <= 0 or not any(fields[field]):
            continue
        stems, docs, scores = bm25s_scores(fields[field], vocabulary)
        for stem, doc, score in zip(stems.tolist(), docs.tolist(), scores.tolist()):
            value = score * weight
            best[stem, doc] = max(best.get((stem, doc), value), value)
    names = {number: stem for stem, number in vocabulary.items()}
    out: Postings = {}
    for (stem, doc), value in sorted(best.items()):
        if round(value * SCALE) > 0 and stem != EMPTY:
            found = out.setdefault(names[stem], [[], []])
            found[0].append(doc)
            found[1].append(round(value * SCALE))
    return dict(sorted(out.items()))


def test_combined_postings_are_each_fields_bm25s_weights_at_their_best(
    github_fields: tuple[dict[str, list[tuple[int, ...]]], dict[str, int]],
) -> None:
    """The array combining of bm25s's per-field weights equals the same combining in plain Python."""
    fields, vocabulary = github_fields
    weights = {"summary": 1.6, "description": 1.2, "name": 1.0, "params": 0.45, "deprecated": 3.0, "nothing": 1.0}
    assert combined_postings(fields, weights, vocabulary, SCALE) == reference_postings(fields, weights, vocabulary)


TEXTS = [
    "listPetsByStatus and HTMLParser2Go, getV2Items",
    "<b>bold\ntext</b> <a href='x y'>link</a> 3 < 4 > 2",
    "ΟΔΟΣ ΟΔΟΣ.ΟΔΟΣ Σ aΣ ΣΑΣ",  # the final sigma: lower() looks at the letters around it
    "İstanbul KELVIN\u212a ǅungla ß ﬁle",  # lower() that changes the length or splits a letter
    "tabs\tand\u00a0no-break\u2003spaces\u3000and\x1ccontrol\x1fseparators\u0085next line",
    "snake_case_words __dunder__ a-b c/d e.f (g) [h] {i} I am the X",
    "",
    "   ",
]


def test_analysing_piece_by_piece_is_analysing_the_whole_text() -> None:
    texts = list(TEXTS)
    for source in (PETSTORE, Path(__file__)):
        texts += source.read_text(encoding="utf-8").splitlines()
    analyzer = Analyzer()
    stem = analyzer._stemmer.stemWord
    for text in texts:
        whole = [stem(w) for w in _words(text) if len(w) > 1 and w not in STOPWORDS]
        assert analyzer.stems(text) == whole, text
        assert [analyzer.vocabulary[s] for s in whole] == list(analyzer.ids(text)), text


def test_building_the_index_leaves_no_cyclic_garbage() -> None:
    """The generator builds it with the collector off: what it drops must be freed by reference counts. Checked in
    a process of its own: another test's server thread ending meanwhile would free cyclic garbage of its own."""
    script = (
        "import gc\n"
        "from codegen.config import Config\n"
        "from codegen.pipeline import analyze\n"
        "from codegen.surface.search_index import build_index\n"
        f"tools = analyze(Config(spec={str(PETSTORE)!r}, validate=False))[1]\n"
        "build_index(tools)\n"  # the modules it imports the first time (import leaves cyclic garbage)
        "gc.collect()\n"
        "gc.disable()\n"
        "build_index(tools)\n"
        "print(gc.collect())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


@pytest.mark.parametrize("seed", range(4))
def test_field_weights_are_bm25s_index_weights(seed: int) -> None:
    """Scoring a document length at a time gives bm25s's index's float32 weights exactly: repeated stems, empty
    documents, stems no document holds, one-word and long documents."""
    rng = np.random.default_rng(seed)
    vocabulary = {"": EMPTY} | {f"s{n}": n for n in range(1, 400)}
    documents = [
        tuple(int(i) for i in rng.integers(1, 300 if seed % 2 else 40, size=int(rng.integers(0, 60))))
        for _ in range(int(rng.integers(5, 300)))
    ]
    found = _field_scores(documents, vocabulary)
    assert found is not None
    weights, stems, docs = found
    order = np.lexsort((docs, stems))
    expected = bm25s_scores(documents, vocabulary)
    assert stems[order].tolist() == expected[0].tolist()
    assert docs[order].tolist() == expected[1].tolist()
    assert weights.dtype == expected[2].dtype
    assert weights[order].tobytes() == expected[2].tobytes()


def test_a_bm25s_without_its_scoring_functions_is_still_used_through_its_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batched scoring uses two of bm25s's scoring helpers; a bm25s without them gives the same weights through
    its own index."""
    from codegen.surface import search_weights

    documents = [(1, 2, 2, 3), (), (3, 4), (1, 1, 1, 5, 6)]
    vocabulary = {"": EMPTY} | {f"s{n}": n for n in range(1, 7)}
    batched = _field_scores(documents, vocabulary)
    monkeypatch.setattr(search_weights, "_selectors", lambda scoring: None)
    indexed = _field_scores(documents, vocabulary)
    assert batched is not None and indexed is not None
    for found in (batched, indexed):
        order = np.lexsort((found[2], found[1]))
        assert [a[order].tolist() for a in found] == [a[np.lexsort((batched[2], batched[1]))].tolist() for a in batched]
