"""ToolSpecs -> the search index the discovery surface ships as data (search.json).

Each tool is a document with fields: its name, title, summary, description, tags, path, parameter names
(with their enum values) and the words its HTTP method stands for (create/add/new for POST, ...). Every
field is scored with BM25 on its own (bm25s computes the weights) and the field scores are summed with
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
from collections.abc import Mapping, Sequence
from typing import Any

from .plans import ToolSpec
from .search_action import PHRASAL, QUESTIONS, action_config, action_fields, action_stems, path_shape, path_verb
from .search_action import query_actions
from .search_query import AFTER_PASSIVE, ASKING, FILLERS, NEUTRAL, OBJECTS, PASSIVE, READ_OPENERS, TELLING, Hints, Value
from .search_query import intent
from .search_query import first_words, joined_words, value_kinds, values, without_names
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
# a path parameter's words that say it is an identifier, not what it identifies ({issue_number}, {task_gid})
ID_WORDS = frozenset("id ids number num gid key name slug sid uuid identifier code".split())

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


class Analyzer:
    """Text -> stems. The generated search.py does exactly the same to a query (tested).

    Each distinct text is analyzed once; `ids` numbers its stems in `vocabulary` (shared by all the texts, with ""
    as 0: an empty document's token), which is what bm25s is given."""

    def __init__(self) -> None:
        import snowballstemmer  # only where a search index is built; PyStemmer's C stemmer when installed (it is)

        self._stemmer = snowballstemmer.stemmer("english")
        self._cache: dict[str, str] = {}
        self._ids: dict[str, tuple[int, ...]] = {}  # a large API repeats its descriptions and summaries
        self.vocabulary: dict[str, int] = {"": 0}
        self._names = [""]  # stem id -> stem
        self._intent: dict[str, Any] | None = None

    def words(self, text: str) -> list[str]:
        words = _WORD.findall(_CAMEL.sub(" ", _strip_markup(text)).lower())
        return [w for w in words if len(w) > 1 and w not in STOPWORDS]

    def stems(self, text: str) -> list[str]:
        return list(self.stemmed(text))

    def every(self, text: str) -> list[str]:
        """The stems of all the words of `text`, stop words too (quoted thesaurus phrases are matched on these)."""
        words = _WORD.findall(_CAMEL.sub(" ", _strip_markup(text)).lower())
        return [self._stemmer.stemWord(w) for w in words if len(w) > 1]

    def stemmed(self, text: str) -> tuple[str, ...]:
        names = self._names
        return tuple(names[number] for number in self.ids(text))

    def ids(self, text: str) -> tuple[int, ...]:
        """The stems of `text` as their numbers in `vocabulary`."""
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = tuple(self._number(stem) for stem in self._stems(text))
        return found

    def _number(self, stem: str) -> int:
        number = self.vocabulary.get(stem)
        if number is None:
            number = self.vocabulary[stem] = len(self._names)
            self._names.append(stem)
        return number

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
    return _shortened(text, limit)


def _shortened(text: str, limit: int | None) -> str:
    """`text`, cut at a word to `limit` characters (when given)."""
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


def _param_details(schema: Mapping[str, Any]) -> str:
    """The descriptions of the tool's arguments (their first DETAIL_CHARS characters each)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    return " ".join(
        str(prop.get("description", ""))[:DETAIL_CHARS] for prop in properties.values() if isinstance(prop, Mapping)
    )


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
    verb = path_verb(path)
    return VERB_WORDS.get(verb) if verb else None


def resource(path: str) -> str:
    """The words of what the operation acts on: the path's last named segment (/repos/{owner}/{repo} ->
    "repos"), and for a sub-collection or an action (/issues/{number}/comments, /invoices/{id}/send) also
    the named segment before the parameter (the thing it belongs to). Version segments (v1, api) are skipped."""
    named = [
        (i, s)
        for i, s in enumerate(segment for segment in path.split("/") if segment)
        if not s.startswith("{") and not re.fullmatch(r"v\d+(\.\d+)*|api", s, re.IGNORECASE)
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
    segments = [s for s in re.split(r"[/.]", path) if s]
    out = []
    for i, segment in enumerate(segments):
        if not segment.startswith("{"):
            continue
        words = [w for w in _WORD.findall(_CAMEL.sub(" ", segment).lower()) if w not in ID_WORDS]
        if words:
            out.append(" ".join(words))
        if i and not segments[i - 1].startswith("{"):
            out.append(" ".join(_WORD.findall(_CAMEL.sub(" ", segments[i - 1]))))
    return out


def _fields(tool: ToolSpec) -> dict[str, str]:
    op = tool.operation
    path = " ".join(s for s in re.split(r"[/.]", op.path) if s and not s.startswith("{"))
    named = tool.name.replace("_", " ").lower()
    return {
        "name": tool.name.replace("_", " "),
        "title": "" if tool.title.lower() == named else tool.title,  # a title made from the name adds nothing
        "summary": short_summary(tool, None),
        "description": _strip_markup(op.description[:DESCRIPTION_CHARS]),
        "tags": " ".join(op.tags),
        "path": path,
        "params": _param_text(tool.input_schema),
        "details": _param_details(tool.input_schema),
        "method": action_words(op.path) or METHOD_WORDS.get((op.method, path_shape(op.path)), ""),
    }


def build_index(tools: Sequence[ToolSpec], weights: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The search index of `tools` as JSON-ready data: documents, groups and stem -> postings."""
    weights = FIELD_WEIGHTS if weights is None else weights
    analyzer = Analyzer()
    fields = [_fields(tool) for tool in tools]
    documents = {field: [analyzer.ids(f[field]) for f in fields] for field, weight in weights.items() if weight > 0}
    terms = combined_postings(documents, weights, analyzer.vocabulary, SCALE)
    del documents
    groups = [group_of(tool) for tool in tools]
    phrases, quoted = synonyms(terms, analyzer.stems), sequences(terms, analyzer.stems, analyzer.every)
    verbs = sorted({f["method"] for f in fields})
    verb_number = {text: number for number, text in enumerate(verbs)}
    verb_stems = [sorted(set(analyzer.stemmed(text))) for text in verbs]
    # a verb list reads when it has a reading verb and no changing one (words such as open and set are in both)
    reading, changing = set(analyzer.stems("list get check")), set(analyzer.stems("create update delete send"))
    reads = [n for n, stems in enumerate(verb_stems) if reading & set(stems) and not changing & set(stems)]
    keys = [[tuple(analyzer.stems(key)) for key in path_keys(tool.operation.path)] for tool in tools]
    nouns = sorted({" ".join(key) for tool_keys in keys for key in tool_keys if key})
    things = [" ".join(sorted(set(analyzer.stemmed(resource(tool.operation.path))))) for tool in tools]
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
        "values": {"weight": VALUE_BONUS, "nouns": nouns},
        "actions": action_config(
            [tool.operation.path for tool in tools],
            [(f["summary"], f["description"], f["details"]) for f in fields],
            analyzer.stemmed,
        ),
        "verbs": verb_stems,
        "reads": reads,
        "tools": [
            {
                "name": tool.name,
                "title": tool.title,
                "operation": f"{tool.operation.method} {tool.operation.path}",
                "summary": _shortened(f["summary"], SUMMARY_CHARS),
                "group": group,
                "tags": list(tool.operation.tags),
                "resource": thing,
                "words": " ".join(sorted({stem for field in IDENTITY_FIELDS for stem in analyzer.stemmed(f[field])})),
                "verbs": verb_number[f["method"]],
                "keys": " ".join(sorted({stem for key in tool_keys for stem in key})),
                **action_fields(tool.operation.method, tool.operation.path, f["summary"], thing, analyzer.stemmed),
            }
            for tool, group, f, tool_keys, thing in zip(tools, groups, fields, keys, things)
        ],
        "terms": terms,
    }


def group_counts(index: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(group, number of tools) by count, then name."""
    counts = Counter(str(doc["group"]) for doc in index["tools"])
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower(), item[0]))
