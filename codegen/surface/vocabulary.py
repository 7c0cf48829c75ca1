"""The discovery search's thesaurus: what users call the things an API names (vocabulary.txt).

A line `issue <- bug, ticket` says a query's "bug" or "ticket" should also find the tools about issues.
`synonyms` keeps the lines that fit one API (every word on the left is in its index) and turns them into
the data search.json ships: query phrase (its stems, space-joined) -> the API stems it also looks for.
A phrase in double quotes (`authenticated user <- "signed in"`) must occur word for word, its stop words
included: `sequences` keys it by all its words' stems ("sign in"), so that it does not shrink to one common
word ("sign") and fire on any query that has it. The generated search.py and `search_rank.expand` apply both
the same way; nothing here runs at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

SYNONYM_WEIGHT = 0.6  # a word the user did not type counts for this share of one they did
MAX_PHRASE = 3  # stems in a query phrase
MAX_SEQUENCE = 4  # words in a quoted phrase, stop words too


@dataclass(frozen=True)
class Rule:
    api: str  # the words an API uses
    said: tuple[str, ...]  # what users say instead


def parse(text: str) -> list[Rule]:
    """The rules of a vocabulary file; comments (#) and blank lines are skipped."""
    rules = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "<-" not in line:
            continue
        api, said = line.split("<-", 1)
        phrases = tuple(p.strip() for p in said.split(",") if p.strip().strip('"'))
        if api.strip() and phrases:
            rules.append(Rule(api.strip(), phrases))
    return rules


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    return tuple(parse(files(__package__).joinpath("vocabulary.txt").read_text(encoding="utf-8")))


def synonyms(
    terms: Collection[str], stems: Callable[[str], list[str]], source: Iterable[Rule] | None = None
) -> dict[str, list[str]]:
    """Query phrase -> API stems, for the rules whose API words all occur in `terms` (an index's stems)."""
    return _table(terms, stems, stems, False, source)


def sequences(
    terms: Collection[str],
    stems: Callable[[str], list[str]],
    every: Callable[[str], list[str]],
    source: Iterable[Rule] | None = None,
) -> dict[str, list[str]]:
    """Quoted phrase (the stems of all its words, stop words too: `every`) -> API stems, for the rules whose API
    words all occur in `terms`."""
    return _table(terms, stems, every, True, source)


def _table(
    terms: Collection[str],
    stems: Callable[[str], list[str]],
    key_of: Callable[[str], list[str]],
    quoted: bool,
    source: Iterable[Rule] | None,
) -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for rule in rules() if source is None else source:
        targets = stems(rule.api)
        if not targets or any(t not in terms for t in targets):
            continue
        for phrase in rule.said:
            if is_quoted(phrase) != quoted:
                continue
            key = key_of(phrase.strip('"'))
            if 0 < len(key) <= (MAX_SEQUENCE if quoted else MAX_PHRASE):
                out.setdefault(" ".join(key), set()).update(t for t in targets if t not in key)
    return {key: sorted(values) for key, values in sorted(out.items()) if values}


def is_quoted(phrase: str) -> bool:
    """Whether a phrase must occur word for word ("signed in")."""
    return len(phrase) > 2 and phrase.startswith('"') and phrase.endswith('"')
