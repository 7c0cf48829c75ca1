"""What a request does to what: the action/object match of the discovery search (a component added to the score).

A request usually says one action (create, read, change or remove) and the thing it acts on ("delete my old test
repository", "hang up the call"). The operation that does exactly that is most often the plain one of the
thing's path (DELETE /repos/{owner}/{repo}, POST /Calls/{Sid}), which BM25 can rank below longer operations
that happen to match more of the request's other words. So each tool ships what it does (its actions: from its
summary's first word when that is a known verb, else the verb its path's last segment starts with, else its
HTTP method and the shape of its path) and how deep its path is (its named segments); a tool whose resource the
query names (search_rank.rerank's resource) and whose actions include one the query says scores more, by a share
of the best first-stage score: the shallower its path, the more. The query's actions are those of its verb (the
first word after the fillers, a two-word verb such as "get rid of", or a question word: read); a tool whose own
verb, one that is not an action word (Archive project, Merge a pull request), starts the query scores the same.
An object is also named by the words the descriptions of several of its tools use and few other objects' do
(aliases, mined from the API's own text: "body" for Twilio's Messages).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set as AbstractSet
from functools import lru_cache
from typing import Any

ACTION_WEIGHT = 0.25  # a match's share of the best first-stage score, for a path of one named segment

# The words for each action (search_index's method words): c(reate), r(ead), u(pdate), d(elete).
ACTION_WORDS: Mapping[str, str] = {
    "c": "create add new make start register post publish write submit generate open insert upload invite",
    "r": "get show retrieve read view fetch see look describe detail info list find search browse count history",
    "u": "update change edit modify rename set fix switch adjust replace mark toggle enable disable patch",
    "d": "delete remove cancel destroy revoke drop erase discard clear unset purge rid",
}
# two-word verbs whose first word alone says something else (get: read), and the words that start a question
PHRASAL: Mapping[str, str] = {
    "get rid": "d",
    "set up": "c",
    "look up": "r",
    "find out": "r",
    "turn on": "u",
    "turn off": "u",
    "switch on": "u",
    "switch off": "u",
    "shut down": "d",
    "take down": "d",
    "clean up": "d",
    "sign up": "c",
}
QUESTIONS = frozenset("who whom whose what which where when how is are was were does do did has have any".split())
_METHOD_ACTIONS: Mapping[tuple[str, str], str] = {
    ("GET", "collection"): "r",
    ("GET", "item"): "r",
    ("GET", "action"): "r",
    ("HEAD", "collection"): "r",
    ("HEAD", "item"): "r",
    ("HEAD", "action"): "r",
    ("POST", "collection"): "c",
    ("POST", "item"): "u",
    ("POST", "action"): "cu",
    ("PUT", "collection"): "uc",
    ("PUT", "item"): "uc",
    ("PUT", "action"): "uc",
    ("PATCH", "collection"): "u",
    ("PATCH", "item"): "u",
    ("PATCH", "action"): "u",
    ("DELETE", "collection"): "d",
    ("DELETE", "item"): "d",
    ("DELETE", "action"): "d",
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # as search_index's
_WORD = re.compile(r"[^\W_]+")
_VERSION = re.compile(r"v\d+(\.\d+)*|api", re.IGNORECASE)
_LETTER = re.compile(r"[A-Za-z]")


_ACTIONS_OF: Mapping[str, str] = {
    word: "".join(action for action, words in ACTION_WORDS.items() if word in words.split())
    for word in " ".join(ACTION_WORDS.values()).split()
}


def verb_actions(word: str) -> str:
    """The actions a (lower-case) word says, in c, r, u, d order; "" when none."""
    return _ACTIONS_OF.get(word, "")


@lru_cache(maxsize=65536)  # pure, and a large API's operations share their summaries
def _first_word(summary: str) -> str:
    """The summary's first word, lower-case ("" when it has none)."""
    found = _WORD.search(summary.lower())
    return found.group() if found else ""


def own_verb(summary: str, path_verb: str | None) -> str:
    """The word an operation's summary starts with (else its path verb) when it is not one of the action words
    (Archive project, Merge a pull request, /conversations.kick): a request that starts with it asks for it."""
    first = _first_word(summary) or (path_verb.lower() if path_verb else "")
    return first if first and not verb_actions(first) else ""


