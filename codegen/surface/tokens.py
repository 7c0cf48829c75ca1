"""What a tools/list costs a model: tokens of the JSON as sent, in OpenAI's cl100k encoding.

bpe-openai ships the encoding (no download). It refuses a single input of a million characters or more,
so a long listing is counted in pieces cut between tools (the pieces' boundaries can shift a token or
two each, against a total of hundreds of thousands).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import bpe_openai

PIECE = 500_000  # characters per piece counted at once (bpe-openai's limit is 1,000,000)


@lru_cache(maxsize=1)
def _encoding() -> bpe_openai.Encoding:
    return bpe_openai.get_encoding("cl100k_base")


def wire(value: Any) -> str:
    """`value` as JSON the way the server sends it: compact, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def count(text: str) -> int:
    """cl100k tokens of `text` (in pieces of at most PIECE characters, cut at a comma where possible)."""
    encoding = _encoding()
    total, start = 0, 0
    while start < len(text):
        end = min(len(text), start + PIECE)
        if end < len(text):
            comma = text.rfind(",", start + PIECE // 2, end)
            end = comma + 1 if comma > 0 else end
        total += len(encoding.encode_ordinary(text[start:end]))
        start = end
    return total


def listing_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """Tokens of a tools/list result holding `tools`."""
    return count(wire({"tools": list(tools)}))
