"""A listing's text (tools.json) and its cl100k token count, built from the parts a large API's tools share.

The text is exactly `json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`. The tools of
a large API carry the same definitions and argument schemas again and again (the members of their schemas' `$defs`
and `properties` are shared objects): each is serialized once. The text is counted in chunks (token_chunks.py), each
distinct chunk once, which is exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .token_chunks import ChunkTokens

_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
_key: Callable[[str], str] = json.encoder.encode_basestring  # a string as that encoder writes it (raw UTF-8)
_MARKERS: dict[int, Any] = {}  # the containers being written (circular references), empty between calls
_make = getattr(json.encoder, "c_make_encoder", None)
_C = _make(_MARKERS, _ENCODER.default, _key, None, ":", ",", True, False, True) if _make is not None else None


def _dump(value: Any) -> str:
    """`value` as _ENCODER.encode writes it, by the compiled encoder it uses, made once here (encode makes it on
    every call: a large listing writes ~100,000 small values)."""
    if type(value) is str:
        return _key(value)
    if _C is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_C(value, 0))
    except BaseException:
        _MARKERS.clear()  # what a failed call left there
        raise


SCHEMAS = frozenset({"inputSchema", "outputSchema"})
SHARED = frozenset({"$defs", "properties"})  # a schema's members the tools share


class ListingText:
    """Serializes and counts listings; remembers each shared member's text and each chunk's tokens between calls."""

    def __init__(self) -> None:
        self._definitions: dict[int, tuple[Any, str]] = {}  # id -> (member kept alive, its text)
        self._chunks = ChunkTokens()

    def measure(
        self,
        entries: Sequence[Mapping[str, Any]],
        keep_text: bool = True,
        end: str = "",
        stop_above: int | None = None,
    ) -> tuple[int, int, bytes | None]:
        """The listing's length in characters, its tokens, and its text followed by `end` when `keep_text` (as
        UTF-8: a large listing's text is held compactly, see emit/files.py; a lone surrogate, which the spec's parser
        replaced already, as its three bytes). With `stop_above` (and not `keep_text`), writing stops once more
        tokens than that are counted: then the figures are those of the part written, tokens above `stop_above`."""
        stream = self._chunks.stream()
        whole: list[bytes] | None = [] if keep_text else None
        characters = 0
        for number, entry in enumerate(entries):
            pieces = [","] if number else ["["]
            self._entry(pieces, entry)
            text = "".join(pieces)
            stream.write(text)
            characters += len(text)
            if whole is not None:
                whole.append(text.encode("utf-8", "surrogatepass"))
            elif stop_above is not None and stream.counted > stop_above:
                return characters, stream.counted, None
            del text
        last = "]" if entries else "[]"
        stream.write(last)
        tokens = stream.close()
        if whole is None:
            return characters + len(last), tokens, None
        whole.append((last + end).encode("utf-8", "surrogatepass"))
        return characters + len(last), tokens, b"".join(whole)

    def _entry(self, pieces: list[str], entry: Mapping[str, Any]) -> None:
        if not _plain(entry):
            pieces.append(_dump(entry))  # as json.dumps writes it (or fails as it does)
            return
        for number, key in enumerate(sorted(entry)):
            value = entry[key]
            pieces.append(("," if number else "{") + _key(key) + ":")
            if key in SCHEMAS and _plain(value):
                self._schema(pieces, value)
            else:
                pieces.append(_dump(value))
        pieces.append("}" if entry else "{}")

    def _schema(self, pieces: list[str], schema: Mapping[str, Any]) -> None:
        for number, key in enumerate(sorted(schema)):
            pieces.append(("," if number else "{") + _key(key) + ":")
            value = schema[key]
            if key in SHARED and _plain(value):
                for count, name in enumerate(sorted(value)):
                    pieces.append(("," if count else "{") + _key(name) + ":")
                    pieces.append(self._definition(value[name]))
                pieces.append("}" if value else "{}")
            else:
                pieces.append(_dump(value))
        pieces.append("}" if schema else "{}")

    def _definition(self, node: Any) -> str:
        found = self._definitions.get(id(node))
        if found is None:
            found = self._definitions[id(node)] = (node, _dump(node))
        return found[1]


def _plain(value: Any) -> bool:
    """A dict whose keys json.dumps writes as they are (strings), so they sort as it sorts them."""
    return isinstance(value, dict) and all(type(key) is str for key in value)
