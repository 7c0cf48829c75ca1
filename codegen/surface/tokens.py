"""Token counts, as a model's context sees them: OpenAI's cl100k_base encoding (the `bpe-openai` package).

cl100k is a fair yardstick for every client (Claude's and GPT-4o's tokenizers count within ~10-20% of it on
JSON), and it is the one a reader can reproduce. Special-token text in a spec (`<|endoftext|>`) is counted as
ordinary text, never refused. The tokenizer takes at most 200,000 tokens a call, so a long text is counted in
pieces cut after a `,` or a space (JSON's own separators), which changes the total by a token or so per piece.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base"
PIECE = 100_000  # characters per call: a token is at least one character, so a piece is under the call limit


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai  # loaded on first use: the tokenizer's tables take ~0.2 s to build

    return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """The number of cl100k tokens in `text`."""
    encoding = _encoding()
    total, start = 0, 0
    while start < len(text):
        end = start + PIECE
        if end < len(text):
            cut = max(text.rfind(",", start, end), text.rfind(" ", start, end))
            end = cut + 1 if cut > start else end
        total += len(encoding.encode_ordinary(text[start:end]))
        start = end
    return total
