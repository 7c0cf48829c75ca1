"""What a search query says besides its words: the kinds of the values it quotes.

Users put values in their requests ("invite dave@example.com", "open src/app.py", "notify
https://example.com/hook"). A value's own words rarely name the operation, but its kind does: an email
address, a URL, a file name. `value_kinds` returns the kind word of each such value, in the query's order;
the search adds them to the query's words (the thesaurus then applies to them as to typed words: "file"
also looks for "contents"). The generated search.py recognises values with the same expressions (tested).
"""

from __future__ import annotations

import re
from typing import NamedTuple

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
HYPHENATED = re.compile(r"\b[A-Za-z]{1,2}(?:-[A-Za-z]+)+\b")
NUMBER = re.compile(r"#?\d+")  # issue 42, PR #17
ID = re.compile(r"([A-Za-z]{1,8})_[A-Za-z0-9_]*\d[A-Za-z0-9_]*")  # cus_123, dp_9: a prefix, then a value
# How a request that reads starts (its first word, after the fillers): a question word, an auxiliary of a
# question, a verb that reads. Stemmed and shipped in search.json, with the fillers and the words that say
# nothing either way (a request like "the T-shirt should cost 15 euros" states what should be).
READ_OPENERS = """what which who whose how where when is are was were does do did has have any anything show list
    get find see look view fetch display download search check count read return retrieve describe info""".split()
FILLERS = """please can could would will you me i we let lets just go ahead and want like to need hey ok okay so now
    then s""".split()
NEUTRAL = """the a an this that these those my our all every each some it its there""".split()
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


def without_names(text: str) -> str:
    """`text` without the names it gives ("a team called platform" -> "a team called")."""
    return NAMED.sub(r"\1 ", text)


def joined_words(text: str) -> list[str]:
    """Hyphenated words written as one ("to-do" -> "todo")."""
    return [found.replace("-", "") for found in HYPHENATED.findall(text)]


def first_words(text: str) -> list[str]:
    """The query's words from the first that is not a filler ("can you please show..." -> show...)."""
    words = re.findall(r"[^\W_]+", text.lower())
    start = 0
    while start < len(words) and words[start] in FILLERS:
        start += 1
    return words[start:]


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
