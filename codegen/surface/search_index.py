"""ToolSpecs -> the search index the discovery surface ships as data (search.json).

Each tool is a document with fields: its name, title, summary, description, tags, path, parameter names
(with their enum values) and the words its HTTP method stands for (create/add/new for POST, ...). Every
field is scored with BM25 on its own (search_weights.py: bm25s's figures) and the field scores are combined with
a weight per field, so a word in the name counts more than the same word deep in a description. Words
are stemmed with the Snowball English stemmer; the generated server stems a query the same way
(templates/search.py.jinja) and only sums the precomputed weights of its stems: no ranking library,
no numpy, nothing computed at start-up.

Pure: the same tools give byte-identical data (terms and postings sorted, weights rounded to integers).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .plans import ToolSpec
from .search_weights import postings
from .vocabulary import SYNONYM_WEIGHT, expand_phrases, synonyms

FORMAT = 1
SCALE = 100  # weights are stored as integers: round(weight * SCALE)
SUMMARY_CHARS = 120  # characters of a tool's summary in a search result
DESCRIPTION_CHARS = 1500  # characters of the operation description that are indexed
GROUP_CHARS = 40  # a group (tag) name longer than this is cut in the search_tools description

# How much a match in each field counts (tuned on bench/selection's GitHub and Stripe tasks, see
# bench/README.md). A stem's weight in a tool is its best field's, not the sum: the same word in the
# name, title, summary and path is one match, so tools matching more of the query's words rank first.
FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 1.0,
    "title": 0.5,
    "summary": 0.8,
    "description": 1.2,
    "tags": 0.9,
    "path": 2.0,
    "params": 1.2,
    "method": 3.0,
}
PREFIX_WEIGHT = 0.5  # a query stem that is a prefix of an indexed stem (or the reverse): repo ~ repositori
PREFIX_MIN = 4  # characters both need for that

# The words a user says for what an HTTP method does, by the shape of the path: a collection
# (/customers), one item (/customers/{id}) or an action on an item (/invoices/{id}/send).
_READ_ONE = "get show retrieve read view fetch see look open describe detail info what which who whose"
_READ_MANY = "list all every show find search browse see look which what who how many count history recent"
_CREATE = "create add new make start register post publish write submit generate set up open"
_CHANGE = "update change edit modify rename set fix switch adjust replace mark toggle enable disable"
_REMOVE = "delete remove cancel destroy revoke drop erase discard clear unset purge rid"
METHOD_WORDS: Mapping[tuple[str, str], str] = {
    ("GET", "collection"): _READ_MANY,
    ("GET", "item"): _READ_ONE,
    ("GET", "action"): f"{_READ_MANY} {_READ_ONE}",
    ("HEAD", "collection"): "check exists",
    ("HEAD", "item"): "check exists",
    ("HEAD", "action"): "check exists",
    ("POST", "collection"): _CREATE,
    ("POST", "item"): _CHANGE,
    ("POST", "action"): f"{_CREATE} {_CHANGE} send run do",
    ("PUT", "collection"): f"{_CHANGE} {_CREATE}",
    ("PUT", "item"): f"{_CHANGE} {_CREATE}",
    ("PUT", "action"): f"{_CHANGE} {_CREATE}",
    ("PATCH", "collection"): _CHANGE,
    ("PATCH", "item"): _CHANGE,
    ("PATCH", "action"): _CHANGE,
    ("DELETE", "collection"): _REMOVE,
    ("DELETE", "item"): _REMOVE,
    ("DELETE", "action"): _REMOVE,
}

# English words that carry no meaning for ranking (kept out of the index, so they never match).
STOPWORDS = frozenset(
    """a an and are as at be been but by can could do does for from has have he her him his how i if in
    into is it its me my of on or our should so than that the their them then there these they this those to
    us was we were when where while whom why will with would you your""".split()
)

_TAG = re.compile(r"<[^>]{0,200}>")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # where camelCase words meet
_WORD = re.compile(r"[^\W_]+")


class Analyzer:
    """Text -> stems. The generated search.py does exactly the same to a query (tested)."""

    def __init__(self) -> None:
        import snowballstemmer  # imported only where a search index is built (~0.15 s of a small API's run)

        self._stemmer = snowballstemmer.stemmer("english")
        self._cache: dict[str, str] = {}
        self._texts: dict[str, tuple[str, ...]] = {}  # a large API repeats its descriptions and summaries

    def words(self, text: str) -> list[str]:
        words = _WORD.findall(_CAMEL.sub(" ", _strip_markup(text)).lower())
        return [w for w in words if len(w) > 1 and w not in STOPWORDS]

    def stems(self, text: str) -> list[str]:
        return list(self.stem_tuple(text))

    def stem_tuple(self, text: str) -> tuple[str, ...]:
        found = self._texts.get(text)
        if found is None:
            found = self._texts[text] = tuple(self._stems(text))
        return found

    def forget_texts(self) -> None:
        """Drop the stems remembered per text (the stems remembered per word stay)."""
        self._texts.clear()

    def _stems(self, text: str) -> list[str]:
        out = []
        for word in self.words(text):
            stem = self._cache.get(word)
            if stem is None:
                stem = self._cache[word] = self._stemmer.stemWord(word)
            out.append(stem)
        return out


def _strip_markup(text: str) -> str:
    return _TAG.sub(" ", text)


def short_summary(tool: ToolSpec, limit: int | None = SUMMARY_CHARS) -> str:
    """One line saying what the tool does: the operation's summary, else its description's first sentence
    (cut at a word to `limit` characters, when given)."""
    text = " ".join(_strip_markup(tool.operation.summary or tool.operation.description or tool.title).split())
    if not tool.operation.summary:
        end = re.search(r"(?<=[.!?])\s", text)
        text = text[: end.start()] if end else text
    if limit is not None and len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text


def group_of(tool: ToolSpec) -> str:
    """The tool's group: its first tag, else the first path segment that names something."""
    if tool.operation.tags:
        return tool.operation.tags[0]
    for segment in tool.operation.path.split("/"):
        word = segment.split(".")[0]
        if word and not word.startswith("{") and not re.fullmatch(r"v\d+(\.\d+)*|api", word, re.IGNORECASE):
            return word
    return "other"


