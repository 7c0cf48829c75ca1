"""What a search query says besides its words: the kinds of the values it quotes.

Users put values in their requests ("invite dave@example.com", "open src/app.py", "notify
https://example.com/hook"). A value's own words rarely name the operation, but its kind does: an email
address, a URL, a file name. `value_kinds` returns the kind word of each such value, in the query's order;
the search adds them to the query's words (the thesaurus then applies to them as to typed words: "file"
also looks for "contents"). The generated search.py recognises values with the same expressions (tested).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://\S+")
# a file name: a name of two characters or more and a common file extension (config.yml, src/app.py, README.md);
# not a version (v1.2) nor an RPC method name (conversations.list, chat.postMessage)
FILE = re.compile(r"(?:[\w.-]*/)*[\w-]{2,}\.([A-Za-z0-9]{1,5})")
EXTENSIONS = frozenset(
    """7z avi bat bmp c cfg conf cpp cs css csv doc docx gif go gz h heic html ico ini ipynb jar java jpeg jpg js
    json jsx kt m4a md mov mp3 mp4 odt pdf pem php png ppt pptx proto ps1 py rb rs rtf scss sh sql svg swift tar
    tex tgz tif tiff toml ts tsv tsx txt vue wav webm webp xls xlsx xml yaml yml zip""".split()
)
DOMAINS = frozenset("com org net io dev co ai edu gov".split())  # example.com: a host, not a file
# a tracker's key (PROJ-123, ABC-7: a project's letters, a number): a ticket, whose letters are no words to look for
# (not a standard's name and number: UTF-8, SHA-256, ISO-8601)
KEY = re.compile(r"(?!(?:UTF|ISO|SHA|RFC|AES|RSA|TLS|SSL|HTTP|IPV|MD|MP|COVID)-)[A-Z][A-Z0-9]{1,9}-\d+")
PUNCTUATION = ".,;:!?()[]{}<>\"'`“”‘’"
MAX_VALUES = 20  # kinds read from one query


def value_kinds(text: str) -> list[str]:
    """The kind ("email", "url" or "file") of each value-like token of `text`, in order."""
    kinds: list[str] = []
    for token in text.split():
        kind = _kind(token.strip(PUNCTUATION))
        if kind:
            kinds.append(kind)
            if len(kinds) >= MAX_VALUES:
                break
    return kinds


def _kind(token: str) -> str | None:
    if EMAIL.fullmatch(token):
        return "email"
    if KEY.fullmatch(token):
        return "ticket"
    if URL.fullmatch(token):
        return "url"
    found = FILE.fullmatch(token)
    extension = found.group(1).lower() if found else ""
    if extension in DOMAINS:
        return "url"
    return "file" if extension in EXTENSIONS else None


# -- what else a request says: the name it gives, whether it reads or changes, the values it points at -------------

# "a team called platform", "a repo named notes": the name is a value, not what to look for (its words are dropped)
NAMED = re.compile(r"\b(called|named|titled)\s+(?:\"[^\"]{1,80}\"|“[^”]{1,80}”|'[^']{1,80}'|\S+)", re.IGNORECASE)
# "to-do", "e-mail", "re-run": the joined word too, when the first part is a letter or two (a stop word, a prefix);
# not "feature-login" or "feature-x", names whose joined form only matches by prefix
KEY_WORD = re.compile(rf"(?<![\w-]){KEY.pattern}(?![\w-])")  # a key standing alone in a text
HYPHENATED = re.compile(r"\b[A-Za-z]{1,2}(?:-[A-Za-z]+)+\b")
NUMBER = re.compile(r"#?\d+")  # issue 42, PR #17
ID = re.compile(r"([A-Za-z]{1,8})_[A-Za-z0-9_]*\d[A-Za-z0-9_]*")  # cus_123, dp_9: a prefix, then a value
# How a request that reads starts (its first word, after the fillers): a question word, an auxiliary of a
# question, a verb that reads; "give me", "tell us" too. One that starts with a verb that changes something (ours,
# or one the API's summaries start with: merge, follow) changes, even as a question ("can I delete the repo?");
# a question asks to read; an article or a determiner says nothing either way ("the T-shirt should cost 15
# euros"); any other first word changes when an object follows it as it follows a verb (a determiner, a pronoun,
# a value: "kick the bot out", "invite dave@example.com", "store NPM_TOKEN"), else it is a phrase that names
# something ("repository secrets", "status of deployment 7") and says neither. "how do I ..." asks how to do
# what follows. search_index ships these words (stemmed where stems are compared) in search.json for the
# generated server's copy of `intent`.
READ_OPENERS = """what which who whose how where when is are was were does do did has have any anything show list
    get find see look view fetch display download search check count read return retrieve describe info""".split()
TELLING = ["give", "tell"]  # followed by me or us
ASKING = ["do", "does", "can", "could", "should", "would", "to"]  # after "how"
FILLERS = """please can could would will you me i we let lets just go ahead and want like to need hey ok okay so now
    then s d ll m ve re""".split()  # the last: what is left of it's, I'd, I'll, I'm, I've, we're
NEUTRAL = """the a an this that these those my our all every each some it its there""".split()
OBJECTS = """me us them him her everyone everybody someone""".split()
# "get notified when...", "be alerted if...": a passive says what should happen, not a read ("get"): the participle is
# the verb when a function word or nothing follows it ("get closed issues" reads)
PASSIVE = """get gets getting got be being become""".split()
AFTER_PASSIVE = """when whenever if once every each about at on by for of to in into via with as after before""".split()
VALUE_LIKE = re.compile(r"[\d@_/#]")
MAX_BEFORE = 2  # words before a value that may name what it identifies ("pull request 12")


class Value(NamedTuple):
    """A number or id-like value of a query: the stems of the words just before it ("pull request 12": request,
    pull) and an id's prefix ("cus_123": cus; else empty)."""

    words: tuple[str, ...]
    prefix: str


