"""ToolSpecs -> the search index the discovery surface ships as data (search.json).

Each tool is a document with fields: its name, title, summary, description, tags, path, parameter names
(with their enum values) and the words its HTTP method stands for (create/add/new for POST, ...). Every
field is scored with BM25 on its own (bm25s's weights, search_weights) and the field scores are combined with
a weight per field, so a word in the name counts more than the same word deep in a description. Words
are stemmed with the Snowball English stemmer; the generated server stems a query the same way
(templates/search.py.jinja) and only sums the precomputed weights of its stems: no ranking library,
no numpy, nothing computed at start-up. Each tool also carries what the second stage reads (its resource
words and the words that say what it is, search_rank.rerank), the method's verbs once per distinct list, and
what it does to what (search_action: its actions, object and path depth).

Pure: the same tools give byte-identical data (terms and postings sorted, weights rounded to integers).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import Any

from .plans import ToolSpec
from .search_action import PHRASAL, QUESTIONS, action_config, action_fields, action_stems, path_verb
from .search_action import query_actions
from .search_query import AFTER_PASSIVE, ASKING, FILLERS, NEUTRAL, OBJECTS, PASSIVE, READ_OPENERS, TELLING, Hints, Value
from .search_query import intent
from .search_query import first_words, joined_words, value_kinds, values, without_names
from .search_paths import PathFacts, path_facts, path_group
from .search_weights import combined_postings
from .vocabulary import SYNONYM_WEIGHT, sequences, synonyms

FORMAT = 1
SCALE = 100  # weights are stored as integers: round(weight * SCALE)
SUMMARY_CHARS = 120  # characters of a tool's summary in a search result
DESCRIPTION_CHARS = 1500  # characters of the operation description that are indexed
DETAIL_CHARS = 200  # characters of each argument's description that are indexed (the "details" field)
GROUP_CHARS = 40  # a group (tag) name longer than this is cut in the search_tools description

# How much a match in each field counts (tuned on bench/selection's GitHub and Stripe tasks, see
# bench/README.md). A stem's weight in a tool is its best field's, not the sum: the same word in the
# name, title, summary and path is one match, so tools matching more of the query's words rank first.
FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 1.0,
    "title": 0.5,
    "summary": 1.6,
    "description": 1.2,
    "tags": 0.9,
    "path": 2.0,
    "params": 1.2,
    "method": 3.0,
    "details": 0.45,
}
PREFIX_WEIGHT = 0.5  # a query stem that is a prefix of an indexed stem (or the reverse): repo ~ repositori
PREFIX_MIN = 4  # characters both need for that
# Second stage (search_rank.rerank), over the first RERANK_DEPTH tools: those whose resource (the last named
# segment of the path, and for /things/{id}/sub the thing it belongs to) is among the query's words (typed,
# prefix or thesaurus) score RESOURCE_BONUS more ("delete the comment" prefers .../comments/{id} to
# .../comments/{id}/reactions), and a tool scores up to COVERAGE_SHARE more for the share of the query's words
# found in what it is (name, title, summary, path, its method's verbs) rather than in its description.
RERANK_DEPTH = 30
RESOURCE_BONUS = 0.2
COVERAGE_SHARE = 0.3
IDENTITY_FIELDS = ("name", "title", "summary", "path")  # with the method's verbs, shipped once per verb list
# A request that reads ("which...?", "show...") or changes ("close the bug") scores INTENT_WEIGHT less on a tool
# that does the other (GET/HEAD and the read verbs of an RPC path read); one that points at a value ("issue 42",
# "cus_123") scores up to VALUE_BONUS more on a tool whose path takes what the value identifies.
INTENT_WEIGHT = 0.5
VALUE_BONUS = 0.2

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

# English words that carry no meaning for ranking (kept out of the index, so they never match): function
# words, the fillers of a request ("please", "I want") and the words that introduce a value ("a team called
# platform"). Not the words that say what to do or whose (what, which, who, all, any, new, now, up, out, off,
# my: the method's words and the thesaurus use them).
STOPWORDS = frozenset(
    """a about above after against also am an and are as at be because been before being below both but by called
    can could did do does doing during each few for from further has have having he her here hers him his how i
    if in into is it its just let me more most named need nor of on once only or other our ours please same
    should so some such than that the their theirs them then there these they this those titled to too us
    very want was we were when where while whom why will with would you your yours""".split()
)

_TAG = re.compile(r"<[^>]{0,200}>")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # where a camelCase word is split: search.py's
# `([a-z0-9])([A-Z])` -> `\1 \2`, as one space (no template to expand per match)
_WORD = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
DROPPED = -1  # the number of a word that is not indexed (one letter, a stopword)
_KEPT = DROPPED.__ne__


def _words(text: str) -> list[str]:
    """The words of `text` (lower case), markup left out and camelCase split."""
    return _WORD.findall(_CAMEL.sub(" ", _strip_markup(text)).lower())


class _Memo(dict[str, Any]):
    """text -> what `make` gives for it, computed on the first lookup (`memo[text]`, also through `map`)."""

    def __init__(self, make: Callable[[str], Any]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, text: str) -> Any:
        value = self[text] = self._make(text)
        return value


class Analyzer:
    """Text -> stems. The generated search.py does exactly the same to a query (tested).

    Each distinct text is analyzed once, and each distinct word stemmed once; `ids` numbers its stems in
    `vocabulary` (shared by all the texts, with "" as 0: an empty document's token), which the BM25 weights are
    computed from."""

    def __init__(self) -> None:
        import snowballstemmer  # only where a search index is built; PyStemmer's C stemmer when installed (it is)

        self._stemmer = snowballstemmer.stemmer("english")
        self.vocabulary: dict[str, int] = {"": 0}
        self._names = [""]  # stem id -> stem
        # text -> its stems' ids, and the same of each piece between spaces and of each word (DROPPED when the word
        # is not indexed): a large API repeats its texts, and their pieces repeat more (no memo refers back to the
        # analyzer: no reference cycle keeps them once it is gone, with the collector off)
        words = _Memo(partial(_word_number, self._stemmer.stemWord, self.vocabulary, self._names))
        self._ids = _Memo(partial(_text_ids, _Memo(partial(_piece_ids, words))))
        self._stemmed = _Memo(partial(_text_stems, self._ids, self._names))
        self._intent: dict[str, Any] | None = None

    def words(self, text: str) -> list[str]:
        return [w for w in _words(text) if len(w) > 1 and w not in STOPWORDS]

    def stems(self, text: str) -> list[str]:
        return list(self._stemmed[text])

    def every(self, text: str) -> list[str]:
        """The stems of all the words of `text`, stop words too (quoted thesaurus phrases are matched on these)."""
        return [self._stemmer.stemWord(w) for w in _words(text) if len(w) > 1]

    def stemmed(self, text: str) -> tuple[str, ...]:
        return self._stemmed[text]  # type: ignore[no-any-return]

    def ids(self, text: str) -> tuple[int, ...]:
        """The stems of `text` as their numbers in `vocabulary`."""
        return self._ids[text]  # type: ignore[no-any-return]

    def all_ids(self, texts: Iterable[str]) -> list[tuple[int, ...]]:
        """`ids` of each text."""
        return list(map(self._ids.__getitem__, texts))

    def query(self, text: str) -> list[str]:
        """A query's stems: its words' (without the names it gives), its hyphenated words' written as one, then
        the kind of each value it quotes (search_query)."""
        extra = joined_words(text) + value_kinds(text)
        return self.stems(without_names(text)) + [stem for word in extra for stem in self.stems(word)]

    def hints(self, text: str, words: Mapping[str, Any] | None = None) -> Hints:
        """Whether the query reads or changes, and the values it points at (search_query.Hints). `words`: the
        index's "intent" (search.json's: with the API's own verbs), else the words of any API."""
        found = []
        for before, prefix in values(text):
            named: list[str] = []
            for word in before:  # nearest first, up to a word that says nothing ("on issue 42": issue)
                stems = self.stems(word)
                if not stems:
                    break
                named.append(stems[0])
            if named or prefix:
                found.append(Value(tuple(named), prefix or ""))
        words = words or self.intent_words()
        stem = self._stemmer.stemWord
        actions = query_actions(first_words(text, words), words, stem)
        sequence = tuple(self.every(without_names(text)))
        return Hints(intent(text, words, stem), tuple(found), frozenset(actions), sequence)

    def intent_words(self, verbs: Sequence[str] = ()) -> dict[str, Any]:
        """The words search_query.intent reads, as search.json ships them: the stems of the first words of a
        request that reads or changes (with the API's `verbs`, the first words of its summaries, that do not
        read: merge, follow, assign), the fillers before them, the determiners that say neither, the words
        after "how" and before "me" that matter, and the pronouns that may follow a verb."""
        if self._intent is None:
            stem = self._stemmer.stemWord
            reading = {stem(w) for w in (set(READ_OPENERS) | set(f"{_READ_ONE} {_READ_MANY}".split())) - {"open"}}
            changing = {stem(w) for w in f"{_CREATE} {_CHANGE} {_REMOVE}".split()} - reading  # open a PR: creates
            self._intent = {
                "read": sorted(reading),
                "change": sorted(changing),
                "fillers": sorted(FILLERS),
                "neutral": sorted(NEUTRAL),
                "asking": sorted(ASKING),
                "telling": sorted(TELLING),
                "objects": sorted(OBJECTS),
                "passive": sorted(PASSIVE),
                "after": sorted(AFTER_PASSIVE),
                "actions": action_stems(self.stems),
                "phrasal": dict(sorted(PHRASAL.items())),
                "questions": sorted(QUESTIONS),
            }
        words = {word.lower() for word in verbs if word.isalpha()} - set(FILLERS) - set(NEUTRAL)
        said = {s for word in words for s in self.stems(word)} - set(self._intent["read"])
        return {**self._intent, "change": sorted(set(self._intent["change"]) | said)} if said else self._intent


def _text_ids(pieces: Mapping[str, tuple[int, ...]], text: str) -> tuple[int, ...]:
    """The ids of the stems of `_words(text)`, piece by piece: no word, camelCase split or lower-casing spans
    whitespace (the markup it strips can: it is stripped from the whole text)."""
    return tuple(chain.from_iterable(map(pieces.__getitem__, _strip_markup(text).split())))


def _piece_ids(words: Mapping[str, int], piece: str) -> tuple[int, ...]:
    return tuple(filter(_KEPT, map(words.__getitem__, _WORD.findall(_CAMEL.sub(" ", piece).lower()))))


def _text_stems(ids: Mapping[str, tuple[int, ...]], names: list[str], text: str) -> tuple[str, ...]:
    return tuple(map(names.__getitem__, ids[text]))


def _word_number(stem: Callable[[str], str], vocabulary: dict[str, int], names: list[str], word: str) -> int:
    """The id of the stem of `word` (numbered in `vocabulary` and `names` when new), DROPPED when not indexed."""
    if len(word) < 2 or word in STOPWORDS:
        return DROPPED
    found = stem(word)
    number = vocabulary.get(found)
    if number is None:
        number = vocabulary[found] = len(names)
        names.append(found)
    return number


def _strip_markup(text: str) -> str:
    return _TAG.sub(" ", text) if "<" in text else text


def short_summary(tool: ToolSpec, limit: int | None = SUMMARY_CHARS) -> str:
    """One line saying what the tool does: the operation's summary, else its description's first sentence
    (cut at a word to `limit` characters, when given)."""
    text = " ".join(_strip_markup(tool.operation.summary or tool.operation.description or tool.title).split())
    if not tool.operation.summary:
        end = _SENTENCE_END.search(text)
        text = text[: end.start()] if end else text
    return _shortened(text, limit)


def _shortened(text: str, limit: int | None) -> str:
    """`text`, cut at a word to `limit` characters (when given)."""
    if limit is not None and len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text


def group_of(tool: ToolSpec) -> str:
    """The tool's group: its first tag, else the first path segment that names something."""
    return tool.operation.tags[0] if tool.operation.tags else path_group(tool.operation.path)


def _param_fields(schema: Mapping[str, Any]) -> tuple[str, str]:
    """The "params" field (the argument names, each with its enum's first 20 values) and the "details" field (the
    arguments' descriptions, their first DETAIL_CHARS characters each), in one pass over the arguments."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return "", ""
    names: list[str] = []
    details: list[str] = []
    for key, prop in properties.items():
        names.append(str(key))
        if isinstance(prop, (dict, Mapping)):  # dict first: a plain dict skips the ABC's check
            enum = prop.get("enum")
            if isinstance(enum, list):
                names.extend(str(v) for v in enum[:20] if isinstance(v, str))
            details.append(str(prop.get("description", ""))[:DETAIL_CHARS])
    return " ".join(names), " ".join(details)


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
    verb = path_verb(path)
    return VERB_WORDS.get(verb) if verb else None


def _fields(tool: ToolSpec, path: PathFacts) -> dict[str, str]:
    op = tool.operation
    named = tool.name.replace("_", " ")
    params, details = _param_fields(tool.input_schema)
    return {
        "name": named,
        "title": "" if tool.title.lower() == named.lower() else tool.title,  # a title made from the name adds nothing
        "summary": short_summary(tool, None),
        "description": _strip_markup(op.description[:DESCRIPTION_CHARS]),
        "tags": " ".join(op.tags),
        "path": path.text,
        "params": params,
        "details": details,
        "method": action_words(op.path) or METHOD_WORDS.get((op.method, path.shape), ""),
    }


def build_index(tools: Sequence[ToolSpec], weights: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The search index of `tools` as JSON-ready data: documents, groups and stem -> postings."""
    weights = FIELD_WEIGHTS if weights is None else weights
    analyzer = Analyzer()
    stemmed = analyzer.stemmed
    facts: dict[str, PathFacts] = {}
    for tool in tools:
        if tool.operation.path not in facts:
            facts[tool.operation.path] = path_facts(tool.operation.path, stemmed)
    paths = [facts[tool.operation.path] for tool in tools]
    fields = [_fields(tool, path) for tool, path in zip(tools, paths)]
    documents = {field: analyzer.all_ids(f[field] for f in fields) for field, weight in weights.items() if weight > 0}
    terms = combined_postings(documents, weights, analyzer.vocabulary, SCALE)
    del documents
    phrases, quoted = synonyms(terms, analyzer.stems), sequences(terms, analyzer.stems, analyzer.every)
    verbs = sorted({f["method"] for f in fields})
    verb_number = {text: number for number, text in enumerate(verbs)}
    verb_stems = [sorted(set(stemmed(text))) for text in verbs]
    # a verb list reads when it has a reading verb and no changing one (words such as open and set are in both)
    reading, changing = set(analyzer.stems("list get check")), set(analyzer.stems("create update delete send"))
    reads = [n for n, stems in enumerate(verb_stems) if reading & set(stems) and not changing & set(stems)]
    return {
        "format": FORMAT,
        "scale": SCALE,
        "stopwords": sorted(STOPWORDS),
        "prefix": {"weight": PREFIX_WEIGHT, "min": PREFIX_MIN},
        "synonyms": {"weight": SYNONYM_WEIGHT, "phrases": phrases, "sequences": quoted},
        "rerank": {"depth": RERANK_DEPTH, "resource": RESOURCE_BONUS, "coverage": COVERAGE_SHARE},
        "intent": {
            "weight": INTENT_WEIGHT,
            **analyzer.intent_words(sorted({f["summary"].split(" ", 1)[0] for f in fields if f["summary"]})),
        },
        "values": {"weight": VALUE_BONUS, "nouns": sorted({key for path in facts.values() for key in path.keys})},
        "actions": action_config(
            [tool.operation.path for tool in tools],
            [(f["summary"], f["description"], f["details"]) for f in fields],
            stemmed,
        ),
        "verbs": verb_stems,
        "reads": reads,
        "tools": [
            _tool_entry(tool, f, path, verb_number[f["method"]], stemmed) for tool, f, path in zip(tools, fields, paths)
        ],
        "terms": terms,
    }


def _tool_entry(
    tool: ToolSpec, fields: Mapping[str, str], path: PathFacts, verbs: int, stemmed: Callable[[str], tuple[str, ...]]
) -> dict[str, Any]:
    """What search.json ships of one tool (besides its postings)."""
    op = tool.operation
    words = set().union(*map(stemmed, [fields[field] for field in IDENTITY_FIELDS]))
    return {
        "name": tool.name,
        "title": tool.title,
        "operation": f"{op.method} {op.path}",
        "summary": _shortened(fields["summary"], SUMMARY_CHARS),
        "group": op.tags[0] if op.tags else path.group,
        "tags": list(op.tags),
        "resource": path.resource,
        "words": " ".join(sorted(words)),
        "verbs": verbs,
        "keys": path.key_stems,
        **action_fields(op.method, op.path, fields["summary"], path.resource, stemmed),
    }


def group_counts(groups: Iterable[str]) -> list[tuple[str, int]]:
    """(group, number of tools) by count, then name, of each tool's group (the index's "group", group_of)."""
    counts = Counter(groups)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower(), item[0]))