def _param_text(schema: Mapping[str, Any]) -> str:
    parts: list[str] = []
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for key, prop in properties.items():
            parts.append(str(key))
            if isinstance(prop, Mapping) and isinstance(prop.get("enum"), list):
                parts.extend(str(v) for v in prop["enum"][:20] if isinstance(v, str))
    return " ".join(parts)


# A path that names its action (/goals/{id}/removeFollowers, /chat.postMessage, /conversations.list): the verb
# it starts with says what the operation does better than the HTTP method (RPC-style APIs POST everything).
VERB_WORDS: Mapping[str, str] = {
    **{verb: _READ_MANY for verb in ("list", "search", "find", "query", "lookup")},
    **{verb: _READ_ONE for verb in ("get", "read", "info", "retrieve", "fetch", "show", "view", "describe")},
    **{verb: _CREATE for verb in ("create", "add", "new", "post", "insert", "register", "upload", "invite")},
    **{verb: _CHANGE for verb in ("update", "set", "edit", "modify", "rename", "change", "replace", "patch")},
    **{verb: _REMOVE for verb in ("delete", "remove", "cancel", "revoke", "destroy", "erase", "unset", "clear")},
}


def action_words(path: str) -> str | None:
    """The words of the verb the path's last segment starts with, if it starts with a known one."""
    segments = [s for s in path.split("/") if s and not s.startswith("{")]
    if not segments:
        return None
    last = segments[-1].split(".")[-1] if "." in segments[-1] else segments[-1]
    first = _WORD.findall(_CAMEL.sub(" ", last).replace("-", " ").lower())
    if len(first) < 2 and "." not in segments[-1]:  # one plain word (/customers, /refunds): a noun, not an action
        return None
    return VERB_WORDS.get(first[0]) if first else None


def path_shape(path: str) -> str:
    """collection (/customers), item (/customers/{id}) or action (/invoices/{id}/send)."""
    segments = [s for s in path.split("/") if s]
    if not segments or segments[-1].startswith("{"):
        return "item" if segments else "collection"
    return "action" if any(s.startswith("{") for s in segments[:-1]) else "collection"