class Hints(NamedTuple):
    """What a query says besides its words (search_rank.rank reads it)."""

    intent: str | None  # "read", "write" or None (can't tell)
    values: tuple[Value, ...]
    actions: frozenset[str] = frozenset()  # what its verb does: c(reate), r(ead), u(pdate), d(elete) (search_action)
    sequence: tuple[str, ...] = ()  # all its words' stems, stop words too, in order (for quoted thesaurus phrases)


def without_names(text: str) -> str:
    """`text` without the names it gives ("a team called platform" -> "a team called") and the keys it quotes
    ("show me PROJ-12" -> "show me")."""
    return KEY_WORD.sub(" ", NAMED.sub(r"\1 ", text))


def joined_words(text: str) -> list[str]:
    """Hyphenated words written as one ("to-do" -> "todo")."""
    return [found.replace("-", "") for found in HYPHENATED.findall(text)]


def first_words(text: str, words: Mapping[str, Any]) -> list[str]:
    """The query's words from the first that is not a filler ("can you please show..." -> show...; "how do I
    add..." -> add...). `words`: the word lists search.json ships (search_analyzer.Analyzer.intent_words)."""
    found = re.findall(r"[^\W_]+", text.lower())
    fillers, asking = set(words["fillers"]), set(words["asking"])
    passive = set(words.get("passive", ()))
    start = 0
    while start < len(found):
        if found[start] in fillers:
            start += 1
        elif found[start] == "how" and found[start + 1 : start + 2] and found[start + 1] in asking:
            start += 2
        elif found[start] in passive and _participle(found[start + 1 : start + 3], words):
            start += 1
        else:
            break
    return found[start:]


def _participle(following: list[str], words: Mapping[str, Any]) -> bool:
    """Whether the words after "get" (or "be") are a participle followed by a function word or nothing."""
    after = [[word] for word in words.get("after", ())]
    return bool(following) and following[0].endswith("ed") and following[1:2] in ([], *after)


def intent(text: str, words: Mapping[str, Any], stem: Callable[[str], str]) -> str | None:
    """ "read", "write" or None (can't tell): what the request asks, from its first word (see READ_OPENERS)."""
    found = first_words(text, words)
    question = text.rstrip().endswith("?")
    if not found:
        return "read" if question else None
    first = stem(found[0])
    if first in words["read"] or (found[0] in words["telling"] and found[1:2] in (["me"], ["us"])):
        return "read"
    if first in words["change"]:
        return "write"
    if question:
        return "read"
    if found[0] in words["neutral"]:
        return None
    after = re.split(rf"\b{re.escape(found[0])}\b", text.lower(), maxsplit=1)[-1].split()
    second = after[0].strip(PUNCTUATION) if after else ""
    return "write" if second in words["neutral"] or second in words["objects"] or VALUE_LIKE.search(second) else None


def values(text: str) -> list[tuple[list[str], str | None]]:
    """For each number or id-like value: the words just before it, and the id's prefix (or None)."""
    tokens = [token.strip(PUNCTUATION) for token in text.split()]
    tokens = [token[:-2] if token.endswith("'s") else token for token in tokens]
    out: list[tuple[list[str], str | None]] = []
    for i, token in enumerate(tokens):
        found = ID.fullmatch(token)
        if found or NUMBER.fullmatch(token):
            before = tokens[max(0, i - MAX_BEFORE) : i][::-1]
            out.append((before, found.group(1).lower() if found else None))
            if len(out) >= MAX_VALUES:
                break
    return out
