"""Token counts as a model sees text: cl100k (the encodings ship inside `bpe-openai`; nothing is downloaded)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

CHUNK = 100_000  # characters encoded at a time (the encoder refuses very long inputs)


@cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # its resource loading uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # loaded on first use: building the encoding takes ~0.1 s

        return bpe_openai.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """cl100k tokens in `text` (special-token markers count as ordinary text). Long text is encoded in chunks
    cut right after a run of letters, which always ends a pre-tokenizer piece, so the count is exact."""
    encoding = _encoding()
    total, start = 0, 0
    while len(text) - start > CHUNK:
        cut = start + CHUNK
        while cut > start + 1 and not (text[cut - 1].isalpha() and not text[cut].isalpha()):
            cut -= 1
        if cut == start + 1:  # no letters at all: cut anywhere (off by a token or two at most)
            cut = start + CHUNK
        total += len(encoding.encode_ordinary(text[start:cut]))
        start = cut
    return total + len(encoding.encode_ordinary(text[start:]))


def wire(value: Any) -> str:
    """`value` as JSON the way the server sends it: compact, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def listing_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """Tokens of a tools/list result holding `tools`."""
    return count_tokens(wire({"tools": list(tools)}))
