"""A listing's text (tools.json) and its cl100k token count, built from the parts a large API's tools share.

The text is exactly `json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`. The tools of
a large API carry the same definitions again and again (their `$defs` members are shared objects) and often the
same `properties`: each definition is serialized once, and the tokens of each such part are counted once. Counting
in parts is exact: a part is cut right after a run of letters that a non-letter follows, which always ends a piece
of cl100k's pre-tokenizer (as in tokens.py), so the tokens of the whole are the tokens of the text with each part's
middle cut out, plus the tokens of each middle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .tokens import count_tokens

_dump: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
_key: Callable[[str], str] = json.encoder.encode_basestring  # a string as that encoder writes it (raw UTF-8)
SCHEMAS = frozenset({"inputSchema", "outputSchema"})
FLUSH = 1 << 20  # characters of text held before they are counted


class ListingText:
    """Serializes and counts listings; remembers each definition's text and each middle's tokens between calls."""

    def __init__(self) -> None:
        self._definitions: dict[int, tuple[Any, str, int, int]] = {}  # id -> (definition kept alive, text, cuts)
        self._middles: dict[str, int] = {}  # a middle's text -> its tokens
        self._counted: dict[int, int] = {}  # id of a definition -> its middle's tokens

    def measure(
        self, entries: Sequence[Mapping[str, Any]], keep_text: bool = True, end: str = ""
    ) -> tuple[int, int, str | None]:
        """The listing's length in characters, its tokens, and its text followed by `end` when `keep_text`."""
        parts = _Parts(keep_text)
        parts.plain("[")
        for number, entry in enumerate(entries):
            if number:
                parts.plain(",")
            self._entry(parts, entry)
        parts.plain("]")
        tokens = sum(self._middle_tokens(middle) for middle in parts.middles)
        tokens += sum(self._definition_tokens(definition) for definition in parts.definitions)
        tokens += parts.counted + count_tokens("".join(parts.rest))
        parts.rest.clear()
        if parts.whole is None:
            return parts.characters, tokens, None
        parts.whole.append(end)
        return parts.characters, tokens, "".join(parts.whole)

    def _entry(self, parts: _Parts, entry: Mapping[str, Any]) -> None:
        if not _plain(entry):
            parts.plain(_dump(entry))  # as json.dumps writes it (or fails as it does)
            return
        for number, key in enumerate(sorted(entry)):
            value = entry[key]
            if key in SCHEMAS and _plain(value):
                parts.plain(("," if number else "{") + _key(key) + ":")
                self._schema(parts, value)
            else:
                parts.plain(("," if number else "{") + _key(key) + ":" + _dump(value))
        parts.plain("}" if entry else "{}")

    def _schema(self, parts: _Parts, schema: Mapping[str, Any]) -> None:
        for number, key in enumerate(sorted(schema)):
            start = ("," if number else "{") + _key(key) + ":"
            value = schema[key]
            if key == "$defs" and _plain(value):
                for count, name in enumerate(sorted(value)):
                    parts.plain(start + ("," if count else "{") + _key(name) + ":")
                    start = ""
                    parts.definition(self._definition(value[name]))
                parts.plain("}" if value else start + "{}")
            elif key == "properties" and isinstance(value, dict):
                parts.plain(start)
                parts.part(_dump(value))
            else:
                parts.plain(start + _dump(value))
        parts.plain("}" if schema else "{}")

    def _definition(self, node: Any) -> tuple[Any, str, int, int]:
        found = self._definitions.get(id(node))
        if found is None:
            text = _dump(node)
            found = self._definitions[id(node)] = (node, text, *_cuts(text))
        return found

    def _definition_tokens(self, definition: tuple[Any, str, int, int]) -> int:
        node, text, start, end = definition
        found = self._counted.get(id(node))
        if found is None:
            found = self._counted[id(node)] = self._middle_tokens(text[start:end])
        return found

    def _middle_tokens(self, middle: str) -> int:
        found = self._middles.get(middle)
        if found is None:
            found = self._middles[middle] = count_tokens(middle)
        return found


class _Parts:
    """The text being written, whole (when kept) and with the middles of shared parts cut out."""

    def __init__(self, keep_text: bool) -> None:
        self.whole: list[str] | None = [] if keep_text else None
        self.rest: list[str] = []
        self.middles: list[str] = []
        self.definitions: list[tuple[Any, str, int, int]] = []
        self.characters = 0
        self.counted = 0  # tokens of the rest counted so far (it is counted in pieces of about FLUSH characters)
        self._pending = 0  # characters in `rest`

    def plain(self, text: str) -> None:
        self.rest.append(text)
        self._pending += len(text)
        if self.whole is not None:
            self.whole.append(text)
        self.characters += len(text)

    def part(self, text: str) -> None:
        start, end = _cuts(text)
        if start >= end:
            self.plain(text)
            return
        self._cut(text, start, end)
        self.middles.append(text[start:end])

    def definition(self, definition: tuple[Any, str, int, int]) -> None:
        _, text, start, end = definition
        if start >= end:
            self.plain(text)
            return
        self._cut(text, start, end)
        self.definitions.append(definition)

    def _cut(self, text: str, start: int, end: int) -> None:
        self.rest.append(text[:start])
        if self._pending > FLUSH:  # the rest ends right after a letter here: its tokens so far can be counted
            self.counted += count_tokens("".join(self.rest))
            self.rest.clear()
            self._pending = 0
        self.rest.append(text[end:])
        self._pending += start + len(text) - end
        if self.whole is not None:
            self.whole.append(text)
        self.characters += len(text)


def _plain(value: Any) -> bool:
    """A dict whose keys json.dumps writes as they are (strings), so they sort as it sorts them."""
    return isinstance(value, dict) and all(type(key) is str for key in value)


def _cuts(text: str) -> tuple[int, int]:
    """The first and the last place right after a letter that a non-letter follows (equal: at most one)."""
    if text.isascii():  # ASCII letters are exactly the ASCII characters str.isalpha accepts: found by the regex engine
        first, final = _FIRST_CUT.search(text), _LAST_CUT.match(text)
        return (first.end(), final.end()) if first and final else (0, 0)
    last = len(text) - 1
    start = next((i + 1 for i in range(last) if text[i].isalpha() and not text[i + 1].isalpha()), 0)
    if not start:
        return 0, 0
    end = next((i + 1 for i in range(last - 1, start - 1, -1) if text[i].isalpha() and not text[i + 1].isalpha()), 0)
    return start, max(start, end)


_FIRST_CUT = re.compile(r"[A-Za-z](?=[^A-Za-z])")
_LAST_CUT = re.compile(r".*[A-Za-z](?=[^A-Za-z])", re.DOTALL)  # greedy: the last such place