def tool_actions(method: str, shape: str, summary: str, path_verb: str | None) -> str:
    """What an operation does: its summary's first word's actions, else its path verb's, else its method's."""
    first = _first_word(summary)
    found = verb_actions(first) if first else ""
    if not found and path_verb:
        found = verb_actions(path_verb)
    return found or _METHOD_ACTIONS.get((method, shape), "")


_FORMAT = re.compile(r"\.(json|xml|csv|txt)$", re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[^A-Za-z0-9]+")


@lru_cache(maxsize=65536)  # pure, and a large API's operations share their paths
def path_verb(path: str) -> str | None:
    """The first word of the path's last segment when it names an action (/goals/{id}/removeFollowers: remove)."""
    segments = [_FORMAT.sub("", s) for s in path.split("/") if s and not s.startswith("{")]
    if not segments:
        return None
    last = segments[-1].split(".")[-1] if "." in segments[-1] else segments[-1]
    first = _WORD.findall(_CAMEL.sub(" ", last).replace("-", " ").lower())
    if len(first) < 2 and "." not in segments[-1]:  # one plain word (/customers, /refunds): a noun, not an action
        return None
    return first[0] if first else None


@lru_cache(maxsize=65536)  # pure, and a large API's operations share their paths
def path_shape(path: str) -> str:
    """collection (/customers), item (/customers/{id}) or action (/invoices/{id}/send)."""
    segments = [s for s in path.split("/") if s]
    if not segments or segments[-1].startswith("{"):
        return "item" if segments else "collection"
    return "action" if any(s.startswith("{") for s in segments[:-1]) else "collection"


@lru_cache(maxsize=65536)  # pure, and a large API's operations share their paths
def path_object(path: str) -> str:
    """The words of what the operation acts on: its path's last named segment (its last dotted part), without a
    format extension or the verb it starts with (/goals/{id}/removeFollowers: Followers, /chat.postMessage:
    Message, /Calls.json: Calls); the part or segment before it when the verb is all it says
    (/conversations.create: conversations)."""
    named = [_FORMAT.sub("", s) for s in _named_segments(path)]
    parts = [p for s in named if not _VERSION.fullmatch(s) for p in s.split(".") if p]
    while parts:
        words = [w for w in _SPLIT.split(parts.pop()) if w]
        if words and verb_actions(words[0].lower()):
            words = words[1:]
        if words:
            return " ".join(words)
    return ""


@lru_cache(maxsize=65536)  # pure, and a large API's operations share their paths
def depth(path: str) -> int:
    """The path's named segments (not parameters, versions or dates): /repos/{owner}/{repo} 1."""
    return max(1, sum(1 for s in _named_segments(path) if not _VERSION.fullmatch(s)))


def _named_segments(path: str) -> list[str]:
    """The path's segments that are not parameters and hold a letter."""
    return [s for s in path.split("/") if s and not s.startswith("{") and _LETTER.search(s)]


def action_fields(
    method: str, path: str, summary: str, resource: str, stems: Callable[[str], Sequence[str]]
) -> dict[str, Any]:
    """What search.json ships of a tool for this component: its actions ("act"), the stems of its object when they
    are not its resource's ("object", see tool_object) and its path's depth when above 1 ("depth")."""
    named_verb, deep = path_verb(path), depth(path)
    out: dict[str, Any] = {"act": tool_actions(method, path_shape(path), summary, named_verb)}
    verb = own_verb(summary, named_verb)
    if verb:
        out["verb"] = " ".join(stems(verb))
    found = " ".join(stems(path_object(path)))
    if found != resource:
        out["object"] = found
    if deep > 1:
        out["depth"] = deep
    return out


def tool_object(tool: Mapping[str, Any]) -> list[str]:
    """The stems of a tool's object (its resource's when search.json leaves it out)."""
    return str(tool.get("object", tool.get("resource", ""))).split()


def action_stems(stem: Callable[[str], Iterable[str]]) -> dict[str, list[str]]:
    """Action -> the stems of its words, as search.json ships them."""
    return {action: sorted({s for word in words.split() for s in stem(word)}) for action, words in ACTION_WORDS.items()}


def query_actions(first: Sequence[str], words: Mapping[str, Any], stem: Callable[[str], str]) -> set[str]:
    """The actions the request says with its verb: its first words after the fillers (`first`, search_query's
    first_words) are a phrasal verb ("get rid of", "set up") or start with a verb; a question reads. `words`:
    search.json's intent words (search_analyzer.Analyzer.intent_words: "actions", "phrasal", "questions")."""
    if not first:
        return set()
    phrasal: Mapping[str, str] = words.get("phrasal", {})
    two = " ".join(first[:2])
    if two in phrasal:
        return set(phrasal[two])
    if first[0] in words.get("questions", ()):
        return {"r"}
    said = stem(first[0])
    return {action for action, found in words.get("actions", {}).items() if said in found} | {said}


ALIAS_TOOLS = 2  # a word in the descriptions of this many of an object's tools...
ALIAS_OBJECTS = 2  # ...and of no more objects than this names that object


def aliases(objects: Iterable[str], texts: Iterable[AbstractSet[str]]) -> dict[str, list[str]]:
    """Stem -> the objects it names: words the descriptions of several of one object's tools use, and few other
    objects' ("text" in Messages' descriptions). `objects`: each tool's object stems; `texts`: each tool's stems
    (read once, one at a time: a generator keeps a large API's from being held all at once)."""
    tools: dict[str, Counter[str]] = {}  # object -> stem -> the object's tools whose text has the stem
    for thing, stems in zip(objects, texts):
        if thing:
            tools.setdefault(thing, Counter()).update(stems)
    counts: dict[str, dict[str, int]] = {}  # stem -> object -> its tools whose text has the stem (not its own word)
    for thing, found_in in tools.items():
        own = thing.split()
        for stem, count in found_in.items():
            if stem not in own:
                counts.setdefault(stem, {})[thing] = count
    out = {}
    for stem, found in sorted(counts.items()):
        named = sorted(thing for thing, count in found.items() if count >= ALIAS_TOOLS)
        if named and len(found) <= ALIAS_OBJECTS:
            out[stem] = named
    return out


def action_config(
    paths: Sequence[str], texts: Sequence[Sequence[str]], stems: Callable[[str], Sequence[str]]
) -> dict[str, Any]:
    """search.json's "actions": the weight and the aliases of the objects of the tools at `paths` (`texts`: each
    tool's summary, description and arguments' descriptions, each stemmed on its own: the index has them already)."""
    objects: dict[str, str] = {}  # path -> its object's stems (a large API's operations share their paths)
    for path in paths:
        if path not in objects:
            objects[path] = " ".join(stems(path_object(path)))
    return {
        "weight": ACTION_WEIGHT,
        "aliases": aliases(map(objects.__getitem__, paths), (set().union(*map(stems, parts)) for parts in texts)),
    }


def action_bonus(
    index: Mapping[str, Any], ranked: Sequence[tuple[int, float]], said: set[str], expanded: Mapping[str, float]
) -> list[tuple[int, float]]:
    """`ranked` (first-stage scores, best first) with each tool whose object the query names and whose actions
    include one the query says, or whose own verb (own_verb) the query starts with, scoring `weight` times the best
    score divided by its path's depth more."""
    config = index.get("actions") or {}
    weight = float(config.get("weight", 0))
    if weight <= 0 or not said or not ranked:
        return list(ranked)
    top = ranked[0][1]
    tools: list[Mapping[str, Any]] = index["tools"]
    mined: Mapping[str, list[str]] = config.get("aliases", {})
    called = {thing for stem in expanded for thing in mined.get(stem, ())}
    out = []
    for doc, score in ranked:
        tool = tools[doc]
        thing = tool_object(tool)
        named = " ".join(thing) in called or any(stem in expanded for stem in thing)
        if str(tool.get("verb", "-")) in said or not said.isdisjoint(str(tool.get("act", ""))) and named:
            score += weight * top / max(1, int(tool.get("depth", 1)))
        out.append((doc, score))
    return sorted(out, key=lambda item: (-item[1], item[0]))
