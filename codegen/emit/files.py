"""A generated file's content: text, or UTF-8 bytes for a large data file.

A large API's tools.json is tens of megabytes, and one character outside Latin-1 in it (a narrow no-break space in a
description) makes Python store the whole text at two or four bytes per character: the listing is built and held
as its UTF-8 bytes instead, from the stage that serializes it to the one that writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

Content = str | bytes
PIECE = 1 << 20  # characters (or bytes) encoded, counted or compared at a time


class Deferred:
    """A template variable's text that is still being made (by a helper process, see codegen/forked.py): made or
    waited for when a file first needs it (render writes the files that only pass a variable through last)."""

    def __init__(self, make: Callable[[], str]) -> None:
        self._make: Callable[[], str] | None = make
        self._text = ""

    def __call__(self) -> str:
        if self._make is not None:
            self._text, self._make = self._make(), None
        return self._text

    def __str__(self) -> str:  # a template that writes it, {{ ... }}
        return self()


_CONTINUATION = bytes(range(0x80, 0xC0))  # the bytes that continue a character in UTF-8


def as_text(content: Content) -> str:
    return content.decode("utf-8", "surrogatepass") if isinstance(content, bytes) else content


def encoded(content: Content) -> Iterator[bytes | memoryview]:
    """`content` as UTF-8, a piece at a time (text is never encoded whole: never twice in memory)."""
    if isinstance(content, bytes):
        view = memoryview(content)
        for start in range(0, len(content), PIECE):
            yield view[start : start + PIECE]
        return
    for start in range(0, len(content), PIECE):
        yield content[start : start + PIECE].encode("utf-8")


def characters(content: Content) -> int:
    """The length of `content` in characters (of UTF-8 bytes: those that start a character)."""
    if isinstance(content, str):
        return len(content)
    return sum(
        len(content[start : start + PIECE].translate(None, _CONTINUATION)) for start in range(0, len(content), PIECE)
    )
