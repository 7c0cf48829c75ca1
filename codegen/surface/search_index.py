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
from typing import Any

from .plans import ToolSpec
from .search_action import action_config, action_fields, path_verb
from .search_analyzer import CHANGE, CREATE, READ_MANY, READ_ONE, REMOVE, STOPWORDS, Analyzer, strip_markup
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
METHOD_WORDS: Mapping[tuple[str, str], str] = {
    ("GET", "collection"): READ_MANY,
    ("GET", "item"): READ_ONE,
    ("GET", "action"): f"{READ_MANY} {READ_ONE}",
    ("HEAD", "collection"): "check exists",
    ("HEAD", "item"): "check exists",
    ("HEAD", "action"): "check exists",
    ("POST", "collection"): CREATE,
    ("POST", "item"): CHANGE,
    ("POST", "action"): f"{CREATE} {CHANGE} send run do",
    ("PUT", "collection"): f"{CHANGE} {CREATE}",
    ("PUT", "item"): f"{CHANGE} {CREATE}",
    ("PUT", "action"): f"{CHANGE} {CREATE}",
    ("PATCH", "collection"): CHANGE,
    ("PATCH", "item"): CHANGE,
    ("PATCH", "action"): CHANGE,
    ("DELETE", "collection"): REMOVE,
    ("DELETE", "item"): REMOVE,
    ("DELETE", "action"): REMOVE,
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def short_summary(tool: ToolSpec, limit: int | None = SUMMARY_CHARS) -> str:
    """One line saying what the tool does: the operation's summary, else its description's first sentence
    (cut at a word to `limit` characters, when given)."""
    text = " ".join(strip_markup(tool.operation.summary or tool.operation.description or tool.title).split())
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
    **{verb: READ_MANY for verb in ("list", "search", "find", "query", "lookup")},
    **{verb: READ_ONE for verb in ("get", "read", "info", "retrieve", "fetch", "show", "view", "describe")},
    **{verb: CREATE for verb in ("create", "add", "new", "post", "insert", "register", "upload", "invite")},
    **{verb: CHANGE for verb in ("update", "set", "edit", "modify", "rename", "change", "replace", "patch")},
    **{verb: REMOVE for verb in ("delete", "remove", "cancel", "revoke", "destroy", "erase", "unset", "clear")},
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
        "description": strip_markup(op.description[:DESCRIPTION_CHARS]),
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
