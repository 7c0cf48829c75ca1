"""The search index's stemmer: PyStemmer (the Snowball project's C build, which `snowballstemmer` uses when it is
installed) stems exactly as `snowballstemmer`'s pure-Python English stemmer, which a generated server may use."""

from __future__ import annotations

import re
from pathlib import Path

from snowballstemmer.english_stemmer import EnglishStemmer

from codegen.surface.search_analyzer import Analyzer

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    ROOT / "codegen/surface/vocabulary.txt",
    ROOT / "tests/golden/petstore/src/petstore/tools.json",
    *sorted((ROOT / "bench/selection").rglob("*.yaml")),
]


def test_the_stemmer_in_use_stems_as_the_pure_python_one() -> None:
    words = {"running", "repositories", "generously", "ünïcode", "naïve", "caresses", "skies", "dying", "news"}
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        words.update(w for w in re.findall(r"[^\W_]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text).lower()))
    assert len(words) > 1000
    analyzer, pure = Analyzer(), EnglishStemmer()
    stem = analyzer._stemmer.stemWord
    assert [stem(w) for w in sorted(words)] == [pure.stemWord(w) for w in sorted(words)]
