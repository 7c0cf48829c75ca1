"""What the search index reads of an operation's path: its resource, the things its parameters identify, its
group, and the whole of it once per distinct path (PathFacts: a large API's operations share their paths).

Pure: a path (and the analyzer's `stemmed`) gives the same facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from .search_action import path_shape

# a path parameter's words that say it is an identifier, not what it identifies ({issue_number}, {task_gid})
ID_WORDS = frozenset("id ids number num gid key name slug sid uuid identifier code".split())

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # as search_index's
_WORD = re.compile(r"[^\W_]+")
_VERSION = re.compile(r"v\d+(\.\d+)*|api", re.IGNORECASE)  # a path segment that names nothing
_SEGMENT = re.compile(r"[/.]")  # what separates a path's segments


def resource(path: str) -> str:
    """The words of what the operation acts on: the path's last named segment (/repos/{owner}/{repo} ->
    "repos"), and for a sub-collection or an action (/issues/{number}/comments, /invoices/{id}/send) also
    the named segment before the parameter (the thing it belongs to). Version segments (v1, api) are skipped."""
    named = [
        (i, s)
        for i, s in enumerate(segment for segment in path.split("/") if segment)
        if not s.startswith("{") and not _VERSION.fullmatch(s)
    ]
    if not named:
        return ""
    words = [named[-1][1]]
    if path_shape(path) == "action" and len(named) > 1:
        words.insert(0, named[-2][1])
    return " ".join(words)


def path_keys(path: str) -> list[str]:
    """What the path's parameters identify, each as words: a parameter's name without its identifier words
    ({issue_number} -> "issue") and the named segment before it (/customers/{customer} -> "customers")."""
    out = []
    before = "{"  # the segment before, as if a parameter before the first
    for segment in _SEGMENT.split(path):
        if not segment:
            continue
        if segment.startswith("{"):
            words = _key_words(segment)
            if words:
                out.append(words)
            if not before.startswith("{"):
                out.append(_plain_words(before))
        before = segment
    return out


@lru_cache(maxsize=65536)  # pure, and paths share their segments
def _key_words(segment: str) -> str:
    """A path parameter's words (lower case) that are not identifier words."""
    return " ".join(w for w in _WORD.findall(_CAMEL.sub(" ", segment).lower()) if w not in ID_WORDS)


@lru_cache(maxsize=65536)  # pure, and paths share their segments
def _plain_words(segment: str) -> str:
    return " ".join(_WORD.findall(_CAMEL.sub(" ", segment)))


def path_group(path: str) -> str:
    """The first segment of `path` that names something ("other" when none does)."""
    for segment in path.split("/"):
        word = segment.split(".")[0]
        if word and not word.startswith("{") and not _VERSION.fullmatch(word):
            return word
    return "other"


class PathFacts(NamedTuple):
    """What the index reads of a path, worked out once for all the operations on it."""

    text: str  # the "path" field: its named segments
    shape: str  # path_shape
    group: str  # path_group: the group of a tool without tags
    keys: tuple[str, ...]  # the stems of each path key (path_keys) that has stems, space-joined
    key_stems: str  # the stems of all its keys, sorted and space-joined
    resource: str  # the stems of its resource, sorted and space-joined


def path_facts(path: str, stemmed: Callable[[str], tuple[str, ...]]) -> PathFacts:
    keys = [stemmed(key) for key in path_keys(path)]
    return PathFacts(
        text=" ".join(s for s in _SEGMENT.split(path) if s and not s.startswith("{")),
        shape=path_shape(path),
        group=path_group(path),
        keys=tuple(" ".join(key) for key in keys if key),
        key_stems=" ".join(sorted({stem for key in keys for stem in key})),
        resource=" ".join(sorted(set(stemmed(resource(path))))),
    )