def _field(tool: ToolSpec, field: str) -> str:
    """The text of one of a tool's indexed fields."""
    op = tool.operation
    if field == "name":
        return tool.name.replace("_", " ")
    if field == "title":  # a title made from the name adds nothing
        return "" if tool.title.lower() == tool.name.replace("_", " ").lower() else tool.title
    if field == "summary":
        return short_summary(tool, None)
    if field == "description":
        return _strip_markup(op.description[:DESCRIPTION_CHARS])
    if field == "tags":
        return " ".join(op.tags)
    if field == "path":
        return " ".join(s for s in re.split(r"[/.]", op.path) if s and not s.startswith("{"))
    if field == "params":
        return _param_text(tool.input_schema)
    if field == "method":
        return action_words(op.path) or METHOD_WORDS.get((op.method, path_shape(op.path)), "")
    raise KeyError(field)


def build_index(tools: Sequence[ToolSpec], weights: Mapping[str, float] = FIELD_WEIGHTS) -> dict[str, Any]:
    """The search index of `tools` as JSON-ready data: documents, groups and stem -> postings."""
    analyzer = Analyzer()

    def documents(field: str) -> list[tuple[str, ...]]:
        """Each tool's stems of one field (a field at a time: a large API's texts are not all held at once)."""
        analyzer.forget_texts()
        return [analyzer.stem_tuple(_field(tool, field)) for tool in tools]

    fields = ((weight, documents(field)) for field, weight in sorted(weights.items()) if weight > 0)
    terms = postings(fields, SCALE)
    del fields, documents  # the generator and the closure hold each other: freed now, without the collector
    groups = [group_of(tool) for tool in tools]
    phrases = synonyms(terms, analyzer.stems)
    return {
        "format": FORMAT,
        "scale": SCALE,
        "stopwords": sorted(STOPWORDS),
        "prefix": {"weight": PREFIX_WEIGHT, "min": PREFIX_MIN},
        "synonyms": {"weight": SYNONYM_WEIGHT, "phrases": phrases},
        "tools": [
            {
                "name": tool.name,
                "title": tool.title,
                "operation": f"{tool.operation.method} {tool.operation.path}",
                "summary": short_summary(tool),
                "group": group,
                "tags": list(tool.operation.tags),
            }
            for tool, group in zip(tools, groups)
        ],
        "terms": terms,
    }


def group_counts(index: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(group, number of tools) by count, then name."""
    counts = Counter(str(doc["group"]) for doc in index["tools"])
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower(), item[0]))


def expand(terms: Iterable[str], stems: Sequence[str], phrases: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Query stems -> indexed stems with how much each counts: a stem the query has 1, an indexed stem it is
    a prefix of (or the reverse: repo ~ repositori) 0.5, a stem one of the query's thesaurus phrases stands
    for (vocabulary.py) its weight. Each piece of evidence adds: a stem two query words lead to counts twice."""
    vocabulary = list(terms)
    said = sorted(set(stems))
    out: dict[str, float] = {}
    for stem in said:
        out[stem] = out.get(stem, 0.0) + 1.0
        if len(stem) < PREFIX_MIN:
            continue
        for term in vocabulary:
            if term != stem and (term.startswith(stem) or (len(term) >= PREFIX_MIN and stem.startswith(term))):
                out[term] = out.get(term, 0.0) + PREFIX_WEIGHT
    if phrases:
        share = float(phrases["weight"])
        for term in expand_phrases(said, phrases["phrases"]):
            out[term] = out.get(term, 0.0) + share
    return out


def rank(index: Mapping[str, Any], stems: Iterable[str], limit: int) -> list[int]:
    """Document numbers, best first, for query stems (the generation-side twin of search.py's ranking;
    the benchmark uses it without generating a package)."""
    scores: Counter[int] = Counter()
    terms = index["terms"]
    for stem, factor in expand(terms, list(stems), index.get("synonyms")).items():
        postings = terms.get(stem)
        if postings:
            for doc, weight in zip(postings[0], postings[1]):
                scores[doc] += weight * factor
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [doc for doc, _ in ranked[:limit]]
