"""What a search query says besides its words: the kinds of the values it quotes.

Users put values in their requests ("invite dave@example.com", "open src/app.py", "notify
https://example.com/hook"). A value's own words rarely name the operation, but its kind does: an email
address, a URL, a file name. `value_kinds` returns the kind word of each such value, in the query's order;
the search adds them to the query's words (the thesaurus then applies to them as to typed words: "file"
also looks for "contents"). The generated search.py recognises values with the same expressions (tested).
"""

from __future__ import annotations

import re

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://\S+")
# a file name: a name of two characters or more and an extension that starts with a letter (config.yml,
# src/app.py, README.md), not a version (v1.2) nor an RPC method name (chat.postMessage: over 5 characters)
FILE = re.compile(r"(?:[\w.-]*/)*[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,4}")
DOMAINS = frozenset("com org net io dev co ai app edu gov info biz".split())  # example.com: a host, not a file
PUNCTUATION = ".,;:!?()[]{}<>\"'`“”‘’"
MAX_VALUES = 20  # kinds read from one query


def value_kinds(text: str) -> list[str]:
    """The kind ("email", "url" or "file") of each value-like token of `text`, in order."""
    kinds: list[str] = []
    for token in text.split():
        core = token.strip(PUNCTUATION)
        if EMAIL.fullmatch(core):
            kinds.append("email")
        elif URL.fullmatch(core):
            kinds.append("url")
        elif FILE.fullmatch(core):
            kinds.append("url" if core.rsplit(".", 1)[1].lower() in DOMAINS else "file")
        if len(kinds) >= MAX_VALUES:
            break
    return kinds
