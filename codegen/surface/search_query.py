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
