"""Token counts of large, repetitive text (a large API's listing): each distinct chunk counted once.

The text is cut right after the `"type` of every `"type":` (each schema has one). A run of letters that a
non-letter follows always ends a piece of cl100k's pre-tokenizer (see tokens.py), so the text's tokens are the sum
of its chunks' tokens. The tools of a large API carry the same schemas again and again: a chunk seen before, in
this text or in an earlier one measured by the same `ChunkTokens`, is looked up rather than counted again.
"""

from __future__ import annotations

from collections import Counter

from .tokens import count_tokens

SEPARATOR = '"type":'
HEAD, TAIL = SEPARATOR[:5], SEPARATOR[5:]  # the cut: '"type' ends a chunk, '":' starts the next one
FLUSH = 1 << 20  # characters written before they are cut into chunks


class ChunkTokens:
    """The tokens of every chunk between two separators seen so far, shared by the texts it measures."""

    def __init__(self) -> None:
        self._known: dict[str, int] = {}  # the text between two separators -> tokens of TAIL + it + HEAD

    def stream(self) -> TokenStream:
        """A text to be written a piece at a time."""
        return TokenStream(self)

    def between(self, chunks: list[str]) -> int:
        """The tokens of chunks that each have a separator before and after them."""
        total = 0
        for chunk, times in Counter(chunks).items():
            found = self._known.get(chunk)
            if found is None:
                found = self._known[chunk] = count_tokens(TAIL + chunk + HEAD)
            total += found * times
        return total


class TokenStream:
    """One text, written a piece at a time; `close` gives its tokens."""

    def __init__(self, chunks: ChunkTokens) -> None:
        self._chunks = chunks
        self._pending: list[str] = []  # written, not yet cut
        self._size = 0  # characters in `_pending`
        self._carry = ""  # the text after the last separator cut so far
        self._cut = False  # a separator was found: the carry starts with TAIL's text
        self._tokens = 0

    def write(self, text: str) -> None:
        self._pending.append(text)
        self._size += len(text)
        if self._size >= FLUSH:
            self._flush()

    @property
    def counted(self) -> int:
        """The tokens counted so far: a lower bound of the text's (what was written last is counted in batches)."""
        return self._tokens

    def close(self) -> int:
        """The tokens of everything written."""
        self._flush()
        last = TAIL + self._carry if self._cut else self._carry
        self._carry = ""
        return self._tokens + count_tokens(last)

    def _flush(self) -> None:
        chunks = (self._carry + "".join(self._pending)).split(SEPARATOR)
        self._pending.clear()
        self._size = 0
        self._carry = chunks.pop()
        if chunks and not self._cut:
            self._tokens += count_tokens(chunks[0] + HEAD)
            del chunks[0]
            self._cut = True
        self._tokens += self._chunks.between(chunks)
