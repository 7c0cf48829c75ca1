"""Ranking over a search index (search_index.build_index's data): the generation-side twin of the generated
search.py, which ranks exactly the same way (tested); the benchmark uses it without generating a package.

First stage: each tool's score is the sum of its weights for the query's stems (a stem the query has counts
1, an indexed stem it is a prefix of, or the reverse, the prefix weight, a stem one of the query's thesaurus
phrases stands for the synonym weight; evidence adds up). Second stage, over the first `depth` tools: a tool
whose resource (the path's last named segment, and what a sub-collection belongs to) the query names scores
`resource` more, and a tool scores up to `coverage` more for the share of the query's words that say what it
is: its name, title, summary, path or the verbs of its method, directly or through a prefix or the thesaurus;
a tool that reads when the query changes, or the reverse, scores `intent` less; and one whose path takes what
the query's values identify ("issue 42": {issue_number}; "cus_123": /customers/{customer}) up to `values` more.
An id's prefix names what it identifies when it abbreviates one of the API's path nouns (`nouns`): cus ->
customer, acct -> account, pi -> payment intent (initials); its words join the query's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .search_action import action_bonus
from .search_query import Hints, Value

MAX_MEANINGS = 2  # an id prefix that abbreviates more of the API's nouns than this names none of them


def id_nouns(index: Mapping[str, Any], prefix: str) -> list[str]:
    """The stems of what an id's prefix abbreviates among the API's path nouns: the nouns whose words' initials
    it is (pi: payment intent), else the one-word nouns it starts (cus: custom), else those that start with its
    first letter and hold its letters in order (acct: account); none when more than MAX_MEANINGS fit."""
    if not prefix:
        return []
    nouns = [noun.split(" ") for noun in index.get("values", {}).get("nouns", [])]
    letters = re.compile(".*".join(re.escape(c) for c in prefix))
    found = (
        [n for n in nouns if len(n) > 1 and "".join(w[0] for w in n) == prefix]
        or [n for n in nouns if len(n) == 1 and n[0].startswith(prefix)]
        or [n for n in nouns if len(n) == 1 and n[0][0] == prefix[0] and letters.search(n[0])]
    )
    return [stem for noun in found for stem in noun] if len(found) <= MAX_MEANINGS else []


def expand(
    index: Mapping[str, Any], stems: Iterable[str], sequence: Sequence[str] = ()
) -> tuple[dict[str, float], dict[str, set[str]]]:
    """Query stems -> the indexed stems to look up with how much each counts, and for each query stem the
    indexed stems it leads to (itself, its prefix relatives, what the phrases it is part of stand for). A quoted
    thesaurus phrase counts when it occurs word for word in `sequence` (the stems of all the query's words)."""
    terms: Mapping[str, Any] = index["terms"]
    prefix = index.get("prefix", {})
    weight, shortest = float(prefix.get("weight", 0)), int(prefix.get("min", 4))
    said = sorted(set(stems))
    out: dict[str, float] = {}
    reach: dict[str, set[str]] = {stem: {stem} for stem in said}
    for stem in said:
        out[stem] = out.get(stem, 0.0) + 1.0
        if weight <= 0 or len(stem) < shortest:
            continue
        for term in terms:
            if term != stem and (term.startswith(stem) or (len(term) >= shortest and stem.startswith(term))):
                out[term] = out.get(term, 0.0) + weight
                reach[stem].add(term)
    synonyms = index.get("synonyms", {})
    share = float(synonyms.get("weight", 0))
    said_in_order = f" {' '.join(sequence)} "
    for table, quoted in ((synonyms.get("phrases", {}), False), (synonyms.get("sequences", {}), True)):
        for phrase, targets in table.items() if share > 0 else ():
            words = phrase.split(" ")
            if f" {phrase} " in said_in_order if quoted else all(word in reach for word in words):
                for target in targets:
                    if target not in reach:
                        out[target] = out.get(target, 0.0) + share
                        for word in words:
                            if word in reach:  # a quoted phrase's stop words are none of the query's stems
                                reach[word].add(target)
    return out, reach


def scores(
    index: Mapping[str, Any], expanded: Mapping[str, float], allowed: set[int] | None = None
) -> dict[int, float]:
    """First stage: tool -> the sum of its weights for the expanded query (only `allowed` tools, when given)."""
    out: dict[int, float] = {}
    terms: Mapping[str, Any] = index["terms"]
    for stem, share in expanded.items():
        postings = terms.get(stem)
        if not postings:
            continue
        for doc, weight in zip(postings[0], postings[1]):
            if allowed is None or doc in allowed:
                out[doc] = out.get(doc, 0.0) + weight * share
    return out


def rerank(
    index: Mapping[str, Any],
    ranked: list[tuple[int, float]],
    expanded: Mapping[str, float],
    reach: Mapping[str, set[str]],
    hints: Hints | None = None,
) -> list[tuple[int, float]]:
    """Second stage: the first `depth` tools scored again (resource named, share of the query covered, the
    query's intent and values); the others keep their order after them."""
    config = index.get("rerank") or {}
    depth, bonus, share = (
        int(config.get("depth", 0)),
        float(config.get("resource", 0)),
        float(config.get("coverage", 0)),
    )
    if depth <= 0:
        return ranked
    tools: list[Mapping[str, Any]] = index["tools"]
    verbs: list[list[str]] = index.get("verbs", [])
    intent, against = (hints.intent if hints else None), float(index.get("intent", {}).get("weight", 0))
    reads = set(index.get("reads", ()))
    bound = _bound(index, hints.values if hints else (), reach)
    lift = float(index.get("values", {}).get("weight", 0))
    head = []
    for doc, score in ranked[:depth]:
        tool = tools[doc]
        if bonus > 0 and any(stem in expanded for stem in str(tool.get("resource", "")).split()):
            score *= 1.0 + bonus
        if share > 0 and reach:
            words = set(str(tool.get("words", "")).split())
            verb = tool.get("verbs")
            if isinstance(verb, int) and 0 <= verb < len(verbs):
                words.update(verbs[verb])
            covered = sum(1 for found in reach.values() if not found.isdisjoint(words))
            score *= 1.0 + share * covered / len(reach)
        if intent and against > 0 and (tool.get("verbs") in reads) != (intent == "read"):
            score *= 1.0 - against
        if bound and lift > 0:
            keys = set(str(tool.get("keys", "")).split())
            score *= 1.0 + lift * sum(1 for stems in bound if not stems.isdisjoint(keys)) / len(bound)
        head.append((doc, score))
    return sorted(head, key=lambda item: (-item[1], item[0])) + ranked[depth:]


def _bound(index: Mapping[str, Any], found: Sequence[Value], reach: Mapping[str, set[str]]) -> list[set[str]]:
    """For each of the query's values, the stems that may name what it identifies: what the words before it lead
    to, and what its id prefix abbreviates; values with none are left out."""
    out = []
    for value in found:
        stems = {term for word in (*value.words, *id_nouns(index, value.prefix)) for term in reach.get(word, ())}
        if stems:
            out.append(stems)
    return out


def rank(index: Mapping[str, Any], stems: Iterable[str], limit: int, hints: Hints | None = None) -> list[int]:
    """Tool numbers, best first, for a query's stems (search_analyzer.Analyzer.query) and what else it says
    (Analyzer.hints: its id prefixes' nouns join its stems)."""
    words = list(stems) + [stem for value in (hints.values if hints else ()) for stem in id_nouns(index, value.prefix)]
    expanded, reach = expand(index, words, hints.sequence if hints else ())
    ranked = sorted(scores(index, expanded).items(), key=lambda item: (-item[1], item[0]))
    ranked = action_bonus(index, ranked, set(hints.actions) if hints else set(), expanded)
    return [doc for doc, _ in rerank(index, ranked, expanded, reach, hints)[:limit]]
